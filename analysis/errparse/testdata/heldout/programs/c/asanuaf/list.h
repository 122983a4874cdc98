struct node {
    int value;
    struct node *next;
};

struct node *push(struct node *head, int v);
void free_list(struct node *head);
