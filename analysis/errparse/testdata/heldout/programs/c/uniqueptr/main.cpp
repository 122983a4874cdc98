#include <memory>
#include <string>
#include <vector>

struct Session {
    std::string user;
};

int main() {
    std::vector<std::unique_ptr<Session>> sessions;
    auto s = std::make_unique<Session>(Session{"ana"});
    sessions.push_back(s);
    return sessions.size() == 1 ? 0 : 1;
}
