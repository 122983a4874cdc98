#include <algorithm>
#include <list>

int main() {
    std::list<int> xs{3, 1, 2};
    std::sort(xs.begin(), xs.end());
    return xs.front();
}
