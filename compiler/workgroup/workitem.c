/* K.wi, the work-item function: the IR types of the work-group
 * descriptor and services (cpu_abi.h), attributes and metadata read from
 * the kernel, the kernarg segment's layout and the function that unpacks
 * it and runs the kernel's body, and the binding of the builtin library's
 * __aquila_* work-item calls to x, y, z and the work-group descriptor.
 *
 * Needs: nothing of the other files. */
#include "workgroup/kernel_build.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"

void init_types(struct wg_types *t, LLVMModuleRef m) {
  t->ctx = LLVMGetModuleContext(m);
  t->i8 = LLVMInt8TypeInContext(t->ctx);
  t->i32 = LLVMInt32TypeInContext(t->ctx);
  t->i64 = LLVMInt64TypeInContext(t->ctx);
  t->ptr = LLVMPointerTypeInContext(t->ctx, 0);
  t->void_t = LLVMVoidTypeInContext(t->ctx);
  LLVMTypeRef a3i64 = LLVMArrayType2(t->i64, 3), a3i32 = LLVMArrayType2(t->i32, 3);
  LLVMTypeRef fields[] = {a3i64, a3i32, a3i32, a3i32, a3i32, t->i32, t->i32, t->ptr, t->ptr};
  t->workgroup = LLVMStructTypeInContext(t->ctx, fields, 9, 0);
  LLVMTypeRef sfields[] = {t->i32, t->ptr, t->ptr, t->ptr, t->ptr};
  t->services = LLVMStructTypeInContext(t->ctx, sfields, 5, 0);
  LLVMTypeRef wi_params[] = {t->ptr, t->ptr, t->i32, t->i32, t->i32};
  t->wi_fn = LLVMFunctionType(t->void_t, wi_params, 5, 0);
  LLVMTypeRef wg_params[] = {t->ptr, t->ptr};
  t->wg_fn = LLVMFunctionType(t->void_t, wg_params, 2, 0);
  t->td = LLVMGetModuleDataLayout(m);
}

unsigned attr_kind(const char *name) {
  return LLVMGetEnumAttributeKindForName(name, strlen(name));
}

void add_fn_attr(LLVMValueRef f, const char *name) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(ctx, attr_kind(name), 0));
}

/* Builtins with a rare slow path (compiler/builtins/fmath.cl: sin, cos and
 * tan of large arguments) call it as an out-of-line scalar function named
 * __aquila_vv_NAME, under a branch. The loop vectorizer can widen such a call
 * only through a vector variant: for each one, this pass builds masked
 * variants of 4, 8 and 16 lanes (mark_vector_variants) that return at once
 * when no lane is active and otherwise call the scalar function for the
 * active lanes, and names them in LLVM's vector-function-abi-variant
 * attribute. After the optimizer everything is inlined
 * (workgroup_inline_vector_variants), and the test of the mask is one branch
 * per vector: usual arguments pay for the fast path alone, where if-converted
 * code would run both paths for every lane. */
#define VV_PREFIX "__aquila_vv_"

int is_vector_variant_name(const char *name) {
  return !strncmp(name, VV_PREFIX, strlen(VV_PREFIX));
}

void add_param_attr(LLVMValueRef f, unsigned param, const char *name) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  LLVMAddAttributeAtIndex(f, param + 1, LLVMCreateEnumAttribute(ctx, attr_kind(name), 0));
}

uint32_t align_up(uint32_t v, uint32_t a) {
  return (v + a - 1) & ~(a - 1);
}

/* Reads an integer operand list such as !reqd_work_group_size !{i32 8, i32 8, i32 1}. */
void read_function_md_ints(LLVMContextRef ctx, LLVMValueRef f, const char *kind_name,
                           uint32_t out[3]) {
  unsigned kind = LLVMGetMDKindIDInContext(ctx, kind_name, (unsigned)strlen(kind_name));
  size_t n = 0;
  LLVMValueMetadataEntry *entries = LLVMGlobalCopyAllMetadata(f, &n);
  for (size_t i = 0; i < n; i++) {
    if (LLVMValueMetadataEntriesGetKind(entries, (unsigned)i) != kind) continue;
    LLVMValueRef node =
        LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(entries, (unsigned)i));
    unsigned num = LLVMGetMDNodeNumOperands(node);
    LLVMValueRef ops[8];
    if (num > 8) num = 8;
    LLVMGetMDNodeOperands(node, ops);
    for (unsigned j = 0; j < num && j < 3; j++)
      if (ops[j] && LLVMIsAConstantInt(ops[j])) out[j] = (uint32_t)LLVMConstIntGetZExtValue(ops[j]);
  }
  if (entries) LLVMDisposeValueMetadataEntries(entries);
}

/* vec_type_hint(T) arrives as !vec_type_hint !{T undef, i32 signed}. */
char *read_vec_type_hint(LLVMContextRef ctx, LLVMValueRef f) {
  unsigned kind = LLVMGetMDKindIDInContext(ctx, "vec_type_hint", 13);
  size_t n = 0;
  char *result = NULL;
  LLVMValueMetadataEntry *entries = LLVMGlobalCopyAllMetadata(f, &n);
  for (size_t i = 0; i < n && !result; i++) {
    if (LLVMValueMetadataEntriesGetKind(entries, (unsigned)i) != kind) continue;
    LLVMValueRef node =
        LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(entries, (unsigned)i));
    if (LLVMGetMDNodeNumOperands(node) != 2) continue;
    LLVMValueRef ops[2];
    LLVMGetMDNodeOperands(node, ops);
    if (!ops[0] || !ops[1] || !LLVMIsAConstantInt(ops[1])) continue;
    int is_signed = LLVMConstIntGetZExtValue(ops[1]) != 0;
    LLVMTypeRef t = LLVMTypeOf(ops[0]);
    unsigned lanes = 1;
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
      lanes = LLVMGetVectorSize(t);
      t = LLVMGetElementType(t);
    }
    const char *base = "int";
    switch (LLVMGetTypeKind(t)) {
    case LLVMHalfTypeKind:
      base = "half";
      break;
    case LLVMFloatTypeKind:
      base = "float";
      break;
    case LLVMDoubleTypeKind:
      base = "double";
      break;
    case LLVMIntegerTypeKind:
      switch (LLVMGetIntTypeWidth(t)) {
      case 8:
        base = is_signed ? "char" : "uchar";
        break;
      case 16:
        base = is_signed ? "short" : "ushort";
        break;
      case 64:
        base = is_signed ? "long" : "ulong";
        break;
      default:
        base = is_signed ? "int" : "uint";
        break;
      }
      break;
    default:
      break;
    }
    struct strbuf sb = {0};
    if (lanes > 1)
      strbuf_printf(&sb, "%s%u", base, lanes);
    else
      strbuf_append(&sb, base);
    result = strbuf_take(&sb);
  }
  if (entries) LLVMDisposeValueMetadataEntries(entries);
  return result;
}

static LLVMValueRef wg_field_ptr(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef wg,
                                 unsigned field, LLVMValueRef index) {
  LLVMValueRef idx[3] = {LLVMConstInt(t->i32, 0, 0), LLVMConstInt(t->i32, field, 0), index};
  return LLVMBuildInBoundsGEP2(b, t->workgroup, wg, idx, index ? 3 : 2, "");
}

LLVMValueRef load_wg_field(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef wg,
                           unsigned field, LLVMValueRef index, LLVMTypeRef type) {
  LLVMValueRef v = LLVMBuildLoad2(b, type, wg_field_ptr(t, b, wg, field, index), "");
  LLVMSetAlignment(v, LLVMABIAlignmentOfType(t->td, type));
  return v;
}

/* The floating-point options clang records on a kernel (-cl-fast-relaxed-math,
 * -cl-finite-math-only, -cl-no-signed-zeros, -cl-denorms-are-zero, ...): the
 * back end reads them from the function being compiled, and after inlining
 * that is K.wg, which clang never saw. Without them the builtins' code,
 * inlined from a library compiled without these options, could not be
 * contracted or simplified as the options allow. */
void copy_fp_attributes(LLVMValueRef from, LLVMValueRef to) {
  static const char *const names[] = {
      "unsafe-fp-math",          "no-infs-fp-math",      "no-nans-fp-math",
      "no-signed-zeros-fp-math", "approx-func-fp-math",  "less-precise-fpmad",
      "denormal-fp-math",        "denormal-fp-math-f32", NULL};
  for (int i = 0; names[i]; i++) {
    LLVMAttributeRef a = LLVMGetStringAttributeAtIndex(from, LLVMAttributeFunctionIndex, names[i],
                                                       (unsigned)strlen(names[i]));
    if (a) LLVMAddAttributeAtIndex(to, LLVMAttributeFunctionIndex, a);
  }
}

/* Where kernel argument i of k lies in the kernarg segment: its type as
 * stored (the pointee of a byval argument), size and alignment. Returns
 * whether it is a __local pointer (stored as a byte offset into the group
 * segment). */
int kernel_arg_slot(struct wg_types *t, LLVMValueRef k, unsigned i, LLVMTypeRef *value_type,
                    uint32_t *size, uint32_t *align) {
  LLVMTypeRef pt = LLVMTypeOf(LLVMGetParam(k, i));
  LLVMAttributeRef byval = LLVMGetEnumAttributeAtIndex(k, i + 1, attr_kind("byval"));
  int is_local_ptr =
      LLVMGetTypeKind(pt) == LLVMPointerTypeKind && LLVMGetPointerAddressSpace(pt) == 3;
  *value_type = byval ? LLVMGetTypeAttributeValue(byval) : pt;
  if (is_local_ptr) {
    *size = *align = 8;
  } else {
    *size = (uint32_t)LLVMABISizeOfType(t->td, *value_type);
    *align = LLVMABIAlignmentOfType(t->td, *value_type);
  }
  if (*align == 0) *align = 1;
  return is_local_ptr;
}

void record_arg_layout(struct aquila_fatbin_arg *a, uint32_t offset, uint32_t size,
                       uint32_t align, int is_local_ptr) {
  a->offset = offset;
  a->size = is_local_ptr ? 0 : size;
  a->alignment = align;
  /* A pointer's host-side value is a cl_mem handle, whatever its width here. */
  if (a->kind == AQUILA_ARG_GLOBAL_PTR || a->kind == AQUILA_ARG_CONSTANT_PTR ||
      a->kind == AQUILA_ARG_IMAGE)
    a->size = 8;
}

/* Builds K.wi: unpacks K's arguments from the kernarg segment and calls K. */
int build_workitem_function(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kb,
                            struct strbuf *log) {
  LLVMValueRef k = kb->kernel;
  const char *name = kb->name;
  struct strbuf wi_name = {0};
  strbuf_printf(&wi_name, "%s.wi", name);
  kb->wi = LLVMAddFunction(m, wi_name.data, t->wi_fn);
  strbuf_free(&wi_name);
  LLVMSetLinkage(kb->wi, LLVMInternalLinkage);
  add_param_attr(kb->wi, 0, "noalias");
  add_param_attr(kb->wi, 0, "readonly");
  add_param_attr(kb->wi, 1, "noalias");
  add_param_attr(kb->wi, 1, "readonly");
  add_fn_attr(kb->wi, "nounwind");
  copy_fp_attributes(k, kb->wi);

  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(t->ctx, kb->wi, "entry");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef kernarg = LLVMGetParam(kb->wi, 0), wg = LLVMGetParam(kb->wi, 1);

  unsigned nparams = LLVMCountParams(k);
  if (kb->meta && kb->meta->num_args != nparams) {
    strbuf_printf(log, "error: kernel '%s': front end saw %u arguments, code has %u\n", name,
                  kb->meta->num_args, nparams);
    LLVMDisposeBuilder(b);
    return -1;
  }
  LLVMValueRef *args = calloc(nparams ? nparams : 1, sizeof *args);
  if (!args) abort();
  uint32_t offset = 0, max_align = 16;
  unsigned byval_kind = attr_kind("byval");
  for (unsigned i = 0; i < nparams; i++) {
    LLVMTypeRef pt = LLVMTypeOf(LLVMGetParam(k, i));
    LLVMAttributeRef byval = LLVMGetEnumAttributeAtIndex(k, i + 1, byval_kind);
    LLVMTypeRef value_type;
    uint32_t size, align;
    int is_local_ptr = kernel_arg_slot(t, k, i, &value_type, &size, &align);
    offset = align_up(offset, align);
    if (align > max_align) max_align = align;
    LLVMValueRef off = LLVMConstInt(t->i64, offset, 0);
    LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->i8, kernarg, &off, 1, "");
    if (is_local_ptr) {
      LLVMValueRef rel = LLVMBuildLoad2(b, t->i64, slot, "");
      LLVMSetAlignment(rel, 8);
      LLVMValueRef base = load_wg_field(t, b, wg, WG_GROUP_SEGMENT, NULL, t->ptr);
      LLVMValueRef addr = LLVMBuildInBoundsGEP2(b, t->i8, base, &rel, 1, "");
      args[i] = LLVMBuildAddrSpaceCast(b, addr, pt, "");
    } else if (byval) {
      LLVMBasicBlockRef cur = LLVMGetInsertBlock(b);
      LLVMValueRef copy = LLVMBuildAlloca(b, value_type, "");
      LLVMSetAlignment(copy, align);
      LLVMPositionBuilderAtEnd(b, cur);
      LLVMBuildMemCpy(b, copy, align, slot, align, LLVMConstInt(t->i64, size, 0));
      args[i] = copy;
    } else {
      LLVMValueRef v = LLVMBuildLoad2(b, pt, slot, "");
      LLVMSetAlignment(v, align);
      args[i] = v;
    }
    if (kb->meta) record_arg_layout(&kb->meta->args[i], offset, size, align, is_local_ptr);
    offset += size;
  }
  kb->hidden_offset = align_up(offset, 8);
  kb->kernarg_size = kb->hidden_offset + (uint32_t)sizeof(struct aquila_hidden_kernargs);
  kb->kernarg_align = max_align;
  LLVMValueRef call = LLVMBuildCall2(b, LLVMGlobalGetValueType(k), k, args, nparams, "");
  LLVMSetInstructionCallConv(call, LLVMCCallConv);
  LLVMBuildRetVoid(b);
  free(args);
  LLVMDisposeBuilder(b);
  return 0;
}

/* Selects x, y or z by a dimension that may not be a constant. */
static LLVMValueRef select_local_id(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef fn,
                                    LLVMValueRef dim) {
  LLVMValueRef x = LLVMGetParam(fn, 2), y = LLVMGetParam(fn, 3), z = LLVMGetParam(fn, 4);
  LLVMValueRef v;
  if (LLVMIsAConstantInt(dim)) {
    uint64_t d = LLVMConstIntGetZExtValue(dim);
    v = d == 0 ? x : d == 1 ? y : z;
  } else {
    LLVMValueRef is0 = LLVMBuildICmp(b, LLVMIntEQ, dim, LLVMConstInt(LLVMTypeOf(dim), 0, 0), "");
    LLVMValueRef is1 = LLVMBuildICmp(b, LLVMIntEQ, dim, LLVMConstInt(LLVMTypeOf(dim), 1, 0), "");
    v = LLVMBuildSelect(b, is0, x, LLVMBuildSelect(b, is1, y, z, ""), "");
  }
  return LLVMBuildZExt(b, v, t->i64, "");
}

/* A constant of type t (integer or integer vector) with every element v. */
static LLVMValueRef splat_int(LLVMTypeRef t, unsigned long long v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  unsigned n = LLVMGetVectorSize(t);
  LLVMValueRef elems[64];
  LLVMValueRef e = LLVMConstInt(LLVMGetElementType(t), v, 0);
  for (unsigned i = 0; i < n && i < 64; i++)
    elems[i] = e;
  return LLVMConstVector(elems, n);
}

/* Integer division by zero, and INT_MIN / -1, trap on x86; in OpenCL C the
 * result is merely undefined. Such divisors become 1, so the kernel goes on
 * with some value instead of killing the application. */
void guard_integer_division(struct wg_types *t, LLVMValueRef fn) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      if (op != LLVMSDiv && op != LLVMUDiv && op != LLVMSRem && op != LLVMURem) continue;
      int is_signed = op == LLVMSDiv || op == LLVMSRem;
      LLVMValueRef num = LLVMGetOperand(in, 0), den = LLVMGetOperand(in, 1);
      if (LLVMIsAConstantInt(den)) {
        long long v = LLVMConstIntGetSExtValue(den);
        if (v != 0 && (!is_signed || v != -1)) continue;
      }
      LLVMTypeRef ty = LLVMTypeOf(den);
      LLVMTypeRef elem = LLVMGetTypeKind(ty) == LLVMVectorTypeKind ? LLVMGetElementType(ty) : ty;
      unsigned width = LLVMGetIntTypeWidth(elem);
      LLVMPositionBuilderBefore(b, in);
      LLVMValueRef bad = LLVMBuildICmp(b, LLVMIntEQ, den, LLVMConstNull(ty), "");
      if (is_signed) {
        LLVMValueRef minus_one = LLVMBuildICmp(b, LLVMIntEQ, den, LLVMConstAllOnes(ty), "");
        LLVMValueRef int_min =
            LLVMBuildICmp(b, LLVMIntEQ, num, splat_int(ty, 1ull << (width - 1)), "");
        bad = LLVMBuildOr(b, bad, LLVMBuildAnd(b, minus_one, int_min, ""), "");
      }
      LLVMSetOperand(in, 1, LLVMBuildSelect(b, bad, splat_int(ty, 1), den, "safe.divisor"));
    }
  LLVMDisposeBuilder(b);
}

/* A volatile private variable (CLBlast's GEMM keeps its work-item index in
 * one, "to disable caching") cannot be seen by anything but its own
 * work-item: no other work-item, no host, no device can address private
 * memory, and OpenCL C has no signal handlers or setjmp. Its loads and
 * stores lose the volatile flag, so that SROA makes it a value again and
 * the vectorizer sees the index as affine (gathers and scatters otherwise).
 * Only variables whose address is used by nothing but loads and stores of
 * it (and lifetime markers). */
void unvolatile_private_variables(LLVMValueRef fn) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in)) {
    if (!LLVMIsAAllocaInst(in)) continue;
    int only_accesses = 1, any_volatile = 0;
    for (LLVMUseRef u = LLVMGetFirstUse(in); u && only_accesses; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (LLVMIsALoadInst(user)) {
        any_volatile |= LLVMGetVolatile(user);
      } else if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == in &&
                 LLVMGetOperand(user, 0) != in) {
        any_volatile |= LLVMGetVolatile(user);
      } else if (LLVMIsACallInst(user)) {
        LLVMValueRef callee = LLVMGetCalledValue(user);
        size_t len = 0;
        const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
        only_accesses = !strncmp(name, "llvm.lifetime.", 14);
      } else {
        only_accesses = 0;
      }
    }
    if (!only_accesses || !any_volatile) continue;
    for (LLVMUseRef u = LLVMGetFirstUse(in); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (LLVMIsALoadInst(user) || LLVMIsAStoreInst(user)) LLVMSetVolatile(user, 0);
    }
  }
}

/* CL_KERNEL_ATTRIBUTES: the attributes the kernel was declared with. */
char *kernel_attributes(const struct aquila_fatbin_kernel *k) {
  struct strbuf sb = {0};
  const uint32_t *r = k->reqd_work_group_size, *h = k->work_group_size_hint;
  if (r[0] || r[1] || r[2]) strbuf_printf(&sb, "reqd_work_group_size(%u,%u,%u)", r[0], r[1], r[2]);
  if (h[0] || h[1] || h[2])
    strbuf_printf(&sb, "%swork_group_size_hint(%u,%u,%u)", sb.len ? " " : "", h[0], h[1], h[2]);
  if (k->vec_type_hint)
    strbuf_printf(&sb, "%svec_type_hint(%s)", sb.len ? " " : "", k->vec_type_hint);
  return strbuf_take(&sb);
}

int calls_function(LLVMValueRef fn, const char *name) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMValueRef callee = LLVMIsACallInst(in) ? LLVMGetCalledValue(in) : NULL;
      size_t len = 0;
      if (callee && LLVMIsAFunction(callee) && !strcmp(LLVMGetValueName2(callee, &len), name))
        return 1;
    }
  return 0;
}

/* Binds the __aquila_* calls in K.wi. With uniform_only, local ids and
 * barriers are left for regions.c, which binds them per region. Returns -1
 * on an unknown one. */
int bind_workitem_builtins(struct wg_types *t, struct kernel_build *kb, LLVMValueRef fn,
                           int uniform_only, struct strbuf *log) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  LLVMValueRef kernarg = LLVMGetParam(fn, 0), wg = LLVMGetParam(fn, 1);
  int status = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
    LLVMValueRef inst = LLVMGetFirstInstruction(bb);
    while (inst) {
      LLVMValueRef next = LLVMGetNextInstruction(inst);
      LLVMValueRef callee = LLVMIsACallInst(inst) ? LLVMGetCalledValue(inst) : NULL;
      size_t len = 0;
      const char *cname = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : "";
      if (!strcmp(cname, "printf")) {
        /* OpenCL C printf goes to the agent's printf service, which knows
         * vector conversions and flushes when the dispatch completes. */
        LLVMPositionBuilderBefore(b, inst);
        LLVMValueRef services = load_wg_field(t, b, wg, WG_SERVICES, NULL, t->ptr);
        LLVMValueRef idx[2] = {LLVMConstInt(t->i32, 0, 0), LLVMConstInt(t->i32, 3, 0)};
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->services, services, idx, 2, "");
        LLVMValueRef fn_ptr = LLVMBuildLoad2(b, t->ptr, slot, "");
        unsigned nargs = (unsigned)LLVMGetNumArgOperands(inst);
        LLVMValueRef *args = calloc(nargs ? nargs : 1, sizeof *args);
        if (!args) abort();
        for (unsigned i = 0; i < nargs; i++)
          args[i] = LLVMGetOperand(inst, i);
        LLVMValueRef call =
            LLVMBuildCall2(b, LLVMGetCalledFunctionType(inst), fn_ptr, args, nargs, "");
        free(args);
        LLVMReplaceAllUsesWith(inst, call);
        LLVMInstructionEraseFromParent(inst);
        inst = next;
        continue;
      }
      if (strncmp(cname, "__aquila_", 9) != 0 || is_vector_variant_name(cname)) {
        inst = next;
        continue;
      }
      if (!strncmp(cname, "__aquila_sg_", 12)) {
        LLVMPositionBuilderBefore(b, inst);
        LLVMValueRef v = bind_sub_group_call(t, kb, fn, b, inst, uniform_only, log);
        if (!v) {
          status = -1;
          break;
        }
        if (LLVMTypeOf(v) != LLVMTypeOf(inst)) v = LLVMBuildIntCast2(b, v, LLVMTypeOf(inst), 0, "");
        LLVMReplaceAllUsesWith(inst, v);
        LLVMInstructionEraseFromParent(inst);
        inst = next;
        continue;
      }
      const char *what = cname + 9;
      if (uniform_only && (!strcmp(what, "local_id") || !strcmp(what, "barrier"))) {
        inst = next;
        continue;
      }
      LLVMPositionBuilderBefore(b, inst);
      LLVMValueRef dim = LLVMGetNumArgOperands(inst) > 0 ? LLVMGetOperand(inst, 0) : NULL;
      LLVMValueRef dim64 = dim ? LLVMBuildZExt(b, dim, t->i64, "") : NULL;
      LLVMValueRef v = NULL;
      if (!strcmp(what, "local_id") && dim) {
        v = select_local_id(t, b, fn, dim);
      } else if (!strcmp(what, "group_id") && dim) {
        v = LLVMBuildZExt(b, load_wg_field(t, b, wg, WG_GROUP_ID, dim64, t->i32), t->i64, "");
      } else if ((!strcmp(what, "local_size") || !strcmp(what, "enqueued_local_size")) && dim &&
                 LLVMIsAConstantInt(dim) && LLVMConstIntGetZExtValue(dim) < 3 &&
                 kb->reqd[LLVMConstIntGetZExtValue(dim)]) {
        /* reqd_work_group_size: every group has that size (OpenCL 1.2 has no
         * partial groups), and a constant lets loops over it unroll. */
        v = LLVMConstInt(t->i64, kb->reqd[LLVMConstIntGetZExtValue(dim)], 0);
      } else if (!strcmp(what, "local_size") && dim) {
        v = LLVMBuildZExt(b, load_wg_field(t, b, wg, WG_LOCAL_SIZE, dim64, t->i32), t->i64, "");
      } else if (!strcmp(what, "enqueued_local_size") && dim) {
        v = LLVMBuildZExt(b, load_wg_field(t, b, wg, WG_ENQUEUED_LOCAL_SIZE, dim64, t->i32), t->i64,
                          "");
      } else if (!strcmp(what, "num_groups") && dim) {
        v = LLVMBuildZExt(b, load_wg_field(t, b, wg, WG_NUM_GROUPS, dim64, t->i32), t->i64, "");
      } else if (!strcmp(what, "global_size") && dim) {
        v = load_wg_field(t, b, wg, WG_GLOBAL_SIZE, dim64, t->i64);
      } else if (!strcmp(what, "work_dim")) {
        v = load_wg_field(t, b, wg, WG_WORK_DIM, NULL, t->i32);
        /* 1 to 3, and past every dimension the required size spans (the
         * runtime refuses a range with fewer): get_local_id(1) of an 8 x 8
         * kernel then needs no test of the dimension. */
        unsigned lo = kb->reqd[2] > 1 ? 3 : kb->reqd[1] > 1 ? 2 : 1;
        LLVMMetadataRef range[2] = {LLVMValueAsMetadata(LLVMConstInt(t->i32, lo, 0)),
                                    LLVMValueAsMetadata(LLVMConstInt(t->i32, 4, 0))};
        if (LLVMIsALoadInst(v))
          LLVMSetMetadata(v, LLVMGetMDKindIDInContext(t->ctx, "range", 5),
                          LLVMMetadataAsValue(t->ctx, LLVMMDNodeInContext2(t->ctx, range, 2)));
      } else if (!strcmp(what, "group_segment_base")) {
        /* Where this work-group's __local memory is, and its bytes: what
         * to_local and get_fence of a generic pointer compare it with
         * (builtins/generic.cl). */
        v = LLVMBuildPtrToInt(b, load_wg_field(t, b, wg, WG_GROUP_SEGMENT, NULL, t->ptr), t->i64,
                              "");
      } else if (!strcmp(what, "stack_pointer")) {
        LLVMModuleRef mod = LLVMGetGlobalParent(fn);
        static const char name[] = "llvm.stacksave";
        unsigned id = LLVMLookupIntrinsicID(name, sizeof name - 1);
        LLVMValueRef save = LLVMGetIntrinsicDeclaration(mod, id, &t->ptr, 1);
        LLVMTypeRef save_type = LLVMIntrinsicGetType(t->ctx, id, &t->ptr, 1);
        v = LLVMBuildPtrToInt(b, LLVMBuildCall2(b, save_type, save, NULL, 0, ""), t->i64, "");
      } else if (!strcmp(what, "address_space_of")) {
        /* services->address_space_of(address): for another work-item's
         * private or local memory, on another thread (builtins/generic.cl). */
        LLVMValueRef services = load_wg_field(t, b, wg, WG_SERVICES, NULL, t->ptr);
        LLVMValueRef idx[2] = {LLVMConstInt(t->i32, 0, 0), LLVMConstInt(t->i32, 4, 0)};
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->services, services, idx, 2, "");
        LLVMValueRef space_of = LLVMBuildLoad2(b, t->ptr, slot, "");
        LLVMTypeRef fn_type = LLVMFunctionType(t->i32, &t->ptr, 1, 0);
        LLVMValueRef address = LLVMBuildIntToPtr(b, LLVMGetOperand(inst, 0), t->ptr, "");
        v = LLVMBuildCall2(b, fn_type, space_of, &address, 1, "");
      } else if (!strcmp(what, "group_segment_size")) {
        v = LLVMBuildZExt(b, load_wg_field(t, b, wg, WG_GROUP_SEGMENT_SIZE, NULL, t->i32), t->i64,
                          "");
      } else if (!strcmp(what, "global_offset") && dim) {
        LLVMValueRef off = LLVMBuildAdd(b, LLVMConstInt(t->i64, kb->hidden_offset, 0),
                                        LLVMBuildMul(b, dim64, LLVMConstInt(t->i64, 8, 0), ""), "");
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->i8, kernarg, &off, 1, "");
        v = LLVMBuildLoad2(b, t->i64, slot, "");
        LLVMSetAlignment(v, 8);
      } else if (!strcmp(what, "barrier")) {
        kb->uses_barrier = 1;
        LLVMValueRef services = load_wg_field(t, b, wg, WG_SERVICES, NULL, t->ptr);
        LLVMValueRef idx[2] = {LLVMConstInt(t->i32, 0, 0), LLVMConstInt(t->i32, 2, 0)};
        LLVMValueRef slot = LLVMBuildInBoundsGEP2(b, t->services, services, idx, 2, "");
        LLVMValueRef barrier_fn = LLVMBuildLoad2(b, t->ptr, slot, "");
        LLVMTypeRef barrier_type = LLVMFunctionType(t->void_t, NULL, 0, 0);
        LLVMValueRef call = LLVMBuildCall2(b, barrier_type, barrier_fn, NULL, 0, "");
        LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                                 LLVMCreateEnumAttribute(t->ctx, attr_kind("convergent"), 0));
      } else {
        strbuf_printf(log, "error: internal: unknown work-item builtin '%s'\n", cname);
        status = -1;
        break;
      }
      if (v) {
        if (LLVMTypeOf(v) != LLVMTypeOf(inst)) v = LLVMBuildIntCast2(b, v, LLVMTypeOf(inst), 0, "");
        LLVMReplaceAllUsesWith(inst, v);
      }
      LLVMInstructionEraseFromParent(inst);
      inst = next;
    }
    if (status) break;
  }
  LLVMDisposeBuilder(b);
  return status;
}
