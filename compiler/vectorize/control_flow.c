/* Blocks and control flow: each block's lane mask, divergent loops that
 * run while any lane goes on (each lane's live-outs kept at the iteration
 * it left), branches (uniform ones kept, varying ones run the region under
 * the mask when any lane takes it) and the phis filled in at the end.
 *
 * Needs: masks and vector forms (build.c), instructions (instructions.c),
 * packets' elements (packet.c). */
#include "vectorize/internal.h"

#include <stdint.h>

LLVMValueRef block_mask(struct vec *v, int b) {
  struct cfg *g = &v->g;
  if (b == 0) return NULL;
  if (v->entry_mask[b]) return v->entry_mask[b];
  for (unsigned l = 0; l < g->num_loops; l++) {
    if (!v->loop_divergent[l]) continue;
    if (g->loops[l].header == b) return v->dl[l].mask_phi;
    if (v->exit_block[l] == b) return v->mask[g->loops[l].preheader];
  }
  int d = g->idom[b];
  return d >= 0 ? v->mask[d] : NULL;
}

void begin_divergent_loop(struct vec *v, int l) {
  struct cfg *g = &v->g;
  struct divergent_loop *d = &v->dl[l];
  int pre = g->loops[l].preheader;
  LLVMBasicBlockRef from = v->vlast[pre];
  d->mask_phi = LLVMBuildPhi(v->b, v->mask_type, "active");
  LLVMValueRef m = mask_value(v, v->mask[pre]);
  LLVMAddIncoming(d->mask_phi, &m, &from, 1);
  /* The values the exit block's phis take from the latch: a slot each, or
   * one per element of an OpenCL vector. */
  int exit = v->exit_block[l];
  for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[exit]); in && LLVMIsAPHINode(in);
       in = LLVMGetNextInstruction(in)) {
    LLVMTypeRef t = LLVMTypeOf(in);
    d->num_live_outs += LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
  }
  d->live_out = xcalloc(d->num_live_outs, sizeof *d->live_out);
  d->live_elem = xcalloc(d->num_live_outs, sizeof *d->live_elem);
  d->acc_phi = xcalloc(d->num_live_outs, sizeof *d->acc_phi);
  d->acc_next = xcalloc(d->num_live_outs, sizeof *d->acc_next);
  unsigned k = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[exit]); in && LLVMIsAPHINode(in);
       in = LLVMGetNextInstruction(in)) {
    LLVMTypeRef t = LLVMTypeOf(in);
    int is_vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    unsigned n = is_vec ? LLVMGetVectorSize(t) : 1;
    LLVMTypeRef vt = vector_of(v, is_vec ? LLVMGetElementType(t) : t);
    for (unsigned e = 0; e < n; e++, k++) {
      d->live_out[k] = LLVMGetIncomingValue(in, 0);
      d->live_elem[k] = is_vec ? (int)e : -1;
      d->acc_phi[k] = LLVMBuildPhi(v->b, vt, "exit.value");
      LLVMValueRef p = LLVMGetPoison(vt);
      LLVMAddIncoming(d->acc_phi[k], &p, &from, 1);
    }
  }
}

void emit_terminator(struct vec *v, int b) {
  struct cfg *g = &v->g;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[b]);
  LLVMOpcode op = LLVMGetInstructionOpcode(term);
  if (op == LLVMRet || op == LLVMUnreachable) {
    clone_uniform(v, term);
    return;
  }
  if (op == LLVMSwitch) {
    LLVMValueRef cond = LLVMGetOperand(term, 0);
    LLVMValueRef c = v->barrier_branch[b]
                         ? LLVMBuildExtractElement(v->b, vector_of_value(v, cond),
                                                   first_lane(v, v->b, v->mask[b]), "")
                         : scalar_of(v, cond);
    LLVMValueRef sw =
        LLVMBuildSwitch(v->b, c, v->vblock[cfg_number(g, LLVMGetSwitchDefaultDest(term))],
                        LLVMGetNumSuccessors(term) - 1);
    /* Operands: condition, default, then (value, destination) pairs. */
    int n = LLVMGetNumOperands(term);
    for (int k = 2; k + 1 < n; k += 2)
      LLVMAddCase(
          sw, LLVMGetOperand(term, (unsigned)k),
          v->vblock[cfg_number(g, LLVMValueAsBasicBlock(LLVMGetOperand(term, (unsigned)k + 1)))]);
    return;
  }
  if (!LLVMIsConditional(term)) {
    LLVMBuildBr(v->b, v->vblock[cfg_number(g, LLVMGetSuccessor(term, 0))]);
    return;
  }
  LLVMValueRef cond = LLVMGetCondition(term);
  int s0 = cfg_number(g, LLVMGetSuccessor(term, 0)), s1 = cfg_number(g, LLVMGetSuccessor(term, 1));
  if (v->barrier_branch[b]) {
    /* The same for every work-item (branch_guards_barrier): an active
     * lane's condition is every lane's. */
    LLVMValueRef c = LLVMBuildExtractElement(v->b, vector_of_value(v, cond),
                                             first_lane(v, v->b, v->mask[b]), "");
    LLVMBuildCondBr(v->b, c, v->vblock[s0], v->vblock[s1]);
    return;
  }
  if (!v->varying_branch[b]) {
    LLVMBuildCondBr(v->b, scalar_of(v, cond), v->vblock[s0], v->vblock[s1]);
    return;
  }
  LLVMValueRef c = vector_of_value(v, cond);
  LLVMValueRef mask = v->mask[b];
  int l = g->loop[b];
  if (l >= 0 && v->loop_divergent[l] && g->loops[l].latch == b) {
    /* The latch of a divergent loop: lanes that leave now keep their
     * values; the loop goes on while any lane stays. */
    struct divergent_loop *d = &v->dl[l];
    int exit_on_true = s0 == v->exit_block[l];
    LLVMValueRef not_c = LLVMBuildNot(v->b, c, "");
    LLVMValueRef leave = mask_and(v, v->b, mask, exit_on_true ? c : not_c);
    LLVMValueRef stay = mask_and(v, v->b, mask, exit_on_true ? not_c : c);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(v->b);
    for (unsigned k = 0; k < d->num_live_outs; k++) {
      LLVMValueRef now = d->live_elem[k] < 0
                             ? vector_of_value(v, d->live_out[k])
                             : packet_element(v, d->live_out[k], (unsigned)d->live_elem[k]);
      here = LLVMGetInsertBlock(v->b);
      d->acc_next[k] = LLVMBuildSelect(v->b, leave, now, d->acc_phi[k], "");
    }
    here = LLVMGetInsertBlock(v->b);
    for (unsigned k = 0; k < d->num_live_outs; k++)
      LLVMAddIncoming(d->acc_phi[k], &d->acc_next[k], &here, 1);
    LLVMAddIncoming(d->mask_phi, &stay, &here, 1);
    LLVMBuildCondBr(v->b, any_lane(v, v->b, stay), v->vblock[g->loops[l].header],
                    v->vblock[v->exit_block[l]]);
    return;
  }
  /* An if-then: the region runs, masked, when some lane enters it. */
  int join = g->ipdom[b];
  int entry = join == s0 ? s1 : s0;
  LLVMValueRef into = entry == s0 ? c : LLVMBuildNot(v->b, c, "");
  LLVMValueRef m = mask_and(v, v->b, mask, into);
  v->entry_mask[entry] = m;
  LLVMBuildCondBr(v->b, any_lane(v, v->b, m), v->vblock[entry], v->vblock[join]);
}

/* Incoming values of the phis, once every block is built. */
void fill_phis(struct vec *v) {
  struct cfg *g = &v->g;
  for (size_t k = 0; k < v->num_phis; k++) {
    LLVMValueRef orig = v->phi_orig[k], phi = v->phi_new[k];
    struct vinfo *info = ptr_map_get(&v->info, orig);
    /* A packet phi is one phi per element. */
    unsigned parts = phi ? 1 : info->num_elems;
    int b = block_of(v, orig);
    /* Whether the phi is built of vectors (varying), not whether its type
     * is one: a uniform phi of an OpenCL vector type stays scalar. */
    int vec = !phi || info->kind == K_VARYING;
    int d = v->join_of[b], entry = v->region_entry[b];
    LLVMValueRef from_d = NULL;
    unsigned count = LLVMCountIncoming(orig);
    if (d >= 0 && vec)
      for (unsigned j = 0; j < count; j++)
        if (cfg_number(g, LLVMGetIncomingBlock(orig, j)) == d)
          from_d = LLVMGetIncomingValue(orig, j);
    for (unsigned e = 0; e < parts; e++) {
      LLVMValueRef target = phi ? phi : info->elems[e];
      for (unsigned j = 0; j < count; j++) {
        int p = cfg_number(g, LLVMGetIncomingBlock(orig, j));
        if (p < 0 || g->rpo_number[p] < 0) continue;
        LLVMValueRef val = LLVMGetIncomingValue(orig, j);
        LLVMBasicBlockRef pred = v->vlast[p];
        LLVMValueRef x;
        LLVMPositionBuilderBefore(v->b, LLVMGetBasicBlockTerminator(pred));
        if (!vec) {
          x = scalar_of(v, val);
          if (info->kind == K_RUNS) {
            LLVMValueRef hi = hi_of(v, val);
            LLVMAddIncoming(info->scalar_hi, &hi, &pred, 1);
          }
        } else {
          x = phi ? vector_of_value(v, val) : packet_element(v, val, e);
          if (d >= 0 && entry >= 0 && p != d && from_d) {
            /* From the masked region: its lanes' values, the others' from before. */
            LLVMValueRef before = phi ? vector_of_value(v, from_d) : packet_element(v, from_d, e);
            x = LLVMBuildSelect(v->b, v->entry_mask[entry], x, before, "blend");
          }
        }
        LLVMAddIncoming(target, &x, &pred, 1);
      }
    }
  }
}
