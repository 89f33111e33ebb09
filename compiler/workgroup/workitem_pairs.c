/* Paired work-items: for a kernel the vectorizer leaves scalar, a version
 * of its work-item function that runs two consecutive work-items along x
 * in one body, the second one's instructions beside the first one's.
 *
 * Why: a work-item whose work is one long dependency chain (Blowfish's
 * rounds in John the Ripper's bcrypt: each round four S-box loads from the
 * last round's result, about ten cycles of latency for a dozen
 * instructions) runs at the chain's latency, and the work-item loop gives
 * the out-of-order core nothing else to overlap: the next work-item starts
 * millions of instructions later. Two independent chains in one body fill
 * the cycles the one chain leaves idle. The vectorizer refuses such kernels
 * (too large, or table lookups whose gathers would cost more than the
 * scalar loads), and a vector of 16 would not help a latency chain of
 * gathers anyway; two scalar copies do.
 *
 * When: every branch of the function depends only on values that are the
 * same for both work-items (their control flow is one), the function has a
 * loop (a loop-free body is short, and the work-item loop's iterations
 * overlap already), no barrier, no sub-group operation, and it is at most
 * PAIR_MAX_INSTRUCTIONS long (twice its code for the vector build).
 *
 * How: a value is varying when it derives from local id x, from private
 * memory (each work-item's allocas are its own), or from a call that
 * cannot run once for both (side effects, or unknown); other values are
 * computed once. A varying instruction is emitted twice, the second copy
 * right after the first with work-item x + 1's operands; stores, atomics
 * and calls with side effects run for x, then for x + 1, in program order.
 * A store of the same value to the same address, or a load from an address
 * the two share, runs once: for them to differ, two work-items would have
 * to race on it without a barrier, which OpenCL leaves undefined (the
 * vectorizer assumes the same). The result plugs in where a vector
 * version would (kb->wi_vec, width 2): the work-group function's x loop
 * takes two work-items a step, and the scalar function the odd one left. */
#include "workgroup/kernel_build.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>

#include "support/ptrmap.h"

enum { PAIR_MAX_INSTRUCTIONS = 20000 };

struct pairing {
  LLVMContextRef ctx;
  LLVMValueRef fn, pfn;
  LLVMBuilderRef b;
  LLVMBasicBlockRef *blocks; /* fn's blocks, in reverse post-order */
  unsigned num_blocks, num_reachable;
  struct ptr_set varying;   /* instructions of fn with a value for each work-item */
  struct ptr_set per_lane;  /* instructions that run for each work-item (varying or not) */
  struct ptr_map copy[2];   /* fn's instruction -> its copy for work-item x + lane */
  struct ptr_map new_block; /* fn's block -> pfn's */
  unsigned alias_scope_kind, noalias_kind;
};

static const char *callee_name_of(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee)) return NULL;
  size_t len;
  return LLVMGetValueName2(callee, &len);
}

/* Whether the callee neither reads nor writes memory (memory(none)). */
static int callee_is_pure(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee)) return 0;
  static unsigned memory_kind;
  if (!memory_kind) memory_kind = LLVMGetEnumAttributeKindForName("memory", 6);
  LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(callee, LLVMAttributeFunctionIndex, memory_kind);
  return a && LLVMGetEnumAttributeValue(a) == 0;
}

static int is_local_id_x(LLVMValueRef call) {
  const char *name = callee_name_of(call);
  return name && !strcmp(name, "__aquila_local_id") &&
         LLVMIsAConstantInt(LLVMGetOperand(call, 0)) &&
         LLVMConstIntGetZExtValue(LLVMGetOperand(call, 0)) == 0;
}

/* NULL when fn can be paired, else why not. */
static const char *check_instruction(LLVMValueRef in) {
  switch (LLVMGetInstructionOpcode(in)) {
  case LLVMIndirectBr:
  case LLVMInvoke:
  case LLVMCallBr:
  case LLVMLandingPad:
  case LLVMResume:
  case LLVMCatchSwitch:
  case LLVMCatchPad:
  case LLVMCleanupPad:
  case LLVMCatchRet:
  case LLVMCleanupRet:
    return "an instruction pairing does not handle";
  case LLVMCall: {
    const char *name = callee_name_of(in);
    if (!name) return "an indirect call";
    if (!strcmp(name, "__aquila_barrier")) return "a barrier";
    if (!strncmp(name, "__aquila_sg_", 12)) return "sub-group operations";
    if (!strcmp(name, "__aquila_local_id") && !LLVMIsAConstantInt(LLVMGetOperand(in, 0)))
      return "a local id of a dimension known only at run time";
    return NULL;
  }
  default:
    return NULL;
  }
}

/* Whether in, with operands that are the same for both work-items, still
 * must run once for each (and has a value for each). */
static int runs_per_lane(LLVMValueRef in) {
  switch (LLVMGetInstructionOpcode(in)) {
  case LLVMAlloca:
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
    return 1;
  case LLVMCall: {
    if (is_local_id_x(in)) return 1;
    const char *name = callee_name_of(in);
    /* Work-item queries other than local id x are the same for both. */
    if (!strncmp(name, "__aquila_", 9) && strncmp(name, "__aquila_vv_", 12) &&
        strncmp(name, "__aquila_libm_", 14))
      return 0;
    return !callee_is_pure(in);
  }
  default:
    return 0;
  }
}

static int operand_varying(struct pairing *p, LLVMValueRef o) {
  return LLVMIsAInstruction(o) && ptr_set_has(&p->varying, o);
}

/* Which instructions are varying, to a fixed point over the loops' phis. */
static void find_varying(struct pairing *p) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (unsigned i = 0; i < p->num_blocks; i++)
      for (LLVMValueRef in = LLVMGetFirstInstruction(p->blocks[i]); in;
           in = LLVMGetNextInstruction(in)) {
        if (ptr_set_has(&p->varying, in)) continue;
        int v = runs_per_lane(in);
        LLVMOpcode op = LLVMGetInstructionOpcode(in);
        if (!v && op == LLVMPHI) {
          for (unsigned k = 0; k < LLVMCountIncoming(in) && !v; k++)
            v = operand_varying(p, LLVMGetIncomingValue(in, k));
        } else if (!v && op == LLVMLoad) {
          v = operand_varying(p, LLVMGetOperand(in, 0));
        } else if (!v) {
          int n = LLVMGetNumOperands(in);
          for (int k = 0; k < n && !v; k++)
            v = operand_varying(p, LLVMGetOperand(in, (unsigned)k));
        }
        if (v) {
          ptr_set_add(&p->varying, in);
          changed = 1;
        }
      }
  }
  for (unsigned i = 0; i < p->num_blocks; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(p->blocks[i]); in;
         in = LLVMGetNextInstruction(in))
      if (ptr_set_has(&p->varying, in) || (LLVMGetInstructionOpcode(in) == LLVMStore &&
                                           (operand_varying(p, LLVMGetOperand(in, 0)) ||
                                            operand_varying(p, LLVMGetOperand(in, 1)))))
        ptr_set_add(&p->per_lane, in);
}

/* fn's blocks in reverse post-order from the entry (each block after the
 * blocks that dominate it), then the unreachable ones. */
static void order_blocks(struct pairing *p) {
  unsigned n = LLVMCountBasicBlocks(p->fn);
  p->blocks = calloc(n, sizeof *p->blocks);
  LLVMBasicBlockRef *all = calloc(n, sizeof *all), *stack = calloc(n, sizeof *stack);
  unsigned *next_succ = calloc(n, sizeof *next_succ);
  if (!p->blocks || !all || !stack || !next_succ) abort();
  LLVMGetBasicBlocks(p->fn, all);
  struct ptr_map index = {0};
  for (unsigned i = 0; i < n; i++)
    ptr_map_put(&index, all[i], (void *)(uintptr_t)(i + 1));
  unsigned char *seen = calloc(n, 1);
  if (!seen) abort();
  unsigned post = n, depth = 0;
  stack[depth++] = all[0];
  seen[0] = 1;
  /* Post-order, written from the end of p->blocks backwards. */
  while (depth) {
    LLVMBasicBlockRef bb = stack[depth - 1];
    unsigned bi = (unsigned)(uintptr_t)ptr_map_get(&index, bb) - 1;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    unsigned ns = term ? LLVMGetNumSuccessors(term) : 0;
    if (next_succ[bi] < ns) {
      LLVMBasicBlockRef s = LLVMGetSuccessor(term, next_succ[bi]++);
      unsigned si = (unsigned)(uintptr_t)ptr_map_get(&index, s) - 1;
      if (!seen[si]) {
        seen[si] = 1;
        stack[depth++] = s;
      }
      continue;
    }
    p->blocks[--post] = bb;
    depth--;
  }
  /* The reachable blocks now fill p->blocks[post..n): move them to the
   * front, the unreachable ones after. */
  p->num_reachable = n - post;
  memmove(p->blocks, p->blocks + post, p->num_reachable * sizeof *p->blocks);
  unsigned k = p->num_reachable;
  for (unsigned i = 0; i < n; i++)
    if (!seen[i]) p->blocks[k++] = all[i];
  p->num_blocks = n;
  ptr_map_free(&index);
  free(seen);
  free(all);
  free(stack);
  free(next_succ);
}

static LLVMValueRef mapped(struct pairing *p, LLVMValueRef o, int lane) {
  if (LLVMValueIsBasicBlock(o))
    return LLVMBasicBlockAsValue(ptr_map_get(&p->new_block, LLVMValueAsBasicBlock(o)));
  if (LLVMIsAArgument(o)) {
    for (unsigned i = 0; i < LLVMCountParams(p->fn); i++)
      if (LLVMGetParam(p->fn, i) == o) return LLVMGetParam(p->pfn, i);
  }
  if (LLVMIsAInstruction(o)) {
    LLVMValueRef c = ptr_map_get(&p->copy[lane], o);
    return c ? c : LLVMGetPoison(LLVMTypeOf(o));
  }
  return o;
}

/* Emits in for lane (its copy, operands mapped), or builds x + 1 for the
 * second work-item's local id. */
static LLVMValueRef emit_copy(struct pairing *p, LLVMValueRef in, int lane) {
  if (lane == 1 && is_local_id_x(in)) {
    LLVMValueRef x = ptr_map_get(&p->copy[0], in);
    return LLVMBuildNUWAdd(p->b, x, LLVMConstInt(LLVMTypeOf(x), 1, 0), "x1");
  }
  LLVMValueRef c = LLVMInstructionClone(in);
  int n = LLVMGetNumOperands(in);
  for (int k = 0; k < n; k++)
    LLVMSetOperand(c, (unsigned)k, mapped(p, LLVMGetOperand(in, (unsigned)k), lane));
  /* Scopes of inlined restrict pointers describe one work-item's call. */
  if (ptr_set_has(&p->per_lane, in) && LLVMGetInstructionOpcode(in) != LLVMCall) {
    LLVMSetMetadata(c, p->alias_scope_kind, NULL);
    LLVMSetMetadata(c, p->noalias_kind, NULL);
  }
  size_t len;
  const char *name = LLVMGetValueName2(in, &len);
  LLVMInsertIntoBuilderWithName(p->b, c, len ? name : "");
  return c;
}

static void emit_function(struct pairing *p) {
  for (unsigned i = 0; i < p->num_blocks; i++) {
    const char *name = LLVMGetBasicBlockName(p->blocks[i]);
    ptr_map_put(&p->new_block, p->blocks[i],
                LLVMAppendBasicBlockInContext(p->ctx, p->pfn, name ? name : ""));
  }
  for (unsigned i = 0; i < p->num_blocks; i++) {
    LLVMBasicBlockRef nb = ptr_map_get(&p->new_block, p->blocks[i]);
    LLVMPositionBuilderAtEnd(p->b, nb);
    if (i >= p->num_reachable) {
      LLVMBuildUnreachable(p->b);
      continue;
    }
    for (LLVMValueRef in = LLVMGetFirstInstruction(p->blocks[i]); in;
         in = LLVMGetNextInstruction(in)) {
      int lanes = ptr_set_has(&p->per_lane, in) ? 2 : 1;
      for (int lane = 0; lane < lanes; lane++) {
        LLVMValueRef c;
        if (LLVMGetInstructionOpcode(in) == LLVMPHI)
          c = LLVMBuildPhi(p->b, LLVMTypeOf(in), "");
        else
          c = emit_copy(p, in, lane);
        ptr_map_put(&p->copy[lane], in, c);
        if (lanes == 1) ptr_map_put(&p->copy[1], in, c);
      }
    }
  }
  /* The phis' incoming values, now that every block is built; incoming
   * edges from unreachable blocks are gone. */
  for (unsigned i = 0; i < p->num_reachable; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(p->blocks[i]);
         in && LLVMGetInstructionOpcode(in) == LLVMPHI; in = LLVMGetNextInstruction(in)) {
      int lanes = ptr_set_has(&p->per_lane, in) ? 2 : 1;
      for (int lane = 0; lane < lanes; lane++) {
        LLVMValueRef c = ptr_map_get(&p->copy[lane], in);
        for (unsigned k = 0; k < LLVMCountIncoming(in); k++) {
          LLVMBasicBlockRef from = LLVMGetIncomingBlock(in, k);
          int reachable = 0;
          for (unsigned r = 0; r < p->num_reachable && !reachable; r++)
            reachable = p->blocks[r] == from;
          if (!reachable) continue;
          LLVMValueRef v = mapped(p, LLVMGetIncomingValue(in, k), lane);
          LLVMBasicBlockRef nb = ptr_map_get(&p->new_block, from);
          LLVMAddIncoming(c, &v, &nb, 1);
        }
      }
    }
}

static void copy_attributes(LLVMValueRef from, LLVMValueRef to) {
  for (unsigned idx = 0; idx <= LLVMCountParams(from) + 1; idx++) {
    LLVMAttributeIndex ai = idx == 0 ? (LLVMAttributeIndex)LLVMAttributeFunctionIndex : idx - 1;
    if (idx == 1) continue; /* the return value: void */
    unsigned count = LLVMGetAttributeCountAtIndex(from, ai);
    if (!count) continue;
    LLVMAttributeRef *attrs = calloc(count, sizeof *attrs);
    if (!attrs) abort();
    LLVMGetAttributesAtIndex(from, ai, attrs);
    for (unsigned k = 0; k < count; k++)
      LLVMAddAttributeAtIndex(to, ai, attrs[k]);
    free(attrs);
  }
}

static int has_loop(struct pairing *p) {
  /* In reverse post-order, an edge to a block not after its source is a
   * back edge (of a loop, or of an irreducible cycle). */
  struct ptr_map pos = {0};
  for (unsigned i = 0; i < p->num_reachable; i++)
    ptr_map_put(&pos, p->blocks[i], (void *)(uintptr_t)(i + 1));
  int found = 0;
  for (unsigned i = 0; i < p->num_reachable && !found; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(p->blocks[i]);
    for (unsigned s = 0; term && s < LLVMGetNumSuccessors(term) && !found; s++) {
      uintptr_t to = (uintptr_t)ptr_map_get(&pos, LLVMGetSuccessor(term, s));
      found = to && to <= i + 1;
    }
  }
  ptr_map_free(&pos);
  return found;
}

static void free_pairing(struct pairing *p) {
  free(p->blocks);
  ptr_set_free(&p->varying);
  ptr_set_free(&p->per_lane);
  ptr_map_free(&p->copy[0]);
  ptr_map_free(&p->copy[1]);
  ptr_map_free(&p->new_block);
  if (p->b) LLVMDisposeBuilder(p->b);
}

/* Analyses fn into p; NULL when its work-items can be paired, else why
 * not (p is then to be freed all the same). */
static const char *analyse(struct pairing *p, LLVMValueRef fn, unsigned instructions,
                           struct strbuf *why) {
  p->ctx = LLVMGetModuleContext(LLVMGetGlobalParent(fn));
  p->fn = fn;
  if (instructions > PAIR_MAX_INSTRUCTIONS) {
    strbuf_printf(why, "%u instructions, more than %u", instructions, PAIR_MAX_INSTRUCTIONS);
    return why->data;
  }
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  if (LLVMGetTypeKind(LLVMGetReturnType(fty)) != LLVMVoidTypeKind || LLVMCountParams(fn) < 3 ||
      LLVMGetFirstUse(LLVMGetParam(fn, 2)))
    return "internal: not a work-item function of the expected form";
  order_blocks(p);
  const char *bad = NULL;
  for (unsigned i = 0; i < p->num_reachable && !bad; i++)
    for (LLVMValueRef in = LLVMGetFirstInstruction(p->blocks[i]); in && !bad;
         in = LLVMGetNextInstruction(in))
      bad = check_instruction(in);
  if (!bad && !has_loop(p)) bad = "no loop";
  if (bad) return bad;
  find_varying(p);
  for (unsigned i = 0; i < p->num_reachable; i++) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(p->blocks[i]);
    LLVMOpcode op = LLVMGetInstructionOpcode(term);
    if ((op == LLVMBr && LLVMIsConditional(term) && operand_varying(p, LLVMGetCondition(term))) ||
        (op == LLVMSwitch && operand_varying(p, LLVMGetOperand(term, 0))))
      return "a branch that differs between work-items";
  }
  return NULL;
}

int workitems_pairable(LLVMValueRef fn, unsigned instructions) {
  struct pairing p = {0};
  struct strbuf why = {0};
  int ok = analyse(&p, fn, instructions, &why) == NULL;
  strbuf_free(&why);
  free_pairing(&p);
  return ok;
}

LLVMValueRef pair_workitems(LLVMModuleRef m, LLVMValueRef fn, unsigned instructions,
                            struct strbuf *why) {
  struct pairing p = {0};
  struct strbuf reason = {0};
  const char *bad = analyse(&p, fn, instructions, &reason);
  if (bad) {
    strbuf_append(why, bad);
    strbuf_free(&reason);
    free_pairing(&p);
    return NULL;
  }
  strbuf_free(&reason);
  LLVMTypeRef fty = LLVMGlobalGetValueType(fn);
  size_t len;
  struct strbuf name = {0};
  strbuf_printf(&name, "%s.pair", LLVMGetValueName2(fn, &len));
  p.pfn = LLVMAddFunction(m, name.data, fty);
  strbuf_free(&name);
  LLVMSetLinkage(p.pfn, LLVMInternalLinkage);
  copy_attributes(fn, p.pfn);
  for (unsigned i = 0; i < LLVMCountParams(fn); i++) {
    size_t plen;
    const char *pname = LLVMGetValueName2(LLVMGetParam(fn, i), &plen);
    LLVMSetValueName2(LLVMGetParam(p.pfn, i), pname, plen);
  }
  p.alias_scope_kind = LLVMGetMDKindIDInContext(p.ctx, "alias.scope", 11);
  p.noalias_kind = LLVMGetMDKindIDInContext(p.ctx, "noalias", 7);
  p.b = LLVMCreateBuilderInContext(p.ctx);
  emit_function(&p);
  LLVMValueRef out = p.pfn;
  if (LLVMVerifyFunction(p.pfn, LLVMReturnStatusAction)) {
    strbuf_append(why, "internal: the paired function is invalid");
    LLVMDeleteFunction(p.pfn);
    out = NULL;
  }
  free_pairing(&p);
  return out;
}
