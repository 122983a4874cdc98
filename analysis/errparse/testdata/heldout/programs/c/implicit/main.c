#include <stdio.h>

int main(void) {
	int n = 3;
	printf("%d\n", square(n));
	return 0;
}
