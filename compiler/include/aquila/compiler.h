/* OpenCL C to fat binary: the compiler layer's API.
 *
 * Clang/LLVM 19 does the work: libclang parses the source for diagnostics and
 * kernel signatures, the clang driver generates LLVM bitcode, and Aquila's
 * work-group pass plus LLVM's optimizer and linker turn it into one CPU code
 * object (struct aquila_kernel_table in aquila/cpu_abi.h) per target. */
#ifndef AQUILA_COMPILER_H
#define AQUILA_COMPILER_H

#include <stddef.h>
#include <stdint.h>
#include "aquila/fatbin.h"

enum aquila_compile_status {
  AQUILA_COMPILE_OK = 0,
  AQUILA_COMPILE_INVALID_OPTIONS = 1, /* unknown or malformed build option */
  AQUILA_COMPILE_FAILED = 2,          /* diagnostics in the log */
  AQUILA_COMPILE_UNAVAILABLE = 3,     /* no compiler on this machine */
  AQUILA_COMPILE_NO_MEMORY = 4,
};

struct aquila_compile_input {
  const char *source; /* NULL for a SPIR-V module (il) */
  /* clCreateProgramWithIL: a SPIR-V module instead of source, with the
   * specialization constants set on it applied (runtime/spirv_module.c). */
  const void *il;
  size_t il_size;
  const char *options; /* OpenCL build options, may be NULL */
  /* Targets to build (fatbin target names); NULL/0 means the host CPU only. */
  const char *const *targets;
  size_t num_targets;
  /* Embedded headers (clCompileProgram), may be 0. */
  size_t num_headers;
  const char *const *header_names;
  const char *const *header_sources;
  /* clCompileProgram: stop at a compiled object (portable bitcode and kernel
   * metadata, no code objects) that aquila_link turns into an executable. */
  int compile_only;
  /* With no targets: an executable with the portable bitcode and the
   * kernels' metadata but no code object yet; aquila_compile_kernels makes
   * machine code for the kernels an application uses, when it uses them.
   * Errors that code generation would report (undefined functions) are
   * still found here. */
  int code_on_demand;
};

/* Builds an executable fat binary. *log receives a malloc'd build log (possibly
 * empty, never NULL on return) that the caller frees. */
enum aquila_compile_status aquila_compile(const struct aquila_compile_input *in,
                                          struct aquila_fatbin **out, char **log);

/* clLinkProgram: links the bitcode of compiled objects and libraries. With
 * "-create-library" in options the result is a library, else an executable
 * with a code object for the host CPU (with code_on_demand, none: its code
 * is made kernel by kernel by aquila_compile_kernels). Unknown options give
 * AQUILA_COMPILE_INVALID_OPTIONS; unresolved or duplicate symbols
 * AQUILA_COMPILE_FAILED with the reason in the log. */
enum aquila_compile_status aquila_link(const struct aquila_fatbin *const *inputs, size_t num_inputs,
                                       const char *options, int code_on_demand,
                                       struct aquila_fatbin **out, char **log);

/* Flags of aquila_compile_kernels. */
enum {
  /* Kernels large enough that their vector build is costly get scalar code
   * only, sooner (*quick is then 1; such code is not kept in the kernel
   * cache): the caller asks again without this flag for the whole version. */
  AQUILA_CODEGEN_QUICK_IF_LARGE = 1u << 0,
  /* A build nobody waits for: it runs in compiler processes of their own,
   * at a lower scheduling priority than the application. */
  AQUILA_CODEGEN_BACKGROUND = 1u << 1,
  /* Only what the kernel cache holds: AQUILA_COMPILE_UNAVAILABLE (no
   * compiler is asked) when it does not hold the code. */
  AQUILA_CODEGEN_CACHED_ONLY = 1u << 2,
  /* Code to replace code the application already runs (the vector version
   * of quick-tier kernels, a version for one work-group size): the next
   * run of the program starts from it, so the compiler process finishes it
   * even when the application ends meanwhile (AQUILA_BUILD_AFTER_EXIT). */
  AQUILA_CODEGEN_UPGRADE = 1u << 3,
};

/* Machine code for some kernels of an executable fat binary, from its
 * portable bitcode: *out holds the kernels named (their layout: kernarg
 * offsets, local memory) and one code object for target that defines
 * exactly them. fb's own entries for those kernels get the layout too.
 * Served from the kernel cache when it holds them. flags: the
 * AQUILA_CODEGEN_ values above; *quick (quick may be NULL) says whether
 * the code is the quick tier's. */
enum aquila_compile_status aquila_compile_kernels(struct aquila_fatbin *fb, const char *target,
                                                  const char *const *names, size_t num_names,
                                                  unsigned flags, struct aquila_fatbin **out,
                                                  int *quick, char **log);

/* What launches fix that a kernel's code may be made for. */
struct aquila_launch_facts {
  /* Every work-group of those launches has this size (work-items along x,
   * y and z): the code is made as if the kernel declared
   * reqd_work_group_size with it, and is wrong for any other size. */
  uint32_t local_size[3];
};

/* aquila_compile_kernels for launches with those facts only: a specialized
 * version of kernels that declare no required work-group size (one that
 * does gets AQUILA_COMPILE_FAILED). No quick tier; served from and kept in
 * the kernel cache under a key that holds the facts. The layout (kernarg,
 * local memory) is the kernels' usual one, and fb is left as it is (its
 * kernels' layout is known already: launches may read it meanwhile). */
enum aquila_compile_status aquila_compile_kernels_specialized(
    struct aquila_fatbin *fb, const char *target, const char *const *names, size_t num_names,
    const struct aquila_launch_facts *facts, unsigned flags, struct aquila_fatbin **out,
    char **log);

/* Turns a fat binary's portable bitcode into a code object for target and adds
 * it to fb. */
enum aquila_compile_status aquila_compile_from_bitcode(struct aquila_fatbin *fb, const char *target,
                                                       char **log);

/* The fatbin target name of the host CPU, e.g. "x86_64-native:znver3". */
const char *aquila_compiler_host_target(void);

/* Which compiler this is: 8 hex digits of the hash of its sources and of its
 * builtin library. It changes whenever the code it generates may change. */
const char *aquila_compiler_build_id(void);

/* Frees what the compiler keeps between builds (clUnloadPlatformCompiler):
 * libaquila.so's idle compiler processes end; the next build starts one. */
void aquila_compiler_unload(void);

#endif
