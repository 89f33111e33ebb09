/* Two iterations of a search loop interleaved, right before instruction
 * selection.
 *
 * A password cracker's candidate loop (hashcat's MD5: one work-item a
 * work-group, each iteration hashes the next candidates and compares) is
 * one long dependency chain per iteration: a round's add, ternary op and
 * rotate wait for the round before. The out-of-order core overlaps the end
 * of one iteration with the start of the next only as far as its window
 * reaches, and the chain's latency, not the vector ports, sets the rate.
 * The iterations are independent apart from the rare path that reports a
 * hit, so two of them can run side by side, their instructions alternating
 * (written one after the other, the two chains stayed apart in the machine
 * code: no gain).
 *
 * The loop's form: a header H whose instructions have no side effects
 * (loads, arithmetic, calls to intrinsics that read no memory) ending in a
 * branch to the latch L (the common case, "continue") or into the rest of
 * the loop R (the rare case, where the side effects are), and a latch
 * without phis whose instructions read only H's phis and values from
 * outside the loop; L is the only block that leaves the loop. Then
 *
 *   J:  ψ = the loop's state; whether the loop goes on after iteration i,
 *       by L's own computation (a clone of it)          -> JB, else H
 *   JB: H for iteration i and H for iteration i + 1, alternating
 *       both continue                                   -> JL, else H
 *   JL: L for iteration i + 1                           -> J or the exit
 *
 * and H, R, L stay as they were, with L's back edge to J: when either
 * iteration takes its rare path, iteration i runs again in the original
 * code, and every side effect happens as it did (the second iteration's
 * loads, made early, are only used when nothing was stored in between).
 * When the rare path is not rare, that would cost every iteration twice:
 * after MAX_MISSES such returns the loop runs the original code to its end.
 * A header is worth it when it is latency-bound: at most 1.5 instructions
 * per step of its chain (by rough latencies). One with more independent
 * work keeps the vector ports busy already: a loop of two MD5 chains
 * interleaved by hand ran 1.27x slower paired once more. Its live values
 * may take up to twice the target's vector registers: spilling some costs
 * less than the latency (hashcat's MD5 with 512-bit candidate vectors,
 * 18 of AVX2's sixteen 256-bit registers, ran 1.18-1.20x faster paired).
 * AQUILA_INTERLEAVE=0 or =workitems (pairing only work-items,
 * workgroup/workitem_pairs.c) leaves loops as they are (for comparisons). */
#include "codegen/interleave.h"

#include <llvm-c/Analysis.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cfg.h"
#include "support/ptrmap.h"

#define MIN_HEADER_INSTRUCTIONS 48
#define MAX_HEADER_INSTRUCTIONS 4000
#define MIN_CHAIN 24
#define MAX_MISSES 4

/* Rough latencies for a header's chain. Not reassociate.c's table: the
 * only calls here are intrinsics (a rotate is one or two cycles, not a
 * call's eight), and floating-point chains count too. */
static unsigned latency_of(LLVMValueRef inst) {
  switch (LLVMGetInstructionOpcode(inst)) {
  case LLVMLoad:
    return 4;
  case LLVMMul:
  case LLVMFMul:
  case LLVMFAdd:
  case LLVMFSub:
    return 4;
  case LLVMCall:
    return 2;
  case LLVMPHI:
  case LLVMBitCast:
  case LLVMFreeze:
    return 0;
  default:
    return 1;
  }
}

/* A call to an intrinsic that reads and writes no memory (llvm.fshl):
 * memory(none) on the function or on the call. Intrinsics only: they
 * return (a function of the program's that reads no memory may loop
 * forever, and the second iteration's header runs before the first's
 * rare path is known). */
static int call_is_pure(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee)) return 0;
  unsigned memory_kind = LLVMGetEnumAttributeKindForName("memory", 6);
  LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, memory_kind);
  if (!a) a = LLVMGetCallSiteEnumAttribute(call, LLVMAttributeFunctionIndex, memory_kind);
  return a && LLVMGetEnumAttributeValue(a) == 0;
}

/* An instruction that may run early, twice, or for nothing: no stores, no
 * calls that touch memory, no division (a trap), no volatile or atomic
 * loads. */
static int is_free_of_effects(LLVMValueRef inst) {
  switch (LLVMGetInstructionOpcode(inst)) {
  case LLVMStore:
  case LLVMFence:
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
  case LLVMVAArg:
  case LLVMAlloca:
  case LLVMInvoke:
  case LLVMCallBr:
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
  case LLVMLandingPad:
  case LLVMCleanupPad:
  case LLVMCatchPad:
    return 0;
  case LLVMLoad:
    return !LLVMGetVolatile(inst) && LLVMGetOrdering(inst) == LLVMAtomicOrderingNotAtomic;
  case LLVMCall:
    return call_is_pure(inst);
  default:
    return 1;
  }
}

#define MAX_ENTRIES 8

struct loop_shape {
  LLVMBasicBlockRef entries[MAX_ENTRIES]; /* the header's predecessors outside the loop */
  unsigned num_entries;
  LLVMBasicBlockRef header, latch, exit;
  int header_cont_on_true; /* H's branch goes to L when its condition is true */
  int latch_back_on_true;  /* L's branch goes back to H when its condition is true */
  unsigned instructions, chain, live;
};

static int defined_in_loop(const struct cfg *g, int l, LLVMValueRef v) {
  if (!LLVMIsAInstruction(v)) return 0;
  int b = cfg_number(g, LLVMGetInstructionParent(v));
  return b >= 0 && cfg_in_loop(g, l, b);
}

/* Every use of v is inside loop l, or in a phi of the exit block for the
 * edge from the latch. */
static int uses_stay_inside(const struct cfg *g, int l, LLVMValueRef v, LLVMBasicBlockRef exit,
                            LLVMBasicBlockRef latch) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAInstruction(user)) return 0;
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(user);
    int b = cfg_number(g, bb);
    if (b >= 0 && cfg_in_loop(g, l, b)) continue;
    if (bb != exit || LLVMGetInstructionOpcode(user) != LLVMPHI) return 0;
    for (unsigned i = 0; i < LLVMCountIncoming(user); i++)
      if (LLVMGetIncomingValue(user, i) == v && LLVMGetIncomingBlock(user, i) != latch) return 0;
  }
  return 1;
}

/* The registers of register_bits each that bb's values take at most at
 * once (a value lives from its definition to its last use in bb, or to the
 * end when it is used elsewhere). */
static unsigned register_units(LLVMTypeRef t, unsigned register_bits) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return 1;
  LLVMTypeRef e = LLVMGetElementType(t);
  unsigned bits =
      LLVMGetVectorSize(t) * (LLVMGetTypeKind(e) == LLVMIntegerTypeKind  ? LLVMGetIntTypeWidth(e)
                              : LLVMGetTypeKind(e) == LLVMDoubleTypeKind ? 64
                                                                         : 32);
  return bits > register_bits ? (bits + register_bits - 1) / register_bits : 1;
}

static unsigned max_live(LLVMBasicBlockRef bb, unsigned register_bits) {
  struct ptr_map position = {0};
  unsigned n = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i))
    ptr_map_put(&position, i, (void *)(uintptr_t)++n);
  int *delta = calloc(n + 2, sizeof *delta);
  if (!delta) {
    ptr_map_free(&position);
    return UINT32_MAX;
  }
  for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
    LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(i));
    if (k == LLVMVoidTypeKind) continue;
    unsigned def = (unsigned)(uintptr_t)ptr_map_get(&position, i), last = def;
    for (LLVMUseRef u = LLVMGetFirstUse(i); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      unsigned p = LLVMIsAInstruction(user) && LLVMGetInstructionParent(user) == bb
                       ? (unsigned)(uintptr_t)ptr_map_get(&position, user)
                       : n + 1;
      if (p > last) last = p;
    }
    int units = (int)register_units(LLVMTypeOf(i), register_bits);
    delta[def] += units;
    delta[last] -= units;
  }
  int live = 0, most = 0;
  for (unsigned p = 1; p <= n + 1; p++) {
    live += delta[p];
    if (live > most) most = live;
  }
  free(delta);
  ptr_map_free(&position);
  return (unsigned)most;
}

/* Whether loop l has the form above; fills s. */
static int search_loop(const struct cfg *g, int l, unsigned registers, unsigned register_bits,
                       struct loop_shape *s) {
  const struct cfg_loop *loop = &g->loops[l];
  if (loop->latch < 0 || loop->latch == loop->header || loop->num_exits != 1) return 0;
  for (unsigned k = 0; k < g->num_loops; k++)
    if (g->loops[k].parent == l) return 0; /* innermost loops only */
  memset(s, 0, sizeof *s);
  for (unsigned p = g->pred_start[loop->header]; p < g->pred_start[loop->header + 1]; p++) {
    int from = (int)g->pred[p];
    if (from == loop->latch) continue;
    if (s->num_entries == MAX_ENTRIES) return 0;
    s->entries[s->num_entries++] = g->blocks[from];
  }
  if (!s->num_entries) return 0;
  s->header = g->blocks[loop->header];
  s->latch = g->blocks[loop->latch];

  LLVMValueRef lt = LLVMGetBasicBlockTerminator(s->latch);
  if (LLVMGetInstructionOpcode(lt) != LLVMBr || !LLVMIsConditional(lt)) return 0;
  LLVMBasicBlockRef l0 = LLVMGetSuccessor(lt, 0), l1 = LLVMGetSuccessor(lt, 1);
  if (l0 == s->header && cfg_number(g, l1) >= 0 && !cfg_in_loop(g, l, cfg_number(g, l1))) {
    s->latch_back_on_true = 1;
    s->exit = l1;
  } else if (l1 == s->header && cfg_number(g, l0) >= 0 && !cfg_in_loop(g, l, cfg_number(g, l0))) {
    s->exit = l0;
  } else {
    return 0;
  }

  LLVMValueRef ht = LLVMGetBasicBlockTerminator(s->header);
  if (LLVMGetInstructionOpcode(ht) != LLVMBr || !LLVMIsConditional(ht)) return 0;
  LLVMBasicBlockRef h0 = LLVMGetSuccessor(ht, 0), h1 = LLVMGetSuccessor(ht, 1);
  LLVMBasicBlockRef rare = h0 == s->latch ? h1 : h0;
  if ((h0 == s->latch) == (h1 == s->latch) || rare == s->header) return 0;
  s->header_cont_on_true = h0 == s->latch;

  /* The latch: no phis, no effects, and it reads only H's phis, its own
   * values and values from outside the loop. */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->latch); i != lt; i = LLVMGetNextInstruction(i)) {
    if (LLVMGetInstructionOpcode(i) == LLVMPHI || !is_free_of_effects(i)) return 0;
    if (!uses_stay_inside(g, l, i, s->exit, s->latch)) return 0;
  }
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->latch); i; i = LLVMGetNextInstruction(i)) {
    int n = LLVMGetNumOperands(i);
    for (int k = 0; k < n; k++) {
      LLVMValueRef op = LLVMGetOperand(i, (unsigned)k);
      if (LLVMIsABasicBlock(op) || !defined_in_loop(g, l, op)) continue;
      LLVMBasicBlockRef bb = LLVMGetInstructionParent(op);
      if (bb == s->latch) continue;
      if (bb == s->header && LLVMGetInstructionOpcode(op) == LLVMPHI) continue;
      return 0;
    }
  }

  /* The header: its phis carry values made by the latch (or phis, or
   * values from outside), and the rest has no effects. */
  struct ptr_map depth = {0};
  unsigned deepest = 0;
  int ok = 1;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->header); ok && i != ht;
       i = LLVMGetNextInstruction(i)) {
    if (!uses_stay_inside(g, l, i, s->exit, s->latch)) ok = 0;
    if (LLVMGetInstructionOpcode(i) == LLVMPHI) {
      for (unsigned k = 0; k < LLVMCountIncoming(i); k++) {
        LLVMValueRef v = LLVMGetIncomingValue(i, k);
        if (LLVMGetIncomingBlock(i, k) == s->latch && defined_in_loop(g, l, v) &&
            LLVMGetInstructionParent(v) != s->latch && LLVMGetInstructionOpcode(v) != LLVMPHI)
          ok = 0;
      }
      continue;
    }
    if (!is_free_of_effects(i)) ok = 0;
    s->instructions++;
    unsigned d = 0;
    int n = LLVMGetNumOperands(i);
    for (int k = 0; k < n; k++) {
      unsigned od = (unsigned)(uintptr_t)ptr_map_get(&depth, LLVMGetOperand(i, (unsigned)k));
      if (od > d) d = od;
    }
    d += latency_of(i);
    ptr_map_put(&depth, i, (void *)(uintptr_t)d);
    if (d > deepest) deepest = d;
  }
  ptr_map_free(&depth);
  s->chain = deepest;
  if (!ok || s->instructions < MIN_HEADER_INSTRUCTIONS ||
      s->instructions > MAX_HEADER_INSTRUCTIONS || s->chain < MIN_CHAIN ||
      2 * s->instructions > 3 * s->chain)
    return 0;
  s->live = max_live(s->header, register_bits);
  return s->live <= 2 * registers;
}

static LLVMValueRef mapped(const struct ptr_map *map, LLVMValueRef v) {
  LLVMValueRef m = ptr_map_get(map, v);
  return m ? m : v;
}

/* Clones inst at the builder's position with its operands mapped. */
static LLVMValueRef clone_mapped(LLVMBuilderRef b, LLVMValueRef inst, struct ptr_map *map) {
  LLVMValueRef c = LLVMInstructionClone(inst);
  LLVMInsertIntoBuilder(b, c);
  int n = LLVMGetNumOperands(c);
  for (int k = 0; k < n; k++) {
    LLVMValueRef op = LLVMGetOperand(c, (unsigned)k);
    if (!LLVMIsABasicBlock(op)) LLVMSetOperand(c, (unsigned)k, mapped(map, op));
  }
  ptr_map_put(map, inst, c);
  return c;
}

static void replace_successor(LLVMValueRef term, LLVMBasicBlockRef from, LLVMBasicBlockRef to) {
  unsigned n = LLVMGetNumSuccessors(term);
  for (unsigned k = 0; k < n; k++)
    if (LLVMGetSuccessor(term, k) == from) LLVMSetSuccessor(term, k, to);
}

static void interleave(LLVMValueRef fn, const struct loop_shape *s) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(fn));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMBasicBlockRef jam = LLVMInsertBasicBlockInContext(ctx, s->header, "jam");
  LLVMBasicBlockRef pair = LLVMInsertBasicBlockInContext(ctx, s->header, "jam.pair");
  LLVMBasicBlockRef next = LLVMInsertBasicBlockInContext(ctx, s->header, "jam.latch");
  LLVMValueRef ht = LLVMGetBasicBlockTerminator(s->header);
  LLVMValueRef lt = LLVMGetBasicBlockTerminator(s->latch);

  /* J: the state (psi) and whether the loop goes on after iteration i. */
  struct ptr_map first = {0}, second = {0}, second_latch = {0};
  LLVMPositionBuilderAtEnd(b, jam);
  unsigned num_phis = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->header);
       i && LLVMGetInstructionOpcode(i) == LLVMPHI; i = LLVMGetNextInstruction(i))
    num_phis++;
  LLVMValueRef *phis = calloc(num_phis + 1, sizeof *phis),
               *psis = calloc(num_phis + 1, sizeof *psis);
  if (!phis || !psis) abort();
  unsigned k = 0;
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->header); k < num_phis;
       i = LLVMGetNextInstruction(i), k++) {
    phis[k] = i;
    psis[k] = LLVMBuildPhi(b, LLVMTypeOf(i), "jam.state");
    ptr_map_put(&first, i, psis[k]);
  }
  LLVMValueRef misses = LLVMBuildPhi(b, i32, "jam.misses");
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->latch); i != lt; i = LLVMGetNextInstruction(i))
    clone_mapped(b, i, &first);
  LLVMValueRef goes_on = mapped(&first, LLVMGetCondition(lt));
  if (!s->latch_back_on_true) goes_on = LLVMBuildNot(b, goes_on, "");
  LLVMValueRef few_misses =
      LLVMBuildICmp(b, LLVMIntULT, misses, LLVMConstInt(i32, MAX_MISSES, 0), "");
  LLVMBuildCondBr(b, LLVMBuildAnd(b, goes_on, few_misses, "jam.both"), pair, s->header);

  /* The second iteration's phis: what the latch gives after the first. */
  for (k = 0; k < num_phis; k++) {
    LLVMValueRef from_latch = LLVMGetIncomingValue(phis[k], 0);
    for (unsigned e = 0; e < LLVMCountIncoming(phis[k]); e++)
      if (LLVMGetIncomingBlock(phis[k], e) == s->latch)
        from_latch = LLVMGetIncomingValue(phis[k], e);
    ptr_map_put(&second, phis[k], mapped(&first, from_latch));
  }

  /* JB: the two headers, alternating. */
  LLVMPositionBuilderAtEnd(b, pair);
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->header); i != ht;
       i = LLVMGetNextInstruction(i)) {
    if (LLVMGetInstructionOpcode(i) == LLVMPHI) continue;
    clone_mapped(b, i, &first);
    clone_mapped(b, i, &second);
  }
  LLVMValueRef cont_a = mapped(&first, LLVMGetCondition(ht));
  LLVMValueRef cont_b = mapped(&second, LLVMGetCondition(ht));
  if (!s->header_cont_on_true) {
    cont_a = LLVMBuildNot(b, cont_a, "");
    cont_b = LLVMBuildNot(b, cont_b, "");
  }
  LLVMBuildCondBr(b, LLVMBuildAnd(b, cont_a, cont_b, "jam.common"), next, s->header);

  /* JL: the latch of the second iteration. */
  LLVMPositionBuilderAtEnd(b, next);
  for (k = 0; k < num_phis; k++)
    ptr_map_put(&second_latch, phis[k], ptr_map_get(&second, phis[k]));
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->header); i != ht; i = LLVMGetNextInstruction(i))
    if (LLVMGetInstructionOpcode(i) != LLVMPHI) ptr_map_put(&second_latch, i, mapped(&second, i));
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->latch); i != lt; i = LLVMGetNextInstruction(i))
    clone_mapped(b, i, &second_latch);
  LLVMValueRef back = mapped(&second_latch, LLVMGetCondition(lt));
  if (s->latch_back_on_true)
    LLVMBuildCondBr(b, back, jam, s->exit);
  else
    LLVMBuildCondBr(b, back, s->exit, jam);

  /* The exit's phis for the edge from JL. */
  for (LLVMValueRef i = LLVMGetFirstInstruction(s->exit);
       i && LLVMGetInstructionOpcode(i) == LLVMPHI; i = LLVMGetNextInstruction(i)) {
    unsigned n = LLVMCountIncoming(i);
    for (unsigned e = 0; e < n; e++) {
      if (LLVMGetIncomingBlock(i, e) != s->latch) continue;
      LLVMValueRef v = mapped(&second_latch, LLVMGetIncomingValue(i, e));
      LLVMAddIncoming(i, &v, &next, 1);
      break;
    }
  }

  /* H's misses: one more when the pair fell back to it. */
  LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(s->header));
  LLVMValueRef misses_here = LLVMBuildPhi(b, i32, "jam.misses.here");
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(pair));
  LLVMValueRef one_more = LLVMBuildAdd(b, misses, LLVMConstInt(i32, 1, 0), "");
  LLVMValueRef in_vals[2] = {misses, one_more};
  LLVMBasicBlockRef in_blocks[2] = {jam, pair};
  LLVMAddIncoming(misses_here, in_vals, in_blocks, 2);

  /* J's phis: from the loop's entries, from JL and from the original latch. */
  for (k = 0; k < num_phis; k++) {
    unsigned n = LLVMCountIncoming(phis[k]);
    for (unsigned e = 0; e < n; e++) {
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(phis[k], e);
      LLVMValueRef v = LLVMGetIncomingValue(phis[k], e);
      LLVMAddIncoming(psis[k], &v, &from, 1);
      if (from == s->latch) {
        LLVMValueRef w = mapped(&second_latch, v);
        LLVMAddIncoming(psis[k], &w, &next, 1);
      }
    }
  }
  LLVMValueRef zero = LLVMConstInt(i32, 0, 0);
  for (unsigned e = 0; e < s->num_entries; e++)
    LLVMAddIncoming(misses, &zero, (LLVMBasicBlockRef *)&s->entries[e], 1);
  LLVMValueRef mvals[2] = {misses, misses_here};
  LLVMBasicBlockRef mblocks[2] = {next, s->latch};
  LLVMAddIncoming(misses, mvals, mblocks, 2);

  /* The entries and the original latch go to J; H's phis are J's. */
  for (unsigned e = 0; e < s->num_entries; e++)
    replace_successor(LLVMGetBasicBlockTerminator(s->entries[e]), s->header, jam);
  replace_successor(lt, s->header, jam);
  for (k = 0; k < num_phis; k++) {
    LLVMReplaceAllUsesWith(phis[k], psis[k]);
    LLVMInstructionEraseFromParent(phis[k]);
  }
  free(phis);
  free(psis);
  ptr_map_free(&first);
  ptr_map_free(&second);
  ptr_map_free(&second_latch);
  LLVMDisposeBuilder(b);
}

int interleave_search_loops(LLVMModuleRef m, unsigned vector_registers, unsigned vector_bits,
                            struct strbuf *report, struct strbuf *log) {
  const char *env = getenv("AQUILA_INTERLEAVE");
  if (env && (!strcmp(env, "0") || !strcmp(env, "workitems"))) return 0;
  int done = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    /* One loop at a time: each changes the graph. */
    for (int again = 1; again;) {
      again = 0;
      struct cfg g;
      if (cfg_build(&g, fn) == 0) {
        for (unsigned l = 0; l < g.num_loops; l++) {
          struct loop_shape s;
          /* A loop made here has the header's clone as its first block. */
          const char *name = LLVMGetBasicBlockName(g.blocks[g.loops[l].header]);
          if (name && !strncmp(name, "jam", 3)) continue;
          if (!search_loop(&g, (int)l, vector_registers, vector_bits, &s)) continue;
          interleave(fn, &s);
          if (report) {
            size_t len;
            strbuf_printf(report,
                          "aquila: '%s': a loop's iterations run in pairs, interleaved (%u "
                          "instructions a header, a chain of %u, %u values live)\n",
                          LLVMGetValueName2(fn, &len), s.instructions, s.chain, s.live);
          }
          done++;
          again = 1;
          /* A defect here must not reach instruction selection, which
           * takes broken IR for granted: the build fails instead. */
          if (LLVMVerifyFunction(fn, LLVMReturnStatusAction)) {
            size_t len;
            strbuf_printf(log,
                          "error: internal: interleaving a loop's iterations in '%s' made "
                          "invalid code (AQUILA_INTERLEAVE=0 builds without it)\n",
                          LLVMGetValueName2(fn, &len));
            cfg_free(&g);
            return -1;
          }
          break;
        }
      }
      cfg_free(&g);
    }
  }
  return done;
}
