#include <stdlib.h>
#include <string.h>

char *dup_label(const char *s) {
    char *p = malloc(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

int main(void) {
    char *label = dup_label("orders");
    label = NULL;
    return label != NULL;
}
