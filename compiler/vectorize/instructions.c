/* Instructions: each instruction of the work-item function emitted in the
 * vectorized one by its shape: cloned when uniform, as lane 0's value
 * (and lane H's for two runs) when affine, as a vector when varying; GEPs
 * into lane-interleaved private arrays; phis recorded to be filled once
 * every block is built.
 *
 * Needs: shapes (shape.c), vector forms (build.c), loads and stores
 * (load_store.c, address.c), packets (packet.c), calls (calls.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

LLVMValueRef clone_uniform(struct vec *v, LLVMValueRef in) {
  LLVMValueRef c = LLVMInstructionClone(in);
  int n = LLVMGetNumOperands(in);
  int is_call = LLVMIsACallInst(in) != NULL;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    if (!o || LLVMIsABasicBlock(o) || (is_call && k == n - 1)) continue;
    LLVMValueRef s = scalar_of(v, o);
    if (s != o) LLVMSetOperand(c, (unsigned)k, s);
  }
  LLVMInsertIntoBuilder(v->b, c);
  size_t len;
  const char *name = LLVMGetValueName2(in, &len);
  if (len) LLVMSetValueName2(c, name, len);
  return c;
}

/* The byte offset a GEP adds to its pointer, scalar (every index uniform)
 * or as a vector. */
static LLVMValueRef gep_byte_offset(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec) {
  LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
  LLVMTypeRef it = vec ? vector_of(v, v->i64) : v->i64;
  LLVMValueRef off = LLVMConstNull(it);
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(in, i);
    if (i > 1) {
      if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        unsigned long long at = LLVMOffsetOfElement(v->td, t, field);
        off = LLVMBuildAdd(
            b, off, vec ? const_splat(v, LLVMConstInt(v->i64, at, 0)) : LLVMConstInt(v->i64, at, 0),
            "");
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      t = LLVMGetElementType(t);
    }
    LLVMValueRef x = vec ? vector_of_value(v, idx) : scalar_of(v, idx);
    x = LLVMBuildSExtOrBitCast(b, x, it, "");
    LLVMValueRef size = LLVMConstInt(v->i64, (unsigned long long)alloc_size(v, t), 0);
    off = LLVMBuildAdd(b, off, LLVMBuildMul(b, x, vec ? const_splat(v, size) : size, ""), "");
  }
  return off;
}

/* A GEP into a lane-interleaved private array: offsets grow W times. */
LLVMValueRef private_array_gep(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec) {
  /* The offset from the array's start, over the whole chain of GEPs, kept
   * inside the array: an index out of range (undefined in OpenCL, and
   * common enough: OpenCV's Canny overruns an 8-entry stack) then stays in
   * the work-item's own array instead of reaching the compute unit's
   * stack, return addresses included. */
  LLVMTypeRef it = vec ? vector_of(v, v->i64) : v->i64;
  LLVMValueRef total = LLVMConstNull(it), root = in;
  for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(root); depth++) {
    int varying = !is_uniform(v, root);
    LLVMValueRef off = gep_byte_offset(v, b, root, vec && varying);
    if (vec && !varying) off = splat(v, b, off);
    total = LLVMBuildAdd(b, total, off, "");
    root = LLVMGetOperand(root, 0);
  }
  int64_t size = alloc_size(v, LLVMGetAllocatedType(root));
  int64_t e = (intptr_t)ptr_map_get(&v->soa_size, root);
  LLVMValueRef last = LLVMConstInt(v->i64, (unsigned long long)(size - e), 0);
  LLVMValueRef w = LLVMConstInt(v->i64, v->W, 0);
  if (vec) {
    last = const_splat(v, last);
    w = const_splat(v, w);
  }
  total =
      LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULE, total, last, ""), total, last, "in.array");
  total = LLVMBuildMul(b, total, w, "");
  return LLVMBuildGEP2(b, v->i8, vec ? vector_of_value(v, root) : scalar_of(v, root), &total, 1,
                       "lane.elem");
}

/* Lane 0's value of an affine instruction, from its operands' lane-0
 * values, without flags that lanes other than 0 might violate. */
static LLVMValueRef affine_scalar(struct vec *v, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef r;
  switch (op) {
  case LLVMAlloca: {
    LLVMTypeRef t = LLVMGetAllocatedType(in);
    if (ptr_map_get(&v->soa_size, in)) {
      LLVMValueRef a = LLVMBuildAlloca(
          v->b, LLVMArrayType2(v->i8, (uint64_t)alloc_size(v, t) * v->W), "lanes.interleaved");
      unsigned align = LLVMGetAlignment(in);
      LLVMSetAlignment(a, align > 64 ? align : 64);
      return a;
    }
    LLVMValueRef a = LLVMBuildAlloca(
        v->b, LLVMArrayType2(v->i8, (uint64_t)lane_copy_size(v, in) * v->W), "lanes");
    unsigned align = LLVMGetAlignment(in);
    LLVMSetAlignment(a, align ? align : 16);
    return a;
  }
  case LLVMCall: /* __aquila_local_id(0) */
    return clone_uniform(v, in);
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    LLVMValueRef ops[16];
    if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) return private_array_gep(v, v->b, in, 0);
    if (n > 16) {
      fail(v, VECTORIZE_UNSUPPORTED, "a GEP with too many indices", in);
      return LLVMGetPoison(LLVMTypeOf(in));
    }
    for (unsigned k = 0; k < n; k++)
      ops[k] = scalar_of(v, LLVMGetOperand(in, k));
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(in), ops[0], ops + 1, n - 1, "");
  }
  case LLVMSelect:
    return LLVMBuildSelect(v->b, scalar_of(v, LLVMGetOperand(in, 0)),
                           scalar_of(v, LLVMGetOperand(in, 1)), scalar_of(v, LLVMGetOperand(in, 2)),
                           "");
  case LLVMFreeze:
    return LLVMBuildFreeze(v->b, scalar_of(v, LLVMGetOperand(in, 0)), "");
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    return LLVMBuildCast(v->b, op, scalar_of(v, LLVMGetOperand(in, 0)), LLVMTypeOf(in), "");
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr:
  case LLVMAnd:
  case LLVMURem: /* lanes within one block of the divisor: lane 0's remainder */
  case LLVMSRem:
    r = LLVMBuildBinOp(v->b, op, scalar_of(v, LLVMGetOperand(in, 0)),
                       scalar_of(v, LLVMGetOperand(in, 1)), "");
    return r;
  case LLVMAShr:
  case LLVMLShr: {
    /* The shift pair of an extension: lane 0's value from x's. */
    LLVMValueRef shl = LLVMGetOperand(in, 0);
    if (!LLVMIsAInstruction(shl) || LLVMGetInstructionOpcode(shl) != LLVMShl)
      return runs_start(v, in, 0);
    LLVMValueRef x =
        LLVMBuildShl(v->b, scalar_of(v, LLVMGetOperand(shl, 0)), LLVMGetOperand(shl, 1), "");
    return LLVMBuildBinOp(v->b, op, x, LLVMGetOperand(in, 1), "");
  }
  case LLVMXor:
  case LLVMUDiv:
  case LLVMSDiv:
    /* Of two runs that make one (their gap H strides): lane 0's value. */
    return runs_start(v, in, 0);
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "internal: an affine value of an unexpected kind", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
}

/* val's value in lane H, the first of the second run, in scalars. */
LLVMValueRef hi_of(struct vec *v, LLVMValueRef val) {
  struct shape s = shape_of_value(v, val);
  LLVMValueRef lo = scalar_of(v, val);
  if (s.kind == K_RUNS) {
    if (!LLVMIsAInstruction(val)) return lo; /* x: both rows start there */
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (!i || !i->scalar_hi) {
      fail(v, VECTORIZE_UNSUPPORTED, "internal: no second run for", val);
      return LLVMGetPoison(LLVMTypeOf(val));
    }
    return i->scalar_hi;
  }
  if (s.kind != K_AFFINE) return lo;
  int64_t step = (int64_t)v->H * s.stride;
  if (LLVMGetTypeKind(LLVMTypeOf(lo)) == LLVMPointerTypeKind) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)step, 1);
    return LLVMBuildGEP2(v->b, v->i8, lo, &off, 1, "");
  }
  return LLVMBuildAdd(v->b, lo, LLVMConstInt(LLVMTypeOf(lo), (unsigned long long)step, 1), "");
}

/* One run's start (lane 0's value, or with hi lane H's) of an instruction
 * of two runs: the operation on its operands' values in that lane, built
 * without flags that a lane that is off might violate. */
LLVMValueRef runs_start(struct vec *v, LLVMValueRef in, int hi) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef ops[16];
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  if (n > 16) {
    fail(v, VECTORIZE_UNSUPPORTED, "an instruction with too many operands", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
  LLVMValueRef shl = n == 2 ? LLVMGetOperand(in, 0) : NULL;
  if ((op == LLVMAShr || op == LLVMLShr) && LLVMIsAInstruction(shl) &&
      LLVMGetInstructionOpcode(shl) == LLVMShl && LLVMIsAConstantInt(LLVMGetOperand(shl, 1)) &&
      shape_of_value(v, shl).kind == K_VARYING) {
    /* The shift pair of an extension, whose shift left alone is varying:
     * from x's values (as affine_scalar). */
    LLVMValueRef x = LLVMGetOperand(shl, 0);
    x = LLVMBuildShl(v->b, hi ? hi_of(v, x) : scalar_of(v, x), LLVMGetOperand(shl, 1), "");
    return LLVMBuildBinOp(v->b, op, x, LLVMGetOperand(in, 1), "");
  }
  for (unsigned k = 0; k < n; k++)
    ops[k] = hi ? hi_of(v, LLVMGetOperand(in, k)) : scalar_of(v, LLVMGetOperand(in, k));
  switch (op) {
  case LLVMGetElementPtr:
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(in), ops[0], ops + 1, n - 1, "");
  case LLVMSelect:
    return LLVMBuildSelect(v->b, ops[0], ops[1], ops[2], "");
  case LLVMFreeze:
    return LLVMBuildFreeze(v->b, ops[0], "");
  case LLVMFNeg:
    return LLVMBuildFNeg(v->b, ops[0], "");
  case LLVMICmp:
    return LLVMBuildICmp(v->b, LLVMGetICmpPredicate(in), ops[0], ops[1], "");
  case LLVMFCmp:
    return LLVMBuildFCmp(v->b, LLVMGetFCmpPredicate(in), ops[0], ops[1], "");
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPTrunc:
  case LLVMFPExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    return LLVMBuildCast(v->b, op, ops[0], LLVMTypeOf(in), "");
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr:
  case LLVMAnd:
  case LLVMXor:
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMFAdd:
  case LLVMFSub:
  case LLVMFMul:
  case LLVMFDiv:
  case LLVMFRem:
    return LLVMBuildBinOp(v->b, op, ops[0], ops[1], "");
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "internal: runs of an unexpected kind", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
}

static void emit_runs(struct vec *v, LLVMValueRef in, struct vinfo *i) {
  if (LLVMIsACallInst(in)) {
    /* A local id with two rows a vector: x is the same in both rows, y one
     * more in the second. */
    i->scalar = clone_uniform(v, in);
    i->scalar_hi = i->stride == 0
                       ? LLVMBuildAdd(v->b, i->scalar, LLVMConstInt(LLVMTypeOf(in), 1, 0), "y.hi")
                       : i->scalar;
    return;
  }
  i->scalar = runs_start(v, in, 0);
  i->scalar_hi = runs_start(v, in, 1);
}

/* memcpy, memset and memmove with the same operands for every lane: doing
 * it once is doing it W times. */
static int is_idempotent_call(struct vec *v, LLVMValueRef in) {
  const char *name = callee_name(in);
  if (!name || (strncmp(name, "llvm.memcpy", 11) && strncmp(name, "llvm.memset", 11) &&
                strncmp(name, "llvm.memmove", 12)))
    return 0;
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
  for (unsigned k = 0; k < nargs; k++)
    if (!is_uniform(v, LLVMGetOperand(in, k))) return 0;
  return 1;
}

static void record_phi(struct vec *v, LLVMValueRef orig, LLVMValueRef phi) {
  if (v->num_phis == v->cap_phis) {
    v->cap_phis = v->cap_phis ? 2 * v->cap_phis : 64;
    v->phi_orig = realloc(v->phi_orig, v->cap_phis * sizeof *v->phi_orig);
    v->phi_new = realloc(v->phi_new, v->cap_phis * sizeof *v->phi_new);
    if (!v->phi_orig || !v->phi_new) abort();
  }
  v->phi_orig[v->num_phis] = orig;
  v->phi_new[v->num_phis++] = phi;
}

void emit_instruction(struct vec *v, int b, LLVMValueRef in) {
  struct vinfo *i = info_of(v, in);
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef mask = v->mask[b];
  if (i->drop) return;
  if (op == LLVMPHI) {
    /* Phis after a divergent loop take each lane's value at its exit. */
    int l = -1;
    unsigned count = LLVMCountIncoming(in);
    for (unsigned k = 0; k < count && l < 0; k++) {
      int p = cfg_number(&v->g, LLVMGetIncomingBlock(in, k));
      if (p >= 0) l = divergent_loop_left(v, p, b);
    }
    if (l >= 0) {
      struct divergent_loop *d = &v->dl[l];
      LLVMValueRef val = LLVMGetIncomingValue(in, 0);
      LLVMTypeRef t = LLVMTypeOf(in);
      if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        i->packet = 1;
        i->num_elems = LLVMGetVectorSize(t);
        i->elems = xcalloc(i->num_elems, sizeof *i->elems);
        for (unsigned k = 0; k < d->num_live_outs; k++)
          if (d->live_out[k] == val && d->live_elem[k] >= 0)
            i->elems[d->live_elem[k]] = d->acc_next[k];
        for (unsigned e = 0; e < i->num_elems; e++)
          if (!i->elems[e])
            fail(v, VECTORIZE_UNSUPPORTED, "internal: a live-out without accumulator", in);
        return;
      }
      for (unsigned k = 0; k < d->num_live_outs; k++)
        if (d->live_out[k] == val) i->vector = d->acc_next[k];
      if (!i->vector)
        fail(v, VECTORIZE_UNSUPPORTED, "internal: a live-out without accumulator", in);
      return;
    }
    LLVMTypeRef t = LLVMTypeOf(in);
    if (i->packet) {
      i->num_elems = LLVMGetVectorSize(t);
      i->elems = xcalloc(i->num_elems, sizeof *i->elems);
      for (unsigned e = 0; e < i->num_elems; e++)
        i->elems[e] = LLVMBuildPhi(v->b, vector_of(v, LLVMGetElementType(t)), "");
      record_phi(v, in, NULL);
      return;
    }
    if (i->kind == K_VARYING) {
      i->vector = LLVMBuildPhi(v->b, vector_of(v, t), "");
    } else {
      i->scalar = LLVMBuildPhi(v->b, t, "");
      size_t len;
      const char *name = LLVMGetValueName2(in, &len);
      if (len) LLVMSetValueName2(i->scalar, name, len);
      if (i->kind == K_RUNS) i->scalar_hi = LLVMBuildPhi(v->b, t, "hi");
    }
    record_phi(v, in, i->kind == K_VARYING ? i->vector : i->scalar);
    return;
  }
  if (i->packet && op == LLVMLoad) {
    struct access_group *g = emit_packet_load(v, in, mask);
    i->num_elems = LLVMGetVectorSize(LLVMTypeOf(in));
    i->elems = xcalloc(i->num_elems, sizeof *i->elems);
    for (unsigned k = 0; k < i->num_elems; k++)
      i->elems[k] = g->result[k];
    return;
  }
  if (i->packet && op != LLVMPHI && (op != LLVMCall || classify_call(in) == CALL_VECTOR)) {
    emit_packet(v, in, i);
    return;
  }
  if (op == LLVMExtractElement && i->kind != K_UNIFORM) {
    LLVMValueRef vec = LLVMGetOperand(in, 0), idx = LLVMGetOperand(in, 1);
    unsigned n = LLVMGetVectorSize(LLVMTypeOf(vec));
    if (LLVMIsAConstantInt(idx)) {
      uint64_t k = LLVMConstIntGetZExtValue(idx);
      i->vector =
          k < n ? packet_element(v, vec, (unsigned)k) : LLVMGetPoison(vector_of(v, LLVMTypeOf(in)));
      return;
    }
    /* An index known at run time only: a select per element. */
    LLVMValueRef at = is_uniform(v, idx) ? scalar_of(v, idx) : vector_of_value(v, idx);
    LLVMTypeRef it = LLVMTypeOf(at);
    LLVMValueRef r = packet_element(v, vec, 0);
    for (unsigned k = 1; k < n; k++) {
      LLVMValueRef kk = LLVMGetTypeKind(it) == LLVMVectorTypeKind
                            ? const_splat(v, LLVMConstInt(LLVMGetElementType(it), k, 0))
                            : LLVMConstInt(it, k, 0);
      r = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntEQ, at, kk, ""),
                          packet_element(v, vec, k), r, "");
    }
    i->vector = r;
    return;
  }
  if (op == LLVMStore && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind &&
      (!is_uniform(v, LLVMGetOperand(in, 0)) || !is_uniform(v, LLVMGetOperand(in, 1)))) {
    emit_packet_store(v, in, mask);
    return;
  }
  if (op == LLVMLoad) {
    if (i->kind == K_UNIFORM)
      i->scalar = clone_uniform(v, in);
    else
      i->vector = emit_load(v, in, mask);
    return;
  }
  if (op == LLVMStore) {
    if (LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic || LLVMGetVolatile(in)) {
      if (is_uniform(v, LLVMGetOperand(in, 1)) && is_uniform(v, LLVMGetOperand(in, 0)))
        clone_uniform(v, in);
      else
        emit_per_lane(v, in, mask, 0, NULL);
      return;
    }
    emit_store(v, in, mask);
    return;
  }
  if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
    if (op == LLVMAtomicRMW && (i->vector = emit_group_counter_update(v, in, mask))) return;
    i->vector = emit_per_lane(v, in, mask, 0, NULL);
    return;
  }
  if (op == LLVMCall) {
    enum call_class cc = classify_call(in);
    if (cc == CALL_LOCAL_ID && i->kind == K_VARYING) {
      /* A dimension only known at run time. */
      LLVMValueRef d = scalar_of(v, LLVMGetOperand(in, 0));
      LLVMValueRef id = clone_uniform(v, in);
      LLVMTypeRef it = LLVMTypeOf(id);
      LLVMValueRef lanes =
          LLVMBuildAdd(v->b, splat(v, v->b, id),
                       v->rows > 1 ? run_step_vector(v, it, 1) : step_vector(v, it, 1), "");
      LLVMValueRef is_x = LLVMBuildICmp(v->b, LLVMIntEQ, d, LLVMConstNull(LLVMTypeOf(d)), "");
      LLVMValueRef other = splat(v, v->b, id);
      if (v->rows > 1) {
        /* y: one more in the second row. */
        LLVMValueRef row[64];
        for (unsigned l = 0; l < v->W; l++)
          row[l] = LLVMConstInt(it, l / v->H, 0);
        LLVMValueRef is_y =
            LLVMBuildICmp(v->b, LLVMIntEQ, d, LLVMConstInt(LLVMTypeOf(d), 1, 0), "");
        other = LLVMBuildSelect(
            v->b, is_y, LLVMBuildAdd(v->b, other, LLVMConstVector(row, v->W), ""), other, "");
      }
      i->vector = LLVMBuildSelect(v->b, is_x, lanes, other, "");
      return;
    }
    if (cc == CALL_SUB_GROUP) {
      i->vector = emit_sub_group(v, in, mask);
      return;
    }
    if (i->kind == K_UNIFORM && cc != CALL_PER_LANE) {
      i->scalar = clone_uniform(v, in);
      return;
    }
    if (cc == CALL_PER_LANE && is_idempotent_call(v, in)) {
      clone_uniform(v, in);
      return;
    }
    if (i->kind == K_AFFINE) {
      i->scalar = affine_scalar(v, in);
      return;
    }
    if (i->kind == K_RUNS && cc == CALL_LOCAL_ID) {
      emit_runs(v, in, i);
      return;
    }
    switch (cc) {
    case CALL_VECTOR:
      i->vector = emit_vector_intrinsic_on(v, in, -1);
      return;
    case CALL_LIBM:
      i->vector = emit_libm(v, in);
      return;
    default: {
      LLVMTypeRef t = LLVMTypeOf(in);
      LLVMValueRef *elems = NULL;
      if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        i->packet = 1;
        i->num_elems = LLVMGetVectorSize(t);
        i->elems = elems = xcalloc(i->num_elems, sizeof *i->elems);
      }
      i->vector = cc == CALL_PURE ? emit_per_lane(v, in, NULL, 1, elems)
                                  : emit_per_lane(v, in, mask, 0, elems);
      return;
    }
    }
  }
  if (i->kind == K_UNIFORM) {
    i->scalar = clone_uniform(v, in);
    return;
  }
  if (i->kind == K_AFFINE) {
    i->scalar = affine_scalar(v, in);
    return;
  }
  if (i->kind == K_RUNS) {
    emit_runs(v, in, i);
    return;
  }
  i->vector = widen_pure(v, v->b, in);
}
