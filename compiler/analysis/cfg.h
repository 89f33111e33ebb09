/* The control-flow graph of one LLVM function, with what the vectorizer
 * needs to know of it: predecessors, reverse post-order, dominators,
 * post-dominators and natural loops (cfg.c). Blocks are numbered in the
 * function's order; the entry is block 0. */
#ifndef AQUILA_COMPILER_CFG_H
#define AQUILA_COMPILER_CFG_H

#include <llvm-c/Core.h>

#include "support/ptrmap.h"

struct cfg_loop {
  int header;
  int latch;             /* the single block with a back edge to the header, -1 if several */
  int preheader;         /* the single predecessor outside the loop, if it has only the header as
                            successor; else -1 */
  int parent;            /* enclosing loop, -1 for none */
  unsigned num_exits;    /* edges leaving the loop */
  unsigned char *member; /* member[b]: block b belongs to the loop (or to one inside it) */
};

struct cfg {
  LLVMValueRef fn;
  unsigned n;                  /* blocks */
  LLVMBasicBlockRef *blocks;   /* by number */
  struct ptr_map number;       /* block -> number + 1 */
  unsigned *succ_start, *succ; /* successors of b: succ[succ_start[b] .. succ_start[b + 1]) */
  unsigned *pred_start, *pred;
  int *rpo; /* reachable blocks in reverse post-order */
  unsigned num_rpo;
  int *rpo_number; /* position in rpo, -1 when unreachable */
  int *idom;       /* immediate dominator, -1 for the entry and unreachable blocks */
  int *ipdom;      /* immediate post-dominator; CFG_EXIT when it is the function's exit,
                      -1 when the block reaches no exit */
  int *loop;       /* innermost loop of each block, -1 for none */
  struct cfg_loop *loops;
  unsigned num_loops;
};

#define CFG_EXIT (-2)

/* Builds the graph of fn. Returns 0, or -1 when fn has a terminator it does
 * not model (indirectbr, invoke, callbr). */
int cfg_build(struct cfg *g, LLVMValueRef fn);
void cfg_free(struct cfg *g);

/* The number of bb, or -1 when it is not fn's. */
int cfg_number(const struct cfg *g, LLVMBasicBlockRef bb);
int cfg_dominates(const struct cfg *g, int a, int b);
/* Whether block b is inside loop l (directly or in a nested loop). */
int cfg_in_loop(const struct cfg *g, int l, int b);

#endif
