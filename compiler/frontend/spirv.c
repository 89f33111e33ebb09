/* SPIR-V programs (clCreateProgramWithIL): the front end for a module that
 * another compiler made. The SPIR-V/LLVM translator (Debian's llvm-spirv-15,
 * or AQUILA_LLVM_SPIRV) turns the module into LLVM bitcode (the runtime
 * has applied the specialization constants to the module); LLVM 19 reads that older
 * bitcode. What clang's OpenCL C front end would have produced is then made
 * of it: the x86-64 target, the C calling convention for everything but
 * kernels (the translator's spir_func would not link with the builtin
 * library's functions), the builtin library linked in and internalized, and
 * the kernels' descriptions read from the kernel_arg_* metadata the
 * translator writes. From there the program takes the same path as OpenCL
 * C: work-group compiler, vectorizer, tiers, kernel cache, fat binaries. */
#include "frontend/spirv.h"

#include <CL/cl.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/clang_in_process.h"
#include "support/spawn.h"
#include "support/util.h"

extern const char aquila_builtins_bc_start[];
extern const char aquila_builtins_bc_end[];

#define SPIRV_MAGIC 0x07230203u

int spirv_is_module(const void *il, size_t size) {
  if (!il || size < 20 || size % 4) return 0;
  uint32_t word;
  memcpy(&word, il, 4);
  return word == SPIRV_MAGIC || word == __builtin_bswap32(SPIRV_MAGIC);
}

static char *copy_string(const char *s, size_t len) {
  char *c = malloc(len + 1);
  if (!c) abort();
  memcpy(c, s, len);
  c[len] = 0;
  return c;
}

/* Runs the translator: the module's bitcode into bc_path. */
static int translate(const struct aquila_compile_input *in, const char *dir, const char *bc_path,
                     struct strbuf *log) {
  const char *translator = getenv("AQUILA_LLVM_SPIRV");
  if (!translator) translator = "llvm-spirv-15";
  struct strbuf spv_path = {0};
  strbuf_printf(&spv_path, "%s/input.spv", dir);
  int status = -1;
  if (write_file(spv_path.data, in->il, in->il_size)) {
    strbuf_append(log, "error: cannot write the SPIR-V module to the scratch directory\n");
  } else {
    /* CL1.2's builtin names: those the builtin library defines. */
    char *argv[8];
    int k = 0;
    argv[k++] = (char *)translator;
    argv[k++] = "-r";
    argv[k++] = "--spirv-target-env=CL1.2";
    argv[k++] = "-o";
    argv[k++] = (char *)bc_path;
    argv[k++] = spv_path.data;
    argv[k] = NULL;
    struct strbuf out = {0};
    int rc = spawn_and_wait(argv, &out);
    /* What the translator said, less the report of a crash of its own (a
     * stack dump of no use to the program's author). */
    char *said = out.data ? out.data : "";
    char *report = strstr(said, "PLEASE submit a bug report");
    char *dump = strstr(said, "Stack dump:");
    if (!report || (dump && dump < report)) report = dump;
    if (report) *report = 0;
    if (rc == 0) {
      status = 0;
    } else if (rc < 0 && strstr(said, "cannot run")) {
      strbuf_printf(log,
                    "error: SPIR-V programs need the SPIR-V/LLVM translator %s (Debian package "
                    "llvm-spirv-15; AQUILA_LLVM_SPIRV names another):\n%s",
                    translator, said);
    } else if (rc < 0) {
      strbuf_printf(log,
                    "error: the SPIR-V/LLVM translator (%s) crashed on this module: it uses "
                    "something the translator does not implement (it reads SPIR-V up to 1.3 "
                    "in full):\n%s",
                    translator, said);
    } else {
      strbuf_printf(log, "error: the SPIR-V module could not be translated (%s):\n%s", translator,
                    said);
    }
    strbuf_free(&out);
  }
  strbuf_free(&spv_path);
  return status;
}

/* The C calling convention wherever the translator put spir_func: on
 * functions and on the calls to them (a call whose convention differs from
 * its callee's is undefined, and the optimizer deletes it). */
static void use_c_calling_convention(LLVMModuleRef m) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  unsigned noinline = LLVMGetEnumAttributeKindForName("noinline", 8);
  unsigned optnone = LLVMGetEnumAttributeKindForName("optnone", 7);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetFunctionCallConv(f) == LLVMSPIRFUNCCallConv)
      LLVMSetFunctionCallConv(f, LLVMCCallConv);
    /* A module made without optimization marks every function so (SPIR-V's
     * DontInline): the kernel's body must inline into its work-group loop
     * and the builtins into it, as OpenCL C's do. */
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, noinline);
    LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, optnone);
    (void)ctx;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
        if (LLVMIsACallInst(i) && LLVMGetInstructionCallConv(i) == LLVMSPIRFUNCCallConv)
          LLVMSetInstructionCallConv(i, LLVMCCallConv);
  }
}

/* Loops as clang leaves OpenCL C's for this pipeline (compile.c builds at
 * -O1, where clang marks every loop without a #pragma unroll so): not to be
 * unrolled before the work-group compiler has seen them, which decides
 * itself (regions.c jams the rows of a tile's accumulating loop, which an
 * unrolled loop no longer is). A back edge is a branch to a block laid out
 * at or before its own, as the translator lays out SPIR-V's structured
 * loops; a loop the module already says how to unroll keeps that. */
static void keep_loops_rolled(LLVMModuleRef m) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  unsigned loop_kind = LLVMGetMDKindIDInContext(ctx, "llvm.loop", 9);
  const char *disable = "llvm.loop.unroll.disable";
  LLVMMetadataRef hint = LLVMMDStringInContext2(ctx, disable, strlen(disable));
  LLVMMetadataRef hint_node = LLVMMDNodeInContext2(ctx, &hint, 1);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    unsigned n = LLVMCountBasicBlocks(f), i = 0;
    if (!n) continue;
    LLVMBasicBlockRef *order = calloc(n, sizeof *order);
    if (!order) abort();
    LLVMGetBasicBlocks(f, order);
    for (i = 0; i < n; i++) {
      LLVMValueRef br = LLVMGetBasicBlockTerminator(order[i]);
      if (!br || !LLVMIsABranchInst(br) || LLVMGetMetadata(br, loop_kind)) continue;
      int back = 0;
      for (unsigned s = 0; s < LLVMGetNumSuccessors(br) && !back; s++)
        for (unsigned j = 0; j <= i && !back; j++)
          back = order[j] == LLVMGetSuccessor(br, s);
      if (!back) continue;
      LLVMMetadataRef self = LLVMTemporaryMDNode(ctx, NULL, 0);
      LLVMMetadataRef ops[2] = {self, hint_node};
      LLVMMetadataRef loop = LLVMMDNodeInContext2(ctx, ops, 2);
      LLVMMetadataReplaceAllUsesWith(self, loop);
      LLVMSetMetadata(br, loop_kind, LLVMMetadataAsValue(ctx, loop));
    }
    free(order);
  }
}

/* Where clang stores or loads a struct or array field by field (or with
 * memcpy), SPIR-V may do it whole (OpStore of an OpConstantComposite): the
 * work-group compiler and vectorizer take scalar and vector accesses only,
 * so an aggregate's access becomes one per element, each aligned as its
 * offset from the original alignment allows. */
static LLVMValueRef split_access(LLVMBuilderRef b, LLVMTargetDataRef td, LLVMTypeRef type,
                                 LLVMValueRef ptr, LLVMValueRef value, unsigned align) {
  LLVMTypeKind kind = LLVMGetTypeKind(type);
  if (kind != LLVMStructTypeKind && kind != LLVMArrayTypeKind) {
    LLVMValueRef access = value ? LLVMBuildStore(b, value, ptr) : LLVMBuildLoad2(b, type, ptr, "");
    LLVMSetAlignment(access, align ? align : 1);
    return access;
  }
  unsigned n = kind == LLVMStructTypeKind ? LLVMCountStructElementTypes(type)
                                          : (unsigned)LLVMGetArrayLength2(type);
  LLVMValueRef whole = value ? NULL : LLVMGetUndef(type);
  for (unsigned i = 0; i < n; i++) {
    LLVMTypeRef element =
        kind == LLVMStructTypeKind ? LLVMStructGetTypeAtIndex(type, i) : LLVMGetElementType(type);
    unsigned long long offset = kind == LLVMStructTypeKind
                                    ? LLVMOffsetOfElement(td, type, i)
                                    : (unsigned long long)i * LLVMABISizeOfType(td, element);
    LLVMValueRef at;
    if (kind == LLVMStructTypeKind) {
      at = LLVMBuildStructGEP2(b, type, ptr, i, "");
    } else {
      LLVMValueRef index[2] = {LLVMConstInt(LLVMInt64Type(), 0, 0),
                               LLVMConstInt(LLVMInt64Type(), i, 0)};
      at = LLVMBuildInBoundsGEP2(b, type, ptr, index, 2, "");
    }
    /* The largest power of two dividing both the alignment and the offset. */
    unsigned field_align = align ? align : 1;
    while (offset % field_align)
      field_align /= 2;
    LLVMValueRef part = value ? LLVMBuildExtractValue(b, value, i, "") : NULL;
    LLVMValueRef got = split_access(b, td, element, at, part, field_align);
    if (!value) whole = LLVMBuildInsertValue(b, whole, got, i, "");
  }
  return whole;
}

static void split_aggregate_accesses(LLVMModuleRef m) {
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(m);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(m));
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef next;
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = next) {
        next = LLVMGetNextInstruction(in);
        int is_store = LLVMIsAStoreInst(in) != NULL;
        if (!is_store && !LLVMIsALoadInst(in)) continue;
        if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) continue;
        LLVMTypeRef type = is_store ? LLVMTypeOf(LLVMGetOperand(in, 0)) : LLVMTypeOf(in);
        LLVMTypeKind kind = LLVMGetTypeKind(type);
        if (kind != LLVMStructTypeKind && kind != LLVMArrayTypeKind) continue;
        LLVMPositionBuilderBefore(b, in);
        LLVMValueRef ptr = LLVMGetOperand(in, is_store ? 1 : 0);
        LLVMValueRef whole = split_access(b, td, type, ptr, is_store ? LLVMGetOperand(in, 0) : NULL,
                                          LLVMGetAlignment(in));
        if (!is_store) LLVMReplaceAllUsesWith(in, whole);
        LLVMInstructionEraseFromParent(in);
      }
    }
  LLVMDisposeBuilder(b);
}

/* printf's float arguments as doubles, which OpenCL C's printf gets (C's
 * promotion of a variadic argument) and the builtin library reads: SPIR-V's
 * printf instruction passes floats as they are. */
static void promote_printf_floats(LLVMModuleRef m) {
  LLVMValueRef printf_fn = LLVMGetNamedFunction(m, "printf");
  if (!printf_fn) return;
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMUseRef next;
  for (LLVMUseRef u = LLVMGetFirstUse(printf_fn); u; u = next) {
    next = LLVMGetNextUse(u);
    LLVMValueRef call = LLVMGetUser(u);
    if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != printf_fn) continue;
    unsigned n = LLVMGetNumArgOperands(call);
    int any = 0;
    for (unsigned i = 1; i < n; i++) {
      LLVMTypeKind k = LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(call, i)));
      any |= k == LLVMFloatTypeKind || k == LLVMHalfTypeKind;
    }
    if (!any) continue;
    LLVMValueRef *args = calloc(n + 1, sizeof *args);
    if (!args) abort();
    LLVMPositionBuilderBefore(b, call);
    for (unsigned i = 0; i < n; i++) {
      args[i] = LLVMGetOperand(call, i);
      LLVMTypeKind k = LLVMTypeOf(args[i]) ? LLVMGetTypeKind(LLVMTypeOf(args[i])) : 0;
      if (i && (k == LLVMFloatTypeKind || k == LLVMHalfTypeKind))
        args[i] = LLVMBuildFPExt(b, args[i], LLVMDoubleTypeInContext(ctx), "");
    }
    LLVMValueRef promoted =
        LLVMBuildCall2(b, LLVMGlobalGetValueType(printf_fn), printf_fn, args, n, "");
    LLVMSetInstructionCallConv(promoted, LLVMGetInstructionCallConv(call));
    LLVMReplaceAllUsesWith(call, promoted);
    LLVMInstructionEraseFromParent(call);
    free(args);
  }
  LLVMDisposeBuilder(b);
}

/* Operand k of a function's metadata node `kind`: the node's value, or NULL. */
static LLVMValueRef kernel_metadata(LLVMContextRef ctx, LLVMValueRef f, const char *kind,
                                    unsigned num_args, LLVMValueRef *operands) {
  unsigned id = LLVMGetMDKindIDInContext(ctx, kind, (unsigned)strlen(kind));
  size_t count = 0;
  LLVMValueMetadataEntry *entries = LLVMGlobalCopyAllMetadata(f, &count);
  LLVMValueRef node = NULL;
  for (size_t i = 0; i < count && !node; i++)
    if (LLVMValueMetadataEntriesGetKind(entries, (unsigned)i) == id)
      node = LLVMMetadataAsValue(ctx, LLVMValueMetadataEntriesGetMetadata(entries, (unsigned)i));
  if (entries) LLVMDisposeValueMetadataEntries(entries);
  if (!node || LLVMGetMDNodeNumOperands(node) != num_args) return NULL;
  LLVMGetMDNodeOperands(node, operands);
  return node;
}

static char *md_string(LLVMValueRef *ops, unsigned i, const char *otherwise) {
  unsigned len = 0;
  const char *s = ops && ops[i] ? LLVMGetMDString(ops[i], &len) : NULL;
  return s ? copy_string(s, len) : copy_string(otherwise, strlen(otherwise));
}

/* "const volatile float*" -> "float*": the bare type, as CL_KERNEL_ARG_TYPE_NAME. */
static char *bare_type(const char *t) {
  static const char *const drop[] = {"const ", "volatile ", "restrict ", NULL};
  char *s = copy_string(t, strlen(t));
  for (int again = 1; again;) {
    again = 0;
    for (int i = 0; drop[i]; i++)
      if (!strncmp(s, drop[i], strlen(drop[i]))) {
        memmove(s, s + strlen(drop[i]), strlen(s) - strlen(drop[i]) + 1);
        again = 1;
      }
  }
  return s;
}

static int describe_kernel(LLVMContextRef ctx, LLVMValueRef f, struct aquila_fatbin_kernel *k,
                           struct strbuf *log) {
  size_t len;
  const char *name = LLVMGetValueName2(f, &len);
  memset(k, 0, sizeof *k);
  k->name = copy_string(name, len);
  k->attributes = copy_string("", 0);
  unsigned n = LLVMCountParams(f);
  k->num_args = n;
  k->args = calloc(n ? n : 1, sizeof *k->args);
  LLVMValueRef *spaces = calloc(n + 1, sizeof *spaces), *access = calloc(n + 1, sizeof *access),
               *types = calloc(n + 1, sizeof *types), *quals = calloc(n + 1, sizeof *quals),
               *names = calloc(n + 1, sizeof *names);
  if (!k->args || !spaces || !access || !types || !quals || !names) abort();
  int ok = kernel_metadata(ctx, f, "kernel_arg_addr_space", n, spaces) != NULL;
  if (!kernel_metadata(ctx, f, "kernel_arg_access_qual", n, access))
    memset(access, 0, n * sizeof *access);
  if (!kernel_metadata(ctx, f, "kernel_arg_type", n, types)) ok = 0;
  if (!kernel_metadata(ctx, f, "kernel_arg_type_qual", n, quals))
    memset(quals, 0, n * sizeof *quals);
  if (!kernel_metadata(ctx, f, "kernel_arg_name", n, names)) memset(names, 0, n * sizeof *names);
  if (!ok) {
    strbuf_printf(log,
                  "error: SPIR-V kernel '%s': the translator gave no argument descriptions "
                  "(kernel_arg_addr_space, kernel_arg_type)\n",
                  k->name);
  }
  for (unsigned i = 0; ok && i < n; i++) {
    struct aquila_fatbin_arg *a = &k->args[i];
    char *type = md_string(types, i, "");
    char *qual = md_string(quals, i, "");
    char *acc = md_string(access, i, "none");
    a->name = md_string(names, i, "");
    a->type_name = bare_type(type);
    unsigned space =
        LLVMIsAConstantInt(spaces[i]) ? (unsigned)LLVMConstIntGetZExtValue(spaces[i]) : 0;
    a->address_qualifier = CL_KERNEL_ARG_ADDRESS_PRIVATE;
    a->access_qualifier = CL_KERNEL_ARG_ACCESS_NONE;
    a->type_qualifier = CL_KERNEL_ARG_TYPE_NONE;
    a->kind = AQUILA_ARG_VALUE;
    if (!strncmp(a->type_name, "image", 5)) {
      a->kind = AQUILA_ARG_IMAGE;
      a->address_qualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
      a->access_qualifier = !strcmp(acc, "write_only")   ? CL_KERNEL_ARG_ACCESS_WRITE_ONLY
                            : !strcmp(acc, "read_write") ? CL_KERNEL_ARG_ACCESS_READ_WRITE
                                                         : CL_KERNEL_ARG_ACCESS_READ_ONLY;
    } else if (!strcmp(a->type_name, "sampler_t")) {
      a->kind = AQUILA_ARG_SAMPLER;
    } else if (strchr(a->type_name, '*')) {
      /* SPIR's numbering, which clang's for this target shares. */
      switch (space) {
      case 1:
        a->kind = AQUILA_ARG_GLOBAL_PTR;
        a->address_qualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
        break;
      case 2:
        a->kind = AQUILA_ARG_CONSTANT_PTR;
        a->address_qualifier = CL_KERNEL_ARG_ADDRESS_CONSTANT;
        a->type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
        break;
      case 3:
        a->kind = AQUILA_ARG_LOCAL_PTR;
        a->address_qualifier = CL_KERNEL_ARG_ADDRESS_LOCAL;
        break;
      default:
        strbuf_printf(log,
                      "error: SPIR-V kernel '%s': argument %u is a pointer in address space %u, "
                      "which a kernel argument cannot be on this device\n",
                      k->name, i, space);
        ok = 0;
      }
      if (strstr(qual, "const")) a->type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
      if (strstr(qual, "volatile")) a->type_qualifier |= CL_KERNEL_ARG_TYPE_VOLATILE;
      if (strstr(qual, "restrict")) a->type_qualifier |= CL_KERNEL_ARG_TYPE_RESTRICT;
    }
    free(type);
    free(qual);
    free(acc);
  }
  free(spaces);
  free(access);
  free(types);
  free(quals);
  free(names);
  return ok ? 0 : -1;
}

/* The translator calls a builtin with the plain OpenCL types (a uchar4 as
 * <4 x i8>, a float8 as <8 x float>); the library, compiled for x86-64 by
 * clang, takes what the C calling convention makes of them: a small vector
 * as an integer of its size, a vector wider than 16 bytes through a byval
 * pointer. A call of another function type than its callee's is undefined
 * (and never inlined), so each such call is rebuilt with the library's
 * type: same-sized values reinterpreted, byval ones stored to a stack slot
 * and passed by address, the result reinterpreted back. A call it cannot
 * adapt fails the build (a wrong answer is worse). */
static LLVMValueRef adapt_value(LLVMBuilderRef b, LLVMTargetDataRef td, LLVMValueRef v,
                                LLVMTypeRef to) {
  LLVMTypeRef from = LLVMTypeOf(v);
  if (from == to) return v;
  if (LLVMGetTypeKind(from) == LLVMPointerTypeKind || LLVMGetTypeKind(to) == LLVMPointerTypeKind)
    return NULL;
  if (LLVMSizeOfTypeInBits(td, from) != LLVMSizeOfTypeInBits(td, to)) return NULL;
  return LLVMBuildBitCast(b, v, to, "");
}

static int adapt_builtin_calls(LLVMModuleRef m, LLVMModuleRef builtins, struct strbuf *log) {
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(m);
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
  int status = 0;
  for (LLVMValueRef d = LLVMGetFirstFunction(m); d && status == 0; d = LLVMGetNextFunction(d)) {
    size_t len;
    const char *name = LLVMGetValueName2(d, &len);
    LLVMValueRef def = LLVMIsDeclaration(d) ? LLVMGetNamedFunction(builtins, name) : NULL;
    if (!def || LLVMIsDeclaration(def)) continue;
    LLVMTypeRef want = LLVMGlobalGetValueType(def), have = LLVMGlobalGetValueType(d);
    if (want == have || LLVMIsFunctionVarArg(want)) continue;
    unsigned n = LLVMCountParamTypes(want);
    LLVMTypeRef *params = calloc(n + 1, sizeof *params);
    LLVMValueRef *args = calloc(n + 1, sizeof *args);
    if (!params || !args) abort();
    LLVMGetParamTypes(want, params);
    LLVMUseRef next;
    for (LLVMUseRef u = LLVMGetFirstUse(d); u && status == 0; u = next) {
      next = LLVMGetNextUse(u);
      LLVMValueRef call = LLVMGetUser(u);
      if (!LLVMIsACallInst(call) || LLVMGetCalledValue(call) != d) continue;
      int ok = LLVMGetNumArgOperands(call) == n;
      LLVMPositionBuilderBefore(b, call);
      for (unsigned i = 0; ok && i < n; i++) {
        LLVMValueRef a = LLVMGetOperand(call, i);
        if (LLVMGetEnumAttributeAtIndex(def, i + 1, byval) &&
            LLVMGetTypeKind(LLVMTypeOf(a)) != LLVMPointerTypeKind) {
          /* The slot in the entry block: one per call, not one per loop trip. */
          LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInstructionParent(call));
          LLVMBuilderRef entry = LLVMCreateBuilderInContext(ctx);
          LLVMBasicBlockRef first = LLVMGetEntryBasicBlock(fn);
          LLVMPositionBuilderBefore(entry, LLVMGetFirstInstruction(first));
          LLVMValueRef slot = LLVMBuildAlloca(entry, LLVMTypeOf(a), "byval");
          LLVMSetAlignment(slot, LLVMPreferredAlignmentOfType(td, LLVMTypeOf(a)));
          LLVMDisposeBuilder(entry);
          LLVMBuildStore(b, a, slot);
          args[i] = slot;
        } else {
          ok = (args[i] = adapt_value(b, td, a, params[i])) != NULL;
        }
      }
      LLVMTypeRef ret = LLVMGetReturnType(want), call_ret = LLVMTypeOf(call);
      ok = ok && (ret == call_ret ||
                  (LLVMGetTypeKind(ret) != LLVMVoidTypeKind &&
                   LLVMGetTypeKind(call_ret) != LLVMVoidTypeKind &&
                   LLVMSizeOfTypeInBits(td, ret) == LLVMSizeOfTypeInBits(td, call_ret)));
      if (!ok) {
        strbuf_printf(log,
                      "error: the SPIR-V module calls '%s' in a form the builtin library's "
                      "function cannot take\n",
                      name);
        status = -1;
        break;
      }
      LLVMValueRef adapted = LLVMBuildCall2(b, want, d, args, n, "");
      LLVMSetInstructionCallConv(adapted, LLVMGetInstructionCallConv(call));
      if (ret != call_ret) adapted = LLVMBuildBitCast(b, adapted, call_ret, "");
      LLVMReplaceAllUsesWith(call, adapted);
      LLVMInstructionEraseFromParent(call);
    }
    free(params);
    free(args);
  }
  LLVMDisposeBuilder(b);
  return status;
}

/* Builtins linked, only those the module uses (the library read lazily),
 * what they bring internal, the rest removed: what clang's
 * -mlink-builtin-bitcode leaves for OpenCL C. */
static int link_builtins(LLVMContextRef ctx, LLVMModuleRef m, struct strbuf *log) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(
      aquila_builtins_bc_start, (size_t)(aquila_builtins_bc_end - aquila_builtins_bc_start),
      "builtins.bc", 0);
  LLVMModuleRef builtins = NULL;
  /* The module owns the buffer once it is read. */
  int bad = LLVMGetBitcodeModuleInContext2(ctx, buf, &builtins);
  if (bad) LLVMDisposeMemoryBuffer(buf);
  if (bad) {
    strbuf_append(log, "error: internal: the builtin library cannot be read\n");
    return -1;
  }
  LLVMSetTarget(m, LLVMGetTarget(builtins));
  LLVMSetDataLayout(m, LLVMGetDataLayoutStr(builtins));
  if (adapt_builtin_calls(m, builtins, log)) {
    LLVMDisposeModule(builtins);
    return -1;
  }
  /* Only what the library brings becomes internal: the module's own
   * functions stay as it declared them (clLinkProgram links another
   * module's imports with them). The library's definitions are the
   * functions it defines that the module only declared, or did not name. */
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    LLVMValueRef library_own = LLVMIsDeclaration(f) ? NULL : LLVMGetNamedFunction(builtins, name);
    if (library_own && !LLVMIsDeclaration(library_own)) {
      strbuf_printf(log, "error: the SPIR-V module defines '%s', a builtin function's name\n",
                    name);
      LLVMDisposeModule(builtins);
      return -1;
    }
  }
  if (aquila_link_needed(m, builtins)) { /* builtins is consumed either way */
    strbuf_append(log, "error: linking the SPIR-V module with the builtin library failed\n");
    return -1;
  }
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, "globaldce", NULL, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (!err) return 0;
  char *msg = LLVMGetErrorMessage(err);
  strbuf_printf(log, "error: internal: %s\n", msg);
  LLVMDisposeErrorMessage(msg);
  return -1;
}

int spirv_to_bitcode(const struct aquila_compile_input *in, const char *dir, void **bitcode,
                     size_t *bitcode_size, struct frontend_result *fr, struct strbuf *log) {
  *bitcode = NULL;
  *bitcode_size = 0;
  memset(fr, 0, sizeof *fr);
  if (!spirv_is_module(in->il, in->il_size)) {
    strbuf_append(log, "error: the program's intermediate language is not a SPIR-V module\n");
    return -1;
  }
  struct strbuf bc_path = {0};
  strbuf_printf(&bc_path, "%s/spirv.bc", dir);
  void *translated = NULL;
  size_t translated_size = 0;
  int status = translate(in, dir, bc_path.data, log);
  if (status == 0 && read_file(bc_path.data, &translated, &translated_size)) {
    strbuf_append(log, "error: cannot read the translator's bitcode\n");
    status = -1;
  }
  strbuf_free(&bc_path);
  if (status) return -1;
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(translated, translated_size, "spirv.bc");
  free(translated);
  LLVMModuleRef m = NULL;
  if (LLVMParseBitcodeInContext2(ctx, buf, &m)) {
    strbuf_append(log, "error: the translator's bitcode cannot be read by LLVM 19\n");
    status = -1;
  }
  LLVMDisposeMemoryBuffer(buf);
  if (status == 0) {
    use_c_calling_convention(m);
    keep_loops_rolled(m);
    status = link_builtins(ctx, m, log);
    if (status == 0) {
      split_aggregate_accesses(m);
      promote_printf_floats(m);
    }
  }
  for (LLVMValueRef f = m && status == 0 ? LLVMGetFirstFunction(m) : NULL; f;
       f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv) continue;
    struct aquila_fatbin_kernel *ks = realloc(fr->kernels, (fr->num_kernels + 1) * sizeof *ks);
    if (!ks) abort();
    fr->kernels = ks;
    if (describe_kernel(ctx, f, &ks[fr->num_kernels++], log)) status = -1;
    /* A module says nothing of whole work-groups. A kernel that requires
     * a size is taken to require whole groups of it (as SYCL's nd_range
     * and HIP's grids always are), so its code may take that size as
     * every group's; the runtime refuses a partial group of it
     * (runtime/enqueue.c). Other kernels may have partial groups. */
    if (LLVMGetMetadata(f, LLVMGetMDKindIDInContext(ctx, "reqd_work_group_size", 20)))
      LLVMAddAttributeAtIndex(
          f, LLVMAttributeFunctionIndex,
          LLVMCreateStringAttribute(ctx, "uniform-work-group-size", 23, "true", 4));
  }
  if (status == 0) {
    LLVMMemoryBufferRef out = LLVMWriteBitcodeToMemoryBuffer(m);
    *bitcode_size = LLVMGetBufferSize(out);
    *bitcode = malloc(*bitcode_size ? *bitcode_size : 1);
    if (!*bitcode) abort();
    memcpy(*bitcode, LLVMGetBufferStart(out), *bitcode_size);
    LLVMDisposeMemoryBuffer(out);
  }
  if (m) LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  if (status) {
    frontend_result_free(fr);
    free(*bitcode);
    *bitcode = NULL;
  }
  return status;
}
