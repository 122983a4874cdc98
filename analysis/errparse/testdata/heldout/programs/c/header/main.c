#include <stdio.h>
#include "vec2.h"

int main(void) {
	struct vec2 v = {3, 4};
	printf("%f\n", vec2_len(v));
	return 0;
}
