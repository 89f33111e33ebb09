/* Barriers without fibers: work-item loops split at barriers. */
#ifndef AQUILA_COMPILER_REGIONS_H
#define AQUILA_COMPILER_REGIONS_H

#include <llvm-c/Core.h>
#include <stdint.h>

#include "support/strbuf.h"

/* Recomputes cheap values (address arithmetic, work-item ids) in each block
 * that uses them, before reg2mem: then they never need storage across a
 * barrier, and the loop vectorizer still sees addresses it can analyse. */
void regions_rematerialize(LLVMContextRef ctx, LLVMValueRef fn);

/* Puts fn in the shape regions_transform needs, once reg2mem has removed its
 * phi nodes: an entry block of allocas only, each __aquila_barrier call alone
 * at the start of its block. Run reg2mem again afterwards. */
int regions_prepare(LLVMContextRef ctx, LLVMValueRef fn);

/* Turns a work-item function (kernarg, wg, x, y, z) in that shape into one
 * that runs the whole work-group described by wg (struct aquila_workgroup,
 * IR type wg_type); x, y, z become unused. __aquila_local_id calls are bound
 * to the loops' indices and barriers disappear. A function that runs width
 * work-items along x at once (vectorize.c) is run for every width-th x;
 * the local size along x must then be a multiple of width, or, with rows 2,
 * half of it: the function then runs two rows at once, for every other y. The number of
 * regions and the context arrays go to *report. reqd: the required work-group size (0s when
 * none), which becomes the loops' constant bounds. Returns 0, or -1 with the
 * reason in log. */
/* What a split function became, for AQUILA_DEBUG=vectorize. */
struct regions_report {
  unsigned regions;
  unsigned context_arrays;  /* private values kept per work-item (or per vector) across barriers */
  unsigned context_bytes;   /* their size per work-item */
  unsigned uniform_slots;   /* values kept once for the whole group */
  unsigned rows_jammed;     /* rows whose accumulating loops run side by side (0: none) */
};

int regions_transform(LLVMContextRef ctx, LLVMValueRef fn, LLVMTypeRef wg_type, LLVMValueRef wg,
                      unsigned width, unsigned rows, const uint32_t reqd[3],
                      struct regions_report *report, struct strbuf *log);

#endif
