int add(int a, int b) { return a + b; }

int mul(int a, int b) {
	return a * b
}
