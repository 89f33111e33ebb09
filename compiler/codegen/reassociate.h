/* Integer vector add trees ordered for latency, before instruction selection. */
#ifndef AQUILA_COMPILER_REASSOCIATE_H
#define AQUILA_COMPILER_REASSOCIATE_H

#include <llvm-c/Core.h>

/* Rewrites each tree of integer vector adds on a long dependency chain in
 * m's functions so that the addend that comes last in that chain is added
 * last. Run after the optimization pipeline, right before code generation
 * (the pipeline's own canonical form is what it undoes). Returns the
 * number of trees rewritten. */
unsigned reassociate_for_latency(LLVMModuleRef m);

#endif
