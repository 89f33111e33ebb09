/* Barriers without fibers: a work-item function whose body contains barriers
 * becomes a work-group function made of work-item loops, one per region of
 * code between barriers (continuation-based synchronization).
 *
 * The function is first put in a shape where that is easy to do by cloning:
 * no phi nodes and no SSA value used outside its block (reg2mem), each
 * barrier alone in its own block, and an entry block holding only allocas.
 * A region starts at the code after the entry or after a barrier and holds
 * every block reachable from there without passing a barrier. Each region
 * gets its own z/y/x loop over the work-items around a clone of its blocks;
 * leaving the region through a barrier records which region comes next, and
 * a dispatch block runs that region's loop once every work-item is done.
 * Barriers are assumed uniform, as OpenCL requires.
 *
 * Private variables (allocas) that live in more than one region become
 * context arrays with one element per work-item; those used in a single
 * region stay shared scalars, which LLVM promotes back to registers. The
 * loops index context arrays by the linear local id, so consecutive
 * work-items touch consecutive elements and the loop vectorizer can widen
 * each region across work-items. */
#include "workgroup/regions.h"

#include "workgroup/uniform.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block_list {
  LLVMBasicBlockRef *items;
  unsigned len, cap;
};

static void block_list_push(struct block_list *l, LLVMBasicBlockRef b) {
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 16;
    l->items = realloc(l->items, l->cap * sizeof *l->items);
    if (!l->items) abort();
  }
  l->items[l->len++] = b;
}

static int block_list_index(const struct block_list *l, LLVMBasicBlockRef b) {
  for (unsigned i = 0; i < l->len; i++)
    if (l->items[i] == b) return (int)i;
  return -1;
}

/* The name of the function inst calls directly, or NULL. */
static const char *called_name(LLVMValueRef inst) {
  if (!inst || !LLVMIsACallInst(inst)) return NULL;
  LLVMValueRef callee = LLVMGetCalledValue(inst);
  size_t len = 0;
  return callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : NULL;
}

static int is_named_call(LLVMValueRef inst, const char *name) {
  const char *called = called_name(inst);
  return called && !strcmp(called, name);
}

static int is_barrier_block(LLVMBasicBlockRef bb) {
  return is_named_call(LLVMGetFirstInstruction(bb), "__aquila_barrier");
}

/* Moves inst and every instruction after it in its block into a new block
 * placed after it, and branches there. Returns the new block. */
static LLVMBasicBlockRef split_before(LLVMContextRef ctx, LLVMBuilderRef b, LLVMValueRef inst,
                                      const char *name) {
  LLVMBasicBlockRef from = LLVMGetInstructionParent(inst);
  LLVMBasicBlockRef next = LLVMGetNextBasicBlock(from);
  LLVMValueRef fn = LLVMGetBasicBlockParent(from);
  LLVMBasicBlockRef to = next ? LLVMInsertBasicBlockInContext(ctx, next, name)
                              : LLVMAppendBasicBlockInContext(ctx, fn, name);
  LLVMPositionBuilderAtEnd(b, to);
  while (inst) {
    LLVMValueRef following = LLVMGetNextInstruction(inst);
    LLVMInstructionRemoveFromParent(inst);
    LLVMInsertIntoBuilder(b, inst);
    inst = following;
  }
  LLVMPositionBuilderAtEnd(b, from);
  LLVMBuildBr(b, to);
  return to;
}

/* An alloca of the entry block: a private variable, whose address is
 * available everywhere in the function. */
static int is_entry_alloca(LLVMValueRef v) {
  return LLVMIsAAllocaInst(v) &&
         LLVMGetInstructionParent(v) ==
             LLVMGetEntryBasicBlock(LLVMGetBasicBlockParent(LLVMGetInstructionParent(v)));
}

/* Whether v can be recomputed wherever it is used: arithmetic, address
 * computation and work-item builtins over such values, private variables'
 * addresses, arguments and constants; never a load, whose memory may change
 * at a barrier. An address recomputed from its variable, rather than kept
 * in a slot of its own, stays visible to LLVM as an access to that
 * variable: once the variable is a context array, a slot of pointers into it
 * would hide it from alias analysis and keep loops over its fields from
 * being promoted to registers or deleted. */
static int is_cheap(LLVMValueRef v, int depth) {
  if (!LLVMIsAInstruction(v) || is_entry_alloca(v)) return 1;
  if (depth > 8) return 0;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMGetElementPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
  case LLVMICmp:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMInsertElement: /* splats and lane numbers of vectorized functions */
  case LLVMShuffleVector:
    break;
  case LLVMCall: {
    LLVMValueRef callee = LLVMGetCalledValue(v);
    size_t len = 0;
    const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
    if (strncmp(name, "__aquila_", 9) || !strcmp(name, "__aquila_barrier")) return 0;
    break;
  }
  case LLVMLoad: {
    /* The kernarg segment and the work-group descriptor (the function's
     * pointer arguments) never change while the kernel runs. */
    LLVMValueRef p = LLVMGetOperand(v, 0);
    while (LLVMIsAGetElementPtrInst(p) || LLVMIsABitCastInst(p)) {
      for (int i = 1; i < LLVMGetNumOperands(p); i++)
        if (!is_cheap(LLVMGetOperand(p, (unsigned)i), depth + 1)) return 0;
      p = LLVMGetOperand(p, 0);
    }
    return LLVMIsAArgument(p) && LLVMGetTypeKind(LLVMTypeOf(p)) == LLVMPointerTypeKind;
  }
  default:
    return 0;
  }
  int n = LLVMIsACallInst(v) ? (int)LLVMGetNumArgOperands(v) : LLVMGetNumOperands(v);
  for (int i = 0; i < n; i++)
    if (!is_cheap(LLVMGetOperand(v, (unsigned)i), depth + 1)) return 0;
  return 1;
}

struct remat_map {
  LLVMValueRef from[64], to[64];
  unsigned len;
};

/* A copy of v (and of the cheap values it uses from other blocks) placed
 * before user's position in block bb. */
static LLVMValueRef rematerialize(LLVMBuilderRef b, LLVMValueRef v, LLVMBasicBlockRef bb,
                                  struct remat_map *map) {
  if (!LLVMIsAInstruction(v) || is_entry_alloca(v) || LLVMGetInstructionParent(v) == bb) return v;
  for (unsigned i = 0; i < map->len; i++)
    if (map->from[i] == v) return map->to[i];
  LLVMValueRef c = LLVMInstructionClone(v);
  int n = LLVMIsACallInst(v) ? (int)LLVMGetNumArgOperands(v) : LLVMGetNumOperands(v);
  for (int i = 0; i < n; i++) {
    LLVMValueRef op = LLVMGetOperand(v, (unsigned)i);
    LLVMValueRef r = rematerialize(b, op, bb, map);
    if (r != op) LLVMSetOperand(c, (unsigned)i, r);
  }
  LLVMInsertIntoBuilder(b, c);
  if (map->len < 64) {
    map->from[map->len] = v;
    map->to[map->len++] = c;
  }
  return c;
}

void regions_rematerialize(LLVMContextRef ctx, LLVMValueRef fn) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    struct remat_map map = {0};
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (LLVMIsAPHINode(in)) continue;
      int n = LLVMGetNumOperands(in);
      for (int i = 0; i < n; i++) {
        LLVMValueRef op = LLVMGetOperand(in, (unsigned)i);
        if (!op || !LLVMIsAInstruction(op) || LLVMGetInstructionParent(op) == bb) continue;
        if (!is_cheap(op, 0)) continue;
        LLVMPositionBuilderBefore(b, in);
        LLVMSetOperand(in, (unsigned)i, rematerialize(b, op, bb, &map));
      }
    }
  }
  LLVMDisposeBuilder(b);
}

/* Whether inst is an llvm.lifetime.start or llvm.lifetime.end marker. */
static int is_lifetime_marker(LLVMValueRef inst) {
  const char *called = called_name(inst);
  return called && !strncmp(called, "llvm.lifetime.", 14);
}

int regions_prepare(LLVMContextRef ctx, LLVMValueRef fn) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  /* No lifetime markers (the inliner puts them around the private variables
   * of the functions it inlines): once such a variable is a context array, a
   * marker would name one work-item's element, and the first work-item's is
   * the start of the whole array, whose lifetime LLVM would then take it to
   * begin and end, for every work-item at once. */
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
      next = LLVMGetNextInstruction(in);
      if (is_lifetime_marker(in)) LLVMInstructionEraseFromParent(in);
    }
  /* Entry: allocas only. Private variables declared after the kernel's first
   * statements (and the address computations that earlier passes put first)
   * have their allocas after other instructions: those of a constant size
   * move up, so that they stay in the entry and become context arrays or
   * scalars. Split off into the first region instead, each would be a fresh
   * stack allocation for every work-item that the region's loop runs, which
   * grows the stack with the work-group's size and, reached through a slot of
   * pointers, hides the variable from LLVM's optimizations. */
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  while (first && LLVMIsAAllocaInst(first)) first = LLVMGetNextInstruction(first);
  for (LLVMValueRef in = first, next; in; in = next) {
    next = LLVMGetNextInstruction(in);
    if (!LLVMIsAAllocaInst(in) || !LLVMIsAConstant(LLVMGetOperand(in, 0))) continue;
    LLVMInstructionRemoveFromParent(in);
    LLVMPositionBuilderBefore(b, first);
    LLVMInsertIntoBuilder(b, in);
  }
  if (first) split_before(ctx, b, first, "start");
  /* Each barrier alone in its block, followed by a branch. */
  for (LLVMBasicBlockRef bb = LLVMGetNextBasicBlock(entry); bb; bb = LLVMGetNextBasicBlock(bb)) {
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!is_named_call(in, "__aquila_barrier")) continue;
      if (in != LLVMGetFirstInstruction(bb)) {
        split_before(ctx, b, in, "barrier");
        break; /* the loop continues with the new block */
      }
      LLVMValueRef after = LLVMGetNextInstruction(in);
      if (after) split_before(ctx, b, after, "after.barrier");
      break;
    }
  }
  LLVMDisposeBuilder(b);
  return 0;
}

struct region {
  LLVMBasicBlockRef start;
  struct block_list blocks;
};

struct transform {
  LLVMContextRef ctx;
  LLVMValueRef fn;
  LLVMBuilderRef b;
  LLVMTypeRef i32, i64, ptr;
  LLVMTypeRef wg_type;
  struct region *regions;
  unsigned num_regions;
  LLVMValueRef *allocas; /* entry allocas */
  int *alloca_per_item;  /* 1: context array */
  int *alloca_uniform;   /* 1: one scalar shared by all items, read once per region */
  int *alloca_candidate; /* only loaded and stored as an address */
  struct ptr_set direct_loads; /* loads of uniform slots that read the slot itself */
  LLVMValueRef *context_arrays;
  LLVMTypeRef *context_elems; /* one element of a context array: the alloca's type, padded */
  unsigned num_allocas;
  LLVMValueRef next_slot;
  LLVMValueRef exit_ids; /* i32 per work-item: the region each one left for */
  LLVMValueRef items;    /* work-items in the group, in vectors of width */
  LLVMValueRef size[3];
  LLVMValueRef vectors_x; /* size[0] / width */
  unsigned width;        /* work-items along x that one run of the body covers */
  unsigned rows;         /* rows of the work-group it covers at once (1 or 2) */
  unsigned rows_jammed;  /* the most rows whose accumulating loops run jammed */
};

static int region_of_start(const struct transform *t, LLVMBasicBlockRef start) {
  for (unsigned i = 0; i < t->num_regions; i++)
    if (t->regions[i].start == start) return (int)i;
  return -1;
}

static void collect_region(struct region *r) {
  if (is_barrier_block(r->start)) return;
  block_list_push(&r->blocks, r->start);
  for (unsigned i = 0; i < r->blocks.len; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(r->blocks.items[i]);
    unsigned n = term ? LLVMGetNumSuccessors(term) : 0;
    for (unsigned s = 0; s < n; s++) {
      LLVMBasicBlockRef succ = LLVMGetSuccessor(term, s);
      if (is_barrier_block(succ) || block_list_index(&r->blocks, succ) >= 0) continue;
      block_list_push(&r->blocks, succ);
    }
  }
}

static int block_in_region(const struct region *r, LLVMBasicBlockRef bb) {
  return block_list_index(&r->blocks, bb) >= 0;
}

/* Whether a is only loaded from and stored to as an address, whole and as
 * the type it was allocated with. A union or a variable that is read as
 * another type (a struct returned in a register: its bytes loaded as an
 * i64) is not a slot: a uniform slot's loads are served by one load of
 * the allocated type, and its stores and loads are taken to cover the
 * whole variable. */
static int is_slot(LLVMValueRef a) {
  LLVMTypeRef type = LLVMGetAllocatedType(a);
  for (LLVMUseRef u = LLVMGetFirstUse(a); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsALoadInst(user) && LLVMTypeOf(user) == type) continue;
    if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == a &&
        LLVMTypeOf(LLVMGetOperand(user, 0)) == type)
      continue;
    return 0;
  }
  return 1;
}

/* How many regions use a slot. */
static unsigned slot_regions(const struct transform *t, LLVMValueRef a) {
  unsigned count = 0;
  char *seen = calloc(t->num_regions + 1, 1);
  if (!seen) abort();
  for (LLVMUseRef u = LLVMGetFirstUse(a); u; u = LLVMGetNextUse(u)) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(LLVMGetUser(u));
    for (unsigned r = 0; r < t->num_regions; r++)
      if (!seen[r] && block_in_region(&t->regions[r], bb)) {
        seen[r] = 1;
        count++;
      }
  }
  free(seen);
  return count;
}

static int slot_uniform_callback(void *data, LLVMValueRef a) {
  struct transform *t = data;
  for (unsigned i = 0; i < t->num_allocas; i++)
    if (t->allocas[i] == a) return t->alloca_uniform[i];
  return 0;
}

static int region_has_varying_branch(const struct transform *t, const struct uniformity *u,
                                     const struct region *r) {
  for (unsigned i = 0; i < r->blocks.len; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(r->blocks.items[i]);
    if (term && uniformity_branch_varying(u, term)) return 1;
  }
  return 0;
}

/* How each load of uniform slot a in region r reads it. Items run one after
 * another, all storing the same values: a load that no store of this run can
 * precede reads the value the slot had when the region started (read once,
 * before the items run: copy-in); a load that a store always precedes reads
 * the slot itself (it holds this run's value, whoever stored it). A load
 * that may or may not follow a store cannot be served either way: returns
 * 1. Loads of the second kind are added to direct. */
static int classify_slot_loads(const struct region *r, LLVMValueRef a, struct ptr_set *direct) {
  unsigned n = r->blocks.len;
  char *clean = calloc(n + 1, 1), *dirty = calloc(n + 1, 1), *has_store = calloc(n + 1, 1);
  int *work = calloc(2 * (n + 1), sizeof *work);
  if (!clean || !dirty || !has_store || !work) abort();
  for (unsigned i = 0; i < n; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(r->blocks.items[i]); in;
         in = LLVMGetNextInstruction(in))
      if (LLVMIsAStoreInst(in) && LLVMGetOperand(in, 1) == a) has_store[i] = 1;
  /* clean: reachable from the start with no store run yet. */
  unsigned w = 0;
  clean[0] = 1;
  work[w++] = 0;
  while (w) {
    int k = work[--w];
    if (has_store[k]) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(r->blocks.items[k]);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
      int j = block_list_index(&r->blocks, LLVMGetSuccessor(term, s));
      if (j >= 0 && !clean[j]) {
        clean[j] = 1;
        work[w++] = j;
      }
    }
  }
  /* dirty: reachable after a store. */
  for (unsigned i = 0; i < n; i++) {
    if (!has_store[i]) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(r->blocks.items[i]);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
      int j = block_list_index(&r->blocks, LLVMGetSuccessor(term, s));
      if (j >= 0 && !dirty[j]) {
        dirty[j] = 1;
        work[w++] = j;
      }
    }
  }
  while (w) {
    int k = work[--w];
    LLVMValueRef term = LLVMGetBasicBlockTerminator(r->blocks.items[k]);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term); s++) {
      int j = block_list_index(&r->blocks, LLVMGetSuccessor(term, s));
      if (j >= 0 && !dirty[j]) {
        dirty[j] = 1;
        work[w++] = j;
      }
    }
  }
  int reject = 0;
  for (unsigned i = 0; i < n && !reject; i++) {
    int stored_here = 0;
    for (LLVMValueRef in = LLVMGetFirstInstruction(r->blocks.items[i]); in && !reject;
         in = LLVMGetNextInstruction(in)) {
      if (LLVMIsAStoreInst(in) && LLVMGetOperand(in, 1) == a) stored_here = 1;
      if (!LLVMIsALoadInst(in) || LLVMGetOperand(in, 0) != a) continue;
      if (stored_here || (dirty[i] && !clean[i])) ptr_set_add(direct, in);
      else if (dirty[i] && clean[i]) reject = 1;
    }
  }
  free(clean);
  free(dirty);
  free(has_store);
  free(work);
  return reject;
}

/* Decides, for every alloca, between a context array, a region-local
 * scalar and a uniform scalar. Optimistic fixed point: every slot starts
 * uniform and loses that when it stores a varying value or is stored in a
 * region where items take different paths. */
static void classify_allocas(struct transform *t) {
  int *regions_used = calloc(t->num_allocas + 1, sizeof *regions_used);
  if (!regions_used) abort();
  for (unsigned i = 0; i < t->num_allocas; i++) {
    t->alloca_candidate[i] = is_slot(t->allocas[i]);
    regions_used[i] = (int)slot_regions(t, t->allocas[i]);
    t->alloca_uniform[i] = t->alloca_candidate[i];
  }
  struct uniformity u = {.fn = t->fn, .slot_is_uniform = slot_uniform_callback, .slot_data = t};
  char *region_varies = calloc(t->num_regions + 1, 1);
  if (!region_varies) abort();
  for (int changed = 1; changed;) {
    changed = 0;
    uniformity_compute(&u);
    for (unsigned r = 0; r < t->num_regions; r++)
      region_varies[r] = (char)region_has_varying_branch(t, &u, &t->regions[r]);
    for (unsigned i = 0; i < t->num_allocas; i++) {
      if (!t->alloca_uniform[i]) continue;
      int keep = 1;
      for (LLVMUseRef use = LLVMGetFirstUse(t->allocas[i]); use && keep; use = LLVMGetNextUse(use)) {
        LLVMValueRef st = LLVMGetUser(use);
        if (!LLVMIsAStoreInst(st)) continue;
        if (uniformity_is_varying(&u, LLVMGetOperand(st, 0))) keep = 0;
        LLVMBasicBlockRef bb = LLVMGetInstructionParent(st);
        for (unsigned r = 0; r < t->num_regions && keep; r++)
          if (block_in_region(&t->regions[r], bb) &&
              (region_varies[r] ||
               (regions_used[i] > 1 &&
                classify_slot_loads(&t->regions[r], t->allocas[i], &t->direct_loads))))
            keep = 0;
      }
      if (!keep) {
        t->alloca_uniform[i] = 0;
        changed = 1;
      }
    }
  }
  if (getenv("AQUILA_DEBUG_REGIONS")) {
    size_t len;
    fprintf(stderr, "regions: %s: %u regions\n", LLVMGetValueName2(t->fn, &len), t->num_regions);
    for (unsigned i = 0; i < t->num_allocas; i++) {
      char *txt = LLVMPrintValueToString(t->allocas[i]);
      fprintf(stderr, "  %s: slot %d regions %d uniform %d\n", txt, t->alloca_candidate[i],
              regions_used[i], t->alloca_uniform[i]);
      LLVMDisposeMessage(txt);
    }
  }
  for (unsigned i = 0; i < t->num_allocas; i++) {
    /* Used by one region: every item writes it before reading it there. */
    int local = t->alloca_candidate[i] && regions_used[i] <= 1;
    if (local) t->alloca_uniform[i] = 0;
    t->alloca_per_item[i] = !local && !t->alloca_uniform[i];
  }
  uniformity_free(&u);
  free(region_varies);
  free(regions_used);
}

static LLVMValueRef context_pointer(struct transform *t, unsigned alloca_index, LLVMValueRef lin) {
  LLVMValueRef arr = t->context_arrays[alloca_index];
  return LLVMBuildInBoundsGEP2(t->b, t->context_elems[alloca_index], arr, &lin, 1, "ctx");
}

static LLVMValueRef select_by_dim(struct transform *t, LLVMValueRef dim, LLVMValueRef v[3]) {
  if (LLVMIsAConstantInt(dim)) {
    uint64_t d = LLVMConstIntGetZExtValue(dim);
    return v[d == 0 ? 0 : d == 1 ? 1 : 2];
  }
  LLVMValueRef is0 = LLVMBuildICmp(t->b, LLVMIntEQ, dim, LLVMConstInt(LLVMTypeOf(dim), 0, 0), "");
  LLVMValueRef is1 = LLVMBuildICmp(t->b, LLVMIntEQ, dim, LLVMConstInt(LLVMTypeOf(dim), 1, 0), "");
  return LLVMBuildSelect(t->b, is0, v[0], LLVMBuildSelect(t->b, is1, v[1], v[2], ""), "");
}

/* Original values to their clones within one block, in cloning order. */
struct value_map {
  LLVMValueRef *from, *to;
  unsigned count, cap;
};

static void value_map_add(struct value_map *m, LLVMValueRef from, LLVMValueRef to) {
  if (m->count == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 64;
    m->from = realloc(m->from, m->cap * sizeof *m->from);
    m->to = realloc(m->to, m->cap * sizeof *m->to);
    if (!m->from || !m->to) abort();
  }
  m->from[m->count] = from;
  m->to[m->count++] = to;
}

/* Emits region r's work-item loop nest with a clone of its blocks. Returns
 * the loop's preheader; after the last work-item control goes to dispatch. */
/* The instructions of the largest loop in the region's blocks (a cycle
 * that passes no barrier), counted along the path a depth-first search
 * takes from its header to its latch; 0 when there is no loop. */
static unsigned region_loop_size(const struct region *reg) {
  unsigned n = reg->blocks.len;
  if (n > 4096) return 0;
  unsigned char *state = calloc(n ? n : 1, 1); /* 0 new, 1 on the path, 2 done */
  unsigned *stack = calloc(n ? n : 1, sizeof *stack),
           *next_succ = calloc(n ? n : 1, sizeof *next_succ);
  unsigned *size = calloc(n ? n : 1, sizeof *size), *path = calloc(n + 1, sizeof *path);
  if (!state || !stack || !next_succ || !size || !path) abort();
  for (unsigned i = 0; i < n; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(reg->blocks.items[i]); in;
         in = LLVMGetNextInstruction(in))
      size[i]++;
  unsigned largest = 0;
  for (unsigned root = 0; root < n; root++) {
    if (state[root]) continue;
    unsigned depth = 0;
    stack[depth] = root;
    path[depth + 1] = path[depth] + size[root]; /* path[d]: instructions of stack[0 .. d - 1] */
    depth++;
    state[root] = 1;
    while (depth) {
      unsigned b = stack[depth - 1];
      LLVMValueRef term = LLVMGetBasicBlockTerminator(reg->blocks.items[b]);
      unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
      if (next_succ[b] < ns) {
        int c = block_list_index(&reg->blocks, LLVMGetSuccessor(term, next_succ[b]++));
        if (c < 0) continue;
        if (state[c] == 1) {
          unsigned at = 0;
          while (stack[at] != (unsigned)c)
            at++;
          unsigned body = path[depth] - path[at];
          if (body > largest) largest = body;
        } else if (state[c] == 0) {
          state[c] = 1;
          stack[depth] = (unsigned)c;
          path[depth + 1] = path[depth] + size[c];
          depth++;
        }
      } else {
        state[b] = 2;
        depth--;
      }
    }
  }
  free(state);
  free(stack);
  free(next_succ);
  free(size);
  free(path);
  return largest;
}

static int is_fp_type(LLVMTypeRef ty) {
  if (LLVMGetTypeKind(ty) == LLVMVectorTypeKind) ty = LLVMGetElementType(ty);
  LLVMTypeKind k = LLVMGetTypeKind(ty);
  return k == LLVMFloatTypeKind || k == LLVMDoubleTypeKind || k == LLVMHalfTypeKind;
}

/* Whether v is a floating-point add or subtract, or llvm.fma /
 * llvm.fmuladd or OpenCL C's mad and fma (not inlined yet here; a kernel
 * that calls mad itself, and SPIR-V, whose translator turns every
 * llvm.fmuladd into mad), one of whose operands is carried from elsewhere
 * in the function: a phi, or (the region's values are in memory by now) a
 * load of a stack slot. */
static int fp_accumulation(LLVMValueRef v) {
  if (!LLVMIsAInstruction(v) || !is_fp_type(LLVMTypeOf(v))) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  int n = LLVMGetNumOperands(v);
  if (op == LLVMCall) {
    LLVMValueRef callee = LLVMGetCalledValue(v);
    size_t len = 0;
    const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
    if (strncmp(name, "llvm.fma.", 9) && strncmp(name, "llvm.fmuladd.", 13) &&
        strncmp(name, "_Z3mad", 6) && strncmp(name, "_Z3fma", 6))
      return 0;
    n--; /* the callee */
  } else if (op != LLVMFAdd && op != LLVMFSub) {
    return 0;
  }
  for (int i = 0; i < n; i++) {
    LLVMValueRef o = LLVMGetOperand(v, (unsigned)i);
    if (LLVMIsAPHINode(o) || (LLVMIsALoadInst(o) && LLVMIsAAllocaInst(LLVMGetOperand(o, 0))))
      return 1;
  }
  return 0;
}

/* Whether the region accumulates a floating-point value (a dot product's
 * sum): a chain each step of its loop waits on. */
static int region_has_fp_chain(const struct region *reg) {
  for (unsigned i = 0; i < reg->blocks.len; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(reg->blocks.items[i]); in;
         in = LLVMGetNextInstruction(in))
      if (fp_accumulation(in)) return 1;
  return 0;
}

/* Asks LLVM to unroll the loop whose latch branch is br count times and
 * jam the copies of the loop inside it: two rows of vectors run the inner
 * loop side by side, and what they load alike (CLBlast's GEMM: the
 * shuffled A tile, the same for every row of a group) is loaded and
 * shuffled once for both. */
#define REGION_JAM_MIN_LOOP 64
/* A small inner loop that carries a floating-point chain (a 16 x 16
 * tile's dot products: one accumulator per row, a chain of dependent FMAs
 * each), in rows that are one vector each, a constant number of them: the
 * rows' loops run jammed, as many as fit in this many instructions, so
 * that the chains overlap instead of each waiting out its own FMA's
 * latency. MatrixMul 1024: 16 rows jammed 18.3-19.1 ms against 20.3-23.1
 * (8 rows: 19.3-20.6). Loops without such a chain (clFFT's transposes)
 * gain nothing from it. */
#define REGION_JAM_ROWS_BUDGET 512

static void mark_unroll_and_jam(LLVMContextRef ctx, LLVMValueRef br, unsigned count) {
  LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
  const char *key = "llvm.loop.unroll_and_jam.count";
  LLVMMetadataRef ops[2] = {
      LLVMMDStringInContext2(ctx, key, strlen(key)),
      LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ctx), count, 0))};
  LLVMMetadataRef loop_ops[2] = {self, LLVMMDNodeInContext2(ctx, ops, 2)};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(ctx, loop_ops, 2);
  LLVMMetadataReplaceAllUsesWith(self, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(ctx, loop));
}

static LLVMBasicBlockRef emit_region(struct transform *t, unsigned r, LLVMBasicBlockRef dispatch) {
  struct region *reg = &t->regions[r];
  LLVMContextRef ctx = t->ctx;
  LLVMValueRef fn = t->fn;
  LLVMBasicBlockRef pre = LLVMAppendBasicBlockInContext(ctx, fn, "region");
  if (is_barrier_block(reg->start)) {
    /* Two barriers in a row: nothing runs in between. */
    LLVMBasicBlockRef after = LLVMGetSuccessor(LLVMGetBasicBlockTerminator(reg->start), 0);
    LLVMPositionBuilderAtEnd(t->b, pre);
    LLVMBuildStore(t->b, LLVMConstInt(t->i32, (unsigned)region_of_start(t, after), 0), t->next_slot);
    LLVMBuildBr(t->b, dispatch);
    return pre;
  }
  LLVMBasicBlockRef zh = LLVMAppendBasicBlockInContext(ctx, fn, "region.z");
  LLVMBasicBlockRef yh = LLVMAppendBasicBlockInContext(ctx, fn, "region.y");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(ctx, fn, "region.x");
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0), one = LLVMConstInt(t->i32, 1, 0);

  /* Uniform slots are read once, before the items run: every item would
   * read the same value, and the items' stores (all alike) must not be seen
   * by items later in this run. */
  LLVMPositionBuilderAtEnd(t->b, pre);
  LLVMValueRef *uniform_value = calloc(t->num_allocas + 1, sizeof *uniform_value);
  if (!uniform_value) abort();
  for (unsigned i = 0; i < t->num_allocas; i++)
    if (t->alloca_uniform[i])
      uniform_value[i] = LLVMBuildLoad2(t->b, LLVMGetAllocatedType(t->allocas[i]), t->allocas[i],
                                        "uniform");
  LLVMBuildBr(t->b, zh);
  LLVMPositionBuilderAtEnd(t->b, zh);
  LLVMValueRef z = LLVMBuildPhi(t->b, t->i32, "z");
  LLVMBuildBr(t->b, yh);
  LLVMPositionBuilderAtEnd(t->b, yh);
  LLVMValueRef y = LLVMBuildPhi(t->b, t->i32, "y");
  LLVMBuildBr(t->b, xb);
  LLVMPositionBuilderAtEnd(t->b, xb);
  LLVMValueRef x = LLVMBuildPhi(t->b, t->i32, "x");
  LLVMValueRef xv = LLVMBuildZExt(t->b, x, t->i64, "");
  if (t->width > 1) xv = LLVMBuildUDiv(t->b, xv, LLVMConstInt(t->i64, t->width, 0), "");
  LLVMValueRef lin = LLVMBuildAdd(
      t->b, xv,
      LLVMBuildMul(t->b, t->vectors_x,
                   LLVMBuildAdd(t->b, LLVMBuildZExt(t->b, y, t->i64, ""),
                                LLVMBuildMul(t->b, LLVMBuildZExt(t->b, t->size[1], t->i64, ""),
                                             LLVMBuildZExt(t->b, z, t->i64, ""), ""),
                                ""),
                   ""),
      "lin");
  LLVMValueRef *ctx_ptr = calloc(t->num_allocas ? t->num_allocas : 1, sizeof *ctx_ptr);
  if (!ctx_ptr) abort();
  for (unsigned i = 0; i < t->num_allocas; i++)
    if (t->alloca_per_item[i]) ctx_ptr[i] = context_pointer(t, i, lin);
  LLVMValueRef ids[3] = {
      LLVMBuildZExt(t->b, x, t->i64, ""),
      LLVMBuildMul(t->b, LLVMBuildZExt(t->b, y, t->i64, ""), LLVMConstInt(t->i64, t->rows, 0), ""),
      LLVMBuildZExt(t->b, z, t->i64, "")};

  /* Clone the blocks. */
  unsigned nb = reg->blocks.len;
  LLVMBasicBlockRef *clones = calloc(nb, sizeof *clones);
  if (!clones) abort();
  for (unsigned i = 0; i < nb; i++) clones[i] = LLVMAppendBasicBlockInContext(ctx, fn, "");
  LLVMBasicBlockRef xl = LLVMAppendBasicBlockInContext(ctx, fn, "region.x.latch");
  LLVMBasicBlockRef *barrier_exits = calloc(t->num_regions, sizeof *barrier_exits);
  LLVMBasicBlockRef ret_exit = NULL;
  if (!barrier_exits) abort();
  LLVMPositionBuilderAtEnd(t->b, xb);
  LLVMBuildBr(t->b, clones[0]);

  for (unsigned i = 0; i < nb; i++) {
    LLVMBasicBlockRef orig = reg->blocks.items[i];
    /* Block-local values only: map them as they are cloned. */
    struct value_map map = {0};
    LLVMPositionBuilderAtEnd(t->b, clones[i]);
    for (LLVMValueRef in = LLVMGetFirstInstruction(orig); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef c = NULL;
      if (LLVMIsALoadInst(in) && !ptr_set_has(&t->direct_loads, in))
        for (unsigned a = 0; a < t->num_allocas && !c; a++)
          if (uniform_value[a] && LLVMGetOperand(in, 0) == t->allocas[a]) c = uniform_value[a];
      if (c) {
        value_map_add(&map, in, c);
        continue;
      }
      c = LLVMInstructionClone(in);
      LLVMInsertIntoBuilder(t->b, c);
      int nops = LLVMGetNumOperands(c);
      for (int k = 0; k < nops; k++) {
        LLVMValueRef op = LLVMGetOperand(c, (unsigned)k);
        if (!op || LLVMIsABasicBlock(op)) continue;
        for (unsigned m = 0; m < map.count; m++)
          if (map.from[m] == op) {
            LLVMSetOperand(c, (unsigned)k, map.to[m]);
            op = NULL;
            break;
          }
        if (op && LLVMIsAAllocaInst(op))
          for (unsigned a = 0; a < t->num_allocas; a++)
            if (t->allocas[a] == op && ctx_ptr[a]) LLVMSetOperand(c, (unsigned)k, ctx_ptr[a]);
      }
      value_map_add(&map, in, c);
    }
    free(map.from);
    free(map.to);
  }

  /* Successors, returns and local ids of the clones. */
  for (unsigned i = 0; i < nb; i++) {
    LLVMValueRef in = LLVMGetFirstInstruction(clones[i]);
    while (in) {
      LLVMValueRef next = LLVMGetNextInstruction(in);
      if (is_named_call(in, "__aquila_local_id")) {
        LLVMPositionBuilderBefore(t->b, in);
        LLVMValueRef v = select_by_dim(t, LLVMGetOperand(in, 0), ids);
        if (LLVMTypeOf(v) != LLVMTypeOf(in)) v = LLVMBuildIntCast2(t->b, v, LLVMTypeOf(in), 0, "");
        LLVMReplaceAllUsesWith(in, v);
        LLVMInstructionEraseFromParent(in);
      } else if (LLVMIsAReturnInst(in)) {
        if (!ret_exit) {
          ret_exit = LLVMAppendBasicBlockInContext(ctx, fn, "region.done");
          LLVMPositionBuilderAtEnd(t->b, ret_exit);
          LLVMBuildBr(t->b, xl);
        }
        LLVMPositionBuilderBefore(t->b, in);
        LLVMBuildBr(t->b, ret_exit);
        LLVMInstructionEraseFromParent(in);
      } else if (LLVMIsATerminatorInst(in)) {
        unsigned ns = LLVMGetNumSuccessors(in);
        for (unsigned s = 0; s < ns; s++) {
          LLVMBasicBlockRef succ = LLVMGetSuccessor(in, s);
          int idx = block_list_index(&reg->blocks, succ);
          if (idx >= 0) {
            LLVMSetSuccessor(in, s, clones[idx]);
            continue;
          }
          /* A barrier: the region after it runs next. */
          LLVMBasicBlockRef after = LLVMGetSuccessor(LLVMGetBasicBlockTerminator(succ), 0);
          int target = region_of_start(t, after);
          if (!barrier_exits[target]) {
            barrier_exits[target] = LLVMAppendBasicBlockInContext(ctx, fn, "region.barrier");
            LLVMPositionBuilderAtEnd(t->b, barrier_exits[target]);
            LLVMBuildBr(t->b, xl);
          }
          LLVMSetSuccessor(in, s, barrier_exits[target]);
        }
      }
      in = next;
    }
  }

  /* Latches. Which region comes next is the same for every work-item
   * (barriers are uniform); with more than one way out, each work-item
   * records its own in exit_ids rather than all storing to one place under
   * a condition, which would keep the loop vectorizer away. */
  LLVMBasicBlockRef yl = LLVMAppendBasicBlockInContext(ctx, fn, "region.y.latch");
  LLVMBasicBlockRef zl = LLVMAppendBasicBlockInContext(ctx, fn, "region.z.latch");
  LLVMBasicBlockRef end = LLVMAppendBasicBlockInContext(ctx, fn, "region.end");
  unsigned num_exits = ret_exit ? 1 : 0;
  int only_target = ret_exit ? (int)t->num_regions : -1;
  for (unsigned e = 0; e < t->num_regions; e++)
    if (barrier_exits[e]) {
      num_exits++;
      only_target = (int)e;
    }
  LLVMPositionBuilderAtEnd(t->b, xl);
  if (num_exits > 1) {
    LLVMValueRef id = LLVMBuildPhi(t->b, t->i32, "exit.id");
    for (unsigned e = 0; e <= t->num_regions; e++) {
      LLVMBasicBlockRef from = e < t->num_regions ? barrier_exits[e] : ret_exit;
      if (!from) continue;
      LLVMValueRef v = LLVMConstInt(t->i32, e, 0);
      LLVMAddIncoming(id, &v, &from, 1);
    }
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(t->b, t->i32, t->exit_ids, &lin, 1, "");
    LLVMBuildStore(t->b, id, slot);
  }
  LLVMValueRef xn = LLVMBuildNUWAdd(t->b, x, LLVMConstInt(t->i32, t->width, 0), "");
  LLVMValueRef xbr =
      LLVMBuildCondBr(t->b, LLVMBuildICmp(t->b, LLVMIntULT, xn, t->size[0], ""), xb, yl);
  LLVMPositionBuilderAtEnd(t->b, yl);
  LLVMValueRef yn = LLVMBuildNUWAdd(t->b, y, one, "");
  LLVMValueRef ybr =
      LLVMBuildCondBr(t->b, LLVMBuildICmp(t->b, LLVMIntULT, yn, t->size[1], ""), yh, zl);
  /* A vectorized region with a loop inside: two vectors of work-items run
   * it side by side, along x, or along y when a row is one vector (a
   * required size of the vector's width: the x loop folds away). */
  const char *jam_env = getenv("AQUILA_REGION_JAM");
  unsigned loop_size = t->width > 1 ? region_loop_size(reg) : 0;
  /* AQUILA_REGION_JAM=N (an experiment): every such loop, N times; 0:
   * none. */
  unsigned forced = jam_env ? (unsigned)atoi(jam_env) : 0;
  int one_vector_rows =
      LLVMIsAConstantInt(t->size[0]) && LLVMConstIntGetZExtValue(t->size[0]) == t->width;
  unsigned jam = 0;
  if (forced >= 2 && loop_size > 0) {
    jam = forced;
  } else if (!(jam_env && !strcmp(jam_env, "0")) && loop_size > 0) {
    if (loop_size >= REGION_JAM_MIN_LOOP) {
      jam = 2;
    } else if (one_vector_rows && LLVMIsAConstantInt(t->size[1]) && region_has_fp_chain(reg)) {
      unsigned rows = (unsigned)LLVMConstIntGetZExtValue(t->size[1]);
      for (jam = 1; jam * 2 <= rows && rows % (jam * 2) == 0 &&
                    jam * 2 * loop_size <= REGION_JAM_ROWS_BUDGET;
           jam *= 2) {
      }
      if (jam < 4) jam = 0;
    }
  }
  if (jam >= 2) mark_unroll_and_jam(ctx, one_vector_rows ? ybr : xbr, jam);
  if (jam > 2 && jam != forced && jam > t->rows_jammed) t->rows_jammed = jam;
  if (getenv("AQUILA_DEBUG_REGIONS"))
    fprintf(stderr, "region %u (vectors of %u): inner loop of %u instructions, %u %s jammed\n", r,
            t->width, loop_size, jam >= 2 ? jam : 0, one_vector_rows ? "rows" : "vectors");
  LLVMPositionBuilderAtEnd(t->b, zl);
  LLVMValueRef zn = LLVMBuildNUWAdd(t->b, z, one, "");
  LLVMBuildCondBr(t->b, LLVMBuildICmp(t->b, LLVMIntULT, zn, t->size[2], ""), zh, end);
  LLVMPositionBuilderAtEnd(t->b, end);
  LLVMValueRef next;
  if (num_exits > 1) {
    LLVMValueRef last = LLVMBuildSub(t->b, t->items, LLVMConstInt(t->i64, 1, 0), "");
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(t->b, t->i32, t->exit_ids, &last, 1, "");
    next = LLVMBuildLoad2(t->b, t->i32, slot, "");
  } else {
    next = LLVMConstInt(t->i32, (unsigned)(only_target < 0 ? (int)t->num_regions : only_target), 0);
  }
  LLVMBuildStore(t->b, next, t->next_slot);
  LLVMBuildBr(t->b, dispatch);
  LLVMValueRef zin[2] = {zero, zn}, yin[2] = {zero, yn}, xin[2] = {zero, xn};
  LLVMBasicBlockRef zfrom[2] = {pre, zl}, yfrom[2] = {zh, yl}, xfrom[2] = {yh, xl};
  LLVMAddIncoming(z, zin, zfrom, 2);
  LLVMAddIncoming(y, yin, yfrom, 2);
  LLVMAddIncoming(x, xin, xfrom, 2);
  free(ctx_ptr);
  free(uniform_value);
  free(clones);
  free(barrier_exits);
  return pre;
}

int regions_transform(LLVMContextRef ctx, LLVMValueRef fn, LLVMTypeRef wg_type, LLVMValueRef wg,
                      unsigned width, unsigned rows, const uint32_t reqd[3],
                      struct regions_report *report, struct strbuf *log) {
  struct transform t = {0};
  t.width = width ? width : 1;
  t.ctx = ctx;
  t.fn = fn;
  t.i32 = LLVMInt32TypeInContext(ctx);
  t.i64 = LLVMInt64TypeInContext(ctx);
  t.ptr = LLVMPointerTypeInContext(ctx, 0);
  t.b = LLVMCreateBuilderInContext(ctx);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMValueRef entry_term = LLVMGetBasicBlockTerminator(entry);
  if (!entry_term || LLVMGetNumSuccessors(entry_term) != 1) {
    strbuf_append(log, "error: internal: unexpected entry block in barrier transformation\n");
    LLVMDisposeBuilder(t.b);
    return -1;
  }

  /* Regions: after the entry, and after each barrier. */
  struct block_list originals = {0};
  for (LLVMBasicBlockRef bb = LLVMGetNextBasicBlock(entry); bb; bb = LLVMGetNextBasicBlock(bb))
    block_list_push(&originals, bb);
  t.regions = calloc(originals.len + 1, sizeof *t.regions);
  if (!t.regions) abort();
  t.regions[t.num_regions++].start = LLVMGetSuccessor(entry_term, 0);
  for (unsigned i = 0; i < originals.len; i++) {
    LLVMBasicBlockRef bb = originals.items[i];
    if (!is_barrier_block(bb)) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term || LLVMGetNumSuccessors(term) != 1) {
      strbuf_append(log, "error: internal: a barrier block without a single successor\n");
      free(t.regions);
      free(originals.items);
      LLVMDisposeBuilder(t.b);
      return -1;
    }
    LLVMBasicBlockRef start = LLVMGetSuccessor(term, 0);
    if (region_of_start(&t, start) < 0) t.regions[t.num_regions++].start = start;
  }
  for (unsigned r = 0; r < t.num_regions; r++) collect_region(&t.regions[r]);

  /* Allocas and which of them need a context array. */
  for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in))
    if (LLVMIsAAllocaInst(in)) t.num_allocas++;
  t.allocas = calloc(t.num_allocas + 1, sizeof *t.allocas);
  t.alloca_per_item = calloc(t.num_allocas + 1, sizeof *t.alloca_per_item);
  t.alloca_uniform = calloc(t.num_allocas + 1, sizeof *t.alloca_uniform);
  t.alloca_candidate = calloc(t.num_allocas + 1, sizeof *t.alloca_candidate);
  t.context_arrays = calloc(t.num_allocas + 1, sizeof *t.context_arrays);
  t.context_elems = calloc(t.num_allocas + 1, sizeof *t.context_elems);
  if (!t.allocas || !t.alloca_per_item || !t.alloca_uniform || !t.alloca_candidate ||
      !t.context_arrays || !t.context_elems)
    abort();
  unsigned k = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in))
    if (LLVMIsAAllocaInst(in)) t.allocas[k++] = in;
  classify_allocas(&t);
  if (report) {
    memset(report, 0, sizeof *report);
    report->regions = t.num_regions;
    LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(fn));
    for (unsigned i = 0; i < t.num_allocas; i++) {
      if (t.alloca_uniform[i]) report->uniform_slots++;
      if (!t.alloca_per_item[i]) continue;
      report->context_arrays++;
      report->context_bytes +=
          (unsigned)(LLVMABISizeOfType(td, LLVMGetAllocatedType(t.allocas[i])) / t.width);
    }
  }

  /* Entry: the sizes, one context array per work-item variable, the slot
   * that says which region runs next. */
  LLVMPositionBuilderBefore(t.b, entry_term);
  for (unsigned d = 0; d < 3; d++) {
    LLVMValueRef idx[3] = {LLVMConstInt(t.i32, 0, 0), LLVMConstInt(t.i32, 1 /* local_size */, 0),
                           LLVMConstInt(t.i32, d, 0)};
    LLVMValueRef p = LLVMBuildInBoundsGEP2(t.b, wg_type, wg, idx, 3, "");
    /* A required size is the size: constant loops unroll and fold. */
    t.size[d] = reqd && reqd[d] ? LLVMConstInt(t.i32, reqd[d], 0)
                                : LLVMBuildLoad2(t.b, t.i32, p, "local.size");
  }
  /* Two rows at once: the loops see a group of rows times the width and
   * 1 / rows the height, and y counts row pairs. */
  t.rows = rows > 1 && reqd && reqd[0] * rows == t.width && reqd[1] % rows == 0 ? rows : 1;
  if (t.rows > 1) {
    t.size[0] = LLVMConstInt(t.i32, t.width, 0);
    t.size[1] = LLVMConstInt(t.i32, reqd[1] / t.rows, 0);
  }
  t.vectors_x = LLVMBuildZExt(t.b, t.size[0], t.i64, "");
  if (t.width > 1)
    t.vectors_x = LLVMBuildUDiv(t.b, t.vectors_x, LLVMConstInt(t.i64, t.width, 0), "vectors.x");
  LLVMValueRef items = LLVMBuildMul(
      t.b, t.vectors_x,
      LLVMBuildMul(t.b, LLVMBuildZExt(t.b, t.size[1], t.i64, ""),
                   LLVMBuildZExt(t.b, t.size[2], t.i64, ""), ""),
      "items");
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(LLVMGetGlobalParent(fn));
  for (unsigned i = 0; i < t.num_allocas; i++) {
    if (!t.alloca_per_item[i]) continue;
    /* Every work-item's element keeps the alloca's alignment, which the
     * accesses to it assume (aligned vector moves): an alloca aligned beyond
     * its type's size (clang aligns private arrays of 16 bytes and more to 16;
     * a uchar[20] is 20 bytes) gets elements padded to a multiple of it. */
    LLVMTypeRef elem = LLVMGetAllocatedType(t.allocas[i]);
    unsigned align = LLVMGetAlignment(t.allocas[i]);
    unsigned long long size = LLVMABISizeOfType(td, elem);
    if (align > 1 && size % align)
      elem = LLVMArrayType2(LLVMInt8TypeInContext(ctx), (size + align - 1) / align * align);
    LLVMValueRef arr = LLVMBuildArrayAlloca(t.b, elem, items, "context");
    LLVMSetAlignment(arr, align > 64 ? align : 64);
    t.context_arrays[i] = arr;
    t.context_elems[i] = elem;
  }
  t.items = items;
  t.exit_ids = LLVMBuildArrayAlloca(t.b, t.i32, items, "exit.ids");
  LLVMSetAlignment(t.exit_ids, 64);
  t.next_slot = LLVMBuildAlloca(t.b, t.i32, "next.region");
  LLVMBuildStore(t.b, LLVMConstInt(t.i32, 0, 0), t.next_slot);
  LLVMBasicBlockRef dispatch = LLVMAppendBasicBlockInContext(ctx, fn, "dispatch");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, fn, "done");
  LLVMInstructionEraseFromParent(entry_term);
  LLVMPositionBuilderAtEnd(t.b, entry);
  LLVMBuildBr(t.b, dispatch);

  LLVMBasicBlockRef *pre = calloc(t.num_regions, sizeof *pre);
  if (!pre) abort();
  for (unsigned r = 0; r < t.num_regions; r++) pre[r] = emit_region(&t, r, dispatch);
  if (report) report->rows_jammed = t.rows_jammed;
  LLVMPositionBuilderAtEnd(t.b, dispatch);
  LLVMValueRef next = LLVMBuildLoad2(t.b, t.i32, t.next_slot, "next");
  LLVMValueRef sw = LLVMBuildSwitch(t.b, next, done, t.num_regions);
  for (unsigned r = 0; r < t.num_regions; r++)
    LLVMAddCase(sw, LLVMConstInt(t.i32, r, 0), pre[r]);
  LLVMPositionBuilderAtEnd(t.b, done);
  LLVMBuildRetVoid(t.b);

  /* The originals are now unreachable: drop them. */
  for (unsigned i = 0; i < originals.len; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(originals.items[i]); in;
         in = LLVMGetNextInstruction(in))
      if (LLVMTypeOf(in) != LLVMVoidTypeInContext(ctx))
        LLVMReplaceAllUsesWith(in, LLVMGetPoison(LLVMTypeOf(in)));
  /* Their branches name one another: cut them all before freeing any, or
   * freeing one block leaves another's branch pointing into freed memory,
   * which the second deletion then writes to (a heap corruption that
   * surfaced in clFFT's kernels). */
  for (unsigned i = 0; i < originals.len; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(originals.items[i]);
    if (term) LLVMInstructionEraseFromParent(term);
  }
  for (unsigned i = 0; i < originals.len; i++) LLVMDeleteBasicBlock(originals.items[i]);
  for (unsigned i = 0; i < t.num_allocas; i++)
    if (t.alloca_per_item[i]) LLVMInstructionEraseFromParent(t.allocas[i]);

  int status = 0;
  if (LLVMVerifyFunction(fn, LLVMReturnStatusAction)) {
    strbuf_append(log, "error: internal: the barrier transformation produced invalid code\n");
    status = -1;
  }
  for (unsigned r = 0; r < t.num_regions; r++) free(t.regions[r].blocks.items);
  free(t.regions);
  free(originals.items);
  free(t.allocas);
  free(t.alloca_per_item);
  free(t.alloca_uniform);
  free(t.alloca_candidate);
  ptr_set_free(&t.direct_loads);
  free(t.context_arrays);
  free(t.context_elems);
  free(pre);
  LLVMDisposeBuilder(t.b);
  return status;
}
