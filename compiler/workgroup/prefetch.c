/* Software prefetch where the hardware prefetcher cannot see what comes
 * next.
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
 * the load as it is.
 *
 * A loop without barriers that walks memory by large steps (a recursive
 * filter down an image's columns, one row per iteration) leaves its page
 * at every iteration, and again the hardware prefetcher never gets ahead.
 * There the address's change per iteration is derived (linear arithmetic
 * on the induction variables: adds, products with invariants, GEPs), and
 * when it is 1 KiB or more, or a product with a value known only at run
 * time (a row pitch), each wide global load and store gets a prefetch of
 * its lines a memory latency's worth of iterations ahead. */
#include "workgroup/prefetch.h"

#include <llvm-c/Target.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cfg.h"
#include "support/ptrmap.h"

#define MAX_NODES 48      /* instructions in one rebuilt address */
#define MAX_VISITS 512    /* values looked at for one access */
#define MAX_PER_LOOP 64   /* prefetches added to one loop */
#define LINE 64           /* bytes per cache line */
#define MIN_ACCESS_BYTES 16   /* narrower accesses are per work-item: a prefetch each costs more */
#define STRIDED_MIN_STEP 1024 /* bytes per iteration from which a walk needs prefetches */
/* How far ahead such a walk prefetches: about a memory latency's worth of
 * instructions (100 ns at 4 a nanosecond), in iterations of its loop,
 * within these bounds. */
#define STRIDED_AHEAD_INSTRUCTIONS 400
#define STRIDED_MIN_DISTANCE 4
#define STRIDED_MAX_DISTANCE 32
#define LOCALITY_L2 2     /* llvm.prefetch locality 2: prefetcht1, into L2 */

struct next_address {
  const struct cfg *g;
  int loop;
  LLVMBuilderRef b;
  struct ptr_map memo;  /* value -> its value in the next iteration */
  struct ptr_map moved; /* value -> 1 + whether it depends on a header phi, 3 while asked */
  unsigned nodes;       /* instructions rebuilt or derived for this access */
  unsigned visits;      /* values moves() has looked at for this access */
  int moves;       /* depends on an induction variable */
  LLVMValueRef at; /* the access */
  LLVMTargetDataRef td;
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
  /* Bounded, so that a large kernel's build stays linear in its accesses:
   * past the bound the value counts as moving, and an address built from
   * it fails to rebuild within MAX_NODES. */
  if (depth > 64 || ++na->visits > MAX_VISITS) return 1;
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

/* The sum of the loop-invariant terms the latch adds to a header phi's
 * chain (i + s; zext(j + s) for a 64-bit copy of a 32-bit counter j): its
 * change per iteration, as an i64 built at the load, or NULL. */
static LLVMValueRef phi_step(struct next_address *na, LLVMValueRef v, unsigned depth) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)));
  const struct cfg_loop *l = &na->g->loops[na->loop];
  if (depth > 8) return NULL;
  if (LLVMIsAPHINode(v) && cfg_number(na->g, LLVMGetInstructionParent(v)) == l->header)
    return LLVMConstInt(i64, 0, 0);
  if (!LLVMIsAInstruction(v)) return NULL;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
    return phi_step(na, LLVMGetOperand(v, 0), depth + 1);
  case LLVMAdd:
  case LLVMSub: {
    LLVMValueRef a = LLVMGetOperand(v, 0), c = LLVMGetOperand(v, 1);
    int sub = LLVMGetInstructionOpcode(v) == LLVMSub;
    if (!moves(na, a, 0) && !sub) {
      LLVMValueRef t = a;
      a = c;
      c = t;
    }
    if (moves(na, c, 0) || LLVMGetTypeKind(LLVMTypeOf(c)) != LLVMIntegerTypeKind) return NULL;
    LLVMValueRef rest = phi_step(na, a, depth + 1), s = available(na, c, 0);
    if (!rest || !s) return NULL;
    s = LLVMBuildSExtOrBitCast(na->b, s, i64, "");
    return sub ? LLVMBuildSub(na->b, rest, s, "") : LLVMBuildAdd(na->b, rest, s, "");
  }
  default:
    return NULL;
  }
}

/* How much v, integer or pointer arithmetic that is linear in the loop's
 * induction variables, changes from one iteration to the next: an i64
 * (bytes for pointers) built at the load, or NULL. *runtime is set when
 * the change is a product with a value known only at run time (a row
 * pitch). */
static LLVMValueRef delta_of(struct next_address *na, LLVMValueRef v, int *runtime,
                             unsigned depth) {
  LLVMContextRef ctx = LLVMGetTypeContext(LLVMTypeOf(v));
  LLVMTypeRef i64 = LLVMInt64TypeInContext(ctx);
  if (!moves(na, v, 0)) return LLVMConstInt(i64, 0, 0);
  if (depth > 16 || ++na->nodes > MAX_NODES) return NULL;
  if (LLVMIsAPHINode(v)) {
    const struct cfg_loop *l = &na->g->loops[na->loop];
    if (cfg_number(na->g, LLVMGetInstructionParent(v)) != l->header || LLVMCountIncoming(v) != 2)
      return NULL;
    for (unsigned i = 0; i < 2; i++) {
      int from = cfg_number(na->g, LLVMGetIncomingBlock(v, i));
      if (from >= 0 && cfg_in_loop(na->g, na->loop, from))
        return phi_step(na, LLVMGetIncomingValue(v, i), 0);
    }
    return NULL;
  }
  if (!LLVMIsAInstruction(v)) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  switch (op) {
  case LLVMZExt:
  case LLVMSExt:
  case LLVMTrunc:
    return delta_of(na, LLVMGetOperand(v, 0), runtime, depth + 1);
  case LLVMAdd:
  case LLVMSub: {
    LLVMValueRef a = delta_of(na, LLVMGetOperand(v, 0), runtime, depth + 1);
    LLVMValueRef c = a ? delta_of(na, LLVMGetOperand(v, 1), runtime, depth + 1) : NULL;
    if (!c) return NULL;
    return op == LLVMAdd ? LLVMBuildAdd(na->b, a, c, "") : LLVMBuildSub(na->b, a, c, "");
  }
  case LLVMMul: {
    LLVMValueRef a = LLVMGetOperand(v, 0), c = LLVMGetOperand(v, 1);
    if (moves(na, c, 0)) {
      LLVMValueRef t = a;
      a = c;
      c = t;
    }
    if (moves(na, c, 0)) return NULL;
    LLVMValueRef da = delta_of(na, a, runtime, depth + 1), f = available(na, c, 0);
    if (!da || !f) return NULL;
    if (!LLVMIsAConstantInt(f)) *runtime = 1;
    return LLVMBuildMul(na->b, da, LLVMBuildSExtOrBitCast(na->b, f, i64, ""), "");
  }
  case LLVMShl: {
    LLVMValueRef k = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(k)) return NULL;
    LLVMValueRef da = delta_of(na, LLVMGetOperand(v, 0), runtime, depth + 1);
    return da ? LLVMBuildShl(na->b, da, LLVMConstInt(i64, LLVMConstIntGetZExtValue(k), 0), "")
              : NULL;
  }
  case LLVMGetElementPtr: {
    LLVMTargetDataRef td = na->td;
    LLVMValueRef d = delta_of(na, LLVMGetOperand(v, 0), runtime, depth + 1);
    LLVMTypeRef t = LLVMGetGEPSourceElementType(v);
    unsigned n = (unsigned)LLVMGetNumOperands(v);
    for (unsigned i = 1; i < n && d; i++) {
      LLVMValueRef idx = LLVMGetOperand(v, i);
      if (i > 1) {
        LLVMTypeKind kind = LLVMGetTypeKind(t);
        if (kind == LLVMStructTypeKind) {
          if (!LLVMIsAConstantInt(idx)) return NULL;
          t = LLVMStructGetTypeAtIndex(t, (unsigned)LLVMConstIntGetZExtValue(idx));
          continue;
        }
        if (kind != LLVMArrayTypeKind) return NULL;
        t = LLVMGetElementType(t);
      }
      LLVMValueRef di = delta_of(na, idx, runtime, depth + 1);
      if (!di) return NULL;
      unsigned long long size = LLVMABISizeOfType(td, t);
      d = LLVMBuildAdd(na->b, d, LLVMBuildMul(na->b, di, LLVMConstInt(i64, size, 0), ""), "");
    }
    return d;
  }
  default:
    return NULL;
  }
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

/* For a plain or masked load or store (a vectorized access under a
 * bounds check is masked): its address, the value it loads or stores and
 * which of the two it is. */
static int memory_access(LLVMValueRef in, LLVMValueRef *addr, LLVMValueRef *value, int *is_store) {
  if (LLVMIsALoadInst(in) || LLVMIsAStoreInst(in)) {
    if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) return 0;
    *is_store = LLVMIsAStoreInst(in) != NULL;
    *addr = LLVMGetOperand(in, *is_store ? 1 : 0);
    *value = *is_store ? LLVMGetOperand(in, 0) : in;
    return 1;
  }
  if (!LLVMIsACallInst(in)) return 0;
  LLVMValueRef callee = LLVMGetCalledValue(in);
  size_t len = 0;
  const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
  if (!strncmp(name, "llvm.masked.load.", 17)) {
    *is_store = 0;
    *addr = LLVMGetOperand(in, 0);
    *value = in;
    return 1;
  }
  if (!strncmp(name, "llvm.masked.store.", 18)) {
    *is_store = 1;
    *addr = LLVMGetOperand(in, 1);
    *value = LLVMGetOperand(in, 0);
    return 1;
  }
  return 0;
}

/* Prefetches of each line of an access of size bytes at p (rw: 1 for a
 * store), built at the builder's position. Returns their number. */
static unsigned prefetch_lines(LLVMModuleRef m, LLVMBuilderRef b, LLVMValueRef p,
                               unsigned long long size, int rw) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i8 = LLVMInt8TypeInContext(ctx);
  LLVMValueRef pf = prefetch_function(m, LLVMTypeOf(p));
  LLVMTypeRef pf_type = LLVMGlobalGetValueType(pf);
  /* Its lines from the first byte and, for an access of a line or more,
   * its last byte (an unaligned one crosses into one more line). */
  unsigned long long offsets[8], count = 0;
  for (unsigned long long off = 0; off < size && count < 7; off += LINE)
    offsets[count++] = off;
  if (size >= LINE) offsets[count++] = size - 1;
  for (unsigned long long k = 0; k < count; k++) {
    LLVMValueRef idx = LLVMConstInt(LLVMInt64TypeInContext(ctx), offsets[k], 0);
    LLVMValueRef at = offsets[k] ? LLVMBuildGEP2(b, i8, p, &idx, 1, "") : p;
    LLVMValueRef args[4] = {at, LLVMConstInt(i32, (unsigned)rw, 0),
                            LLVMConstInt(i32, LOCALITY_L2, 0), LLVMConstInt(i32, 1, 0)};
    LLVMBuildCall2(b, pf_type, pf, args, 4, "");
  }
  return (unsigned)count;
}

/* Iterations of loop l that take about a memory latency to run. */
static unsigned strided_distance(const struct cfg *g, int l) {
  unsigned instructions = 0;
  for (unsigned b = 0; b < g->n; b++)
    if (cfg_in_loop(g, l, (int)b))
      for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[b]); in;
           in = LLVMGetNextInstruction(in))
        instructions++;
  unsigned d = STRIDED_AHEAD_INSTRUCTIONS / (instructions ? instructions : 1);
  return d < STRIDED_MIN_DISTANCE   ? STRIDED_MIN_DISTANCE
         : d > STRIDED_MAX_DISTANCE ? STRIDED_MAX_DISTANCE
                                    : d;
}

unsigned prefetch_loops(LLVMModuleRef m, LLVMValueRef fn) {
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
  LLVMTypeRef i8 = LLVMInt8TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  for (unsigned bi = 0; bi < g.n; bi++) {
    /* The loop that holds the access directly: in a loop nested in the
     * tiled one, "next" would be that inner loop's next step. */
    int l = g.loop[bi];
    if (l < 0) continue;
    for (LLVMValueRef in = LLVMGetFirstInstruction(g.blocks[bi]); in;
         in = LLVMGetNextInstruction(in)) {
      LLVMValueRef addr, value;
      int is_store;
      if (!memory_access(in, &addr, &value, &is_store)) continue;
      /* Tiles: the next tile's loads. Strided loops: loads and stores. */
      if (with_barrier[l] && is_store) continue;
      LLVMTypeRef pt = LLVMTypeOf(addr);
      if (LLVMGetTypeKind(pt) != LLVMPointerTypeKind || LLVMGetPointerAddressSpace(pt) != 1)
        continue;
      unsigned long long size = LLVMStoreSizeOfType(td, LLVMTypeOf(value));
      if (size < MIN_ACCESS_BYTES || per_loop[l] >= MAX_PER_LOOP) continue;
      struct next_address na = {.g = &g, .loop = l, .b = b, .at = in, .td = td};
      LLVMPositionBuilderBefore(b, in);
      LLVMValueRef target = NULL;
      if (with_barrier[l]) {
        LLVMValueRef next = next_value(&na, addr);
        if (next && na.moves) target = next;
      } else {
        /* A loop that walks memory by large steps (a column of an image,
         * one row per iteration) leaves a page every iteration: the
         * hardware prefetcher, which stays within a page, never gets
         * ahead, and each access waits for memory. Its lines are asked
         * for distance iterations ahead. Small constant steps are
         * streams the hardware prefetcher follows. */
        int runtime = 0;
        LLVMValueRef delta = delta_of(&na, addr, &runtime, 0);
        if (delta && LLVMIsAConstantInt(delta)) {
          long long c = LLVMConstIntGetSExtValue(delta);
          if (c > -STRIDED_MIN_STEP && c < STRIDED_MIN_STEP) delta = NULL;
        }
        if (delta) {
          unsigned long long distance = strided_distance(&g, l);
          LLVMValueRef ahead = LLVMBuildMul(b, delta, LLVMConstInt(i64, distance, 0), "");
          target = LLVMBuildGEP2(b, i8, addr, &ahead, 1, "");
        }
      }
      ptr_map_free(&na.memo);
      ptr_map_free(&na.moved);
      /* Instructions built for an address that then failed stay unused:
       * the optimization pipeline removes them. */
      if (!target) continue;
      added += prefetch_lines(m, b, target, size, is_store);
      per_loop[l]++;
    }
  }
  LLVMDisposeBuilder(b);
  free(with_barrier);
  free(per_loop);
  cfg_free(&g);
  return added;
}
