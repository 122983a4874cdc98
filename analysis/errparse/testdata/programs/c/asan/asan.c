#include <stdlib.h>

int sum(const int *xs, int n) {
    int total = 0;
    for (int i = 0; i <= n; i++)
        total += xs[i];
    return total;
}

int main(void) {
    int *xs = malloc(4 * sizeof(int));
    for (int i = 0; i < 4; i++)
        xs[i] = i;
    int s = sum(xs, 4);
    free(xs);
    return s;
}
