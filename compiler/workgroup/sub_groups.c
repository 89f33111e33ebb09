/* Sub-groups on the work-item side: the __aquila_sg_* calls of the builtin
 * library (compiler/builtins/subgroups.cl) bound in K.wi and K.wi.v<W>.
 *
 * A sub-group is a vector of K.wi.v<W>: W consecutive work-items of one
 * row (along x), x a multiple of W; every sub-group of a row but its last
 * has W work-items (the CTS counts a group's sub-groups as its size over
 * the largest, rounded up, and checks each against that). In a kernel
 * without barriers the last, Lx % W work-items, is a vector too, its
 * other lanes off: K.wi runs only while x < Lx (guard_row_tail), which the
 * vectorizer makes the body's mask, and the work-group function runs
 * vectors up to Lx rounded up (group_function.c). A kernel with barriers
 * keeps its vector regions for groups whose Lx W divides, and its other
 * groups run the scalar way, each work-item a sub-group of one (a barrier
 * cannot sit under the tail's mask); so do kernels not vectorized and
 * ranges too large for the vector version. So a row has F sub-groups of
 * W work-items or fewer (F = Lx / W rounded up, or Lx / W with barriers)
 * where the vector version runs its group, else Lx of one, numbered along
 * the rows (y, then z). The vectorizer has replaced the primitives in
 * K.wi.v<W> (vectorize/sub_groups.c); in K.wi each is the identity of a
 * sub-group of one. kb->uses_sub_groups kernels keep one row per vector
 * (vector_kernels.c): two rows would make a sub-group two half-rows.
 *
 * Needs: load_wg_field and the work-item function's parameters
 * (workitem.c), vector_range_ok's condition (group_function.c). */
#include "workgroup/kernel_build.h"

#include <stdio.h>
#include <string.h>

#include "builtins/sub_group_ops.h"

int uses_sub_groups(LLVMValueRef fn) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
      size_t len = 0;
      if (callee && LLVMIsAFunction(callee) &&
          !strncmp(LLVMGetValueName2(callee, &len), "__aquila_sg_", 12))
        return 1;
    }
  return 0;
}

unsigned sub_group_width(const struct kernel_build *kb) {
  return kb->wi_vec && !kb->paired ? kb->width : 1;
}

/* The local size along d as the code knows it: the required one, or the
 * descriptor's (enqueued: the launch's, whole groups). */
static LLVMValueRef size_along(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                               LLVMValueRef wg, unsigned d, int enqueued) {
  if (kb->reqd[d]) return LLVMConstInt(t->i32, kb->reqd[d], 0);
  return load_wg_field(t, b, wg, enqueued ? WG_ENQUEUED_LOCAL_SIZE : WG_LOCAL_SIZE,
                       LLVMConstInt(t->i64, d, 0), t->i32);
}

/* Whether the kernel's last vector of a row runs with its tail's lanes
 * off (no barriers): then a row of a group the vector version runs has
 * Lx / W rounded up sub-groups. */
int tail_is_vector(const struct kernel_build *kb) {
  return kb->uses_sub_groups && !kb->uses_barrier && kb->wi_vec;
}

/* Sub-groups in a row of lx work-items: F vectors where the vector
 * version runs a group of that size (always in K.wi.v<W>: in_vector), else
 * one per work-item. *vectors: F, or 0. */
static LLVMValueRef per_row(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                            LLVMValueRef wg, LLVMValueRef lx, int in_vector,
                            LLVMValueRef *vectors) {
  unsigned w = sub_group_width(kb);
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0);
  if (w == 1) {
    if (vectors) *vectors = zero;
    return lx;
  }
  LLVMValueRef rounded =
      tail_is_vector(kb) ? LLVMBuildAdd(b, lx, LLVMConstInt(t->i32, w - 1, 0), "") : lx;
  LLVMValueRef f = LLVMBuildUDiv(b, rounded, LLVMConstInt(t->i32, w, 0), "");
  if (!in_vector) {
    /* The vector version runs the group: the range allows it and, with
     * barriers, W divides Lx. */
    LLVMValueRef runs = vector_range_ok(t, b, kb, wg);
    if (!tail_is_vector(kb)) {
      LLVMValueRef whole = LLVMBuildICmp(
          b, LLVMIntEQ, LLVMBuildAnd(b, lx, LLVMConstInt(t->i32, w - 1, 0), ""), zero, "");
      runs = runs ? LLVMBuildAnd(b, runs, whole, "") : whole;
    }
    if (runs) f = LLVMBuildSelect(b, runs, f, zero, "");
  }
  if (vectors) *vectors = f;
  LLVMValueRef scalar =
      in_vector ? zero : LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntEQ, f, zero, ""), lx, zero, "");
  return LLVMBuildAdd(b, f, scalar, "");
}

/* Local id d (i32): the function's parameter, or, in a function that
 * regions.c splits at barriers, a call it binds per region. */
static LLVMValueRef local_id(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef fn, unsigned d,
                             int uniform_only) {
  if (!uniform_only) return LLVMGetParam(fn, 2 + d);
  LLVMModuleRef m = LLVMGetGlobalParent(fn);
  LLVMTypeRef ft = LLVMFunctionType(t->i64, &t->i32, 1, 0);
  LLVMValueRef f = LLVMGetNamedFunction(m, "__aquila_local_id");
  if (!f) f = LLVMAddFunction(m, "__aquila_local_id", ft);
  LLVMValueRef dim = LLVMConstInt(t->i32, d, 0);
  return LLVMBuildTrunc(b, LLVMBuildCall2(b, ft, f, &dim, 1, ""), t->i32, "");
}

void guard_row_tail(struct wg_types *t, struct kernel_build *kb) {
  LLVMValueRef fn = kb->wi;
  LLVMModuleRef m = LLVMGetGlobalParent(fn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  /* One exit, which the guard's other way joins: an if-then around the
   * whole body, the shape the vectorizer masks. */
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(t->ctx, fn, "row.tail.exit");
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
    if (!term || LLVMGetInstructionOpcode(term) != LLVMRet) continue;
    LLVMPositionBuilderBefore(b, term);
    LLVMBuildBr(b, exit);
    LLVMInstructionEraseFromParent(term);
  }
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBuildRetVoid(b);
  /* A new entry block, holding the allocas (entry-block allocas stay
   * static) and the test. */
  LLVMBasicBlockRef body = LLVMGetEntryBasicBlock(fn);
  LLVMBasicBlockRef guard = LLVMInsertBasicBlockInContext(t->ctx, body, "row.tail.guard");
  LLVMPositionBuilderAtEnd(b, guard);
  for (LLVMValueRef in = LLVMGetFirstInstruction(body); in;) {
    LLVMValueRef next = LLVMGetNextInstruction(in);
    if (LLVMIsAAllocaInst(in)) {
      LLVMInstructionRemoveFromParent(in);
      LLVMInsertIntoBuilder(b, in);
    }
    in = next;
  }
  LLVMTypeRef ft = LLVMFunctionType(t->i64, &t->i32, 1, 0);
  LLVMValueRef id = LLVMGetNamedFunction(m, "__aquila_local_id");
  if (!id) id = LLVMAddFunction(m, "__aquila_local_id", ft);
  LLVMValueRef size = LLVMGetNamedFunction(m, "__aquila_local_size");
  if (!size) size = LLVMAddFunction(m, "__aquila_local_size", ft);
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0);
  LLVMValueRef x = LLVMBuildCall2(b, ft, id, &zero, 1, "");
  LLVMValueRef lx = LLVMBuildCall2(b, ft, size, &zero, 1, "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, x, lx, ""), body, exit);
  LLVMDisposeBuilder(b);
}

/* The identity of op for an integer or floating-point type. */
static LLVMValueRef identity(LLVMTypeRef ty, unsigned op) {
  if (LLVMGetTypeKind(ty) == LLVMIntegerTypeKind) {
    unsigned bits = LLVMGetIntTypeWidth(ty);
    unsigned long long ones = bits == 64 ? ~0ull : (1ull << bits) - 1;
    switch (op) {
    case AQ_SG_MUL:
      return LLVMConstInt(ty, 1, 0);
    case AQ_SG_SMIN:
      return LLVMConstInt(ty, ones >> 1, 0);
    case AQ_SG_UMIN:
    case AQ_SG_AND:
      return LLVMConstInt(ty, ones, 0);
    case AQ_SG_SMAX:
      return LLVMConstInt(ty, (ones >> 1) + 1, 0);
    default:
      return LLVMConstInt(ty, 0, 0);
    }
  }
  switch (op) {
  case AQ_SG_MUL:
    return LLVMConstReal(ty, 1.0);
  case AQ_SG_FMIN:
    return LLVMConstReal(ty, __builtin_inf());
  case AQ_SG_FMAX:
    return LLVMConstReal(ty, -__builtin_inf());
  default:
    return LLVMConstReal(ty, 0.0); /* add: -0.0 would keep a -0.0 sum, but 0.0 is what
                                      a sum of nothing is in OpenCL's tables */
  }
}

LLVMValueRef sub_group_identity(LLVMTypeRef ty, unsigned op) {
  return identity(ty, op);
}

LLVMValueRef bind_sub_group_call(struct wg_types *t, struct kernel_build *kb, LLVMValueRef fn,
                                 LLVMBuilderRef b, LLVMValueRef call, int uniform_only,
                                 struct strbuf *log) {
  size_t len = 0;
  const char *what = LLVMGetValueName2(LLVMGetCalledValue(call), &len) + 12;
  LLVMValueRef wg = LLVMGetParam(fn, 1);
  int in_vector = fn == kb->wi_vec;
  unsigned w = sub_group_width(kb);
  if (in_vector && (!strncmp(what, "reduce_", 7) || !strncmp(what, "scan_", 5) ||
                    !strncmp(what, "shuffle_", 8) || !strcmp(what, "ballot") ||
                    !strncmp(what, "clustered_reduce_", 17))) {
    strbuf_printf(log, "error: internal: sub-group primitive '%s' left in a vector function\n",
                  what);
    return NULL;
  }
  /* Sub-groups of one work-item. */
  if (!strncmp(what, "reduce_", 7) || !strncmp(what, "scan_inclusive_", 15) ||
      !strncmp(what, "clustered_reduce_", 17) || !strncmp(what, "shuffle_", 8))
    return LLVMGetOperand(call, !strncmp(what, "shuffle_", 8) ? 0 : 1);
  if (!strncmp(what, "scan_exclusive_", 15)) {
    LLVMValueRef op = LLVMGetOperand(call, 0);
    if (!LLVMIsAConstantInt(op) || LLVMConstIntGetZExtValue(op) >= AQ_SG_OPS) {
      strbuf_printf(log, "error: internal: sub-group scan without a constant operation\n");
      return NULL;
    }
    return identity(LLVMTypeOf(call), (unsigned)LLVMConstIntGetZExtValue(op));
  }
  if (!strcmp(what, "ballot")) {
    LLVMValueRef p = LLVMGetOperand(call, 0);
    return LLVMBuildZExt(b, LLVMBuildICmp(b, LLVMIntNE, p, LLVMConstNull(LLVMTypeOf(p)), ""),
                         t->i32, "");
  }
  if (!strcmp(what, "local_id")) return LLVMConstInt(t->i32, 0, 0);
  if (!strcmp(what, "size")) {
    if (!in_vector) return LLVMConstInt(t->i32, 1, 0);
    if (!tail_is_vector(kb)) return LLVMConstInt(t->i32, w, 0);
    /* The row's last vector holds its tail. */
    LLVMValueRef left =
        LLVMBuildSub(b, size_along(t, b, kb, wg, 0, 0), local_id(t, b, fn, 0, uniform_only), "");
    LLVMValueRef wc = LLVMConstInt(t->i32, w, 0);
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, left, wc, ""), left, wc, "");
  }
  if (!strcmp(what, "max_size")) {
    /* Of the whole launch: what a group of the enqueued size has. */
    if (w == 1) return LLVMConstInt(t->i32, 1, 0);
    LLVMValueRef lx = size_along(t, b, kb, wg, 0, 1), f;
    per_row(t, b, kb, wg, lx, 0, &f);
    LLVMValueRef wc = LLVMConstInt(t->i32, w, 0);
    LLVMValueRef widest = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULT, lx, wc, ""), lx, wc, "");
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntNE, f, LLVMConstInt(t->i32, 0, 0), ""),
                           widest, LLVMConstInt(t->i32, 1, 0), "");
  }
  if (!strcmp(what, "count") || !strcmp(what, "enqueued_count")) {
    int enqueued = what[0] == 'e';
    LLVMValueRef lx = size_along(t, b, kb, wg, 0, enqueued);
    LLVMValueRef rows = LLVMBuildMul(b, size_along(t, b, kb, wg, 1, enqueued),
                                     size_along(t, b, kb, wg, 2, enqueued), "");
    return LLVMBuildMul(b, rows, per_row(t, b, kb, wg, lx, in_vector && !enqueued, NULL), "");
  }
  if (!strcmp(what, "id")) {
    LLVMValueRef lx = size_along(t, b, kb, wg, 0, 0);
    LLVMValueRef f;
    LLVMValueRef n = per_row(t, b, kb, wg, lx, in_vector, &f);
    LLVMValueRef x = local_id(t, b, fn, 0, uniform_only);
    LLVMValueRef row = LLVMBuildAdd(
        b, local_id(t, b, fn, 1, uniform_only),
        LLVMBuildMul(b, size_along(t, b, kb, wg, 1, 0), local_id(t, b, fn, 2, uniform_only), ""),
        "");
    /* K.wi.v<W>: x is its first lane's, a multiple of W. K.wi: a group of
     * sub-groups of one. */
    LLVMValueRef in_row = in_vector ? LLVMBuildUDiv(b, x, LLVMConstInt(t->i32, w, 0), "") : x;
    return LLVMBuildAdd(b, LLVMBuildMul(b, row, n, ""), in_row, "");
  }
  strbuf_printf(log, "error: internal: unknown sub-group builtin '__aquila_sg_%s'\n", what);
  return NULL;
}
