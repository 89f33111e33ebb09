/* Clang's code generation inside the compiler process (clang_in_process.cpp). */
#ifndef AQUILA_COMPILER_CLANG_IN_PROCESS_H
#define AQUILA_COMPILER_CLANG_IN_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stddef.h>

/* Compiles as `argv[0] argv[1] ...` (a clang driver command line with one
 * compile job, such as -emit-llvm -c) would with `-Xclang
 * -mlink-builtin-bitcode` and the bitcode library (library_size bytes at
 * library), writing the bitcode to output. *diagnostics gets what clang
 * printed (malloc'd; may be NULL on no memory). Returns 0, 1 when the
 * program has errors, -1 when clang crashed (recovered: the process should
 * not be trusted with another compile). */
int clang_emit_bitcode_in_process(const char *const *argv, int argc, const char *output,
                                  const void *library, size_t library_size, char **diagnostics);

#ifdef __cplusplus
}
#endif

#endif
