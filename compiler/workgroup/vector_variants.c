/* The builtin library's vector variants (__aquila_vv_*): the masked
 * variant of a scalar function for each vector width, made so that the
 * loop vectorizer can call them, and inlined once vectorization is done.
 * Also the out-of-line paths kept as calls.
 *
 * Needs: attribute helpers (workitem.c), run_passes (workgroup.c). */
#include "workgroup/kernel_build.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The builtin library's out-of-line paths (rare image formats): one copy
 * in the code object, called by the kernels, never inlined. */
int is_out_of_line(LLVMValueRef f) {
  size_t len;
  return !strncmp(LLVMGetValueName2(f, &len), "__outofline_", 12);
}

/* name_m<vf>(vector args..., <vf x i1> mask): the scalar function for each
 * active lane, in a loop that runs only when a lane is. Inactive lanes of
 * the result are zero. */
static void build_masked_variant(LLVMModuleRef m, LLVMValueRef scalar, const char *name,
                                 unsigned vf) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef sty = LLVMGlobalGetValueType(scalar);
  unsigned np = LLVMCountParamTypes(sty);
  LLVMTypeRef *sp = calloc(np + 1, sizeof *sp), *vp = calloc(np + 1, sizeof *vp);
  if (!sp || !vp) abort();
  LLVMGetParamTypes(sty, sp);
  for (unsigned i = 0; i < np; i++)
    vp[i] = LLVMVectorType(sp[i], vf);
  LLVMTypeRef i1 = LLVMInt1TypeInContext(ctx), i32 = LLVMInt32TypeInContext(ctx);
  vp[np] = LLVMVectorType(i1, vf);
  LLVMTypeRef vret = LLVMVectorType(LLVMGetReturnType(sty), vf);
  LLVMValueRef f = LLVMAddFunction(m, name, LLVMFunctionType(vret, vp, np + 1, 0));
  /* Not internal until inlined: the optimizer would change an internal
   * function's signature or calling convention, and the vectorizer's calls,
   * made later, would no longer match it. */
  LLVMSetVisibility(f, LLVMHiddenVisibility);
  add_fn_attr(f, "noinline");
  add_fn_attr(f, "nounwind");

  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, f, "entry");
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(ctx, f, "lane");
  LLVMBasicBlockRef active = LLVMAppendBasicBlockInContext(ctx, f, "active");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(ctx, f, "next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, f, "done");
  LLVMValueRef mask = LLVMGetParam(f, np), zero = LLVMConstNull(vret);

  LLVMPositionBuilderAtEnd(b, entry);
  LLVMTypeRef mty = vp[np];
  unsigned reduce_id = LLVMLookupIntrinsicID("llvm.vector.reduce.or", 21);
  LLVMValueRef reduce = LLVMGetIntrinsicDeclaration(m, reduce_id, &mty, 1);
  LLVMValueRef any =
      LLVMBuildCall2(b, LLVMIntrinsicGetType(ctx, reduce_id, &mty, 1), reduce, &mask, 1, "any");
  LLVMBuildCondBr(b, any, loop, done);

  LLVMPositionBuilderAtEnd(b, loop);
  LLVMValueRef lane = LLVMBuildPhi(b, i32, "i"), acc = LLVMBuildPhi(b, vret, "acc");
  LLVMValueRef on = LLVMBuildExtractElement(b, mask, lane, "");
  LLVMBuildCondBr(b, on, active, next);

  LLVMPositionBuilderAtEnd(b, active);
  LLVMValueRef *args = calloc(np ? np : 1, sizeof *args);
  if (!args) abort();
  for (unsigned i = 0; i < np; i++)
    args[i] = LLVMBuildExtractElement(b, LLVMGetParam(f, i), lane, "");
  LLVMValueRef r = LLVMBuildCall2(b, sty, scalar, args, np, "");
  LLVMValueRef acc_set = LLVMBuildInsertElement(b, acc, r, lane, "");
  LLVMBuildBr(b, next);

  LLVMPositionBuilderAtEnd(b, next);
  LLVMValueRef acc_next = LLVMBuildPhi(b, vret, "");
  LLVMValueRef lane_next = LLVMBuildAdd(b, lane, LLVMConstInt(i32, 1, 0), "");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntULT, lane_next, LLVMConstInt(i32, vf, 0), ""), loop,
                  done);

  LLVMValueRef in_lane[2] = {LLVMConstInt(i32, 0, 0), lane_next}, in_acc[2] = {zero, acc_next};
  LLVMBasicBlockRef from_lane[2] = {entry, next};
  LLVMAddIncoming(lane, in_lane, from_lane, 2);
  LLVMAddIncoming(acc, in_acc, from_lane, 2);
  LLVMValueRef in_next[2] = {acc, acc_set};
  LLVMBasicBlockRef from_next[2] = {loop, active};
  LLVMAddIncoming(acc_next, in_next, from_next, 2);

  LLVMPositionBuilderAtEnd(b, done);
  LLVMValueRef res = LLVMBuildPhi(b, vret, "");
  LLVMValueRef in_done[2] = {zero, acc_next};
  LLVMBasicBlockRef from_done[2] = {entry, next};
  LLVMAddIncoming(res, in_done, from_done, 2);
  LLVMBuildRet(b, res);
  LLVMDisposeBuilder(b);
  free(args);
  free(sp);
  free(vp);
}

void mark_vector_variants(LLVMModuleRef m) {
  static const unsigned widths[] = {4, 8, 16};
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMValueRef next_f;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next_f) {
    next_f = LLVMGetNextFunction(f);
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (!is_vector_variant_name(name) || LLVMIsDeclaration(f)) continue;
    LLVMTypeRef ret = LLVMGetReturnType(LLVMGlobalGetValueType(f));
    if (LLVMGetTypeKind(ret) == LLVMVoidTypeKind || LLVMGetTypeKind(ret) == LLVMVectorTypeKind)
      continue;
    LLVMSetLinkage(f, LLVMExternalLinkage);
    LLVMSetVisibility(f, LLVMHiddenVisibility);
    unsigned np = LLVMCountParams(f);
    struct strbuf value = {0};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
      char variant[256];
      snprintf(variant, sizeof variant, "%s_m%u", name, widths[i]);
      if (!LLVMGetNamedFunction(m, variant)) build_masked_variant(m, f, variant, widths[i]);
      strbuf_printf(&value, "%s_ZGV_LLVM_M%u", value.len ? "," : "", widths[i]);
      for (unsigned p = 0; p < np; p++)
        strbuf_append(&value, "v");
      strbuf_printf(&value, "_%s(%s)", name, variant);
    }
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(ctx, "vector-function-abi-variant", 27,
                                                      value.data, (unsigned)value.len));
    strbuf_free(&value);
  }
}

int workgroup_inline_vector_variants(LLVMModuleRef m, struct strbuf *log) {
  unsigned noinline = attr_kind("noinline");
  int any = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    if (LLVMIsDeclaration(f) || !is_vector_variant_name(LLVMGetValueName2(f, &len))) continue;
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline);
    add_fn_attr(f, "alwaysinline");
    LLVMSetLinkage(f, LLVMInternalLinkage);
    any = 1;
  }
  if (!any) return 0;
  return run_passes(m, "always-inline,globaldce,function(instcombine,simplifycfg)", log);
}
