#include <stdio.h>

static int sum(int n) {
    int unused_count;
    int total = 0;
    for (int i = 0; i < n; i++)
        total += i;
    return total;
}

int main(void) {
    int total = sum(3);
    printf("%d\n", totl);
    return 0;
}
