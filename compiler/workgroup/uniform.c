/* Uniformity: which values are the same for every work-item of a
 * work-group, and what the work-group compiler does with that knowledge.
 *
 * A value is varying when it depends on the local id, on private memory
 * that holds varying data, on an atomic operation, or on control flow that
 * splits the work-group (a phi after a varying branch). Loads from global,
 * constant or local memory at a uniform address are uniform: in a program
 * free of data races every work-item reads the same value there.
 *
 * Two uses:
 *  - implicit loop barriers: a loop that every work-item runs the
 *    same number of times (and holds no barrier) gets barriers at its entry, its back edge and
 *    its exits. Splitting the kernel there (regions.c) turns "for each
 *    work-item: for each iteration" into "for each iteration: for each
 *    work-item", so the work-item loop is the innermost one and the loop
 *    vectorizer widens the loop body across work-items (NBody's inner loop);
 *  - uniform slots: a variable that lives across barriers and only ever
 *    holds uniform values stays one scalar instead of one copy per
 *    work-item (regions.c), so loop counters and bounds stay scalars and
 *    uniform branches can be hoisted out of the work-item loops. */
#include "workgroup/uniform.h"

#include <stdlib.h>
#include <string.h>

/* ---- value uniformity ----------------------------------------------------------- */

static int is_call_to(LLVMValueRef in, const char *name) {
  if (!LLVMIsACallInst(in)) return 0;
  LLVMValueRef callee = LLVMGetCalledValue(in);
  size_t len = 0;
  return callee && LLVMIsAFunction(callee) && !strcmp(LLVMGetValueName2(callee, &len), name);
}

/* The alloca a pointer is derived from, if any. */
static LLVMValueRef underlying_alloca(LLVMValueRef p) {
  for (int depth = 0; p && depth < 16; depth++) {
    if (LLVMIsAAllocaInst(p)) return p;
    if (LLVMIsAGetElementPtrInst(p) || LLVMIsABitCastInst(p) || LLVMIsAAddrSpaceCastInst(p))
      p = LLVMGetOperand(p, 0);
    else
      return NULL;
  }
  return NULL;
}

/* Whether operand op is varying: an instruction in the set, or one of the
 * work-item function's local id parameters. */
static int operand_varying(const struct uniformity *u, LLVMValueRef op) {
  if (LLVMIsAInstruction(op)) return ptr_set_has(&u->varying, op);
  if (LLVMIsAArgument(op)) {
    for (unsigned i = 2; i < LLVMCountParams(u->fn) && i < 5; i++)
      if (LLVMGetParam(u->fn, i) == op) return 1;
  }
  return 0;
}

static int instruction_varying(const struct uniformity *u, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  switch (op) {
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
  case LLVMAlloca:
    return 1;
  case LLVMLoad: {
    LLVMValueRef p = LLVMGetOperand(in, 0);
    LLVMValueRef a = underlying_alloca(p);
    if (a) return !(a == p && u->slot_is_uniform && u->slot_is_uniform(u->slot_data, a));
    return operand_varying(u, p);
  }
  case LLVMCall: {
    LLVMValueRef callee = LLVMGetCalledValue(in);
    if (!callee || !LLVMIsAFunction(callee)) return 1;
    size_t len = 0;
    const char *name = LLVMGetValueName2(callee, &len);
    if (!strcmp(name, "__aquila_local_id")) return 1;
    if (!strncmp(name, "__aquila_", 9)) return 0;
    if (!LLVMIsDeclaration(callee)) return 1;
    /* A library function (libm) or intrinsic: varying if an argument is. */
    unsigned n = (unsigned)LLVMGetNumArgOperands(in);
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef a = LLVMGetOperand(in, i);
      if (LLVMGetTypeKind(LLVMTypeOf(a)) == LLVMPointerTypeKind) return 1;
      if (operand_varying(u, a)) return 1;
    }
    return 0;
  }
  case LLVMPHI: {
    unsigned n = LLVMCountIncoming(in);
    LLVMValueRef first = n ? LLVMGetIncomingValue(in, 0) : NULL;
    int same = 1;
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef v = LLVMGetIncomingValue(in, i);
      if (operand_varying(u, v)) return 1;
      if (v != first) same = 0;
    }
    /* Different values joined after a varying branch differ per item. */
    return !same && u->any_varying_branch;
  }
  default: {
    int n = LLVMGetNumOperands(in);
    for (int i = 0; i < n; i++)
      if (operand_varying(u, LLVMGetOperand(in, i))) return 1;
    return 0;
  }
  }
}

void uniformity_compute(struct uniformity *u) {
  ptr_set_free(&u->varying);
  u->any_varying_branch = 0;
  for (int changed = 1; changed;) {
    changed = 0;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(u->fn); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        if (ptr_set_has(&u->varying, in) || !instruction_varying(u, in)) continue;
        ptr_set_add(&u->varying, in);
        changed = 1;
        if ((LLVMIsABranchInst(in) && LLVMIsConditional(in)) || LLVMIsASwitchInst(in))
          u->any_varying_branch = 1;
      }
  }
}

int uniformity_is_varying(const struct uniformity *u, LLVMValueRef v) {
  return operand_varying(u, v);
}

/* Whether a conditional branch or switch decides differently per item. */
int uniformity_branch_varying(const struct uniformity *u, LLVMValueRef term) {
  if (LLVMIsABranchInst(term) && LLVMIsConditional(term))
    return operand_varying(u, LLVMGetCondition(term));
  if (LLVMIsASwitchInst(term)) return operand_varying(u, LLVMGetOperand(term, 0));
  return 0;
}

void uniformity_free(struct uniformity *u) {
  ptr_set_free(&u->varying);
}

/* ---- loops ------------------------------------------------------------------------ */

struct cfg {
  LLVMBasicBlockRef *blocks;
  unsigned n;
  int *idom; /* index of the immediate dominator, -1 for the entry */
  int *rpo_index;
};

static int block_index(const struct cfg *g, LLVMBasicBlockRef bb) {
  for (unsigned i = 0; i < g->n; i++)
    if (g->blocks[i] == bb) return (int)i;
  return -1;
}

static unsigned num_succ(LLVMBasicBlockRef bb) {
  LLVMValueRef t = LLVMGetBasicBlockTerminator(bb);
  return t ? LLVMGetNumSuccessors(t) : 0;
}

static LLVMBasicBlockRef succ(LLVMBasicBlockRef bb, unsigned i) {
  return LLVMGetSuccessor(LLVMGetBasicBlockTerminator(bb), i);
}

/* Reverse post-order and dominators (Cooper, Harvey and Kennedy). */
static void cfg_build(struct cfg *g, LLVMValueRef fn) {
  g->n = LLVMCountBasicBlocks(fn);
  g->blocks = calloc(g->n + 1, sizeof *g->blocks);
  g->idom = calloc(g->n + 1, sizeof *g->idom);
  g->rpo_index = calloc(g->n + 1, sizeof *g->rpo_index);
  int *order = calloc(g->n + 1, sizeof *order), *state = calloc(g->n + 1, sizeof *state);
  int *stack = calloc(2 * (g->n + 1), sizeof *stack);
  if (!g->blocks || !g->idom || !g->rpo_index || !order || !state || !stack) abort();
  unsigned k = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    g->blocks[k++] = bb;
  /* Iterative DFS for post-order. */
  unsigned post = 0, sp = 0;
  stack[sp++] = 0;
  state[0] = 1;
  while (sp) {
    int b = stack[sp - 1];
    unsigned ns = num_succ(g->blocks[b]);
    int pushed = 0;
    while ((unsigned)(state[b] - 1) < ns) {
      int s = block_index(g, succ(g->blocks[b], (unsigned)(state[b] - 1)));
      state[b]++;
      if (s >= 0 && !state[s]) {
        state[s] = 1;
        stack[sp++] = s;
        pushed = 1;
        break;
      }
    }
    if (!pushed) {
      order[post++] = b;
      sp--;
    }
  }
  for (unsigned i = 0; i < g->n; i++) g->rpo_index[i] = -1;
  for (unsigned i = 0; i < post; i++) g->rpo_index[order[post - 1 - i]] = (int)i;
  for (unsigned i = 0; i < g->n; i++) g->idom[i] = -2; /* undefined */
  g->idom[0] = 0;
  for (int changed = 1; changed;) {
    changed = 0;
    for (unsigned r = 1; r < post; r++) {
      int b = order[post - 1 - r];
      int new_idom = -2;
      for (unsigned p = 0; p < g->n; p++) {
        if (g->idom[p] == -2) continue;
        for (unsigned s = 0; s < num_succ(g->blocks[p]); s++) {
          if (succ(g->blocks[p], s) != g->blocks[b]) continue;
          if (new_idom == -2) {
            new_idom = (int)p;
          } else {
            int a = (int)p, c = new_idom;
            while (a != c) {
              while (g->rpo_index[a] > g->rpo_index[c]) a = g->idom[a];
              while (g->rpo_index[c] > g->rpo_index[a]) c = g->idom[c];
            }
            new_idom = a;
          }
        }
      }
      if (new_idom != -2 && g->idom[b] != new_idom) {
        g->idom[b] = new_idom;
        changed = 1;
      }
    }
  }
  g->idom[0] = -1;
  free(order);
  free(state);
  free(stack);
}

static void cfg_free(struct cfg *g) {
  free(g->blocks);
  free(g->idom);
  free(g->rpo_index);
}

static int dominates(const struct cfg *g, int a, int b) {
  for (int x = b; x >= 0; x = g->idom[x]) {
    if (x == a) return 1;
    if (g->idom[x] == -2) return 0;
  }
  return 0;
}

struct loop {
  int header;
  char *in; /* in[i]: block i belongs to the loop */
  int latch;
};

/* The natural loop of back edge latch -> header. */
static void loop_body(const struct cfg *g, struct loop *l) {
  l->in = calloc(g->n, 1);
  int *work = calloc(g->n + 1, sizeof *work);
  if (!l->in || !work) abort();
  unsigned w = 0;
  l->in[l->header] = 1;
  if (!l->in[l->latch]) {
    l->in[l->latch] = 1;
    work[w++] = l->latch;
  }
  while (w) {
    int b = work[--w];
    for (unsigned p = 0; p < g->n; p++)
      for (unsigned s = 0; s < num_succ(g->blocks[p]); s++)
        if (succ(g->blocks[p], s) == g->blocks[b] && !l->in[p] && g->rpo_index[p] >= 0) {
          l->in[p] = 1;
          work[w++] = (int)p;
        }
  }
  free(work);
}

/* Whether block from can reach block to. */
static int reaches(const struct cfg *g, int from, int to) {
  char *seen = calloc(g->n, 1);
  int *work = calloc(g->n + 1, sizeof *work);
  if (!seen || !work) abort();
  unsigned w = 0;
  work[w++] = from;
  seen[from] = 1;
  int found = 0;
  while (w && !found) {
    int b = work[--w];
    for (unsigned s = 0; s < num_succ(g->blocks[b]); s++) {
      int t = block_index(g, succ(g->blocks[b], s));
      if (t < 0 || seen[t]) continue;
      if (t == to) found = 1;
      seen[t] = 1;
      work[w++] = t;
    }
  }
  free(seen);
  free(work);
  return found;
}

static int has_constant_trip_bound(LLVMValueRef term) {
  LLVMValueRef cond = LLVMGetCondition(term);
  if (!LLVMIsAICmpInst(cond)) return 0;
  return LLVMIsAConstantInt(LLVMGetOperand(cond, 0)) || LLVMIsAConstantInt(LLVMGetOperand(cond, 1));
}

static void insert_barrier(LLVMBuilderRef b, LLVMValueRef barrier_fn, LLVMTypeRef fn_type,
                           LLVMValueRef before) {
  LLVMPositionBuilderBefore(b, before);
  LLVMValueRef flags = LLVMConstInt(LLVMInt32TypeInContext(LLVMGetTypeContext(fn_type)), 0, 0);
  LLVMBuildCall2(b, fn_type, barrier_fn, &flags, 1, "");
}

int uniform_insert_loop_barriers(LLVMModuleRef m, LLVMValueRef fn) {
  struct uniformity u = {.fn = fn};
  uniformity_compute(&u);
  struct cfg g = {0};
  cfg_build(&g, fn);
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMTypeRef barrier_type = LLVMFunctionType(LLVMVoidTypeInContext(ctx), &i32, 1, 0);
  LLVMValueRef barrier_fn = LLVMGetNamedFunction(m, "__aquila_barrier");
  if (!barrier_fn) barrier_fn = LLVMAddFunction(m, "__aquila_barrier", barrier_type);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  int treated = 0;

  /* Back edges u -> h with h dominating u give the loops. */
  struct loop *loops = calloc(g.n + 1, sizeof *loops);
  unsigned nl = 0;
  if (!loops) abort();
  for (unsigned p = 0; p < g.n; p++) {
    if (g.rpo_index[p] < 0) continue;
    for (unsigned s = 0; s < num_succ(g.blocks[p]); s++) {
      int h = block_index(&g, succ(g.blocks[p], s));
      if (h < 0 || !dominates(&g, h, (int)p)) continue;
      int dup = 0;
      for (unsigned i = 0; i < nl; i++) dup |= loops[i].header == h;
      if (dup) {
        /* Two back edges: loop-simplify gives one latch; skip others. */
        for (unsigned i = 0; i < nl; i++)
          if (loops[i].header == h) loops[i].latch = -1;
        continue;
      }
      loops[nl].header = h;
      loops[nl].latch = (int)p;
      nl++;
    }
  }
  for (unsigned i = 0; i < nl; i++)
    if (loops[i].latch >= 0) loop_body(&g, &loops[i]);

  for (unsigned li = 0; li < nl; li++) {
    struct loop *l = &loops[li];
    if (l->latch < 0) continue;
    int ok = 1, constant_bound = 0, preheader = -1;
    unsigned num_exits = 0;
    int exits[8];
    /* The loop: uniform exits, no returns, no barriers, a plain latch. */
    for (unsigned bi = 0; bi < g.n && ok; bi++) {
      if (!l->in[bi]) continue;
      LLVMValueRef term = LLVMGetBasicBlockTerminator(g.blocks[bi]);
      if (!term || LLVMIsAReturnInst(term) || LLVMIsAUnreachableInst(term)) ok = 0;
      for (LLVMValueRef in = LLVMGetFirstInstruction(g.blocks[bi]); in && ok;
           in = LLVMGetNextInstruction(in))
        if (is_call_to(in, "__aquila_barrier")) ok = 0;
      for (unsigned s = 0; term && ok && s < LLVMGetNumSuccessors(term); s++) {
        int t = block_index(&g, LLVMGetSuccessor(term, s));
        if (t < 0 || l->in[t]) continue;
        if (uniformity_branch_varying(&u, term)) ok = 0;
        if (LLVMIsABranchInst(term) && LLVMIsConditional(term) && has_constant_trip_bound(term))
          constant_bound = 1;
        int known = 0;
        for (unsigned e = 0; e < num_exits; e++) known |= exits[e] == t;
        if (!known) {
          if (num_exits == 8) ok = 0;
          else exits[num_exits++] = t;
        }
      }
    }
    LLVMValueRef latch_term = LLVMGetBasicBlockTerminator(g.blocks[l->latch]);
    if (!ok || constant_bound || !latch_term || LLVMGetNumSuccessors(latch_term) != 1) continue;
    /* A dedicated preheader, reached only through uniform branches. */
    for (unsigned p = 0; p < g.n && ok; p++) {
      if (l->in[p] || g.rpo_index[p] < 0) continue;
      for (unsigned s = 0; s < num_succ(g.blocks[p]); s++)
        if (succ(g.blocks[p], s) == g.blocks[l->header]) {
          if (preheader >= 0 || num_succ(g.blocks[p]) != 1) ok = 0;
          preheader = (int)p;
        }
    }
    if (!ok || preheader < 0) continue;
    for (unsigned p = 0; p < g.n && ok; p++) {
      if (l->in[p] || g.rpo_index[p] < 0) continue;
      LLVMValueRef term = LLVMGetBasicBlockTerminator(g.blocks[p]);
      if (term && uniformity_branch_varying(&u, term) && reaches(&g, (int)p, l->header)) ok = 0;
    }
    /* Dedicated exits: every predecessor inside the loop. */
    for (unsigned e = 0; e < num_exits && ok; e++)
      for (unsigned p = 0; p < g.n && ok; p++)
        for (unsigned s = 0; s < num_succ(g.blocks[p]); s++)
          if (succ(g.blocks[p], s) == g.blocks[exits[e]] && !l->in[p] && g.rpo_index[p] >= 0)
            ok = 0;
    if (!ok) continue;
    insert_barrier(b, barrier_fn, barrier_type, LLVMGetBasicBlockTerminator(g.blocks[preheader]));
    insert_barrier(b, barrier_fn, barrier_type, latch_term);
    for (unsigned e = 0; e < num_exits; e++) {
      LLVMValueRef first = LLVMGetFirstInstruction(g.blocks[exits[e]]);
      while (first && LLVMIsAPHINode(first)) first = LLVMGetNextInstruction(first);
      insert_barrier(b, barrier_fn, barrier_type, first);
    }
    treated++;
  }
  for (unsigned i = 0; i < nl; i++) free(loops[i].in);
  free(loops);
  LLVMDisposeBuilder(b);
  cfg_free(&g);
  uniformity_free(&u);
  return treated;
}
