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
 * The module finally exports __aquila_kernel_table. */
#include "workgroup/workgroup.h"

#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm-c/DebugInfo.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "analysis/footprint_analysis.h"
#include "workgroup/prefetch.h"
#include "workgroup/regions.h"
#include "workgroup/uniform.h"
#include "vectorize/vectorize.h"

/* Field numbers of struct aquila_workgroup in the IR type built below. */
enum {
  WG_GLOBAL_SIZE = 0,
  WG_LOCAL_SIZE,
  WG_ENQUEUED_LOCAL_SIZE,
  WG_GROUP_ID,
  WG_NUM_GROUPS,
  WG_WORK_DIM,
  WG_RESERVED,
  WG_GROUP_SEGMENT,
  WG_SERVICES,
};

struct wg_types {
  LLVMContextRef ctx;
  LLVMTypeRef i8, i32, i64, ptr, void_t;
  LLVMTypeRef workgroup; /* struct aquila_workgroup */
  LLVMTypeRef services;  /* struct aquila_cpu_services */
  LLVMTypeRef wi_fn;     /* aquila_workitem_fn */
  LLVMTypeRef wg_fn;     /* aquila_workgroup_fn */
  LLVMTargetDataRef td;
};

struct kernel_build {
  char *name;
  LLVMValueRef kernel, wi, wg;
  LLVMValueRef wi_vec; /* K.wi.v<W>: W work-items along x at once (vectorize.c), or NULL */
  unsigned width;      /* that W */
  unsigned rows;       /* work-group rows per vector: 2 when W is twice the required x size */
  unsigned scalar_size, vector_size; /* instructions of K.wi and K.wi.v<W> when vectorized */
  int vec_only;           /* the required local size along x is a multiple of W: no scalar path */
  int check_twin;         /* AQUILA_VECTORIZE=check: K.wg.scalar runs K.wi alone, for comparing */
  LLVMValueRef wg_scalar; /* that K.wg.scalar, or NULL */
  struct strbuf vec_why;  /* why K.wi was not vectorized */
  struct aquila_fatbin_kernel *meta;
  uint32_t hidden_offset, kernarg_size, kernarg_align;
  uint32_t reqd[3];
  int uses_barrier;
  int split_at_barriers;         /* work-item loops split at barriers (regions.c), else fibers */
  int scalar_used;               /* K.wi runs some work-items (no vectorized version, or a tail) */
  struct regions_report regions; /* what the split function became, for the report */
  uint64_t local_mem;
  unsigned prefetches; /* ahead of loops' accesses, in K.wi.v<W> (prefetch.c) */
};

static void init_types(struct wg_types *t, LLVMModuleRef m) {
  t->ctx = LLVMGetModuleContext(m);
  t->i8 = LLVMInt8TypeInContext(t->ctx);
  t->i32 = LLVMInt32TypeInContext(t->ctx);
  t->i64 = LLVMInt64TypeInContext(t->ctx);
  t->ptr = LLVMPointerTypeInContext(t->ctx, 0);
  t->void_t = LLVMVoidTypeInContext(t->ctx);
  LLVMTypeRef a3i64 = LLVMArrayType2(t->i64, 3), a3i32 = LLVMArrayType2(t->i32, 3);
  LLVMTypeRef fields[] = {a3i64, a3i32, a3i32, a3i32, a3i32, t->i32, t->i32, t->ptr, t->ptr};
  t->workgroup = LLVMStructTypeInContext(t->ctx, fields, 9, 0);
  LLVMTypeRef sfields[] = {t->i32, t->ptr, t->ptr, t->ptr};
  t->services = LLVMStructTypeInContext(t->ctx, sfields, 4, 0);
  LLVMTypeRef wi_params[] = {t->ptr, t->ptr, t->i32, t->i32, t->i32};
  t->wi_fn = LLVMFunctionType(t->void_t, wi_params, 5, 0);
  LLVMTypeRef wg_params[] = {t->ptr, t->ptr};
  t->wg_fn = LLVMFunctionType(t->void_t, wg_params, 2, 0);
  t->td = LLVMGetModuleDataLayout(m);
}

static unsigned attr_kind(const char *name) {
  return LLVMGetEnumAttributeKindForName(name, strlen(name));
}

static void add_fn_attr(LLVMValueRef f, const char *name) {
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

static int is_vector_variant_name(const char *name) {
  return !strncmp(name, VV_PREFIX, strlen(VV_PREFIX));
}

static void add_param_attr(LLVMValueRef f, unsigned param, const char *name) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  LLVMAddAttributeAtIndex(f, param + 1, LLVMCreateEnumAttribute(ctx, attr_kind(name), 0));
}

static uint32_t align_up(uint32_t v, uint32_t a) {
  return (v + a - 1) & ~(a - 1);
}

/* Reads an integer operand list such as !reqd_work_group_size !{i32 8, i32 8, i32 1}. */
static void read_function_md_ints(LLVMContextRef ctx, LLVMValueRef f, const char *kind_name,
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
static char *read_vec_type_hint(LLVMContextRef ctx, LLVMValueRef f) {
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

static LLVMValueRef load_wg_field(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef wg,
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
static void copy_fp_attributes(LLVMValueRef from, LLVMValueRef to) {
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
static int kernel_arg_slot(struct wg_types *t, LLVMValueRef k, unsigned i, LLVMTypeRef *value_type,
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

static void record_arg_layout(struct aquila_fatbin_arg *a, uint32_t offset, uint32_t size,
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
static int build_workitem_function(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kb,
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
static void guard_integer_division(struct wg_types *t, LLVMValueRef fn) {
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
static void unvolatile_private_variables(LLVMValueRef fn) {
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
static char *kernel_attributes(const struct aquila_fatbin_kernel *k) {
  struct strbuf sb = {0};
  const uint32_t *r = k->reqd_work_group_size, *h = k->work_group_size_hint;
  if (r[0] || r[1] || r[2]) strbuf_printf(&sb, "reqd_work_group_size(%u,%u,%u)", r[0], r[1], r[2]);
  if (h[0] || h[1] || h[2])
    strbuf_printf(&sb, "%swork_group_size_hint(%u,%u,%u)", sb.len ? " " : "", h[0], h[1], h[2]);
  if (k->vec_type_hint)
    strbuf_printf(&sb, "%svec_type_hint(%s)", sb.len ? " " : "", k->vec_type_hint);
  return strbuf_take(&sb);
}

static int calls_function(LLVMValueRef fn, const char *name) {
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
static int bind_workitem_builtins(struct wg_types *t, struct kernel_build *kb, LLVMValueRef fn,
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

/* Builds K.wg for a kernel without barriers: a do-while nest over z, y, x
 * (every local size is at least 1) around a call of K.wi. */
static void mark_loop_done(struct wg_types *t, LLVMValueRef br, unsigned jam);
static unsigned jam_count(LLVMValueRef fn);
static unsigned widest_vector_arithmetic(LLVMValueRef fn);

static void build_loop_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb) {
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
static void build_fiber_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb) {
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
static void localize_group_variables(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kbs,
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
                         (kb->wg_scalar ? AQUILA_KERNEL_HAS_SCALAR_TWIN : 0),
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

static int run_passes(LLVMModuleRef m, const char *passes, struct strbuf *log) {
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, passes, NULL, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (!err) return 0;
  char *msg = LLVMGetErrorMessage(err);
  strbuf_printf(log, "error: internal: %s failed: %s\n", passes, msg);
  LLVMDisposeErrorMessage(msg);
  return -1;
}

/* K.wg for a kernel split at barriers: the split function already runs the
 * whole group. With both a vectorized and a scalar one, the vectorized one
 * runs the groups whose size along x is a multiple of its width. */
/* Whether every global size of the range is below
 * VECTORIZE_GLOBAL_SIZE_LIMIT, where the vector version of a kernel
 * without a required size along x may run (vectorize.h says why); the
 * scalar version runs larger ranges. NULL when the kernel has a required
 * size along x: its vector version assumes nothing of the kind. */
static LLVMValueRef vector_range_ok(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
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

static void build_region_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
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
static void build_scalar_twin(struct wg_types *t, LLVMModuleRef m, LLVMBuilderRef b,
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
static void build_vector_loop_workgroup(struct wg_types *t, LLVMBuilderRef b,
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

/* The largest access through p by a load or store. */
static uint64_t widest_access(LLVMTargetDataRef td, LLVMValueRef p) {
  uint64_t widest = 1;
  for (LLVMUseRef u = LLVMGetFirstUse(p); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    LLVMTypeRef t = NULL;
    if (LLVMIsALoadInst(user))
      t = LLVMTypeOf(user);
    else if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == p)
      t = LLVMTypeOf(LLVMGetOperand(user, 0));
    if (t && LLVMStoreSizeOfType(td, t) > widest) widest = LLVMStoreSizeOfType(td, t);
  }
  return widest;
}

/* Keeps every access of the scalar work-item function fn to a private
 * array at a run-time index inside that array: where an address made by a
 * chain of GEPs from the array, one of them with a variable index, is used
 * by anything but another GEP (a load, a store, a call), that use takes
 * the array's start plus the chain's byte offset, clamped to the last place
 * an access of its width fits. Reading or writing past a private array is
 * undefined, and common in real kernels (OpenCV's Canny overruns an
 * 8-entry stack); unchecked, the optimizer may turn such a loop into stores
 * anywhere, and a compute unit's stack holds the return addresses and the
 * fault trap of the agent. Only the address that is used is clamped, never
 * a step on the way to it: p + 2 * k - e (John the Ripper's zip kernel,
 * where p + 2 * k lies past the array and the address used inside it) is
 * one offset, and clamping its first step changed a correct program's
 * answer. The vectorized version keeps its interleaved arrays in bounds
 * the same way (vectorize.c, private_array_gep). */
static void contain_private_accesses(struct wg_types *t, LLVMValueRef fn) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  for (LLVMBasicBlockRef bb = entry; bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      if (!LLVMIsAGetElementPtrInst(in) || LLVMGetTypeKind(LLVMTypeOf(in)) != LLVMPointerTypeKind)
        continue;
      int variable = 0;
      LLVMValueRef root = in;
      for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(root); depth++) {
        for (unsigned i = 1; i < (unsigned)LLVMGetNumOperands(root); i++)
          variable |= !LLVMIsAConstantInt(LLVMGetOperand(root, i));
        root = LLVMGetOperand(root, 0);
      }
      if (!variable || !LLVMIsAAllocaInst(root) || LLVMGetInstructionParent(root) != entry ||
          !LLVMIsAConstantInt(LLVMGetOperand(root, 0)))
        continue;
      int used = 0;
      for (LLVMUseRef u = LLVMGetFirstUse(in); u && !used; u = LLVMGetNextUse(u))
        used = !LLVMIsAGetElementPtrInst(LLVMGetUser(u));
      if (!used) continue; /* a step on the way: its GEPs are clamped where used */
      uint64_t size = LLVMABISizeOfType(t->td, LLVMGetAllocatedType(root)) *
                      LLVMConstIntGetZExtValue(LLVMGetOperand(root, 0));
      uint64_t width = widest_access(t->td, in);
      uint64_t last = size > width ? size - width : 0;
      LLVMValueRef next = LLVMGetNextInstruction(in);
      LLVMPositionBuilderBefore(b, next);
      LLVMValueRef at = LLVMBuildPtrToInt(b, in, t->i64, "");
      LLVMValueRef base = LLVMBuildPtrToInt(b, root, t->i64, "");
      LLVMValueRef off = LLVMBuildSub(b, at, base, "");
      LLVMValueRef lim = LLVMConstInt(t->i64, last, 0);
      off = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULE, off, lim, ""), off, lim, "in.array");
      LLVMValueRef kept = LLVMBuildGEP2(b, t->i8, root, &off, 1, "");
      /* Every use but the offset's own computation and the GEPs that go on
       * from this address (each clamped where it is used). */
      for (LLVMUseRef u = LLVMGetFirstUse(in); u;) {
        LLVMUseRef following = LLVMGetNextUse(u);
        LLVMValueRef user = LLVMGetUser(u);
        if (user != at && !LLVMIsAGetElementPtrInst(user)) {
          for (unsigned k = 0; k < (unsigned)LLVMGetNumOperands(user); k++)
            if (LLVMGetOperand(user, k) == in) LLVMSetOperand(user, k, kept);
        }
        u = following;
      }
      in = kept;
    }
  LLVMDisposeBuilder(b);
}

/* AQUILA_VECTORIZE=check: each vectorized kernel also gets a work-group
 * function that runs its scalar work-item function alone, which the CPU
 * agent runs beside the vectorized one on copies of the buffers. */
static int check_mode(void) {
  const char *env = getenv("AQUILA_VECTORIZE");
  return env && !strcmp(env, "check");
}

/* The vector width and libmvec variants for a target, or 0 when kernels are
 * not to be vectorized (AQUILA_VECTORIZE=0). */
static int vectorizing(const struct vectorize_target *vt) {
  const char *env = getenv("AQUILA_VECTORIZE");
  return vt && vt->width > 1 && !(env && !strcmp(env, "0"));
}

/* Work-group rows per vector for a kernel: two when its required size
 * along x is half the vector and the rows pair up (CLBlast's 8 x 8 GEMM
 * groups in 16 lanes), else one. */
static unsigned vector_rows(const struct kernel_build *kb, const struct vectorize_target *vt) {
  const char *env = getenv("AQUILA_VECTORIZE_ROWS");
  if (!vectorizing(vt) || (env && !strcmp(env, "0"))) return 1;
  return kb->reqd[0] >= 4 && kb->reqd[0] * 2 == vt->width && kb->reqd[1] % 2 == 0 ? 2 : 1;
}

/* Runs the structurizer on the listed functions only: the others are
 * marked optnone (which passes skip) for the time of the run. */
static int structurize_functions(LLVMModuleRef m, LLVMValueRef *fns, unsigned n,
                                 struct strbuf *log) {
  unsigned optnone = attr_kind("optnone"), noinline = attr_kind("noinline");
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  struct ptr_set marked = {0}, marked_noinline = {0};
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    int target = 0;
    for (unsigned i = 0; i < n; i++)
      target |= fns[i] == f;
    if (target || LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone)) continue;
    ptr_set_add(&marked, f);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(ctx, optnone, 0));
    if (!LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline)) {
      LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                              LLVMCreateEnumAttribute(ctx, noinline, 0));
      ptr_set_add(&marked_noinline, f);
    }
  }
  int status = run_passes(m,
                          "function(lower-switch,fix-irreducible,unify-loop-exits,structurizecfg,"
                          "loop-simplify,lcssa)",
                          log);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (!ptr_set_has(&marked, f)) continue;
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone);
    if (ptr_set_has(&marked_noinline, f))
      LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline);
  }
  ptr_set_free(&marked);
  ptr_set_free(&marked_noinline);
  return status;
}

/* The widest OpenCL vector a kernel computes with (arithmetic on <N x T>),
 * or 1. A kernel written with float8 or int16 arithmetic is vectorized by
 * its author: across work-items it would need 8 or 16 registers per value,
 * spill, and take minutes to compile (hashcat's kernels, with the vector
 * width the device reports). */
static unsigned widest_vector_arithmetic(LLVMValueRef fn) {
  unsigned widest = 1;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMTypeRef t = LLVMTypeOf(in);
      if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) continue;
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      int arithmetic = (op >= LLVMAdd && op <= LLVMXor) || op == LLVMFNeg ||
                       (op == LLVMCall && LLVMGetIntrinsicID(LLVMGetCalledValue(in)));
      if (arithmetic && LLVMGetVectorSize(t) > widest) widest = LLVMGetVectorSize(t);
    }
  return widest;
}

static unsigned instruction_count(LLVMValueRef fn) {
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
      n++;
  return n;
}

/* The largest work-item function (instructions, after the small constant
 * loops are unrolled) that is vectorized. The vector version is several
 * times larger than the scalar one (masks, per-lane copies), and LLVM's
 * loop passes take time that grows faster than a function's size (scalar
 * evolution is forgotten and recomputed for every unrolled loop): a 17,600-
 * instruction CLSmith kernel took 1.4 s to optimize scalar and 18 s with
 * its vector version. Real kernels are far smaller (docs/ARCHITECTURE.md);
 * AQUILA_VECTORIZE_MAX_INSTRUCTIONS moves the limit. */
#define VECTORIZE_MAX_INSTRUCTIONS 10000

/* The largest vector version kept. Its own size, not only the scalar one,
 * decides what the build costs: the optimizer and above all instruction
 * selection take several times longer per instruction of vector code
 * (masks, blends, per-lane copies) than of scalar code. CLSmith kernels of
 * 3,800 to 8,500 scalar instructions became 11,900 to 29,100 in vector form
 * and took 5.7 to 27 s to build, against 0.4 to 2 s scalar; real kernels'
 * vector versions are far smaller (clFFT's largest 2,400). */
#define VECTORIZE_MAX_VECTOR_INSTRUCTIONS 8000

static unsigned limit_from_env(const char *name, unsigned dflt) {
  const char *e = getenv(name);
  if (!e || !*e) return dflt;
  char *end;
  unsigned long v = strtoul(e, &end, 10);
  return *end || v > UINT_MAX ? dflt : (unsigned)v;
}

static unsigned vectorize_max_instructions(void) {
  return limit_from_env("AQUILA_VECTORIZE_MAX_INSTRUCTIONS", VECTORIZE_MAX_INSTRUCTIONS);
}

static unsigned vectorize_max_vector_instructions(void) {
  return limit_from_env("AQUILA_VECTORIZE_MAX_VECTOR_INSTRUCTIONS",
                        VECTORIZE_MAX_VECTOR_INSTRUCTIONS);
}

/* Whether name is in list, a comma-separated list of kernel names. */
static int kernel_listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

/* Vectorizes each kernel's work-item function that can be: first as it is,
 * then, for those whose divergent control flow had another shape, after
 * structurizing it. */
static void vectorize_kernels(LLVMModuleRef m, struct kernel_build *kbs, unsigned n,
                              const struct vectorize_target *vt, int use_fibers) {
  LLVMValueRef *retry = calloc(n ? n : 1, sizeof *retry);
  if (!retry) abort();
  unsigned num_retry = 0;
  for (int round = 0; round < 2; round++) {
    for (unsigned i = 0; i < n; i++) {
      struct kernel_build *kb = &kbs[i];
      if (round == 1) {
        int listed = 0;
        for (unsigned k = 0; k < num_retry; k++)
          listed |= retry[k] == kb->wi;
        if (!listed) continue;
      } else if (kernel_listed(getenv("AQUILA_VECTORIZE_SKIP"), kb->name)) {
        strbuf_append(&kb->vec_why, "AQUILA_VECTORIZE_SKIP");
        continue;
      } else if (widest_vector_arithmetic(kb->wi) >= 8) {
        strbuf_printf(&kb->vec_why, "it computes with %u-element vectors already",
                      widest_vector_arithmetic(kb->wi));
        continue;
      } else if (instruction_count(kb->wi) > vectorize_max_instructions()) {
        strbuf_printf(&kb->vec_why,
                      "its work-item function has %u instructions, more than the vectorizer's "
                      "limit of %u (AQUILA_VECTORIZE_MAX_INSTRUCTIONS)",
                      instruction_count(kb->wi), vectorize_max_instructions());
        continue;
      } else if (use_fibers && kb->uses_barrier) {
        /* Fibers run one work-item at a time. */
        strbuf_append(&kb->vec_why, "AQUILA_BARRIERS=fibers");
        continue;
      } else {
        /* A required size along x that the widest vector does not divide:
         * a narrower vector (8 or 4 work-items) that does. */
        kb->width = vt->width;
        kb->rows = vector_rows(kb, vt);
        while (kb->rows == 1 && kb->reqd[0] && kb->reqd[0] % kb->width && kb->width > 4)
          kb->width /= 2;
        if (kb->rows == 1 && kb->reqd[0] && kb->reqd[0] % kb->width) {
          strbuf_printf(&kb->vec_why,
                        "its required local size along x, %u, is not a multiple of %u", kb->reqd[0],
                        kb->width);
          continue;
        }
      }
      kb->vec_why.len = 0;
      if (kb->vec_why.data) kb->vec_why.data[0] = 0;
      LLVMValueRef vfn = NULL;
      struct vectorize_target kt = *vt;
      kt.width = kb->width;
      kt.rows = kb->rows;
      memcpy(kt.reqd, kb->reqd, sizeof kt.reqd);
      enum vectorize_status st = vectorize_workitem_function(m, kb->wi, &kt, &vfn, &kb->vec_why);
      if (st == VECTORIZE_OK && instruction_count(vfn) > vectorize_max_vector_instructions()) {
        strbuf_printf(&kb->vec_why,
                      "its vector version has %u instructions, more than the limit of %u "
                      "(AQUILA_VECTORIZE_MAX_VECTOR_INSTRUCTIONS): its build would take many "
                      "times the scalar one's",
                      instruction_count(vfn), vectorize_max_vector_instructions());
        LLVMDeleteFunction(vfn);
      } else if (st == VECTORIZE_OK) {
        kb->wi_vec = vfn;
        kb->scalar_size = instruction_count(kb->wi);
        kb->vector_size = instruction_count(vfn);
      }
      /* Structurizing rewrites the scalar function too, and stays when the
       * vector version is then refused for its size: a scalar function of
       * half the vector limit or more (vector versions were 2.4 to 3.4
       * times the scalar ones) keeps its shape, and its build time (a
       * CLSmith kernel of 8,500 instructions: 2.2 s structurized, 0.6 s
       * not). */
      if (st == VECTORIZE_NEEDS_STRUCTURE && round == 0 &&
          instruction_count(kb->wi) <= vectorize_max_vector_instructions() / 2)
        retry[num_retry++] = kb->wi;
      else if (st == VECTORIZE_NEEDS_STRUCTURE && round == 0)
        strbuf_printf(&kb->vec_why,
                      "; not structurized to try again: %u instructions, its vector version "
                      "would be over the limit of %u",
                      instruction_count(kb->wi), vectorize_max_vector_instructions());
    }
    if (round == 0) {
      if (!num_retry) break;
      struct strbuf err = {0};
      int failed = structurize_functions(m, retry, num_retry, &err);
      strbuf_free(&err);
      if (failed) break; /* the first reason stands; the scalar path remains */
    }
  }
  free(retry);
}

/* AQUILA_DEBUG=vectorize (or a list with it): what each kernel became. */
static int footprint_report_wanted(void) {
  const char *env = getenv("AQUILA_DEBUG");
  return env && strstr(env, "footprint") != NULL;
}

static int report_wanted(void) {
  const char *env = getenv("AQUILA_DEBUG");
  return env && strstr(env, "vectorize") != NULL;
}

static void report_kernel(const struct kernel_build *kb, const struct vectorize_target *vt,
                          int fibers, struct strbuf *log) {
  struct strbuf sb = {0};
  strbuf_printf(&sb, "aquila: kernel '%s': ", kb->name);
  if (kb->wi_vec) {
    if (kb->rows > 1)
      strbuf_printf(&sb, "vectorized, %u work-items per vector, two rows of %u", kb->width,
                    kb->width / 2);
    else
      strbuf_printf(&sb, "vectorized, %u work-items along x per vector", kb->width);
    strbuf_printf(&sb, " (%u instructions; %u scalar)", kb->vector_size, kb->scalar_size);
    if (kb->uses_barrier)
      strbuf_printf(&sb,
                    ", barriers: %u regions, %u values in context arrays (%u bytes per "
                    "work-item), %u kept once per group",
                    kb->regions.regions, kb->regions.context_arrays, kb->regions.context_bytes,
                    kb->regions.uniform_slots);
    if (kb->uses_barrier && kb->regions.rows_jammed)
      strbuf_printf(&sb, ", %u rows' accumulating loops jammed", kb->regions.rows_jammed);
    if (kb->prefetches) strbuf_printf(&sb, ", %u prefetches ahead", kb->prefetches);
    if (kb->scalar_used)
      strbuf_printf(&sb,
                    kb->uses_barrier ? "; scalar version for groups whose x size is not a "
                                       "multiple of %u"
                                     : "; scalar loop for the last x %% %u work-items of a row",
                    kb->width);
  } else {
    strbuf_printf(&sb, "not vectorized (%s)",
                  kb->vec_why.len ? kb->vec_why.data : "AQUILA_VECTORIZE=0");
    if (kb->uses_barrier && fibers)
      strbuf_append(&sb, "; barriers: fibers");
    else if (kb->uses_barrier)
      strbuf_printf(&sb,
                    "; barriers: %u regions, %u values in context arrays (%u bytes per "
                    "work-item), %u kept once per group",
                    kb->regions.regions, kb->regions.context_arrays, kb->regions.context_bytes,
                    kb->regions.uniform_slots);
  }
  strbuf_append(&sb, "\n");
  fputs(sb.data, stderr);
  strbuf_append(log, sb.data);
  strbuf_free(&sb);
}

/* The builtin library's out-of-line paths (rare image formats): one copy
 * in the code object, called by the kernels, never inlined. */
static int is_out_of_line(LLVMValueRef f) {
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

static void mark_vector_variants(LLVMModuleRef m) {
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
          if (strcmp(cname, "__aquila_barrier") != 0)
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

int workgroup_compile(LLVMModuleRef m, struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                      const struct vectorize_target *vt, struct strbuf *log) {
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
    if (kb->meta) {
      memcpy(kb->meta->reqd_work_group_size, kb->reqd, sizeof kb->reqd);
      read_function_md_ints(t.ctx, f, "work_group_size_hint", kb->meta->work_group_size_hint);
      free(kb->meta->vec_type_hint);
      kb->meta->vec_type_hint = read_vec_type_hint(t.ctx, f);
      free(kb->meta->attributes);
      kb->meta->attributes = kernel_attributes(kb->meta);
    }
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
  for (unsigned i = 0; i < n; i++)
    kbs[i].uses_barrier = calls_function(kbs[i].wi, "__aquila_barrier");
  /* What each kernel writes where, for the runtime (runtime/launch_footprint.c): on the
   * simplified function, before anything makes it a work-group's. */
  for (unsigned i = 0; i < n; i++)
    if (kbs[i].meta)
      footprint_analyse(kbs[i].wi, t.td, kbs[i].meta, footprint_report_wanted() ? log : NULL);
  if (vectorize) {
    vectorize_kernels(m, kbs, n, vt, use_fibers);
    vectorize_reciprocal_sqrt(m, vt);
    /* Tiled kernels: the next tile's lines on their way during this
     * tile's computation; walks by large steps: lines a few steps ahead
     * (prefetch.c). */
    for (unsigned i = 0; i < n; i++)
      if (kbs[i].wi_vec) kbs[i].prefetches = prefetch_loops(m, kbs[i].wi_vec);
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
  }
  free(kbs);
  return status;
}
