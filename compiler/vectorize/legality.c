/* What the transformation supports: check_shapes walks the analysed
 * function and fails the vectorization (VECTORIZE_UNSUPPORTED or
 * VECTORIZE_NEEDS_STRUCTURE, with the reason) before anything is built,
 * and decides which values are packets and which calls are dropped.
 *
 * Needs: shapes (shape.c), packets (packet.c), call classes (calls.c). */
#include "vectorize/internal.h"

#include <stdint.h>

/* Whether block c is in the region that block entry (the region's first
 * block) dominates. */
static int in_region(struct vec *v, int entry, int c) {
  return cfg_dominates(&v->g, entry, c);
}

void check_shapes(struct vec *v) {
  struct cfg *g = &v->g;
  /* Divergent loops: one latch, which is the only way out, to an exit of
   * its own. */
  for (unsigned l = 0; l < g->num_loops && v->status == VECTORIZE_OK; l++) {
    if (!v->loop_divergent[l]) continue;
    struct cfg_loop *lp = &g->loops[l];
    if (lp->latch < 0 || lp->preheader < 0 || lp->num_exits != 1) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a loop with a varying exit that is not its latch's only",
           NULL);
      break;
    }
    int exit = -1;
    for (unsigned k = g->succ_start[lp->latch]; k < g->succ_start[lp->latch + 1]; k++)
      if (!lp->member[g->succ[k]]) exit = (int)g->succ[k];
    if (exit < 0 || g->pred_start[exit + 1] - g->pred_start[exit] != 1 ||
        g->succ_start[lp->latch + 1] - g->succ_start[lp->latch] != 2) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a loop with a varying exit that is not its latch's only",
           NULL);
      break;
    }
    v->exit_block[l] = exit;
  }
  /* Varying branches: if-then shapes. */
  for (unsigned r = 0; r < g->num_rpo && v->status == VECTORIZE_OK; r++) {
    int d = g->rpo[r];
    if (!v->varying_branch[d]) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[d]);
    if (!LLVMIsABranchInst(term)) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a switch on a varying value", term);
      break;
    }
    int l = g->loop[d];
    if (l >= 0 && v->loop_divergent[l] && g->loops[l].latch == d) continue;
    int s0 = cfg_number(g, LLVMGetSuccessor(term, 0)),
        s1 = cfg_number(g, LLVMGetSuccessor(term, 1));
    int join = g->ipdom[d];
    int entry = join == s0 ? s1 : join == s1 ? s0 : -1;
    if (join < 0 || entry < 0 || entry == join ||
        g->pred_start[entry + 1] - g->pred_start[entry] != 1 || v->join_of[join] != d ||
        (l >= 0 && !cfg_in_loop(g, l, join))) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a varying branch that is not an if-then", term);
      break;
    }
    for (unsigned k = g->pred_start[join]; k < g->pred_start[join + 1]; k++) {
      int p = (int)g->pred[k];
      if (p != d && g->rpo_number[p] >= 0 && !in_region(v, entry, p)) {
        fail(v, VECTORIZE_NEEDS_STRUCTURE, "a varying branch whose join is reached from elsewhere",
             term);
        break;
      }
    }
    v->region_entry[join] = entry;
  }
  if (v->status != VECTORIZE_OK) return;
  /* Which blocks may run with lanes off. */
  for (unsigned r = 0; r < g->num_rpo; r++) {
    int b = g->rpo[r];
    for (int l = g->loop[b]; l >= 0; l = g->loops[l].parent)
      if (v->loop_divergent[l]) v->partial[b] = 1;
    for (unsigned j = 0; j < g->n && !v->partial[b]; j++)
      if (v->region_entry[j] >= 0 && in_region(v, v->region_entry[j], b)) v->partial[b] = 1;
  }
  /* Instructions. */
  for (unsigned r = 0; r < g->num_rpo && v->status == VECTORIZE_OK; r++) {
    int b = g->rpo[r];
    for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[b]); in && v->status == VECTORIZE_OK;
         in = LLVMGetNextInstruction(in)) {
      struct vinfo *i = info_of(v, in);
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      LLVMTypeRef t = LLVMTypeOf(in);
      int packet = i->kind != K_UNIFORM && is_packet(v, in);
      if (packet) i->packet = 1;
      if (i->kind != K_UNIFORM && LLVMGetTypeKind(t) != LLVMVoidTypeKind && !is_scalar_type(t) &&
          !packet)
        fail(v, VECTORIZE_UNSUPPORTED, "a varying value of a vector or aggregate type", in);
      if (op == LLVMCall) {
        enum call_class cc = classify_call(in);
        if (cc == CALL_UNKNOWN) fail(v, VECTORIZE_UNSUPPORTED, "a call that was not inlined", in);
        if (cc == CALL_BARRIER && v->partial[b])
          fail(v, VECTORIZE_UNSUPPORTED, "a barrier in divergent control flow", in);
        if (cc == CALL_DROP) i->drop = 1;
        if (cc == CALL_VECTOR && i->kind != K_UNIFORM) {
          const struct vector_intrinsic *vi = find_vector_intrinsic(callee_name(in));
          for (unsigned k = 0; k < 32; k++)
            if ((vi->scalar_args >> k & 1) && k < (unsigned)LLVMGetNumArgOperands(in) &&
                shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM)
              fail(v, VECTORIZE_UNSUPPORTED, "an intrinsic with a varying scalar operand", in);
        }
        unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
        if (cc == CALL_PER_LANE || cc == CALL_PURE || cc == CALL_LIBM)
          for (unsigned k = 0; k < nargs; k++) {
            LLVMTypeRef at = LLVMTypeOf(LLVMGetOperand(in, k));
            if (shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM && !is_scalar_type(at) &&
                !(cc != CALL_LIBM && is_scalar_vector_type(at)))
              fail(v, VECTORIZE_UNSUPPORTED, "a call with a varying argument of vector type", in);
          }
        if ((cc == CALL_PURE || cc == CALL_PER_LANE) && i->kind != K_UNIFORM &&
            LLVMGetTypeKind(t) != LLVMVoidTypeKind && !is_scalar_type(t) &&
            !is_scalar_vector_type(t))
          fail(v, VECTORIZE_UNSUPPORTED, "a call with a result of vector or aggregate type", in);
      }
      if ((op == LLVMExtractValue || op == LLVMInsertValue || op == LLVMInsertElement ||
           op == LLVMShuffleVector) &&
          i->kind != K_UNIFORM && !packet)
        fail(v, VECTORIZE_UNSUPPORTED, "a varying vector or aggregate operation", in);
      if (op == LLVMExtractElement && i->kind != K_UNIFORM &&
          LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(in, 0))) > MAX_MEMBERS)
        fail(v, VECTORIZE_UNSUPPORTED, "an element of a long varying vector", in);
      if (op == LLVMStore &&
          LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind &&
          (shape_of_value(v, LLVMGetOperand(in, 0)).kind != K_UNIFORM ||
           shape_of_value(v, LLVMGetOperand(in, 1)).kind != K_UNIFORM)) {
        LLVMValueRef val = LLVMGetOperand(in, 0);
        LLVMTypeRef e = LLVMGetElementType(LLVMTypeOf(val));
        if (!is_scalar_type(e) || LLVMGetVectorSize(LLVMTypeOf(val)) > MAX_MEMBERS ||
            (int64_t)LLVMStoreSizeOfType(v->td, e) != alloc_size(v, e) || LLVMGetVolatile(in) ||
            LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)
          fail(v, VECTORIZE_UNSUPPORTED, "a store of a varying vector", in);
      }
      if (op == LLVMAlloca && b != 0)
        fail(v, VECTORIZE_UNSUPPORTED, "an alloca outside the entry block", in);
      /* A work queue: items popped with an atomic inside a loop that
       * work-items leave at different times (OpenCV's Canny hysteresis).
       * Such kernels tend to test and mark shared cells without atomics, a
       * race that work-items in order rarely lose and lanes in lockstep
       * often do (both see a cell unmarked, both push it): they keep the
       * order of the scalar path. */
      if ((op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) && LLVMGetFirstUse(in)) {
        for (int l = g->loop[b]; l >= 0; l = g->loops[l].parent)
          if (v->loop_divergent[l]) {
            fail(v, VECTORIZE_UNSUPPORTED,
                 "an atomic whose result is used, in a loop that work-items leave at different "
                 "times (a work queue: kept in work-item order)",
                 in);
            break;
          }
      }
      if (op == LLVMVAArg || op == LLVMLandingPad || op == LLVMResume)
        fail(v, VECTORIZE_UNSUPPORTED, "an unsupported instruction", in);
      if ((op == LLVMLoad || op == LLVMStore) &&
          LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic &&
          shape_of_value(v, LLVMGetOperand(in, op == LLVMLoad ? 0 : 1)).kind != K_UNIFORM)
        fail(v, VECTORIZE_UNSUPPORTED, "an atomic load or store at a varying address", in);
      /* Values of a divergent loop used outside it: only through the phis of
       * its exit block (LCSSA). */
      if (op != LLVMPHI) {
        int n = LLVMGetNumOperands(in);
        for (int k = 0; k < n; k++) {
          LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
          if (o && LLVMIsAInstruction(o) && divergent_loop_left(v, block_of(v, o), b) >= 0)
            fail(v, VECTORIZE_UNSUPPORTED, "a value leaving a divergent loop outside LCSSA form",
                 in);
        }
      } else {
        unsigned count = LLVMCountIncoming(in);
        for (unsigned k = 0; k < count; k++) {
          LLVMValueRef o = LLVMGetIncomingValue(in, k);
          int p = cfg_number(g, LLVMGetIncomingBlock(in, k));
          int l = p >= 0 ? divergent_loop_left(v, p, b) : -1;
          if (l >= 0 && (v->exit_block[l] != b || p != g->loops[l].latch))
            fail(v, VECTORIZE_NEEDS_STRUCTURE, "a phi after a divergent loop", in);
          if (o && LLVMIsAInstruction(o) && p >= 0 &&
              divergent_loop_left(v, block_of(v, o), p) >= 0)
            fail(v, VECTORIZE_UNSUPPORTED, "a value leaving a divergent loop outside LCSSA form",
                 in);
        }
      }
    }
  }
}
