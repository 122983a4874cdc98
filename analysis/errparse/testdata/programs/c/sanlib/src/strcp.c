#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    char *host = malloc(6);
    strcpy(host, "localhost");
    free(host);
    return argc;
}
