/* Sub-group operations in a vectorized function: a sub-group is the
 * vector (compiler/workgroup/sub_groups.c), so each primitive of the
 * builtin library (compiler/builtins/subgroups.cl) is an operation across
 * the vector's lanes, over the lanes that are on: a reduction is LLVM's
 * vector reduction (floating-point ones in lane order, as a sequential
 * loop would add), a scan log2(W) shifted combinations (lane order for
 * floating point), a clustered reduction a butterfly of constant shuffles
 * within the clusters (lane order for floating point), a shuffle one
 * permutation (the x86 back end turns the extracts of varying lanes into
 * vpermd and its kin), a ballot the mask's bits. Lanes that are off
 * contribute the operation's identity.
 *
 * Needs: masks and splats (build.c), call_intrinsic (address.c). */
#include "vectorize/internal.h"

#include <string.h>

#include "builtins/sub_group_ops.h"

LLVMValueRef sub_group_identity(LLVMTypeRef ty, unsigned op); /* workgroup/sub_groups.c */

int is_sub_group_primitive(const char *name) {
  return !strncmp(name, "__aquila_sg_reduce_", 19) || !strncmp(name, "__aquila_sg_scan_", 17) ||
         !strncmp(name, "__aquila_sg_shuffle_", 20) || !strcmp(name, "__aquila_sg_ballot") ||
         !strncmp(name, "__aquila_sg_clustered_reduce_", 29);
}

static int is_fp(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind) k = LLVMGetTypeKind(LLVMGetElementType(t));
  return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind || k == LLVMHalfTypeKind;
}

/* a op b, on scalars or vectors alike. */
static LLVMValueRef combine(struct vec *v, unsigned op, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef bd = v->b;
  int fp = is_fp(LLVMTypeOf(a));
  switch (op) {
  case AQ_SG_ADD:
    return fp ? LLVMBuildFAdd(bd, a, b, "") : LLVMBuildAdd(bd, a, b, "");
  case AQ_SG_MUL:
    return fp ? LLVMBuildFMul(bd, a, b, "") : LLVMBuildMul(bd, a, b, "");
  case AQ_SG_SMIN:
    return LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntSLT, a, b, ""), a, b, "");
  case AQ_SG_UMIN:
    return LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntULT, a, b, ""), a, b, "");
  case AQ_SG_SMAX:
    return LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntSGT, a, b, ""), a, b, "");
  case AQ_SG_UMAX:
    return LLVMBuildSelect(bd, LLVMBuildICmp(bd, LLVMIntUGT, a, b, ""), a, b, "");
  case AQ_SG_FMIN:
  case AQ_SG_FMAX: {
    LLVMTypeRef t = LLVMTypeOf(a);
    LLVMValueRef args[2] = {a, b};
    return call_intrinsic(v, bd, op == AQ_SG_FMIN ? "llvm.minnum" : "llvm.maxnum", &t, 1, args, 2);
  }
  case AQ_SG_AND:
    return LLVMBuildAnd(bd, a, b, "");
  case AQ_SG_OR:
    return LLVMBuildOr(bd, a, b, "");
  default:
    return LLVMBuildXor(bd, a, b, "");
  }
}

/* The operand, lanes that are off holding the identity. */
static LLVMValueRef active_or_identity(struct vec *v, LLVMValueRef x, unsigned op,
                                       LLVMValueRef mask) {
  LLVMValueRef vx = vector_of_value(v, x);
  if (!mask) return vx;
  return LLVMBuildSelect(v->b, mask, vx, const_splat(v, sub_group_identity(LLVMTypeOf(x), op)), "");
}

static LLVMValueRef reduce(struct vec *v, unsigned op, LLVMValueRef vx) {
  LLVMTypeRef vt = LLVMTypeOf(vx), et = LLVMGetElementType(vt);
  static const char *const int_names[] = {
      [AQ_SG_ADD] = "llvm.vector.reduce.add",   [AQ_SG_MUL] = "llvm.vector.reduce.mul",
      [AQ_SG_SMIN] = "llvm.vector.reduce.smin", [AQ_SG_UMIN] = "llvm.vector.reduce.umin",
      [AQ_SG_SMAX] = "llvm.vector.reduce.smax", [AQ_SG_UMAX] = "llvm.vector.reduce.umax",
      [AQ_SG_AND] = "llvm.vector.reduce.and",   [AQ_SG_OR] = "llvm.vector.reduce.or",
      [AQ_SG_XOR] = "llvm.vector.reduce.xor"};
  if (!is_fp(vt)) return call_intrinsic(v, v->b, int_names[op], &vt, 1, &vx, 1);
  if (op == AQ_SG_FMIN || op == AQ_SG_FMAX)
    return call_intrinsic(v, v->b,
                          op == AQ_SG_FMIN ? "llvm.vector.reduce.fmin" : "llvm.vector.reduce.fmax",
                          &vt, 1, &vx, 1);
  /* Without the reassoc flag, in lane order from the start value: lane 0
   * combined with -0.0 (or 1.0) is lane 0 exactly. */
  LLVMValueRef args[2] = {op == AQ_SG_MUL ? LLVMConstReal(et, 1.0) : LLVMConstReal(et, -0.0), vx};
  return call_intrinsic(v, v->b,
                        op == AQ_SG_MUL ? "llvm.vector.reduce.fmul" : "llvm.vector.reduce.fadd",
                        &vt, 1, args, 2);
}

/* Lane l of the result: lane l - k of vx, the identity for l < k. */
static LLVMValueRef shift_up(struct vec *v, LLVMValueRef vx, unsigned k, LLVMValueRef id) {
  LLVMValueRef idx[64];
  for (unsigned l = 0; l < v->W; l++)
    idx[l] = LLVMConstInt(v->i32, l < k ? v->W + l : l - k, 0);
  return LLVMBuildShuffleVector(v->b, vx, id, LLVMConstVector(idx, v->W), "");
}

static LLVMValueRef scan_inclusive(struct vec *v, unsigned op, LLVMValueRef vx, LLVMValueRef id) {
  if (!is_fp(LLVMTypeOf(vx)) || op == AQ_SG_FMIN || op == AQ_SG_FMAX) {
    for (unsigned k = 1; k < v->W; k *= 2)
      vx = combine(v, op, vx, shift_up(v, vx, k, id));
    return vx;
  }
  /* Sums and products in lane order. */
  LLVMValueRef acc = LLVMBuildExtractElement(v->b, vx, LLVMConstInt(v->i32, 0, 0), "");
  LLVMValueRef r = vx;
  for (unsigned l = 1; l < v->W; l++) {
    LLVMValueRef at = LLVMConstInt(v->i32, l, 0);
    acc = combine(v, op, acc, LLVMBuildExtractElement(v->b, vx, at, ""));
    r = LLVMBuildInsertElement(v->b, r, acc, at, "");
  }
  return r;
}

/* Lane l of the result: lane idx[l] of vx (idx in range). */
static LLVMValueRef permute(struct vec *v, LLVMValueRef vx, LLVMValueRef idx) {
  LLVMValueRef r = LLVMGetPoison(LLVMTypeOf(vx));
  for (unsigned l = 0; l < v->W; l++) {
    LLVMValueRef at = LLVMConstInt(v->i32, l, 0);
    LLVMValueRef from = LLVMBuildExtractElement(v->b, idx, at, "");
    r = LLVMBuildInsertElement(v->b, r, LLVMBuildExtractElement(v->b, vx, from, ""), at, "");
  }
  return r;
}

/* Each lane: op over the lanes of its aligned cluster of c (a power of
 * two; c >= W is the whole vector). Integers by a butterfly (lane l with
 * l ^ k, k = 1, 2, 4, ... below c); floating point in lane order: a scan
 * that starts again at each cluster, whose last lane each lane takes. */
static LLVMValueRef clustered(struct vec *v, unsigned op, LLVMValueRef vx, LLVMValueRef c) {
  LLVMValueRef cs = scalar_of(v, c);
  LLVMTypeRef ct = LLVMTypeOf(cs);
  if (!is_fp(LLVMTypeOf(vx)) || op == AQ_SG_FMIN || op == AQ_SG_FMAX) {
    for (unsigned k = 1; k < v->W; k *= 2) {
      LLVMValueRef idx[64];
      for (unsigned l = 0; l < v->W; l++)
        idx[l] = LLVMConstInt(v->i32, l ^ k, 0);
      LLVMValueRef other = LLVMBuildShuffleVector(v->b, vx, LLVMGetPoison(LLVMTypeOf(vx)),
                                                  LLVMConstVector(idx, v->W), "");
      LLVMValueRef within = LLVMBuildICmp(v->b, LLVMIntULT, LLVMConstInt(ct, k, 0), cs, "");
      vx = LLVMBuildSelect(v->b, within, combine(v, op, vx, other), vx, "");
    }
    return vx;
  }
  LLVMValueRef last = LLVMBuildSub(v->b, cs, LLVMConstInt(ct, 1, 0), "");
  LLVMValueRef acc = NULL, r = vx;
  for (unsigned l = 0; l < v->W; l++) {
    LLVMValueRef at = LLVMConstInt(v->i32, l, 0);
    LLVMValueRef x = LLVMBuildExtractElement(v->b, vx, at, "");
    if (acc) {
      LLVMValueRef starts =
          LLVMBuildICmp(v->b, LLVMIntEQ, LLVMBuildAnd(v->b, LLVMConstInt(ct, l, 0), last, ""),
                        LLVMConstInt(ct, 0, 0), "");
      acc = LLVMBuildSelect(v->b, starts, x, combine(v, op, acc, x), "");
    } else {
      acc = x;
    }
    r = LLVMBuildInsertElement(v->b, r, acc, at, "");
  }
  /* Lane l takes its cluster's last lane, l | (c - 1), within the vector. */
  LLVMValueRef lanes = LLVMBuildOr(v->b, step_vector(v, ct, 1), splat(v, v->b, last), "");
  lanes = LLVMBuildAnd(v->b, lanes, const_splat(v, LLVMConstInt(ct, v->W - 1, 0)), "");
  return permute(v, r, lanes);
}

LLVMValueRef emit_sub_group(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  const char *name = callee_name(in) + 12;
  if (!strcmp(name, "ballot")) {
    LLVMValueRef p = vector_of_value(v, LLVMGetOperand(in, 0));
    LLVMValueRef on = LLVMBuildICmp(v->b, LLVMIntNE, p, LLVMConstNull(LLVMTypeOf(p)), "");
    if (mask) on = LLVMBuildAnd(v->b, on, mask, "");
    LLVMValueRef bits = LLVMBuildBitCast(v->b, on, LLVMIntTypeInContext(v->ctx, v->W), "");
    return splat(v, v->b, LLVMBuildZExt(v->b, bits, v->i32, "ballot"));
  }
  if (!strncmp(name, "shuffle_", 8)) {
    LLVMValueRef x = LLVMGetOperand(in, 0), lane = LLVMGetOperand(in, 1);
    LLVMValueRef vx = vector_of_value(v, x);
    LLVMValueRef last = LLVMConstInt(LLVMTypeOf(lane), v->W - 1, 0);
    if (is_uniform(v, lane)) {
      LLVMValueRef at = LLVMBuildAnd(v->b, scalar_of(v, lane), last, "");
      return splat(v, v->b, LLVMBuildExtractElement(v->b, vx, at, ""));
    }
    LLVMValueRef idx = LLVMBuildAnd(v->b, vector_of_value(v, lane), const_splat(v, last), "");
    return permute(v, vx, idx);
  }
  LLVMValueRef opv = LLVMGetOperand(in, 0);
  if (!LLVMIsAConstantInt(opv) || LLVMConstIntGetZExtValue(opv) >= AQ_SG_OPS) {
    fail(v, VECTORIZE_UNSUPPORTED, "a sub-group operation that is not a constant", in);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(in)));
  }
  unsigned op = (unsigned)LLVMConstIntGetZExtValue(opv);
  LLVMValueRef x = LLVMGetOperand(in, 1);
  LLVMValueRef vx = active_or_identity(v, x, op, mask);
  LLVMValueRef id = const_splat(v, sub_group_identity(LLVMTypeOf(x), op));
  if (!strncmp(name, "reduce_", 7)) return splat(v, v->b, reduce(v, op, vx));
  if (!strncmp(name, "clustered_reduce_", 17)) return clustered(v, op, vx, LLVMGetOperand(in, 2));
  LLVMValueRef incl = scan_inclusive(v, op, vx, id);
  if (!strncmp(name, "scan_inclusive_", 15)) return incl;
  return shift_up(v, incl, 1, id);
}
