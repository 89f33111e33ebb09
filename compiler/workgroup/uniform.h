/* Uniformity analysis and the transformations that use it (uniform.c). */
#ifndef AQUILA_COMPILER_UNIFORM_H
#define AQUILA_COMPILER_UNIFORM_H

#include <llvm-c/Core.h>
#include <stddef.h>

#include "support/ptrmap.h"

struct uniformity {
  LLVMValueRef fn; /* a work-item function: (kernarg, wg, x, y, z) */
  /* Whether a load from this alloca reads a uniform value; NULL: never. */
  int (*slot_is_uniform)(void *data, LLVMValueRef alloca);
  void *slot_data;
  /* Results. */
  struct ptr_set varying;
  int any_varying_branch;
};

/* Computes which instructions of u->fn are varying. May be run again after
 * the slot states behind slot_is_uniform change. */
void uniformity_compute(struct uniformity *u);
int uniformity_is_varying(const struct uniformity *u, LLVMValueRef v);
int uniformity_branch_varying(const struct uniformity *u, LLVMValueRef terminator);
void uniformity_free(struct uniformity *u);

/* Puts barriers around every loop of fn (in SSA form, after
 * loop-simplify) that each work-item runs alike: uniform exits, reached only
 * through uniform branches, no barrier inside, a bound that is not a
 * constant (constant loops are better unrolled). Returns how many loops. */
int uniform_insert_loop_barriers(LLVMModuleRef m, LLVMValueRef fn);

#endif
