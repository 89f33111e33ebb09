/* Whole-function vectorization: a work-item function becomes one that runs
 * W consecutive work-items along x at once (after Karrenberg and Hack,
 * "Whole-Function Vectorization", and the shape analysis of vecz).
 *
 * Analysis. Every value gets a shape: uniform (the same for the W
 * work-items: kept scalar), affine (lane l holds base + l * stride: kept as
 * its lane-0 base, so that an access at an affine address with the element
 * size as stride becomes one vector load or store) or varying (a <W x T>
 * vector). Only local id x is a source of variation; y and z are uniform
 * across a vector. A conditional branch on a varying value makes the
 * region it controls divergent, and values that merge after it (phis at its
 * join, values leaving a loop that work-items leave at different times)
 * varying.
 *
 * Transformation. Uniform control flow is kept as it is. A varying branch
 * must have the shape of an if-then (one successor is the branch's
 * post-dominator, the join): the then-region runs under a lane mask, only
 * when some lane takes it, and phis at the join blend the two sides by the
 * mask. A loop with a varying exit must exit only at its latch, to a block
 * of its own: it iterates while any lane goes on, remembering each lane's
 * live-out values at the iteration that lane left. Anything else (a
 * varying switch, a divergent loop with exits elsewhere) is reported as
 * VECTORIZE_NEEDS_STRUCTURE: LLVM's structurizer gives every function that
 * shape. Memory accesses under a partial mask are masked; stores of a
 * varying value to a uniform address keep the last active lane's value,
 * as the work-items in order would; atomics, printf and calls of unknown
 * functions run once per active lane, in lane order.
 *
 * A varying value never carries poison into control flow: masks are built
 * with selects, vector instructions are built without poison-generating
 * flags, and integer divisors of inactive lanes are replaced by 1.
 *
 * The files, in the order a function passes them:
 *   shape.c, facts.c    the analyses: every value's shape, integer facts;
 *   legality.c          what the transformation supports (checked first);
 *   control_flow.c      blocks, masks and divergent loops, in order;
 *   instructions.c      each instruction by its shape;
 *   build.c             vector forms, splats, masks;
 *   load_store.c        memory accesses, with address.c, clamped.c and
 *                       access_groups.c;
 *   packet.c            OpenCL vectors kept as element vectors;
 *   calls.c             calls: vector forms, libm, one lane at a time;
 *   vectorize.c         (this file) the entry points and shared helpers.
 * internal.h declares what they share. */
#include "vectorize/internal.h"

#include <llvm-c/Analysis.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

void fail(struct vec *v, enum vectorize_status status, const char *what, LLVMValueRef in) {
  if (v->status != VECTORIZE_OK) return;
  v->status = status;
  strbuf_append(v->why, what);
  if (in) {
    char *txt = LLVMPrintValueToString(in);
    size_t len = strlen(txt);
    if (len > 160) strcpy(txt + 150, " ...");
    strbuf_printf(v->why, ": %s", txt + strspn(txt, " "));
    LLVMDisposeMessage(txt);
  }
}

struct vinfo *info_of(struct vec *v, LLVMValueRef val) {
  struct vinfo *i = ptr_map_get(&v->info, val);
  if (i) return i;
  i = xcalloc(1, sizeof *i);
  ptr_map_put(&v->info, val, i);
  if (v->num_info == v->cap_info) {
    v->cap_info = v->cap_info ? 2 * v->cap_info : 256;
    v->all_info = realloc(v->all_info, v->cap_info * sizeof *v->all_info);
    if (!v->all_info) abort();
  }
  v->all_info[v->num_info++] = i;
  return i;
}

const char *callee_name(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  size_t len;
  return callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : NULL;
}

int is_scalar_type(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind:
  case LLVMHalfTypeKind:
  case LLVMFloatTypeKind:
  case LLVMDoubleTypeKind:
  case LLVMPointerTypeKind:
    return 1;
  default:
    return 0;
  }
}

/* An OpenCL vector: <N x T> of a scalar T, N up to 16. */
int is_scalar_vector_type(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && is_scalar_type(LLVMGetElementType(t)) &&
         LLVMGetVectorSize(t) <= 16;
}

LLVMTypeRef vector_of(struct vec *v, LLVMTypeRef t) {
  return LLVMVectorType(t, v->W);
}

int block_of(struct vec *v, LLVMValueRef in) {
  return cfg_number(&v->g, LLVMGetInstructionParent(in));
}

static void emit_function(struct vec *v) {
  struct cfg *g = &v->g;
  for (unsigned r = 0; r < g->num_rpo; r++) {
    int b = g->rpo[r];
    v->vblock[b] =
        LLVMAppendBasicBlockInContext(v->ctx, v->vfn, LLVMGetBasicBlockName(g->blocks[b]));
  }
  for (unsigned r = 0; r < g->num_rpo && v->status == VECTORIZE_OK; r++) {
    int b = g->rpo[r];
    LLVMPositionBuilderAtEnd(v->b, v->vblock[b]);
    int l = g->loop[b];
    if (l >= 0 && v->loop_divergent[l] && g->loops[l].header == b) begin_divergent_loop(v, l);
    v->mask[b] = block_mask(v, b);
    v->mask_done[b] = 1;
    size_t first_group = v->num_groups;
    find_groups(v, b);
    settle_groups(v, first_group);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[b]);
    for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[b]);
         in != term && v->status == VECTORIZE_OK; in = LLVMGetNextInstruction(in))
      emit_instruction(v, b, in);
    if (v->status != VECTORIZE_OK) break;
    emit_terminator(v, b);
    v->vlast[b] = LLVMGetInsertBlock(v->b);
  }
  if (v->status == VECTORIZE_OK) fill_phis(v);
}

/* AQUILA_DEBUG_VECTORIZE: each instruction with its shape, on stderr. */
static void print_shapes(struct vec *v) {
  static const char *const names[] = {"undef", "uniform", "affine", "runs", "varying"};
  size_t len;
  fprintf(stderr, "vectorize: %s (%s)\n", LLVMGetValueName2(v->fn, &len),
          v->status == VECTORIZE_OK ? "ok" : v->why->data);
  for (unsigned r = 0; r < v->g.num_rpo; r++) {
    int b = v->g.rpo[r];
    fprintf(stderr, "%s:%s%s\n", LLVMGetBasicBlockName(v->g.blocks[b]),
            v->varying_branch[b] ? " varying-branch" : "", v->partial[b] ? " partial" : "");
    for (LLVMValueRef in = LLVMGetFirstInstruction(v->g.blocks[b]); in;
         in = LLVMGetNextInstruction(in)) {
      struct vinfo *i = ptr_map_get(&v->info, in);
      char *txt = LLVMPrintValueToString(in);
      if (i && i->kind == K_AFFINE)
        fprintf(stderr, "  [affine %" PRId64 "%s] %s\n", i->stride, i->assumed ? " assumed" : "",
                txt);
      else if (i && i->kind == K_RUNS && i->gap_known)
        fprintf(stderr, "  [runs %" PRId64 " gap %" PRId64 "%s] %s\n", i->stride, i->gap,
                i->assumed ? " assumed" : "", txt);
      else if (i && i->kind == K_RUNS)
        fprintf(stderr, "  [runs %" PRId64 "%s] %s\n", i->stride, i->assumed ? " assumed" : "",
                txt);
      else
        fprintf(stderr, "  [%s] %s\n", names[i ? i->kind : 0], txt);
      LLVMDisposeMessage(txt);
    }
  }
}

/* ---- entry point ------------------------------------------------------------------------------
 */

static void cleanup(struct vec *v) {
  for (size_t k = 0; k < v->num_info; k++) {
    free(v->all_info[k]->elems);
    free(v->all_info[k]);
  }
  free(v->all_info);
  ptr_map_free(&v->info);
  if (v->dl)
    for (unsigned l = 0; l < v->g.num_loops; l++) {
      free(v->dl[l].live_out);
      free(v->dl[l].live_elem);
      free(v->dl[l].acc_phi);
      free(v->dl[l].acc_next);
    }
  free(v->dl);
  free(v->varying_branch);
  free(v->barrier_branch);
  free(v->partial);
  free(v->join_of);
  free(v->region_entry);
  free(v->vblock);
  free(v->vlast);
  free(v->mask);
  free(v->mask_done);
  free(v->entry_mask);
  free(v->loop_divergent);
  free(v->exit_block);
  free(v->phi_orig);
  free(v->phi_new);
  ptr_map_free(&v->soa_size);
  ptr_set_free(&v->soa_ptrs);
  for (size_t k = 0; k < v->num_facts; k++)
    free(v->facts_owned[k]);
  free(v->facts_owned);
  ptr_map_free(&v->facts);
  for (size_t k = 0; k < v->num_groups; k++)
    free(v->groups[k]);
  free(v->groups);
  ptr_map_free(&v->group_of);
  if (v->b) LLVMDisposeBuilder(v->b);
  if (v->mb) LLVMDisposeBuilder(v->mb);
  cfg_free(&v->g);
}

/* The alloca that p points into, through GEPs and the phis of pointers
 * walking it, or NULL. */
static LLVMValueRef private_root(LLVMValueRef p) {
  for (int depth = 0; depth < 32; depth++) {
    if (LLVMIsAAllocaInst(p)) return p;
    if (LLVMIsAGetElementPtrInst(p))
      p = LLVMGetOperand(p, 0);
    else if (LLVMIsAPHINode(p) && LLVMCountIncoming(p))
      p = LLVMGetIncomingValue(p, 0);
    else
      return NULL;
  }
  return NULL;
}

/* In the blocks of loops (of the whole function when it has none): the
 * instructions that become vector operations, and the loads and stores
 * among them that gain nothing from vectors and become one access per
 * lane: table lookups whose index comes from an earlier lookup, and
 * accesses to each work-item's own copy of a private variable (one that
 * is not lane-interleaved: a struct copied byte by byte, read as words),
 * where the scalar code has a load at a fixed stack offset. */
static void count_loop_work(struct vec *v, unsigned *work, unsigned *scattered) {
  *work = *scattered = 0;
  for (unsigned b = 0; b < v->g.n; b++) {
    if (v->g.num_loops && v->g.loop[b] < 0) continue;
    for (LLVMValueRef in = LLVMGetFirstInstruction(v->g.blocks[b]); in;
         in = LLVMGetNextInstruction(in)) {
      if (LLVMIsATerminatorInst(in) || LLVMIsAPHINode(in)) continue;
      int is_load = LLVMIsALoadInst(in) != NULL, is_store = LLVMIsAStoreInst(in) != NULL;
      LLVMValueRef addr = is_load ? LLVMGetOperand(in, 0) : is_store ? LLVMGetOperand(in, 1) : NULL;
      struct shape s = addr ? shape_of_value(v, addr) : shape_of_value(v, in);
      if (s.kind == K_UNIFORM && (addr || is_uniform(v, in))) continue;
      (*work)++;
      if (!addr || s.kind == K_UNIFORM) continue;
      /* A lane-interleaved private array at an index that varies: a gather
       * or scatter too. Counted only against paired scalar code: one
       * work-item at a time, such a table lookup chain runs at its
       * latency (a Blowfish-like round on a private table, AVX2 code: 105
       * ms scalar, 73 vectorized, 62 paired). */
      if (is_private_array_ptr(v, addr)) {
        if (v->scalar_pairs && s.kind == K_VARYING) (*scattered)++;
        continue;
      }
      LLVMTypeRef t = is_load ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, 0));
      if ((s.kind == K_VARYING && address_from_gather(v, addr)) ||
          (s.stride != alloc_size(v, t) && private_root(addr)))
        (*scattered)++;
    }
  }
}

enum vectorize_status vectorize_workitem_function(LLVMModuleRef m, LLVMValueRef fn,
                                                  const struct vectorize_target *target,
                                                  LLVMValueRef *out, struct strbuf *why) {
  struct vec v = {0};
  *out = NULL;
  v.m = m;
  v.ctx = LLVMGetModuleContext(m);
  v.td = LLVMGetModuleDataLayout(m);
  v.fn = fn;
  v.W = target->width;
  v.rows = target->rows > 1 ? 2 : 1;
  v.H = v.W >= 8 || v.rows > 1 ? v.W / 2 : v.W;
  if (getenv("AQUILA_VECTORIZE_RUNS") && !strcmp(getenv("AQUILA_VECTORIZE_RUNS"), "0") &&
      v.rows == 1)
    v.H = v.W;
  v.isa = target->libmvec_isa;
  v.scalar_pairs = target->scalar_pairs;
  memcpy(v.reqd, target->reqd, sizeof v.reqd);
  v.why = why;
  v.status = VECTORIZE_OK;
  if (v.W < 2 || v.W > 64) {
    strbuf_append(why, "no vector width for this target");
    return VECTORIZE_UNSUPPORTED;
  }
  if (cfg_build(&v.g, fn)) {
    strbuf_append(why, "control flow with indirect branches");
    cfg_free(&v.g);
    return VECTORIZE_UNSUPPORTED;
  }
  unsigned n = v.g.n;
  v.varying_branch = xcalloc(n, 1);
  v.barrier_branch = xcalloc(n, 1);
  v.partial = xcalloc(n, 1);
  v.join_of = xcalloc(n, sizeof *v.join_of);
  v.region_entry = xcalloc(n, sizeof *v.region_entry);
  for (unsigned i = 0; i < n; i++)
    v.join_of[i] = v.region_entry[i] = -1;
  v.vblock = xcalloc(n, sizeof *v.vblock);
  v.vlast = xcalloc(n, sizeof *v.vlast);
  v.mask = xcalloc(n, sizeof *v.mask);
  v.mask_done = xcalloc(n, 1);
  v.entry_mask = xcalloc(n, sizeof *v.entry_mask);
  v.loop_divergent = xcalloc(v.g.num_loops, 1);
  v.exit_block = xcalloc(v.g.num_loops, sizeof *v.exit_block);
  for (unsigned l = 0; l < v.g.num_loops; l++)
    v.exit_block[l] = -1;
  v.dl = xcalloc(v.g.num_loops, sizeof *v.dl);
  v.i1 = LLVMInt1TypeInContext(v.ctx);
  v.i8 = LLVMInt8TypeInContext(v.ctx);
  v.i32 = LLVMInt32TypeInContext(v.ctx);
  v.i64 = LLVMInt64TypeInContext(v.ctx);
  v.mask_type = LLVMVectorType(v.i1, v.W);

  find_private_arrays(&v);
  analyze(&v);
  check_shapes(&v);
  if (getenv("AQUILA_DEBUG_VECTORIZE")) print_shapes(&v);
  if (v.status == VECTORIZE_OK && v.isa != 'e') {
    /* Without AVX-512 LLVM makes a gather or scatter one load or store per
     * lane, with the lane's 64-bit address extracted and the value
     * inserted: GATHER_LANE_COST operations a lane, about, against the
     * scalar code's one. Where the accesses that gain nothing from vectors
     * (count_loop_work) outweigh the rest of the loops' work, the scalar
     * code is faster. The cost is set between two kernels measured on AVX2
     * (x86-64-v3): a lookup-table chain, 2 such loads in 22 vector
     * operations, ran 1.8-2.6x faster vectorized; KeePass's AES rounds
     * (John the Ripper), 109 in 916 (T-table lookups, and each work-item's
     * copy of its AES key, in lanes 244 bytes apart), 2.5x slower. */
    enum { GATHER_LANE_COST = 8 };
    unsigned work, scattered;
    count_loop_work(&v, &work, &scattered);
    uint64_t vector_cost =
        (uint64_t)(work - scattered) + (uint64_t)GATHER_LANE_COST * v.W * scattered;
    if (scattered && vector_cost >= (uint64_t)v.W * work) {
      strbuf_printf(why,
                    "its loops' %u table lookups and accesses to each work-item's copy of a "
                    "private variable, among %u vector operations, would cost more than the "
                    "scalar code%s: without AVX-512 each lane is a load or store of its own",
                    scattered, work, v.scalar_pairs ? " in pairs" : "");
      v.status = VECTORIZE_UNSUPPORTED;
    }
  }
  if (v.status != VECTORIZE_OK) {
    enum vectorize_status s = v.status;
    cleanup(&v);
    return s;
  }

  size_t len;
  struct strbuf name = {0};
  strbuf_printf(&name, "%s.v%u", LLVMGetValueName2(fn, &len), v.W);
  v.vfn = LLVMAddFunction(m, name.data, LLVMGlobalGetValueType(fn));
  strbuf_free(&name);
  LLVMSetLinkage(v.vfn, LLVMInternalLinkage);
  for (unsigned i = 0; i < LLVMCountParams(fn); i++) {
    size_t plen;
    const char *pname = LLVMGetValueName2(LLVMGetParam(fn, i), &plen);
    LLVMSetValueName2(LLVMGetParam(v.vfn, i), pname, plen);
  }
  /* The function attributes that matter: nounwind, the floating-point
   * options (string attributes such as "no-nans-fp-math") and the
   * parameters'. */
  unsigned nattrs = LLVMGetAttributeCountAtIndex(fn, LLVMAttributeFunctionIndex);
  LLVMAttributeRef *attrs = xcalloc(nattrs, sizeof *attrs);
  LLVMGetAttributesAtIndex(fn, LLVMAttributeFunctionIndex, attrs);
  for (unsigned i = 0; i < nattrs; i++)
    if (LLVMIsStringAttribute(attrs[i]) ||
        (LLVMIsEnumAttribute(attrs[i]) &&
         LLVMGetEnumAttributeKind(attrs[i]) == LLVMGetEnumAttributeKindForName("nounwind", 8)))
      LLVMAddAttributeAtIndex(v.vfn, LLVMAttributeFunctionIndex, attrs[i]);
  free(attrs);
  for (unsigned p = 0; p < 2 && p < LLVMCountParams(fn); p++) {
    unsigned count = LLVMGetAttributeCountAtIndex(fn, p + 1);
    LLVMAttributeRef *pa = xcalloc(count, sizeof *pa);
    LLVMGetAttributesAtIndex(fn, p + 1, pa);
    for (unsigned i = 0; i < count; i++)
      LLVMAddAttributeAtIndex(v.vfn, p + 1, pa[i]);
    free(pa);
  }
  v.b = LLVMCreateBuilderInContext(v.ctx);
  v.mb = LLVMCreateBuilderInContext(v.ctx);
  find_streams_allowed(&v);
  v.split_accesses = v.g.num_loops == 0;
  emit_function(&v);
  enum vectorize_status s = v.status;
  if (s == VECTORIZE_OK && LLVMVerifyFunction(v.vfn, LLVMReturnStatusAction)) {
    fail(&v, VECTORIZE_UNSUPPORTED, "internal: the vectorized function is invalid", NULL);
    s = v.status;
    if (getenv("AQUILA_DEBUG_VECTORIZE_IR")) {
      LLVMVerifyFunction(v.vfn, LLVMPrintMessageAction);
      LLVMDumpValue(v.vfn);
    }
  }
  if (s != VECTORIZE_OK) {
    LLVMDeleteFunction(v.vfn);
  } else {
    *out = v.vfn;
  }
  cleanup(&v);
  return s;
}

/* 1 / sqrt(x) on 16 floats, from AVX-512's 14-bit estimate and one Newton
 * step, instead of a square root and a division: both of those take the
 * one divider, ~10 cycles each per vector on Zen 4, and bound NBody-like
 * kernels. Only where both operations carry !fpmath (OpenCL's 3 ulp for
 * sqrt and 2.5 for division; rsqrt's own limit is 2): the estimate's error
 * below 2^-14 squares to ~2^-27 in the step, and the residual 1 - x y^2
 * computed with an fma keeps rounding below ~1 ulp in all. Zero, infinity,
 * NaN and negative inputs give NaN in the step; there the estimate itself
 * is the exact answer (inf, 0, NaN). */
void vectorize_reciprocal_sqrt(LLVMModuleRef m, const struct vectorize_target *target) {
  if (target->width != 16) return;
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx), v16 = LLVMVectorType(f32, 16);
  unsigned fpmath = LLVMGetMDKindIDInContext(ctx, "fpmath", 6);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb), next; in; in = next) {
        next = LLVMGetNextInstruction(in);
        if (LLVMGetInstructionOpcode(in) != LLVMFDiv || LLVMTypeOf(in) != v16 ||
            !LLVMGetMetadata(in, fpmath))
          continue;
        LLVMValueRef one = LLVMGetOperand(in, 0), root = LLVMGetOperand(in, 1);
        LLVMValueRef splat = LLVMIsAConstant(one) ? LLVMGetAggregateElement(one, 0) : NULL;
        LLVMBool lost = 0;
        if (!splat || LLVMIsUndef(splat) || LLVMConstRealGetDouble(splat, &lost) != 1.0) continue;
        for (unsigned k = 1; k < 16; k++)
          if (LLVMGetAggregateElement(one, k) != splat) splat = NULL;
        if (!splat || !LLVMIsACallInst(root) || !LLVMGetMetadata(root, fpmath)) continue;
        LLVMValueRef callee = LLVMGetCalledValue(root);
        size_t len = 0;
        const char *name = callee ? LLVMGetValueName2(callee, &len) : "";
        if (strcmp(name, "llvm.sqrt.v16f32")) continue;
        LLVMValueRef x = LLVMGetOperand(root, 0);
        LLVMPositionBuilderBefore(b, in);
        LLVMTypeRef i16 = LLVMInt16TypeInContext(ctx);
        LLVMTypeRef est_params[] = {v16, v16, i16};
        LLVMTypeRef est_type = LLVMFunctionType(v16, est_params, 3, 0);
        LLVMValueRef est_fn = LLVMGetNamedFunction(m, "llvm.x86.avx512.rsqrt14.ps.512");
        if (!est_fn) est_fn = LLVMAddFunction(m, "llvm.x86.avx512.rsqrt14.ps.512", est_type);
        LLVMValueRef est_args[] = {x, LLVMConstNull(v16), LLVMConstAllOnes(i16)};
        LLVMValueRef y = LLVMBuildCall2(b, est_type, est_fn, est_args, 3, "");
        LLVMTypeRef fma_params[] = {v16, v16, v16};
        LLVMTypeRef fma_type = LLVMFunctionType(v16, fma_params, 3, 0);
        LLVMValueRef fma_fn = LLVMGetNamedFunction(m, "llvm.fma.v16f32");
        if (!fma_fn) fma_fn = LLVMAddFunction(m, "llvm.fma.v16f32", fma_type);
        LLVMValueRef h = LLVMBuildFMul(b, x, y, "");
        LLVMValueRef residual_args[] = {LLVMBuildFNeg(b, h, ""), y, one};
        LLVMValueRef residual = LLVMBuildCall2(b, fma_type, fma_fn, residual_args, 3, "");
        LLVMValueRef halves[16];
        for (unsigned k = 0; k < 16; k++)
          halves[k] = LLVMConstReal(f32, 0.5);
        LLVMValueRef half_y = LLVMBuildFMul(b, y, LLVMConstVector(halves, 16), "");
        LLVMValueRef step_args[] = {half_y, residual, y};
        LLVMValueRef refined = LLVMBuildCall2(b, fma_type, fma_fn, step_args, 3, "");
        LLVMValueRef failed = LLVMBuildFCmp(b, LLVMRealUNO, refined, refined, "");
        LLVMValueRef r = LLVMBuildSelect(b, failed, y, refined, "");
        LLVMReplaceAllUsesWith(in, r);
        LLVMInstructionEraseFromParent(in);
        if (!LLVMGetFirstUse(root)) LLVMInstructionEraseFromParent(root);
      }
  LLVMDisposeBuilder(b);
}
