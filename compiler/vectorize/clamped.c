/* Clamped addresses. Image kernels clamp their neighbours' coordinates to
 * the edge (in[y * w + max(x - 1, 0)]): the index is varying only because
 * of the clamp, which holds in no lane but those of a vector at the
 * image's edge. Such an address is rebuilt in scalars, as lane 0's value
 * and a stride, together with the condition under which every lane's
 * address is exactly that: each clamp leaves all lanes alone, and no lane
 * wraps where a sign or zero extension or a signed or unsigned clamp would
 * see it. The condition takes a handful of scalar instructions, where
 * comparing the lanes' addresses takes the vector of them. Also the
 * control flow for a fast and a slow way that such a condition chooses.
 *
 * Needs: shapes (shape.c), scalar forms (build.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct clamped {
  LLVMValueRef lane0;
  int64_t stride;
};

static LLVMValueRef and_condition(struct vec *v, LLVMValueRef c, LLVMValueRef d) {
  return c ? LLVMBuildAnd(v->b, c, d, "") : d;
}

/* Whether the W lanes lane0 + l * stride of a narrower than 64-bit integer
 * stay within its signed (or unsigned) range, so that they increase (or
 * decrease) from lane to lane and extend exactly. */
static LLVMValueRef lanes_stay_in_range(struct vec *v, LLVMValueRef lane0, int64_t stride,
                                        int is_signed) {
  unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(lane0));
  LLVMValueRef wide =
      is_signed ? LLVMBuildSExt(v->b, lane0, v->i64, "") : LLVMBuildZExt(v->b, lane0, v->i64, "");
  LLVMValueRef last = LLVMBuildAdd(
      v->b, wide, LLVMConstInt(v->i64, (unsigned long long)((int64_t)(v->W - 1) * stride), 1), "");
  int64_t bound;
  if (stride > 0)
    bound = is_signed ? (int64_t)(((uint64_t)1 << (bits - 1)) - 1)
                      : (int64_t)(((uint64_t)1 << bits) - 1);
  else
    bound = is_signed ? -(int64_t)((uint64_t)1 << (bits - 1)) : 0;
  return LLVMBuildICmp(v->b, stride > 0 ? LLVMIntSLE : LLVMIntSGE, last,
                       LLVMConstInt(v->i64, (unsigned long long)bound, 1), "in.range");
}

static int clamped_lanes(struct vec *v, LLVMValueRef val, LLVMValueRef mask, struct clamped *out,
                         LLVMValueRef *cond, int depth) {
  struct shape s = shape_of_value(v, val);
  if (s.kind == K_UNIFORM || (s.kind == K_AFFINE && !s.assumed)) {
    out->lane0 = scalar_of(v, val);
    out->stride = s.kind == K_AFFINE ? s.stride : 0;
    return !v->status;
  }
  if (depth > 12 || !LLVMIsAInstruction(val) || s.kind == K_UNDEF) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  LLVMTypeRef t = LLVMTypeOf(val);
  int is_int = LLVMGetTypeKind(t) == LLVMIntegerTypeKind;
  struct clamped a, c;
  switch (op) {
  case LLVMAdd:
  case LLVMSub:
    if (!clamped_lanes(v, LLVMGetOperand(val, 0), mask, &a, cond, depth + 1) ||
        !clamped_lanes(v, LLVMGetOperand(val, 1), mask, &c, cond, depth + 1))
      break;
    out->lane0 = op == LLVMAdd ? LLVMBuildAdd(v->b, a.lane0, c.lane0, "")
                               : LLVMBuildSub(v->b, a.lane0, c.lane0, "");
    out->stride = op == LLVMAdd ? a.stride + c.stride : a.stride - c.stride;
    return 1;
  case LLVMMul:
  case LLVMShl: {
    LLVMValueRef k = LLVMGetOperand(val, 1), x = LLVMGetOperand(val, 0);
    if (op == LLVMMul && LLVMIsAConstantInt(x)) k = x, x = LLVMGetOperand(val, 1);
    if (!LLVMIsAConstantInt(k) || LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64) break;
    int64_t factor = LLVMConstIntGetSExtValue(k);
    if (op == LLVMShl) {
      if (factor < 0 || factor > 30) break;
      factor = (int64_t)1 << factor;
    }
    if (factor > ((int64_t)1 << 20) || factor < -((int64_t)1 << 20)) break;
    if (!clamped_lanes(v, x, mask, &a, cond, depth + 1)) break;
    out->lane0 = LLVMBuildMul(v->b, a.lane0, LLVMConstInt(t, (unsigned long long)factor, 1), "");
    out->stride = a.stride * factor;
    return 1;
  }
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc: {
    LLVMValueRef x = LLVMGetOperand(val, 0);
    if (!is_int || LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMIntegerTypeKind ||
        LLVMGetIntTypeWidth(LLVMTypeOf(x)) >= 64 || LLVMGetIntTypeWidth(t) > 64)
      break;
    if (!clamped_lanes(v, x, mask, &a, cond, depth + 1)) break;
    if (op != LLVMTrunc && a.stride)
      *cond = and_condition(v, *cond, lanes_stay_in_range(v, a.lane0, a.stride, op == LLVMSExt));
    out->lane0 = op == LLVMSExt   ? LLVMBuildSExt(v->b, a.lane0, t, "")
                 : op == LLVMZExt ? LLVMBuildZExt(v->b, a.lane0, t, "")
                                  : LLVMBuildTrunc(v->b, a.lane0, t, "");
    out->stride = a.stride;
    return 1;
  }
  case LLVMCall: {
    const char *name = callee_name(val);
    if (!name || !is_int || LLVMGetIntTypeWidth(t) >= 64 || LLVMGetNumArgOperands(val) != 2) break;
    int is_max = !strncmp(name, "llvm.smax.", 10) || !strncmp(name, "llvm.umax.", 10);
    int is_min = !strncmp(name, "llvm.smin.", 10) || !strncmp(name, "llvm.umin.", 10);
    if (!is_max && !is_min) break;
    int is_signed = name[5] == 's';
    LLVMValueRef x = LLVMGetOperand(val, 0), bound = LLVMGetOperand(val, 1);
    if (!is_uniform(v, bound)) x = bound, bound = LLVMGetOperand(val, 0);
    if (!is_uniform(v, bound) || !clamped_lanes(v, x, mask, &a, cond, depth + 1) || !a.stride)
      break;
    /* The lanes run from lane0 to last in order; the clamp leaves them all
     * alone when the one nearest the bound is on the right side of it. */
    LLVMValueRef last =
        LLVMBuildAdd(v->b, a.lane0,
                     LLVMConstInt(t, (unsigned long long)((int64_t)(v->W - 1) * a.stride), 1), "");
    LLVMValueRef nearest = (is_max == (a.stride > 0)) ? a.lane0 : last;
    LLVMIntPredicate p =
        is_max ? (is_signed ? LLVMIntSGE : LLVMIntUGE) : (is_signed ? LLVMIntSLE : LLVMIntULE);
    *cond = and_condition(v, *cond, lanes_stay_in_range(v, a.lane0, a.stride, is_signed));
    *cond =
        and_condition(v, *cond, LLVMBuildICmp(v->b, p, nearest, scalar_of(v, bound), "unclamped"));
    *out = a;
    return 1;
  }
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(val);
    if (n < 2) break;
    LLVMTypeRef st = LLVMGetGEPSourceElementType(val);
    LLVMValueRef idx[8];
    if (n - 1 > 8) break;
    for (unsigned k = 2; k < n; k++) {
      idx[k - 1] = LLVMGetOperand(val, k);
      if (!LLVMIsAConstantInt(idx[k - 1])) return 0;
    }
    if (!clamped_lanes(v, LLVMGetOperand(val, 0), mask, &a, cond, depth + 1) ||
        !clamped_lanes(v, LLVMGetOperand(val, 1), mask, &c, cond, depth + 1))
      break;
    /* A GEP sign-extends an index narrower than 64 bits: its lanes must
     * not wrap either. */
    if (c.stride && LLVMGetTypeKind(LLVMTypeOf(c.lane0)) == LLVMIntegerTypeKind &&
        LLVMGetIntTypeWidth(LLVMTypeOf(c.lane0)) < 64)
      *cond = and_condition(v, *cond, lanes_stay_in_range(v, c.lane0, c.stride, 1));
    idx[0] = c.lane0;
    out->lane0 = LLVMBuildGEP2(v->b, st, a.lane0, idx, n - 1, "");
    out->stride = a.stride + c.stride * alloc_size(v, st);
    return 1;
  }
  default:
    break;
  }
  /* An affine value that holds if no lane wraps, reached through an
   * operation not followed here: taken as the rest of the vectorizer takes
   * it where every lane is on (affine_base). */
  if (s.kind == K_AFFINE && !mask) {
    out->lane0 = scalar_of(v, val);
    out->stride = s.stride;
    return !v->status;
  }
  return 0;
}

/* Lane 0's address of ptrs, the varying address val, and the condition
 * under which the lanes' addresses step by stride bytes from it (NULL when
 * val is no clamped address). */
LLVMValueRef unclamped(struct vec *v, LLVMValueRef val, LLVMValueRef mask, int64_t stride,
                       LLVMValueRef *base) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  struct clamped a;
  LLVMValueRef cond = NULL;
  LLVMBasicBlockRef at = LLVMGetInsertBlock(v->b);
  LLVMValueRef last = LLVMGetLastInstruction(at);
  if (!clamped_lanes(v, val, mask, &a, &cond, 0) || a.stride != stride ||
      LLVMGetTypeKind(LLVMTypeOf(a.lane0)) != LLVMPointerTypeKind) {
    /* What was built for nothing goes (nothing else uses it yet). */
    LLVMValueRef in = LLVMGetLastInstruction(at);
    while (in && in != last) {
      LLVMValueRef prev = LLVMGetPreviousInstruction(in);
      LLVMInstructionEraseFromParent(in);
      in = prev;
    }
    return NULL;
  }
  *base = a.lane0;
  return cond ? cond : LLVMConstInt(v->i1, 1, 0);
}

void split_two_ways(struct vec *v, LLVMValueRef cond, struct two_ways *w) {
  w->fast = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "wide");
  w->slow = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "lanes");
  w->join = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "wide.join");
  LLVMBuildCondBr(v->b, cond, w->fast, w->slow);
  LLVMPositionBuilderAtEnd(v->b, w->fast);
}

LLVMValueRef join_value(struct vec *v, struct two_ways *w, LLVMValueRef fast,
                        LLVMValueRef slow) {
  LLVMValueRef phi = LLVMBuildPhi(v->b, LLVMTypeOf(fast), "");
  LLVMValueRef vals[2] = {fast, slow};
  LLVMBasicBlockRef from[2] = {w->fast_end, w->slow_end};
  LLVMAddIncoming(phi, vals, from, 2);
  return phi;
}
