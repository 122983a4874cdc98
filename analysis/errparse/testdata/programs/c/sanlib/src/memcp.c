#include <string.h>

void copy_name(char *dst, const char *src) {
    memcpy(dst, src, strlen(src) + 1);
}

int main(void) {
    char buf[8];
    copy_name(buf, "a name that is too long");
    return buf[0];
}
