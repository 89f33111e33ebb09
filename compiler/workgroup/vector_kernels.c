/* Which kernels get a vectorized work-item function and how: private
 * accesses contained to their arrays, the size limits, AQUILA_VECTORIZE
 * and its lists, structurizing control flow the vectorizer asks for, the
 * calls to the vectorizer (vectorize/) and the prefetch pass; and
 * AQUILA_DEBUG=vectorize and footprint reports of what each became.
 *
 * Needs: run_passes (workgroup.c), attr_kind (workitem.c). */
#include "workgroup/kernel_build.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/footprint_analysis.h"
#include "support/ptrmap.h"

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

/* The byte offset of gep from the start of the alloca its chain of GEPs
 * begins at, as the sum of each GEP's own offset. The difference of the two
 * addresses would be the same number, but LLVM folds it only when the chain
 * is one GEP long: through Blowfish's S-box pointers (S + 256, then
 * S2[x & 0xff]) every lookup kept its clamp, three instructions each, where
 * the sum's range shows the offset always inside the array. */
static LLVMValueRef chain_byte_offset(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef gep) {
  LLVMValueRef total = LLVMConstNull(t->i64);
  for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(gep); depth++) {
    LLVMTypeRef ty = LLVMGetGEPSourceElementType(gep);
    unsigned n = (unsigned)LLVMGetNumOperands(gep);
    for (unsigned i = 1; i < n; i++) {
      LLVMValueRef idx = LLVMGetOperand(gep, i);
      if (i > 1 && LLVMGetTypeKind(ty) == LLVMStructTypeKind) {
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        total = LLVMBuildAdd(b, total,
                             LLVMConstInt(t->i64, LLVMOffsetOfElement(t->td, ty, field), 0), "");
        ty = LLVMStructGetTypeAtIndex(ty, field);
        continue;
      }
      if (i > 1) ty = LLVMGetElementType(ty);
      LLVMValueRef x = LLVMBuildIntCast2(b, idx, t->i64, 1, "");
      LLVMValueRef size = LLVMConstInt(t->i64, LLVMABISizeOfType(t->td, ty), 0);
      total = LLVMBuildAdd(b, total, LLVMBuildMul(b, x, size, ""), "");
    }
    gep = LLVMGetOperand(gep, 0);
  }
  return total;
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
void contain_private_accesses(struct wg_types *t, LLVMValueRef fn) {
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
      LLVMValueRef off = chain_byte_offset(t, b, in);
      LLVMValueRef lim = LLVMConstInt(t->i64, last, 0);
      off = LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULE, off, lim, ""), off, lim, "in.array");
      LLVMValueRef kept = LLVMBuildGEP2(b, t->i8, root, &off, 1, "");
      /* Every use but the GEPs that go on from this address (each clamped
       * where it is used). */
      for (LLVMUseRef u = LLVMGetFirstUse(in); u;) {
        LLVMUseRef following = LLVMGetNextUse(u);
        LLVMValueRef user = LLVMGetUser(u);
        if (!LLVMIsAGetElementPtrInst(user)) {
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
int check_mode(void) {
  const char *env = getenv("AQUILA_VECTORIZE");
  return env && !strcmp(env, "check");
}

/* The vector width and libmvec variants for a target, or 0 when kernels are
 * not to be vectorized (AQUILA_VECTORIZE=0). */
int vectorizing(const struct vectorize_target *vt) {
  const char *env = getenv("AQUILA_VECTORIZE");
  return vt && vt->width > 1 && !(env && !strcmp(env, "0"));
}

/* Work-group rows per vector for a kernel: two when its required size
 * along x is half the vector and the rows pair up (CLBlast's 8 x 8 GEMM
 * groups in 16 lanes), else one. */
unsigned vector_rows(const struct kernel_build *kb, const struct vectorize_target *vt) {
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
unsigned widest_vector_arithmetic(LLVMValueRef fn) {
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
/* AQUILA_INTERLEAVE=0, or =loops (only the pairing of a loop's iterations,
 * codegen/interleave.c), leaves work-items unpaired. */
static int pairing_wanted(void) {
  const char *env = getenv("AQUILA_INTERLEAVE");
  return !env || (strcmp(env, "0") && strcmp(env, "loops"));
}

/* Whether kb's work-items may run in pairs if it stays scalar; if not, why
 * not in why (when given). */
static int pairing_allowed(struct kernel_build *kb, struct strbuf *why) {
  const char *no = !pairing_wanted()                       ? ""
                   : kb->uses_barrier                      ? "barriers"
                   : kb->uses_sub_groups                   ? "sub-groups"
                   : widest_vector_arithmetic(kb->wi) >= 8 ? "vectors of its own"
                   : kb->reqd[0] == 1                      ? "a required local size along x of 1"
                                                           : NULL;
  if (no && *no && why) strbuf_append(why, no);
  return !no && !kernel_listed(getenv("AQUILA_VECTORIZE_SKIP"), kb->name);
}

void vectorize_kernels(LLVMModuleRef m, struct kernel_build *kbs, unsigned n,
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
        /* A sub-group is one row's vector (sub_groups.c), as wide as the
         * kernel requires one to be (1: not vectorized). */
        kb->rows = kb->uses_sub_groups ? 1 : vector_rows(kb, vt);
        if (kb->reqd_sub_group_size == 1) {
          strbuf_append(&kb->vec_why, "intel_reqd_sub_group_size(1)");
          continue;
        }
        if (kb->reqd_sub_group_size >= 4 && kb->reqd_sub_group_size < kb->width &&
            !(kb->reqd_sub_group_size & (kb->reqd_sub_group_size - 1)))
          kb->width = kb->reqd_sub_group_size;
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
      /* Without AVX-512 the vectorizer weighs gathers against the scalar
       * code, which runs in pairs where it can. */
      kt.scalar_pairs = vt->libmvec_isa != 'e' && pairing_allowed(kb, NULL) &&
                        workitems_pairable(kb->wi, instruction_count(kb->wi));
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
  /* Kernels left scalar: two work-items at a time (workitem_pairs.c). */
  for (unsigned i = 0; i < n; i++) {
    struct kernel_build *kb = &kbs[i];
    if (kb->wi_vec || !pairing_allowed(kb, &kb->pair_why)) continue;
    unsigned size = instruction_count(kb->wi);
    LLVMValueRef pfn = pair_workitems(m, kb->wi, size, &kb->pair_why);
    if (!pfn) continue;
    kb->wi_vec = pfn;
    kb->paired = 1;
    kb->width = 2;
    kb->rows = 1;
    kb->scalar_size = size;
    kb->vector_size = instruction_count(pfn);
  }
}

/* Whether a version of kb compiled for one work-group size would run no
 * faster than its usual code, so that the runtime builds none
 * (AQUILA_KERNEL_SIZE_INDIFFERENT). A known size gives barriers' work-item
 * loops constant trip counts and a vector version jammed rows and no
 * scalar path for a partial vector; a kernel with neither runs its
 * work-items one after another whatever the size. The quick tier's scalar
 * build counts the vector version a kernel may have later. A kernel over
 * the vectorizer's limit gains too little for its build: John the
 * Ripper's bcrypt (13,600 instructions) and sha512crypt (a program of
 * 376,000) got a 4 and a 24 s build for every size its auto-tuning tried,
 * on the cores its benchmark ran on. Called after vectorize_kernels. */
int size_indifferent(const struct kernel_build *kb, const struct vectorize_target *vt) {
  if (!kb->wi || instruction_count(kb->wi) > vectorize_max_instructions()) return 1;
  /* A pair gains nothing from a known size but its odd work-item. */
  if (kb->paired) return 1;
  if (kb->uses_barrier || kb->wi_vec) return 0;
  int quick_tier = vt && vt->width == 1;
  return !(quick_tier && widest_vector_arithmetic(kb->wi) < 8);
}

/* AQUILA_DEBUG=vectorize (or a list with it): what each kernel became. */
int footprint_report_wanted(void) {
  const char *env = getenv("AQUILA_DEBUG");
  return env && strstr(env, "footprint") != NULL;
}

int report_wanted(void) {
  const char *env = getenv("AQUILA_DEBUG");
  return env && strstr(env, "vectorize") != NULL;
}

void report_kernel(const struct kernel_build *kb, const struct vectorize_target *vt,
                   int fibers, struct strbuf *log) {
  struct strbuf sb = {0};
  strbuf_printf(&sb, "aquila: kernel '%s': ", kb->name);
  if (kb->paired) {
    strbuf_printf(&sb,
                  "not vectorized (%s); work-items in pairs, their instructions interleaved "
                  "(%u instructions; %u for one)",
                  kb->vec_why.len ? kb->vec_why.data : "AQUILA_VECTORIZE=0", kb->vector_size,
                  kb->scalar_size);
    if (kb->scalar_used) strbuf_append(&sb, "; scalar code for a row's odd work-item");
  } else if (kb->wi_vec) {
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
    if (tail_is_vector(kb))
      strbuf_printf(&sb, "; sub-groups of %u, a row's last x %% %u work-items a vector with its "
                         "other lanes off",
                    kb->width, kb->width);
    else if (kb->scalar_used)
      strbuf_printf(&sb,
                    kb->uses_barrier ? "; scalar version for groups whose x size is not a "
                                       "multiple of %u"
                                     : "; scalar loop for the last x %% %u work-items of a row",
                    kb->width);
  } else {
    strbuf_printf(&sb, "not vectorized (%s)",
                  kb->vec_why.len ? kb->vec_why.data : "AQUILA_VECTORIZE=0");
    if (kb->pair_why.len) strbuf_printf(&sb, "; not paired (%s)", kb->pair_why.data);
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
