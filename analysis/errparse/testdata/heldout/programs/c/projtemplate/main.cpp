#include "stack.hpp"

int main() {
	Stack<int> s;
	s.push(4);
	return s.top();
}
