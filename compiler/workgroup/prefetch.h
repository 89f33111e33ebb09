/* Software prefetch where the hardware prefetcher cannot see what comes
 * next: the next tile of a tiled loop, a walk by large steps (prefetch.c). */
#ifndef AQUILA_COMPILER_PREFETCH_H
#define AQUILA_COMPILER_PREFETCH_H

#include <llvm-c/Core.h>

/* In each loop of fn (a vectorized work-item function) that contains a
 * barrier, gives every wide load from global memory whose address moves
 * with the loop's induction variables a prefetch of what it will load in
 * the loop's next iteration; in other loops, every wide global load or
 * store whose address moves by 1 KiB or more per iteration, or by a
 * product with a run-time value, a prefetch of the lines it will access a
 * few iterations ahead. Returns the number of prefetches added. */
unsigned prefetch_loops(LLVMModuleRef m, LLVMValueRef fn);

#endif
