/* Loads and stores: an access becomes one wide load or store where the
 * lanes' addresses are consecutive (plain, masked, or two ways checked at
 * run time; non-temporal stores for large streams), a gather or scatter
 * otherwise; an access group becomes one wide access and shuffles.
 *
 * Needs: addresses (address.c), clamped addresses (clamped.c), masks
 * (build.c), shapes (shape.c), runs' second halves (instructions.c). */
#include "vectorize/internal.h"

#include <stdint.h>

/* Masked loads of consecutive elements stream from memory at about half
 * the speed of plain ones on Zen 5 (c = a + b in C with AVX-512 intrinsics:
 * 25-30 GB/s masked, 47-52 plain; a software prefetch ahead of the masked
 * loads restores it, so the hardware prefetcher seems not to follow them;
 * masked stores cost 10-15% more), which halved VectorAdd behind its bounds
 * check, `if (i < n)`. Under such a check every lane is active in all but
 * the last vector. So the masked access is taken only when some lane of mask
 * (the work-items' mask, W lanes) is off; m is the mask of the access
 * itself (mask expanded, or with gaps). The branch is predicted either way
 * when the mask is uniform, as under bounds checks. */
LLVMValueRef all_lanes(struct vec *v, LLVMValueRef mask) {
  LLVMValueRef bits = LLVMBuildBitCast(v->b, mask, LLVMIntTypeInContext(v->ctx, v->W), "");
  return LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "all");
}

/* A dispatch that writes at least this much through one store is taken to
 * stream its output past the last-level cache: c = a + b on 2^22 floats
 * (16 MiB written, 48 MiB touched) ran 1.45x faster with non-temporal
 * stores on the 2 Zen 5 cores it was measured on. Smaller outputs are left
 * in the cache, where the next command may find them. */
#define STREAM_MIN_BYTES (16ull << 20)

/* Non-temporal stores write a whole cache line without first reading it
 * (write-allocate): a kernel that streams its output, VectorAdd's c = a + b,
 * moves 12 bytes an element instead of 16. They pay off only when the
 * output is far larger than the cache (else the next kernel would find it
 * there), so the choice is made per dispatch, from its size, and only for
 * full, aligned vectors. They are ordered with other threads only by a
 * fence: the CPU agent fences after each range of work-groups, before it
 * counts them done, and a function with atomics or fences of its own (a
 * work-group that signals others) keeps ordinary stores. */
void find_streams_allowed(struct vec *v) {
  v->streams_allowed = v->isa == 'd' || v->isa == 'e';
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(v->fn); bb && v->streams_allowed;
       bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in))
      if (LLVMIsAAtomicRMWInst(in) || LLVMIsAAtomicCmpXchgInst(in) || LLVMIsAFenceInst(in) ||
          (LLVMIsAStoreInst(in) &&
           (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)) ||
          (LLVMIsALoadInst(in) && LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)) {
        v->streams_allowed = 0;
        break;
      }
}

/* A builder at the start of the vector function's entry block (the
 * caller disposes of it): what it builds is computed once per call. */
static LLVMBuilderRef entry_builder(struct vec *v) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(v->vfn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(v->ctx);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first)
    LLVMPositionBuilderBefore(b, first);
  else
    LLVMPositionBuilderAtEnd(b, entry);
  return b;
}

static LLVMValueRef dispatch_work_items(struct vec *v) {
  if (v->work_items) return v->work_items;
  LLVMBuilderRef b = entry_builder(v);
  LLVMTypeRef type = LLVMFunctionType(v->i64, &v->i32, 1, 0);
  LLVMValueRef f = LLVMGetNamedFunction(v->m, "__aquila_global_size");
  if (!f) f = LLVMAddFunction(v->m, "__aquila_global_size", type);
  LLVMValueRef items = NULL;
  for (unsigned d = 0; d < 3; d++) {
    LLVMValueRef dim = LLVMConstInt(v->i32, d, 0);
    LLVMValueRef size = LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, &dim, 1, "");
    if (LLVMTypeOf(size) != v->i64) size = LLVMBuildZExtOrBitCast(b, size, v->i64, "");
    items = items ? LLVMBuildMul(b, items, size, "") : size;
  }
  LLVMDisposeBuilder(b);
  return v->work_items = items;
}

/* A store of a whole vector of consecutive elements, every lane active. */
static void store_wide(struct vec *v, LLVMValueRef data, LLVMValueRef base, unsigned align,
                       LLVMValueRef like) {
  unsigned long long bytes = LLVMStoreSizeOfType(v->td, LLVMTypeOf(data));
  if (!v->streams_allowed || !v->split_accesses ||
      LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != 1 || (bytes != 32 && bytes != 64) ||
      (bytes == 64 && v->isa != 'e')) {
    LLVMValueRef st = LLVMBuildStore(v->b, data, base);
    LLVMSetAlignment(st, align);
    if (like) copy_memory_metadata(v, like, st);
    return;
  }
  unsigned long long per_item = bytes / v->W;
  LLVMValueRef big = LLVMBuildICmp(
      v->b, LLVMIntUGE, dispatch_work_items(v),
      LLVMConstInt(v->i64, (STREAM_MIN_BYTES + per_item - 1) / (per_item ? per_item : 1), 0), "");
  LLVMValueRef low = LLVMBuildAnd(v->b, LLVMBuildPtrToInt(v->b, base, v->i64, ""),
                                  LLVMConstInt(v->i64, bytes - 1, 0), "");
  LLVMValueRef aligned = LLVMBuildICmp(v->b, LLVMIntEQ, low, LLVMConstNull(v->i64), "");
  struct two_ways w;
  split_two_ways(v, LLVMBuildAnd(v->b, big, aligned, "stream"), &w);
  LLVMValueRef st = LLVMBuildStore(v->b, data, base);
  LLVMSetAlignment(st, (unsigned)bytes);
  if (like) copy_memory_metadata(v, like, st);
  LLVMValueRef one = LLVMConstInt(v->i32, 1, 0);
  LLVMSetMetadata(
      st, LLVMGetMDKindIDInContext(v->ctx, "nontemporal", 11),
      LLVMMetadataAsValue(
          v->ctx, LLVMMDNodeInContext2(v->ctx, (LLVMMetadataRef[]){LLVMValueAsMetadata(one)}, 1)));
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.slow);
  st = LLVMBuildStore(v->b, data, base);
  LLVMSetAlignment(st, align);
  if (like) copy_memory_metadata(v, like, st);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
}

static LLVMValueRef masked_load(struct vec *v, LLVMTypeRef t, LLVMValueRef base, unsigned align,
                                LLVMValueRef mask, LLVMValueRef m, LLVMValueRef like) {
  if (!v->split_accesses) {
    LLVMTypeRef types[2] = {t, LLVMTypeOf(base)};
    LLVMValueRef args[4] = {base, LLVMConstInt(v->i32, align, 0), m, LLVMGetPoison(t)};
    return call_intrinsic(v, v->b, "llvm.masked.load", types, 2, args, 4);
  }
  struct two_ways w;
  split_two_ways(v, all_lanes(v, mask), &w);
  LLVMValueRef fast = LLVMBuildLoad2(v->b, t, base, "");
  LLVMSetAlignment(fast, align);
  if (like) copy_memory_metadata(v, like, fast);
  w.fast_end = LLVMGetInsertBlock(v->b);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.slow);
  LLVMTypeRef types[2] = {t, LLVMTypeOf(base)};
  LLVMValueRef args[4] = {base, LLVMConstInt(v->i32, align, 0), m, LLVMGetPoison(t)};
  LLVMValueRef slow = call_intrinsic(v, v->b, "llvm.masked.load", types, 2, args, 4);
  w.slow_end = LLVMGetInsertBlock(v->b);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
  return join_value(v, &w, fast, slow);
}

/* m: as for masked_load; NULL when it is mask itself. A store that leaves
 * gaps (m has lanes off whatever mask says) stays masked. */
static void masked_store(struct vec *v, LLVMValueRef data, LLVMValueRef base, unsigned align,
                         LLVMValueRef mask, LLVMValueRef m, int complete, LLVMValueRef like) {
  LLVMTypeRef types[2] = {LLVMTypeOf(data), LLVMTypeOf(base)};
  LLVMValueRef args[4] = {data, base, LLVMConstInt(v->i32, align, 0), m};
  if (!complete || !mask || !v->split_accesses) {
    call_intrinsic(v, v->b, "llvm.masked.store", types, 2, args, 4);
    return;
  }
  struct two_ways w;
  split_two_ways(v, all_lanes(v, mask), &w);
  store_wide(v, data, base, align, like);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.slow);
  call_intrinsic(v, v->b, "llvm.masked.store", types, 2, args, 4);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
}

static LLVMValueRef wide_load(struct vec *v, struct access_group *g, LLVMValueRef base,
                              LLVMValueRef mask) {
  LLVMTypeRef wt = LLVMVectorType(g->type, v->W * g->members);
  if (!mask) {
    LLVMValueRef r = LLVMBuildLoad2(v->b, wt, base, "");
    LLVMSetAlignment(r, g->align);
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) {
        copy_memory_metadata(v, g->member[k], r);
        break;
      }
    return r;
  }
  LLVMValueRef like = NULL;
  for (unsigned k = 0; k < g->members && !like; k++)
    like = g->member[k];
  return masked_load(v, wt, base, g->align, mask, expand_mask(v, v->b, mask, g->members), like);
}

/* A private slot of 64 bytes in the entry block, as a pointer of address
 * space like's (every space is one flat address space on the CPU). */
static LLVMValueRef spare_slot(struct vec *v, LLVMTypeRef like) {
  unsigned as = LLVMGetPointerAddressSpace(like);
  if (as >= sizeof v->spare_slot / sizeof v->spare_slot[0]) return NULL;
  if (v->spare_slot[as]) return v->spare_slot[as];
  LLVMBuilderRef b = entry_builder(v);
  LLVMValueRef slot = LLVMBuildAlloca(b, LLVMArrayType2(v->i8, 64), "spare.slot");
  LLVMSetAlignment(slot, 64);
  if (as) slot = LLVMBuildAddrSpaceCast(b, slot, like, "");
  LLVMDisposeBuilder(b);
  return v->spare_slot[as] = slot;
}

/* Without AVX-512 a gather or scatter under a mask that is not constant
 * became one branch per lane (LLVM scalarizes them where the target has no
 * fast masked gather: AVX2 on AMD and generic x86-64-v3, SSE; AVX2 has no
 * scatter at all): KeePass's AES rounds, in a loop each work-item runs its
 * own number of times, read and wrote a private byte array that way. Lanes
 * that are off read or write a private spare slot instead, and the access
 * loses its mask: a plain vpgatherdd, or per-lane loads and stores without
 * branches. ptrs becomes the addresses to use; returns the mask left. */
static LLVMValueRef spare_lanes_off(struct vec *v, LLVMTypeRef t, LLVMValueRef *ptrs,
                                    LLVMValueRef mask) {
  if (!mask || v->isa == 'e' || LLVMABISizeOfType(v->td, t) > 64) return mask;
  LLVMValueRef slot = spare_slot(v, LLVMGetElementType(LLVMTypeOf(*ptrs)));
  if (!slot) return mask;
  *ptrs = LLVMBuildSelect(v->b, mask, *ptrs, splat(v, v->b, slot), "");
  return NULL;
}

LLVMValueRef gather(struct vec *v, LLVMTypeRef t, LLVMValueRef ptrs, unsigned align,
                    LLVMValueRef mask) {
  mask = spare_lanes_off(v, t, &ptrs, mask);
  LLVMTypeRef vt = vector_of(v, t);
  LLVMTypeRef types[2] = {vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {ptrs, LLVMConstInt(v->i32, align, 0), mask_value(v, mask),
                          LLVMGetPoison(vt)};
  return call_intrinsic(v, v->b, "llvm.masked.gather", types, 2, args, 4);
}

void scatter(struct vec *v, LLVMValueRef data, LLVMValueRef ptrs, unsigned align,
             LLVMValueRef mask) {
  mask = spare_lanes_off(v, LLVMGetElementType(LLVMTypeOf(data)), &ptrs, mask);
  LLVMTypeRef types[2] = {LLVMTypeOf(data), LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {data, ptrs, LLVMConstInt(v->i32, align, 0), mask_value(v, mask)};
  call_intrinsic(v, v->b, "llvm.masked.scatter", types, 2, args, 4);
}

/* The start of run k (0 or 1) of the address root, for an access under
 * mask (NULL: every lane on). Where the runs hold only if no lane wraps
 * and some lanes are off (a bounds check: "if (i < n)"), it is found from
 * the run's first active lane's exact address, as affine_base does. */
static LLVMValueRef run_start(struct vec *v, LLVMValueRef root, LLVMValueRef mask, unsigned k) {
  struct shape s = shape_of_value(v, root);
  if (!mask || !s.assumed) return k ? hi_of(v, root) : scalar_of(v, root);
  LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef bits = LLVMBuildBitCast(v->b, mask, it, "");
  if (k) bits = LLVMBuildLShr(v->b, bits, LLVMConstInt(it, v->H, 0), "");
  bits = LLVMBuildAnd(v->b, bits, LLVMConstInt(it, (1ull << v->H) - 1, 0), "");
  /* A run with no lane on gets its first lane's address: nothing reads it. */
  bits = LLVMBuildOr(v->b, bits, LLVMConstInt(it, 1ull << v->H, 0), "");
  LLVMValueRef cttz =
      LLVMGetIntrinsicDeclaration(v->m, LLVMLookupIntrinsicID("llvm.cttz", 9), &it, 1);
  LLVMValueRef args[2] = {bits, LLVMConstInt(v->i1, 0, 0)};
  LLVMValueRef tz = LLVMBuildZExtOrBitCast(
      v->b, LLVMBuildCall2(v->b, LLVMGlobalGetValueType(cttz), cttz, args, 2, ""), v->i32, "");
  LLVMValueRef none = LLVMBuildICmp(v->b, LLVMIntEQ, tz, LLVMConstInt(v->i32, v->H, 0), "");
  LLVMValueRef first = LLVMBuildSelect(v->b, none, LLVMConstInt(v->i32, 0, 0), tz, "first");
  LLVMValueRef lane = LLVMBuildAdd(v->b, first, LLVMConstInt(v->i32, k * v->H, 0), "");
  LLVMValueRef p = lane_value(v, root, lane, 0);
  if (!p) p = LLVMBuildExtractElement(v->b, vector_of_value(v, root), lane, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-s.stride), 1), "");
  return LLVMBuildGEP2(v->b, v->i8, p, &back, 1, "run");
}

/* The members of 8-byte elements, one per lane at roots (a float2 twiddle
 * from a table): one gather of the elements, split, for half as many (or
 * fewer) loads as a gather per member. */
void gather_members_of_8_bytes(struct vec *v, LLVMTypeRef member_type, unsigned members,
                               LLVMValueRef roots, unsigned align, LLVMValueRef mask,
                               LLVMValueRef *result) {
  LLVMValueRef all = gather(v, v->i64, roots, align, mask);
  all = LLVMBuildBitCast(v->b, all, LLVMVectorType(member_type, members * v->W), "");
  for (unsigned k = 0; k < members; k++)
    result[k] = deinterleave(v, v->b, all, members, k);
}

void emit_group_load(struct vec *v, struct access_group *g, LLVMValueRef mask) {
  g->emitted = 1;
  struct shape rs = shape_of_value(v, g->root);
  if (rs.kind == K_AFFINE) {
    LLVMValueRef wide = wide_load(v, g, affine_base(v, g->root, mask), mask);
    deinterleave_members(v, v->b, wide, g->members, g->member, g->result);
    return;
  }
  if (rs.kind == K_RUNS) {
    /* Two runs: a load of half the width at each run's start, masked by
     * its half of the mask. */
    LLVMValueRef part[2];
    LLVMTypeRef ht = LLVMVectorType(g->type, v->H * g->members);
    LLVMValueRef m = mask ? expand_mask(v, v->b, mask, g->members) : NULL;
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef start = run_start(v, g->root, mask, k);
      if (!m) {
        part[k] = LLVMBuildLoad2(v->b, ht, start, "");
        LLVMSetAlignment(part[k], g->align);
      } else {
        LLVMTypeRef types[2] = {ht, LLVMTypeOf(start)};
        LLVMValueRef args[4] = {start, LLVMConstInt(v->i32, g->align, 0),
                                half_of(v, m, v->W * g->members, k), LLVMGetPoison(ht)};
        part[k] = call_intrinsic(v, v->b, "llvm.masked.load", types, 2, args, 4);
      }
      for (unsigned j = 0; j < g->members; j++)
        if (g->member[j]) {
          copy_memory_metadata(v, g->member[j], part[k]);
          break;
        }
    }
    LLVMValueRef idx[MAX_MEMBERS * 64];
    for (unsigned i = 0; i < v->W * g->members; i++)
      idx[i] = LLVMConstInt(v->i32, i, 0);
    LLVMValueRef whole =
        LLVMBuildShuffleVector(v->b, part[0], part[1], LLVMConstVector(idx, v->W * g->members), "");
    deinterleave_members(v, v->b, whole, g->members, g->member, g->result);
    return;
  }
  /* A varying root: one wide load when the lanes' elements turn out to be
   * consecutive (a clamped index, a select), else a gather per member. */
  LLVMValueRef roots = vector_of_value(v, g->root), base;
  LLVMValueRef ok = unclamped(v, g->root, mask, g->stride, &base);
  if (!ok) ok = consecutive_index(v, g->root, mask, g->stride, &base);
  if (!ok) ok = consecutive(v, roots, mask, g->stride, &base);
  struct two_ways w;
  split_two_ways(v, ok, &w);
  LLVMValueRef fast[MAX_MEMBERS] = {0}, slow[MAX_MEMBERS] = {0};
  LLVMValueRef wide = wide_load(v, g, base, mask);
  deinterleave_members(v, v->b, wide, g->members, g->member, fast);
  w.fast_end = LLVMGetInsertBlock(v->b);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.slow);
  /* Not one run: perhaps two, one per half of the lanes. A wide load reads
   * the gaps between members too: only where root's elements are known to
   * span them, or there are none. */
  int gapless = 1;
  for (unsigned k = 0; k < g->members; k++)
    if (!g->member[k]) gapless = 0;
  gapless |= g->element_known;
  LLVMValueRef half_base[2];
  LLVMValueRef halves =
      !mask && gapless ? halves_consecutive(v, g->root, g->stride, half_base) : NULL;
  struct two_ways w2;
  LLVMValueRef by_halves[MAX_MEMBERS] = {0};
  if (halves) {
    split_two_ways(v, halves, &w2);
    LLVMTypeRef ht = LLVMVectorType(g->type, v->W * g->members / 2);
    LLVMValueRef part[2];
    for (unsigned k = 0; k < 2; k++) {
      part[k] = LLVMBuildLoad2(v->b, ht, half_base[k], "");
      LLVMSetAlignment(part[k], g->align);
    }
    LLVMValueRef idx[MAX_MEMBERS * 64];
    for (unsigned i = 0; i < v->W * g->members; i++)
      idx[i] = LLVMConstInt(v->i32, i, 0);
    LLVMValueRef whole =
        LLVMBuildShuffleVector(v->b, part[0], part[1], LLVMConstVector(idx, v->W * g->members), "");
    deinterleave_members(v, v->b, whole, g->members, g->member, by_halves);
    w2.fast_end = LLVMGetInsertBlock(v->b);
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.slow);
  }
  int all_members = 1;
  for (unsigned k = 0; k < g->members; k++)
    all_members &= g->member[k] != NULL;
  if (all_members && g->members > 1 && (int64_t)g->members * g->size == 8) {
    gather_members_of_8_bytes(v, g->type, g->members, roots, g->align, mask, slow);
  } else {
    for (unsigned k = 0; k < g->members; k++) {
      if (!g->member[k]) continue;
      LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
      LLVMValueRef ptrs = k ? LLVMBuildGEP2(v->b, v->i8, roots, &off, 1, "") : roots;
      unsigned align = LLVMGetAlignment(g->member[k]);
      slow[k] = gather(v, g->type, ptrs, align ? align : 1, mask);
    }
  }
  if (halves) {
    w2.slow_end = LLVMGetInsertBlock(v->b);
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.join);
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) slow[k] = join_value(v, &w2, by_halves[k], slow[k]);
  }
  w.slow_end = LLVMGetInsertBlock(v->b);
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
  for (unsigned k = 0; k < g->members; k++)
    if (g->member[k]) g->result[k] = join_value(v, &w, fast[k], slow[k]);
}

/* Stores parts[k] (NULL at gaps), the members' vectors, as g's elements. */
void emit_group_store(struct vec *v, struct access_group *g, LLVMValueRef mask,
                      LLVMValueRef *parts) {
  g->emitted = 1;
  int complete = 1;
  for (unsigned k = 0; k < g->members; k++)
    if (!parts[k]) complete = 0;
  LLVMValueRef data = interleave(v, v->b, parts, g->members, g->type);
  /* Gaps are not written: the mask leaves them out. */
  LLVMValueRef m = mask;
  if (!complete) {
    LLVMValueRef bits[MAX_MEMBERS * 64];
    for (unsigned i = 0; i < v->W * g->members; i++)
      bits[i] = LLVMConstInt(v->i1, g->member[i % g->members] != NULL, 0);
    LLVMValueRef present = LLVMConstVector(bits, v->W * g->members);
    m = mask ? LLVMBuildSelect(v->b, expand_mask(v, v->b, mask, g->members), present,
                               LLVMConstNull(LLVMTypeOf(present)), "")
             : present;
  } else if (mask) {
    m = expand_mask(v, v->b, mask, g->members);
  }
  struct shape rs = shape_of_value(v, g->root);
  LLVMValueRef roots = NULL, base;
  struct two_ways w;
  if (rs.kind == K_RUNS) {
    /* Two runs: a store of half the width at each run's start (masked by
     * its half of m), the second run's last, as the work-items in order
     * would leave it. */
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef start = run_start(v, g->root, mask, k);
      LLVMValueRef half = half_of(v, data, v->W * g->members, k);
      if (!m) {
        LLVMValueRef st = LLVMBuildStore(v->b, half, start);
        LLVMSetAlignment(st, g->align);
        copy_memory_metadata(v, g->last, st);
      } else {
        LLVMTypeRef types[2] = {LLVMTypeOf(half), LLVMTypeOf(start)};
        LLVMValueRef args[4] = {half, start, LLVMConstInt(v->i32, g->align, 0),
                                half_of(v, m, v->W * g->members, k)};
        call_intrinsic(v, v->b, "llvm.masked.store", types, 2, args, 4);
      }
    }
    return;
  }
  if (rs.kind == K_AFFINE) {
    base = affine_base(v, g->root, mask);
  } else {
    roots = vector_of_value(v, g->root);
    LLVMValueRef ok = unclamped(v, g->root, mask, g->stride, &base);
    if (!ok) ok = consecutive_index(v, g->root, mask, g->stride, &base);
    split_two_ways(v, ok ? ok : consecutive(v, roots, mask, g->stride, &base), &w);
  }
  if (!m) {
    store_wide(v, data, base, g->align, g->last);
  } else {
    masked_store(v, data, base, g->align, mask, m, complete, g->last);
  }
  if (!roots) return;
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.slow);
  /* Not one run: perhaps two, one per half of the lanes. */
  LLVMValueRef half_base[2];
  LLVMValueRef halves = !m ? halves_consecutive(v, g->root, g->stride, half_base) : NULL;
  struct two_ways w2;
  if (halves) {
    split_two_ways(v, halves, &w2);
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef st = LLVMBuildStore(v->b, half_of(v, data, v->W * g->members, k), half_base[k]);
      LLVMSetAlignment(st, g->align);
      copy_memory_metadata(v, g->last, st);
    }
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.slow);
  }
  if (complete && g->members > 1 && (int64_t)g->members * g->size == 8) {
    /* 8-byte elements: one scatter of them, each lane's whole element in
     * work-item order. */
    scatter(v, LLVMBuildBitCast(v->b, data, LLVMVectorType(v->i64, v->W), ""), roots, g->align,
            mask);
  } else {
    for (unsigned k = 0; k < g->members; k++) {
      if (!parts[k]) continue;
      LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
      LLVMValueRef ptrs = k ? LLVMBuildGEP2(v->b, v->i8, roots, &off, 1, "") : roots;
      scatter(v, parts[k], ptrs, g->align, mask);
    }
  }
  if (halves) {
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.join);
  }
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
}

/* A lane-interleaved private array's element at an index every lane
 * shares: its W copies are one vector (private_array_gep). It is read and
 * written whole whatever the mask, an inactive lane keeping its value
 * through a select: the array is the work-items' own, its index clamped
 * into it, and no other thread sees it. Plain accesses at constant offsets
 * let SROA keep the whole array in registers; masked ones (a divergent
 * loop's) kept it in memory, and AVX2 has no masked gather but one branch
 * per lane (John the Ripper's PBKDF2-SHA256 loop: 2,900 such branches). */
static int private_vector(struct vec *v, LLVMValueRef addr, LLVMTypeRef t) {
  struct shape s = shape_of_value(v, addr);
  return s.kind == K_AFFINE && is_private_array_ptr(v, addr) && s.stride == alloc_size(v, t) &&
         (int64_t)LLVMStoreSizeOfType(v->td, t) == s.stride;
}

LLVMValueRef emit_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  struct access_group *g = ptr_map_get(&v->group_of, in);
  if (g) {
    if (!g->emitted) emit_group_load(v, g, mask);
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k] == in) return g->result[k];
  }
  LLVMValueRef addr = LLVMGetOperand(in, 0);
  LLVMTypeRef t = LLVMTypeOf(in), vt = vector_of(v, t);
  unsigned align = LLVMGetAlignment(in);
  if (!align) align = 1;
  if (private_vector(v, addr, t)) {
    LLVMValueRef r = LLVMBuildLoad2(v->b, vt, scalar_of(v, addr), "");
    LLVMSetAlignment(r, align);
    return r;
  }
  struct shape s = shape_of_value(v, addr);
  int64_t size = alloc_size(v, t);
  if (s.kind == K_AFFINE && s.stride == -size && (int64_t)LLVMStoreSizeOfType(v->td, t) == size &&
      !LLVMGetVolatile(in)) {
    /* Lanes walking down: one load, reversed. */
    LLVMValueRef back =
        LLVMConstInt(v->i64, (unsigned long long)((int64_t)(v->W - 1) * s.stride), 1);
    LLVMValueRef base = LLVMBuildGEP2(v->b, v->i8, affine_base(v, addr, mask), &back, 1, "");
    LLVMValueRef r;
    if (!mask) {
      r = LLVMBuildLoad2(v->b, vt, base, "");
      LLVMSetAlignment(r, align);
      copy_memory_metadata(v, in, r);
    } else {
      r = masked_load(v, vt, base, align, mask, reverse(v, v->b, mask), in);
    }
    return reverse(v, v->b, r);
  }
  if (s.kind == K_RUNS && s.stride == 0 && !LLVMGetVolatile(in)) {
    /* One address per run: a load each, broadcast over its run; under a
     * mask, a run's load only when one of its lanes is on (a masked load
     * of one element), as a uniform load runs only when a lane does. */
    LLVMValueRef start[2] = {scalar_of(v, addr), hi_of(v, addr)}, part[2];
    LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W), one = LLVMVectorType(t, 1);
    LLVMValueRef bits = mask ? LLVMBuildBitCast(v->b, mask, it, "") : NULL;
    for (unsigned k = 0; k < 2; k++) {
      if (!mask) {
        part[k] = LLVMBuildLoad2(v->b, t, start[k], "");
        LLVMSetAlignment(part[k], align);
      } else {
        LLVMValueRef run =
            LLVMBuildAnd(v->b, bits, LLVMConstInt(it, ((1ull << v->H) - 1) << (k * v->H), 0), "");
        LLVMValueRef any = LLVMBuildICmp(v->b, LLVMIntNE, run, LLVMConstNull(it), "");
        LLVMValueRef m1 = LLVMBuildInsertElement(v->b, LLVMGetPoison(LLVMVectorType(v->i1, 1)), any,
                                                 LLVMConstInt(v->i32, 0, 0), "");
        LLVMTypeRef types[2] = {one, LLVMTypeOf(start[k])};
        LLVMValueRef args[4] = {start[k], LLVMConstInt(v->i32, align, 0), m1, LLVMGetPoison(one)};
        part[k] = LLVMBuildExtractElement(
            v->b, call_intrinsic(v, v->b, "llvm.masked.load", types, 2, args, 4),
            LLVMConstInt(v->i32, 0, 0), "");
      }
      if (LLVMIsAInstruction(part[k]) && LLVMIsALoadInst(part[k]))
        copy_memory_metadata(v, in, part[k]);
    }
    return join_halves(v, v->b, splat(v, v->b, part[0]), splat(v, v->b, part[1]));
  }
  return gather(v, t, vector_of_value(v, addr), align, mask);
}

void emit_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  LLVMValueRef val = LLVMGetOperand(in, 0), addr = LLVMGetOperand(in, 1);
  LLVMTypeRef t = LLVMTypeOf(val);
  unsigned align = LLVMGetAlignment(in);
  if (!align) align = 1;
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_UNIFORM) {
    /* Every active lane writes here: the last one's value stays, as when
     * the work-items run in order. */
    LLVMValueRef x = is_uniform(v, val) ? scalar_of(v, val)
                                        : LLVMBuildExtractElement(v->b, vector_of_value(v, val),
                                                                  last_lane(v, v->b, mask), "");
    LLVMValueRef st = LLVMBuildStore(v->b, x, scalar_of(v, addr));
    LLVMSetAlignment(st, align);
    LLVMSetVolatile(st, LLVMGetVolatile(in));
    copy_memory_metadata(v, in, st);
    return;
  }
  if (private_vector(v, addr, t)) {
    LLVMValueRef p = scalar_of(v, addr), data = vector_of_value(v, val);
    if (mask) {
      LLVMValueRef old = LLVMBuildLoad2(v->b, LLVMTypeOf(data), p, "");
      LLVMSetAlignment(old, align);
      data = LLVMBuildSelect(v->b, mask, data, old, "");
    }
    LLVMValueRef st = LLVMBuildStore(v->b, data, p);
    LLVMSetAlignment(st, align);
    return;
  }
  struct access_group *g = ptr_map_get(&v->group_of, in);
  if (g) {
    if (in == g->last) {
      LLVMValueRef parts[MAX_MEMBERS] = {0};
      for (unsigned k = 0; k < g->members; k++)
        if (g->member[k]) parts[k] = vector_of_value(v, LLVMGetOperand(g->member[k], 0));
      emit_group_store(v, g, mask, parts);
    }
    return;
  }
  LLVMValueRef data = vector_of_value(v, val);
  int64_t size = alloc_size(v, t);
  if (s.kind == K_AFFINE && s.stride == -size && (int64_t)LLVMStoreSizeOfType(v->td, t) == size) {
    LLVMValueRef back =
        LLVMConstInt(v->i64, (unsigned long long)((int64_t)(v->W - 1) * s.stride), 1);
    LLVMValueRef base = LLVMBuildGEP2(v->b, v->i8, affine_base(v, addr, mask), &back, 1, "");
    data = reverse(v, v->b, data);
    if (!mask) {
      LLVMValueRef st = LLVMBuildStore(v->b, data, base);
      LLVMSetAlignment(st, align);
      copy_memory_metadata(v, in, st);
    } else {
      masked_store(v, data, base, align, mask, reverse(v, v->b, mask), 1, in);
    }
    return;
  }
  scatter(v, data, vector_of_value(v, addr), align, mask);
}
