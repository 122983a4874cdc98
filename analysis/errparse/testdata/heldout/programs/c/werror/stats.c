#include <stdio.h>

int main(void) {
	int values[3] = {1, 2, 3};
	int sum = 0;
	int unused_max = 0;
	for (int i = 0; i < 3; i++)
		sum += values[i];
	printf("%d\n", sum);
	return 0;
}
