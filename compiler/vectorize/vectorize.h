/* Whole-function vectorization of work-item functions (vectorize.c). */
#ifndef AQUILA_COMPILER_VECTORIZE_H
#define AQUILA_COMPILER_VECTORIZE_H

#include <llvm-c/Core.h>
#include <stdint.h>
#include <llvm-c/Target.h>

#include "support/strbuf.h"

struct vectorize_target {
  unsigned width;   /* work-items per vector: 4, 8 or 16 */
  char libmvec_isa; /* glibc libmvec variant letter: 'b' SSE4, 'd' AVX2, 'e' AVX-512 */
  uint32_t reqd[3]; /* the kernel's required local size, 0s when it has none */
  /* 2: a vector holds two rows of the work-group, width / 2 work-items
   * each (a required local size of that along x and an even one along y);
   * the caller passes lane 0's local ids, x 0 and an even y. Else 1. */
  unsigned rows;
  /* The scalar code would run two work-items at a time (paired,
   * workgroup/workitem_pairs.c): the vectorizer's cost check without
   * AVX-512 then counts gathers from private arrays too. */
  int scalar_pairs;
};

/* A kernel without a required local size along x keeps its scalar version,
 * and its work-group function runs that version for a range whose global
 * size reaches this in any dimension (workgroup.c). Below it, the vector
 * version takes local_size(d) * group_id(d), a group's first global id,
 * to stay below it: ids computed in int from it and a local id (pyopencl's
 * `int work_group_start = get_local_size(0) * get_group_id(0)`) then
 * never wrap, and extending them to 64 bits keeps their lanes consecutive. */
#define VECTORIZE_GLOBAL_SIZE_LIMIT (((int64_t)1 << 31) - ((int64_t)1 << 17))

enum vectorize_status {
  VECTORIZE_OK,
  VECTORIZE_UNSUPPORTED,     /* something the vectorizer does not handle: keep the scalar path */
  VECTORIZE_NEEDS_STRUCTURE, /* divergent control flow of a shape it does not handle; may
                                work once the function's control flow is structurized */
};

/* Builds "<fn name>.v<width>", a function of fn's type that runs work-items
 * x .. x + width - 1 of row (y, z) at once, where x is the value that
 * __aquila_local_id(0) returns in it (so the caller binds work-item
 * builtins exactly as for fn). fn is a work-item function (kernarg, wg, x,
 * y, z) whose work-item builtins are still __aquila_* calls, every call
 * inlined, in SSA form with loops in simplified and LCSSA form. fn is not
 * changed. On failure, *out is NULL and why says what stopped it. */
enum vectorize_status vectorize_workitem_function(LLVMModuleRef m, LLVMValueRef fn,
                                                  const struct vectorize_target *target,
                                                  LLVMValueRef *out, struct strbuf *why);

/* With AVX-512, 1 / sqrt(x) on 16 floats, where OpenCL allows it, becomes
 * the hardware estimate and one Newton step (every function of m). */
void vectorize_reciprocal_sqrt(LLVMModuleRef m, const struct vectorize_target *target);

#endif
