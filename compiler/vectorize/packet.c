/* OpenCL vectors left whole: a varying value of a type <N x T> is kept as
 * N element vectors <W x T> (a packet) where its elements are used apart;
 * which values are packets (is_packet, for the legality check), and the
 * emission of operations, loads and stores on packets element by element.
 *
 * Needs: vector forms (build.c), access groups (access_groups.c), calls
 * (calls.c), loads and stores (load_store.c, address.c). */
#include "vectorize/internal.h"

#include <stdint.h>

/* A varying value of an OpenCL vector type <N x T> is never built as one
 * value (<W x <N x T>> does not exist): it is a packet of N vectors <W x T>,
 * one per element, and each operation on it is done element by element.
 * Which instructions can be: */
int is_packet(struct vec *v, LLVMValueRef in) {
  LLVMTypeRef t = LLVMTypeOf(in);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || !is_scalar_type(LLVMGetElementType(t)) ||
      LLVMGetVectorSize(t) > MAX_MEMBERS)
    return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  switch (op) {
  case LLVMLoad: {
    if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) return 0;
    LLVMTypeRef e = LLVMGetElementType(t);
    return (int64_t)LLVMStoreSizeOfType(v->td, e) == alloc_size(v, e);
  }
  case LLVMInsertElement:
  case LLVMShuffleVector:
  case LLVMPHI:
  case LLVMSelect:
  case LLVMFreeze:
  case LLVMICmp:
  case LLVMFCmp:
  case LLVMFNeg:
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
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
  case LLVMFRem:
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMFPTrunc:
  case LLVMFPExt:
    return 1;
  case LLVMBitCast: {
    /* Element by element, or joining or splitting elements 2, 4 or 8 at a
     * time (<4 x i32> to <2 x double>, double to <2 x float>: how clang
     * passes OpenCL vectors to functions). */
    LLVMTypeRef from = LLVMTypeOf(LLVMGetOperand(in, 0));
    LLVMTypeRef fe = LLVMGetTypeKind(from) == LLVMVectorTypeKind ? LLVMGetElementType(from) : from;
    if (!is_scalar_type(fe) || LLVMGetTypeKind(fe) == LLVMPointerTypeKind ||
        LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMPointerTypeKind)
      return 0;
    unsigned a = LLVMGetTypeKind(from) == LLVMVectorTypeKind ? LLVMGetVectorSize(from) : 1;
    unsigned b = LLVMGetVectorSize(t);
    return a == b || a == 2 * b || a == 4 * b || b == 2 * a || b == 4 * a || b == 8 * a;
  }
  case LLVMCall: {
    enum call_class cc = classify_call(in);
    return cc == CALL_VECTOR || cc == CALL_PER_LANE || cc == CALL_PURE;
  }
  default:
    return 0;
  }
}

/* ---- OpenCL vectors left whole: elements and accesses ---------------------------------------- */

/* Element k of a vector value, as a <W x T> vector. */
LLVMValueRef packet_element(struct vec *v, LLVMValueRef val, unsigned k) {
  LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(val));
  if (LLVMIsAInstruction(val)) {
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (i && i->packet) {
      if (i->elems && k < i->num_elems && i->elems[k]) return i->elems[k];
      fail(v, VECTORIZE_UNSUPPORTED, "internal: an element of a vector not yet built", val);
      return LLVMGetPoison(vector_of(v, et));
    }
  }
  if (LLVMIsPoison(val) || LLVMIsUndef(val)) return LLVMGetPoison(vector_of(v, et));
  if (LLVMIsAConstant(val) && !LLVMIsAGlobalValue(val)) {
    LLVMValueRef e = LLVMGetAggregateElement(val, k);
    return e && !LLVMIsUndef(e) ? const_splat(v, e) : LLVMGetPoison(vector_of(v, et));
  }
  /* A uniform vector: the element, then splat. */
  LLVMValueRef e = LLVMBuildExtractElement(v->b, scalar_of(v, val), LLVMConstInt(v->i32, k, 0), "");
  return splat(v, v->b, e);
}

/* The <W x i1> (or scalar i1, when uniform) condition of element k of a
 * select's condition, which is an i1 or an <N x i1>. */
static LLVMValueRef packet_condition(struct vec *v, LLVMValueRef c, unsigned k) {
  if (LLVMGetTypeKind(LLVMTypeOf(c)) == LLVMVectorTypeKind) {
    if (is_uniform(v, c))
      return LLVMBuildExtractElement(v->b, scalar_of(v, c), LLVMConstInt(v->i32, k, 0), "");
    return packet_element(v, c, k);
  }
  return is_uniform(v, c) ? scalar_of(v, c) : vector_of_value(v, c);
}

/* Element k of bitcast(x) to <n x et>, where x has n, n / 2^j or n * 2^j
 * elements: the same element, the bits of several elements of x joined
 * (lowest element in the low bits), or a part of one element's bits. */
static LLVMValueRef source_element(struct vec *v, LLVMValueRef x, unsigned i) {
  return LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind ? packet_element(v, x, i)
                                                              : vector_of_value(v, x);
}

LLVMValueRef packet_bitcast(struct vec *v, LLVMValueRef x, LLVMTypeRef et, unsigned n,
                            unsigned k) {
  LLVMTypeRef from = LLVMTypeOf(x);
  int from_vector = LLVMGetTypeKind(from) == LLVMVectorTypeKind;
  LLVMTypeRef ft = from_vector ? LLVMGetElementType(from) : from;
  unsigned m = from_vector ? LLVMGetVectorSize(from) : 1;
  unsigned fbits = (unsigned)LLVMSizeOfTypeInBits(v->td, ft),
           tbits = (unsigned)LLVMSizeOfTypeInBits(v->td, et);
  if (m == n) return LLVMBuildBitCast(v->b, source_element(v, x, k), vector_of(v, et), "");
  LLVMTypeRef fi = vector_of(v, LLVMIntTypeInContext(v->ctx, fbits));
  LLVMTypeRef ti = vector_of(v, LLVMIntTypeInContext(v->ctx, tbits));
  if (m > n) {
    /* Joining r = m / n elements of x into one. */
    unsigned r = m / n;
    LLVMValueRef acc = NULL;
    for (unsigned j = 0; j < r; j++) {
      /* An element may be poison (the fourth of a vload3's <4 x T>), and
       * its bits alone must stay undefined: or-ing a poison part in would
       * make the whole joined value poison. */
      LLVMValueRef e = source_element(v, x, k * r + j);
      if (LLVMIsPoison(e) || LLVMIsUndef(e))
        e = LLVMConstNull(LLVMTypeOf(e));
      else if (!LLVMIsAConstant(e))
        e = LLVMBuildFreeze(v->b, e, "");
      LLVMValueRef part = LLVMBuildBitCast(v->b, e, fi, "");
      part = LLVMBuildZExt(v->b, part, ti, "");
      if (j)
        part = LLVMBuildShl(v->b, part,
                            const_splat(v, LLVMConstInt(LLVMGetElementType(ti), j * fbits, 0)), "");
      acc = acc ? LLVMBuildOr(v->b, acc, part, "") : part;
    }
    return LLVMBuildBitCast(v->b, acc, vector_of(v, et), "");
  }
  /* A part of one element of x: element k / r, bits (k % r) * tbits up. */
  unsigned r = n / m;
  LLVMValueRef whole = LLVMBuildBitCast(v->b, source_element(v, x, k / r), fi, "");
  if (k % r)
    whole = LLVMBuildLShr(
        v->b, whole, const_splat(v, LLVMConstInt(LLVMGetElementType(fi), (k % r) * tbits, 0)), "");
  return LLVMBuildBitCast(v->b, LLVMBuildTrunc(v->b, whole, ti, ""), vector_of(v, et), "");
}

/* An operation on OpenCL vectors, element by element. */
void emit_packet(struct vec *v, LLVMValueRef in, struct vinfo *i) {
  LLVMTypeRef t = LLVMTypeOf(in), et = LLVMGetElementType(t);
  unsigned n = LLVMGetVectorSize(t);
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  i->num_elems = n;
  i->elems = xcalloc(n, sizeof *i->elems);
  for (unsigned k = 0; k < n && v->status == VECTORIZE_OK; k++) {
    LLVMValueRef r = NULL;
    switch (op) {
    case LLVMInsertElement: {
      LLVMValueRef idx = LLVMGetOperand(in, 2);
      LLVMValueRef old = packet_element(v, LLVMGetOperand(in, 0), k);
      LLVMValueRef x = vector_of_value(v, LLVMGetOperand(in, 1));
      if (LLVMIsAConstantInt(idx)) {
        r = LLVMConstIntGetZExtValue(idx) == k ? x : old;
      } else {
        LLVMValueRef at = is_uniform(v, idx) ? scalar_of(v, idx) : vector_of_value(v, idx);
        LLVMTypeRef it = LLVMTypeOf(at);
        LLVMValueRef kk = LLVMGetTypeKind(it) == LLVMVectorTypeKind
                              ? const_splat(v, LLVMConstInt(LLVMGetElementType(it), k, 0))
                              : LLVMConstInt(it, k, 0);
        r = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntEQ, at, kk, ""), x, old, "");
      }
      break;
    }
    case LLVMShuffleVector: {
      int m = LLVMGetMaskValue(in, k);
      unsigned na = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(in, 0)));
      if (m < 0)
        r = LLVMGetPoison(vector_of(v, et));
      else if ((unsigned)m < na)
        r = packet_element(v, LLVMGetOperand(in, 0), (unsigned)m);
      else
        r = packet_element(v, LLVMGetOperand(in, 1), (unsigned)m - na);
      break;
    }
    case LLVMSelect:
      r = LLVMBuildSelect(v->b, packet_condition(v, LLVMGetOperand(in, 0), k),
                          packet_element(v, LLVMGetOperand(in, 1), k),
                          packet_element(v, LLVMGetOperand(in, 2), k), "");
      break;
    case LLVMFreeze:
      r = LLVMBuildFreeze(v->b, packet_element(v, LLVMGetOperand(in, 0), k), "");
      break;
    case LLVMICmp:
      r = LLVMBuildICmp(v->b, LLVMGetICmpPredicate(in), packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), "");
      break;
    case LLVMFCmp:
      r = LLVMBuildFCmp(v->b, LLVMGetFCmpPredicate(in), packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), "");
      break;
    case LLVMFNeg:
      r = LLVMBuildFNeg(v->b, packet_element(v, LLVMGetOperand(in, 0), k), "");
      copy_safe_fmf(in, r);
      break;
    case LLVMUDiv:
    case LLVMSDiv:
    case LLVMURem:
    case LLVMSRem:
      r = safe_division(v, v->b, op, packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), et);
      break;
    case LLVMBitCast:
      r = packet_bitcast(v, LLVMGetOperand(in, 0), et, n, k);
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
      r = LLVMBuildCast(v->b, op, packet_element(v, LLVMGetOperand(in, 0), k), vector_of(v, et),
                        "");
      break;
    case LLVMCall:
      r = emit_vector_intrinsic_on(v, in, (int)k);
      break;
    default: /* the remaining binary operators */
      r = LLVMBuildBinOp(v->b, op, packet_element(v, LLVMGetOperand(in, 0), k),
                         packet_element(v, LLVMGetOperand(in, 1), k), "");
      copy_safe_fmf(in, r);
      break;
    }
    i->elems[k] = r;
  }
}

/* A vector load whose elements are used one by one: the lanes' vectors
 * as one wide access, like an access group of the vector's elements. */
struct access_group *emit_packet_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  LLVMTypeRef vt = LLVMTypeOf(in), et = LLVMGetElementType(vt);
  unsigned n = LLVMGetVectorSize(vt);
  LLVMValueRef addr = LLVMGetOperand(in, 0);
  struct access_group *g = xcalloc(1, sizeof *g);
  add_group(v, g);
  g->root = addr;
  g->type = et;
  g->size = alloc_size(v, et);
  g->align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
  g->last = in;
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_RUNS && s.stride == 0 && !mask && !LLVMGetVolatile(in)) {
    /* One vector per row: a load each, its elements broadcast over the row. */
    LLVMValueRef start[2] = {scalar_of(v, addr), hi_of(v, addr)}, part[2];
    for (unsigned k = 0; k < 2; k++) {
      part[k] = LLVMBuildLoad2(v->b, vt, start[k], "");
      LLVMSetAlignment(part[k], g->align);
      copy_memory_metadata(v, in, part[k]);
    }
    g->emitted = 1;
    g->members = n;
    for (unsigned k = 0; k < n; k++) {
      LLVMValueRef e[2];
      for (unsigned r = 0; r < 2; r++)
        e[r] =
            splat(v, v->b, LLVMBuildExtractElement(v->b, part[r], LLVMConstInt(v->i32, k, 0), ""));
      g->result[k] = join_halves(v, v->b, e[0], e[1]);
    }
    return g;
  }
  int64_t stride = s.kind == K_AFFINE || s.kind == K_RUNS ? s.stride : (int64_t)n * g->size;
  int element_known = root_element_size(v, addr) == stride;
  if (stride > 0 && stride % g->size == 0 && stride / g->size <= MAX_MEMBERS &&
      (stride == (int64_t)n * g->size || element_known)) {
    g->stride = stride;
    g->members = (unsigned)(stride / g->size);
    for (unsigned k = 0; k < n; k++)
      g->member[k] = in;
    emit_group_load(v, g, mask);
    return g;
  }
  /* Elements of lanes that are apart: a gather each, or one for vectors
   * of 8 bytes. */
  g->emitted = 1;
  g->members = n;
  LLVMValueRef ptrs = vector_of_value(v, addr);
  if (n > 1 && (int64_t)n * g->size == 8 && !LLVMGetVolatile(in)) {
    gather_members_of_8_bytes(v, et, n, ptrs, g->align, mask, g->result);
    return g;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    g->result[k] =
        gather(v, et, k ? LLVMBuildGEP2(v->b, v->i8, ptrs, &off, 1, "") : ptrs, g->align, mask);
  }
  return g;
}

void emit_packet_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  LLVMValueRef val = LLVMGetOperand(in, 0), addr = LLVMGetOperand(in, 1);
  LLVMTypeRef vt = LLVMTypeOf(val), et = LLVMGetElementType(vt);
  unsigned n = LLVMGetVectorSize(vt);
  unsigned align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
  LLVMValueRef parts[MAX_MEMBERS] = {0};
  for (unsigned k = 0; k < n; k++)
    parts[k] = packet_element(v, val, k);
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_UNIFORM) {
    /* One place for all lanes: the last active lane's vector stays. */
    LLVMValueRef last = last_lane(v, v->b, mask), x = LLVMGetPoison(vt);
    for (unsigned k = 0; k < n; k++)
      x = LLVMBuildInsertElement(v->b, x, LLVMBuildExtractElement(v->b, parts[k], last, ""),
                                 LLVMConstInt(v->i32, k, 0), "");
    LLVMValueRef st = LLVMBuildStore(v->b, x, scalar_of(v, addr));
    LLVMSetAlignment(st, align);
    copy_memory_metadata(v, in, st);
    return;
  }
  struct access_group *g = xcalloc(1, sizeof *g);
  add_group(v, g);
  g->root = addr;
  g->type = et;
  g->size = alloc_size(v, et);
  g->align = align;
  g->last = in;
  int64_t stride = s.kind == K_AFFINE || s.kind == K_RUNS ? s.stride : (int64_t)n * g->size;
  if (stride > 0 && stride % g->size == 0 && stride / g->size <= MAX_MEMBERS &&
      (stride == (int64_t)n * g->size || v->isa == 'e')) {
    g->stride = stride;
    g->members = (unsigned)(stride / g->size);
    for (unsigned k = 0; k < n; k++)
      g->member[k] = in;
    emit_group_store(v, g, mask, parts);
    return;
  }
  g->emitted = 1;
  LLVMValueRef ptrs = vector_of_value(v, addr);
  if (n > 1 && (int64_t)n * g->size == 8) {
    /* Vectors of 8 bytes: one scatter of them (a float2 into a transposed
     * __local tile), each lane's whole vector in work-item order. */
    LLVMValueRef data = interleave(v, v->b, parts, n, et);
    scatter(v, LLVMBuildBitCast(v->b, data, LLVMVectorType(v->i64, v->W), ""), ptrs, align, mask);
    return;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    scatter(v, parts[k], k ? LLVMBuildGEP2(v->b, v->i8, ptrs, &off, 1, "") : ptrs, align, mask);
  }
}
