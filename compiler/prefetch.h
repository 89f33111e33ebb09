/* Software prefetch of the next tile in loops with barriers (prefetch.c). */
#ifndef AQUILA_COMPILER_PREFETCH_H
#define AQUILA_COMPILER_PREFETCH_H

#include <llvm-c/Core.h>

/* In each loop of fn that contains a barrier, gives every wide load from
 * global memory whose address moves with the loop's induction variables a
 * prefetch of the address it will load in the loop's next iteration.
 * Returns the number of prefetches added. */
unsigned prefetch_next_tiles(LLVMModuleRef m, LLVMValueRef fn);

#endif
