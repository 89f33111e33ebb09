/* K.wg, the work-group function: the z/y/x loop nest around K.wi for a
 * kernel without barriers (with its vectorized version for the full vectors
 * of each row, the scalar one for the rest), the fiber call for one with
 * barriers, the split function's wrapper for one split at barriers
 * (regions.c), and the scalar twin AQUILA_VECTORIZE=check compares with.
 *
 * Needs: the descriptor's fields and attributes (workitem.c),
 * widest_vector_arithmetic (vector_kernels.c). */
#include "workgroup/kernel_build.h"

#include <llvm-c/DebugInfo.h>
#include <stdint.h>
#include <string.h>

/* Builds K.wg for a kernel without barriers: a do-while nest over z, y, x
 * (every local size is at least 1) around a call of K.wi. */
static void mark_loop_done(struct wg_types *t, LLVMValueRef br, unsigned jam);
static unsigned jam_count(LLVMValueRef fn);

void build_loop_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb) {
  LLVMValueRef fn = kb->wg, kernarg = LLVMGetParam(fn, 0), wg = LLVMGetParam(fn, 1);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(t->ctx, fn, "entry");
  LLVMBasicBlockRef zh = LLVMAppendBasicBlockInContext(t->ctx, fn, "z.header");
  LLVMBasicBlockRef yh = LLVMAppendBasicBlockInContext(t->ctx, fn, "y.header");
  LLVMBasicBlockRef xb = LLVMAppendBasicBlockInContext(t->ctx, fn, "x.body");
  LLVMBasicBlockRef xl = LLVMAppendBasicBlockInContext(t->ctx, fn, "x.latch");
  LLVMBasicBlockRef yl = LLVMAppendBasicBlockInContext(t->ctx, fn, "y.latch");
  LLVMBasicBlockRef zl = LLVMAppendBasicBlockInContext(t->ctx, fn, "z.latch");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(t->ctx, fn, "exit");
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0), one = LLVMConstInt(t->i32, 1, 0);

  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef size[3];
  for (unsigned d = 0; d < 3; d++)
    size[d] = load_wg_field(t, b, wg, WG_LOCAL_SIZE, LLVMConstInt(t->i64, d, 0), t->i32);
  LLVMBuildBr(b, zh);

  LLVMPositionBuilderAtEnd(b, zh);
  LLVMValueRef z = LLVMBuildPhi(b, t->i32, "z");
  LLVMBuildBr(b, yh);
  LLVMPositionBuilderAtEnd(b, yh);
  LLVMValueRef y = LLVMBuildPhi(b, t->i32, "y");
  LLVMBuildBr(b, xb);
  LLVMPositionBuilderAtEnd(b, xb);
  LLVMValueRef x = LLVMBuildPhi(b, t->i32, "x");
  LLVMValueRef call_args[5] = {kernarg, wg, x, y, z};
  LLVMBuildCall2(b, t->wi_fn, kb->wi, call_args, 5, "");
  LLVMBuildBr(b, xl);

  LLVMPositionBuilderAtEnd(b, xl);
  LLVMValueRef xn = LLVMBuildNUWAdd(b, x, one, "x.next");
  LLVMValueRef latch = LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, xn, size[0], ""), xb, yl);
  /* A kernel that computes with float8 or float16 itself is not vectorized
   * across work-items, and the loop vectorizer has nothing to add: its
   * loops' dependent chains are hidden by running several work-items side
   * by side instead (clpeak's float16 kernel: 0.2 of the FMA peak alone). */
  if (widest_vector_arithmetic(kb->wi) >= 8) {
    unsigned jam = jam_count(kb->wi);
    if (jam > 1) mark_loop_done(t, latch, jam);
  }
  LLVMPositionBuilderAtEnd(b, yl);
  LLVMValueRef yn = LLVMBuildNUWAdd(b, y, one, "y.next");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, yn, size[1], ""), yh, zl);
  LLVMPositionBuilderAtEnd(b, zl);
  LLVMValueRef zn = LLVMBuildNUWAdd(b, z, one, "z.next");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, zn, size[2], ""), zh, exit);
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBuildRetVoid(b);

  LLVMValueRef zin[2] = {zero, zn}, yin[2] = {zero, yn}, xin[2] = {zero, xn};
  LLVMBasicBlockRef zfrom[2] = {entry, zl}, yfrom[2] = {zh, yl}, xfrom[2] = {yh, xl};
  LLVMAddIncoming(z, zin, zfrom, 2);
  LLVMAddIncoming(y, yin, yfrom, 2);
  LLVMAddIncoming(x, xin, xfrom, 2);
}

/* Builds K.wg for a kernel with barriers: the agent runs K.wi as fibers. */
void build_fiber_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb) {
  LLVMValueRef fn = kb->wg, kernarg = LLVMGetParam(fn, 0), wg = LLVMGetParam(fn, 1);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->ctx, fn, "entry"));
  LLVMValueRef services = load_wg_field(t, b, wg, WG_SERVICES, NULL, t->ptr);
  LLVMValueRef idx[2] = {LLVMConstInt(t->i32, 0, 0), LLVMConstInt(t->i32, 1, 0)};
  LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->services, services, idx, 2, "");
  LLVMValueRef run = LLVMBuildLoad2(b, t->ptr, slot, "");
  LLVMTypeRef run_params[] = {t->ptr, t->ptr, t->ptr};
  LLVMTypeRef run_type = LLVMFunctionType(t->void_t, run_params, 3, 0);
  LLVMValueRef args[3] = {kb->wi, kernarg, wg};
  LLVMBuildCall2(b, run_type, run, args, 3, "");
  LLVMBuildRetVoid(b);
}

/* K.wg for a kernel split at barriers: the split function already runs the
 * whole group. With both a vectorized and a scalar one, the vectorized one
 * runs the groups whose size along x is a multiple of its width. */
/* Whether every global size of the range is below
 * VECTORIZE_GLOBAL_SIZE_LIMIT, where the vector version of a kernel
 * without a required size along x may run (vectorize.h says why); the
 * scalar version runs larger ranges. NULL when the kernel has a required
 * size along x: its vector version assumes nothing of the kind. */
LLVMValueRef vector_range_ok(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                             LLVMValueRef wg) {
  if (kb->reqd[0] || !kb->wi_vec || !kb->wi) return NULL;
  LLVMValueRef ok = NULL;
  for (unsigned d = 0; d < 3; d++) {
    LLVMValueRef size = load_wg_field(t, b, wg, WG_GLOBAL_SIZE, LLVMConstInt(t->i64, d, 0), t->i64);
    LLVMValueRef below =
        LLVMBuildICmp(b, LLVMIntULT, size,
                      LLVMConstInt(t->i64, (unsigned long long)VECTORIZE_GLOBAL_SIZE_LIMIT, 0), "");
    ok = ok ? LLVMBuildAnd(b, ok, below, "") : below;
  }
  return ok;
}

void build_region_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                            unsigned width) {
  LLVMValueRef fn = kb->wg, wg = LLVMGetParam(fn, 1);
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0);
  LLVMValueRef args[5] = {LLVMGetParam(fn, 0), wg, zero, zero, zero};
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->ctx, fn, "entry"));
  if (!kb->wi_vec || !kb->wi || kb->rows > 1) {
    LLVMBuildCall2(b, t->wi_fn, kb->wi_vec ? kb->wi_vec : kb->wi, args, 5, "");
    LLVMBuildRetVoid(b);
    return;
  }
  LLVMBasicBlockRef vec = LLVMAppendBasicBlockInContext(t->ctx, fn, "vector");
  LLVMBasicBlockRef scalar = LLVMAppendBasicBlockInContext(t->ctx, fn, "scalar");
  LLVMValueRef sx = load_wg_field(t, b, wg, WG_LOCAL_SIZE, LLVMConstInt(t->i64, 0, 0), t->i32);
  LLVMValueRef rest = LLVMBuildAnd(b, sx, LLVMConstInt(t->i32, width - 1, 0), "");
  LLVMValueRef use_vector = LLVMBuildICmp(b, LLVMIntEQ, rest, zero, "");
  LLVMValueRef range_ok = vector_range_ok(t, b, kb, wg);
  if (range_ok) use_vector = LLVMBuildAnd(b, use_vector, range_ok, "");
  LLVMBuildCondBr(b, use_vector, vec, scalar);
  LLVMPositionBuilderAtEnd(b, vec);
  LLVMBuildCall2(b, t->wi_fn, kb->wi_vec, args, 5, "");
  LLVMBuildRetVoid(b);
  LLVMPositionBuilderAtEnd(b, scalar);
  LLVMBuildCall2(b, t->wi_fn, kb->wi, args, 5, "");
  LLVMBuildRetVoid(b);
}

/* K.wg.scalar of a vectorized kernel (AQUILA_VECTORIZE=check): the
 * work-group with K.wi alone, as the kernel runs with AQUILA_VECTORIZE=0;
 * the descriptor names it beside K.wg. */
void build_scalar_twin(struct wg_types *t, LLVMModuleRef m, LLVMBuilderRef b,
                       struct kernel_build *kb) {
  struct strbuf name = {0};
  strbuf_printf(&name, "%s.wg.scalar", kb->name);
  LLVMValueRef fn = LLVMAddFunction(m, name.data, t->wg_fn);
  strbuf_free(&name);
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  add_param_attr(fn, 0, "noalias");
  add_param_attr(fn, 1, "noalias");
  add_fn_attr(fn, "nounwind");
  copy_fp_attributes(kb->wi, fn);
  if (kb->split_at_barriers) {
    /* The split function runs the whole group. */
    LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0);
    LLVMValueRef args[5] = {LLVMGetParam(fn, 0), LLVMGetParam(fn, 1), zero, zero, zero};
    LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->ctx, fn, "entry"));
    LLVMBuildCall2(b, t->wi_fn, kb->wi, args, 5, "");
    LLVMBuildRetVoid(b);
  } else {
    LLVMValueRef wg = kb->wg;
    kb->wg = fn;
    build_loop_workgroup(t, b, kb);
    kb->wg = wg;
  }
  kb->wg_scalar = fn;
}

/* Marks the loop whose latch branch is br as one the loop vectorizer
 * leaves alone: its body is already vectorized, or is the short scalar
 * rest of a row. With jam > 1, the loop is also to be unrolled and jammed
 * that many times: a loop inside the body then runs that many vectors of
 * work-items side by side, whose independent chains of operations hide
 * each other's latency (a chain of dependent FMAs per work-item runs at a
 * quarter of the machine's peak on its own). */
static void mark_loop_done(struct wg_types *t, LLVMValueRef br, unsigned jam) {
  LLVMContextRef ctx = t->ctx;
  LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
  LLVMMetadataRef loop_ops[3] = {self};
  unsigned n = 1;
  const char *key = "llvm.loop.vectorize.enable";
  LLVMMetadataRef ops[2] = {LLVMMDStringInContext2(ctx, key, strlen(key)),
                            LLVMValueAsMetadata(LLVMConstInt(LLVMInt1TypeInContext(ctx), 0, 0))};
  loop_ops[n++] = LLVMMDNodeInContext2(ctx, ops, 2);
  if (jam > 1) {
    const char *jkey = "llvm.loop.unroll_and_jam.count";
    LLVMMetadataRef jops[2] = {LLVMMDStringInContext2(ctx, jkey, strlen(jkey)),
                               LLVMValueAsMetadata(LLVMConstInt(t->i32, jam, 0))};
    loop_ops[n++] = LLVMMDNodeInContext2(ctx, jops, 2);
  }
  LLVMMetadataRef loop = LLVMMDNodeInContext2(ctx, loop_ops, n);
  LLVMMetadataReplaceAllUsesWith(self, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9),
                  LLVMMetadataAsValue(ctx, loop));
}

/* How many vectors of work-items a row loop should run side by side
 * (unroll-and-jam, mark_loop_done): enough independent chains to hide an
 * FMA's latency, judged by the vector values the body's loops carry, and
 * no more, or the jammed body runs out of registers. */
static unsigned jam_count(LLVMValueRef fn) {
  unsigned carried = 0, instructions = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      instructions++;
      /* LCSSA phis (one incoming value) carry nothing around a loop. */
      if (LLVMIsAPHINode(in) && LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMVectorTypeKind &&
          LLVMCountIncoming(in) > 1)
        carried++;
    }
  if (carried == 0) return 1; /* no loop inside: nothing to jam */
  unsigned jam = carried <= 2 ? 8 : carried <= 4 ? 4 : carried <= 8 ? 2 : 1;
  /* A large body, jammed, takes long to compile and gains little: its own
   * operations already overlap. */
  while (jam > 1 && instructions * jam > 4000)
    jam /= 2;
  return jam;
}

/* K.wg for a vectorized kernel without barriers: along each row, K.wi.v<W>
 * for every W work-items, then K.wi for the rest (none when the required
 * local size is a multiple of W). */
void build_vector_loop_workgroup(struct wg_types *t, LLVMBuilderRef b,
                                 struct kernel_build *kb, unsigned width) {
  LLVMValueRef fn = kb->wg, kernarg = LLVMGetParam(fn, 0), wg = LLVMGetParam(fn, 1);
  LLVMContextRef ctx = t->ctx;
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
  LLVMBasicBlockRef zh = LLVMAppendBasicBlockInContext(ctx, fn, "z.header");
  LLVMBasicBlockRef yh = LLVMAppendBasicBlockInContext(ctx, fn, "y.header");
  LLVMBasicBlockRef vb = LLVMAppendBasicBlockInContext(ctx, fn, "x.vector");
  LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(ctx, fn, "x.rest");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(ctx, fn, "x.scalar");
  LLVMBasicBlockRef yl = LLVMAppendBasicBlockInContext(ctx, fn, "y.latch");
  LLVMBasicBlockRef zl = LLVMAppendBasicBlockInContext(ctx, fn, "z.latch");
  LLVMBasicBlockRef exit = LLVMAppendBasicBlockInContext(ctx, fn, "exit");
  LLVMValueRef zero = LLVMConstInt(t->i32, 0, 0), one = LLVMConstInt(t->i32, 1, 0);
  LLVMValueRef w = LLVMConstInt(t->i32, width, 0);

  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef size[3];
  for (unsigned d = 0; d < 3; d++)
    size[d] = kb->reqd[d]
                  ? LLVMConstInt(t->i32, kb->reqd[d], 0)
                  : load_wg_field(t, b, wg, WG_LOCAL_SIZE, LLVMConstInt(t->i64, d, 0), t->i32);
  /* Two rows a vector: one vector a row pair (rows > 1 only with a
   * required size of W / 2 along x and an even one along y). */
  unsigned rows = kb->rows > 1 ? kb->rows : 1;
  if (rows > 1) size[0] = LLVMConstInt(t->i32, width, 0);
  LLVMValueRef vec_end = LLVMBuildAnd(b, size[0], LLVMConstInt(t->i32, ~(width - 1), 0), "vec.end");
  /* A row's tail is a vector too, its other lanes off (sub_groups.c). */
  if (tail_is_vector(kb))
    vec_end = LLVMBuildAnd(b, LLVMBuildAdd(b, size[0], LLVMConstInt(t->i32, width - 1, 0), ""),
                           LLVMConstInt(t->i32, ~(width - 1), 0), "vec.end");
  /* A range too large for the vector version: every row the scalar way. */
  LLVMValueRef range_ok = kb->scalar_used ? vector_range_ok(t, b, kb, wg) : NULL;
  if (range_ok) vec_end = LLVMBuildSelect(b, range_ok, vec_end, zero, "vec.end");
  LLVMBuildBr(b, zh);

  LLVMPositionBuilderAtEnd(b, zh);
  LLVMValueRef z = LLVMBuildPhi(b, t->i32, "z");
  LLVMBuildBr(b, yh);
  LLVMPositionBuilderAtEnd(b, yh);
  LLVMValueRef y = LLVMBuildPhi(b, t->i32, "y");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntNE, vec_end, zero, ""), vb, rest);

  LLVMPositionBuilderAtEnd(b, vb);
  LLVMValueRef x = LLVMBuildPhi(b, t->i32, "x");
  LLVMValueRef vargs[5] = {kernarg, wg, x, y, z};
  LLVMBuildCall2(b, t->wi_fn, kb->wi_vec, vargs, 5, "");
  LLVMValueRef xn = LLVMBuildNUWAdd(b, x, w, "x.next");
  mark_loop_done(t, LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, xn, vec_end, ""), vb, rest),
                 jam_count(kb->wi_vec));
  LLVMValueRef xin[2] = {zero, xn};
  LLVMBasicBlockRef xfrom[2] = {yh, vb};
  LLVMAddIncoming(x, xin, xfrom, 2);

  LLVMPositionBuilderAtEnd(b, rest);
  if (kb->scalar_used) {
    LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, vec_end, size[0], ""), sb, yl);
    LLVMPositionBuilderAtEnd(b, sb);
    LLVMValueRef xs = LLVMBuildPhi(b, t->i32, "x.scalar");
    LLVMValueRef sargs[5] = {kernarg, wg, xs, y, z};
    LLVMBuildCall2(b, t->wi_fn, kb->wi, sargs, 5, "");
    LLVMValueRef xsn = LLVMBuildNUWAdd(b, xs, one, "");
    mark_loop_done(t, LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, xsn, size[0], ""), sb, yl),
                   1);
    LLVMValueRef sin[2] = {vec_end, xsn};
    LLVMBasicBlockRef sfrom[2] = {rest, sb};
    LLVMAddIncoming(xs, sin, sfrom, 2);
  } else {
    LLVMBuildBr(b, yl);
    LLVMPositionBuilderAtEnd(b, sb);
    LLVMBuildUnreachable(b);
  }

  LLVMPositionBuilderAtEnd(b, yl);
  LLVMValueRef yn = LLVMBuildNUWAdd(b, y, LLVMConstInt(t->i32, rows, 0), "y.next");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, yn, size[1], ""), yh, zl);
  LLVMPositionBuilderAtEnd(b, zl);
  LLVMValueRef zn = LLVMBuildNUWAdd(b, z, one, "z.next");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, zn, size[2], ""), zh, exit);
  LLVMPositionBuilderAtEnd(b, exit);
  LLVMBuildRetVoid(b);
  LLVMValueRef zin[2] = {zero, zn}, yin[2] = {zero, yn};
  LLVMBasicBlockRef zfrom[2] = {entry, zl}, yfrom[2] = {zh, yl};
  LLVMAddIncoming(z, zin, zfrom, 2);
  LLVMAddIncoming(y, yin, yfrom, 2);
}
