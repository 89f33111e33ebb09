/* Control-flow graph, dominator trees and natural loops of one function
 * (cfg.h). Dominators and post-dominators use the iterative algorithm of
 * Cooper, Harvey and Kennedy over reverse post-order; the post-dominator
 * tree hangs from a virtual exit that every returning block reaches. */
#include "analysis/cfg.h"

#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

int cfg_number(const struct cfg *g, LLVMBasicBlockRef bb) {
  return (int)(intptr_t)ptr_map_get(&g->number, bb) - 1;
}

/* Post-order of the graph given as (start, edges), from root; returns the
 * count. Iterative: kernels can nest deeply. */
static unsigned post_order(unsigned n, const unsigned *start, const unsigned *edges, unsigned root,
                           int *order) {
  unsigned *next = xcalloc(n, sizeof *next), *stack = xcalloc(n, sizeof *stack);
  unsigned char *seen = xcalloc(n, 1);
  unsigned sp = 0, count = 0;
  stack[sp++] = root;
  seen[root] = 1;
  next[root] = start[root];
  while (sp) {
    unsigned b = stack[sp - 1];
    if (next[b] < start[b + 1]) {
      unsigned s = edges[next[b]++];
      if (!seen[s]) {
        seen[s] = 1;
        next[s] = start[s];
        stack[sp++] = s;
      }
    } else {
      order[count++] = (int)b;
      sp--;
    }
  }
  free(next);
  free(stack);
  free(seen);
  return count;
}

/* Immediate dominators over the graph whose predecessor lists are
 * (pstart, preds), given its reverse post-order from root. */
static void dominators(unsigned n, const unsigned *pstart, const unsigned *preds, const int *rpo,
                       unsigned num_rpo, int *idom) {
  int *number = xcalloc(n, sizeof *number);
  for (unsigned i = 0; i < n; i++) {
    number[i] = -1;
    idom[i] = -1;
  }
  for (unsigned i = 0; i < num_rpo; i++)
    number[rpo[i]] = (int)i;
  int root = rpo[0];
  idom[root] = root;
  for (int changed = 1; changed;) {
    changed = 0;
    for (unsigned i = 1; i < num_rpo; i++) {
      int b = rpo[i], best = -1;
      for (unsigned k = pstart[b]; k < pstart[b + 1]; k++) {
        int p = (int)preds[k];
        if (number[p] < 0 || idom[p] < 0) continue;
        if (best < 0) {
          best = p;
          continue;
        }
        int x = p, y = best;
        while (x != y) {
          while (number[x] > number[y])
            x = idom[x];
          while (number[y] > number[x])
            y = idom[y];
        }
        best = x;
      }
      if (best >= 0 && idom[b] != best) {
        idom[b] = best;
        changed = 1;
      }
    }
  }
  idom[root] = -1;
  free(number);
}

int cfg_build(struct cfg *g, LLVMValueRef fn) {
  memset(g, 0, sizeof *g);
  g->fn = fn;
  g->n = LLVMCountBasicBlocks(fn);
  unsigned n = g->n;
  g->blocks = xcalloc(n, sizeof *g->blocks);
  unsigned k = 0, num_edges = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    g->blocks[k] = bb;
    ptr_map_put(&g->number, bb, (void *)(intptr_t)(k + 1));
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term) return -1;
    LLVMOpcode op = LLVMGetInstructionOpcode(term);
    if (op == LLVMIndirectBr || op == LLVMInvoke || op == LLVMCallBr) return -1;
    num_edges += LLVMGetNumSuccessors(term);
    k++;
  }
  /* Successors (a switch may name a block twice: kept, as an edge each). */
  g->succ_start = xcalloc(n + 1, sizeof *g->succ_start);
  g->succ = xcalloc(num_edges, sizeof *g->succ);
  unsigned *pred_count = xcalloc(n + 1, sizeof *pred_count);
  unsigned e = 0;
  for (unsigned b = 0; b < n; b++) {
    g->succ_start[b] = e;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[b]);
    for (unsigned s = 0; s < LLVMGetNumSuccessors(term); s++) {
      unsigned t = (unsigned)cfg_number(g, LLVMGetSuccessor(term, s));
      g->succ[e++] = t;
      pred_count[t]++;
    }
  }
  g->succ_start[n] = e;
  g->pred_start = xcalloc(n + 1, sizeof *g->pred_start);
  g->pred = xcalloc(num_edges, sizeof *g->pred);
  for (unsigned b = 0; b < n; b++)
    g->pred_start[b + 1] = g->pred_start[b] + pred_count[b];
  memset(pred_count, 0, (n + 1) * sizeof *pred_count);
  for (unsigned b = 0; b < n; b++)
    for (unsigned i = g->succ_start[b]; i < g->succ_start[b + 1]; i++) {
      unsigned t = g->succ[i];
      g->pred[g->pred_start[t] + pred_count[t]++] = b;
    }
  free(pred_count);

  /* Reverse post-order and dominators. */
  int *order = xcalloc(n, sizeof *order);
  g->num_rpo = post_order(n, g->succ_start, g->succ, 0, order);
  g->rpo = xcalloc(n, sizeof *g->rpo);
  g->rpo_number = xcalloc(n, sizeof *g->rpo_number);
  for (unsigned b = 0; b < n; b++)
    g->rpo_number[b] = -1;
  for (unsigned i = 0; i < g->num_rpo; i++) {
    g->rpo[i] = order[g->num_rpo - 1 - i];
    g->rpo_number[g->rpo[i]] = (int)i;
  }
  g->idom = xcalloc(n, sizeof *g->idom);
  dominators(n, g->pred_start, g->pred, g->rpo, g->num_rpo, g->idom);

  /* Post-dominators: the reverse graph, rooted at a virtual exit (number n)
   * that every block without successors reaches. */
  unsigned *rstart = xcalloc(n + 2, sizeof *rstart), *redges;
  unsigned *rpstart = xcalloc(n + 2, sizeof *rpstart), *rpreds;
  unsigned num_exits = 0;
  for (unsigned b = 0; b < n; b++)
    if (g->succ_start[b] == g->succ_start[b + 1]) num_exits++;
  /* Reverse successors of b are b's predecessors; of the exit, the exits. */
  redges = xcalloc(num_edges + num_exits, sizeof *redges);
  rpreds = xcalloc(num_edges + num_exits, sizeof *rpreds);
  e = 0;
  for (unsigned b = 0; b < n; b++) {
    rstart[b] = e;
    for (unsigned i = g->pred_start[b]; i < g->pred_start[b + 1]; i++)
      redges[e++] = g->pred[i];
  }
  rstart[n] = e;
  for (unsigned b = 0; b < n; b++)
    if (g->succ_start[b] == g->succ_start[b + 1]) redges[e++] = b;
  rstart[n + 1] = e;
  /* Reverse predecessors of b are b's successors, or the exit. */
  e = 0;
  for (unsigned b = 0; b < n; b++) {
    rpstart[b] = e;
    if (g->succ_start[b] == g->succ_start[b + 1]) rpreds[e++] = n;
    for (unsigned i = g->succ_start[b]; i < g->succ_start[b + 1]; i++)
      rpreds[e++] = g->succ[i];
  }
  rpstart[n] = rpstart[n + 1] = e;
  int *rorder = xcalloc(n + 1, sizeof *rorder), *rrpo = xcalloc(n + 1, sizeof *rrpo);
  unsigned rcount = post_order(n + 1, rstart, redges, n, rorder);
  for (unsigned i = 0; i < rcount; i++)
    rrpo[i] = rorder[rcount - 1 - i];
  int *ridom = xcalloc(n + 1, sizeof *ridom);
  dominators(n + 1, rpstart, rpreds, rrpo, rcount, ridom);
  g->ipdom = xcalloc(n, sizeof *g->ipdom);
  for (unsigned b = 0; b < n; b++)
    g->ipdom[b] = ridom[b] == (int)n ? CFG_EXIT : ridom[b];
  free(rstart);
  free(redges);
  free(rpstart);
  free(rpreds);
  free(rorder);
  free(rrpo);
  free(ridom);
  free(order);

  /* Natural loops: back edges b -> h with h dominating b, one loop per header. */
  g->loop = xcalloc(n, sizeof *g->loop);
  g->loops = xcalloc(n, sizeof *g->loops);
  int *loop_of_header = xcalloc(n, sizeof *loop_of_header);
  for (unsigned b = 0; b < n; b++)
    loop_of_header[b] = -1;
  int *work = xcalloc(n, sizeof *work);
  for (unsigned i = 0; i < g->num_rpo; i++) {
    int h = g->rpo[i];
    for (unsigned p = g->pred_start[h]; p < g->pred_start[h + 1]; p++) {
      int b = (int)g->pred[p];
      if (g->rpo_number[b] < 0 || !cfg_dominates(g, h, b)) continue;
      struct cfg_loop *l;
      if (loop_of_header[h] < 0) {
        loop_of_header[h] = (int)g->num_loops;
        l = &g->loops[g->num_loops++];
        l->header = h;
        l->latch = b;
        l->member = xcalloc(n, 1);
        l->member[h] = 1;
      } else {
        l = &g->loops[loop_of_header[h]];
        if (l->latch != b) l->latch = -1;
      }
      /* Everything that reaches b without passing h. */
      unsigned w = 0;
      if (!l->member[b]) {
        l->member[b] = 1;
        work[w++] = b;
      }
      while (w) {
        int x = work[--w];
        for (unsigned q = g->pred_start[x]; q < g->pred_start[x + 1]; q++) {
          int y = (int)g->pred[q];
          if (g->rpo_number[y] < 0 || l->member[y]) continue;
          l->member[y] = 1;
          work[w++] = y;
        }
      }
    }
  }
  unsigned *size = xcalloc(g->num_loops, sizeof *size);
  for (unsigned i = 0; i < g->num_loops; i++)
    for (unsigned b = 0; b < n; b++)
      size[i] += g->loops[i].member[b];
  for (unsigned b = 0; b < n; b++) {
    g->loop[b] = -1;
    for (unsigned i = 0; i < g->num_loops; i++)
      if (g->loops[i].member[b] && (g->loop[b] < 0 || size[i] < size[g->loop[b]]))
        g->loop[b] = (int)i;
  }
  for (unsigned i = 0; i < g->num_loops; i++) {
    struct cfg_loop *l = &g->loops[i];
    l->parent = -1;
    for (unsigned j = 0; j < g->num_loops; j++)
      if (j != i && g->loops[j].member[l->header] && size[j] > size[i] &&
          (l->parent < 0 || size[j] < size[l->parent]))
        l->parent = (int)j;
    l->preheader = -1;
    int outside = 0;
    for (unsigned p = g->pred_start[l->header]; p < g->pred_start[l->header + 1]; p++) {
      int b = (int)g->pred[p];
      if (l->member[b]) continue;
      outside++;
      l->preheader = b;
    }
    if (outside != 1 || g->succ_start[l->preheader + 1] - g->succ_start[l->preheader] != 1)
      l->preheader = -1;
    for (unsigned b = 0; b < n; b++)
      if (l->member[b])
        for (unsigned s = g->succ_start[b]; s < g->succ_start[b + 1]; s++)
          if (!l->member[g->succ[s]]) l->num_exits++;
  }
  free(size);
  free(work);
  free(loop_of_header);
  return 0;
}

int cfg_dominates(const struct cfg *g, int a, int b) {
  for (int x = b; x >= 0; x = g->idom[x])
    if (x == a) return 1;
  return 0;
}

int cfg_in_loop(const struct cfg *g, int l, int b) {
  return l >= 0 && g->loops[l].member[b];
}

void cfg_free(struct cfg *g) {
  for (unsigned i = 0; i < g->num_loops; i++)
    free(g->loops[i].member);
  free(g->loops);
  free(g->loop);
  free(g->blocks);
  ptr_map_free(&g->number);
  free(g->succ_start);
  free(g->succ);
  free(g->pred_start);
  free(g->pred);
  free(g->rpo);
  free(g->rpo_number);
  free(g->idom);
  free(g->ipdom);
  memset(g, 0, sizeof *g);
}
