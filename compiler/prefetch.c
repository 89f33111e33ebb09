/* Software prefetch of the next tile, for loops with barriers.
 *
 * A tiled kernel (CLBlast's Xgemm, a tiled matrix product) runs a loop
 * whose every iteration copies a tile of global memory into __local
 * memory, waits at a barrier, computes on the tile and waits again. Each
 * row of a tile lies on a page of its own, so the hardware prefetcher,
 * which follows streams within a page and only a few dozen of them, does
 * not see the next tile coming: every copy phase waits for its lines from
 * the last-level cache or memory, with few misses in flight (Xgemm, 1024^3
 * on an Intel Xeon: 39% of its time on the tile loads, the FMA loop the
 * rest). The address a load will read in the loop's next iteration is the
 * same expression with each induction variable one step further, so each
 * wide global load in such a loop gets a prefetch of that address: the
 * lines arrive in L2 while the compute phase runs.
 *
 * Prefetches never fault and change no result, so the next address may
 * lie past the data (the last iteration's) and the expression is rebuilt
 * without wrap or inbounds flags. Only pure integer and address
 * arithmetic over the loop's induction variables and values from outside
 * the loop qualifies; anything else (a load, a call, another phi) leaves
 * the load as it is. */
#include "prefetch.h"

#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "ptrmap.h"

#define MAX_NODES 48      /* instructions in one rebuilt address */
#define MAX_PER_LOOP 64   /* prefetches added to one loop */
#define LINE 64           /* bytes per cache line */
#define MIN_LOAD_BYTES 16 /* narrower loads are per work-item: a prefetch each would cost more */
#define LOCALITY_L2 2     /* llvm.prefetch locality 2: prefetcht1, into L2 */

struct next_address {
  const struct cfg *g;
  int loop;
  LLVMBuilderRef b;
  struct ptr_map memo;  /* value -> its value in the next iteration */
  struct ptr_map moved; /* value -> 1 + whether it depends on a header phi, 3 while asked */
  unsigned nodes;
  int moves;       /* depends on an induction variable */
  LLVMValueRef at; /* the load */
};

static int in_loop(struct next_address *na, LLVMValueRef v) {
  if (!LLVMIsAInstruction(v)) return 0;
  int b = cfg_number(na->g, LLVMGetInstructionParent(v));
  return b >= 0 && cfg_in_loop(na->g, na->loop, b);
}

/* Whether v may be used right before instruction at. */
static int available_at(struct next_address *na, LLVMValueRef v, LLVMValueRef at) {
  if (!LLVMIsAInstruction(v)) return 1;
  int vb = cfg_number(na->g, LLVMGetInstructionParent(v));
  int ab = cfg_number(na->g, LLVMGetInstructionParent(at));
  if (vb < 0 || ab < 0) return 0;
  if (vb != ab) return cfg_dominates(na->g, vb, ab);
  for (LLVMValueRef in = LLVMGetNextInstruction(v); in; in = LLVMGetNextInstruction(in))
    if (in == at) return 1;
  return 0;
}

static int moves(struct next_address *na, LLVMValueRef v, unsigned depth);
static int pure_instruction(LLVMValueRef v);
static LLVMValueRef rebuild(struct next_address *na, LLVMValueRef v, LLVMValueRef *ops);

/* A work-item query (__aquila_local_size(0) ...): the same anywhere in the
 * function. */
static int is_query(LLVMValueRef v) {
  if (!LLVMIsACallInst(v)) return 0;
  LLVMValueRef callee = LLVMGetCalledValue(v);
  size_t len = 0;
  const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
  if (strncmp(name, "__aquila_", 9) || !strcmp(name, "__aquila_barrier")) return 0;
  unsigned n = (unsigned)LLVMGetNumArgOperands(v);
  for (unsigned i = 0; i < n; i++)
    if (!LLVMIsAConstant(LLVMGetOperand(v, i))) return 0;
  return 1;
}

/* A load of a kernel argument: from the kernarg segment, the work-item
 * function's first parameter, at a constant offset. The segment does not
 * change while the kernel runs. */
static int is_kernel_argument(struct next_address *na, LLVMValueRef v) {
  if (!LLVMIsALoadInst(v) || LLVMGetVolatile(v)) return 0;
  LLVMValueRef p = LLVMGetOperand(v, 0);
  if (LLVMIsAGetElementPtrInst(p)) {
    unsigned n = (unsigned)LLVMGetNumOperands(p);
    for (unsigned i = 1; i < n; i++)
      if (!LLVMIsAConstantInt(LLVMGetOperand(p, i))) return 0;
    p = LLVMGetOperand(p, 0);
  }
  return p == LLVMGetParam(na->g->fn, 0);
}

/* The step of an induction, computed at the load: a copy of its
 * computation, down to the work-item queries it starts from. A step is
 * typically computed in the latch, after the load, often from a query
 * made elsewhere; using that query's value at the load would make it live
 * from one barrier region into another, a context slot that keeps LLVM
 * from unrolling and jamming the loops that use it. NULL when the step
 * takes more than pure arithmetic on queries and values available at the
 * load. */
static LLVMValueRef available(struct next_address *na, LLVMValueRef v, unsigned depth) {
  if (!LLVMIsAInstruction(v)) return v;
  if (is_kernel_argument(na, v)) {
    LLVMValueRef l = LLVMBuildLoad2(na->b, LLVMTypeOf(v), LLVMGetOperand(v, 0), "");
    LLVMSetAlignment(l, LLVMGetAlignment(v));
    return l;
  }
  if (is_query(v)) {
    unsigned n = (unsigned)LLVMGetNumArgOperands(v);
    LLVMValueRef args[4];
    if (n > 4) return NULL;
    for (unsigned i = 0; i < n; i++)
      args[i] = LLVMGetOperand(v, i);
    return LLVMBuildCall2(na->b, LLVMGetCalledFunctionType(v), LLVMGetCalledValue(v), args, n, "");
  }
  if (depth <= 8 && !LLVMIsAPHINode(v) && pure_instruction(v)) {
    unsigned n = (unsigned)LLVMGetNumOperands(v);
    LLVMValueRef ops[8];
    if (n <= 8) {
      unsigned i = 0;
      for (; i < n; i++)
        if (!(ops[i] = available(na, LLVMGetOperand(v, i), depth + 1))) break;
      if (i == n) return rebuild(na, v, ops);
    }
  }
  return available_at(na, v, na->at) ? v : NULL;
}

/* The value the loop's latch gives phi, rebuilt at the load from phi's
 * value in this iteration: pure arithmetic on phi and on values the same
 * in every iteration, and on the header's phis (i + s; the zext of the
 * next value of a 32-bit counter that a 64-bit one widens). */
static LLVMValueRef latch_value(struct next_address *na, LLVMValueRef phi, LLVMValueRef v,
                                unsigned depth) {
  if (v == phi || !in_loop(na, v)) return v;
  /* The header's phis hold this iteration's values (a 64-bit counter and
   * the 32-bit one it is widened from). */
  if (LLVMIsAPHINode(v) &&
      cfg_number(na->g, LLVMGetInstructionParent(v)) == na->g->loops[na->loop].header)
    return v;
  if (!moves(na, v, 0)) return available(na, v, 0);
  if (depth > 8 || LLVMIsAPHINode(v) || !pure_instruction(v)) return NULL;
  unsigned n = (unsigned)LLVMGetNumOperands(v);
  LLVMValueRef ops[8];
  if (n > 8) return NULL;
  for (unsigned i = 0; i < n; i++)
    if (!(ops[i] = latch_value(na, phi, LLVMGetOperand(v, i), depth + 1))) return NULL;
  return rebuild(na, v, ops);
}

/* For a phi of the loop's header: its value in the next iteration, built at
 * the load, or NULL. */
static LLVMValueRef induction_step(struct next_address *na, LLVMValueRef phi) {
  const struct cfg_loop *l = &na->g->loops[na->loop];
  if (cfg_number(na->g, LLVMGetInstructionParent(phi)) != l->header || LLVMCountIncoming(phi) != 2)
    return NULL;
  LLVMValueRef next = NULL;
  for (unsigned i = 0; i < 2; i++) {
    int from = cfg_number(na->g, LLVMGetIncomingBlock(phi, i));
    if (from < 0 || !cfg_in_loop(na->g, na->loop, from)) continue;
    if (next) return NULL; /* two back edges */
    next = latch_value(na, phi, LLVMGetIncomingValue(phi, i), 0);
    if (!next) return NULL;
  }
  return next;
}

/* Pure and unable to trap: divisions only by a constant other than 0 and
 * -1. */
static int pure_instruction(LLVMValueRef v) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  switch (op) {
  case LLVMSDiv:
  case LLVMUDiv:
  case LLVMSRem:
  case LLVMURem: {
    LLVMValueRef d = LLVMGetOperand(v, 1);
    return LLVMIsAConstantInt(d) && LLVMConstIntGetZExtValue(d) != 0 &&
           LLVMConstIntGetSExtValue(d) != -1;
  }
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMGetElementPtr:
  case LLVMICmp:
  case LLVMSelect:
  case LLVMFreeze:
    return 1;
  default:
    return 0;
  }
}

/* A copy of the pure instruction v on operands ops, without wrap,
 * exactness or inbounds flags (its operands may be another iteration's). */
static LLVMValueRef rebuild(struct next_address *na, LLVMValueRef v, LLVMValueRef *ops) {
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  unsigned n = (unsigned)LLVMGetNumOperands(v);
  switch (op) {
  case LLVMGetElementPtr:
    return LLVMBuildGEP2(na->b, LLVMGetGEPSourceElementType(v), ops[0], ops + 1, n - 1, "");
  case LLVMICmp:
    return LLVMBuildICmp(na->b, LLVMGetICmpPredicate(v), ops[0], ops[1], "");
  case LLVMSelect:
    return LLVMBuildSelect(na->b, ops[0], ops[1], ops[2], "");
  case LLVMFreeze:
    return LLVMBuildFreeze(na->b, ops[0], "");
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
    return LLVMBuildCast(na->b, op, ops[0], LLVMTypeOf(v), "");
  default:
    return LLVMBuildBinOp(na->b, op, ops[0], ops[1], "");
  }
}

/* Whether v changes from one iteration to the next: whether it depends,
 * inside the loop, on a phi of the loop's header. Values that do not are
 * used as they are (a work-item query, a phi of an inlined builtin's
 * branches), even where they come from the loop's own blocks. */
static int moves(struct next_address *na, LLVMValueRef v, unsigned depth) {
  if (!in_loop(na, v)) return 0;
  uintptr_t known = (uintptr_t)ptr_map_get(&na->moved, v);
  if (known) return known == 2;
  if (depth > 64) return 1;
  const struct cfg_loop *l = &na->g->loops[na->loop];
  if (LLVMIsAPHINode(v) && cfg_number(na->g, LLVMGetInstructionParent(v)) == l->header) {
    ptr_map_put(&na->moved, v, (void *)2);
    return 1;
  }
  ptr_map_put(&na->moved, v, (void *)3); /* a cycle through v adds nothing */
  int r = 0;
  unsigned n = (unsigned)LLVMGetNumOperands(v);
  for (unsigned i = 0; i < n && !r; i++) {
    LLVMValueRef op = LLVMGetOperand(v, i);
    if (LLVMIsAInstruction(op)) r = moves(na, op, depth + 1);
  }
  ptr_map_put(&na->moved, v, (void *)(uintptr_t)(r ? 2 : 1));
  return r;
}

/* v's value one iteration later, built before the builder's position; NULL
 * when v is not pure arithmetic over induction variables and invariants. */
static LLVMValueRef next_value(struct next_address *na, LLVMValueRef v) {
  if (!moves(na, v, 0)) return v;
  LLVMValueRef done = ptr_map_get(&na->memo, v);
  if (done) return done;
  if (++na->nodes > MAX_NODES) return NULL;
  LLVMValueRef r = NULL;
  if (LLVMIsAPHINode(v)) {
    r = induction_step(na, v);
    if (!r) return NULL;
    na->moves = 1;
  } else {
    if (!pure_instruction(v)) return NULL;
    unsigned n = (unsigned)LLVMGetNumOperands(v);
    LLVMValueRef ops[8];
    if (n > 8) return NULL;
    for (unsigned i = 0; i < n; i++)
      if (!(ops[i] = next_value(na, LLVMGetOperand(v, i)))) return NULL;
    r = rebuild(na, v, ops);
  }
  ptr_map_put(&na->memo, v, r);
  return r;
}

static int calls_barrier(LLVMBasicBlockRef bb) {
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
    if (!LLVMIsACallInst(in)) continue;
    LLVMValueRef callee = LLVMGetCalledValue(in);
    size_t len;
    if (LLVMIsAFunction(callee) && !strcmp(LLVMGetValueName2(callee, &len), "__aquila_barrier"))
      return 1;
  }
  return 0;
}

static LLVMValueRef prefetch_function(LLVMModuleRef m, LLVMTypeRef ptr) {
  unsigned id = LLVMLookupIntrinsicID("llvm.prefetch", 13);
  return LLVMGetIntrinsicDeclaration(m, id, &ptr, 1);
}

unsigned prefetch_next_tiles(LLVMModuleRef m, LLVMValueRef fn) {
  const char *e = getenv("AQUILA_PREFETCH");
  if (e && !strcmp(e, "0")) return 0;
  struct cfg g;
  if (cfg_build(&g, fn)) return 0;
  unsigned added = 0;
  unsigned char *with_barrier = calloc(g.num_loops ? g.num_loops : 1, 1);
  unsigned *per_loop = calloc(g.num_loops ? g.num_loops : 1, sizeof *per_loop);
  if (!with_barrier || !per_loop) abort();
  for (unsigned b = 0; b < g.n; b++)
    if (g.loop[b] >= 0 && calls_barrier(g.blocks[b]))
      for (int l = g.loop[b]; l >= 0; l = g.loops[l].parent)
        with_barrier[l] = 1;
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(m);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i8 = LLVMInt8TypeInContext(ctx);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  for (unsigned bi = 0; bi < g.n; bi++) {
    int l = g.loop[bi];
    /* The loop that holds the load directly: a load in a loop nested in
     * the tiled one would prefetch that inner loop's next step. */
    if (l < 0 || !with_barrier[l]) continue;
    for (LLVMValueRef in = LLVMGetFirstInstruction(g.blocks[bi]); in;
         in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsALoadInst(in) || LLVMGetVolatile(in) ||
          LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)
        continue;
      LLVMValueRef addr = LLVMGetOperand(in, 0);
      LLVMTypeRef pt = LLVMTypeOf(addr);
      if (LLVMGetTypeKind(pt) != LLVMPointerTypeKind || LLVMGetPointerAddressSpace(pt) != 1)
        continue;
      unsigned long long size = LLVMStoreSizeOfType(td, LLVMTypeOf(in));
      if (size < MIN_LOAD_BYTES || per_loop[l] >= MAX_PER_LOOP) continue;
      struct next_address na = {.g = &g, .loop = l, .b = b, .at = in};
      LLVMPositionBuilderBefore(b, in);
      LLVMValueRef next = next_value(&na, addr);
      ptr_map_free(&na.memo);
      ptr_map_free(&na.moved);
      /* Instructions built for an address that then failed stay unused:
       * the optimization pipeline removes them. */
      if (!next || !na.moves) continue;
      LLVMValueRef pf = prefetch_function(m, pt);
      LLVMTypeRef pf_type = LLVMGlobalGetValueType(pf);
      /* Each line the load touches: its lines from the first byte and,
       * for a load of a line or more, its last byte (an unaligned one
       * crosses into one more line). */
      unsigned long long offsets[8], count = 0;
      for (unsigned long long off = 0; off < size && count < 7; off += LINE)
        offsets[count++] = off;
      if (size >= LINE) offsets[count++] = size - 1;
      for (unsigned long long k = 0; k < count; k++) {
        LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(ctx), offsets[k], 0);
        LLVMValueRef p = offsets[k] ? LLVMBuildGEP2(b, i8, next, &idx, 1, "") : next;
        LLVMValueRef args[4] = {p, LLVMConstInt(i32, 0, 0), LLVMConstInt(i32, LOCALITY_L2, 0),
                                LLVMConstInt(i32, 1, 0)};
        LLVMBuildCall2(b, pf_type, pf, args, 4, "");
        added++;
      }
      per_loop[l]++;
    }
  }
  LLVMDisposeBuilder(b);
  free(with_barrier);
  free(per_loop);
  cfg_free(&g);
  return added;
}
