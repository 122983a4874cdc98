#include <string>
#include <vector>

template <typename T>
auto total(const std::vector<T> &xs) -> decltype(xs[0] + xs[0]) {
    T sum{};
    for (const auto &x : xs)
        sum = sum + x;
    return sum;
}

struct Item {
    int price;
};

int main() {
    std::vector<Item> items{{3}, {4}};
    auto t = total(items);
    std::vector<std::string> names(3, 4);
    return t.price;
}
