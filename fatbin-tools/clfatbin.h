/* What the clfatbin subcommands share: file input and output, and the exit
 * status convention (0 ok, 1 invalid input or failed work, 2 usage). */
#ifndef AQUILA_CLFATBIN_H
#define AQUILA_CLFATBIN_H

#include <stddef.h>

#include "aquila/fatbin.h"

enum { EXIT_OK = 0, EXIT_INVALID = 1, EXIT_USAGE = 2 };

/* Reads a whole file ("-" is standard input) into a malloc'd buffer with a
 * NUL after the last byte. Prints the reason and returns -1 on failure. */
int clfatbin_read_file(const char *path, char **data, size_t *size);
/* Serializes fb to path ("-" is standard output), replacing the file only
 * once it is complete. Prints the reason and returns -1 on failure. */
int clfatbin_save(const struct aquila_fatbin *fb, const char *path);

int clfatbin_build(int argc, char **argv);

#endif
