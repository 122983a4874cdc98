#include "point.hpp"

#include <iostream>

int main() {
    Point p(1, 2);
    std::cout << p.x() + p.y() << "\n";
}
