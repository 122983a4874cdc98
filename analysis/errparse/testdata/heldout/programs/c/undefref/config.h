#ifndef CONFIG_H
#define CONFIG_H

int load_config(const char *path);

#endif
