/* Two iterations of a search loop interleaved, before instruction selection. */
#ifndef AQUILA_COMPILER_INTERLEAVE_H
#define AQUILA_COMPILER_INTERLEAVE_H

#include <llvm-c/Core.h>

#include "support/strbuf.h"

/* Rewrites each innermost loop of m's functions that is a long dependency
 * chain without side effects ending in a rarely taken branch (a candidate
 * loop's compare) so that two iterations run side by side (interleave.c).
 * vector_registers and vector_bits: the target's (32 of 512 bits with
 * AVX-512, 16 of 256 with AVX2, 16 of 128 else). Each loop
 * rewritten gets a line in report when it is not NULL. Run after the
 * optimization pipeline. Returns the number of loops rewritten, or -1
 * with an error in log when a rewritten function fails LLVM's verifier. */
int interleave_search_loops(LLVMModuleRef m, unsigned vector_registers, unsigned vector_bits,
                            struct strbuf *report, struct strbuf *log);

#endif
