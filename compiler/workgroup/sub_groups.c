/* Sub-groups on the work-item side: the __aquila_sg_* calls of the builtin
 * library (compiler/builtins/subgroups.cl) bound in K.wi and K.wi.v<W>.
 *
 * A sub-group is a vector of K.wi.v<W>: W consecutive work-items of one
 * row (along x), x a multiple of W. The vector version runs a group of a
 * kernel with sub-groups only when Lx is a multiple of W (the CTS, like
 * applications, expects every sub-group but a work-group's last to have
 * the largest size, which the last Lx % W of each row would break); each
 * work-item of the other groups is a sub-group of one, as in a kernel not
 * vectorized and in a range too large for the vector version
 * (group_function.c). So F = Lx / W in a group the vector version runs,
 * else 0, and a row has F + Lx - F * W sub-groups, numbered along the
 * rows (y, then z). The vectorizer has replaced the primitives in
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
  return kb->wi_vec ? kb->width : 1;
}

/* The local size along d as the code knows it: the required one, or the
 * descriptor's (enqueued: the launch's, whole groups). */
static LLVMValueRef size_along(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                               LLVMValueRef wg, unsigned d, int enqueued) {
  if (kb->reqd[d]) return LLVMConstInt(t->i32, kb->reqd[d], 0);
  return load_wg_field(t, b, wg, enqueued ? WG_ENQUEUED_LOCAL_SIZE : WG_LOCAL_SIZE,
                       LLVMConstInt(t->i64, d, 0), t->i32);
}

/* F for a row of lx work-items: whole vectors, when the vector version
 * runs a group of that size. in_vector: this is K.wi.v<W>, which runs
 * only in such groups. */
static LLVMValueRef full_sub_groups(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                                    LLVMValueRef wg, LLVMValueRef lx, int in_vector) {
  unsigned w = sub_group_width(kb);
  if (w == 1) return LLVMConstInt(t->i32, 0, 0);
  LLVMValueRef f = LLVMBuildUDiv(b, lx, LLVMConstInt(t->i32, w, 0), "");
  if (in_vector) return f;
  LLVMValueRef runs = vector_range_ok(t, b, kb, wg);
  LLVMValueRef whole =
      LLVMBuildICmp(b, LLVMIntEQ, LLVMBuildAnd(b, lx, LLVMConstInt(t->i32, w - 1, 0), ""),
                    LLVMConstInt(t->i32, 0, 0), "");
  runs = runs ? LLVMBuildAnd(b, runs, whole, "") : whole;
  return LLVMBuildSelect(b, runs, f, LLVMConstInt(t->i32, 0, 0), "");
}

/* Sub-groups in a row of lx work-items: F + lx - F * W. */
static LLVMValueRef per_row(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                            LLVMValueRef lx, LLVMValueRef f) {
  LLVMValueRef fw = LLVMBuildMul(b, f, LLVMConstInt(t->i32, sub_group_width(kb), 0), "");
  return LLVMBuildAdd(b, f, LLVMBuildSub(b, lx, fw, ""), "");
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
                    !strncmp(what, "shuffle_", 8) || !strcmp(what, "ballot"))) {
    strbuf_printf(log, "error: internal: sub-group primitive '%s' left in a vector function\n",
                  what);
    return NULL;
  }
  /* Sub-groups of one work-item. */
  if (!strncmp(what, "reduce_", 7) || !strncmp(what, "scan_inclusive_", 15) ||
      !strncmp(what, "shuffle_", 8))
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
  if (!strcmp(what, "size")) return LLVMConstInt(t->i32, in_vector ? w : 1, 0);
  if (!strcmp(what, "max_size")) {
    /* Of the whole launch: a group of the enqueued size holds a vector. */
    if (in_vector || w == 1) return LLVMConstInt(t->i32, w, 0);
    LLVMValueRef f = full_sub_groups(t, b, kb, wg, size_along(t, b, kb, wg, 0, 1), 0);
    return LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntNE, f, LLVMConstInt(t->i32, 0, 0), ""),
                           LLVMConstInt(t->i32, w, 0), LLVMConstInt(t->i32, 1, 0), "");
  }
  if (!strcmp(what, "count") || !strcmp(what, "enqueued_count")) {
    int enqueued = what[0] == 'e';
    LLVMValueRef lx = size_along(t, b, kb, wg, 0, enqueued);
    LLVMValueRef f = full_sub_groups(t, b, kb, wg, lx, in_vector && !enqueued);
    LLVMValueRef rows = LLVMBuildMul(b, size_along(t, b, kb, wg, 1, enqueued),
                                     size_along(t, b, kb, wg, 2, enqueued), "");
    return LLVMBuildMul(b, rows, per_row(t, b, kb, lx, f), "");
  }
  if (!strcmp(what, "id")) {
    LLVMValueRef lx = size_along(t, b, kb, wg, 0, 0);
    LLVMValueRef f = full_sub_groups(t, b, kb, wg, lx, in_vector);
    LLVMValueRef x = local_id(t, b, fn, 0, uniform_only);
    LLVMValueRef row = LLVMBuildAdd(
        b, local_id(t, b, fn, 1, uniform_only),
        LLVMBuildMul(b, size_along(t, b, kb, wg, 1, 0), local_id(t, b, fn, 2, uniform_only), ""),
        "");
    /* K.wi.v<W>: x is its first lane's, a multiple of W. K.wi: x is at or
     * past F * W. */
    LLVMValueRef in_row =
        in_vector
            ? LLVMBuildUDiv(b, x, LLVMConstInt(t->i32, w, 0), "")
            : LLVMBuildAdd(
                  b, f, LLVMBuildSub(b, x, LLVMBuildMul(b, f, LLVMConstInt(t->i32, w, 0), ""), ""),
                  "");
    return LLVMBuildAdd(b, LLVMBuildMul(b, row, per_row(t, b, kb, lx, f), ""), in_row, "");
  }
  strbuf_printf(log, "error: internal: unknown sub-group builtin '__aquila_sg_%s'\n", what);
  return NULL;
}
