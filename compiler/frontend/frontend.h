/* The front end: libclang parses OpenCL C for diagnostics and kernel
 * signatures. */
#ifndef AQUILA_COMPILER_FRONTEND_H
#define AQUILA_COMPILER_FRONTEND_H

#include "aquila/fatbin.h"
#include "support/strbuf.h"

struct frontend_result {
  unsigned num_errors;
  unsigned num_warnings;
  struct aquila_fatbin_kernel *kernels; /* names and argument descriptions only */
  unsigned num_kernels;
};

/* Parses main_path (already written to disk) with args; appends every
 * diagnostic, with file, line and column, to log. Returns 0 when the parse
 * ran (check num_errors), FRONTEND_CRASHED when clang crashed on the
 * program (libclang then keeps none of its diagnostics), -1 when libclang
 * failed otherwise. */
#define FRONTEND_CRASHED (-2)
/* Registers LLVM's targets as libclang does at every parse: called once in a
 * process before the parse and clang's bitcode generation run side by side
 * (frontend_parse calls it too). */
void frontend_register_targets(void);
int frontend_parse(const char *main_path, const char *const *args, int num_args,
                   struct frontend_result *out, struct strbuf *log);
void frontend_result_free(struct frontend_result *r);

/* Whether clang crashed in this process and libclang recovered (it jumps
 * out of the crash, leaving whatever LLVM held at that moment): a process
 * that would run further builds should end and let a fresh one take them
 * (the helper does). */
int frontend_recovered_from_crash(void);
/* Records that clang crashed in this process outside libclang (code
 * generation in process) and was recovered from. */
void frontend_note_crash(void);

/* Set by the compiler process for a request: libclang's parse first, and
 * clang's code generation only after a parse without errors (compile.c). */
extern int compile_frontend_in_sequence;

#endif
