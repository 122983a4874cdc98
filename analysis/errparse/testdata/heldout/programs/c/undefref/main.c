#include <stdio.h>
#include "config.h"

int main(void) {
    if (load_config("app.conf") != 0)
        fprintf(stderr, "no config\n");
    return 0;
}
