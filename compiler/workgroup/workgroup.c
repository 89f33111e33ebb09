/* The work-group compiler. Each OpenCL kernel K becomes:
 *
 *   K.wi(kernarg, wg, x, y, z)  one work-item: unpacks the arguments from the
 *                               kernarg segment and runs K's body with the
 *                               work-item builtins bound to x, y, z and wg;
 *   K.wg(kernarg, wg)           one work-group: for a kernel without barriers,
 *                               a z/y/x loop nest around the inlined K.wi, which
 *                               LLVM's loop vectorizer vectorizes across
 *                               work-items; for a kernel with barriers, a call
 *                               to the agent's run_workitems service, which
 *                               runs K.wi as fibers switched at each barrier.
 *
 * The builtin library implements the work-item functions with __aquila_*
 * calls; they are bound here, after every call has been inlined, so each
 * becomes a register or a load from the work-group descriptor. Static
 * __local variables become thread-local: a compute unit runs one work-group
 * at a time, so each compute unit's copy is that work-group's local memory.
 * The module finally exports __aquila_kernel_table.
 *
 * The files, in the order a kernel passes them:
 *   workitem.c          K.wi: kernarg layout, work-item builtins bound;
 *   vector_kernels.c    K.wi.v<W>: which kernels are vectorized, and how
 *                       (the vectorizer itself is vectorize/);
 *   regions.c           work-item loops split at barriers; uniform.c the
 *                       uniformity it and the loops use;
 *   group_function.c    K.wg: the loops (or fibers) around K.wi;
 *   group_memory.c      static __local variables in the group segment;
 *   vector_variants.c   the builtin library's masked vector variants;
 *   prefetch.c          prefetches ahead of vectorized loops' accesses;
 *   workgroup.c         (this file) the entry points and the kernel table.
 * kernel_build.h declares what they share. */
#include "workgroup/workgroup.h"

#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "analysis/footprint_analysis.h"
#include "workgroup/kernel_build.h"
#include "workgroup/prefetch.h"
#include "workgroup/regions.h"
#include "workgroup/uniform.h"
#include "vectorize/vectorize.h"

static LLVMValueRef const_string(struct wg_types *t, LLVMModuleRef m, const char *s) {
  LLVMValueRef init = LLVMConstStringInContext(t->ctx, s, (unsigned)strlen(s), 0);
  LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), "");
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

static void emit_kernel_table(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kbs,
                              unsigned n) {
  LLVMTypeRef a3i32 = LLVMArrayType2(t->i32, 3);
  LLVMTypeRef dfields[] = {t->i32, t->i32, t->i32, t->i32, t->i32, t->i32,
                           t->i32, a3i32,  t->ptr, t->ptr, t->ptr};
  LLVMTypeRef desc_type = LLVMStructTypeInContext(t->ctx, dfields, 11, 0);
  LLVMValueRef *descs = calloc(n ? n : 1, sizeof *descs);
  if (!descs) abort();
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    const char *name = kb->name;
    LLVMValueRef reqd[3];
    for (int d = 0; d < 3; d++)
      reqd[d] = LLVMConstInt(t->i32, kb->reqd[d], 0);
    LLVMValueRef fields[] = {
        LLVMConstInt(t->i32, AQUILA_CPU_ABI_VERSION, 0),
        LLVMConstInt(t->i32,
                     (kb->uses_barrier ? AQUILA_KERNEL_USES_BARRIER : 0) |
                         (kb->wg_scalar ? AQUILA_KERNEL_HAS_SCALAR_TWIN : 0) |
                         (kb->size_indifferent ? AQUILA_KERNEL_SIZE_INDIFFERENT : 0) |
                         AQUILA_KERNEL_SUB_GROUP_WIDTH(sub_group_width(kb)),
                     0),
        LLVMConstInt(t->i32, kb->kernarg_size, 0),
        LLVMConstInt(t->i32, kb->kernarg_align, 0),
        LLVMConstInt(t->i32, kb->hidden_offset, 0),
        LLVMConstInt(t->i32, kb->local_mem, 0),
        LLVMConstInt(t->i32, 0, 0),
        LLVMConstArray2(t->i32, reqd, 3),
        kb->wg,
        const_string(t, m, name),
        kb->wg_scalar ? kb->wg_scalar : LLVMConstPointerNull(t->ptr),
    };
    LLVMValueRef init = LLVMConstNamedStruct(desc_type, fields, 11);
    struct strbuf gname = {0};
    strbuf_printf(&gname, "%s.kd", name);
    LLVMValueRef g = LLVMAddGlobal(m, desc_type, gname.data);
    strbuf_free(&gname);
    LLVMSetInitializer(g, init);
    LLVMSetGlobalConstant(g, 1);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    descs[i] = g;
  }
  LLVMValueRef arr_init = LLVMConstArray2(t->ptr, descs, n);
  LLVMValueRef arr = LLVMAddGlobal(m, LLVMTypeOf(arr_init), "__aquila_kernels");
  LLVMSetInitializer(arr, arr_init);
  LLVMSetGlobalConstant(arr, 1);
  LLVMSetLinkage(arr, LLVMInternalLinkage);
  LLVMTypeRef tfields[] = {t->i32, t->i32, t->ptr};
  LLVMTypeRef table_type = LLVMStructTypeInContext(t->ctx, tfields, 3, 0);
  LLVMValueRef tvals[] = {LLVMConstInt(t->i32, AQUILA_CPU_ABI_VERSION, 0),
                          LLVMConstInt(t->i32, n, 0), arr};
  LLVMValueRef table = LLVMAddGlobal(m, table_type, AQUILA_KERNEL_TABLE_SYMBOL);
  LLVMSetInitializer(table, LLVMConstNamedStruct(table_type, tvals, 3));
  LLVMSetGlobalConstant(table, 1);
  LLVMSetVisibility(table, LLVMDefaultVisibility);
  free(descs);
}

int run_passes(LLVMModuleRef m, const char *passes, struct strbuf *log) {
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, passes, NULL, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (!err) return 0;
  char *msg = LLVMGetErrorMessage(err);
  strbuf_printf(log, "error: internal: %s failed: %s\n", passes, msg);
  LLVMDisposeErrorMessage(msg);
  return -1;
}

/* Bytes of the allocas of constant size in fn. */
static uint64_t frame_bytes(LLVMTargetDataRef td, LLVMValueRef fn) {
  uint64_t total = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsAAllocaInst(in)) continue;
      LLVMValueRef count = LLVMGetOperand(in, 0);
      if (!LLVMIsAConstantInt(count)) continue; /* sized by the work-group at run time */
      uint64_t bytes = LLVMABISizeOfType(td, LLVMGetAllocatedType(in));
      uint64_t n = LLVMConstIntGetZExtValue(count);
      total += n && bytes > UINT64_MAX / n ? UINT64_MAX / 2 : bytes * n;
    }
  return total;
}

/* A work-group function's own frame, and the largest of the work-item
 * functions it calls rather than inlines (a kernel with barriers,
 * vectorized and not); only one of them runs at a time. */
static uint64_t wg_frame_bytes(LLVMTargetDataRef td, LLVMValueRef wg) {
  uint64_t own = frame_bytes(td, wg), callee_max = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(wg); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
      if (!callee || !LLVMIsAFunction(callee) || LLVMIsDeclaration(callee) || callee == wg)
        continue;
      uint64_t bytes = frame_bytes(td, callee);
      if (bytes > callee_max) callee_max = bytes;
    }
  return own + callee_max;
}

int workgroup_record_private_sizes(LLVMModuleRef m, struct strbuf *log) {
  (void)log;
  LLVMValueRef table = LLVMGetNamedGlobal(m, "__aquila_kernels");
  if (!table || !LLVMGetInitializer(table)) return 0;
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(m);
  LLVMValueRef descs = LLVMGetInitializer(table);
  unsigned n = (unsigned)LLVMGetArrayLength2(LLVMTypeOf(descs));
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef kd = LLVMGetAggregateElement(descs, i);
    LLVMValueRef init = kd && LLVMIsAGlobalVariable(kd) ? LLVMGetInitializer(kd) : NULL;
    if (!init || LLVMGetNumOperands(init) != 11) continue;
    /* K.wg, and K.wg.scalar where there is one (AQUILA_VECTORIZE=check):
     * one of them runs at a time. */
    uint64_t bytes = 0;
    for (unsigned w = 8; w <= 10; w += 2) {
      LLVMValueRef wg = LLVMGetOperand(init, w);
      if (!LLVMIsAFunction(wg)) continue;
      uint64_t fn_bytes = wg_frame_bytes(td, wg);
      if (fn_bytes > bytes) bytes = fn_bytes;
    }
    LLVMValueRef fields[11];
    for (unsigned f = 0; f < 11; f++)
      fields[f] = LLVMGetOperand(init, f);
    LLVMTypeRef i32 = LLVMTypeOf(fields[6]);
    fields[6] = LLVMConstInt(i32, bytes > UINT32_MAX ? UINT32_MAX : bytes, 0);
    LLVMSetInitializer(kd, LLVMConstNamedStruct(LLVMTypeOf(init), fields, 11));
  }
  return 0;
}

/* Clang marks everything noinline at -O0 and pins a CPU: undo both so the
 * work-group function can absorb the whole call tree and the target machine
 * chooses the instruction set. */
static void prepare_functions(LLVMModuleRef m) {
  static const char *const drop_strings[] = {"target-cpu", "target-features", "tune-cpu",
                                             "frame-pointer", NULL};
  unsigned noinline = attr_kind("noinline"), optnone = attr_kind("optnone");
  /* -mlink-builtin-bitcode marks every library function convergent, which
   * keeps the loop vectorizer away from loops that call them. Only barriers
   * must stay convergent, and they are bound to the agent's service below. */
  unsigned convergent = attr_kind("convergent");
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetFunctionCallConv(f) == LLVMSPIRKERNELCallConv ||
        LLVMGetFunctionCallConv(f) == LLVMSPIRFUNCCallConv)
      LLVMSetFunctionCallConv(f, LLVMCCallConv);
    for (int i = 0; drop_strings[i]; i++)
      LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, drop_strings[i],
                                       (unsigned)strlen(drop_strings[i]));
    size_t len;
    int is_barrier = !strcmp(LLVMGetValueName2(f, &len), "__aquila_barrier");
    if (!is_barrier) LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, convergent);
    if (LLVMIsDeclaration(f)) continue;
    if (!is_out_of_line(f) && !is_vector_variant_name(LLVMGetValueName2(f, &len)))
      LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline);
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
        if (LLVMIsACallInst(in)) {
          LLVMSetInstructionCallConv(in, LLVMCCallConv);
          LLVMValueRef callee = LLVMGetCalledValue(in);
          size_t clen = 0;
          const char *cname =
              callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &clen) : "";
          if (!is_vector_variant_name(cname) &&
              !(callee && LLVMIsAFunction(callee) && is_out_of_line(callee)))
            LLVMRemoveCallSiteEnumAttribute(in, LLVMAttributeFunctionIndex, noinline);
          /* Barriers and sub-group operations stay where they are:
           * moved in or out of a branch, they would see other lanes. */
          if (strcmp(cname, "__aquila_barrier") != 0 && strncmp(cname, "__aquila_sg_", 12) != 0)
            LLVMRemoveCallSiteEnumAttribute(in, LLVMAttributeFunctionIndex, convergent);
          /* OpenCL C's printf is the agent's printf service, not C's: the
           * optimizer must not turn printf("%s\n", s) into puts(s). */
          if (!strcmp(cname, "printf"))
            LLVMAddCallSiteAttribute(
                in, LLVMAttributeFunctionIndex,
                LLVMCreateEnumAttribute(LLVMGetModuleContext(m), attr_kind("nobuiltin"), 0));
        }
  }
}

int workgroup_kernel_layout(LLVMModuleRef m, struct aquila_fatbin_kernel *kernels,
                            unsigned num_kernels, struct strbuf *log) {
  struct wg_types t;
  init_types(&t, m);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv || LLVMIsDeclaration(f)) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    struct aquila_fatbin_kernel *meta = NULL;
    for (unsigned i = 0; i < num_kernels && !meta; i++)
      if (!strcmp(kernels[i].name, name)) meta = &kernels[i];
    if (!meta) continue;
    unsigned nparams = LLVMCountParams(f);
    if (meta->num_args != nparams) {
      strbuf_printf(log, "error: kernel '%s': front end saw %u arguments, code has %u\n", name,
                    meta->num_args, nparams);
      return -1;
    }
    uint32_t offset = 0, max_align = 16;
    for (unsigned i = 0; i < nparams; i++) {
      LLVMTypeRef value_type;
      uint32_t size, align;
      int is_local_ptr = kernel_arg_slot(&t, f, i, &value_type, &size, &align);
      offset = align_up(offset, align);
      if (align > max_align) max_align = align;
      record_arg_layout(&meta->args[i], offset, size, align, is_local_ptr);
      offset += size;
    }
    meta->hidden_kernarg_offset = align_up(offset, 8);
    meta->kernarg_size =
        meta->hidden_kernarg_offset + (uint32_t)sizeof(struct aquila_hidden_kernargs);
    meta->kernarg_alignment = max_align;
    read_function_md_ints(t.ctx, f, "reqd_work_group_size", meta->reqd_work_group_size);
    read_function_md_ints(t.ctx, f, "work_group_size_hint", meta->work_group_size_hint);
    free(meta->vec_type_hint);
    meta->vec_type_hint = read_vec_type_hint(t.ctx, f);
    free(meta->attributes);
    meta->attributes = kernel_attributes(meta);
  }
  return 0;
}

/* get_work_dim() of a kernel whose required size spans more than one
 * dimension is at least that many: the runtime refuses a range of fewer.
 * Said so (umax), get_local_id(1)'s test of the dimension folds away, and
 * an 8 x 8 kernel's flattened id, x + 8 * y, is consecutive across a
 * two-row vector instead of two runs of unknown gap. Only for kernels
 * vectorized so: with the test gone, clFFT's 16 x 16 transposes had their
 * tile loops unrolled whole, which left no loop for their prefetches
 * (prefetch.c) and cost its 1D transform a quarter of its speed. */
static void bound_work_dim(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kb,
                           const struct vectorize_target *vt) {
  unsigned lo = kb->reqd[2] > 1 ? 3 : kb->reqd[1] > 1 ? 2 : 1;
  if (lo < 2 || !kb->wi || vector_rows(kb, vt) < 2) return;
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  unsigned id = LLVMLookupIntrinsicID("llvm.umax", 9);
  LLVMValueRef umax = LLVMGetIntrinsicDeclaration(m, id, &t->i32, 1);
  LLVMTypeRef umax_type = LLVMIntrinsicGetType(t->ctx, id, &t->i32, 1);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(kb->wi); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
      size_t len;
      if (!callee || !LLVMIsAFunction(callee) ||
          strcmp(LLVMGetValueName2(callee, &len), "__aquila_work_dim") ||
          LLVMTypeOf(in) != t->i32 || !LLVMGetFirstUse(in))
        continue;
      LLVMValueRef next = LLVMGetNextInstruction(in);
      LLVMPositionBuilderBefore(b, next);
      LLVMValueRef args[2] = {in, LLVMConstInt(t->i32, lo, 0)};
      LLVMValueRef bounded = LLVMBuildCall2(b, umax_type, umax, args, 2, "work.dim");
      LLVMReplaceAllUsesWith(in, bounded);
      LLVMSetOperand(bounded, 0, in);
      in = bounded;
    }
  LLVMDisposeBuilder(b);
}

/* Whether every work-group of every launch is whole: clang says so of
 * OpenCL C before 2.0 and of -cl-uniform-work-group-size. */
static int kernel_groups_uniform(LLVMValueRef kernel) {
  static const char key[] = "uniform-work-group-size";
  LLVMAttributeRef a =
      LLVMGetStringAttributeAtIndex(kernel, LLVMAttributeFunctionIndex, key, sizeof key - 1);
  unsigned len = 0;
  const char *v = a ? LLVMGetStringAttributeValue(a, &len) : NULL;
  return v && len == 4 && !memcmp(v, "true", 4);
}


int workgroup_compile(LLVMModuleRef m, struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                      const struct vectorize_target *vt, const uint32_t *local_size,
                      struct strbuf *log) {
  struct wg_types t;
  init_types(&t, m);
  unsigned n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (LLVMGetFunctionCallConv(f) == LLVMSPIRKERNELCallConv && !LLVMIsDeclaration(f)) n++;
  struct kernel_build *kbs = calloc(n ? n : 1, sizeof *kbs);
  if (!kbs) abort();
  n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv || LLVMIsDeclaration(f)) continue;
    struct kernel_build *kb = &kbs[n++];
    kb->kernel = f;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    kb->name = strdup(name);
    if (!kb->name) abort();
    for (unsigned i = 0; i < num_kernels; i++)
      if (!strcmp(kernels[i].name, name)) kb->meta = &kernels[i];
    read_function_md_ints(t.ctx, f, "reqd_work_group_size", kb->reqd);
    uint32_t sg[3] = {0, 0, 0};
    read_function_md_ints(t.ctx, f, "intel_reqd_sub_group_size", sg);
    kb->reqd_sub_group_size = sg[0];
    if (kb->meta) {
      memcpy(kb->meta->reqd_work_group_size, kb->reqd, sizeof kb->reqd);
      read_function_md_ints(t.ctx, f, "work_group_size_hint", kb->meta->work_group_size_hint);
      free(kb->meta->vec_type_hint);
      kb->meta->vec_type_hint = read_vec_type_hint(t.ctx, f);
      free(kb->meta->attributes);
      kb->meta->attributes = kernel_attributes(kb->meta);
    }
    /* OpenCL C 2.0 and later (clang's "uniform-work-group-size"="false",
     * and SPIR-V, which says nothing): the last work-group of a dimension
     * may be partial, so the required size is only the enqueued one and
     * the code takes no size as every group's. The metadata keeps it. */
    if (!kernel_groups_uniform(f)) memset(kb->reqd, 0, sizeof kb->reqd);
    /* A specialized version: the launch's size stands for a required one
     * in the code (and the kernel table), not in the metadata; the runtime
     * specializes only launches whose work-groups are all whole. */
    if (local_size && !kb->reqd[0] && !kb->reqd[1] && !kb->reqd[2])
      memcpy(kb->reqd, local_size, sizeof kb->reqd);
  }
  prepare_functions(m);
  mark_vector_variants(m);

  int status = 0;
  for (unsigned i = 0; i < n && !status; i++)
    status = build_workitem_function(&t, m, &kbs[i], log);
  if (status) goto out;

  /* Inline the whole call tree of each kernel into its K.wi. */
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    int is_wi = 0;
    for (unsigned i = 0; i < n; i++)
      is_wi |= kbs[i].wi == f;
    if (is_wi) continue;
    size_t flen;
    if (is_vector_variant_name(LLVMGetValueName2(f, &flen))) continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
    if (is_out_of_line(f)) continue;
    add_fn_attr(f, "alwaysinline");
  }
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, "always-inline", NULL, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    strbuf_printf(log, "error: internal: inlining failed: %s\n", msg);
    LLVMDisposeErrorMessage(msg);
    status = -1;
    goto out;
  }

  for (unsigned i = 0; i < n; i++) {
    guard_integer_division(&t, kbs[i].wi);
    if (vt) unvolatile_private_variables(kbs[i].wi);
    bound_work_dim(&t, m, &kbs[i], vt);
  }
  /* Static __local variables become addresses in the group segment before
   * anything copies or vectorizes the functions that use them. */
  localize_group_variables(&t, m, kbs, n);

  /* Kernels with barriers: split into work-item loops at the barriers, or,
   * with AQUILA_BARRIERS=fibers, run each work-item as a fiber. */
  const char *barrier_mode = getenv("AQUILA_BARRIERS");
  int use_fibers = barrier_mode && !strcmp(barrier_mode, "fibers");
  int vectorize = vectorizing(vt);
  /* SSA form and simple loops: what the uniformity analysis, the vectorizer
   * and the barrier transformation work on. OpenCL vectors stay whole: the
   * vectorizer takes them apart itself, and the scalar version of a kernel
   * keeps them (applications that run one work-item per group, hashcat
   * among them, rely on them for SIMD). The vectorizer wants loops rotated (the exit test at the
   * latch) and values leaving loops in LCSSA phis; loops with few, constant iterations
   * (#pragma unroll ones among them) are unrolled first, so that private
   * arrays indexed by their counters become registers. The same for scalar
   * code of an optimized build (the quick tier, AQUILA_VECTORIZE=0): the
   * simplified kernel is a fraction of the size for what follows (a kernel
   * of 19,800 instructions became 4,300). -cl-opt-disable (no vt) keeps
   * the minimum. */
  if (run_passes(m,
                 vt ? "function(sroa,early-cse,instcombine<no-verify-fixpoint>,"
                      "simplifycfg<no-hoist-common-insts;no-sink-common-insts;keep-loops>,"
                      "loop(loop-rotate),loop(loop-unroll-full),sroa,"
                      "instcombine<no-verify-fixpoint>,"
                      "simplifycfg<no-hoist-common-insts;no-sink-common-insts;keep-loops>,"
                      "loop-simplify,lcssa)"
                    : "function(sroa,loop-simplify)",
                 log))
    goto fail;
  for (unsigned i = 0; i < n; i++) {
    kbs[i].uses_barrier = calls_function(kbs[i].wi, "__aquila_barrier");
    kbs[i].uses_sub_groups = uses_sub_groups(kbs[i].wi);
    if (kbs[i].uses_sub_groups && !kbs[i].uses_barrier && vectorize)
      guard_row_tail(&t, &kbs[i]);
  }
  /* What each kernel writes where, for the runtime (runtime/launch_footprint.c): on the
   * simplified function, before anything makes it a work-group's. */
  for (unsigned i = 0; i < n; i++)
    if (kbs[i].meta)
      footprint_analyse(kbs[i].wi, t.td, kbs[i].meta, footprint_report_wanted() ? log : NULL);
  if (vectorize) vectorize_kernels(m, kbs, n, vt, use_fibers);
  for (unsigned i = 0; i < n; i++)
    kbs[i].size_indifferent = size_indifferent(&kbs[i], vt);
  /* A sub-group size the kernel requires is its vector's width, or one
   * work-item: the build of a kernel that uses sub-groups fails where
   * neither is that size (in one that does not, no one can tell). */
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    if (!kb->reqd_sub_group_size || !kb->uses_sub_groups ||
        sub_group_width(kb) == kb->reqd_sub_group_size)
      continue;
    strbuf_printf(log,
                  "error: kernel '%s': intel_reqd_sub_group_size(%u) cannot be met: its "
                  "sub-groups here are %u work-item%s wide (%s)\n",
                  kb->name, kb->reqd_sub_group_size, sub_group_width(kb),
                  sub_group_width(kb) == 1 ? "" : "s",
                  kb->wi_vec ? "the vector's width on this CPU"
                             : (kb->vec_why.len ? kb->vec_why.data : "not vectorized"));
    status = -1;
  }
  if (status) goto out;
  if (vectorize) {
    vectorize_reciprocal_sqrt(m, vt);
    /* Tiled kernels: the next tile's lines on their way during this
     * tile's computation; walks by large steps: lines a few steps ahead
     * (prefetch.c). */
    for (unsigned i = 0; i < n; i++)
      if (kbs[i].wi_vec && !kbs[i].paired) kbs[i].prefetches = prefetch_loops(m, kbs[i].wi_vec);
  }
  /* After the vectorizer, which keeps its own versions' arrays in bounds
   * and reads the indices' shapes from the unchanged scalar function. */
  for (unsigned i = 0; i < n; i++)
    contain_private_accesses(&t, kbs[i].wi);
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    kb->vec_only = kb->wi_vec && kb->reqd[0] && (kb->rows > 1 || kb->reqd[0] % kb->width == 0);
    kb->scalar_used = !kb->vec_only;
    kb->check_twin = kb->wi_vec && check_mode();
  }
  /* Barriers around loops that every work-item runs alike, so that the
   * work-item loop ends up innermost (uniform.c): for the scalar versions of
   * kernels with barriers, and for kernels not vectorized. A vectorized
   * function keeps such loops whole, each iteration over a vector. */
  const char *loop_barriers = getenv("AQUILA_LOOP_BARRIERS");
  if (!use_fibers && !(loop_barriers && !strcmp(loop_barriers, "0")))
    for (unsigned i = 0; i < n; i++)
      if ((kbs[i].scalar_used || kbs[i].check_twin) && (!kbs[i].wi_vec || kbs[i].uses_barrier))
        uniform_insert_loop_barriers(m, kbs[i].wi);
  int any_split = 0;
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    if (!kb->wi_vec) kb->uses_barrier = calls_function(kb->wi, "__aquila_barrier");
    kb->split_at_barriers = kb->uses_barrier && !use_fibers;
    any_split |= kb->split_at_barriers;
    if (!kb->scalar_used && !kb->check_twin) {
      LLVMDeleteFunction(kb->wi);
      kb->wi = NULL;
    }
  }
  for (unsigned i = 0; i < n && !status; i++) {
    struct kernel_build *kb = &kbs[i];
    if (kb->wi) status = bind_workitem_builtins(&t, kb, kb->wi, kb->split_at_barriers, log);
    if (!status && kb->wi_vec)
      status = bind_workitem_builtins(&t, kb, kb->wi_vec, kb->split_at_barriers, log);
  }
  if (status) goto out;
  if (any_split) {
    if (!vectorize && run_passes(m, "function(scalarizer,instcombine<no-verify-fixpoint>)", log))
      goto fail;
    /* reg2mem before and after the block splitting: regions.c clones blocks
     * and wants no phi nodes and no value used outside its block. */
    for (unsigned i = 0; i < n; i++) {
      if (!kbs[i].split_at_barriers) continue;
      if (kbs[i].wi) regions_rematerialize(t.ctx, kbs[i].wi);
      if (kbs[i].wi_vec) regions_rematerialize(t.ctx, kbs[i].wi_vec);
    }
    if (run_passes(m, "function(reg2mem)", log)) goto fail;
    for (unsigned i = 0; i < n; i++) {
      if (!kbs[i].split_at_barriers) continue;
      if (kbs[i].wi) regions_prepare(t.ctx, kbs[i].wi);
      if (kbs[i].wi_vec) regions_prepare(t.ctx, kbs[i].wi_vec);
      /* Again: a barrier in the middle of a block has split it, and a cheap
       * value (a local id, an index) computed before the barrier and used
       * after it would otherwise be kept in a context array, where LLVM can
       * no longer see what it is (x % 8 of a vector's first work-item is 0). */
      if (kbs[i].wi) regions_rematerialize(t.ctx, kbs[i].wi);
      if (kbs[i].wi_vec) regions_rematerialize(t.ctx, kbs[i].wi_vec);
    }
    if (run_passes(m, "function(reg2mem)", log)) goto fail;
    for (unsigned i = 0; i < n && !status; i++) {
      struct kernel_build *kb = &kbs[i];
      if (!kb->split_at_barriers) continue;
      if (kb->wi)
        status = regions_transform(t.ctx, kb->wi, t.workgroup, LLVMGetParam(kb->wi, 1), 1, 1,
                                   kb->reqd, kb->wi_vec ? NULL : &kb->regions, log);
      if (!status && kb->wi_vec)
        status = regions_transform(t.ctx, kb->wi_vec, t.workgroup, LLVMGetParam(kb->wi_vec, 1),
                                   kb->width, kb->rows, kb->reqd, &kb->regions, log);
    }
    if (status) goto out;
  }

  LLVMBuilderRef b = LLVMCreateBuilderInContext(t.ctx);
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    struct strbuf wg_name = {0};
    strbuf_printf(&wg_name, "%s.wg", kb->name);
    kb->wg = LLVMAddFunction(m, wg_name.data, t.wg_fn);
    strbuf_free(&wg_name);
    LLVMSetLinkage(kb->wg, LLVMInternalLinkage);
    add_param_attr(kb->wg, 0, "noalias");
    add_param_attr(kb->wg, 1, "noalias");
    add_fn_attr(kb->wg, "nounwind");
    /* One function called from K.wg is inlined into it; of two (a kernel
     * with barriers, vectorized and not), each stays a function of its own. */
    const char *inline_attr =
        kb->wi && kb->wi_vec && kb->split_at_barriers ? "noinline" : "alwaysinline";
    copy_fp_attributes(kb->wi ? kb->wi : kb->wi_vec, kb->wg);
    if (kb->split_at_barriers) {
      build_region_workgroup(&t, b, kb, kb->wi_vec ? kb->width : 1);
    } else if (kb->uses_barrier) {
      build_fiber_workgroup(&t, b, kb);
      inline_attr = "noinline";
    } else if (kb->wi_vec) {
      build_vector_loop_workgroup(&t, b, kb, kb->width);
    } else {
      build_loop_workgroup(&t, b, kb);
    }
    if (kb->check_twin) build_scalar_twin(&t, m, b, kb);
    LLVMValueRef wi_fns[2] = {kb->wi, kb->wi_vec};
    for (unsigned f = 0; f < 2; f++) {
      if (!wi_fns[f]) continue;
      add_fn_attr(wi_fns[f], inline_attr);
      /* Inlined, K.wi's pointers are K.wg's, noalias already. Kept, noalias
       * leaves a noalias.scope.decl in every work-item loop, which stops
       * LLVM from unrolling and jamming it. */
      if (!strcmp(inline_attr, "alwaysinline"))
        for (unsigned p = 0; p < 2; p++)
          LLVMRemoveEnumAttributeAtIndex(wi_fns[f], p + 1, attr_kind("noalias"));
    }
    if (vt && report_wanted()) report_kernel(kb, vt, use_fibers && kb->uses_barrier, log);
  }
  LLVMDisposeBuilder(b);
  for (unsigned i = 0; i < n; i++) {
    if (!kbs[i].meta) continue;
    kbs[i].meta->kernarg_size = kbs[i].kernarg_size;
    kbs[i].meta->kernarg_alignment = kbs[i].kernarg_align;
    kbs[i].meta->hidden_kernarg_offset = kbs[i].hidden_offset;
    kbs[i].meta->local_mem_size = kbs[i].local_mem;
  }
  emit_kernel_table(&t, m, kbs, n);
  goto out;
fail:
  status = -1;
out:
  for (unsigned i = 0; i < n; i++) {
    free(kbs[i].name);
    strbuf_free(&kbs[i].vec_why);
    strbuf_free(&kbs[i].pair_why);
  }
  free(kbs);
  return status;
}
