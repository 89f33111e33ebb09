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

/* An index as root + c: through additions of constants (add, or of
 * disjoint bits) and the extensions and masks that shape_of_value takes as
 * affine when no lane wraps (the same assumption). root is NULL for a
 * constant index. */
static LLVMValueRef index_root(LLVMValueRef idx, int64_t *c) {
  *c = 0;
  for (int depth = 0; depth < 8; depth++) {
    if (LLVMIsAConstantInt(idx)) {
      *c += LLVMConstIntGetSExtValue(idx);
      return NULL;
    }
    if (!LLVMIsAInstruction(idx)) return idx;
    LLVMOpcode op = LLVMGetInstructionOpcode(idx);
    if (op == LLVMZExt || op == LLVMSExt) {
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    LLVMValueRef k = LLVMGetNumOperands(idx) == 2 ? LLVMGetOperand(idx, 1) : NULL;
    if (!k || !LLVMIsAConstantInt(k) || LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64) return idx;
    if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(idx))) {
      *c += LLVMConstIntGetSExtValue(k);
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    uint64_t m = LLVMConstIntGetZExtValue(k);
    if (op == LLVMAnd && m >= 0xffffffffull && (m & (m + 1)) == 0) {
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    return idx;
  }
  return idx;
}

/* addr as a GEP whose last index is root + c and whose other indices are
 * constant: the accesses lds[8 * me + k] for k = 0 .. 7 (FFT butterflies
 * writing __local memory; after inlining, lds[zext(shl(me, 3) | k)]) share
 * *ptr and *index and lie *offset bytes apart. 0 when addr is not such a GEP. */
static int index_key(struct vec *v, LLVMValueRef addr, LLVMValueRef *ptr, LLVMValueRef *index,
                     int64_t *offset) {
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
    int64_t c;
    LLVMValueRef root = index_root(idx, &c);
    if (!root) return 0;
    *ptr = LLVMGetOperand(addr, 0);
    *index = root;
    *offset = off + c * alloc_size(v, t);
    return 1;
  }
  return 0;
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

static void close_groups(struct vec *v, struct access_group **open, unsigned *num_open,
                         int stores) {
  unsigned k = 0;
  for (unsigned i = 0; i < *num_open; i++)
    if (open[i]->is_store != stores) open[k++] = open[i];
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
        close_groups(v, open, &num_open, 1);
      else if (is_store || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg || op == LLVMFence)
        num_open = 0;
      else if (op == LLVMCall) {
        enum call_class cc = classify_call(in);
        if (cc == CALL_PER_LANE || cc == CALL_BARRIER || cc == CALL_UNKNOWN) num_open = 0;
      }
      continue;
    }
    /* A store ends the load groups (later loads must see it); a load ends
     * the store groups (it must see the stores before it). */
    close_groups(v, open, &num_open, is_store ? 0 : 1);
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
    LLVMValueRef key_ptr = NULL, key_index = NULL;
    int64_t key_offset = 0;
    if (root == addr && rs.kind == K_AFFINE &&
        !index_key(v, addr, &key_ptr, &key_index, &key_offset))
      key_ptr = key_index = NULL;
    struct access_group *g = NULL;
    for (unsigned i = 0; i < num_open && !g; i++) {
      if (key_index && open[i]->key_index == key_index && open[i]->key_ptr == key_ptr &&
          open[i]->type == t) {
        int64_t rel = key_offset - open[i]->key_offset;
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
      g->stride = stride;
      g->size = size;
      g->type = t;
      g->members = (unsigned)(stride / size);
      g->element_known = root_element_size(v, root) == stride;
      g->align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
      g->key_ptr = key_ptr;
      g->key_index = key_index;
      g->key_offset = key_offset;
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
