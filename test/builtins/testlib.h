/* The compiled OpenCL C test library of a builtin test: dlopened by the
 * test program, its functions looked up by name. */
#ifndef AQUILA_TEST_BUILTINS_TESTLIB_H
#define AQUILA_TEST_BUILTINS_TESTLIB_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *lib;
static void *sym(const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    printf("  missing test function %s\n", name);
    exit(1);
  }
  return p;
}
#define FN(type, name) ((type)sym(name))

#endif
