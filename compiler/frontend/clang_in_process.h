/* Clang's code generation inside the compiler process (clang_in_process.cpp). */
#ifndef AQUILA_COMPILER_CLANG_IN_PROCESS_H
#define AQUILA_COMPILER_CLANG_IN_PROCESS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <llvm-c/Types.h>
#include <stddef.h>

/* Links into m what it needs of library, a module read lazily
 * (LLVMGetBitcodeModuleInContext2), which it consumes: only the functions m
 * reaches are read, and those become internal, as clang's
 * -mlink-builtin-bitcode makes them (LLVM's C API links whole modules
 * only). 0, or -1 on failure. */
int aquila_link_needed(LLVMModuleRef m, LLVMModuleRef library);

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
