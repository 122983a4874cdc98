#include <stdio.h>
#include <stdlib.h>

int parse_port(const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v <= 0 || v > 65535)
        return -1;
    return (int)v
}

int main(int argc, char **argv) {
    printf("%d\n", parse_port(argc > 1 ? argv[1] : "80"));
    return 0;
}
