#include "shape.hpp"

int main() {
	Shape s{2, 3};
	return s.area() > 5;
}
