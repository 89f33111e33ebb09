/* The shape analysis: every instruction of the work-item function gets a
 * shape (uniform, affine with a stride, two runs, or varying), computed by
 * a transfer function per instruction and iterated to a fixed point over
 * the control-flow graph, with the consequences of varying branches
 * (divergent regions, joins, loops left at different iterations). Also
 * which private arrays are laid out lane by lane. The transformation reads
 * the shapes (shape_of_value, struct vinfo's shape fields); only analyze()
 * writes them.
 *
 * Needs: integer facts (facts.c) for divisions and narrow types, call
 * classes (calls.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* The largest power of two that divides x (ALIGN_ANY for 0 and beyond). */
int64_t low_bit(int64_t x) {
  if (x == 0) return ALIGN_ANY;
  uint64_t u = (uint64_t)(x < 0 ? -x : x);
  u &= -u;
  return u > (uint64_t)ALIGN_ANY ? ALIGN_ANY : (int64_t)u;
}

struct shape shape_of_value(struct vec *v, LLVMValueRef val) {
  struct shape s = {K_UNIFORM, 0, 0, 0, 0};
  if (LLVMIsAInstruction(val)) {
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (i) {
      s.kind = i->kind;
      s.assumed = i->assumed;
      s.stride = i->stride;
      s.gap_known = i->gap_known;
      s.gap = i->gap;
      s.gap_align = i->gap_align;
    } else {
      s.kind = K_UNDEF;
    }
  } else if (LLVMIsAArgument(val) && val == LLVMGetParam(v->fn, 2)) {
    /* Lane 0's x; with two rows a vector, both rows start there. */
    s.kind = v->rows > 1 ? K_RUNS : K_AFFINE;
    s.stride = 1;
    s.gap_known = 1;
    s.gap_align = ALIGN_ANY;
  }
  return s;
}

struct shape varying(void) {
  struct shape s = {K_VARYING, 0, 0, 0, 0, 1};
  return s;
}

static struct shape affine(int64_t stride, int assumed) {
  struct shape s = {K_AFFINE, (unsigned char)assumed, 0, stride, 0, 1};
  if (stride == 0) s.kind = K_UNIFORM, s.assumed = 0;
  /* Strides that large are as good as varying, and could overflow. */
  if (stride > (int64_t)1 << 30 || stride < -((int64_t)1 << 30)) s = varying();
  return s;
}

/* Two runs: lanes 0 .. H-1 step by stride from lane 0's value, lanes
 * H .. W-1 by the same stride from lane H's, which lies gap above lane 0's
 * when gap_known. x % 8 of 16 consecutive work-items is such a value (a
 * radix-8 FFT's index), and so is every local id when a vector holds two
 * rows of a work-group (vectorize_target.rows): then local id x runs 0 .. 7
 * in both halves and local id y is one more in the second. Runs whose gap
 * is H strides are affine. */
static struct shape runs(struct vec *v, int64_t stride, int assumed, int gap_known, int64_t gap,
                         int64_t gap_align) {
  if (v->H >= v->W) return varying();
  if (gap_known && gap == (int64_t)v->H * stride) return affine(stride, assumed);
  if (stride > (int64_t)1 << 30 || stride < -((int64_t)1 << 30)) return varying();
  struct shape s = {K_RUNS, (unsigned char)assumed, (unsigned char)gap_known, stride, gap, 1};
  if (gap > (int64_t)1 << 40 || gap < -((int64_t)1 << 40)) s.gap_known = 0;
  if (!s.gap_known) s.gap = 0;
  s.gap_align = s.gap_known ? low_bit(gap) : gap_align < 1 ? 1 : gap_align;
  return s;
}

/* What lane H's value lies above lane 0's, when known at compile time. */
static int gap_of(struct vec *v, struct shape s, int64_t *gap) {
  *gap = s.kind == K_AFFINE ? (int64_t)v->H * s.stride : s.kind == K_RUNS ? s.gap : 0;
  return s.kind == K_UNIFORM || s.kind == K_AFFINE || (s.kind == K_RUNS && s.gap_known);
}

/* A power of two that divides that, known or not (a phi of 8 * y and 0:
 * 8). */
static int64_t gap_align_of(struct vec *v, struct shape s) {
  if (s.kind == K_UNIFORM) return ALIGN_ANY;
  if (s.kind == K_AFFINE) return low_bit((int64_t)v->H * s.stride);
  if (s.kind == K_RUNS) return s.gap_known ? low_bit(s.gap) : s.gap_align;
  return 1;
}

static int64_t scale_align(int64_t align, int64_t factor) {
  int64_t f = low_bit(factor);
  return align >= ALIGN_ANY / f ? ALIGN_ANY : align * f;
}

/* Uniform within each row of a two-row vector (runs of stride 0), or
 * uniform: any operation on such values is, computed once per row. */
static int row_uniform(struct shape s) {
  return s.kind == K_UNIFORM || (s.kind == K_RUNS && s.stride == 0);
}

/* Join of two shapes reaching the same phi. */
static struct shape meet(struct vec *v, struct shape a, struct shape b) {
  if (a.kind == K_UNDEF) return b;
  if (b.kind == K_UNDEF) return a;
  if (a.kind == K_VARYING || b.kind == K_VARYING) return varying();
  if (a.kind == K_UNIFORM && b.kind == K_UNIFORM) return a;
  if (a.kind == K_AFFINE && b.kind == K_AFFINE && a.stride == b.stride)
    return affine(a.stride, a.assumed | b.assumed);
  if (a.kind == K_RUNS || b.kind == K_RUNS) {
    /* Runs with one stride: a phi of lane 0's values and one of lane H's. */
    int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sb = b.kind == K_UNIFORM ? 0 : b.stride;
    int64_t ga, gb;
    int ka = gap_of(v, a, &ga), kb = gap_of(v, b, &gb);
    if (sa != sb) return varying();
    int64_t al = min64(gap_align_of(v, a), gap_align_of(v, b));
    return runs(v, sa, a.assumed | b.assumed, ka && kb && ga == gb, ga, al);
  }
  return varying();
}

int64_t alloc_size(struct vec *v, LLVMTypeRef t) {
  return (int64_t)LLVMABISizeOfType(v->td, t);
}

/* The bytes from one lane's copy of a private variable (not interleaved) to
 * the next: its size, rounded up to the alignment that the accesses to it
 * assume of every copy (clang aligns a private uchar[20] to 16, and a memset
 * of it becomes aligned vector stores). */
int64_t lane_copy_size(struct vec *v, LLVMValueRef alloca) {
  int64_t size = alloc_size(v, LLVMGetAllocatedType(alloca));
  int64_t align = LLVMGetAlignment(alloca);
  return align > 1 ? (size + align - 1) / align * align : size;
}

/* ---- private arrays ---------------------------------------------------------------------- */

/* Private memory (an alloca left after SROA, mostly an array indexed at run
 * time) holds W copies, one per lane. Where the alloca is only ever read
 * and written as scalars of one size e, through GEPs, the copies are
 * interleaved: element offset o of lane l lives at o * W + l * e. An index
 * that is the same for all lanes then reads one vector instead of
 * gathering across W copies. Whether an alloca qualifies: */
static int private_array_users(struct vec *v, LLVMValueRef p, int64_t *size, int depth) {
  if (depth > 16) return 0;
  for (LLVMUseRef u = LLVMGetFirstUse(p); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAInstruction(user)) return 0;
    LLVMOpcode op = LLVMGetInstructionOpcode(user);
    LLVMTypeRef t;
    if (op == LLVMGetElementPtr && LLVMGetOperand(user, 0) == p) {
      if (!private_array_users(v, user, size, depth + 1)) return 0;
      ptr_set_add(&v->soa_ptrs, user);
      continue;
    }
    if (op == LLVMLoad) {
      t = LLVMTypeOf(user);
    } else if (op == LLVMStore && LLVMGetOperand(user, 1) == p && LLVMGetOperand(user, 0) != p) {
      t = LLVMTypeOf(LLVMGetOperand(user, 0));
    } else if (op == LLVMCall && callee_name(user) && is_dropped_intrinsic(callee_name(user))) {
      continue;
    } else {
      return 0;
    }
    if (LLVMGetVolatile(user) || LLVMGetOrdering(user) != LLVMAtomicOrderingNotAtomic ||
        !is_scalar_type(t))
      return 0;
    int64_t e = (int64_t)LLVMABISizeOfType(v->td, t);
    if (e != (int64_t)LLVMStoreSizeOfType(v->td, t) || (*size && *size != e)) return 0;
    *size = e;
  }
  return 1;
}

void find_private_arrays(struct vec *v) {
  LLVMBasicBlockRef entry = v->g.blocks[0];
  for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in)) {
    if (!LLVMIsAAllocaInst(in)) continue;
    int64_t e = 0, total = (int64_t)LLVMABISizeOfType(v->td, LLVMGetAllocatedType(in));
    /* GEPs of an alloca that does not qualify may land in soa_ptrs: they
     * never count (is_private_array_ptr looks at the alloca). */
    if (private_array_users(v, in, &e, 0) && e > 0 && total % e == 0) {
      ptr_map_put(&v->soa_size, in, (void *)(intptr_t)e);
      ptr_set_add(&v->soa_ptrs, in);
    }
  }
}

int is_private_array_ptr(struct vec *v, LLVMValueRef p) {
  if (!ptr_set_has(&v->soa_ptrs, p)) return 0;
  /* A GEP counts only when the alloca it comes from qualified. */
  LLVMValueRef root = p;
  for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(root); depth++)
    root = LLVMGetOperand(root, 0);
  return ptr_map_get(&v->soa_size, root) != NULL;
}

/* The shape of a GEP: the pointer's stride plus each index's stride times
 * the size of what it steps over. */
static struct shape gep_shape(struct vec *v, LLVMValueRef in) {
  if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) {
    /* Lane-interleaved: same indices for all lanes keep lane l at l * e. */
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    for (unsigned i = 1; i < n; i++) {
      struct shape s = shape_of_value(v, LLVMGetOperand(in, i));
      if (s.kind != K_UNIFORM) return varying();
    }
    return shape_of_value(v, LLVMGetOperand(in, 0));
  }
  struct shape p = shape_of_value(v, LLVMGetOperand(in, 0));
  if (p.kind == K_VARYING) return varying();
  int64_t stride = p.kind == K_AFFINE || p.kind == K_RUNS ? p.stride : 0, gap;
  int assumed = p.assumed, any_runs = p.kind == K_RUNS;
  int gap_known = gap_of(v, p, &gap);
  int64_t gap_align = gap_align_of(v, p);
  LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(in, i);
    struct shape s = shape_of_value(v, idx);
    if (i > 1) {
      LLVMTypeKind k = LLVMGetTypeKind(t);
      if (k == LLVMStructTypeKind) {
        if (s.kind != K_UNIFORM) return varying();
        t = LLVMStructGetTypeAtIndex(t, (unsigned)LLVMConstIntGetZExtValue(idx));
        continue;
      }
      if (k != LLVMArrayTypeKind) return varying();
      t = LLVMGetElementType(t);
    }
    if (s.kind == K_VARYING || s.kind == K_UNDEF) return varying();
    int64_t g, size = alloc_size(v, t);
    gap_align = min64(gap_align, scale_align(gap_align_of(v, s), size));
    if (!gap_of(v, s, &g) || size > ((int64_t)1 << 20) || g > ((int64_t)1 << 40) ||
        g < -((int64_t)1 << 40))
      gap_known = 0;
    else
      gap += g * size;
    if (s.kind == K_AFFINE || s.kind == K_RUNS) {
      stride += s.stride * size;
      assumed |= s.assumed;
      any_runs |= s.kind == K_RUNS;
    }
  }
  return any_runs ? runs(v, stride, assumed, gap_known, gap, gap_align) : affine(stride, assumed);
}

/* Whether the phi's incoming values are one and the same value. */
static int phi_all_same(LLVMValueRef phi) {
  unsigned n = LLVMCountIncoming(phi);
  for (unsigned i = 1; i < n; i++)
    if (LLVMGetIncomingValue(phi, i) != LLVMGetIncomingValue(phi, 0)) return 0;
  return 1;
}

/* The innermost divergent loop that contains block b but not block c, or -1. */
int divergent_loop_left(struct vec *v, int b, int c) {
  for (int l = v->g.loop[b]; l >= 0; l = v->g.loops[l].parent)
    if (v->loop_divergent[l] && !cfg_in_loop(&v->g, l, c)) return l;
  return -1;
}

/* x / d, x % d and their shift and mask forms for an affine x and a
 * constant d: when no lane's value is negative and the W lanes never
 * straddle a multiple of d (lane 0 sits at a multiple of a power of two,
 * align, and the lanes span less than that and less than d), the quotient
 * is the same for every lane and the remainder steps like x. Returns
 * whether that holds. */
static int lanes_within_one_block(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (sx.kind != K_AFFINE || sx.stride <= 0 || d <= 0) return 0;
  /* x = y + c, c a small constant: lane 0 lies c above a multiple of y's
   * alignment ((2 * me + 1) % 64, an odd index of an FFT's pair). */
  int64_t c = 0;
  for (int depth = 0; depth < 4 && LLVMIsAInstruction(x) && LLVMGetNumOperands(x) == 2; depth++) {
    LLVMOpcode op = LLVMGetInstructionOpcode(x);
    LLVMValueRef k = LLVMGetOperand(x, 1);
    if (!(op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(x))) || !LLVMIsAConstantInt(k) ||
        LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64)
      break;
    int64_t add = LLVMConstIntGetSExtValue(k);
    if (add < 0 || add > ((int64_t)1 << 30)) break;
    c += add;
    x = LLVMGetOperand(x, 0);
  }
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  int64_t span = c + (int64_t)(v->W - 1) * sx.stride;
  /* y + c must not wrap, in any width. */
  if (c && f.hi > ((int64_t)1 << 31) - 1 - c) return 0;
  int64_t block = f.align;
  /* A divisor that is not a power of two: lane 0 must sit at a multiple of
   * it. */
  if (d & (d - 1)) return f.align % d == 0 && span < d;
  if (d < block) block = d;
  return span < block;
}

/* Whether the W lanes of the affine x (lane 0's value known by its facts,
 * the others stride apart) all lie within the range of a bits-wide
 * integer, signed or not: extending x from those bits is then exact in
 * every lane, and x stays affine without an assumption. */
static int lanes_fit(struct vec *v, LLVMValueRef x, struct shape sx, unsigned bits, int is_signed) {
  if (sx.kind != K_AFFINE || sx.assumed || sx.stride <= 0 || bits < 8 || bits > 62) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known) return 0;
  int64_t span = (int64_t)(v->W - 1) * sx.stride;
  int64_t lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
  int64_t hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  return f.lo >= lo && f.hi <= hi - span;
}

/* The same for x / d and x % d where the W lanes straddle a multiple of d
 * but each half of them does not: lane 0 sits at a multiple of d and a
 * half spans exactly d (x % 8 of 16 consecutive work-items). The quotient
 * is then uniform in each half, one more in the second; the remainder
 * steps like x in each half, the same in both (runs). */
static int halves_within_blocks(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (v->H >= v->W || sx.kind != K_AFFINE || sx.stride <= 0 || d <= 0) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  return (int64_t)v->H * sx.stride == d && f.align % d == 0;
}

static struct shape per_row(struct vec *v, LLVMValueRef in);

/* The low bits that are zero in every lane of x (affine or two runs), as
 * a mask: lane 0's value is a multiple of its facts' alignment, and the
 * others lie multiples of the stride (and of the gap) above it. */
static uint64_t known_low_zeros(struct vec *v, LLVMValueRef x, struct shape sx) {
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known) return 0;
  int64_t align = min64(f.align, low_bit(sx.stride));
  if (sx.kind == K_RUNS) align = min64(align, gap_align_of(v, sx));
  return align >= ALIGN_ANY ? 0 : (uint64_t)align - 1;
}

/* Add, sub, mul, shl and or with an operand of two runs. */
static struct shape runs_arithmetic(struct vec *v, LLVMValueRef in, struct shape a,
                                    struct shape c) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  int assumed = a.assumed | c.assumed;
  int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sc = c.kind == K_UNIFORM ? 0 : c.stride;
  int64_t ga = 0, gc = 0;
  int known = gap_of(v, a, &ga) && gap_of(v, c, &gc);
  int64_t al = min64(gap_align_of(v, a), gap_align_of(v, c));
  if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(in)))
    return runs(v, sa + sc, assumed, known, known ? ga + gc : 0, al);
  if (op == LLVMSub) return runs(v, sa - sc, assumed, known, known ? ga - gc : 0, al);
  if (op == LLVMMul || op == LLVMShl) {
    LLVMValueRef k = LLVMGetOperand(in, 1);
    struct shape x = a;
    if (op == LLVMMul && c.kind != K_UNIFORM) k = LLVMGetOperand(in, 0), x = c;
    if (shape_of_value(v, k).kind == K_UNIFORM && LLVMIsAConstantInt(k) &&
        LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      int64_t f = LLVMConstIntGetSExtValue(k), g;
      if (op == LLVMShl) {
        if (f < 0 || f > 30) return varying();
        f = (int64_t)1 << f;
      }
      if (f > ((int64_t)1 << 20) || f < -((int64_t)1 << 20)) return varying();
      int gk = gap_of(v, x, &g);
      return runs(v, x.stride * f, x.assumed, gk, gk ? g * f : 0,
                  scale_align(gap_align_of(v, x), f));
    }
  }
  return per_row(v, in);
}

/* The same for x of two runs: neither run straddles a multiple of d.
 * Lane 0's value is a multiple of its facts' alignment, lane H's lies a
 * multiple of the gap's alignment above it: a run that starts at a
 * multiple of the smaller of those (and of d) and spans less than it stays
 * in one block. */
static int runs_within_blocks(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (sx.kind != K_RUNS || sx.stride <= 0 || d <= 0) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  int64_t span = (int64_t)(v->H - 1) * sx.stride, ga = gap_align_of(v, sx);
  if (d & (d - 1)) return f.align % d == 0 && ga % d == 0 && span < d;
  return span < min64(min64(f.align, ga), d);
}

/* x / d and x % d for such an x: the quotient uniform in each run, the
 * remainder stepping like x. */
static struct shape runs_quotient(struct vec *v, struct shape sx, int64_t d, int rem) {
  int64_t ga = gap_align_of(v, sx);
  if (sx.gap_known && sx.gap % d == 0)
    return rem ? runs(v, sx.stride, sx.assumed, 1, 0, 1) : runs(v, 0, sx.assumed, 1, sx.gap / d, 1);
  /* A gap that d divides leaves the remainder alike in both runs. */
  if (rem)
    return ga % d == 0 ? runs(v, sx.stride, sx.assumed, 1, 0, 1)
                       : runs(v, sx.stride, sx.assumed, 0, 0, min64(ga, d));
  return runs(v, 0, sx.assumed, 0, 0, ga % d == 0 ? ga / d : 1);
}

/* The shape of an operation on values that are each uniform or uniform
 * per row: uniform per row, or varying. */
static struct shape per_row(struct vec *v, LLVMValueRef in) {
  int n = LLVMGetNumOperands(in), all_uniform = 1;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    if (LLVMIsABasicBlock(o)) continue;
    struct shape s = shape_of_value(v, o);
    if (!row_uniform(s)) return varying();
    all_uniform &= s.kind == K_UNIFORM;
  }
  if (all_uniform) return affine(0, 0);
  if (!is_scalar_type(LLVMTypeOf(in))) return varying();
  return runs(v, 0, 0, 0, 0, 1);
}

static struct shape transfer(struct vec *v, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  struct shape s = {K_UNIFORM, 0, 0};
  int n = LLVMGetNumOperands(in);
  switch (op) {
  case LLVMPHI: {
    int b = block_of(v, in);
    struct shape r = {K_UNDEF, 0, 0};
    unsigned count = LLVMCountIncoming(in);
    for (unsigned k = 0; k < count; k++) {
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(in, k);
      int p = cfg_number(&v->g, from);
      if (p < 0 || v->g.rpo_number[p] < 0) continue;
      /* Leaving a loop that lanes leave at different times. */
      if (divergent_loop_left(v, p, b) >= 0) return varying();
      r = meet(v, r, shape_of_value(v, LLVMGetIncomingValue(in, k)));
    }
    if (v->join_of[b] >= 0 && !phi_all_same(in)) return varying();
    /* An affine value that holds only if nothing wraps stays exact only in
     * straight-line code; a phi of such values is kept as a vector. */
    if ((r.kind == K_AFFINE || r.kind == K_RUNS) && r.assumed) return varying();
    return r;
  }
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    if (a.kind == K_VARYING || c.kind == K_VARYING) return varying();
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    if (a.kind == K_RUNS || c.kind == K_RUNS) return runs_arithmetic(v, in, a, c);
    int assumed = a.assumed | c.assumed;
    int64_t sa = a.kind == K_AFFINE ? a.stride : 0, sc = c.kind == K_AFFINE ? c.stride : 0;
    if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(in))) return affine(sa + sc, assumed);
    if (op == LLVMSub) return affine(sa - sc, assumed);
    if (op == LLVMMul) {
      LLVMValueRef k = a.kind == K_UNIFORM ? LLVMGetOperand(in, 0) : LLVMGetOperand(in, 1);
      if (a.kind == K_AFFINE && c.kind == K_AFFINE) return varying();
      if (!LLVMIsAConstantInt(k)) return varying();
      return affine((a.kind == K_AFFINE ? sa : sc) * LLVMConstIntGetSExtValue(k), assumed);
    }
    if (op == LLVMShl) {
      LLVMValueRef k = LLVMGetOperand(in, 1);
      if (c.kind != K_UNIFORM || !LLVMIsAConstantInt(k)) return varying();
      uint64_t sh = LLVMConstIntGetZExtValue(k);
      if (sh > 30) return varying();
      return affine(sa * ((int64_t)1 << sh), assumed);
    }
    return varying();
  }
  case LLVMAnd: {
    /* x & (2^k - 1) with k >= 32: InstCombine's form of zext(trunc(x)), a
     * uint index (lds[me + 128] with me the local id); affine as a zext of
     * an affine value is, assuming no lane wraps past 2^32. A narrower mask
     * keeps x's low bits on purpose (a circular buffer): affine only when
     * the lanes are known not to wrap around it (x % 2^k, below). */
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    LLVMValueRef k = LLVMGetOperand(in, 1), x = LLVMGetOperand(in, 0);
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    if ((a.kind != K_AFFINE && a.kind != K_RUNS) || !LLVMIsAConstantInt(k) ||
        LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64)
      return per_row(v, in);
    unsigned width = LLVMGetIntTypeWidth(LLVMTypeOf(k));
    uint64_t all = width >= 64 ? ~0ull : (1ull << width) - 1;
    /* Bits that are zero in every lane count as kept: InstCombine drops
     * them from the mask ((2 * me) % 64 is 2 * me & 62). */
    uint64_t zeros = known_low_zeros(v, x, a) & all;
    uint64_t m = LLVMConstIntGetZExtValue(k) | zeros;
    if (a.kind == K_AFFINE) {
      if (m >= 0xffffffffull && (m & (m + 1)) == 0) return affine(a.stride, 1);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 &&
          lanes_within_one_block(v, x, a, (int64_t)m + 1))
        return affine(a.stride, a.assumed);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 && halves_within_blocks(v, x, a, (int64_t)m + 1))
        return runs(v, a.stride, a.assumed, 1, 0, 1);
    } else {
      if (m >= 0xffffffffull && (m & (m + 1)) == 0)
        return runs(v, a.stride, 1, a.gap_known, a.gap, a.gap_align);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 && runs_within_blocks(v, x, a, (int64_t)m + 1))
        return runs_quotient(v, a, (int64_t)m + 1, 1);
    }
    /* x & -d, d a power of two: x rounded down to a multiple of d, which
     * is (x / d) * d (a Stockham FFT's (2 * me / 64) * 256 after
     * InstCombine: (me << 3) & -256): uniform where the lanes lie in one
     * block of d, one per run where each run does. */
    uint64_t low = ~(LLVMConstIntGetZExtValue(k) & ~zeros) & all;
    int64_t d = (int64_t)low + 1;
    if (low != 0 && (low & (low + 1)) == 0 && low < (1ull << 40)) {
      if (a.kind == K_AFFINE && lanes_within_one_block(v, x, a, d)) return s;
      if (a.kind == K_AFFINE && halves_within_blocks(v, x, a, d))
        return runs(v, 0, a.assumed, 1, d, 1);
      if (a.kind == K_RUNS && runs_within_blocks(v, x, a, d)) {
        struct shape q = runs_quotient(v, a, d, 0);
        if (q.kind != K_RUNS) return q;
        return runs(v, 0, q.assumed, q.gap_known, q.gap_known ? q.gap * d : 0,
                    scale_align(q.gap_align, d));
      }
    }
    return per_row(v, in);
  }
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    LLVMValueRef k = LLVMGetOperand(in, 1);
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    int is_div = op == LLVMUDiv || op == LLVMSDiv;
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        lanes_within_one_block(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return is_div ? s : affine(a.stride, a.assumed);
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        halves_within_blocks(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return is_div ? runs(v, 0, a.assumed, 1, 1, 1) : runs(v, a.stride, a.assumed, 1, 0, 1);
    if (a.kind == K_RUNS && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        runs_within_blocks(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return runs_quotient(v, a, LLVMConstIntGetSExtValue(k), !is_div);
    /* Per row, by a constant (nothing to trap on in a row whose lanes are
     * all off). */
    if (c.kind == K_UNIFORM && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        LLVMConstIntGetSExtValue(k) != 0 && LLVMConstIntGetSExtValue(k) != -1)
      return per_row(v, in);
    return varying();
  }
  case LLVMAShr:
  case LLVMLShr: {
    /* (x << c1) >> c2 with c1 >= c2: InstCombine's form of a sign or zero
     * extension of x's low bits, scaled (sext(trunc(gid)) * 4). */
    LLVMValueRef shl = LLVMGetOperand(in, 0), c2 = LLVMGetOperand(in, 1);
    if (LLVMIsAInstruction(shl) && LLVMGetInstructionOpcode(shl) == LLVMShl &&
        LLVMIsAConstantInt(c2) && LLVMIsAConstantInt(LLVMGetOperand(shl, 1))) {
      uint64_t a1 = LLVMConstIntGetZExtValue(LLVMGetOperand(shl, 1)),
               a2 = LLVMConstIntGetZExtValue(c2);
      struct shape x = shape_of_value(v, LLVMGetOperand(shl, 0));
      unsigned width = LLVMGetIntTypeWidth(LLVMTypeOf(in));
      if (a1 >= a2 && a1 - a2 < 16 && x.kind == K_AFFINE)
        return affine(x.stride * ((int64_t)1 << (a1 - a2)),
                      a1 >= width || !lanes_fit(v, LLVMGetOperand(shl, 0), x, width - (unsigned)a1,
                                                op == LLVMAShr));
      if (a1 >= a2 && a1 - a2 < 16 && x.kind == K_RUNS) {
        int64_t f = (int64_t)1 << (a1 - a2);
        return runs(v, x.stride * f, 1, x.gap_known, x.gap * f, scale_align(x.gap_align, f));
      }
      if (x.kind == K_UNIFORM) return s;
    }
    /* x >> k of an affine x whose lanes share their bits above k. */
    struct shape x = shape_of_value(v, shl);
    if (x.kind == K_AFFINE && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        lanes_within_one_block(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return s;
    if (x.kind == K_AFFINE && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        halves_within_blocks(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return runs(v, 0, x.assumed, 1, 1, 1);
    if (x.kind == K_RUNS && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        runs_within_blocks(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return runs_quotient(v, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2), 0);
    return per_row(v, in);
  }
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMAddrSpaceCast: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    if (a.kind == K_RUNS)
      return runs(v, a.stride, a.assumed || op == LLVMZExt || op == LLVMSExt, a.gap_known, a.gap,
                  a.gap_align);
    if (a.kind != K_AFFINE) return a.kind == K_UNDEF ? varying() : a;
    if ((op == LLVMZExt || op == LLVMSExt) &&
        lanes_fit(v, LLVMGetOperand(in, 0), a,
                  LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(in, 0))), op == LLVMSExt))
      return affine(a.stride, 0);
    return affine(a.stride, a.assumed || op == LLVMZExt || op == LLVMSExt);
  }
  case LLVMBitCast: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    if ((a.kind == K_AFFINE || a.kind == K_RUNS) &&
        LLVMGetTypeKind(LLVMTypeOf(in)) != LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))))
      return varying();
    return a;
  }
  case LLVMFreeze:
    return shape_of_value(v, LLVMGetOperand(in, 0));
  case LLVMGetElementPtr:
    return gep_shape(v, in);
  case LLVMSelect: {
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 1));
    struct shape d = shape_of_value(v, LLVMGetOperand(in, 2));
    if (c.kind == K_UNIFORM && (a.kind == K_RUNS || d.kind == K_RUNS)) {
      /* Either operand's runs, whole: lane 0's and lane H's values are
       * selected alike. */
      int64_t ga, gd;
      int ka = gap_of(v, a, &ga), kd = gap_of(v, d, &gd);
      if (a.kind == K_UNDEF || d.kind == K_UNDEF) return varying();
      if (a.kind == K_VARYING || d.kind == K_VARYING) return varying();
      int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sd = d.kind == K_UNIFORM ? 0 : d.stride;
      if (sa != sd) return varying();
      return runs(v, sa, a.assumed | d.assumed, ka && kd && ga == gd, ga,
                  min64(gap_align_of(v, a), gap_align_of(v, d)));
    }
    if (c.kind != K_UNIFORM) return row_uniform(c) ? per_row(v, in) : varying();
    return meet(v, a, d);
  }
  case LLVMAlloca: {
    intptr_t e = (intptr_t)ptr_map_get(&v->soa_size, in);
    return affine(e ? e : lane_copy_size(v, in), 0);
  }
  case LLVMLoad: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    return a.kind == K_UNIFORM ? s : varying();
  }
  case LLVMStore:
  case LLVMFence:
  case LLVMBr:
  case LLVMSwitch:
  case LLVMRet:
  case LLVMUnreachable:
    return s;
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
    return varying();
  case LLVMCall: {
    enum call_class cc = classify_call(in);
    if (cc == CALL_LOCAL_ID) {
      LLVMValueRef d = LLVMGetOperand(in, 0);
      if (!LLVMIsAConstantInt(d)) return varying();
      uint64_t dim = LLVMConstIntGetZExtValue(d);
      if (v->rows > 1 && dim < 2) return dim == 0 ? runs(v, 1, 0, 1, 0, 1) : runs(v, 0, 0, 1, 1, 1);
      return dim == 0 ? affine(1, 0) : s;
    }
    /* A sub-group is the vector: lane l is its work-item l. */
    if (cc == CALL_WORKITEM && !strcmp(callee_name(in), "__aquila_sg_local_id"))
      return affine(1, 0);
    if (cc == CALL_SUB_GROUP) return varying();
    if (cc == CALL_WORKITEM || cc == CALL_BARRIER || cc == CALL_DROP) return s;
    if (cc == CALL_PER_LANE || cc == CALL_UNKNOWN) return varying();
    unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
    for (unsigned k = 0; k < nargs; k++)
      if (shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM) return varying();
    return s;
  }
  default:
    /* Arithmetic, comparisons, casts, aggregates: uniform if every operand
     * is; uniform per row if every operand is that (the operations that
     * have no side effects and cannot trap). */
    for (int k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
      if (LLVMIsABasicBlock(o)) continue;
      if (shape_of_value(v, o).kind != K_UNIFORM) {
        switch (op) {
        case LLVMFAdd:
        case LLVMFSub:
        case LLVMFMul:
        case LLVMFDiv:
        case LLVMFRem:
        case LLVMFNeg:
        case LLVMXor:
        case LLVMICmp:
        case LLVMFCmp:
        case LLVMFPTrunc:
        case LLVMFPExt:
        case LLVMFPToUI:
        case LLVMFPToSI:
        case LLVMUIToFP:
        case LLVMSIToFP:
          return per_row(v, in);
        default:
          return varying();
        }
      }
    }
    return s;
  }
}

/* Marks the consequences of a varying terminator in block b. */
/* Whether a barrier lies in what the branch at the end of block b decides
 * (before the blocks meet again, or anywhere after it when they never
 * do). OpenCL requires a barrier to be reached by all work-items of a group
 * or by none, so such a branch goes the same way for every work-item even
 * when its condition looks varying (CLBlast's direct GEMM tests the global
 * id against the tiled size, which every work-item of a group passes alike). */
static int branch_guards_barrier(struct vec *v, int b) {
  struct cfg *g = &v->g;
  int stop = g->ipdom[b];
  unsigned char *seen = xcalloc(g->n, 1);
  int *work = xcalloc(g->n, sizeof *work);
  unsigned w = 0;
  int found = 0;
  for (unsigned k = g->succ_start[b]; k < g->succ_start[b + 1]; k++) {
    int s = (int)g->succ[k];
    if (s != stop && !seen[s]) {
      seen[s] = 1;
      work[w++] = s;
    }
  }
  while (w && !found) {
    int x = work[--w];
    for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[x]); in && !found;
         in = LLVMGetNextInstruction(in))
      if (LLVMIsACallInst(in) && classify_call(in) == CALL_BARRIER) found = 1;
    for (unsigned k = g->succ_start[x]; k < g->succ_start[x + 1]; k++) {
      int s = (int)g->succ[k];
      if (s != stop && !seen[s]) {
        seen[s] = 1;
        work[w++] = s;
      }
    }
  }
  free(seen);
  free(work);
  return found;
}

static void note_varying_branch(struct vec *v, int b) {
  v->varying_branch[b] = 1;
  /* Every loop that a successor leaves becomes divergent. */
  for (unsigned k = v->g.succ_start[b]; k < v->g.succ_start[b + 1]; k++) {
    int s = (int)v->g.succ[k];
    for (int l = v->g.loop[b]; l >= 0; l = v->g.loops[l].parent)
      if (!cfg_in_loop(&v->g, l, s)) v->loop_divergent[l] = 1;
  }
  int join = v->g.ipdom[b];
  if (join >= 0 && v->join_of[join] < 0) v->join_of[join] = b;
}

static int terminator_condition_varying(struct vec *v, LLVMValueRef term) {
  LLVMValueRef cond = NULL;
  if (LLVMIsABranchInst(term) && LLVMIsConditional(term))
    cond = LLVMGetCondition(term);
  else if (LLVMIsASwitchInst(term))
    cond = LLVMGetOperand(term, 0);
  if (!cond) return 0;
  return shape_of_value(v, cond).kind != K_UNIFORM;
}

void analyze(struct vec *v) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (unsigned r = 0; r < v->g.num_rpo; r++) {
      int b = v->g.rpo[r];
      LLVMBasicBlockRef bb = v->g.blocks[b];
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        struct shape s = transfer(v, in);
        if ((s.kind == K_AFFINE || s.kind == K_RUNS) &&
            LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMVectorTypeKind)
          s = varying();
        struct vinfo *i = info_of(v, in);
        /* Shapes only rise: undef, uniform, affine, runs, varying. Affine
         * and runs values join only with the same stride (affine ones are
         * runs whose gap is H strides). */
        if (i->kind == K_VARYING) continue;
        if ((i->kind == K_AFFINE || i->kind == K_RUNS) &&
            (s.kind == K_AFFINE || s.kind == K_RUNS)) {
          int64_t gi = i->kind == K_AFFINE ? (int64_t)v->H * i->stride : i->gap;
          int ki = i->kind == K_AFFINE || i->gap_known, ks;
          int64_t gs;
          ks = gap_of(v, s, &gs);
          if (s.stride != i->stride) {
            s = varying();
          } else if (s.kind != i->kind || s.gap_known != i->gap_known || s.gap != i->gap) {
            struct shape was = {i->kind, i->assumed, i->gap_known, i->stride, i->gap, i->gap_align};
            s = runs(v, s.stride, s.assumed | i->assumed, ki && ks && gi == gs, gi,
                     min64(gap_align_of(v, was), gap_align_of(v, s)));
            if (s.kind == K_RUNS && i->kind == K_RUNS && !s.gap_known) s.gap = 0;
          } else {
            s.assumed |= i->assumed;
          }
        } else if (s.kind < i->kind) {
          s.kind = i->kind;
          s.stride = i->stride;
          s.assumed = i->assumed;
          s.gap_known = i->gap_known;
          s.gap = i->gap;
          s.gap_align = i->gap_align;
        }
        if (s.kind != i->kind || s.stride != i->stride || s.assumed != i->assumed ||
            s.gap_known != i->gap_known || s.gap != i->gap || s.gap_align != i->gap_align) {
          i->kind = s.kind;
          i->stride = s.stride;
          i->assumed = s.assumed;
          i->gap_known = s.gap_known;
          i->gap = s.gap;
          i->gap_align = s.gap_align;
          changed = 1;
        }
      }
      LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
      if (!v->varying_branch[b] && !v->barrier_branch[b] && terminator_condition_varying(v, term)) {
        if (branch_guards_barrier(v, b))
          v->barrier_branch[b] = 1;
        else
          note_varying_branch(v, b);
        changed = 1;
      }
    }
  }
}
