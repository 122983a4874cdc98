#include <string>

void greet(const std::string &name, int times) {}

int main() {
    greet(42);
    return 0;
}
