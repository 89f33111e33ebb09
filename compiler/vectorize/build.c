/* Building vectors: splats, step vectors, the <W x T> form of any value
 * (built once, where its scalar is defined), the vector form of a pure
 * instruction from its operands', and lane masks (and, any lane, first and
 * last lane).
 *
 * Needs: shapes and private arrays (shape.c), the scalar forms and
 * private-array GEPs that instructions.c builds, packets (packet.c). */
#include "vectorize/internal.h"

#include <stdint.h>

LLVMValueRef const_splat(struct vec *v, LLVMValueRef c) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = c;
  return LLVMConstVector(elems, v->W);
}

LLVMValueRef splat(struct vec *v, LLVMBuilderRef b, LLVMValueRef s) {
  if (LLVMIsAConstant(s) && !LLVMIsAGlobalValue(s)) {
    if (LLVMIsPoison(s) || LLVMIsUndef(s)) return LLVMGetPoison(vector_of(v, LLVMTypeOf(s)));
    return const_splat(v, s);
  }
  LLVMTypeRef vt = vector_of(v, LLVMTypeOf(s));
  LLVMValueRef one =
      LLVMBuildInsertElement(b, LLVMGetPoison(vt), s, LLVMConstInt(v->i32, 0, 0), "");
  return LLVMBuildShuffleVector(b, one, LLVMGetPoison(vt), LLVMConstNull(vector_of(v, v->i32)),
                                "splat");
}

/* <0, s, 2s, ...> of integer type t. */
LLVMValueRef step_vector(struct vec *v, LLVMTypeRef t, int64_t stride) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = LLVMConstInt(t, (unsigned long long)(stride * (int64_t)i), 1);
  return LLVMConstVector(elems, v->W);
}

/* Lane l's step within its run: (l % H) * stride. */
LLVMValueRef run_step_vector(struct vec *v, LLVMTypeRef t, int64_t stride) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = LLVMConstInt(t, (unsigned long long)(stride * (int64_t)(i % v->H)), 1);
  return LLVMConstVector(elems, v->W);
}

/* The vector whose first H lanes are lo's and the others hi's (both
 * <W x T>). */
LLVMValueRef join_halves(struct vec *v, LLVMBuilderRef b, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, i < v->H ? i : v->W + i, 0);
  return LLVMBuildShuffleVector(b, lo, hi, LLVMConstVector(idx, v->W), "halves");
}

LLVMValueRef all_ones_mask(struct vec *v) {
  return const_splat(v, LLVMConstInt(v->i1, 1, 0));
}

/* Positions mb right after the definition of s (after the phis when s is a
 * phi, at the start of the entry block when s is no instruction). */
static void position_after(struct vec *v, LLVMValueRef s) {
  LLVMValueRef next;
  LLVMBasicBlockRef bb;
  if (LLVMIsAInstruction(s)) {
    bb = LLVMGetInstructionParent(s);
    next = LLVMGetNextInstruction(s);
  } else {
    bb = LLVMGetEntryBasicBlock(v->vfn);
    next = LLVMGetFirstInstruction(bb);
  }
  while (next && LLVMIsAPHINode(next))
    next = LLVMGetNextInstruction(next);
  if (next)
    LLVMPositionBuilderBefore(v->mb, next);
  else
    LLVMPositionBuilderAtEnd(v->mb, bb);
}

/* The value as the vectorized function sees it when it is the same for
 * every lane (uniform), or lane 0's value (affine). */
LLVMValueRef scalar_of(struct vec *v, LLVMValueRef val) {
  if (LLVMIsAArgument(val)) {
    for (unsigned i = 0; i < LLVMCountParams(v->fn); i++)
      if (LLVMGetParam(v->fn, i) == val) return LLVMGetParam(v->vfn, i);
    return val;
  }
  if (!LLVMIsAInstruction(val)) return val;
  struct vinfo *i = ptr_map_get(&v->info, val);
  if (!i || !i->scalar) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no scalar for", val);
    return LLVMGetPoison(LLVMTypeOf(val));
  }
  return i->scalar;
}

/* The <W x T> form of any value, built once, where its scalar is defined. */
LLVMValueRef vector_of_value(struct vec *v, LLVMValueRef val) {
  if (!LLVMIsAInstruction(val) && !LLVMIsAArgument(val)) {
    if (LLVMIsPoison(val) || LLVMIsUndef(val)) return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
    if (LLVMIsAConstant(val) && !LLVMIsAGlobalValue(val)) return const_splat(v, val);
  }
  struct vinfo *i = NULL;
  if (LLVMIsAInstruction(val)) {
    i = ptr_map_get(&v->info, val);
    if (!i) {
      fail(v, VECTORIZE_UNSUPPORTED, "internal: no shape for", val);
      return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
    }
    if (i->vector) return i->vector;
  } else {
    i = info_of(v, val); /* arguments and globals: cache their splats too */
    if (i->vector) return i->vector;
    i->scalar = scalar_of(v, val);
    if (shape_of_value(v, val).kind == K_RUNS) i->scalar_hi = i->scalar;
  }
  /* The analysis's shape, for arguments (local id x) and globals too. */
  struct shape sh = shape_of_value(v, val);
  LLVMValueRef s = i->scalar;
  if (!s) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no vector for", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  if ((sh.kind == K_AFFINE || sh.kind == K_RUNS) && sh.assumed) {
    /* The operands' vectors first: building them moves mb. */
    int n = LLVMGetNumOperands(val);
    for (int k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(val, (unsigned)k);
      if (o && !LLVMIsABasicBlock(o) && (LLVMIsAInstruction(o) || LLVMIsAArgument(o)))
        vector_of_value(v, o);
    }
  }
  if (sh.kind == K_RUNS && !i->scalar_hi) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no second run for", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  /* Lane H's value is built after lane 0's. */
  position_after(v, sh.kind == K_RUNS ? i->scalar_hi : s);
  if (sh.kind == K_UNIFORM) {
    i->vector = splat(v, v->mb, s);
  } else if (sh.kind == K_RUNS && !sh.assumed) {
    LLVMTypeRef t = LLVMTypeOf(s);
    LLVMValueRef base = join_halves(v, v->mb, splat(v, v->mb, s), splat(v, v->mb, i->scalar_hi));
    if (sh.stride == 0)
      i->vector = base;
    else if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
      i->vector = LLVMBuildGEP2(
          v->mb, v->i8, base, (LLVMValueRef[]){run_step_vector(v, v->i64, sh.stride)}, 1, "lanes");
    else
      i->vector = LLVMBuildAdd(v->mb, base, run_step_vector(v, t, sh.stride), "lanes");
  } else if (sh.kind == K_RUNS) {
    i->vector = widen_pure(v, v->mb, val);
  } else if (sh.kind == K_AFFINE && !sh.assumed) {
    LLVMTypeRef t = LLVMTypeOf(s);
    LLVMValueRef base = splat(v, v->mb, s);
    if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
      i->vector = LLVMBuildGEP2(v->mb, v->i8, base,
                                (LLVMValueRef[]){step_vector(v, v->i64, sh.stride)}, 1, "lanes");
    else
      i->vector = LLVMBuildAdd(v->mb, base, step_vector(v, t, sh.stride), "lanes");
  } else if (sh.kind == K_AFFINE) {
    /* Exactly, lane by lane: the operation on its operands' vectors. */
    i->vector = widen_pure(v, v->mb, val);
  } else {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: a varying value used before it was built", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  return i->vector;
}

int is_uniform(struct vec *v, LLVMValueRef val) {
  return shape_of_value(v, val).kind == K_UNIFORM;
}

/* Fast-math flags that never make a value poison, and the precision an
 * operation may have (!fpmath: OpenCL's ulp limits for division and sqrt,
 * absent under -cl-fp32-correctly-rounded-divide-sqrt). */
void copy_safe_fmf(LLVMValueRef from, LLVMValueRef to) {
  if (!LLVMIsAInstruction(to) || !LLVMCanValueUseFastMathFlags(from) ||
      !LLVMCanValueUseFastMathFlags(to))
    return;
  unsigned fpmath = LLVMGetMDKindIDInContext(LLVMGetTypeContext(LLVMTypeOf(to)), "fpmath", 6);
  LLVMValueRef precision = LLVMGetMetadata(from, fpmath);
  if (precision) LLVMSetMetadata(to, fpmath, precision);
  LLVMFastMathFlags f = LLVMGetFastMathFlags(from);
  f &= LLVMFastMathAllowReassoc | LLVMFastMathNoSignedZeros | LLVMFastMathAllowReciprocal |
       LLVMFastMathAllowContract | LLVMFastMathApproxFunc;
  LLVMSetFastMathFlags(to, f);
}

/* Integer division of vectors a / d (elements of type t). Lanes that are
 * off may hold anything: a zero divisor, or INT_MIN / -1, would trap, so
 * those divisors become 1. */
LLVMValueRef safe_division(struct vec *v, LLVMBuilderRef b, LLVMOpcode op, LLVMValueRef a,
                           LLVMValueRef d, LLVMTypeRef t) {
  d = LLVMBuildFreeze(b, d, "");
  LLVMTypeRef vt = LLVMTypeOf(d);
  LLVMValueRef bad = LLVMBuildICmp(b, LLVMIntEQ, d, LLVMConstNull(vt), "");
  if (op == LLVMSDiv || op == LLVMSRem) {
    unsigned width = LLVMGetIntTypeWidth(t);
    LLVMValueRef min = const_splat(v, LLVMConstInt(t, 1ull << (width - 1), 0));
    a = LLVMBuildFreeze(b, a, "");
    LLVMValueRef ov = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, d, LLVMConstAllOnes(vt), ""),
                                   LLVMBuildICmp(b, LLVMIntEQ, a, min, ""), "");
    bad = LLVMBuildOr(b, bad, ov, "");
  }
  d = LLVMBuildSelect(b, bad, const_splat(v, LLVMConstInt(t, 1, 0)), d, "");
  return LLVMBuildBinOp(b, op, a, d, "");
}

/* The vector form of a pure instruction, from its operands' vectors. */
LLVMValueRef widen_pure(struct vec *v, LLVMBuilderRef b, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMTypeRef t = LLVMTypeOf(in);
  LLVMValueRef r = NULL;
  switch (op) {
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
  case LLVMFAdd:
  case LLVMFSub:
  case LLVMFMul:
  case LLVMFDiv:
  case LLVMFRem: {
    LLVMValueRef a = vector_of_value(v, LLVMGetOperand(in, 0));
    LLVMValueRef c = vector_of_value(v, LLVMGetOperand(in, 1));
    r = LLVMBuildBinOp(b, op, a, c, "");
    copy_safe_fmf(in, r);
    break;
  }
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
    r = safe_division(v, b, op, vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), t);
    break;
  case LLVMFNeg:
    r = LLVMBuildFNeg(b, vector_of_value(v, LLVMGetOperand(in, 0)), "");
    copy_safe_fmf(in, r);
    break;
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMFPTrunc:
  case LLVMFPExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    if (op == LLVMBitCast &&
        LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind) {
      /* An OpenCL vector's elements joined into one scalar (<2 x float>
       * passed as a double). */
      if (b != v->b) {
        fail(v, VECTORIZE_UNSUPPORTED, "internal: a joined vector outside emission", in);
        return LLVMGetPoison(vector_of(v, t));
      }
      r = packet_bitcast(v, LLVMGetOperand(in, 0), t, 1, 0);
      break;
    }
    r = LLVMBuildCast(b, op, vector_of_value(v, LLVMGetOperand(in, 0)), vector_of(v, t), "");
    break;
  case LLVMICmp:
    r = LLVMBuildICmp(b, LLVMGetICmpPredicate(in), vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), "");
    break;
  case LLVMFCmp:
    r = LLVMBuildFCmp(b, LLVMGetFCmpPredicate(in), vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), "");
    break;
  case LLVMSelect: {
    LLVMValueRef c = LLVMGetOperand(in, 0);
    LLVMValueRef cv = is_uniform(v, c) ? scalar_of(v, c) : vector_of_value(v, c);
    r = LLVMBuildSelect(b, cv, vector_of_value(v, LLVMGetOperand(in, 1)),
                        vector_of_value(v, LLVMGetOperand(in, 2)), "");
    break;
  }
  case LLVMFreeze:
    r = LLVMBuildFreeze(b, vector_of_value(v, LLVMGetOperand(in, 0)), "");
    break;
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    LLVMValueRef ops[16];
    if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) {
      r = private_array_gep(v, b, in, 1);
      break;
    }
    if (n > 16) {
      fail(v, VECTORIZE_UNSUPPORTED, "a GEP with too many indices", in);
      return LLVMGetPoison(vector_of(v, t));
    }
    LLVMTypeRef st = LLVMGetGEPSourceElementType(in);
    for (unsigned k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(in, k);
      /* A uniform base stays scalar; struct field numbers stay constants. */
      if (k == 0 ? is_uniform(v, o) : is_uniform(v, o) && LLVMIsAConstant(o))
        ops[k] = scalar_of(v, o);
      else
        ops[k] = vector_of_value(v, o);
    }
    r = LLVMBuildGEP2(b, st, ops[0], ops + 1, n - 1, "");
    break;
  }
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "an instruction the vectorizer cannot widen", in);
    return LLVMGetPoison(vector_of(v, t));
  }
  return r;
}

/* ---- masks ----------------------------------------------------------------------------- */

LLVMValueRef mask_value(struct vec *v, LLVMValueRef m) {
  return m ? m : all_ones_mask(v);
}

/* m && c, lane-wise, without letting c's inactive lanes (maybe poison) through. */
LLVMValueRef mask_and(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, LLVMValueRef c) {
  if (!m) return LLVMBuildFreeze(b, c, "");
  return LLVMBuildSelect(b, m, c, LLVMConstNull(v->mask_type), "mask");
}

LLVMValueRef any_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i1, 1, 0);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, LLVMIntTypeInContext(v->ctx, v->W), "");
  return LLVMBuildICmp(b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), "any");
}

/* Index of the last lane on in m (all on: W - 1). */
LLVMValueRef last_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i32, v->W - 1, 0);
  LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, it, "");
  LLVMValueRef ctlz =
      LLVMGetIntrinsicDeclaration(v->m, LLVMLookupIntrinsicID("llvm.ctlz", 9), &it, 1);
  LLVMValueRef args[2] = {bits, LLVMConstInt(v->i1, 1, 0)};
  LLVMValueRef lz = LLVMBuildCall2(b, LLVMGlobalGetValueType(ctlz), ctlz, args, 2, "");
  lz = LLVMBuildZExtOrBitCast(b, lz, v->i32, "");
  return LLVMBuildSub(b, LLVMConstInt(v->i32, v->W - 1, 0), lz, "last");
}

LLVMValueRef first_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i32, 0, 0);
  LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, it, "");
  LLVMValueRef cttz =
      LLVMGetIntrinsicDeclaration(v->m, LLVMLookupIntrinsicID("llvm.cttz", 9), &it, 1);
  LLVMValueRef args[2] = {bits, LLVMConstInt(v->i1, 1, 0)};
  LLVMValueRef tz = LLVMBuildCall2(b, LLVMGlobalGetValueType(cttz), cttz, args, 2, "");
  return LLVMBuildZExtOrBitCast(b, tz, v->i32, "first");
}
