#include <stdio.h>

long file_size(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long)st.st_size;
}

int main(int argc, char **argv) {
    printf("%ld\n", file_size(argc > 1 ? argv[1] : "."));
    return 0;
}
