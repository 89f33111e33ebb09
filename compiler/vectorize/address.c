/* Addresses of vector memory accesses: lane 0's address of an affine
 * access, a lane's value of any address, whether the active lanes' addresses
 * are consecutive (checked at run time where the shape cannot tell), index
 * ranges that stay in bounds, and the interleaving and de-interleaving of
 * members of one element.
 *
 * Needs: vector forms and masks (build.c), shapes (shape.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

LLVMValueRef call_intrinsic(struct vec *v, LLVMBuilderRef b, const char *name,
                            LLVMTypeRef *types, unsigned num_types, LLVMValueRef *args,
                            unsigned num_args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(v->m, id, types, num_types);
  return LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, args, num_args, "");
}

/* An atomic add or sub of a uniform integer whose old value nobody uses
 * (atomic_inc on a histogram's bin, a counter): one update per distinct
 * address instead of one locked instruction per lane. At a uniform
 * address, the lanes' sum goes in one atomic (one load and store for
 * __local memory). At varying __local addresses (AVX-512, i32): a
 * work-group runs on one thread and nothing else reaches its group segment,
 * so the update need not be atomic; lanes with equal addresses are merged
 * (AVX-512's conflict detection on the addresses' offsets in the segment),
 * the last lane of each address adds their count, and a masked gather and
 * scatter do the rest, as the lanes in order would have. NULL where this
 * does not apply. */
LLVMValueRef emit_group_counter_update(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  if (LLVMGetFirstUse(in)) return NULL;
  LLVMAtomicRMWBinOp bop = LLVMGetAtomicRMWBinOp(in);
  if (bop != LLVMAtomicRMWBinOpAdd && bop != LLVMAtomicRMWBinOpSub) return NULL;
  LLVMValueRef ptr = LLVMGetOperand(in, 0), val = LLVMGetOperand(in, 1);
  LLVMTypeRef type = LLVMTypeOf(val);
  if (LLVMGetTypeKind(type) != LLVMIntegerTypeKind || !is_uniform(v, val)) return NULL;
  int local = LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)) == 3;
  int uniform_address = is_uniform(v, ptr);
  if (!uniform_address && (!local || v->W != 16 || v->isa != 'e' || type != v->i32)) return NULL;
  LLVMBuilderRef b = v->b;
  LLVMTypeRef vtype = LLVMVectorType(type, v->W), bits = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef step = scalar_of(v, val);
  if (bop == LLVMAtomicRMWBinOpSub) step = LLVMBuildNeg(b, step, "");
  unsigned align = LLVMGetAlignment(in);
  LLVMValueRef active = mask ? LLVMBuildZExt(b, LLVMBuildBitCast(b, mask, bits, ""), v->i32, "")
                             : LLVMConstInt(v->i32, (1u << v->W) - 1, 0); /* W is 4, 8 or 16 */
  if (uniform_address) {
    LLVMValueRef p = scalar_of(v, ptr);
    LLVMTypeRef one_i32[] = {v->i32};
    LLVMValueRef n = call_intrinsic(v, b, "llvm.ctpop", one_i32, 1, &active, 1);
    LLVMValueRef delta = LLVMBuildMul(b, LLVMBuildZExtOrBitCast(b, n, type, ""), step, "");
    if (local) {
      LLVMValueRef old = LLVMBuildLoad2(b, type, p, "");
      LLVMSetAlignment(old, align);
      LLVMValueRef store = LLVMBuildStore(b, LLVMBuildAdd(b, old, delta, ""), p);
      LLVMSetAlignment(store, align);
    } else {
      LLVMValueRef rmw = LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpAdd, p, delta, LLVMGetOrdering(in),
                                            LLVMIsAtomicSingleThread(in));
      LLVMSetAlignment(rmw, align);
      LLVMSetVolatile(rmw, LLVMGetVolatile(in));
    }
    return LLVMGetPoison(vtype);
  }
  LLVMTypeRef vi32 = vtype, i16 = bits;
  LLVMValueRef ptrs = vector_of_value(v, ptr);
  LLVMValueRef addr = LLVMBuildPtrToInt(b, ptrs, LLVMVectorType(v->i64, v->W), "");
  LLVMValueRef base = LLVMBuildExtractElement(b, addr, first_lane(v, b, mask), "");
  /* Offsets from one active lane's address: distinct addresses of one
   * group segment stay distinct in 32 bits; lanes that are off get keys
   * no offset within the segment can have. */
  LLVMValueRef key = LLVMBuildTrunc(b, LLVMBuildSub(b, addr, splat(v, b, base), ""), vi32, "");
  if (mask) {
    LLVMValueRef off_keys[16];
    for (unsigned l = 0; l < 16; l++)
      off_keys[l] = LLVMConstInt(v->i32, 0x80000000u + l, 0);
    key = LLVMBuildSelect(b, mask, key, LLVMConstVector(off_keys, 16), "");
  }
  LLVMTypeRef conflict_params[] = {vi32};
  LLVMTypeRef conflict_type = LLVMFunctionType(vi32, conflict_params, 1, 0);
  LLVMValueRef conflict_fn = LLVMGetNamedFunction(v->m, "llvm.x86.avx512.conflict.d.512");
  if (!conflict_fn)
    conflict_fn = LLVMAddFunction(v->m, "llvm.x86.avx512.conflict.d.512", conflict_type);
  /* conflicts[l]: the earlier lanes with lane l's address. */
  LLVMValueRef conflicts = LLVMBuildCall2(b, conflict_type, conflict_fn, &key, 1, "");
  LLVMTypeRef one_vi32[] = {vi32};
  LLVMValueRef earlier = call_intrinsic(v, b, "llvm.ctpop", one_vi32, 1, &conflicts, 1);
  LLVMValueRef count = LLVMBuildAdd(b, earlier, const_splat(v, LLVMConstInt(v->i32, 1, 0)), "");
  /* A lane that some later lane names is not its address's last. */
  LLVMValueRef named = call_intrinsic(v, b, "llvm.vector.reduce.or", one_vi32, 1, &conflicts, 1);
  LLVMValueRef last = LLVMBuildAnd(b, active, LLVMBuildNot(b, named, ""), "");
  LLVMValueRef last_mask =
      LLVMBuildBitCast(b, LLVMBuildTrunc(b, last, i16, ""), LLVMVectorType(v->i1, v->W), "");
  LLVMTypeRef gather_types[] = {vi32, LLVMTypeOf(ptrs)};
  LLVMValueRef gather_args[] = {ptrs, LLVMConstInt(v->i32, align, 0), last_mask,
                                LLVMGetPoison(vi32)};
  LLVMValueRef old = call_intrinsic(v, b, "llvm.masked.gather", gather_types, 2, gather_args, 4);
  LLVMValueRef updated = LLVMBuildAdd(b, old, LLVMBuildMul(b, count, splat(v, b, step), ""), "");
  LLVMValueRef scatter_args[] = {updated, ptrs, LLVMConstInt(v->i32, align, 0), last_mask};
  call_intrinsic(v, b, "llvm.masked.scatter", gather_types, 2, scatter_args, 4);
  return LLVMGetPoison(vi32);
}

LLVMValueRef reverse(struct vec *v, LLVMBuilderRef b, LLVMValueRef x) {
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, v->W - 1 - i, 0);
  return LLVMBuildShuffleVector(b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(idx, v->W), "");
}

/* The address of lane 0 of an affine access. When the chain behind it
 * holds only where no lane wraps and some lanes are off (whose indices may
 * well wrap: "if (i < n)" with i = gid - k), it is found from the first
 * active lane's exact address instead. */
/* val's value in one lane (an i32 index), built in scalars: what taking
 * that lane of val's vector gives, without building the vector. NULL when
 * val is made of something not followed here. */
LLVMValueRef lane_value(struct vec *v, LLVMValueRef val, LLVMValueRef lane, int depth) {
  LLVMTypeRef t = LLVMTypeOf(val);
  LLVMTypeKind tk = LLVMGetTypeKind(t);
  if (tk != LLVMIntegerTypeKind && tk != LLVMPointerTypeKind) return NULL;
  struct shape s = shape_of_value(v, val);
  if (s.kind == K_UNIFORM) return scalar_of(v, val);
  if (s.kind == K_AFFINE && !s.assumed) {
    LLVMValueRef s0 = scalar_of(v, val);
    if (tk == LLVMPointerTypeKind) {
      LLVMValueRef off = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, lane, v->i64, ""),
                                      LLVMConstInt(v->i64, (unsigned long long)s.stride, 1), "");
      return LLVMBuildGEP2(v->b, v->i8, s0, &off, 1, "");
    }
    LLVMValueRef l = LLVMBuildZExtOrBitCast(v->b, lane, v->i64, "");
    l = LLVMBuildTruncOrBitCast(v->b, l, t, "");
    return LLVMBuildAdd(
        v->b, s0, LLVMBuildMul(v->b, l, LLVMConstInt(t, (unsigned long long)s.stride, 1), ""), "");
  }
  if (s.kind == K_RUNS && !s.assumed) {
    struct vinfo *i = LLVMIsAInstruction(val) ? ptr_map_get(&v->info, val) : NULL;
    LLVMValueRef lo = scalar_of(v, val), hi = i ? i->scalar_hi : lo;
    if (!hi) return NULL;
    LLVMValueRef upper = LLVMBuildICmp(v->b, LLVMIntUGE, lane, LLVMConstInt(v->i32, v->H, 0), "");
    LLVMValueRef start = LLVMBuildSelect(v->b, upper, hi, lo, "");
    LLVMValueRef within = LLVMBuildAnd(v->b, lane, LLVMConstInt(v->i32, v->H - 1, 0), "");
    LLVMValueRef l = LLVMBuildZExt(v->b, within, v->i64, "");
    if (tk == LLVMPointerTypeKind) {
      LLVMValueRef off =
          LLVMBuildMul(v->b, l, LLVMConstInt(v->i64, (unsigned long long)s.stride, 1), "");
      return LLVMBuildGEP2(v->b, v->i8, start, &off, 1, "");
    }
    l = LLVMBuildTruncOrBitCast(v->b, l, t, "");
    return LLVMBuildAdd(v->b, start,
                        LLVMBuildMul(v->b, l, LLVMConstInt(t, (unsigned long long)s.stride, 1), ""),
                        "");
  }
  if (depth > 16 || !LLVMIsAInstruction(val) || s.kind == K_UNDEF) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  LLVMValueRef a, c;
  switch (op) {
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem: {
    /* Only by a constant other than 0 and -1: nothing to trap on. */
    LLVMValueRef d = LLVMGetOperand(val, 1);
    if (!LLVMIsAConstantInt(d) || LLVMConstIntGetZExtValue(d) == 0 ||
        LLVMConstIntGetSExtValue(d) == -1)
      return NULL;
  }
    /* fall through */
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1)) ||
        !(c = lane_value(v, LLVMGetOperand(val, 1), lane, depth + 1)))
      return NULL;
    return LLVMBuildBinOp(v->b, op, a, c, "");
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMAddrSpaceCast:
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1))) return NULL;
    return LLVMBuildCast(v->b, op, a, t, "");
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(val);
    LLVMValueRef idx[8];
    if (n < 2 || n - 1 > 8) return NULL;
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1))) return NULL;
    for (unsigned k = 1; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(val, k);
      /* Struct field numbers stay constants. */
      idx[k - 1] = LLVMIsAConstantInt(o) ? o : lane_value(v, o, lane, depth + 1);
      if (!idx[k - 1]) return NULL;
    }
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(val), a, idx, n - 1, "");
  }
  case LLVMCall: {
    const char *name = callee_name(val);
    if (!name || LLVMGetNumArgOperands(val) != 2 ||
        (strncmp(name, "llvm.smax.", 10) && strncmp(name, "llvm.smin.", 10) &&
         strncmp(name, "llvm.umax.", 10) && strncmp(name, "llvm.umin.", 10)))
      return NULL;
    LLVMValueRef args[2];
    for (unsigned k = 0; k < 2; k++)
      if (!(args[k] = lane_value(v, LLVMGetOperand(val, k), lane, depth + 1))) return NULL;
    LLVMValueRef callee = LLVMGetCalledValue(val);
    return LLVMBuildCall2(v->b, LLVMGlobalGetValueType(callee), callee, args, 2, "");
  }
  default:
    return NULL;
  }
}

LLVMValueRef affine_base(struct vec *v, LLVMValueRef addr, LLVMValueRef mask) {
  struct vinfo *i = LLVMIsAInstruction(addr) ? ptr_map_get(&v->info, addr) : NULL;
  if (!i || !i->assumed || !mask) return scalar_of(v, addr);
  /* The first lane that is on: its address holds, those of lanes that are
   * off may have wrapped. */
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef p = lane_value(v, addr, first, 0);
  if (!p) p = LLVMBuildExtractElement(v->b, vector_of_value(v, addr), first, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-i->stride), 1), "");
  return LLVMBuildGEP2(v->b, v->i8, p, &back, 1, "base");
}

void copy_memory_metadata(struct vec *v, LLVMValueRef from, LLVMValueRef to) {
  static const char *const kinds[] = {"tbaa", "alias.scope", "noalias", "nontemporal", NULL};
  for (int k = 0; kinds[k]; k++) {
    unsigned id = LLVMGetMDKindIDInContext(v->ctx, kinds[k], (unsigned)strlen(kinds[k]));
    LLVMValueRef md = LLVMGetMetadata(from, id);
    if (md) LLVMSetMetadata(to, id, md);
  }
}

/* Each lane's bit of m repeated n times: the mask of an access to n
 * members per lane. */
LLVMValueRef expand_mask(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, unsigned n) {
  if (n == 1) return m;
  LLVMValueRef idx[MAX_MEMBERS * 64];
  for (unsigned i = 0; i < v->W * n; i++)
    idx[i] = LLVMConstInt(v->i32, i / n, 0);
  return LLVMBuildShuffleVector(b, m, LLVMGetPoison(LLVMTypeOf(m)), LLVMConstVector(idx, v->W * n),
                                "");
}

/* Lanes' member k out of a vector holding n members per lane, lane by lane. */
LLVMValueRef deinterleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef wide, unsigned n,
                          unsigned k) {
  if (n == 1) return wide;
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, i * n + k, 0);
  return LLVMBuildShuffleVector(b, wide, LLVMGetPoison(LLVMTypeOf(wide)),
                                LLVMConstVector(idx, v->W), "");
}

/* The n (a power of two) members of the vectors in (W elements each, n
 * of them, lane by lane), the inverse of zip_members: each pair of
 * vectors split into its even and its odd elements, which are the layouts
 * of the even members and of the odd ones. */
static void unzip_members(struct vec *v, LLVMBuilderRef b, LLVMValueRef *in, unsigned n,
                          LLVMValueRef *out) {
  if (n == 1) {
    out[0] = in[0];
    return;
  }
  LLVMValueRef part[2][MAX_MEMBERS / 2], sub[2][MAX_MEMBERS / 2];
  for (unsigned e = 0; e < 2; e++) {
    LLVMValueRef idx[64];
    for (unsigned i = 0; i < v->W; i++)
      idx[i] = LLVMConstInt(v->i32, 2 * i + e, 0);
    for (unsigned r = 0; r < n / 2; r++)
      part[e][r] =
          LLVMBuildShuffleVector(b, in[2 * r], in[2 * r + 1], LLVMConstVector(idx, v->W), "");
    unzip_members(v, b, part[e], n / 2, sub[e]);
  }
  for (unsigned k = 0; k < n / 2; k++) {
    out[2 * k] = sub[0][k];
    out[2 * k + 1] = sub[1][k];
  }
}

void deinterleave_members(struct vec *v, LLVMBuilderRef b, LLVMValueRef wide, unsigned n,
                          LLVMValueRef const *present, LLVMValueRef *out) {
  unsigned count = 0;
  for (unsigned k = 0; k < n; k++)
    count += present[k] != NULL;
  if (n >= 4 && (n & (n - 1)) == 0 && count == n && v->W >= 4) {
    LLVMValueRef piece[MAX_MEMBERS];
    for (unsigned r = 0; r < n; r++) {
      LLVMValueRef idx[64];
      for (unsigned i = 0; i < v->W; i++)
        idx[i] = LLVMConstInt(v->i32, r * v->W + i, 0);
      piece[r] = LLVMBuildShuffleVector(b, wide, LLVMGetPoison(LLVMTypeOf(wide)),
                                        LLVMConstVector(idx, v->W), "");
    }
    unzip_members(v, b, piece, n, out);
    return;
  }
  for (unsigned k = 0; k < n; k++)
    if (present[k]) out[k] = deinterleave(v, b, wide, n, k);
}

/* The vectors in[0 .. count) joined pairwise into one of count * W
 * elements (count a power of two). */
static LLVMValueRef concatenate(struct vec *v, LLVMBuilderRef b, LLVMValueRef *in, unsigned count) {
  LLVMValueRef level[MAX_MEMBERS];
  for (unsigned k = 0; k < count; k++)
    level[k] = in[k];
  unsigned width = v->W;
  for (; count > 1; count /= 2, width *= 2) {
    LLVMValueRef idx[MAX_MEMBERS * 64];
    for (unsigned i = 0; i < 2 * width; i++)
      idx[i] = LLVMConstInt(v->i32, i, 0);
    for (unsigned k = 0; k < count / 2; k++)
      level[k] = LLVMBuildShuffleVector(b, level[2 * k], level[2 * k + 1],
                                        LLVMConstVector(idx, 2 * width), "");
  }
  return level[0];
}

/* The n (a power of two) vectors parts laid out lane by lane, as n
 * vectors of W elements in out: the even members' layout and the odd
 * members' are zipped, a two-input shuffle for each W elements, n log2 n
 * shuffles in all. One shuffle of the joined members lets the instruction
 * selector make each W elements from n sources: 40 shuffles and a copy
 * for nearly each for 8 members of 16 lanes (clFFT's butterflies writing
 * lds[8 * me + k]), against 24. */
static void zip_members(struct vec *v, LLVMBuilderRef b, LLVMValueRef *parts, unsigned n,
                        LLVMValueRef *out) {
  if (n == 1) {
    out[0] = parts[0];
    return;
  }
  LLVMValueRef half[2][MAX_MEMBERS / 2], sub[2][MAX_MEMBERS / 2];
  for (unsigned e = 0; e < 2; e++) {
    for (unsigned k = 0; k < n / 2; k++)
      half[e][k] = parts[2 * k + e];
    zip_members(v, b, half[e], n / 2, sub[e]);
  }
  LLVMValueRef lo[64], hi[64];
  for (unsigned i = 0; i < v->W / 2; i++) {
    lo[2 * i] = LLVMConstInt(v->i32, i, 0);
    lo[2 * i + 1] = LLVMConstInt(v->i32, v->W + i, 0);
    hi[2 * i] = LLVMConstInt(v->i32, v->W / 2 + i, 0);
    hi[2 * i + 1] = LLVMConstInt(v->i32, v->W + v->W / 2 + i, 0);
  }
  for (unsigned r = 0; r < n / 2; r++) {
    out[2 * r] = LLVMBuildShuffleVector(b, sub[0][r], sub[1][r], LLVMConstVector(lo, v->W), "");
    out[2 * r + 1] = LLVMBuildShuffleVector(b, sub[0][r], sub[1][r], LLVMConstVector(hi, v->W), "");
  }
}

/* The n member vectors (NULL: poison) laid out lane by lane, n per lane. */
LLVMValueRef interleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef *parts, unsigned n,
                        LLVMTypeRef t) {
  LLVMTypeRef vt = vector_of(v, t);
  if (n == 1) return parts[0] ? parts[0] : LLVMGetPoison(vt);
  unsigned p2 = 1;
  while (p2 < n)
    p2 *= 2;
  LLVMValueRef level[MAX_MEMBERS];
  for (unsigned k = 0; k < p2; k++)
    level[k] = k < n && parts[k] ? parts[k] : LLVMGetPoison(vt);
  if (p2 == n && n >= 4 && v->W >= 4) {
    LLVMValueRef zipped[MAX_MEMBERS];
    zip_members(v, b, level, n, zipped);
    return concatenate(v, b, zipped, n);
  }
  LLVMValueRef whole = concatenate(v, b, level, p2);
  LLVMValueRef idx[MAX_MEMBERS * 64];
  for (unsigned lane = 0; lane < v->W; lane++)
    for (unsigned k = 0; k < n; k++)
      idx[lane * n + k] = LLVMConstInt(v->i32, k * v->W + lane, 0);
  return LLVMBuildShuffleVector(b, whole, LLVMGetPoison(LLVMTypeOf(whole)),
                                LLVMConstVector(idx, v->W * n), "interleaved");
}

/* Whether the active lanes of ptrs step by stride bytes from lane to lane,
 * and the address lane 0 would have then. */
LLVMValueRef consecutive(struct vec *v, LLVMValueRef ptrs, LLVMValueRef mask, int64_t stride,
                         LLVMValueRef *base) {
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef p = LLVMBuildExtractElement(v->b, ptrs, first, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-stride), 1), "");
  *base = LLVMBuildGEP2(v->b, v->i8, p, &back, 1, "base");
  LLVMValueRef expect = LLVMBuildGEP2(v->b, v->i8, splat(v, v->b, *base),
                                      (LLVMValueRef[]){step_vector(v, v->i64, stride)}, 1, "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, ptrs, expect, "");
  if (mask) same = LLVMBuildSelect(v->b, mask, same, all_ones_mask(v), "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  return LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "consecutive");
}

/* Whether x0 + k * step, k = 0 .. count (an i64), stays within the range of
 * x0's integer type, read as signed (ext LLVMSExt) or unsigned: then lanes
 * equal in x's bits have equal extended indices. */
static LLVMValueRef index_run_in_range(struct vec *v, LLVMValueRef x0, LLVMOpcode ext, int64_t step,
                                       LLVMValueRef count) {
  unsigned nbits = LLVMGetIntTypeWidth(LLVMTypeOf(x0));
  LLVMValueRef wide =
      ext == LLVMSExt ? LLVMBuildSExt(v->b, x0, v->i64, "") : LLVMBuildZExt(v->b, x0, v->i64, "");
  LLVMValueRef span =
      LLVMBuildMul(v->b, count, LLVMConstInt(v->i64, (unsigned long long)step, 1), "");
  LLVMValueRef last = LLVMBuildAdd(v->b, wide, span, "");
  int is_signed = ext == LLVMSExt;
  int64_t hi = is_signed ? (int64_t)(((uint64_t)1 << (nbits - 1)) - 1)
                         : (int64_t)(((uint64_t)1 << nbits) - 1);
  int64_t lo = is_signed ? -(int64_t)((uint64_t)1 << (nbits - 1)) : 0;
  return step > 0 ? LLVMBuildICmp(v->b, LLVMIntSLE, last,
                                  LLVMConstInt(v->i64, (unsigned long long)hi, 1), "")
                  : LLVMBuildICmp(v->b, LLVMIntSGE, last,
                                  LLVMConstInt(v->i64, (unsigned long long)lo, 1), "");
}

/* consecutive() on the index of root, a GEP of a uniform pointer by one
 * varying index, instead of on the lanes' 64-bit addresses: one compare of
 * the index vector (of the narrower integer when the index extends one,
 * with a scalar check that no lane from the first active one on wraps),
 * and the vector of addresses is left to the gather of the slow way, which
 * then takes 32-bit offsets. NULL when root is no such GEP. */
LLVMValueRef consecutive_index(struct vec *v, LLVMValueRef root, LLVMValueRef mask,
                               int64_t stride, LLVMValueRef *base) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return NULL;
  LLVMValueRef p = LLVMGetOperand(root, 0), idx = LLVMGetOperand(root, 1);
  if (!is_uniform(v, p) || shape_of_value(v, idx).kind != K_VARYING) return NULL;
  LLVMTypeRef et = LLVMGetGEPSourceElementType(root);
  int64_t esize = alloc_size(v, et);
  if (esize <= 0 || stride % esize || stride / esize > ((int64_t)1 << 20) ||
      stride / esize < -((int64_t)1 << 20))
    return NULL;
  int64_t step = stride / esize;
  LLVMValueRef x = idx;
  LLVMOpcode ext = LLVMIsAInstruction(idx) ? LLVMGetInstructionOpcode(idx) : 0;
  if ((ext == LLVMSExt || ext == LLVMZExt) &&
      shape_of_value(v, LLVMGetOperand(idx, 0)).kind == K_VARYING)
    x = LLVMGetOperand(idx, 0);
  else
    ext = 0;
  LLVMTypeRef xt = LLVMTypeOf(x);
  if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) > 64 ||
      (ext && LLVMGetIntTypeWidth(xt) >= 64))
    return NULL;
  LLVMValueRef lanes = vector_of_value(v, x);
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef xf = lane_value(v, x, first, 0);
  if (!xf) xf = LLVMBuildExtractElement(v->b, lanes, first, "");
  LLVMValueRef first_x =
      LLVMBuildTruncOrBitCast(v->b, LLVMBuildZExtOrBitCast(v->b, first, v->i64, ""), xt, "");
  LLVMValueRef x0 = LLVMBuildSub(
      v->b, xf, LLVMBuildMul(v->b, first_x, LLVMConstInt(xt, (unsigned long long)step, 1), ""), "");
  LLVMValueRef expect = LLVMBuildAdd(v->b, splat(v, v->b, x0), step_vector(v, xt, step), "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, lanes, expect, "");
  if (mask) same = LLVMBuildSelect(v->b, mask, same, all_ones_mask(v), "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  LLVMValueRef ok =
      LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "consecutive");
  LLVMValueRef xfe = xf;
  /* A GEP sign-extends an index narrower than 64 bits itself. */
  int implicit = !ext && LLVMGetIntTypeWidth(xt) < 64;
  if (implicit) ext = LLVMSExt;
  if (ext) {
    /* The lanes from the first active one to the last, xf + (l - first) *
     * step, stay within x's range: then equal in x's bits is equal. */
    LLVMValueRef lanes_after = LLVMBuildSub(v->b, LLVMConstInt(v->i64, v->W - 1, 0),
                                            LLVMBuildZExt(v->b, first, v->i64, ""), "");
    ok = LLVMBuildAnd(v->b, ok, index_run_in_range(v, xf, ext, step, lanes_after), "");
    if (!implicit) xfe = LLVMBuildCast(v->b, ext, xf, LLVMTypeOf(idx), "");
  }
  LLVMValueRef pf = LLVMBuildGEP2(v->b, et, scalar_of(v, p), &xfe, 1, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-stride), 1), "");
  *base = LLVMBuildGEP2(v->b, v->i8, pf, &back, 1, "base");
  return ok;
}

/* A GEP of a uniform pointer by one varying index (the index taken
 * before its sign or zero extension): the pointer, the index, the
 * extension (0 for none, LLVMSExt for a GEP's own of a narrower index)
 * and the step between consecutive lanes' elements, in elements; 0 when
 * root is no such GEP or stride no multiple of its element. */
static int index_access(struct vec *v, LLVMValueRef root, int64_t stride, LLVMValueRef *p,
                        LLVMValueRef *x, LLVMOpcode *ext, int *implicit, int64_t *step) {
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return 0;
  LLVMValueRef idx = LLVMGetOperand(root, 1);
  *p = LLVMGetOperand(root, 0);
  if (!is_uniform(v, *p) || shape_of_value(v, idx).kind != K_VARYING) return 0;
  int64_t esize = alloc_size(v, LLVMGetGEPSourceElementType(root));
  if (esize <= 0 || stride % esize || stride / esize > ((int64_t)1 << 20) ||
      stride / esize < -((int64_t)1 << 20))
    return 0;
  *step = stride / esize;
  *x = idx;
  *ext = LLVMIsAInstruction(idx) ? LLVMGetInstructionOpcode(idx) : 0;
  if ((*ext == LLVMSExt || *ext == LLVMZExt) &&
      shape_of_value(v, LLVMGetOperand(idx, 0)).kind == K_VARYING)
    *x = LLVMGetOperand(idx, 0);
  else
    *ext = 0;
  LLVMTypeRef xt = LLVMTypeOf(*x);
  if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) > 64 ||
      (*ext && LLVMGetIntTypeWidth(xt) >= 64))
    return 0;
  *implicit = !*ext && LLVMGetIntTypeWidth(xt) < 64;
  if (*implicit) *ext = LLVMSExt;
  return 1;
}

/* Every lane active, and the lanes' elements in two runs: the first half's
 * consecutive from lane 0's, the second half's from lane W/2's. A radix-8
 * FFT exchanges its values through __local memory so (clFFT's passes:
 * lds[(me / 8) * 64 + me % 8 + k * 8], two runs of 8 in 16 lanes), where
 * a gather or scatter takes one memory operation per lane and two
 * half-width accesses serve. The condition, with each half's address in
 * base[]; NULL when root is no GEP of a uniform pointer by one varying
 * index. */
LLVMValueRef halves_consecutive(struct vec *v, LLVMValueRef root, int64_t stride,
                                LLVMValueRef base[2]) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  LLVMValueRef p, x;
  LLVMOpcode ext;
  int implicit;
  int64_t step;
  if (v->W < 8 || !index_access(v, root, stride, &p, &x, &ext, &implicit, &step)) return NULL;
  LLVMTypeRef xt = LLVMTypeOf(x), et = LLVMGetGEPSourceElementType(root);
  unsigned h = v->W / 2;
  LLVMValueRef lanes = vector_of_value(v, x), firsts[64], steps[64];
  for (unsigned l = 0; l < v->W; l++) {
    firsts[l] = LLVMConstInt(v->i32, l < h ? 0 : h, 0);
    steps[l] = LLVMConstInt(xt, (unsigned long long)((int64_t)(l % h) * step), 1);
  }
  LLVMValueRef starts = LLVMBuildShuffleVector(v->b, lanes, LLVMGetPoison(LLVMTypeOf(lanes)),
                                               LLVMConstVector(firsts, v->W), "");
  LLVMValueRef expect = LLVMBuildAdd(v->b, starts, LLVMConstVector(steps, v->W), "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, lanes, expect, "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  LLVMValueRef ok =
      LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "halves");
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef xk = LLVMBuildExtractElement(v->b, lanes, LLVMConstInt(v->i32, k * h, 0), "");
    LLVMValueRef index = xk;
    if (ext) {
      ok = LLVMBuildAnd(v->b, ok,
                        index_run_in_range(v, xk, ext, step, LLVMConstInt(v->i64, h - 1, 0)), "");
      if (!implicit) index = LLVMBuildCast(v->b, ext, xk, LLVMTypeOf(LLVMGetOperand(root, 1)), "");
    }
    base[k] = LLVMBuildGEP2(v->b, et, scalar_of(v, p), &index, 1, "half");
  }
  return ok;
}

/* The first or second half (k) of the vector x of n elements. */
LLVMValueRef half_of(struct vec *v, LLVMValueRef x, unsigned n, unsigned k) {
  LLVMValueRef idx[MAX_MEMBERS * 32];
  for (unsigned i = 0; i < n / 2; i++)
    idx[i] = LLVMConstInt(v->i32, k * (n / 2) + i, 0);
  return LLVMBuildShuffleVector(v->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(idx, n / 2),
                                "");
}
