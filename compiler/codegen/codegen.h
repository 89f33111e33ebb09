/* Code generation: portable bitcode to a CPU code object for one target. */
#ifndef AQUILA_COMPILER_CODEGEN_H
#define AQUILA_COMPILER_CODEGEN_H

#include <stddef.h>
#include <stdint.h>
#include "aquila/fatbin.h"
#include "frontend/options.h"
#include "support/strbuf.h"

/* Builds a code object (an x86-64 shared object exporting the kernel table)
 * for target from portable bitcode, in scratch directory dir. Fills the
 * kernels' layout fields. With only_these, the code object holds just the
 * kernels listed (the others' code is never generated). Returns 0, or -1
 * with the reason in log. */
int codegen_cpu_code_object(const void *bitcode, size_t bitcode_size, const char *target,
                            int opt_disable, struct aquila_fatbin_kernel *kernels,
                            unsigned num_kernels, int only_these, const char *dir, void **code,
                            size_t *code_size, struct strbuf *log);
/* The same, and with quick_if_large, kernels large enough that their
 * vector build is costly get scalar code only (*quick is then 1): the
 * quick tier, to be followed by a build without quick_if_large. With
 * local_size (x, y, z), the kernels' code is made for work-groups of that
 * size only (workgroup_compile). */
int codegen_cpu_code_object_tiered(const void *bitcode, size_t bitcode_size, const char *target,
                                   int opt_disable, struct aquila_fatbin_kernel *kernels,
                                   unsigned num_kernels, int only_these, int quick_if_large,
                                   const uint32_t *local_size, int *quick, const char *dir,
                                   void **code, size_t *code_size, struct strbuf *log);
/* How many threads one code generation may use (parts of a program's
 * kernels built side by side): 1 for a background build, which leaves the
 * cores to the application; 0 (the default) for as many as the process's
 * CPUs, at most 4 (AQUILA_CODEGEN_THREADS overrides the default). */
void codegen_set_threads(int threads);
/* Checks portable bitcode for calls of functions that nobody defines, as
 * code generation would (the build's error, before any code is made), and
 * fills the kernels' argument layout. Returns 0, or -1 with one line per
 * problem in log. */
int codegen_check_bitcode(const void *bitcode, size_t bitcode_size,
                          struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                          struct strbuf *log);

/* Fills the kernels' layout fields (kernarg offsets, sizes, attributes) from
 * bitcode without generating code (workgroup_kernel_layout: the kernels'
 * signatures only), for compiled objects whose calls may be resolved only
 * at link time. */
/* The largest program-scope variable (CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
 * runtime/features.c). */
#define CODEGEN_MAX_GLOBAL_VARIABLE_SIZE 65536u
/* The name of the fat binary entry that says a program has variables in the
 * global address space that kernels may write (OpenCL C 2.0's program-scope
 * variables): their total bytes, a little-endian u64. Such a program's code
 * is one object per device, made at the build, so that every kernel of it
 * reaches the same variables (docs/ARCHITECTURE.md). */
#define CODEGEN_PROGRAM_VARIABLES_ENTRY "program-variables"
/* The entry that says a program's kernels use sub-groups (one byte, 1).
 * Its code is made at the build too, with the vector versions: a kernel's
 * sub-group size is its vector's width, which the quick tier's scalar code
 * and a version for one work-group size might not share (the runtime then
 * answers clGetKernelSubGroupInfo from the code that runs). */
#define CODEGEN_SUB_GROUPS_ENTRY "sub-groups"
/* *bytes: the bytes of the program's writable program-scope variables (0:
 * none); -1 with the reason in log for one over the largest size.
 * *sub_groups: whether a function calls a sub-group builtin. */
int codegen_program_variables(const void *bitcode, size_t bitcode_size, uint64_t *bytes,
                              int *sub_groups, struct strbuf *log);

int codegen_kernel_layout(const void *bitcode, size_t bitcode_size,
                          struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                          struct strbuf *log);

/* Whether this build can generate a CPU code object for target. */
int codegen_supports_target(const char *target);

/* GPU targets (gpu.c): amdgcn-amd-amdhsa--<gfx>, nvptx64-nvidia-cuda and
 * nvptx64-nvidia-cuda--sm_<N>. GPU_INVALID is a malformed GPU name. */
enum gpu_kind { GPU_NONE, GPU_AMD, GPU_NVIDIA, GPU_INVALID };
enum gpu_kind gpu_target_kind(const char *target);

/* The libclc-19 bitcode a GPU target links (malloc'd path), NULL otherwise. */
char *gpu_libclc_path(const char *target);

/* Builds a GPU code object (AMD: a linked HSA code object; NVIDIA: PTX text)
 * for target from the OpenCL C source at src_path with the clang driver and
 * libclc, honoring opts, in scratch directory dir. Returns 0, or -1 with the
 * reason in log (including a missing libclc). */
int codegen_gpu_code_object(const char *target, const struct build_options *opts,
                            const char *src_path, const char *dir, void **code, size_t *code_size,
                            struct strbuf *log);

#endif
