/* Build options: OpenCL's option strings turned into clang arguments. */
#ifndef AQUILA_COMPILER_OPTIONS_H
#define AQUILA_COMPILER_OPTIONS_H

#include <stddef.h>
#include "support/strbuf.h"

struct build_options {
  char **clang_args; /* for both libclang and the clang driver */
  size_t num_clang_args;
  int opt_disable;   /* -cl-opt-disable */
  int fast_math;     /* -cl-fast-relaxed-math or -cl-unsafe-math-optimizations */
  int finite_math;   /* -cl-finite-math-only */
  int no_signed_zeros;
  int mad_enable;
  int denorms_are_zero;
  int strict_aliasing; /* -cl-strict-aliasing: type-based alias analysis allowed */
  int kernel_arg_info; /* -cl-kernel-arg-info */
  int create_library;  /* -create-library (clLinkProgram) */
  int enable_link_options;
  char cl_std[8];      /* "CL1.2" */
};

/* Parses options; on an unknown or malformed option returns -1 and writes a
 * message naming it to log. */
int build_options_parse(const char *options, struct build_options *out, struct strbuf *log);
void build_options_free(struct build_options *opts);

#endif
