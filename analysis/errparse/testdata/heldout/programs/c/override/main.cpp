#include "shapes/shape.hpp"

int main() {
	Square s;
	return s.side > 0;
}
