#include <stdio.h>

int add(int a, int b);
int mul(int a, int b);

int main(void) {
	printf("%d %d\n", add(1, 2), mul(3, 4));
	return 0;
}
