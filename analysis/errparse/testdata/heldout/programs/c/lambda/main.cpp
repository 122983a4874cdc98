#include <algorithm>
#include <iostream>
#include <vector>

int main() {
    std::vector<int> prices{12, 7, 30, 4};
    int limit = 10;
    auto cheap = std::count_if(prices.begin(), prices.end(), [](int p) {
        return p < limit;
    });
    std::cout << cheap << "\n";
}
