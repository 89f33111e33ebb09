/* Runs the toolchain's programs (clang driver, linker) as child processes. */
#ifndef AQUILA_COMPILER_SPAWN_H
#define AQUILA_COMPILER_SPAWN_H

#include "support/strbuf.h"

/* Runs argv (argv[0] looked up in PATH), appending its standard error and
 * output to out. Returns the exit status, or -1 if it could not be started
 * (the reason is appended to out). */
int spawn_and_wait(char *const argv[], struct strbuf *out);

#endif
