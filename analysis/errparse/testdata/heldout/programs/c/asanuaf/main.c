#include "list.h"

int main(void) {
    struct node *l = push(push(0, 1), 2);
    free_list(l);
    return 0;
}
