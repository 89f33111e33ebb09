/* Integer facts: what is known at compile time of an integer value built
 * from work-item ids (its range over every lane and work-group, and a power
 * of two that divides it), so that the shape analysis can tell when x / d,
 * x % d or a narrowing keeps lanes consecutive. Each value's facts are
 * computed once and kept in struct vec's facts map.
 *
 * Needs: call classes (calls.c), low_bit and min64 (shape.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FACTS_LIMIT ((int64_t)1 << 52)

static struct int_facts facts_unknown(void) {
  struct int_facts f = {0, 0, 0, 1};
  return f;
}

/* Keeps facts that fit the value's type as signed numbers (and our
 * arithmetic); others are unknown. */
static struct int_facts facts_fit(struct int_facts f, LLVMTypeRef t) {
  if (!f.known || LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return facts_unknown();
  unsigned bits = LLVMGetIntTypeWidth(t);
  int64_t max = bits >= 54 ? FACTS_LIMIT : ((int64_t)1 << (bits - 1)) - 1;
  if (f.lo < -max || f.hi > max) return facts_unknown();
  if (f.align > ALIGN_ANY) f.align = ALIGN_ANY;
  return f;
}

static struct int_facts compute_facts(struct vec *v, LLVMValueRef val, int depth);

/* Each instruction's facts are computed once; one still being computed (a
 * loop's phi reached again) counts as unknown. */
struct int_facts facts_of(struct vec *v, LLVMValueRef val, int depth) {
  if (!LLVMIsAInstruction(val)) return compute_facts(v, val, depth);
  struct int_facts *known = ptr_map_get(&v->facts, val);
  if (known) return *known;
  if (depth > 64) return facts_unknown();
  if (v->num_facts == v->cap_facts) {
    v->cap_facts = v->cap_facts ? 2 * v->cap_facts : 64;
    v->facts_owned = realloc(v->facts_owned, v->cap_facts * sizeof *v->facts_owned);
    if (!v->facts_owned) abort();
  }
  struct int_facts *slot = xcalloc(1, sizeof *slot);
  v->facts_owned[v->num_facts++] = slot;
  *slot = facts_unknown();
  ptr_map_put(&v->facts, val, slot);
  struct int_facts f = compute_facts(v, val, depth);
  *slot = f;
  return f;
}

/* Whether val is __aquila_<name>(d) for a constant d; *dim gets d. */
static int is_workitem_call(LLVMValueRef val, const char *name, unsigned *dim) {
  if (!LLVMIsACallInst(val) || LLVMGetNumArgOperands(val) != 1) return 0;
  const char *callee = callee_name(val);
  LLVMValueRef d = LLVMGetOperand(val, 0);
  if (!callee || strcmp(callee, name) || !LLVMIsAConstantInt(d)) return 0;
  *dim = (unsigned)LLVMConstIntGetZExtValue(d);
  return *dim < 3;
}

/* local_size(d) * group_id(d), either way round: a group's first global id
 * (VECTORIZE_GLOBAL_SIZE_LIMIT says why it is bounded). */
static int is_group_start(LLVMValueRef val) {
  if (!LLVMIsAInstruction(val) || LLVMGetInstructionOpcode(val) != LLVMMul) return 0;
  for (unsigned k = 0; k < 2; k++) {
    unsigned ds, dg;
    LLVMValueRef size = LLVMGetOperand(val, k), group = LLVMGetOperand(val, 1 - k);
    if ((is_workitem_call(size, "__aquila_local_size", &ds) ||
         is_workitem_call(size, "__aquila_enqueued_local_size", &ds)) &&
        is_workitem_call(group, "__aquila_group_id", &dg) && ds == dg)
      return 1;
  }
  return 0;
}

static struct int_facts compute_facts(struct vec *v, LLVMValueRef val, int depth) {
  struct int_facts f = facts_unknown();
  LLVMTypeRef t = LLVMTypeOf(val);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) > 64) return f;
  if (!v->reqd[0] && LLVMGetIntTypeWidth(t) == 64 && is_group_start(val)) {
    f.known = 1, f.lo = 0, f.hi = VECTORIZE_GLOBAL_SIZE_LIMIT - 1, f.align = 1;
    return f;
  }
  if (LLVMIsAConstantInt(val)) {
    int64_t c = LLVMConstIntGetSExtValue(val);
    if (c < -FACTS_LIMIT || c > FACTS_LIMIT) return f;
    f.known = 1, f.lo = f.hi = c, f.align = low_bit(c);
    return f;
  }
  if (!LLVMIsAInstruction(val)) return f;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  unsigned n = (unsigned)LLVMGetNumOperands(val);
  struct int_facts a = {0}, b = {0};
  if ((op >= LLVMAdd && op <= LLVMXor) || op == LLVMTrunc || op == LLVMZExt || op == LLVMSExt) {
    a = facts_of(v, LLVMGetOperand(val, 0), depth + 1);
    if (!a.known) return f;
    if (n > 1) {
      b = facts_of(v, LLVMGetOperand(val, 1), depth + 1);
      if (!b.known) return f;
    }
  }
  switch (op) {
  case LLVMCall: {
    enum call_class cc = classify_call(val);
    const char *name = callee_name(val);
    LLVMValueRef d = LLVMGetNumArgOperands(val) == 1 ? LLVMGetOperand(val, 0) : NULL;
    if (!d || !LLVMIsAConstantInt(d) || LLVMConstIntGetZExtValue(d) > 2) return f;
    unsigned dim = (unsigned)LLVMConstIntGetZExtValue(d);
    if (cc == CALL_LOCAL_ID) {
      f.known = 1, f.lo = 0, f.hi = v->reqd[dim] ? v->reqd[dim] - 1 : 65535;
      /* With two rows a vector, lane 0 is at x 0 of an even row. */
      f.align = dim == 0 ? (v->rows > 1 ? ALIGN_ANY : v->W) : dim == 1 ? v->rows : 1;
    } else if (name && !strcmp(name, "__aquila_group_id")) {
      f.known = 1, f.lo = 0, f.hi = 0xffffffffll, f.align = 1;
    }
    return facts_fit(f, t);
  }
  case LLVMPHI:
  case LLVMSelect: {
    unsigned first = op == LLVMSelect ? 1 : 0;
    unsigned count = op == LLVMSelect ? 3 : LLVMCountIncoming(val);
    if (count > 8) return f;
    for (unsigned k = first; k < count; k++) {
      struct int_facts x = facts_of(
          v, op == LLVMSelect ? LLVMGetOperand(val, k) : LLVMGetIncomingValue(val, k), depth + 1);
      if (!x.known) return facts_unknown();
      if (!f.known) {
        f = x;
      } else {
        f.lo = min64(f.lo, x.lo), f.hi = f.hi > x.hi ? f.hi : x.hi;
        f.align = min64(f.align, x.align);
      }
    }
    /* A select on a varying condition mixes lanes: lane 0's value is then
     * one of the two, both multiples of the smaller alignment. */
    return facts_fit(f, t);
  }
  case LLVMAdd:
    f.known = 1, f.lo = a.lo + b.lo, f.hi = a.hi + b.hi, f.align = min64(a.align, b.align);
    return facts_fit(f, t);
  case LLVMOr:
    if (!LLVMGetIsDisjoint(val)) return f;
    f.known = 1, f.lo = a.lo + b.lo, f.hi = a.hi + b.hi, f.align = min64(a.align, b.align);
    return a.lo < 0 || b.lo < 0 ? facts_unknown() : facts_fit(f, t);
  case LLVMSub:
    f.known = 1, f.lo = a.lo - b.hi, f.hi = a.hi - b.lo, f.align = min64(a.align, b.align);
    return facts_fit(f, t);
  case LLVMMul:
  case LLVMShl: {
    /* By a constant only. */
    if (b.lo != b.hi) return f;
    int64_t k = b.lo;
    if (op == LLVMShl) {
      if (k < 0 || k > 30) return f;
      k = (int64_t)1 << k;
    }
    if (k < -(1 << 20) || k > (1 << 20)) return f;
    f.known = 1, f.lo = k >= 0 ? a.lo * k : a.hi * k, f.hi = k >= 0 ? a.hi * k : a.lo * k;
    int64_t kb = low_bit(k);
    f.align = a.align >= ALIGN_ANY / kb ? ALIGN_ANY : a.align * kb;
    return facts_fit(f, t);
  }
  case LLVMAnd:
    /* With a non-negative constant mask: within [0, mask]; lane 0's zero low
     * bits stay zero. */
    if (b.lo != b.hi || b.lo < 0) return f;
    f.known = 1, f.lo = 0, f.hi = a.lo >= 0 && a.hi < b.lo ? a.hi : b.lo;
    f.align = a.align > low_bit(b.lo) ? a.align : low_bit(b.lo);
    return facts_fit(f, t);
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMLShr:
  case LLVMAShr: {
    if (b.lo != b.hi || a.lo < 0) return f;
    int64_t k = b.lo;
    if (op == LLVMLShr || op == LLVMAShr) {
      if (k < 0 || k > 40) return f;
      k = (int64_t)1 << k;
    }
    if (k <= 0) return f;
    f.known = 1, f.lo = a.lo / k, f.hi = a.hi / k, f.align = 1;
    return facts_fit(f, t);
  }
  case LLVMURem:
  case LLVMSRem:
    if (b.lo != b.hi || b.lo <= 0 || a.lo < 0) return f;
    f.known = 1, f.lo = 0, f.hi = a.hi < b.lo ? a.hi : b.lo - 1, f.align = 1;
    return facts_fit(f, t);
  case LLVMTrunc:
    return facts_fit(a, t);
  case LLVMZExt:
    return a.lo < 0 ? f : facts_fit(a, t);
  case LLVMSExt:
    return facts_fit(a, t);
  default:
    return f;
  }
}
