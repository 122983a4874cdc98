#include <string>

class Conn {
public:
	explicit Conn(std::string host) : host_(host) {}
	int port() const { return port_; }

private:
	std::string host_;
};

int main() {
	Conn c("example.org");
	return c.port();
}
