/* __local variables: each kernel's static __local variables placed in
 * the work-group's group segment (one copy per running work-group),
 * found through the functions that use them, and summed for
 * CL_KERNEL_LOCAL_MEM_SIZE.
 *
 * Needs: the descriptor's fields (workitem.c). */
#include "workgroup/kernel_build.h"

#include <stdint.h>
#include <stdlib.h>

#include "aquila/cpu_abi.h"

/* Whether v is used by an instruction of fn or fn2 (may be NULL), looking
 * through constant expressions. */
static int value_used_in(LLVMValueRef v, LLVMValueRef fn, LLVMValueRef fn2, int depth) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsAInstruction(user)) {
      LLVMValueRef parent = LLVMGetBasicBlockParent(LLVMGetInstructionParent(user));
      if (parent == fn || (fn2 && parent == fn2)) return 1;
    } else if (depth < 4 && value_used_in(user, fn, fn2, depth + 1)) {
      return 1;
    }
  }
  return 0;
}

/* Whether every use of v (looking through constant expressions) is an
 * instruction of fn or fn2, reached only through GEPs and casts, which
 * replace_uses_in can rebuild as instructions. */
static int uses_only_in(LLVMValueRef v, LLVMValueRef fn, LLVMValueRef fn2, int depth) {
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (LLVMIsAInstruction(user)) {
      LLVMValueRef parent = LLVMGetBasicBlockParent(LLVMGetInstructionParent(user));
      if (parent != fn && (!fn2 || parent != fn2)) return 0;
    } else if (LLVMIsAConstantExpr(user)) {
      LLVMOpcode op = LLVMGetConstOpcode(user);
      int rebuildable = op == LLVMGetElementPtr || op == LLVMAddrSpaceCast || op == LLVMBitCast ||
                        op == LLVMPtrToInt;
      if (!rebuildable || depth >= 8 || !uses_only_in(user, fn, fn2, depth + 1)) return 0;
    } else {
      return 0;
    }
  }
  return 1;
}

/* Replaces every use of old inside fn by repl; constant expressions over
 * old become instructions at the builder's position (the entry block, which
 * dominates every use). */
static void replace_uses_in(LLVMBuilderRef b, LLVMValueRef old, LLVMValueRef repl,
                            LLVMValueRef fn) {
  unsigned count = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(old); u; u = LLVMGetNextUse(u))
    count++;
  LLVMValueRef *users = calloc(count ? count : 1, sizeof *users);
  if (!users) abort();
  unsigned n = 0;
  for (LLVMUseRef u = LLVMGetFirstUse(old); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    unsigned k = 0;
    while (k < n && users[k] != user)
      k++;
    if (k == n) users[n++] = user;
  }
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef user = users[i];
    int operands = LLVMGetNumOperands(user);
    if (LLVMIsAInstruction(user)) {
      if (LLVMGetBasicBlockParent(LLVMGetInstructionParent(user)) != fn) continue;
      for (int j = 0; j < operands; j++)
        if (LLVMGetOperand(user, j) == old) LLVMSetOperand(user, j, repl);
      continue;
    }
    LLVMValueRef ops[16];
    if (operands > 16) continue; /* uses_only_in let none of these through */
    for (int j = 0; j < operands; j++) {
      LLVMValueRef o = LLVMGetOperand(user, j);
      ops[j] = o == old ? repl : o;
    }
    LLVMOpcode op = LLVMGetConstOpcode(user);
    LLVMValueRef inst;
    if (op == LLVMGetElementPtr) {
      LLVMTypeRef source = LLVMGetGEPSourceElementType(user);
      inst = LLVMIsInBounds(user)
                 ? LLVMBuildInBoundsGEP2(b, source, ops[0], ops + 1, (unsigned)operands - 1, "")
                 : LLVMBuildGEP2(b, source, ops[0], ops + 1, (unsigned)operands - 1, "");
    } else {
      inst = LLVMBuildCast(b, op, ops[0], LLVMTypeOf(user), "");
    }
    replace_uses_in(b, user, inst, fn);
  }
  free(users);
}

/* Static __local variables live in the group segment, at fixed offsets
 * before the dynamic __local arguments (HSA's group_segment_fixed_size):
 * each work-item function computes their addresses from the work-group's
 * group segment. Thread-local copies per compute unit would be simpler, but
 * glibc hands a thread's stale dynamic TLS block back after code objects were
 * unloaded and others loaded (gpyfft's test suite read one kernel's __local
 * array through another's), and the group segment is also where overruns
 * are contained. A variable used by several kernels (one kernel calling
 * another) keeps a thread-local copy. Sums each kernel's static local
 * memory for CL_KERNEL_LOCAL_MEM_SIZE. */
void localize_group_variables(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kbs,
                              unsigned n) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  /* The group segment's address in each of a kernel's two functions. */
  LLVMValueRef *bases = calloc(2 * (size_t)(n ? n : 1), sizeof *bases);
  if (!bases) abort();
  for (LLVMValueRef g = LLVMGetFirstGlobal(m), next; g; g = next) {
    next = LLVMGetNextGlobal(g);
    if (LLVMGetPointerAddressSpace(LLVMTypeOf(g)) != 3) continue;
    LLVMTypeRef type = LLVMGlobalGetValueType(g);
    uint64_t size = LLVMABISizeOfType(t->td, type);
    uint32_t align = LLVMABIAlignmentOfType(t->td, type);
    if (LLVMGetAlignment(g) > align) align = LLVMGetAlignment(g);
    if (align > AQUILA_GROUP_SEGMENT_ALIGNMENT) align = AQUILA_GROUP_SEGMENT_ALIGNMENT;
    unsigned users = 0, owner = 0;
    for (unsigned i = 0; i < n; i++)
      if (value_used_in(g, kbs[i].wi, kbs[i].wi_vec, 0)) users++, owner = i;
    if (users == 1 && uses_only_in(g, kbs[owner].wi, kbs[owner].wi_vec, 0)) {
      struct kernel_build *kb = &kbs[owner];
      kb->local_mem = align_up((uint32_t)kb->local_mem, align);
      LLVMValueRef fns[2] = {kb->wi, kb->wi_vec};
      for (unsigned f = 0; f < 2; f++) {
        if (!fns[f]) continue;
        LLVMValueRef *base = &bases[2 * owner + f];
        if (!*base) {
          LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fns[f]);
          LLVMValueRef first = LLVMGetFirstInstruction(entry);
          LLVMPositionBuilderBefore(b, first);
          *base = load_wg_field(t, b, LLVMGetParam(fns[f], 1), WG_GROUP_SEGMENT, NULL, t->ptr);
        }
        LLVMPositionBuilderBefore(b, LLVMGetNextInstruction(*base));
        LLVMValueRef off = LLVMConstInt(t->i64, kb->local_mem, 0);
        LLVMValueRef addr = LLVMBuildInBoundsGEP2(b, t->i8, *base, &off, 1, "");
        addr = LLVMBuildAddrSpaceCast(b, addr, LLVMTypeOf(g), LLVMGetValueName(g));
        replace_uses_in(b, g, addr, fns[f]);
      }
      kb->local_mem += size;
      if (!LLVMGetFirstUse(g)) LLVMDeleteGlobal(g);
      continue;
    }
    LLVMSetThreadLocalMode(g, LLVMLocalDynamicTLSModel);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    for (unsigned i = 0; i < n; i++)
      if (value_used_in(g, kbs[i].wi, kbs[i].wi_vec, 0)) kbs[i].local_mem += size;
  }
  free(bases);
  LLVMDisposeBuilder(b);
}
