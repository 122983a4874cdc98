#include <stdlib.h>
#include "list.h"

struct node *push(struct node *head, int v) {
    struct node *n = malloc(sizeof *n);
    n->value = v;
    n->next = head;
    return n;
}

void free_list(struct node *head) {
    while (head) {
        free(head);
        head = head->next;
    }
}
