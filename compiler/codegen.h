/* Code generation: portable bitcode to a CPU code object for one target. */
#ifndef AQUILA_COMPILER_CODEGEN_H
#define AQUILA_COMPILER_CODEGEN_H

#include <stddef.h>
#include "aquila/fatbin.h"
#include "strbuf.h"

/* Builds a code object (an x86-64 shared object exporting the kernel table)
 * for target from portable bitcode, in scratch directory dir. Fills the
 * kernels' layout fields. Returns 0, or -1 with the reason in log. */
int codegen_cpu_code_object(const void *bitcode, size_t bitcode_size, const char *target,
                            int opt_disable, struct aquila_fatbin_kernel *kernels,
                            unsigned num_kernels, const char *dir, void **code,
                            size_t *code_size, struct strbuf *log);

/* Fills the kernels' layout fields (kernarg offsets, sizes, attributes) from
 * bitcode without generating code, for compiled objects whose calls may be
 * resolved only at link time. */
int codegen_kernel_layout(const void *bitcode, size_t bitcode_size,
                          struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                          struct strbuf *log);

/* Whether this build can generate code for target. */
int codegen_supports_target(const char *target);

#endif
