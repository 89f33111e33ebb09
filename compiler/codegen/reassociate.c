/* Integer vector add trees ordered for latency, right before instruction
 * selection.
 *
 * A round of a hash (MD5: a = b + rotl(a + f(b, c, d) + w + k, s)) adds
 * several terms of which one, f(b, c, d), comes last on the round's chain.
 * The optimizer's canonical form moves a constant term outermost,
 * (a + f) + k, so that constants meet and fold; LLVM's DAG combiner does the
 * same to (a + k) + f, and nothing reorders it later (whether k is then
 * folded into the add as a memory broadcast or hoisted into a register):
 * every round's chain has one add more than it needs. hashcat's MD5
 * kernel had 5 instructions per round on its chain instead of 4, and ran
 * 8-14% slower than the same source built by pocl with LLVM 15.
 *
 * So, for each tree of single-use integer vector adds in one block whose
 * deepest addend is on a long chain, the addends are added from the
 * earliest ready to the latest ready (the depth of each: the longest chain
 * of instructions in the block that leads to it, weighted by rough
 * latencies), when that shortens the tree's own chain. A constant addend
 * is then taken from a freeze of it in the entry block: in another block
 * it is a register to instruction selection, which neither moves it
 * outermost again nor folds it into the add that needs it early. Integer
 * addition wraps, so any order gives the same result (the adds lose their
 * nsw/nuw flags). */
#include "codegen/reassociate.h"

#include <stdint.h>
#include <stdlib.h>

#include "support/ptrmap.h"

/* Chains shorter than this (address arithmetic, a work-item's index) are
 * left as they are: an opaque constant costs a register and keeps
 * instruction selection from folding it into addressing. */
#define MIN_CHAIN_DEPTH 8
#define MAX_LEAVES 64

static unsigned latency_of(LLVMValueRef inst) {
  switch (LLVMGetInstructionOpcode(inst)) {
  case LLVMLoad:
    return 4;
  case LLVMMul:
    return 3;
  case LLVMCall:
    return 8;
  case LLVMPHI:
    return 0;
  default:
    return 1;
  }
}

/* Depths are stored plus one (a missing key reads as NULL). */
static unsigned depth_get(const struct ptr_map *depths, LLVMValueRef v) {
  return (unsigned)(uintptr_t)ptr_map_get(depths, v) - (ptr_map_get(depths, v) ? 1u : 0u);
}

static void depth_put(struct ptr_map *depths, LLVMValueRef v, unsigned d) {
  ptr_map_put(depths, v, (void *)(uintptr_t)(d + 1));
}

static unsigned compute_depth(const struct ptr_map *depths, LLVMValueRef inst) {
  if (LLVMGetInstructionOpcode(inst) == LLVMPHI) return 0;
  unsigned deepest = 0;
  int n = LLVMGetNumOperands(inst);
  for (int i = 0; i < n; i++) {
    unsigned d = depth_get(depths, LLVMGetOperand(inst, (unsigned)i));
    if (d > deepest) deepest = d;
  }
  return deepest + latency_of(inst);
}

static int is_integer_vector(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind &&
         LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMIntegerTypeKind;
}

static int has_one_use(LLVMValueRef v) {
  LLVMUseRef u = LLVMGetFirstUse(v);
  return u && !LLVMGetNextUse(u);
}

/* An add of the tree below its root: in the same block, its one use an add
 * of the same type there. */
static int is_inner_add(LLVMValueRef v, LLVMBasicBlockRef bb, LLVMTypeRef type) {
  if (!LLVMIsAInstruction(v) || LLVMGetInstructionOpcode(v) != LLVMAdd ||
      LLVMGetInstructionParent(v) != bb || LLVMTypeOf(v) != type || !has_one_use(v))
    return 0;
  LLVMValueRef user = LLVMGetUser(LLVMGetFirstUse(v));
  return LLVMGetInstructionOpcode(user) == LLVMAdd && LLVMGetInstructionParent(user) == bb;
}

struct tree {
  LLVMValueRef leaves[MAX_LEAVES];
  unsigned depth[MAX_LEAVES];
  unsigned num_leaves;
  LLVMValueRef adds[MAX_LEAVES]; /* the root first, each before its operands */
  unsigned num_adds;
};

/* Collects the tree under root; 0 when it has more leaves than fit. */
static int collect(struct tree *t, LLVMValueRef root, LLVMBasicBlockRef bb) {
  LLVMTypeRef type = LLVMTypeOf(root);
  t->num_leaves = t->num_adds = 0;
  t->adds[t->num_adds++] = root;
  for (unsigned next = 0; next < t->num_adds; next++) {
    LLVMValueRef add = t->adds[next];
    for (unsigned i = 0; i < 2; i++) {
      LLVMValueRef op = LLVMGetOperand(add, i);
      if (is_inner_add(op, bb, type)) {
        if (t->num_adds == MAX_LEAVES) return 0;
        t->adds[t->num_adds++] = op;
      } else {
        if (t->num_leaves == MAX_LEAVES) return 0;
        t->leaves[t->num_leaves++] = op;
      }
    }
  }
  return 1;
}

/* The entry block's freeze of c, made once per function. */
static LLVMValueRef opaque_constant(LLVMBuilderRef b, LLVMValueRef fn, struct ptr_map *made,
                                    LLVMValueRef c) {
  LLVMValueRef f = ptr_map_get(made, c);
  if (f) return f;
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMPositionBuilderBefore(b, LLVMGetBasicBlockTerminator(entry));
  f = LLVMBuildFreeze(b, c, "");
  ptr_map_put(made, c, f);
  return f;
}

/* Rewrites the tree under root when that shortens its chain; returns 1 then. */
static int rewrite_tree(LLVMBuilderRef b, LLVMValueRef fn, LLVMValueRef root,
                        struct ptr_map *depths, struct ptr_map *opaque) {
  LLVMBasicBlockRef bb = LLVMGetInstructionParent(root);
  struct tree t;
  if (!collect(&t, root, bb) || t.num_leaves < 3) return 0;
  unsigned constants = 0, deepest = 0;
  for (unsigned i = 0; i < t.num_leaves; i++) {
    t.depth[i] = depth_get(depths, t.leaves[i]);
    if (t.depth[i] > deepest) deepest = t.depth[i];
    if (LLVMIsConstant(t.leaves[i])) constants++;
  }
  if (deepest < MIN_CHAIN_DEPTH || constants > 1) return 0;
  if (constants && bb == LLVMGetEntryBasicBlock(fn)) return 0;
  /* Earliest first (stable: equal depths keep their order). */
  for (unsigned i = 1; i < t.num_leaves; i++)
    for (unsigned j = i; j > 0 && t.depth[j - 1] > t.depth[j]; j--) {
      LLVMValueRef v = t.leaves[j];
      unsigned d = t.depth[j];
      t.leaves[j] = t.leaves[j - 1];
      t.depth[j] = t.depth[j - 1];
      t.leaves[j - 1] = v;
      t.depth[j - 1] = d;
    }
  unsigned chain = t.depth[0];
  for (unsigned i = 1; i < t.num_leaves; i++)
    chain = (chain > t.depth[i] ? chain : t.depth[i]) + 1;
  /* What instruction selection would make of the tree as it is: with a
   * constant, at best the others in this order and the constant last. */
  unsigned now = depth_get(depths, root);
  if (constants) {
    unsigned others = 0;
    int first = 1;
    for (unsigned i = 0; i < t.num_leaves; i++) {
      if (LLVMIsConstant(t.leaves[i])) continue;
      others = first ? t.depth[i] : (others > t.depth[i] ? others : t.depth[i]) + 1;
      first = 0;
    }
    if (others + 1 > now) now = others + 1;
  }
  if (chain >= now) return 0;

  for (unsigned i = 0; i < t.num_leaves; i++)
    if (LLVMIsConstant(t.leaves[i])) {
      t.leaves[i] = opaque_constant(b, fn, opaque, t.leaves[i]);
      /* In another block: depth 0 (the map may hold an erased add's depth
       * under the same address). */
      depth_put(depths, t.leaves[i], 0);
    }
  LLVMPositionBuilderBefore(b, root);
  LLVMValueRef sum = t.leaves[0];
  chain = t.depth[0];
  for (unsigned i = 1; i < t.num_leaves; i++) {
    sum = LLVMBuildAdd(b, sum, t.leaves[i], "");
    chain = (chain > t.depth[i] ? chain : t.depth[i]) + 1;
    depth_put(depths, sum, chain);
  }
  LLVMReplaceAllUsesWith(root, sum);
  /* Each add's one use was the one before it in the list. */
  for (unsigned i = 0; i < t.num_adds; i++)
    LLVMInstructionEraseFromParent(t.adds[i]);
  return 1;
}

unsigned reassociate_for_latency(LLVMModuleRef m) {
  unsigned rewritten = 0;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
  for (LLVMValueRef fn = LLVMGetFirstFunction(m); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    struct ptr_map opaque = {0};
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
      struct ptr_map depths = {0};
      for (LLVMValueRef inst = LLVMGetFirstInstruction(bb), next; inst; inst = next) {
        next = LLVMGetNextInstruction(inst);
        depth_put(&depths, inst, compute_depth(&depths, inst));
        if (LLVMGetInstructionOpcode(inst) != LLVMAdd || !is_integer_vector(LLVMTypeOf(inst)) ||
            is_inner_add(inst, bb, LLVMTypeOf(inst)))
          continue;
        rewritten += (unsigned)rewrite_tree(b, fn, inst, &depths, &opaque);
      }
      ptr_map_free(&depths);
    }
    ptr_map_free(&opaque);
  }
  LLVMDisposeBuilder(b);
  return rewritten;
}
