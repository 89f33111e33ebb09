/* Access groups: the loads (or stores) of one block that touch parts of
 * the same element of memory (a float4 after the scalarizer, a struct of
 * scalars), found by their common root address, so that one wide access
 * and shuffles serve them all; and the dropping of groups whose gaps would
 * read memory no lane reads.
 *
 * Needs: shapes and private arrays (shape.c), call classes (calls.c). */
#include "vectorize/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* addr as root + constant byte offset, looking through one GEP. */
static void split_address(struct vec *v, LLVMValueRef addr, LLVMValueRef *root, int64_t *off) {
  *root = addr;
  *off = 0;
  if (!LLVMIsAGetElementPtrInst(addr) || LLVMGetNumOperands(addr) != 2) return;
  LLVMValueRef idx = LLVMGetOperand(addr, 1);
  if (!LLVMIsAConstantInt(idx)) return;
  *root = LLVMGetOperand(addr, 0);
  *off = LLVMConstIntGetSExtValue(idx) * alloc_size(v, LLVMGetGEPSourceElementType(addr));
}

/* The bytes per element that root steps over, from how it was computed, or 0. */
int64_t root_element_size(struct vec *v, LLVMValueRef root) {
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return 0;
  return alloc_size(v, LLVMGetGEPSourceElementType(root));
}

/* Whether a and b compute the same value: the same instruction, or the
 * same side-effect-free operation on operands that are (LLVM leaves
 * copies of an index computation apart when they were written apart:
 * clFFT's ((2*me + 1)/64)*256 beside ((2*me + 0)/64)*256). */
static int same_value(LLVMValueRef a, LLVMValueRef b, int depth) {
  if (a == b) return 1;
  if (depth <= 0 || !LLVMIsAInstruction(a) || !LLVMIsAInstruction(b)) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(a);
  if (op != LLVMGetInstructionOpcode(b) || LLVMTypeOf(a) != LLVMTypeOf(b)) return 0;
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
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
    break;
  case LLVMCall: {
    /* The work-item queries: a group id, a size, a local id. */
    enum call_class c = classify_call(a);
    if ((c != CALL_LOCAL_ID && c != CALL_WORKITEM) ||
        LLVMGetCalledValue(a) != LLVMGetCalledValue(b))
      return 0;
    break;
  }
  default:
    return 0;
  }
  /* Flags that make one of them poison where the other is not. */
  if ((op == LLVMOr && LLVMGetIsDisjoint(a) != LLVMGetIsDisjoint(b)) ||
      ((op == LLVMAdd || op == LLVMSub || op == LLVMMul || op == LLVMShl) &&
       (LLVMGetNUW(a) != LLVMGetNUW(b) || LLVMGetNSW(a) != LLVMGetNSW(b))))
    return 0;
  int n = LLVMGetNumOperands(a);
  for (int k = 0; k < n; k++)
    if (!same_value(LLVMGetOperand(a, (unsigned)k), LLVMGetOperand(b, (unsigned)k), depth - 1))
      return 0;
  return 1;
}

/* How many low bits of x are known to be zero (2 * me + k's first one). */
static unsigned low_zero_bits(LLVMValueRef x, int depth) {
  if (LLVMIsAConstantInt(x)) {
    uint64_t c = LLVMConstIntGetZExtValue(x);
    return c ? (unsigned)__builtin_ctzll(c) : 64;
  }
  if (depth <= 0 || !LLVMIsAInstruction(x)) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(x);
  if (op == LLVMZExt || op == LLVMSExt) return low_zero_bits(LLVMGetOperand(x, 0), depth - 1);
  if (LLVMGetNumOperands(x) != 2) return 0;
  LLVMValueRef a = LLVMGetOperand(x, 0), b = LLVMGetOperand(x, 1);
  unsigned za = low_zero_bits(a, depth - 1), zb = low_zero_bits(b, depth - 1);
  switch (op) {
  case LLVMShl:
    if (!LLVMIsAConstantInt(b) || LLVMConstIntGetZExtValue(b) >= 64) return 0;
    za += (unsigned)LLVMConstIntGetZExtValue(b);
    return za > 64 ? 64 : za;
  case LLVMMul:
    return za + zb > 64 ? 64 : za + zb;
  case LLVMAnd:
    return za > zb ? za : zb;
  case LLVMOr:
  case LLVMAdd:
  case LLVMXor:
    return za < zb ? za : zb;
  default:
    return 0;
  }
}

static uint64_t width_mask(LLVMValueRef x) {
  unsigned w = LLVMGetIntTypeWidth(LLVMTypeOf(x));
  return w >= 64 ? ~0ull : (1ull << w) - 1;
}

/* Adds to f the index idx & mask (mask covers idx's width when there is
 * none), in units of scale bytes: constants go to f->offset, the rest to
 * terms. Sums, disjoint ors, shifts and products by constants and the
 * masks over them are taken apart, extensions and masks of 32 or more low
 * bits looked through, as shape_of_value takes them as affine when no
 * lane wraps (the same assumption). 0 when idx has more terms than a form
 * holds. */
static int add_index(struct index_form *f, LLVMValueRef idx, uint64_t mask, int64_t scale,
                     int depth) {
  if (LLVMIsAConstantInt(idx)) {
    f->offset +=
        scale * (mask == width_mask(idx) ? LLVMConstIntGetSExtValue(idx)
                                         : (int64_t)(LLVMConstIntGetZExtValue(idx) & mask));
    return 1;
  }
  if (depth > 0 && LLVMIsAInstruction(idx)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(idx);
    int plain = mask == width_mask(idx);
    if (op == LLVMZExt || (op == LLVMSExt && plain)) {
      LLVMValueRef x = LLVMGetOperand(idx, 0);
      return add_index(f, x, mask & width_mask(x), scale, depth - 1);
    }
    LLVMValueRef a = LLVMGetNumOperands(idx) == 2 ? LLVMGetOperand(idx, 0) : NULL;
    LLVMValueRef k = a ? LLVMGetOperand(idx, 1) : NULL;
    /* (x | y) & m is (x & m) | (y & m), still disjoint. */
    if ((op == LLVMAdd && plain) || (op == LLVMOr && LLVMGetIsDisjoint(idx)))
      return add_index(f, a, mask, scale, depth - 1) && add_index(f, k, mask, scale, depth - 1);
    if (k && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      uint64_t c = LLVMConstIntGetZExtValue(k);
      if (op == LLVMAnd) {
        if (plain && c >= 0xffffffffull && (c & (c + 1)) == 0)
          return add_index(f, a, mask, scale, depth - 1);
        return add_index(f, a, mask & c, scale, depth - 1);
      }
      /* (x << c) & m is (x & (m >> c)) << c. */
      if (op == LLVMShl && c < 32 && (scale << c) >> c == scale)
        return add_index(f, a, plain ? width_mask(a) : mask >> c, scale << c, depth - 1);
      if (op == LLVMMul && plain && c && c < (1u << 16) && scale * (int64_t)c / (int64_t)c == scale)
        return add_index(f, a, mask, scale * (int64_t)c, depth - 1);
    }
  }
  if (f->num_terms == MAX_INDEX_TERMS) return 0;
  f->term[f->num_terms] = idx;
  f->mask[f->num_terms] = mask;
  f->scale[f->num_terms++] = scale;
  return 1;
}

/* addr as a GEP whose last index is a sum of terms plus a constant and
 * whose other indices are constant: the accesses lds[8 * me + k] for
 * k = 0 .. 7 (FFT butterflies writing __local memory; after inlining,
 * lds[zext(shl(me, 3) | k)]) have forms alike but for their offsets,
 * which lie k * 4 bytes apart. 0 when addr is not such a GEP. */
static int index_key(struct vec *v, LLVMValueRef addr, struct index_form *f) {
  if (!LLVMIsAGetElementPtrInst(addr)) return 0;
  unsigned n = (unsigned)LLVMGetNumOperands(addr);
  if (n < 2) return 0;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(addr);
  int64_t off = 0;
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(addr, i);
    if (i > 1) {
      LLVMTypeKind k = LLVMGetTypeKind(t);
      if (k == LLVMStructTypeKind) {
        if (!LLVMIsAConstantInt(idx)) return 0;
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        off += (int64_t)LLVMOffsetOfElement(v->td, t, field);
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      if (k != LLVMArrayTypeKind) return 0;
      t = LLVMGetElementType(t);
    }
    if (i + 1 < n) {
      if (!LLVMIsAConstantInt(idx)) return 0;
      off += LLVMConstIntGetSExtValue(idx) * alloc_size(v, t);
      continue;
    }
    memset(f, 0, sizeof *f);
    if (!add_index(f, idx, width_mask(idx), alloc_size(v, t), 8) || !f->num_terms) return 0;
    f->ptr = LLVMGetOperand(addr, 0);
    f->offset += off;
    return 1;
  }
  return 0;
}

/* Whether a term of one form is a term of another: the same value under
 * masks that differ only in bits known to be zero. */
static int same_term(const struct index_form *fa, unsigned i, const struct index_form *fb,
                     unsigned j) {
  LLVMValueRef a = fa->term[i], b = fb->term[j];
  uint64_t ma = fa->mask[i], mb = fb->mask[j];
  if (fa->scale[i] != fb->scale[j] || !same_value(a, b, 6)) return 0;
  if (ma == mb) return 1;
  unsigned z = low_zero_bits(a, 8);
  uint64_t known = z >= 64 ? ~0ull : (1ull << z) - 1;
  return ((ma ^ mb) & ~known) == 0;
}

/* Whether forms a and b differ only in their offsets. */
static int same_form(const struct index_form *a, const struct index_form *b) {
  if (a->num_terms != b->num_terms || !same_value(a->ptr, b->ptr, 6)) return 0;
  unsigned used = 0;
  for (unsigned i = 0; i < a->num_terms; i++) {
    unsigned j = 0;
    while (j < b->num_terms && ((used >> j & 1) || !same_term(a, i, b, j)))
      j++;
    if (j == b->num_terms) return 0;
    used |= 1u << j;
  }
  return 1;
}

/* Whether x is computed from a value that a gather loaded (a load at a
 * varying address), through at most depth instructions, loop phis
 * included. */
static int from_gather(struct vec *v, LLVMValueRef x, struct ptr_set *seen, int depth) {
  if (!LLVMIsAInstruction(x) || depth <= 0 || !ptr_set_add(seen, x)) return 0;
  if (LLVMIsALoadInst(x)) {
    LLVMValueRef addr = LLVMGetOperand(x, 0);
    return shape_of_value(v, addr).kind == K_VARYING && !is_private_array_ptr(v, addr);
  }
  if (LLVMIsACallInst(x) || is_uniform(v, x)) return 0;
  int n = LLVMGetNumOperands(x);
  for (int k = 0; k < n; k++)
    if (from_gather(v, LLVMGetOperand(x, (unsigned)k), seen, depth - 1)) return 1;
  return 0;
}

int address_from_gather(struct vec *v, LLVMValueRef addr) {
  struct ptr_set seen = {0};
  int lookup = from_gather(v, addr, &seen, 24);
  ptr_set_free(&seen);
  return lookup;
}

static int groupable(struct vec *v, LLVMValueRef in) {
  int is_load = LLVMIsALoadInst(in) != NULL;
  if (!is_load && !LLVMIsAStoreInst(in)) return 0;
  if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) return 0;
  LLVMValueRef addr = LLVMGetOperand(in, is_load ? 0 : 1);
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_UNIFORM) return 0;
  LLVMTypeRef t = is_load ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, 0));
  if (!is_scalar_type(t) || (int64_t)LLVMStoreSizeOfType(v->td, t) != alloc_size(v, t)) return 0;
  /* Lanes walking down are served by a reversed vector. */
  if (s.kind == K_AFFINE && s.stride < 0) return 0;
  /* So are two runs walking down; one address per row is loaded once per
   * row (emit_load). */
  if (s.kind == K_RUNS && s.stride <= 0) return 0;
  /* A lane's copy of a lane-interleaved private array is not contiguous:
   * the element k bytes past an address is W * k bytes further on, not k
   * (private_array_gep), so its members are no group; an index all lanes
   * share reads one vector (emit_load). */
  if (is_private_array_ptr(v, addr)) return 0;
  /* An address computed from what a gather loaded (a table lookup whose
   * index is an earlier lookup's result: AES's T-tables, a hash's state)
   * is no run of consecutive elements at run time: the check for one
   * (consecutive()) would cost its compares and branch on every access. */
  if (s.kind == K_VARYING && address_from_gather(v, addr)) return 0;
  return 1;
}

/* The address space of the memory an access touches. */
static unsigned access_space(LLVMValueRef in) {
  LLVMValueRef addr = LLVMGetOperand(in, LLVMIsALoadInst(in) ? 0 : 1);
  return LLVMGetPointerAddressSpace(LLVMTypeOf(addr));
}

/* Whether memory in address spaces a and b can overlap: __local memory (3)
 * is no __global (1) or __constant (2) buffer's; generic pointers (4) and
 * private memory may be anything. */
static int spaces_may_overlap(unsigned a, unsigned b) {
  if (a == b) return 1;
  if (a > b) {
    unsigned t = a;
    a = b;
    b = t;
  }
  return !(b == 3 && (a == 1 || a == 2));
}

/* Ends the open groups of stores (stores = 1) or loads (0) whose memory
 * an access in address space space may touch. */
static void close_groups(struct access_group **open, unsigned *num_open, int stores,
                         unsigned space) {
  unsigned k = 0;
  for (unsigned i = 0; i < *num_open; i++)
    if (open[i]->is_store != stores || !spaces_may_overlap(open[i]->space, space))
      open[k++] = open[i];
  *num_open = k;
}

void add_group(struct vec *v, struct access_group *g) {
  if (v->num_groups == v->cap_groups) {
    v->cap_groups = v->cap_groups ? 2 * v->cap_groups : 64;
    v->groups = realloc(v->groups, v->cap_groups * sizeof *v->groups);
    if (!v->groups) abort();
  }
  v->groups[v->num_groups++] = g;
}

/* Finds the access groups of block b: accesses through the same root at
 * constant offsets, with no other memory access between them that could
 * see the difference (a store between loads, any access between stores). */
void find_groups(struct vec *v, int b) {
  struct access_group *open[64];
  unsigned num_open = 0;
  LLVMBasicBlockRef bb = v->g.blocks[b];
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(in);
    int is_load = op == LLVMLoad, is_store = op == LLVMStore;
    if (!groupable(v, in)) {
      if (is_load)
        close_groups(open, &num_open, 1, access_space(in));
      else if (is_store) {
        close_groups(open, &num_open, 1, access_space(in));
        close_groups(open, &num_open, 0, access_space(in));
      } else if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg || op == LLVMFence)
        num_open = 0;
      else if (op == LLVMCall) {
        enum call_class cc = classify_call(in);
        if (cc == CALL_PER_LANE || cc == CALL_BARRIER || cc == CALL_UNKNOWN) num_open = 0;
      }
      continue;
    }
    /* A store ends the load groups (later loads must see it); a load ends
     * the store groups (it must see the stores before it). */
    close_groups(open, &num_open, is_store ? 0 : 1, access_space(in));
    LLVMValueRef addr = LLVMGetOperand(in, is_load ? 0 : 1), root;
    int64_t off;
    split_address(v, addr, &root, &off);
    LLVMTypeRef t = is_load ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, 0));
    int64_t size = alloc_size(v, t);
    struct shape rs = shape_of_value(v, root);
    if (rs.kind == K_UNIFORM || ((rs.kind == K_AFFINE || rs.kind == K_RUNS) && rs.stride <= 0)) {
      root = addr;
      off = 0;
      rs = shape_of_value(v, root);
    }
    /* No root at a constant offset: maybe one index apart from other
     * accesses (then the group's root is its first member's address). */
    struct index_form key;
    int has_key = root == addr && rs.kind == K_AFFINE && index_key(v, addr, &key);
    struct access_group *g = NULL;
    for (unsigned i = 0; i < num_open && !g; i++) {
      if (has_key && open[i]->has_key && open[i]->type == t && same_form(&key, &open[i]->key)) {
        int64_t rel = key.offset - open[i]->key.offset;
        if (rel >= 0 && rel < open[i]->stride && rel % size == 0 && !open[i]->member[rel / size]) {
          g = open[i];
          off = rel;
          root = g->root;
        }
        continue;
      }
      if (open[i]->root == root && open[i]->type == t && off >= 0 && off < open[i]->stride &&
          off % size == 0 && !open[i]->member[off / size])
        g = open[i];
    }
    if (!g) {
      /* A varying root's element size is settled once all members are known. */
      int64_t stride = rs.kind == K_AFFINE || rs.kind == K_RUNS ? rs.stride : size * MAX_MEMBERS;
      if (off < 0 || off % size || stride % size || stride / size > MAX_MEMBERS || off >= stride)
        continue;
      g = xcalloc(1, sizeof *g);
      g->root = root;
      g->is_store = is_store;
      g->space = access_space(in);
      g->stride = stride;
      g->size = size;
      g->type = t;
      g->members = (unsigned)(stride / size);
      g->element_known = root_element_size(v, root) == stride;
      g->align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
      g->has_key = has_key;
      if (has_key) g->key = key;
      add_group(v, g);
      if (num_open == 64) num_open = 0;
      open[num_open++] = g;
    }
    g->member[off / size] = in;
    g->last = in;
    unsigned a = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
    if (a < g->align) g->align = a;
    ptr_map_put(&v->group_of, in, g);
  }
}

/* Drops groups that would read memory no lane reads: a gap is only read
 * when the element is known to span it. */
void settle_groups(struct vec *v, size_t from) {
  for (size_t i = from; i < v->num_groups; i++) {
    struct access_group *g = v->groups[i];
    if (shape_of_value(v, g->root).kind == K_VARYING) {
      /* The element: what the root's GEP steps over, or at least the
       * members' span (consecutive() checks the guess at run time). */
      unsigned last = 0;
      for (unsigned k = 0; k < g->members; k++)
        if (g->member[k]) last = k;
      int64_t span = (int64_t)(last + 1) * g->size, element = root_element_size(v, g->root);
      g->stride = element > span && element % g->size == 0 && element / g->size <= MAX_MEMBERS
                      ? element
                      : span;
      g->members = (unsigned)(g->stride / g->size);
      g->element_known = element == g->stride;
    }
    unsigned present = 0;
    for (unsigned k = 0; k < g->members; k++)
      present += g->member[k] != NULL;
    int keep = present == g->members || (!g->is_store && g->element_known);
    /* Stores with gaps leave them out by mask: cheap with AVX-512 only. */
    if (g->is_store && present * 2 >= g->members && v->isa == 'e') keep = 1;
    /* A lone strided access moves W * stride bytes for W elements: only
     * worth it when the element is small. */
    if (present == 1 && g->members > 4) keep = 0;
    if (keep) continue;
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) ptr_map_put(&v->group_of, g->member[k], NULL);
  }
}
