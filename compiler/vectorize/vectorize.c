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
 * flags, and integer divisors of inactive lanes are replaced by 1. */
#include "vectorize/vectorize.h"

#include <llvm-c/Analysis.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/cfg.h"
#include "support/ptrmap.h"

/* In the order shapes rise during the analysis. */
enum kind { K_UNDEF, K_UNIFORM, K_AFFINE, K_RUNS, K_VARYING };

struct vinfo {
  unsigned char kind;
  unsigned char assumed; /* affine only if no lane's value wraps (a zext/sext in the chain) */
  unsigned char drop;    /* emits nothing (lifetime markers, assumptions) */
  unsigned char packet;  /* a varying OpenCL vector: its elements apart (is_packet) */
  unsigned num_elems;
  LLVMValueRef *elems; /* a packet's elements, each a <W x T> */
  unsigned char gap_known; /* runs: lane H's value minus lane 0's is gap */
  int64_t gap_align;       /* runs: a power of two that divides the gap */
  int64_t stride;          /* affine and runs: per-lane step, in bytes for pointers */
  int64_t gap;
  LLVMValueRef scalar;    /* uniform: the clone; affine and runs: lane 0's value */
  LLVMValueRef scalar_hi; /* runs: lane H's value */
  LLVMValueRef vector; /* varying: the value; others: their vector form, once built */
};

/* Loads (or stores) in one block of the parts of one element of memory:
 * lane l's element starts at root's lane-l address and spans stride bytes,
 * member k lies k * size bytes into it. OpenCL vectors and structs of
 * scalars are accessed so (float4 after the scalarizer). One wide access
 * and shuffles serve them all, instead of a gather or scatter each. */
#define MAX_MEMBERS 16
struct access_group {
  LLVMValueRef root;
  int is_store;
  int64_t stride;                   /* bytes per lane's element */
  int64_t size;                     /* bytes per member */
  LLVMTypeRef type;                 /* members' type */
  unsigned members;                 /* stride / size */
  LLVMValueRef member[MAX_MEMBERS]; /* the access at each slot, NULL for a gap */
  LLVMValueRef last;                /* the last member in program order (stores are made there) */
  int element_known; /* root indexes elements of exactly stride bytes: gaps may be read */
  unsigned align;
  int emitted;
  LLVMValueRef result[MAX_MEMBERS];
  /* Members found by index_key (root is then the first member's address,
   * at key_offset bytes from the key's origin). */
  LLVMValueRef key_ptr, key_index;
  int64_t key_offset;
};

/* A loop whose work-items leave it at different iterations. */
struct divergent_loop {
  LLVMValueRef mask_phi;  /* lanes still running, at the header */
  unsigned num_live_outs; /* one per scalar value, one per element of a vector one */
  LLVMValueRef *live_out; /* values of the loop that its exit block's phis take */
  int *live_elem;         /* the element of a vector live-out, or -1 */
  LLVMValueRef *acc_phi;  /* each lane's value at the iteration it left */
  LLVMValueRef *acc_next;
};

struct vec {
  LLVMModuleRef m;
  LLVMContextRef ctx;
  LLVMTargetDataRef td;
  LLVMValueRef fn, vfn;
  unsigned W;
  unsigned H;    /* rows: the lanes of one row (W / 2); else W */
  unsigned rows; /* work-group rows per vector: 1, or 2 (vectorize_target) */
  char isa;
  uint32_t reqd[3];     /* required local size, 0 if none */
  struct ptr_map facts; /* integer value -> its struct int_facts, once asked */
  void **facts_owned;
  size_t num_facts, cap_facts;
  struct cfg g;
  struct ptr_map info; /* original instruction -> struct vinfo */
  struct vinfo **all_info;
  size_t num_info, cap_info;
  struct strbuf *why;
  enum vectorize_status status;

  /* Per block. */
  unsigned char *varying_branch; /* its terminator branches differently per lane */
  unsigned char *barrier_branch; /* looks varying, but decides about a barrier: uniform */
  unsigned char *partial;        /* may run with some lanes off */
  int *join_of;                  /* for a join: the block of its varying branch, else -1 */
  int *region_entry;             /* for a join: the first block of the masked region */
  LLVMBasicBlockRef *vblock, *vlast;
  LLVMValueRef *mask; /* lanes on at the block's start; NULL: all of them */
  unsigned char *mask_done;
  LLVMValueRef *entry_mask; /* for a region's first block: the mask its branch computed */
  /* Per loop. */
  unsigned char *loop_divergent;
  int *exit_block; /* single exit block of a divergent loop */
  struct divergent_loop *dl;

  LLVMBuilderRef b;  /* emission */
  LLVMBuilderRef mb; /* vector forms built where their scalar is defined */
  LLVMTypeRef i1, i8, i32, i64, mask_type;
  /* Private arrays laid out lane-interleaved (find_private_arrays). */
  struct ptr_map soa_size; /* such an alloca -> its scalars' size in bytes */
  struct ptr_set soa_ptrs; /* the alloca and every GEP from it */
  /* Loads and stores of one block that touch parts of the same element. */
  struct ptr_map group_of; /* member instruction -> struct access_group */
  struct access_group **groups;
  size_t num_groups, cap_groups;
  /* Phis whose incoming values are filled in at the end. */
  LLVMValueRef *phi_orig, *phi_new;
  size_t num_phis, cap_phis;
  /* Streaming stores (store_wide): whether fn may use them, and the
   * dispatch's work-items, computed once in the entry block. */
  int streams_allowed;
  /* Whether a load or store may become two ways, plain or masked (and a
   * store plain or non-temporal): only in a function without loops. The
   * row loop around one with loops is unrolled and jammed, which control
   * flow after its inner loop prevents (clpeak's float kernel: 371 -> 56
   * GFLOP/s when its one store became two ways); a function with loops
   * does more work per element stored, and loop-free ones are those that
   * stream (VectorAdd, saxpy, elementwise). */
  int split_accesses;
  LLVMValueRef work_items;
};

/* ---- helpers ------------------------------------------------------------------------ */

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) abort();
  return p;
}

static void fail(struct vec *v, enum vectorize_status status, const char *what, LLVMValueRef in) {
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

static struct vinfo *info_of(struct vec *v, LLVMValueRef val) {
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

static const char *callee_name(LLVMValueRef call) {
  LLVMValueRef callee = LLVMGetCalledValue(call);
  size_t len;
  return callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &len) : NULL;
}

static int is_scalar_type(LLVMTypeRef t) {
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
static int is_scalar_vector_type(LLVMTypeRef t) {
  return LLVMGetTypeKind(t) == LLVMVectorTypeKind && is_scalar_type(LLVMGetElementType(t)) &&
         LLVMGetVectorSize(t) <= 16;
}

static LLVMTypeRef vector_of(struct vec *v, LLVMTypeRef t) {
  return LLVMVectorType(t, v->W);
}

static int block_of(struct vec *v, LLVMValueRef in) {
  return cfg_number(&v->g, LLVMGetInstructionParent(in));
}

/* ---- libm and intrinsics ------------------------------------------------------------ */

/* glibc's libmvec (2.35 and later) has vector variants of these, accurate
 * to 4 ulp, which OpenCL allows for them. Not used for the exponentials,
 * logarithms and cbrt (3 ulp or less in OpenCL; libmvec's double exp measured
 * 3.008): calls of those run once per lane. */
static const char *const libmvec_unary[] = {"acos",  "acosh", "asin", "asinh", "atan",
                                            "atanh", "cos",   "cosh", "erf",   "erfc",
                                            "sin",   "sinh",  "tan",  "tanh",  NULL};
static const char *const libmvec_binary[] = {"atan2", "hypot", "pow", NULL};

/* Returns 1 or 2 (arguments) when name is a libm function with vector
 * variants, and whether it is the float one. */
static int libm_function(const char *name, int *is_float, char base[16]) {
  size_t len = strlen(name);
  for (int arity = 1; arity <= 2; arity++) {
    const char *const *list = arity == 1 ? libmvec_unary : libmvec_binary;
    for (int i = 0; list[i]; i++) {
      size_t n = strlen(list[i]);
      if (strncmp(name, list[i], n) != 0) continue;
      if (len == n || (len == n + 1 && name[n] == 'f')) {
        *is_float = len == n + 1;
        snprintf(base, 16, "%s", list[i]);
        return arity;
      }
    }
  }
  return 0;
}

/* Intrinsics with a vector form: how it is overloaded, and which
 * arguments must stay scalar. */
enum overload { OV_RET, OV_RET_ARG1, OV_ARG0, OV_RET_ARG0 };
struct vector_intrinsic {
  const char *name;
  enum overload overload;
  unsigned scalar_args; /* bit i: argument i stays scalar (and must be uniform) */
};
static const struct vector_intrinsic vector_intrinsics[] = {{"llvm.fabs", OV_RET, 0},
                                                            {"llvm.sqrt", OV_RET, 0},
                                                            {"llvm.sin", OV_RET, 0},
                                                            {"llvm.cos", OV_RET, 0},
                                                            {"llvm.tan", OV_RET, 0},
                                                            {"llvm.pow", OV_RET, 0},
                                                            {"llvm.floor", OV_RET, 0},
                                                            {"llvm.ceil", OV_RET, 0},
                                                            {"llvm.trunc", OV_RET, 0},
                                                            {"llvm.rint", OV_RET, 0},
                                                            {"llvm.nearbyint", OV_RET, 0},
                                                            {"llvm.round", OV_RET, 0},
                                                            {"llvm.roundeven", OV_RET, 0},
                                                            {"llvm.fma", OV_RET, 0},
                                                            {"llvm.fmuladd", OV_RET, 0},
                                                            {"llvm.minnum", OV_RET, 0},
                                                            {"llvm.maxnum", OV_RET, 0},
                                                            {"llvm.minimum", OV_RET, 0},
                                                            {"llvm.maximum", OV_RET, 0},
                                                            {"llvm.copysign", OV_RET, 0},
                                                            {"llvm.canonicalize", OV_RET, 0},
                                                            {"llvm.ctpop", OV_RET, 0},
                                                            {"llvm.bswap", OV_RET, 0},
                                                            {"llvm.bitreverse", OV_RET, 0},
                                                            {"llvm.fshl", OV_RET, 0},
                                                            {"llvm.fshr", OV_RET, 0},
                                                            {"llvm.smin", OV_RET, 0},
                                                            {"llvm.smax", OV_RET, 0},
                                                            {"llvm.umin", OV_RET, 0},
                                                            {"llvm.umax", OV_RET, 0},
                                                            {"llvm.sadd.sat", OV_RET, 0},
                                                            {"llvm.uadd.sat", OV_RET, 0},
                                                            {"llvm.ssub.sat", OV_RET, 0},
                                                            {"llvm.usub.sat", OV_RET, 0},
                                                            {"llvm.sshl.sat", OV_RET, 0},
                                                            {"llvm.ushl.sat", OV_RET, 0},
                                                            {"llvm.ctlz", OV_RET, 2},
                                                            {"llvm.cttz", OV_RET, 2},
                                                            {"llvm.abs", OV_RET, 2},
                                                            {"llvm.powi", OV_RET_ARG1, 2},
                                                            {"llvm.ldexp", OV_RET_ARG1, 0},
                                                            {"llvm.is.fpclass", OV_ARG0, 2},
                                                            {"llvm.fptosi.sat", OV_RET_ARG0, 0},
                                                            {"llvm.fptoui.sat", OV_RET_ARG0, 0},
                                                            {"llvm.lrint", OV_RET_ARG0, 0},
                                                            {"llvm.llrint", OV_RET_ARG0, 0},
                                                            {"llvm.lround", OV_RET_ARG0, 0},
                                                            {"llvm.llround", OV_RET_ARG0, 0},
                                                            {NULL, OV_RET, 0}};

static const struct vector_intrinsic *find_vector_intrinsic(const char *name) {
  for (int i = 0; vector_intrinsics[i].name; i++) {
    size_t n = strlen(vector_intrinsics[i].name);
    if (!strncmp(name, vector_intrinsics[i].name, n) && name[n] == '.')
      return &vector_intrinsics[i];
  }
  return NULL;
}

/* Intrinsics that only inform the optimizer: not carried over. */
static int is_dropped_intrinsic(const char *name) {
  static const char *const prefixes[] = {"llvm.lifetime.",
                                         "llvm.dbg.",
                                         "llvm.assume",
                                         "llvm.experimental.noalias.scope.decl",
                                         "llvm.invariant.",
                                         "llvm.var.annotation",
                                         NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

/* Intrinsics without side effects besides those with a vector form. */
static int is_pure_intrinsic(const char *name) {
  if (find_vector_intrinsic(name)) return 1;
  static const char *const prefixes[] = {"llvm.umul.with.overflow",
                                         "llvm.smul.with.overflow",
                                         "llvm.uadd.with.overflow",
                                         "llvm.sadd.with.overflow",
                                         "llvm.usub.with.overflow",
                                         "llvm.ssub.with.overflow",
                                         "llvm.frexp",
                                         "llvm.vector.reduce",
                                         NULL};
  for (int i = 0; prefixes[i]; i++)
    if (!strncmp(name, prefixes[i], strlen(prefixes[i]))) return 1;
  return 0;
}

enum call_class {
  CALL_LOCAL_ID, /* __aquila_local_id */
  CALL_WORKITEM, /* another __aquila_* query: uniform */
  CALL_BARRIER,  /* __aquila_barrier */
  CALL_DROP,     /* an optimizer hint */
  CALL_VECTOR,   /* an intrinsic with a vector form */
  CALL_LIBM,     /* a libm function with a libmvec variant */
  CALL_PURE,     /* no side effects: vector calls lane by lane, every lane */
  CALL_PER_LANE, /* side effects: once per active lane */
  CALL_UNKNOWN,  /* an indirect call or a function with a body */
};

static enum call_class classify_call(LLVMValueRef call) {
  const char *name = callee_name(call);
  if (!name) return CALL_UNKNOWN;
  LLVMValueRef callee = LLVMGetCalledValue(call);
  /* The float builtins' rare slow paths (sin, cos, tan of huge arguments),
   * kept out of line like __outofline_: run for the lanes that take them. */
  if (!strncmp(name, "__aquila_vv_", 12)) return CALL_PER_LANE;
  if (!strncmp(name, "__aquila_", 9)) {
    if (!strcmp(name, "__aquila_local_id")) return CALL_LOCAL_ID;
    if (!strcmp(name, "__aquila_barrier")) return CALL_BARRIER;
    return CALL_WORKITEM;
  }
  if (LLVMGetIntrinsicID(callee)) {
    if (is_dropped_intrinsic(name)) return CALL_DROP;
    if (find_vector_intrinsic(name)) return CALL_VECTOR;
    if (is_pure_intrinsic(name)) return CALL_PURE;
    return CALL_PER_LANE;
  }
  /* The builtin library's rarely taken paths, kept out of line: called
   * once per lane. */
  if (!strncmp(name, "__outofline_", 12)) return CALL_PER_LANE;
  if (!LLVMIsDeclaration(callee)) return CALL_UNKNOWN;
  int is_float;
  char base[16];
  if (libm_function(name, &is_float, base)) return CALL_LIBM;
  return CALL_PER_LANE;
}

/* ---- shapes --------------------------------------------------------------------------- */

static int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

/* The largest power of two that divides x (ALIGN_ANY for 0 and beyond). */
#define ALIGN_ANY ((int64_t)1 << 40)
static int64_t low_bit(int64_t x) {
  if (x == 0) return ALIGN_ANY;
  uint64_t u = (uint64_t)(x < 0 ? -x : x);
  u &= -u;
  return u > (uint64_t)ALIGN_ANY ? ALIGN_ANY : (int64_t)u;
}

struct shape {
  unsigned char kind, assumed, gap_known;
  int64_t stride, gap;
  int64_t gap_align; /* runs: a power of two that divides the gap, known or not */
};

static struct shape shape_of_value(struct vec *v, LLVMValueRef val) {
  struct shape s = {K_UNIFORM, 0, 0, 0, 0};
  if (LLVMIsAInstruction(val)) {
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (i) {
      s.kind = i->kind;
      s.assumed = i->assumed;
      s.stride = i->stride;
      s.gap_known = i->gap_known;
      s.gap = i->gap;
      s.gap_align = i->gap_align;
    } else {
      s.kind = K_UNDEF;
    }
  } else if (LLVMIsAArgument(val) && val == LLVMGetParam(v->fn, 2)) {
    /* Lane 0's x; with two rows a vector, both rows start there. */
    s.kind = v->rows > 1 ? K_RUNS : K_AFFINE;
    s.stride = 1;
    s.gap_known = 1;
    s.gap_align = ALIGN_ANY;
  }
  return s;
}

static struct shape varying(void) {
  struct shape s = {K_VARYING, 0, 0, 0, 0, 1};
  return s;
}

static struct shape affine(int64_t stride, int assumed) {
  struct shape s = {K_AFFINE, (unsigned char)assumed, 0, stride, 0, 1};
  if (stride == 0) s.kind = K_UNIFORM, s.assumed = 0;
  /* Strides that large are as good as varying, and could overflow. */
  if (stride > (int64_t)1 << 30 || stride < -((int64_t)1 << 30)) s = varying();
  return s;
}

/* Two runs: lanes 0 .. H-1 step by stride from lane 0's value, lanes
 * H .. W-1 by the same stride from lane H's, which lies gap above lane 0's
 * when gap_known. x % 8 of 16 consecutive work-items is such a value (a
 * radix-8 FFT's index), and so is every local id when a vector holds two
 * rows of a work-group (vectorize_target.rows): then local id x runs 0 .. 7
 * in both halves and local id y is one more in the second. Runs whose gap
 * is H strides are affine. */
static struct shape runs(struct vec *v, int64_t stride, int assumed, int gap_known, int64_t gap,
                         int64_t gap_align) {
  if (v->H >= v->W) return varying();
  if (gap_known && gap == (int64_t)v->H * stride) return affine(stride, assumed);
  if (stride > (int64_t)1 << 30 || stride < -((int64_t)1 << 30)) return varying();
  struct shape s = {K_RUNS, (unsigned char)assumed, (unsigned char)gap_known, stride, gap, 1};
  if (gap > (int64_t)1 << 40 || gap < -((int64_t)1 << 40)) s.gap_known = 0;
  if (!s.gap_known) s.gap = 0;
  s.gap_align = s.gap_known ? low_bit(gap) : gap_align < 1 ? 1 : gap_align;
  return s;
}

/* What lane H's value lies above lane 0's, when known at compile time. */
static int gap_of(struct vec *v, struct shape s, int64_t *gap) {
  *gap = s.kind == K_AFFINE ? (int64_t)v->H * s.stride : s.kind == K_RUNS ? s.gap : 0;
  return s.kind == K_UNIFORM || s.kind == K_AFFINE || (s.kind == K_RUNS && s.gap_known);
}

/* A power of two that divides that, known or not (a phi of 8 * y and 0:
 * 8). */
static int64_t gap_align_of(struct vec *v, struct shape s) {
  if (s.kind == K_UNIFORM) return ALIGN_ANY;
  if (s.kind == K_AFFINE) return low_bit((int64_t)v->H * s.stride);
  if (s.kind == K_RUNS) return s.gap_known ? low_bit(s.gap) : s.gap_align;
  return 1;
}

static int64_t scale_align(int64_t align, int64_t factor) {
  int64_t f = low_bit(factor);
  return align >= ALIGN_ANY / f ? ALIGN_ANY : align * f;
}

/* Uniform within each row of a two-row vector (runs of stride 0), or
 * uniform: any operation on such values is, computed once per row. */
static int row_uniform(struct shape s) {
  return s.kind == K_UNIFORM || (s.kind == K_RUNS && s.stride == 0);
}

/* Join of two shapes reaching the same phi. */
static struct shape meet(struct vec *v, struct shape a, struct shape b) {
  if (a.kind == K_UNDEF) return b;
  if (b.kind == K_UNDEF) return a;
  if (a.kind == K_VARYING || b.kind == K_VARYING) return varying();
  if (a.kind == K_UNIFORM && b.kind == K_UNIFORM) return a;
  if (a.kind == K_AFFINE && b.kind == K_AFFINE && a.stride == b.stride)
    return affine(a.stride, a.assumed | b.assumed);
  if (a.kind == K_RUNS || b.kind == K_RUNS) {
    /* Runs with one stride: a phi of lane 0's values and one of lane H's. */
    int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sb = b.kind == K_UNIFORM ? 0 : b.stride;
    int64_t ga, gb;
    int ka = gap_of(v, a, &ga), kb = gap_of(v, b, &gb);
    if (sa != sb) return varying();
    int64_t al = min64(gap_align_of(v, a), gap_align_of(v, b));
    return runs(v, sa, a.assumed | b.assumed, ka && kb && ga == gb, ga, al);
  }
  return varying();
}

static int64_t alloc_size(struct vec *v, LLVMTypeRef t) {
  return (int64_t)LLVMABISizeOfType(v->td, t);
}

/* The bytes from one lane's copy of a private variable (not interleaved) to
 * the next: its size, rounded up to the alignment that the accesses to it
 * assume of every copy (clang aligns a private uchar[20] to 16, and a memset
 * of it becomes aligned vector stores). */
static int64_t lane_copy_size(struct vec *v, LLVMValueRef alloca) {
  int64_t size = alloc_size(v, LLVMGetAllocatedType(alloca));
  int64_t align = LLVMGetAlignment(alloca);
  return align > 1 ? (size + align - 1) / align * align : size;
}

/* ---- private arrays ---------------------------------------------------------------------- */

/* Private memory (an alloca left after SROA, mostly an array indexed at run
 * time) holds W copies, one per lane. Where the alloca is only ever read
 * and written as scalars of one size e, through GEPs, the copies are
 * interleaved: element offset o of lane l lives at o * W + l * e. An index
 * that is the same for all lanes then reads one vector instead of
 * gathering across W copies. Whether an alloca qualifies: */
static int private_array_users(struct vec *v, LLVMValueRef p, int64_t *size, int depth) {
  if (depth > 16) return 0;
  for (LLVMUseRef u = LLVMGetFirstUse(p); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsAInstruction(user)) return 0;
    LLVMOpcode op = LLVMGetInstructionOpcode(user);
    LLVMTypeRef t;
    if (op == LLVMGetElementPtr && LLVMGetOperand(user, 0) == p) {
      if (!private_array_users(v, user, size, depth + 1)) return 0;
      ptr_set_add(&v->soa_ptrs, user);
      continue;
    }
    if (op == LLVMLoad) {
      t = LLVMTypeOf(user);
    } else if (op == LLVMStore && LLVMGetOperand(user, 1) == p && LLVMGetOperand(user, 0) != p) {
      t = LLVMTypeOf(LLVMGetOperand(user, 0));
    } else if (op == LLVMCall && callee_name(user) && is_dropped_intrinsic(callee_name(user))) {
      continue;
    } else {
      return 0;
    }
    if (LLVMGetVolatile(user) || LLVMGetOrdering(user) != LLVMAtomicOrderingNotAtomic ||
        !is_scalar_type(t))
      return 0;
    int64_t e = (int64_t)LLVMABISizeOfType(v->td, t);
    if (e != (int64_t)LLVMStoreSizeOfType(v->td, t) || (*size && *size != e)) return 0;
    *size = e;
  }
  return 1;
}

static void find_private_arrays(struct vec *v) {
  LLVMBasicBlockRef entry = v->g.blocks[0];
  for (LLVMValueRef in = LLVMGetFirstInstruction(entry); in; in = LLVMGetNextInstruction(in)) {
    if (!LLVMIsAAllocaInst(in)) continue;
    int64_t e = 0, total = (int64_t)LLVMABISizeOfType(v->td, LLVMGetAllocatedType(in));
    /* GEPs of an alloca that does not qualify may land in soa_ptrs: they
     * never count (is_private_array_ptr looks at the alloca). */
    if (private_array_users(v, in, &e, 0) && e > 0 && total % e == 0) {
      ptr_map_put(&v->soa_size, in, (void *)(intptr_t)e);
      ptr_set_add(&v->soa_ptrs, in);
    }
  }
}

static int is_private_array_ptr(struct vec *v, LLVMValueRef p) {
  if (!ptr_set_has(&v->soa_ptrs, p)) return 0;
  /* A GEP counts only when the alloca it comes from qualified. */
  LLVMValueRef root = p;
  for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(root); depth++)
    root = LLVMGetOperand(root, 0);
  return ptr_map_get(&v->soa_size, root) != NULL;
}

/* The shape of a GEP: the pointer's stride plus each index's stride times
 * the size of what it steps over. */
static struct shape gep_shape(struct vec *v, LLVMValueRef in) {
  if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) {
    /* Lane-interleaved: same indices for all lanes keep lane l at l * e. */
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    for (unsigned i = 1; i < n; i++) {
      struct shape s = shape_of_value(v, LLVMGetOperand(in, i));
      if (s.kind != K_UNIFORM) return varying();
    }
    return shape_of_value(v, LLVMGetOperand(in, 0));
  }
  struct shape p = shape_of_value(v, LLVMGetOperand(in, 0));
  if (p.kind == K_VARYING) return varying();
  int64_t stride = p.kind == K_AFFINE || p.kind == K_RUNS ? p.stride : 0, gap;
  int assumed = p.assumed, any_runs = p.kind == K_RUNS;
  int gap_known = gap_of(v, p, &gap);
  int64_t gap_align = gap_align_of(v, p);
  LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(in, i);
    struct shape s = shape_of_value(v, idx);
    if (i > 1) {
      LLVMTypeKind k = LLVMGetTypeKind(t);
      if (k == LLVMStructTypeKind) {
        if (s.kind != K_UNIFORM) return varying();
        t = LLVMStructGetTypeAtIndex(t, (unsigned)LLVMConstIntGetZExtValue(idx));
        continue;
      }
      if (k != LLVMArrayTypeKind) return varying();
      t = LLVMGetElementType(t);
    }
    if (s.kind == K_VARYING || s.kind == K_UNDEF) return varying();
    int64_t g, size = alloc_size(v, t);
    gap_align = min64(gap_align, scale_align(gap_align_of(v, s), size));
    if (!gap_of(v, s, &g) || size > ((int64_t)1 << 20) || g > ((int64_t)1 << 40) ||
        g < -((int64_t)1 << 40))
      gap_known = 0;
    else
      gap += g * size;
    if (s.kind == K_AFFINE || s.kind == K_RUNS) {
      stride += s.stride * size;
      assumed |= s.assumed;
      any_runs |= s.kind == K_RUNS;
    }
  }
  return any_runs ? runs(v, stride, assumed, gap_known, gap, gap_align) : affine(stride, assumed);
}

/* Whether the phi's incoming values are one and the same value. */
static int phi_all_same(LLVMValueRef phi) {
  unsigned n = LLVMCountIncoming(phi);
  for (unsigned i = 1; i < n; i++)
    if (LLVMGetIncomingValue(phi, i) != LLVMGetIncomingValue(phi, 0)) return 0;
  return 1;
}

/* The innermost divergent loop that contains block b but not block c, or -1. */
static int divergent_loop_left(struct vec *v, int b, int c) {
  for (int l = v->g.loop[b]; l >= 0; l = v->g.loops[l].parent)
    if (v->loop_divergent[l] && !cfg_in_loop(&v->g, l, c)) return l;
  return -1;
}

/* ---- integer facts ------------------------------------------------------------------- */

/* What is known of an integer value built from work-item ids: every lane's
 * value lies in [lo, hi] (no wrap-around anywhere in the chain), and lane
 * 0's value is a multiple of align. The vectorized function runs lanes
 * x .. x + W - 1 with x a multiple of W, and HSA bounds a work-group's size
 * by 16 bits per dimension, so a flattened local id such as CLBlast's
 * get_local_id(0) + 8 * get_local_id(1) is known to be non-negative, small,
 * and, at lane 0, a multiple of 8: then tid % 8 and tid / 8 stay affine and
 * uniform across a vector of 8 (see divide_shape). */
struct int_facts {
  int known;
  int64_t lo, hi, align;
};

#define FACTS_LIMIT ((int64_t)1 << 52)

static struct int_facts facts_unknown(void) {
  struct int_facts f = {0, 0, 0, 1};
  return f;
}

/* Keeps facts that fit the value's type as signed numbers (and our
 * arithmetic); others are unknown. */
static struct int_facts facts_fit(struct int_facts f, LLVMTypeRef t) {
  if (!f.known || LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return facts_unknown();
  unsigned bits = LLVMGetIntTypeWidth(t);
  int64_t max = bits >= 54 ? FACTS_LIMIT : ((int64_t)1 << (bits - 1)) - 1;
  if (f.lo < -max || f.hi > max) return facts_unknown();
  if (f.align > ALIGN_ANY) f.align = ALIGN_ANY;
  return f;
}

static struct int_facts compute_facts(struct vec *v, LLVMValueRef val, int depth);

/* Each instruction's facts are computed once; one still being computed (a
 * loop's phi reached again) counts as unknown. */
static struct int_facts facts_of(struct vec *v, LLVMValueRef val, int depth) {
  if (!LLVMIsAInstruction(val)) return compute_facts(v, val, depth);
  struct int_facts *known = ptr_map_get(&v->facts, val);
  if (known) return *known;
  if (depth > 64) return facts_unknown();
  if (v->num_facts == v->cap_facts) {
    v->cap_facts = v->cap_facts ? 2 * v->cap_facts : 64;
    v->facts_owned = realloc(v->facts_owned, v->cap_facts * sizeof *v->facts_owned);
    if (!v->facts_owned) abort();
  }
  struct int_facts *slot = xcalloc(1, sizeof *slot);
  v->facts_owned[v->num_facts++] = slot;
  *slot = facts_unknown();
  ptr_map_put(&v->facts, val, slot);
  struct int_facts f = compute_facts(v, val, depth);
  *slot = f;
  return f;
}

/* Whether val is __aquila_<name>(d) for a constant d; *dim gets d. */
static int is_workitem_call(LLVMValueRef val, const char *name, unsigned *dim) {
  if (!LLVMIsACallInst(val) || LLVMGetNumArgOperands(val) != 1) return 0;
  const char *callee = callee_name(val);
  LLVMValueRef d = LLVMGetOperand(val, 0);
  if (!callee || strcmp(callee, name) || !LLVMIsAConstantInt(d)) return 0;
  *dim = (unsigned)LLVMConstIntGetZExtValue(d);
  return *dim < 3;
}

/* local_size(d) * group_id(d), either way round: a group's first global id
 * (VECTORIZE_GLOBAL_SIZE_LIMIT says why it is bounded). */
static int is_group_start(LLVMValueRef val) {
  if (!LLVMIsAInstruction(val) || LLVMGetInstructionOpcode(val) != LLVMMul) return 0;
  for (unsigned k = 0; k < 2; k++) {
    unsigned ds, dg;
    LLVMValueRef size = LLVMGetOperand(val, k), group = LLVMGetOperand(val, 1 - k);
    if ((is_workitem_call(size, "__aquila_local_size", &ds) ||
         is_workitem_call(size, "__aquila_enqueued_local_size", &ds)) &&
        is_workitem_call(group, "__aquila_group_id", &dg) && ds == dg)
      return 1;
  }
  return 0;
}

static struct int_facts compute_facts(struct vec *v, LLVMValueRef val, int depth) {
  struct int_facts f = facts_unknown();
  LLVMTypeRef t = LLVMTypeOf(val);
  if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(t) > 64) return f;
  if (!v->reqd[0] && LLVMGetIntTypeWidth(t) == 64 && is_group_start(val)) {
    f.known = 1, f.lo = 0, f.hi = VECTORIZE_GLOBAL_SIZE_LIMIT - 1, f.align = 1;
    return f;
  }
  if (LLVMIsAConstantInt(val)) {
    int64_t c = LLVMConstIntGetSExtValue(val);
    if (c < -FACTS_LIMIT || c > FACTS_LIMIT) return f;
    f.known = 1, f.lo = f.hi = c, f.align = low_bit(c);
    return f;
  }
  if (!LLVMIsAInstruction(val)) return f;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  unsigned n = (unsigned)LLVMGetNumOperands(val);
  struct int_facts a = {0}, b = {0};
  if ((op >= LLVMAdd && op <= LLVMXor) || op == LLVMTrunc || op == LLVMZExt || op == LLVMSExt) {
    a = facts_of(v, LLVMGetOperand(val, 0), depth + 1);
    if (!a.known) return f;
    if (n > 1) {
      b = facts_of(v, LLVMGetOperand(val, 1), depth + 1);
      if (!b.known) return f;
    }
  }
  switch (op) {
  case LLVMCall: {
    enum call_class cc = classify_call(val);
    const char *name = callee_name(val);
    LLVMValueRef d = LLVMGetNumArgOperands(val) == 1 ? LLVMGetOperand(val, 0) : NULL;
    if (!d || !LLVMIsAConstantInt(d) || LLVMConstIntGetZExtValue(d) > 2) return f;
    unsigned dim = (unsigned)LLVMConstIntGetZExtValue(d);
    if (cc == CALL_LOCAL_ID) {
      f.known = 1, f.lo = 0, f.hi = v->reqd[dim] ? v->reqd[dim] - 1 : 65535;
      /* With two rows a vector, lane 0 is at x 0 of an even row. */
      f.align = dim == 0 ? (v->rows > 1 ? ALIGN_ANY : v->W) : dim == 1 ? v->rows : 1;
    } else if (name && !strcmp(name, "__aquila_group_id")) {
      f.known = 1, f.lo = 0, f.hi = 0xffffffffll, f.align = 1;
    }
    return facts_fit(f, t);
  }
  case LLVMPHI:
  case LLVMSelect: {
    unsigned first = op == LLVMSelect ? 1 : 0;
    unsigned count = op == LLVMSelect ? 3 : LLVMCountIncoming(val);
    if (count > 8) return f;
    for (unsigned k = first; k < count; k++) {
      struct int_facts x = facts_of(
          v, op == LLVMSelect ? LLVMGetOperand(val, k) : LLVMGetIncomingValue(val, k), depth + 1);
      if (!x.known) return facts_unknown();
      if (!f.known) {
        f = x;
      } else {
        f.lo = min64(f.lo, x.lo), f.hi = f.hi > x.hi ? f.hi : x.hi;
        f.align = min64(f.align, x.align);
      }
    }
    /* A select on a varying condition mixes lanes: lane 0's value is then
     * one of the two, both multiples of the smaller alignment. */
    return facts_fit(f, t);
  }
  case LLVMAdd:
    f.known = 1, f.lo = a.lo + b.lo, f.hi = a.hi + b.hi, f.align = min64(a.align, b.align);
    return facts_fit(f, t);
  case LLVMOr:
    if (!LLVMGetIsDisjoint(val)) return f;
    f.known = 1, f.lo = a.lo + b.lo, f.hi = a.hi + b.hi, f.align = min64(a.align, b.align);
    return a.lo < 0 || b.lo < 0 ? facts_unknown() : facts_fit(f, t);
  case LLVMSub:
    f.known = 1, f.lo = a.lo - b.hi, f.hi = a.hi - b.lo, f.align = min64(a.align, b.align);
    return facts_fit(f, t);
  case LLVMMul:
  case LLVMShl: {
    /* By a constant only. */
    if (b.lo != b.hi) return f;
    int64_t k = b.lo;
    if (op == LLVMShl) {
      if (k < 0 || k > 30) return f;
      k = (int64_t)1 << k;
    }
    if (k < -(1 << 20) || k > (1 << 20)) return f;
    f.known = 1, f.lo = k >= 0 ? a.lo * k : a.hi * k, f.hi = k >= 0 ? a.hi * k : a.lo * k;
    int64_t kb = low_bit(k);
    f.align = a.align >= ALIGN_ANY / kb ? ALIGN_ANY : a.align * kb;
    return facts_fit(f, t);
  }
  case LLVMAnd:
    /* With a non-negative constant mask: within [0, mask]; lane 0's zero low
     * bits stay zero. */
    if (b.lo != b.hi || b.lo < 0) return f;
    f.known = 1, f.lo = 0, f.hi = a.lo >= 0 && a.hi < b.lo ? a.hi : b.lo;
    f.align = a.align > low_bit(b.lo) ? a.align : low_bit(b.lo);
    return facts_fit(f, t);
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMLShr:
  case LLVMAShr: {
    if (b.lo != b.hi || a.lo < 0) return f;
    int64_t k = b.lo;
    if (op == LLVMLShr || op == LLVMAShr) {
      if (k < 0 || k > 40) return f;
      k = (int64_t)1 << k;
    }
    if (k <= 0) return f;
    f.known = 1, f.lo = a.lo / k, f.hi = a.hi / k, f.align = 1;
    return facts_fit(f, t);
  }
  case LLVMURem:
  case LLVMSRem:
    if (b.lo != b.hi || b.lo <= 0 || a.lo < 0) return f;
    f.known = 1, f.lo = 0, f.hi = a.hi < b.lo ? a.hi : b.lo - 1, f.align = 1;
    return facts_fit(f, t);
  case LLVMTrunc:
    return facts_fit(a, t);
  case LLVMZExt:
    return a.lo < 0 ? f : facts_fit(a, t);
  case LLVMSExt:
    return facts_fit(a, t);
  default:
    return f;
  }
}

/* x / d, x % d and their shift and mask forms for an affine x and a
 * constant d: when no lane's value is negative and the W lanes never
 * straddle a multiple of d (lane 0 sits at a multiple of a power of two,
 * align, and the lanes span less than that and less than d), the quotient
 * is the same for every lane and the remainder steps like x. Returns
 * whether that holds. */
static int lanes_within_one_block(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (sx.kind != K_AFFINE || sx.stride <= 0 || d <= 0) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  int64_t span = (int64_t)(v->W - 1) * sx.stride;
  int64_t block = f.align;
  /* A divisor that is not a power of two: lane 0 must sit at a multiple of
   * it. */
  if (d & (d - 1)) return f.align % d == 0 && span < d;
  if (d < block) block = d;
  return span < block;
}

/* Whether the W lanes of the affine x (lane 0's value known by its facts,
 * the others stride apart) all lie within the range of a bits-wide
 * integer, signed or not: extending x from those bits is then exact in
 * every lane, and x stays affine without an assumption. */
static int lanes_fit(struct vec *v, LLVMValueRef x, struct shape sx, unsigned bits, int is_signed) {
  if (sx.kind != K_AFFINE || sx.assumed || sx.stride <= 0 || bits < 8 || bits > 62) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known) return 0;
  int64_t span = (int64_t)(v->W - 1) * sx.stride;
  int64_t lo = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
  int64_t hi = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  return f.lo >= lo && f.hi <= hi - span;
}

/* The same for x / d and x % d where the W lanes straddle a multiple of d
 * but each half of them does not: lane 0 sits at a multiple of d and a
 * half spans exactly d (x % 8 of 16 consecutive work-items). The quotient
 * is then uniform in each half, one more in the second; the remainder
 * steps like x in each half, the same in both (runs). */
static int halves_within_blocks(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (v->H >= v->W || sx.kind != K_AFFINE || sx.stride <= 0 || d <= 0) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  return (int64_t)v->H * sx.stride == d && f.align % d == 0;
}

static struct shape per_row(struct vec *v, LLVMValueRef in);

/* Add, sub, mul, shl and or with an operand of two runs. */
static struct shape runs_arithmetic(struct vec *v, LLVMValueRef in, struct shape a,
                                    struct shape c) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  int assumed = a.assumed | c.assumed;
  int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sc = c.kind == K_UNIFORM ? 0 : c.stride;
  int64_t ga = 0, gc = 0;
  int known = gap_of(v, a, &ga) && gap_of(v, c, &gc);
  int64_t al = min64(gap_align_of(v, a), gap_align_of(v, c));
  if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(in)))
    return runs(v, sa + sc, assumed, known, known ? ga + gc : 0, al);
  if (op == LLVMSub) return runs(v, sa - sc, assumed, known, known ? ga - gc : 0, al);
  if (op == LLVMMul || op == LLVMShl) {
    LLVMValueRef k = LLVMGetOperand(in, 1);
    struct shape x = a;
    if (op == LLVMMul && c.kind != K_UNIFORM) k = LLVMGetOperand(in, 0), x = c;
    if (shape_of_value(v, k).kind == K_UNIFORM && LLVMIsAConstantInt(k) &&
        LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      int64_t f = LLVMConstIntGetSExtValue(k), g;
      if (op == LLVMShl) {
        if (f < 0 || f > 30) return varying();
        f = (int64_t)1 << f;
      }
      if (f > ((int64_t)1 << 20) || f < -((int64_t)1 << 20)) return varying();
      int gk = gap_of(v, x, &g);
      return runs(v, x.stride * f, x.assumed, gk, gk ? g * f : 0,
                  scale_align(gap_align_of(v, x), f));
    }
  }
  return per_row(v, in);
}

/* The same for x of two runs: neither run straddles a multiple of d.
 * Lane 0's value is a multiple of its facts' alignment, lane H's lies a
 * multiple of the gap's alignment above it: a run that starts at a
 * multiple of the smaller of those (and of d) and spans less than it stays
 * in one block. */
static int runs_within_blocks(struct vec *v, LLVMValueRef x, struct shape sx, int64_t d) {
  if (sx.kind != K_RUNS || sx.stride <= 0 || d <= 0) return 0;
  struct int_facts f = facts_of(v, x, 0);
  if (!f.known || f.lo < 0) return 0;
  int64_t span = (int64_t)(v->H - 1) * sx.stride, ga = gap_align_of(v, sx);
  if (d & (d - 1)) return f.align % d == 0 && ga % d == 0 && span < d;
  return span < min64(min64(f.align, ga), d);
}

/* x / d and x % d for such an x: the quotient uniform in each run, the
 * remainder stepping like x. */
static struct shape runs_quotient(struct vec *v, struct shape sx, int64_t d, int rem) {
  int64_t ga = gap_align_of(v, sx);
  if (sx.gap_known && sx.gap % d == 0)
    return rem ? runs(v, sx.stride, sx.assumed, 1, 0, 1) : runs(v, 0, sx.assumed, 1, sx.gap / d, 1);
  /* A gap that d divides leaves the remainder alike in both runs. */
  if (rem)
    return ga % d == 0 ? runs(v, sx.stride, sx.assumed, 1, 0, 1)
                       : runs(v, sx.stride, sx.assumed, 0, 0, min64(ga, d));
  return runs(v, 0, sx.assumed, 0, 0, ga % d == 0 ? ga / d : 1);
}

/* The shape of an operation on values that are each uniform or uniform
 * per row: uniform per row, or varying. */
static struct shape per_row(struct vec *v, LLVMValueRef in) {
  int n = LLVMGetNumOperands(in), all_uniform = 1;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    if (LLVMIsABasicBlock(o)) continue;
    struct shape s = shape_of_value(v, o);
    if (!row_uniform(s)) return varying();
    all_uniform &= s.kind == K_UNIFORM;
  }
  if (all_uniform) return affine(0, 0);
  if (!is_scalar_type(LLVMTypeOf(in))) return varying();
  return runs(v, 0, 0, 0, 0, 1);
}

static struct shape transfer(struct vec *v, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  struct shape s = {K_UNIFORM, 0, 0};
  int n = LLVMGetNumOperands(in);
  switch (op) {
  case LLVMPHI: {
    int b = block_of(v, in);
    struct shape r = {K_UNDEF, 0, 0};
    unsigned count = LLVMCountIncoming(in);
    for (unsigned k = 0; k < count; k++) {
      LLVMBasicBlockRef from = LLVMGetIncomingBlock(in, k);
      int p = cfg_number(&v->g, from);
      if (p < 0 || v->g.rpo_number[p] < 0) continue;
      /* Leaving a loop that lanes leave at different times. */
      if (divergent_loop_left(v, p, b) >= 0) return varying();
      r = meet(v, r, shape_of_value(v, LLVMGetIncomingValue(in, k)));
    }
    if (v->join_of[b] >= 0 && !phi_all_same(in)) return varying();
    /* An affine value that holds only if nothing wraps stays exact only in
     * straight-line code; a phi of such values is kept as a vector. */
    if ((r.kind == K_AFFINE || r.kind == K_RUNS) && r.assumed) return varying();
    return r;
  }
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    if (a.kind == K_VARYING || c.kind == K_VARYING) return varying();
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    if (a.kind == K_RUNS || c.kind == K_RUNS) return runs_arithmetic(v, in, a, c);
    int assumed = a.assumed | c.assumed;
    int64_t sa = a.kind == K_AFFINE ? a.stride : 0, sc = c.kind == K_AFFINE ? c.stride : 0;
    if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(in))) return affine(sa + sc, assumed);
    if (op == LLVMSub) return affine(sa - sc, assumed);
    if (op == LLVMMul) {
      LLVMValueRef k = a.kind == K_UNIFORM ? LLVMGetOperand(in, 0) : LLVMGetOperand(in, 1);
      if (a.kind == K_AFFINE && c.kind == K_AFFINE) return varying();
      if (!LLVMIsAConstantInt(k)) return varying();
      return affine((a.kind == K_AFFINE ? sa : sc) * LLVMConstIntGetSExtValue(k), assumed);
    }
    if (op == LLVMShl) {
      LLVMValueRef k = LLVMGetOperand(in, 1);
      if (c.kind != K_UNIFORM || !LLVMIsAConstantInt(k)) return varying();
      uint64_t sh = LLVMConstIntGetZExtValue(k);
      if (sh > 30) return varying();
      return affine(sa * ((int64_t)1 << sh), assumed);
    }
    return varying();
  }
  case LLVMAnd: {
    /* x & (2^k - 1) with k >= 32: InstCombine's form of zext(trunc(x)), a
     * uint index (lds[me + 128] with me the local id); affine as a zext of
     * an affine value is, assuming no lane wraps past 2^32. A narrower mask
     * keeps x's low bits on purpose (a circular buffer): affine only when
     * the lanes are known not to wrap around it (x % 2^k, below). */
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    LLVMValueRef k = LLVMGetOperand(in, 1);
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      uint64_t m = LLVMConstIntGetZExtValue(k);
      if (m >= 0xffffffffull && (m & (m + 1)) == 0) return affine(a.stride, 1);
    }
    if (a.kind == K_RUNS && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      uint64_t m = LLVMConstIntGetZExtValue(k);
      if (m >= 0xffffffffull && (m & (m + 1)) == 0)
        return runs(v, a.stride, 1, a.gap_known, a.gap, a.gap_align);
    }
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      uint64_t m = LLVMConstIntGetZExtValue(k);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 &&
          lanes_within_one_block(v, LLVMGetOperand(in, 0), a, (int64_t)m + 1))
        return affine(a.stride, a.assumed);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 &&
          halves_within_blocks(v, LLVMGetOperand(in, 0), a, (int64_t)m + 1))
        return runs(v, a.stride, a.assumed, 1, 0, 1);
    }
    if (a.kind == K_RUNS && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64) {
      uint64_t m = LLVMConstIntGetZExtValue(k);
      if (m < 0xffffffffull && (m & (m + 1)) == 0 &&
          runs_within_blocks(v, LLVMGetOperand(in, 0), a, (int64_t)m + 1))
        return runs_quotient(v, a, (int64_t)m + 1, 1);
    }
    return per_row(v, in);
  }
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 1));
    LLVMValueRef k = LLVMGetOperand(in, 1);
    if (a.kind == K_UNIFORM && c.kind == K_UNIFORM) return s;
    int is_div = op == LLVMUDiv || op == LLVMSDiv;
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        lanes_within_one_block(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return is_div ? s : affine(a.stride, a.assumed);
    if (a.kind == K_AFFINE && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        halves_within_blocks(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return is_div ? runs(v, 0, a.assumed, 1, 1, 1) : runs(v, a.stride, a.assumed, 1, 0, 1);
    if (a.kind == K_RUNS && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        runs_within_blocks(v, LLVMGetOperand(in, 0), a, LLVMConstIntGetSExtValue(k)))
      return runs_quotient(v, a, LLVMConstIntGetSExtValue(k), !is_div);
    /* Per row, by a constant (nothing to trap on in a row whose lanes are
     * all off). */
    if (c.kind == K_UNIFORM && LLVMIsAConstantInt(k) && LLVMGetIntTypeWidth(LLVMTypeOf(k)) <= 64 &&
        LLVMConstIntGetSExtValue(k) != 0 && LLVMConstIntGetSExtValue(k) != -1)
      return per_row(v, in);
    return varying();
  }
  case LLVMAShr:
  case LLVMLShr: {
    /* (x << c1) >> c2 with c1 >= c2: InstCombine's form of a sign or zero
     * extension of x's low bits, scaled (sext(trunc(gid)) * 4). */
    LLVMValueRef shl = LLVMGetOperand(in, 0), c2 = LLVMGetOperand(in, 1);
    if (LLVMIsAInstruction(shl) && LLVMGetInstructionOpcode(shl) == LLVMShl &&
        LLVMIsAConstantInt(c2) && LLVMIsAConstantInt(LLVMGetOperand(shl, 1))) {
      uint64_t a1 = LLVMConstIntGetZExtValue(LLVMGetOperand(shl, 1)),
               a2 = LLVMConstIntGetZExtValue(c2);
      struct shape x = shape_of_value(v, LLVMGetOperand(shl, 0));
      unsigned width = LLVMGetIntTypeWidth(LLVMTypeOf(in));
      if (a1 >= a2 && a1 - a2 < 16 && x.kind == K_AFFINE)
        return affine(x.stride * ((int64_t)1 << (a1 - a2)),
                      a1 >= width || !lanes_fit(v, LLVMGetOperand(shl, 0), x, width - (unsigned)a1,
                                                op == LLVMAShr));
      if (a1 >= a2 && a1 - a2 < 16 && x.kind == K_RUNS) {
        int64_t f = (int64_t)1 << (a1 - a2);
        return runs(v, x.stride * f, 1, x.gap_known, x.gap * f, scale_align(x.gap_align, f));
      }
      if (x.kind == K_UNIFORM) return s;
    }
    /* x >> k of an affine x whose lanes share their bits above k. */
    struct shape x = shape_of_value(v, shl);
    if (x.kind == K_AFFINE && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        lanes_within_one_block(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return s;
    if (x.kind == K_AFFINE && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        halves_within_blocks(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return runs(v, 0, x.assumed, 1, 1, 1);
    if (x.kind == K_RUNS && LLVMIsAConstantInt(c2) && shape_of_value(v, c2).kind == K_UNIFORM &&
        LLVMConstIntGetZExtValue(c2) < 40 &&
        runs_within_blocks(v, shl, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2)))
      return runs_quotient(v, x, (int64_t)1 << LLVMConstIntGetZExtValue(c2), 0);
    return per_row(v, in);
  }
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMAddrSpaceCast: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    if (a.kind == K_RUNS)
      return runs(v, a.stride, a.assumed || op == LLVMZExt || op == LLVMSExt, a.gap_known, a.gap,
                  a.gap_align);
    if (a.kind != K_AFFINE) return a.kind == K_UNDEF ? varying() : a;
    if ((op == LLVMZExt || op == LLVMSExt) &&
        lanes_fit(v, LLVMGetOperand(in, 0), a,
                  LLVMGetIntTypeWidth(LLVMTypeOf(LLVMGetOperand(in, 0))), op == LLVMSExt))
      return affine(a.stride, 0);
    return affine(a.stride, a.assumed || op == LLVMZExt || op == LLVMSExt);
  }
  case LLVMBitCast: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    if ((a.kind == K_AFFINE || a.kind == K_RUNS) &&
        LLVMGetTypeKind(LLVMTypeOf(in)) != LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))))
      return varying();
    return a;
  }
  case LLVMFreeze:
    return shape_of_value(v, LLVMGetOperand(in, 0));
  case LLVMGetElementPtr:
    return gep_shape(v, in);
  case LLVMSelect: {
    struct shape c = shape_of_value(v, LLVMGetOperand(in, 0));
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 1));
    struct shape d = shape_of_value(v, LLVMGetOperand(in, 2));
    if (c.kind == K_UNIFORM && (a.kind == K_RUNS || d.kind == K_RUNS)) {
      /* Either operand's runs, whole: lane 0's and lane H's values are
       * selected alike. */
      int64_t ga, gd;
      int ka = gap_of(v, a, &ga), kd = gap_of(v, d, &gd);
      if (a.kind == K_UNDEF || d.kind == K_UNDEF) return varying();
      if (a.kind == K_VARYING || d.kind == K_VARYING) return varying();
      int64_t sa = a.kind == K_UNIFORM ? 0 : a.stride, sd = d.kind == K_UNIFORM ? 0 : d.stride;
      if (sa != sd) return varying();
      return runs(v, sa, a.assumed | d.assumed, ka && kd && ga == gd, ga,
                  min64(gap_align_of(v, a), gap_align_of(v, d)));
    }
    if (c.kind != K_UNIFORM) return row_uniform(c) ? per_row(v, in) : varying();
    return meet(v, a, d);
  }
  case LLVMAlloca: {
    intptr_t e = (intptr_t)ptr_map_get(&v->soa_size, in);
    return affine(e ? e : lane_copy_size(v, in), 0);
  }
  case LLVMLoad: {
    struct shape a = shape_of_value(v, LLVMGetOperand(in, 0));
    return a.kind == K_UNIFORM ? s : varying();
  }
  case LLVMStore:
  case LLVMFence:
  case LLVMBr:
  case LLVMSwitch:
  case LLVMRet:
  case LLVMUnreachable:
    return s;
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
    return varying();
  case LLVMCall: {
    enum call_class cc = classify_call(in);
    if (cc == CALL_LOCAL_ID) {
      LLVMValueRef d = LLVMGetOperand(in, 0);
      if (!LLVMIsAConstantInt(d)) return varying();
      uint64_t dim = LLVMConstIntGetZExtValue(d);
      if (v->rows > 1 && dim < 2) return dim == 0 ? runs(v, 1, 0, 1, 0, 1) : runs(v, 0, 0, 1, 1, 1);
      return dim == 0 ? affine(1, 0) : s;
    }
    if (cc == CALL_WORKITEM || cc == CALL_BARRIER || cc == CALL_DROP) return s;
    if (cc == CALL_PER_LANE || cc == CALL_UNKNOWN) return varying();
    unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
    for (unsigned k = 0; k < nargs; k++)
      if (shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM) return varying();
    return s;
  }
  default:
    /* Arithmetic, comparisons, casts, aggregates: uniform if every operand
     * is; uniform per row if every operand is that (the operations that
     * have no side effects and cannot trap). */
    for (int k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
      if (LLVMIsABasicBlock(o)) continue;
      if (shape_of_value(v, o).kind != K_UNIFORM) {
        switch (op) {
        case LLVMFAdd:
        case LLVMFSub:
        case LLVMFMul:
        case LLVMFDiv:
        case LLVMFRem:
        case LLVMFNeg:
        case LLVMXor:
        case LLVMICmp:
        case LLVMFCmp:
        case LLVMFPTrunc:
        case LLVMFPExt:
        case LLVMFPToUI:
        case LLVMFPToSI:
        case LLVMUIToFP:
        case LLVMSIToFP:
          return per_row(v, in);
        default:
          return varying();
        }
      }
    }
    return s;
  }
}

/* Marks the consequences of a varying terminator in block b. */
/* Whether a barrier lies in what the branch at the end of block b decides
 * (before the blocks meet again, or anywhere after it when they never
 * do). OpenCL requires a barrier to be reached by all work-items of a group
 * or by none, so such a branch goes the same way for every work-item even
 * when its condition looks varying (CLBlast's direct GEMM tests the global
 * id against the tiled size, which every work-item of a group passes alike). */
static int branch_guards_barrier(struct vec *v, int b) {
  struct cfg *g = &v->g;
  int stop = g->ipdom[b];
  unsigned char *seen = xcalloc(g->n, 1);
  int *work = xcalloc(g->n, sizeof *work);
  unsigned w = 0;
  int found = 0;
  for (unsigned k = g->succ_start[b]; k < g->succ_start[b + 1]; k++) {
    int s = (int)g->succ[k];
    if (s != stop && !seen[s]) {
      seen[s] = 1;
      work[w++] = s;
    }
  }
  while (w && !found) {
    int x = work[--w];
    for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[x]); in && !found;
         in = LLVMGetNextInstruction(in))
      if (LLVMIsACallInst(in) && classify_call(in) == CALL_BARRIER) found = 1;
    for (unsigned k = g->succ_start[x]; k < g->succ_start[x + 1]; k++) {
      int s = (int)g->succ[k];
      if (s != stop && !seen[s]) {
        seen[s] = 1;
        work[w++] = s;
      }
    }
  }
  free(seen);
  free(work);
  return found;
}

static void note_varying_branch(struct vec *v, int b) {
  v->varying_branch[b] = 1;
  /* Every loop that a successor leaves becomes divergent. */
  for (unsigned k = v->g.succ_start[b]; k < v->g.succ_start[b + 1]; k++) {
    int s = (int)v->g.succ[k];
    for (int l = v->g.loop[b]; l >= 0; l = v->g.loops[l].parent)
      if (!cfg_in_loop(&v->g, l, s)) v->loop_divergent[l] = 1;
  }
  int join = v->g.ipdom[b];
  if (join >= 0 && v->join_of[join] < 0) v->join_of[join] = b;
}

static int terminator_condition_varying(struct vec *v, LLVMValueRef term) {
  LLVMValueRef cond = NULL;
  if (LLVMIsABranchInst(term) && LLVMIsConditional(term))
    cond = LLVMGetCondition(term);
  else if (LLVMIsASwitchInst(term))
    cond = LLVMGetOperand(term, 0);
  if (!cond) return 0;
  return shape_of_value(v, cond).kind != K_UNIFORM;
}

static void analyze(struct vec *v) {
  for (int changed = 1; changed;) {
    changed = 0;
    for (unsigned r = 0; r < v->g.num_rpo; r++) {
      int b = v->g.rpo[r];
      LLVMBasicBlockRef bb = v->g.blocks[b];
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
        struct shape s = transfer(v, in);
        if ((s.kind == K_AFFINE || s.kind == K_RUNS) &&
            LLVMGetTypeKind(LLVMTypeOf(in)) == LLVMVectorTypeKind)
          s = varying();
        struct vinfo *i = info_of(v, in);
        /* Shapes only rise: undef, uniform, affine, runs, varying. Affine
         * and runs values join only with the same stride (affine ones are
         * runs whose gap is H strides). */
        if (i->kind == K_VARYING) continue;
        if ((i->kind == K_AFFINE || i->kind == K_RUNS) &&
            (s.kind == K_AFFINE || s.kind == K_RUNS)) {
          int64_t gi = i->kind == K_AFFINE ? (int64_t)v->H * i->stride : i->gap;
          int ki = i->kind == K_AFFINE || i->gap_known, ks;
          int64_t gs;
          ks = gap_of(v, s, &gs);
          if (s.stride != i->stride) {
            s = varying();
          } else if (s.kind != i->kind || s.gap_known != i->gap_known || s.gap != i->gap) {
            struct shape was = {i->kind, i->assumed, i->gap_known, i->stride, i->gap, i->gap_align};
            s = runs(v, s.stride, s.assumed | i->assumed, ki && ks && gi == gs, gi,
                     min64(gap_align_of(v, was), gap_align_of(v, s)));
            if (s.kind == K_RUNS && i->kind == K_RUNS && !s.gap_known) s.gap = 0;
          } else {
            s.assumed |= i->assumed;
          }
        } else if (s.kind < i->kind) {
          s.kind = i->kind;
          s.stride = i->stride;
          s.assumed = i->assumed;
          s.gap_known = i->gap_known;
          s.gap = i->gap;
          s.gap_align = i->gap_align;
        }
        if (s.kind != i->kind || s.stride != i->stride || s.assumed != i->assumed ||
            s.gap_known != i->gap_known || s.gap != i->gap || s.gap_align != i->gap_align) {
          i->kind = s.kind;
          i->stride = s.stride;
          i->assumed = s.assumed;
          i->gap_known = s.gap_known;
          i->gap = s.gap;
          i->gap_align = s.gap_align;
          changed = 1;
        }
      }
      LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
      if (!v->varying_branch[b] && !v->barrier_branch[b] && terminator_condition_varying(v, term)) {
        if (branch_guards_barrier(v, b))
          v->barrier_branch[b] = 1;
        else
          note_varying_branch(v, b);
        changed = 1;
      }
    }
  }
}

/* ---- OpenCL vectors left whole ------------------------------------------------------------- */

/* A varying value of an OpenCL vector type <N x T> is never built as one
 * value (<W x <N x T>> does not exist): it is a packet of N vectors <W x T>,
 * one per element, and each operation on it is done element by element.
 * Which instructions can be: */
static int is_packet(struct vec *v, LLVMValueRef in) {
  LLVMTypeRef t = LLVMTypeOf(in);
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind || !is_scalar_type(LLVMGetElementType(t)) ||
      LLVMGetVectorSize(t) > MAX_MEMBERS)
    return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  switch (op) {
  case LLVMLoad: {
    if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) return 0;
    LLVMTypeRef e = LLVMGetElementType(t);
    return (int64_t)LLVMStoreSizeOfType(v->td, e) == alloc_size(v, e);
  }
  case LLVMInsertElement:
  case LLVMShuffleVector:
  case LLVMPHI:
  case LLVMSelect:
  case LLVMFreeze:
  case LLVMICmp:
  case LLVMFCmp:
  case LLVMFNeg:
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
  case LLVMFAdd:
  case LLVMFSub:
  case LLVMFMul:
  case LLVMFDiv:
  case LLVMFRem:
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMFPTrunc:
  case LLVMFPExt:
    return 1;
  case LLVMBitCast: {
    /* Element by element, or joining or splitting elements 2, 4 or 8 at a
     * time (<4 x i32> to <2 x double>, double to <2 x float>: how clang
     * passes OpenCL vectors to functions). */
    LLVMTypeRef from = LLVMTypeOf(LLVMGetOperand(in, 0));
    LLVMTypeRef fe = LLVMGetTypeKind(from) == LLVMVectorTypeKind ? LLVMGetElementType(from) : from;
    if (!is_scalar_type(fe) || LLVMGetTypeKind(fe) == LLVMPointerTypeKind ||
        LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMPointerTypeKind)
      return 0;
    unsigned a = LLVMGetTypeKind(from) == LLVMVectorTypeKind ? LLVMGetVectorSize(from) : 1;
    unsigned b = LLVMGetVectorSize(t);
    return a == b || a == 2 * b || a == 4 * b || b == 2 * a || b == 4 * a || b == 8 * a;
  }
  case LLVMCall: {
    enum call_class cc = classify_call(in);
    return cc == CALL_VECTOR || cc == CALL_PER_LANE || cc == CALL_PURE;
  }
  default:
    return 0;
  }
}

/* ---- what the transformation supports --------------------------------------------------- */

/* Whether block c is in the region that block entry (the region's first
 * block) dominates. */
static int in_region(struct vec *v, int entry, int c) {
  return cfg_dominates(&v->g, entry, c);
}

static void check_shapes(struct vec *v) {
  struct cfg *g = &v->g;
  /* Divergent loops: one latch, which is the only way out, to an exit of
   * its own. */
  for (unsigned l = 0; l < g->num_loops && v->status == VECTORIZE_OK; l++) {
    if (!v->loop_divergent[l]) continue;
    struct cfg_loop *lp = &g->loops[l];
    if (lp->latch < 0 || lp->preheader < 0 || lp->num_exits != 1) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a loop with a varying exit that is not its latch's only",
           NULL);
      break;
    }
    int exit = -1;
    for (unsigned k = g->succ_start[lp->latch]; k < g->succ_start[lp->latch + 1]; k++)
      if (!lp->member[g->succ[k]]) exit = (int)g->succ[k];
    if (exit < 0 || g->pred_start[exit + 1] - g->pred_start[exit] != 1 ||
        g->succ_start[lp->latch + 1] - g->succ_start[lp->latch] != 2) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a loop with a varying exit that is not its latch's only",
           NULL);
      break;
    }
    v->exit_block[l] = exit;
  }
  /* Varying branches: if-then shapes. */
  for (unsigned r = 0; r < g->num_rpo && v->status == VECTORIZE_OK; r++) {
    int d = g->rpo[r];
    if (!v->varying_branch[d]) continue;
    LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[d]);
    if (!LLVMIsABranchInst(term)) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a switch on a varying value", term);
      break;
    }
    int l = g->loop[d];
    if (l >= 0 && v->loop_divergent[l] && g->loops[l].latch == d) continue;
    int s0 = cfg_number(g, LLVMGetSuccessor(term, 0)),
        s1 = cfg_number(g, LLVMGetSuccessor(term, 1));
    int join = g->ipdom[d];
    int entry = join == s0 ? s1 : join == s1 ? s0 : -1;
    if (join < 0 || entry < 0 || entry == join ||
        g->pred_start[entry + 1] - g->pred_start[entry] != 1 || v->join_of[join] != d ||
        (l >= 0 && !cfg_in_loop(g, l, join))) {
      fail(v, VECTORIZE_NEEDS_STRUCTURE, "a varying branch that is not an if-then", term);
      break;
    }
    for (unsigned k = g->pred_start[join]; k < g->pred_start[join + 1]; k++) {
      int p = (int)g->pred[k];
      if (p != d && g->rpo_number[p] >= 0 && !in_region(v, entry, p)) {
        fail(v, VECTORIZE_NEEDS_STRUCTURE, "a varying branch whose join is reached from elsewhere",
             term);
        break;
      }
    }
    v->region_entry[join] = entry;
  }
  if (v->status != VECTORIZE_OK) return;
  /* Which blocks may run with lanes off. */
  for (unsigned r = 0; r < g->num_rpo; r++) {
    int b = g->rpo[r];
    for (int l = g->loop[b]; l >= 0; l = g->loops[l].parent)
      if (v->loop_divergent[l]) v->partial[b] = 1;
    for (unsigned j = 0; j < g->n && !v->partial[b]; j++)
      if (v->region_entry[j] >= 0 && in_region(v, v->region_entry[j], b)) v->partial[b] = 1;
  }
  /* Instructions. */
  for (unsigned r = 0; r < g->num_rpo && v->status == VECTORIZE_OK; r++) {
    int b = g->rpo[r];
    for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[b]); in && v->status == VECTORIZE_OK;
         in = LLVMGetNextInstruction(in)) {
      struct vinfo *i = info_of(v, in);
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      LLVMTypeRef t = LLVMTypeOf(in);
      int packet = i->kind != K_UNIFORM && is_packet(v, in);
      if (packet) i->packet = 1;
      if (i->kind != K_UNIFORM && LLVMGetTypeKind(t) != LLVMVoidTypeKind && !is_scalar_type(t) &&
          !packet)
        fail(v, VECTORIZE_UNSUPPORTED, "a varying value of a vector or aggregate type", in);
      if (op == LLVMCall) {
        enum call_class cc = classify_call(in);
        if (cc == CALL_UNKNOWN) fail(v, VECTORIZE_UNSUPPORTED, "a call that was not inlined", in);
        if (cc == CALL_BARRIER && v->partial[b])
          fail(v, VECTORIZE_UNSUPPORTED, "a barrier in divergent control flow", in);
        if (cc == CALL_DROP) i->drop = 1;
        if (cc == CALL_VECTOR && i->kind != K_UNIFORM) {
          const struct vector_intrinsic *vi = find_vector_intrinsic(callee_name(in));
          for (unsigned k = 0; k < 32; k++)
            if ((vi->scalar_args >> k & 1) && k < (unsigned)LLVMGetNumArgOperands(in) &&
                shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM)
              fail(v, VECTORIZE_UNSUPPORTED, "an intrinsic with a varying scalar operand", in);
        }
        unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
        if (cc == CALL_PER_LANE || cc == CALL_PURE || cc == CALL_LIBM)
          for (unsigned k = 0; k < nargs; k++) {
            LLVMTypeRef at = LLVMTypeOf(LLVMGetOperand(in, k));
            if (shape_of_value(v, LLVMGetOperand(in, k)).kind != K_UNIFORM && !is_scalar_type(at) &&
                !(cc != CALL_LIBM && is_scalar_vector_type(at)))
              fail(v, VECTORIZE_UNSUPPORTED, "a call with a varying argument of vector type", in);
          }
        if ((cc == CALL_PURE || cc == CALL_PER_LANE) && i->kind != K_UNIFORM &&
            LLVMGetTypeKind(t) != LLVMVoidTypeKind && !is_scalar_type(t) &&
            !is_scalar_vector_type(t))
          fail(v, VECTORIZE_UNSUPPORTED, "a call with a result of vector or aggregate type", in);
      }
      if ((op == LLVMExtractValue || op == LLVMInsertValue || op == LLVMInsertElement ||
           op == LLVMShuffleVector) &&
          i->kind != K_UNIFORM && !packet)
        fail(v, VECTORIZE_UNSUPPORTED, "a varying vector or aggregate operation", in);
      if (op == LLVMExtractElement && i->kind != K_UNIFORM &&
          LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(in, 0))) > MAX_MEMBERS)
        fail(v, VECTORIZE_UNSUPPORTED, "an element of a long varying vector", in);
      if (op == LLVMStore &&
          LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind &&
          (shape_of_value(v, LLVMGetOperand(in, 0)).kind != K_UNIFORM ||
           shape_of_value(v, LLVMGetOperand(in, 1)).kind != K_UNIFORM)) {
        LLVMValueRef val = LLVMGetOperand(in, 0);
        LLVMTypeRef e = LLVMGetElementType(LLVMTypeOf(val));
        if (!is_scalar_type(e) || LLVMGetVectorSize(LLVMTypeOf(val)) > MAX_MEMBERS ||
            (int64_t)LLVMStoreSizeOfType(v->td, e) != alloc_size(v, e) || LLVMGetVolatile(in) ||
            LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic)
          fail(v, VECTORIZE_UNSUPPORTED, "a store of a varying vector", in);
      }
      if (op == LLVMAlloca && b != 0)
        fail(v, VECTORIZE_UNSUPPORTED, "an alloca outside the entry block", in);
      /* A work queue: items popped with an atomic inside a loop that
       * work-items leave at different times (OpenCV's Canny hysteresis).
       * Such kernels tend to test and mark shared cells without atomics, a
       * race that work-items in order rarely lose and lanes in lockstep
       * often do (both see a cell unmarked, both push it): they keep the
       * order of the scalar path. */
      if ((op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) && LLVMGetFirstUse(in)) {
        for (int l = g->loop[b]; l >= 0; l = g->loops[l].parent)
          if (v->loop_divergent[l]) {
            fail(v, VECTORIZE_UNSUPPORTED,
                 "an atomic whose result is used, in a loop that work-items leave at different "
                 "times (a work queue: kept in work-item order)",
                 in);
            break;
          }
      }
      if (op == LLVMVAArg || op == LLVMLandingPad || op == LLVMResume)
        fail(v, VECTORIZE_UNSUPPORTED, "an unsupported instruction", in);
      if ((op == LLVMLoad || op == LLVMStore) &&
          LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic &&
          shape_of_value(v, LLVMGetOperand(in, op == LLVMLoad ? 0 : 1)).kind != K_UNIFORM)
        fail(v, VECTORIZE_UNSUPPORTED, "an atomic load or store at a varying address", in);
      /* Values of a divergent loop used outside it: only through the phis of
       * its exit block (LCSSA). */
      if (op != LLVMPHI) {
        int n = LLVMGetNumOperands(in);
        for (int k = 0; k < n; k++) {
          LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
          if (o && LLVMIsAInstruction(o) && divergent_loop_left(v, block_of(v, o), b) >= 0)
            fail(v, VECTORIZE_UNSUPPORTED, "a value leaving a divergent loop outside LCSSA form",
                 in);
        }
      } else {
        unsigned count = LLVMCountIncoming(in);
        for (unsigned k = 0; k < count; k++) {
          LLVMValueRef o = LLVMGetIncomingValue(in, k);
          int p = cfg_number(g, LLVMGetIncomingBlock(in, k));
          int l = p >= 0 ? divergent_loop_left(v, p, b) : -1;
          if (l >= 0 && (v->exit_block[l] != b || p != g->loops[l].latch))
            fail(v, VECTORIZE_NEEDS_STRUCTURE, "a phi after a divergent loop", in);
          if (o && LLVMIsAInstruction(o) && p >= 0 &&
              divergent_loop_left(v, block_of(v, o), p) >= 0)
            fail(v, VECTORIZE_UNSUPPORTED, "a value leaving a divergent loop outside LCSSA form",
                 in);
        }
      }
    }
  }
}

/* ---- building vectors -------------------------------------------------------------------- */

static LLVMValueRef const_splat(struct vec *v, LLVMValueRef c) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = c;
  return LLVMConstVector(elems, v->W);
}

static LLVMValueRef splat(struct vec *v, LLVMBuilderRef b, LLVMValueRef s) {
  if (LLVMIsAConstant(s) && !LLVMIsAGlobalValue(s)) {
    if (LLVMIsPoison(s) || LLVMIsUndef(s)) return LLVMGetPoison(vector_of(v, LLVMTypeOf(s)));
    return const_splat(v, s);
  }
  LLVMTypeRef vt = vector_of(v, LLVMTypeOf(s));
  LLVMValueRef one =
      LLVMBuildInsertElement(b, LLVMGetPoison(vt), s, LLVMConstInt(v->i32, 0, 0), "");
  return LLVMBuildShuffleVector(b, one, LLVMGetPoison(vt), LLVMConstNull(vector_of(v, v->i32)),
                                "splat");
}

/* <0, s, 2s, ...> of integer type t. */
static LLVMValueRef step_vector(struct vec *v, LLVMTypeRef t, int64_t stride) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = LLVMConstInt(t, (unsigned long long)(stride * (int64_t)i), 1);
  return LLVMConstVector(elems, v->W);
}

/* Lane l's step within its run: (l % H) * stride. */
static LLVMValueRef run_step_vector(struct vec *v, LLVMTypeRef t, int64_t stride) {
  LLVMValueRef elems[64];
  for (unsigned i = 0; i < v->W; i++)
    elems[i] = LLVMConstInt(t, (unsigned long long)(stride * (int64_t)(i % v->H)), 1);
  return LLVMConstVector(elems, v->W);
}

/* The vector whose first H lanes are lo's and the others hi's (both
 * <W x T>). */
static LLVMValueRef join_halves(struct vec *v, LLVMBuilderRef b, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, i < v->H ? i : v->W + i, 0);
  return LLVMBuildShuffleVector(b, lo, hi, LLVMConstVector(idx, v->W), "halves");
}

static LLVMValueRef all_ones_mask(struct vec *v) {
  return const_splat(v, LLVMConstInt(v->i1, 1, 0));
}

/* Positions mb right after the definition of s (after the phis when s is a
 * phi, at the start of the entry block when s is no instruction). */
static void position_after(struct vec *v, LLVMValueRef s) {
  LLVMValueRef next;
  LLVMBasicBlockRef bb;
  if (LLVMIsAInstruction(s)) {
    bb = LLVMGetInstructionParent(s);
    next = LLVMGetNextInstruction(s);
  } else {
    bb = LLVMGetEntryBasicBlock(v->vfn);
    next = LLVMGetFirstInstruction(bb);
  }
  while (next && LLVMIsAPHINode(next))
    next = LLVMGetNextInstruction(next);
  if (next)
    LLVMPositionBuilderBefore(v->mb, next);
  else
    LLVMPositionBuilderAtEnd(v->mb, bb);
}

static LLVMValueRef scalar_of(struct vec *v, LLVMValueRef val);
static LLVMValueRef runs_start(struct vec *v, LLVMValueRef in, int hi);
static LLVMValueRef hi_of(struct vec *v, LLVMValueRef val);
static LLVMValueRef vector_of_value(struct vec *v, LLVMValueRef val);
static LLVMValueRef widen_pure(struct vec *v, LLVMBuilderRef b, LLVMValueRef in);
static LLVMValueRef private_array_gep(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec);
static LLVMValueRef packet_bitcast(struct vec *v, LLVMValueRef x, LLVMTypeRef et, unsigned n,
                                   unsigned k);

/* The value as the vectorized function sees it when it is the same for
 * every lane (uniform), or lane 0's value (affine). */
static LLVMValueRef scalar_of(struct vec *v, LLVMValueRef val) {
  if (LLVMIsAArgument(val)) {
    for (unsigned i = 0; i < LLVMCountParams(v->fn); i++)
      if (LLVMGetParam(v->fn, i) == val) return LLVMGetParam(v->vfn, i);
    return val;
  }
  if (!LLVMIsAInstruction(val)) return val;
  struct vinfo *i = ptr_map_get(&v->info, val);
  if (!i || !i->scalar) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no scalar for", val);
    return LLVMGetPoison(LLVMTypeOf(val));
  }
  return i->scalar;
}

/* The <W x T> form of any value, built once, where its scalar is defined. */
static LLVMValueRef vector_of_value(struct vec *v, LLVMValueRef val) {
  if (!LLVMIsAInstruction(val) && !LLVMIsAArgument(val)) {
    if (LLVMIsPoison(val) || LLVMIsUndef(val)) return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
    if (LLVMIsAConstant(val) && !LLVMIsAGlobalValue(val)) return const_splat(v, val);
  }
  struct vinfo *i = NULL;
  if (LLVMIsAInstruction(val)) {
    i = ptr_map_get(&v->info, val);
    if (!i) {
      fail(v, VECTORIZE_UNSUPPORTED, "internal: no shape for", val);
      return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
    }
    if (i->vector) return i->vector;
  } else {
    i = info_of(v, val); /* arguments and globals: cache their splats too */
    if (i->vector) return i->vector;
    if (LLVMIsAArgument(val) && val == LLVMGetParam(v->fn, 2)) {
      i->kind = v->rows > 1 ? K_RUNS : K_AFFINE;
      i->stride = 1;
      i->gap_known = 1;
    } else {
      i->kind = K_UNIFORM;
    }
    i->scalar = scalar_of(v, val);
    if (i->kind == K_RUNS) i->scalar_hi = i->scalar;
  }
  LLVMValueRef s = i->scalar;
  if (!s) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no vector for", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  if ((i->kind == K_AFFINE || i->kind == K_RUNS) && i->assumed) {
    /* The operands' vectors first: building them moves mb. */
    int n = LLVMGetNumOperands(val);
    for (int k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(val, (unsigned)k);
      if (o && !LLVMIsABasicBlock(o) && (LLVMIsAInstruction(o) || LLVMIsAArgument(o)))
        vector_of_value(v, o);
    }
  }
  if (i->kind == K_RUNS && !i->scalar_hi) {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: no second run for", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  /* Lane H's value is built after lane 0's. */
  position_after(v, i->kind == K_RUNS ? i->scalar_hi : s);
  if (i->kind == K_UNIFORM) {
    i->vector = splat(v, v->mb, s);
  } else if (i->kind == K_RUNS && !i->assumed) {
    LLVMTypeRef t = LLVMTypeOf(s);
    LLVMValueRef base = join_halves(v, v->mb, splat(v, v->mb, s), splat(v, v->mb, i->scalar_hi));
    if (i->stride == 0)
      i->vector = base;
    else if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
      i->vector = LLVMBuildGEP2(
          v->mb, v->i8, base, (LLVMValueRef[]){run_step_vector(v, v->i64, i->stride)}, 1, "lanes");
    else
      i->vector = LLVMBuildAdd(v->mb, base, run_step_vector(v, t, i->stride), "lanes");
  } else if (i->kind == K_RUNS) {
    i->vector = widen_pure(v, v->mb, val);
  } else if (i->kind == K_AFFINE && !i->assumed) {
    LLVMTypeRef t = LLVMTypeOf(s);
    LLVMValueRef base = splat(v, v->mb, s);
    if (LLVMGetTypeKind(t) == LLVMPointerTypeKind)
      i->vector = LLVMBuildGEP2(v->mb, v->i8, base,
                                (LLVMValueRef[]){step_vector(v, v->i64, i->stride)}, 1, "lanes");
    else
      i->vector = LLVMBuildAdd(v->mb, base, step_vector(v, t, i->stride), "lanes");
  } else if (i->kind == K_AFFINE) {
    /* Exactly, lane by lane: the operation on its operands' vectors. */
    i->vector = widen_pure(v, v->mb, val);
  } else {
    fail(v, VECTORIZE_UNSUPPORTED, "internal: a varying value used before it was built", val);
    return LLVMGetPoison(vector_of(v, LLVMTypeOf(val)));
  }
  return i->vector;
}

static int is_uniform(struct vec *v, LLVMValueRef val) {
  return shape_of_value(v, val).kind == K_UNIFORM;
}

/* Fast-math flags that never make a value poison, and the precision an
 * operation may have (!fpmath: OpenCL's ulp limits for division and sqrt,
 * absent under -cl-fp32-correctly-rounded-divide-sqrt). */
static void copy_safe_fmf(LLVMValueRef from, LLVMValueRef to) {
  if (!LLVMIsAInstruction(to) || !LLVMCanValueUseFastMathFlags(from) ||
      !LLVMCanValueUseFastMathFlags(to))
    return;
  unsigned fpmath = LLVMGetMDKindIDInContext(LLVMGetTypeContext(LLVMTypeOf(to)), "fpmath", 6);
  LLVMValueRef precision = LLVMGetMetadata(from, fpmath);
  if (precision) LLVMSetMetadata(to, fpmath, precision);
  LLVMFastMathFlags f = LLVMGetFastMathFlags(from);
  f &= LLVMFastMathAllowReassoc | LLVMFastMathNoSignedZeros | LLVMFastMathAllowReciprocal |
       LLVMFastMathAllowContract | LLVMFastMathApproxFunc;
  LLVMSetFastMathFlags(to, f);
}

/* Integer division of vectors a / d (elements of type t). Lanes that are
 * off may hold anything: a zero divisor, or INT_MIN / -1, would trap, so
 * those divisors become 1. */
static LLVMValueRef safe_division(struct vec *v, LLVMBuilderRef b, LLVMOpcode op, LLVMValueRef a,
                                  LLVMValueRef d, LLVMTypeRef t) {
  d = LLVMBuildFreeze(b, d, "");
  LLVMTypeRef vt = LLVMTypeOf(d);
  LLVMValueRef bad = LLVMBuildICmp(b, LLVMIntEQ, d, LLVMConstNull(vt), "");
  if (op == LLVMSDiv || op == LLVMSRem) {
    unsigned width = LLVMGetIntTypeWidth(t);
    LLVMValueRef min = const_splat(v, LLVMConstInt(t, 1ull << (width - 1), 0));
    a = LLVMBuildFreeze(b, a, "");
    LLVMValueRef ov = LLVMBuildAnd(b, LLVMBuildICmp(b, LLVMIntEQ, d, LLVMConstAllOnes(vt), ""),
                                   LLVMBuildICmp(b, LLVMIntEQ, a, min, ""), "");
    bad = LLVMBuildOr(b, bad, ov, "");
  }
  d = LLVMBuildSelect(b, bad, const_splat(v, LLVMConstInt(t, 1, 0)), d, "");
  return LLVMBuildBinOp(b, op, a, d, "");
}

/* The vector form of a pure instruction, from its operands' vectors. */
static LLVMValueRef widen_pure(struct vec *v, LLVMBuilderRef b, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMTypeRef t = LLVMTypeOf(in);
  LLVMValueRef r = NULL;
  switch (op) {
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
  case LLVMFAdd:
  case LLVMFSub:
  case LLVMFMul:
  case LLVMFDiv:
  case LLVMFRem: {
    LLVMValueRef a = vector_of_value(v, LLVMGetOperand(in, 0));
    LLVMValueRef c = vector_of_value(v, LLVMGetOperand(in, 1));
    r = LLVMBuildBinOp(b, op, a, c, "");
    copy_safe_fmf(in, r);
    break;
  }
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
    r = safe_division(v, b, op, vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), t);
    break;
  case LLVMFNeg:
    r = LLVMBuildFNeg(b, vector_of_value(v, LLVMGetOperand(in, 0)), "");
    copy_safe_fmf(in, r);
    break;
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMFPTrunc:
  case LLVMFPExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    if (op == LLVMBitCast &&
        LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind) {
      /* An OpenCL vector's elements joined into one scalar (<2 x float>
       * passed as a double). */
      if (b != v->b) {
        fail(v, VECTORIZE_UNSUPPORTED, "internal: a joined vector outside emission", in);
        return LLVMGetPoison(vector_of(v, t));
      }
      r = packet_bitcast(v, LLVMGetOperand(in, 0), t, 1, 0);
      break;
    }
    r = LLVMBuildCast(b, op, vector_of_value(v, LLVMGetOperand(in, 0)), vector_of(v, t), "");
    break;
  case LLVMICmp:
    r = LLVMBuildICmp(b, LLVMGetICmpPredicate(in), vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), "");
    break;
  case LLVMFCmp:
    r = LLVMBuildFCmp(b, LLVMGetFCmpPredicate(in), vector_of_value(v, LLVMGetOperand(in, 0)),
                      vector_of_value(v, LLVMGetOperand(in, 1)), "");
    break;
  case LLVMSelect: {
    LLVMValueRef c = LLVMGetOperand(in, 0);
    LLVMValueRef cv = is_uniform(v, c) ? scalar_of(v, c) : vector_of_value(v, c);
    r = LLVMBuildSelect(b, cv, vector_of_value(v, LLVMGetOperand(in, 1)),
                        vector_of_value(v, LLVMGetOperand(in, 2)), "");
    break;
  }
  case LLVMFreeze:
    r = LLVMBuildFreeze(b, vector_of_value(v, LLVMGetOperand(in, 0)), "");
    break;
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    LLVMValueRef ops[16];
    if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) {
      r = private_array_gep(v, b, in, 1);
      break;
    }
    if (n > 16) {
      fail(v, VECTORIZE_UNSUPPORTED, "a GEP with too many indices", in);
      return LLVMGetPoison(vector_of(v, t));
    }
    LLVMTypeRef st = LLVMGetGEPSourceElementType(in);
    for (unsigned k = 0; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(in, k);
      /* A uniform base stays scalar; struct field numbers stay constants. */
      if (k == 0 ? is_uniform(v, o) : is_uniform(v, o) && LLVMIsAConstant(o))
        ops[k] = scalar_of(v, o);
      else
        ops[k] = vector_of_value(v, o);
    }
    r = LLVMBuildGEP2(b, st, ops[0], ops + 1, n - 1, "");
    break;
  }
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "an instruction the vectorizer cannot widen", in);
    return LLVMGetPoison(vector_of(v, t));
  }
  return r;
}

/* ---- masks ----------------------------------------------------------------------------- */

static LLVMValueRef mask_value(struct vec *v, LLVMValueRef m) {
  return m ? m : all_ones_mask(v);
}

/* m && c, lane-wise, without letting c's inactive lanes (maybe poison) through. */
static LLVMValueRef mask_and(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, LLVMValueRef c) {
  if (!m) return LLVMBuildFreeze(b, c, "");
  return LLVMBuildSelect(b, m, c, LLVMConstNull(v->mask_type), "mask");
}

static LLVMValueRef any_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i1, 1, 0);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, LLVMIntTypeInContext(v->ctx, v->W), "");
  return LLVMBuildICmp(b, LLVMIntNE, bits, LLVMConstNull(LLVMTypeOf(bits)), "any");
}

/* Index of the last lane on in m (all on: W - 1). */
static LLVMValueRef last_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i32, v->W - 1, 0);
  LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, it, "");
  LLVMValueRef ctlz =
      LLVMGetIntrinsicDeclaration(v->m, LLVMLookupIntrinsicID("llvm.ctlz", 9), &it, 1);
  LLVMValueRef args[2] = {bits, LLVMConstInt(v->i1, 1, 0)};
  LLVMValueRef lz = LLVMBuildCall2(b, LLVMGlobalGetValueType(ctlz), ctlz, args, 2, "");
  lz = LLVMBuildZExtOrBitCast(b, lz, v->i32, "");
  return LLVMBuildSub(b, LLVMConstInt(v->i32, v->W - 1, 0), lz, "last");
}

static LLVMValueRef first_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m) {
  if (!m) return LLVMConstInt(v->i32, 0, 0);
  LLVMTypeRef it = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef bits = LLVMBuildBitCast(b, m, it, "");
  LLVMValueRef cttz =
      LLVMGetIntrinsicDeclaration(v->m, LLVMLookupIntrinsicID("llvm.cttz", 9), &it, 1);
  LLVMValueRef args[2] = {bits, LLVMConstInt(v->i1, 1, 0)};
  LLVMValueRef tz = LLVMBuildCall2(b, LLVMGlobalGetValueType(cttz), cttz, args, 2, "");
  return LLVMBuildZExtOrBitCast(b, tz, v->i32, "first");
}

/* ---- memory ------------------------------------------------------------------------------ */

static LLVMValueRef call_intrinsic(struct vec *v, LLVMBuilderRef b, const char *name,
                                   LLVMTypeRef *types, unsigned num_types, LLVMValueRef *args,
                                   unsigned num_args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(v->m, id, types, num_types);
  return LLVMBuildCall2(b, LLVMGlobalGetValueType(f), f, args, num_args, "");
}

/* An atomic add or sub of a uniform integer whose old value nobody uses
 * (atomic_inc on a histogram's bin, a counter): one update per distinct
 * address instead of one locked instruction per lane. At a uniform
 * address, the lanes' sum goes in one atomic (one load and store for
 * __local memory). At varying __local addresses (AVX-512, i32): a
 * work-group runs on one thread and nothing else reaches its group segment,
 * so the update need not be atomic; lanes with equal addresses are merged
 * (AVX-512's conflict detection on the addresses' offsets in the segment),
 * the last lane of each address adds their count, and a masked gather and
 * scatter do the rest, as the lanes in order would have. NULL where this
 * does not apply. */
static LLVMValueRef emit_group_counter_update(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  if (LLVMGetFirstUse(in)) return NULL;
  LLVMAtomicRMWBinOp bop = LLVMGetAtomicRMWBinOp(in);
  if (bop != LLVMAtomicRMWBinOpAdd && bop != LLVMAtomicRMWBinOpSub) return NULL;
  LLVMValueRef ptr = LLVMGetOperand(in, 0), val = LLVMGetOperand(in, 1);
  LLVMTypeRef type = LLVMTypeOf(val);
  if (LLVMGetTypeKind(type) != LLVMIntegerTypeKind || !is_uniform(v, val)) return NULL;
  int local = LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)) == 3;
  int uniform_address = is_uniform(v, ptr);
  if (!uniform_address && (!local || v->W != 16 || v->isa != 'e' || type != v->i32)) return NULL;
  LLVMBuilderRef b = v->b;
  LLVMTypeRef vtype = LLVMVectorType(type, v->W), bits = LLVMIntTypeInContext(v->ctx, v->W);
  LLVMValueRef step = scalar_of(v, val);
  if (bop == LLVMAtomicRMWBinOpSub) step = LLVMBuildNeg(b, step, "");
  unsigned align = LLVMGetAlignment(in);
  LLVMValueRef active = mask ? LLVMBuildZExt(b, LLVMBuildBitCast(b, mask, bits, ""), v->i32, "")
                             : LLVMConstInt(v->i32, (1u << v->W) - 1, 0); /* W is 4, 8 or 16 */
  if (uniform_address) {
    LLVMValueRef p = scalar_of(v, ptr);
    LLVMTypeRef one_i32[] = {v->i32};
    LLVMValueRef n = call_intrinsic(v, b, "llvm.ctpop", one_i32, 1, &active, 1);
    LLVMValueRef delta = LLVMBuildMul(b, LLVMBuildZExtOrBitCast(b, n, type, ""), step, "");
    if (local) {
      LLVMValueRef old = LLVMBuildLoad2(b, type, p, "");
      LLVMSetAlignment(old, align);
      LLVMValueRef store = LLVMBuildStore(b, LLVMBuildAdd(b, old, delta, ""), p);
      LLVMSetAlignment(store, align);
    } else {
      LLVMValueRef rmw = LLVMBuildAtomicRMW(b, LLVMAtomicRMWBinOpAdd, p, delta, LLVMGetOrdering(in),
                                            LLVMIsAtomicSingleThread(in));
      LLVMSetAlignment(rmw, align);
      LLVMSetVolatile(rmw, LLVMGetVolatile(in));
    }
    return LLVMGetPoison(vtype);
  }
  LLVMTypeRef vi32 = vtype, i16 = bits;
  LLVMValueRef ptrs = vector_of_value(v, ptr);
  LLVMValueRef addr = LLVMBuildPtrToInt(b, ptrs, LLVMVectorType(v->i64, v->W), "");
  LLVMValueRef base = LLVMBuildExtractElement(b, addr, first_lane(v, b, mask), "");
  /* Offsets from one active lane's address: distinct addresses of one
   * group segment stay distinct in 32 bits; lanes that are off get keys
   * no offset within the segment can have. */
  LLVMValueRef key = LLVMBuildTrunc(b, LLVMBuildSub(b, addr, splat(v, b, base), ""), vi32, "");
  if (mask) {
    LLVMValueRef off_keys[16];
    for (unsigned l = 0; l < 16; l++)
      off_keys[l] = LLVMConstInt(v->i32, 0x80000000u + l, 0);
    key = LLVMBuildSelect(b, mask, key, LLVMConstVector(off_keys, 16), "");
  }
  LLVMTypeRef conflict_params[] = {vi32};
  LLVMTypeRef conflict_type = LLVMFunctionType(vi32, conflict_params, 1, 0);
  LLVMValueRef conflict_fn = LLVMGetNamedFunction(v->m, "llvm.x86.avx512.conflict.d.512");
  if (!conflict_fn)
    conflict_fn = LLVMAddFunction(v->m, "llvm.x86.avx512.conflict.d.512", conflict_type);
  /* conflicts[l]: the earlier lanes with lane l's address. */
  LLVMValueRef conflicts = LLVMBuildCall2(b, conflict_type, conflict_fn, &key, 1, "");
  LLVMTypeRef one_vi32[] = {vi32};
  LLVMValueRef earlier = call_intrinsic(v, b, "llvm.ctpop", one_vi32, 1, &conflicts, 1);
  LLVMValueRef count = LLVMBuildAdd(b, earlier, const_splat(v, LLVMConstInt(v->i32, 1, 0)), "");
  /* A lane that some later lane names is not its address's last. */
  LLVMValueRef named = call_intrinsic(v, b, "llvm.vector.reduce.or", one_vi32, 1, &conflicts, 1);
  LLVMValueRef last = LLVMBuildAnd(b, active, LLVMBuildNot(b, named, ""), "");
  LLVMValueRef last_mask =
      LLVMBuildBitCast(b, LLVMBuildTrunc(b, last, i16, ""), LLVMVectorType(v->i1, v->W), "");
  LLVMTypeRef gather_types[] = {vi32, LLVMTypeOf(ptrs)};
  LLVMValueRef gather_args[] = {ptrs, LLVMConstInt(v->i32, align, 0), last_mask,
                                LLVMGetPoison(vi32)};
  LLVMValueRef old = call_intrinsic(v, b, "llvm.masked.gather", gather_types, 2, gather_args, 4);
  LLVMValueRef updated = LLVMBuildAdd(b, old, LLVMBuildMul(b, count, splat(v, b, step), ""), "");
  LLVMValueRef scatter_args[] = {updated, ptrs, LLVMConstInt(v->i32, align, 0), last_mask};
  call_intrinsic(v, b, "llvm.masked.scatter", gather_types, 2, scatter_args, 4);
  return LLVMGetPoison(vi32);
}

static LLVMValueRef reverse(struct vec *v, LLVMBuilderRef b, LLVMValueRef x) {
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, v->W - 1 - i, 0);
  return LLVMBuildShuffleVector(b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(idx, v->W), "");
}

/* The address of lane 0 of an affine access. When the chain behind it
 * holds only where no lane wraps and some lanes are off (whose indices may
 * well wrap: "if (i < n)" with i = gid - k), it is found from the first
 * active lane's exact address instead. */
/* val's value in one lane (an i32 index), built in scalars: what taking
 * that lane of val's vector gives, without building the vector. NULL when
 * val is made of something not followed here. */
static LLVMValueRef lane_value(struct vec *v, LLVMValueRef val, LLVMValueRef lane, int depth) {
  LLVMTypeRef t = LLVMTypeOf(val);
  LLVMTypeKind tk = LLVMGetTypeKind(t);
  if (tk != LLVMIntegerTypeKind && tk != LLVMPointerTypeKind) return NULL;
  struct shape s = shape_of_value(v, val);
  if (s.kind == K_UNIFORM) return scalar_of(v, val);
  if (s.kind == K_AFFINE && !s.assumed) {
    LLVMValueRef s0 = scalar_of(v, val);
    if (tk == LLVMPointerTypeKind) {
      LLVMValueRef off = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, lane, v->i64, ""),
                                      LLVMConstInt(v->i64, (unsigned long long)s.stride, 1), "");
      return LLVMBuildGEP2(v->b, v->i8, s0, &off, 1, "");
    }
    LLVMValueRef l = LLVMBuildZExtOrBitCast(v->b, lane, v->i64, "");
    l = LLVMBuildTruncOrBitCast(v->b, l, t, "");
    return LLVMBuildAdd(
        v->b, s0, LLVMBuildMul(v->b, l, LLVMConstInt(t, (unsigned long long)s.stride, 1), ""), "");
  }
  if (s.kind == K_RUNS && !s.assumed) {
    struct vinfo *i = LLVMIsAInstruction(val) ? ptr_map_get(&v->info, val) : NULL;
    LLVMValueRef lo = scalar_of(v, val), hi = i ? i->scalar_hi : lo;
    if (!hi) return NULL;
    LLVMValueRef upper = LLVMBuildICmp(v->b, LLVMIntUGE, lane, LLVMConstInt(v->i32, v->H, 0), "");
    LLVMValueRef start = LLVMBuildSelect(v->b, upper, hi, lo, "");
    LLVMValueRef within = LLVMBuildAnd(v->b, lane, LLVMConstInt(v->i32, v->H - 1, 0), "");
    LLVMValueRef l = LLVMBuildZExt(v->b, within, v->i64, "");
    if (tk == LLVMPointerTypeKind) {
      LLVMValueRef off =
          LLVMBuildMul(v->b, l, LLVMConstInt(v->i64, (unsigned long long)s.stride, 1), "");
      return LLVMBuildGEP2(v->b, v->i8, start, &off, 1, "");
    }
    l = LLVMBuildTruncOrBitCast(v->b, l, t, "");
    return LLVMBuildAdd(v->b, start,
                        LLVMBuildMul(v->b, l, LLVMConstInt(t, (unsigned long long)s.stride, 1), ""),
                        "");
  }
  if (depth > 16 || !LLVMIsAInstruction(val) || s.kind == K_UNDEF) return NULL;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  LLVMValueRef a, c;
  switch (op) {
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem: {
    /* Only by a constant other than 0 and -1: nothing to trap on. */
    LLVMValueRef d = LLVMGetOperand(val, 1);
    if (!LLVMIsAConstantInt(d) || LLVMConstIntGetZExtValue(d) == 0 ||
        LLVMConstIntGetSExtValue(d) == -1)
      return NULL;
  }
    /* fall through */
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1)) ||
        !(c = lane_value(v, LLVMGetOperand(val, 1), lane, depth + 1)))
      return NULL;
    return LLVMBuildBinOp(v->b, op, a, c, "");
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMAddrSpaceCast:
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1))) return NULL;
    return LLVMBuildCast(v->b, op, a, t, "");
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(val);
    LLVMValueRef idx[8];
    if (n < 2 || n - 1 > 8) return NULL;
    if (!(a = lane_value(v, LLVMGetOperand(val, 0), lane, depth + 1))) return NULL;
    for (unsigned k = 1; k < n; k++) {
      LLVMValueRef o = LLVMGetOperand(val, k);
      /* Struct field numbers stay constants. */
      idx[k - 1] = LLVMIsAConstantInt(o) ? o : lane_value(v, o, lane, depth + 1);
      if (!idx[k - 1]) return NULL;
    }
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(val), a, idx, n - 1, "");
  }
  case LLVMCall: {
    const char *name = callee_name(val);
    if (!name || LLVMGetNumArgOperands(val) != 2 ||
        (strncmp(name, "llvm.smax.", 10) && strncmp(name, "llvm.smin.", 10) &&
         strncmp(name, "llvm.umax.", 10) && strncmp(name, "llvm.umin.", 10)))
      return NULL;
    LLVMValueRef args[2];
    for (unsigned k = 0; k < 2; k++)
      if (!(args[k] = lane_value(v, LLVMGetOperand(val, k), lane, depth + 1))) return NULL;
    LLVMValueRef callee = LLVMGetCalledValue(val);
    return LLVMBuildCall2(v->b, LLVMGlobalGetValueType(callee), callee, args, 2, "");
  }
  default:
    return NULL;
  }
}

static LLVMValueRef affine_base(struct vec *v, LLVMValueRef addr, LLVMValueRef mask) {
  struct vinfo *i = LLVMIsAInstruction(addr) ? ptr_map_get(&v->info, addr) : NULL;
  if (!i || !i->assumed || !mask) return scalar_of(v, addr);
  /* The first lane that is on: its address holds, those of lanes that are
   * off may have wrapped. */
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef p = lane_value(v, addr, first, 0);
  if (!p) p = LLVMBuildExtractElement(v->b, vector_of_value(v, addr), first, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-i->stride), 1), "");
  return LLVMBuildGEP2(v->b, v->i8, p, &back, 1, "base");
}

static void copy_memory_metadata(struct vec *v, LLVMValueRef from, LLVMValueRef to) {
  static const char *const kinds[] = {"tbaa", "alias.scope", "noalias", "nontemporal", NULL};
  for (int k = 0; kinds[k]; k++) {
    unsigned id = LLVMGetMDKindIDInContext(v->ctx, kinds[k], (unsigned)strlen(kinds[k]));
    LLVMValueRef md = LLVMGetMetadata(from, id);
    if (md) LLVMSetMetadata(to, id, md);
  }
}

/* Each lane's bit of m repeated n times: the mask of an access to n
 * members per lane. */
static LLVMValueRef expand_mask(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, unsigned n) {
  if (n == 1) return m;
  LLVMValueRef idx[MAX_MEMBERS * 64];
  for (unsigned i = 0; i < v->W * n; i++)
    idx[i] = LLVMConstInt(v->i32, i / n, 0);
  return LLVMBuildShuffleVector(b, m, LLVMGetPoison(LLVMTypeOf(m)), LLVMConstVector(idx, v->W * n),
                                "");
}

/* Lanes' member k out of a vector holding n members per lane, lane by lane. */
static LLVMValueRef deinterleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef wide, unsigned n,
                                 unsigned k) {
  if (n == 1) return wide;
  LLVMValueRef idx[64];
  for (unsigned i = 0; i < v->W; i++)
    idx[i] = LLVMConstInt(v->i32, i * n + k, 0);
  return LLVMBuildShuffleVector(b, wide, LLVMGetPoison(LLVMTypeOf(wide)),
                                LLVMConstVector(idx, v->W), "");
}

/* The n member vectors (NULL: poison) laid out lane by lane, n per lane. */
static LLVMValueRef interleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef *parts, unsigned n,
                               LLVMTypeRef t) {
  LLVMTypeRef vt = vector_of(v, t);
  if (n == 1) return parts[0] ? parts[0] : LLVMGetPoison(vt);
  unsigned p2 = 1;
  while (p2 < n)
    p2 *= 2;
  LLVMValueRef level[MAX_MEMBERS];
  for (unsigned k = 0; k < p2; k++)
    level[k] = k < n && parts[k] ? parts[k] : LLVMGetPoison(vt);
  /* Concatenate pairwise: p2 vectors of W become one of p2 * W. */
  unsigned width = v->W;
  for (unsigned count = p2; count > 1; count /= 2, width *= 2) {
    LLVMValueRef idx[MAX_MEMBERS * 64];
    for (unsigned i = 0; i < 2 * width; i++)
      idx[i] = LLVMConstInt(v->i32, i, 0);
    for (unsigned k = 0; k < count / 2; k++)
      level[k] = LLVMBuildShuffleVector(b, level[2 * k], level[2 * k + 1],
                                        LLVMConstVector(idx, 2 * width), "");
  }
  LLVMValueRef idx[MAX_MEMBERS * 64];
  for (unsigned lane = 0; lane < v->W; lane++)
    for (unsigned k = 0; k < n; k++)
      idx[lane * n + k] = LLVMConstInt(v->i32, k * v->W + lane, 0);
  return LLVMBuildShuffleVector(b, level[0], LLVMGetPoison(LLVMTypeOf(level[0])),
                                LLVMConstVector(idx, v->W * n), "interleaved");
}

/* Whether the active lanes of ptrs step by stride bytes from lane to lane,
 * and the address lane 0 would have then. */
static LLVMValueRef consecutive(struct vec *v, LLVMValueRef ptrs, LLVMValueRef mask, int64_t stride,
                                LLVMValueRef *base) {
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef p = LLVMBuildExtractElement(v->b, ptrs, first, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-stride), 1), "");
  *base = LLVMBuildGEP2(v->b, v->i8, p, &back, 1, "base");
  LLVMValueRef expect = LLVMBuildGEP2(v->b, v->i8, splat(v, v->b, *base),
                                      (LLVMValueRef[]){step_vector(v, v->i64, stride)}, 1, "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, ptrs, expect, "");
  if (mask) same = LLVMBuildSelect(v->b, mask, same, all_ones_mask(v), "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  return LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "consecutive");
}

/* Whether x0 + k * step, k = 0 .. count (an i64), stays within the range of
 * x0's integer type, read as signed (ext LLVMSExt) or unsigned: then lanes
 * equal in x's bits have equal extended indices. */
static LLVMValueRef index_run_in_range(struct vec *v, LLVMValueRef x0, LLVMOpcode ext, int64_t step,
                                       LLVMValueRef count) {
  unsigned nbits = LLVMGetIntTypeWidth(LLVMTypeOf(x0));
  LLVMValueRef wide =
      ext == LLVMSExt ? LLVMBuildSExt(v->b, x0, v->i64, "") : LLVMBuildZExt(v->b, x0, v->i64, "");
  LLVMValueRef span =
      LLVMBuildMul(v->b, count, LLVMConstInt(v->i64, (unsigned long long)step, 1), "");
  LLVMValueRef last = LLVMBuildAdd(v->b, wide, span, "");
  int is_signed = ext == LLVMSExt;
  int64_t hi = is_signed ? (int64_t)(((uint64_t)1 << (nbits - 1)) - 1)
                         : (int64_t)(((uint64_t)1 << nbits) - 1);
  int64_t lo = is_signed ? -(int64_t)((uint64_t)1 << (nbits - 1)) : 0;
  return step > 0 ? LLVMBuildICmp(v->b, LLVMIntSLE, last,
                                  LLVMConstInt(v->i64, (unsigned long long)hi, 1), "")
                  : LLVMBuildICmp(v->b, LLVMIntSGE, last,
                                  LLVMConstInt(v->i64, (unsigned long long)lo, 1), "");
}

/* consecutive() on the index of root, a GEP of a uniform pointer by one
 * varying index, instead of on the lanes' 64-bit addresses: one compare of
 * the index vector (of the narrower integer when the index extends one,
 * with a scalar check that no lane from the first active one on wraps),
 * and the vector of addresses is left to the gather of the slow way, which
 * then takes 32-bit offsets. NULL when root is no such GEP. */
static LLVMValueRef consecutive_index(struct vec *v, LLVMValueRef root, LLVMValueRef mask,
                                      int64_t stride, LLVMValueRef *base) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return NULL;
  LLVMValueRef p = LLVMGetOperand(root, 0), idx = LLVMGetOperand(root, 1);
  if (!is_uniform(v, p) || shape_of_value(v, idx).kind != K_VARYING) return NULL;
  LLVMTypeRef et = LLVMGetGEPSourceElementType(root);
  int64_t esize = alloc_size(v, et);
  if (esize <= 0 || stride % esize || stride / esize > ((int64_t)1 << 20) ||
      stride / esize < -((int64_t)1 << 20))
    return NULL;
  int64_t step = stride / esize;
  LLVMValueRef x = idx;
  LLVMOpcode ext = LLVMIsAInstruction(idx) ? LLVMGetInstructionOpcode(idx) : 0;
  if ((ext == LLVMSExt || ext == LLVMZExt) &&
      shape_of_value(v, LLVMGetOperand(idx, 0)).kind == K_VARYING)
    x = LLVMGetOperand(idx, 0);
  else
    ext = 0;
  LLVMTypeRef xt = LLVMTypeOf(x);
  if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) > 64 ||
      (ext && LLVMGetIntTypeWidth(xt) >= 64))
    return NULL;
  LLVMValueRef lanes = vector_of_value(v, x);
  LLVMValueRef first = first_lane(v, v->b, mask);
  LLVMValueRef xf = lane_value(v, x, first, 0);
  if (!xf) xf = LLVMBuildExtractElement(v->b, lanes, first, "");
  LLVMValueRef first_x =
      LLVMBuildTruncOrBitCast(v->b, LLVMBuildZExtOrBitCast(v->b, first, v->i64, ""), xt, "");
  LLVMValueRef x0 = LLVMBuildSub(
      v->b, xf, LLVMBuildMul(v->b, first_x, LLVMConstInt(xt, (unsigned long long)step, 1), ""), "");
  LLVMValueRef expect = LLVMBuildAdd(v->b, splat(v, v->b, x0), step_vector(v, xt, step), "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, lanes, expect, "");
  if (mask) same = LLVMBuildSelect(v->b, mask, same, all_ones_mask(v), "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  LLVMValueRef ok =
      LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "consecutive");
  LLVMValueRef xfe = xf;
  /* A GEP sign-extends an index narrower than 64 bits itself. */
  int implicit = !ext && LLVMGetIntTypeWidth(xt) < 64;
  if (implicit) ext = LLVMSExt;
  if (ext) {
    /* The lanes from the first active one to the last, xf + (l - first) *
     * step, stay within x's range: then equal in x's bits is equal. */
    LLVMValueRef lanes_after = LLVMBuildSub(v->b, LLVMConstInt(v->i64, v->W - 1, 0),
                                            LLVMBuildZExt(v->b, first, v->i64, ""), "");
    ok = LLVMBuildAnd(v->b, ok, index_run_in_range(v, xf, ext, step, lanes_after), "");
    if (!implicit) xfe = LLVMBuildCast(v->b, ext, xf, LLVMTypeOf(idx), "");
  }
  LLVMValueRef pf = LLVMBuildGEP2(v->b, et, scalar_of(v, p), &xfe, 1, "");
  LLVMValueRef back = LLVMBuildMul(v->b, LLVMBuildZExt(v->b, first, v->i64, ""),
                                   LLVMConstInt(v->i64, (unsigned long long)(-stride), 1), "");
  *base = LLVMBuildGEP2(v->b, v->i8, pf, &back, 1, "base");
  return ok;
}

/* A GEP of a uniform pointer by one varying index (the index taken
 * before its sign or zero extension): the pointer, the index, the
 * extension (0 for none, LLVMSExt for a GEP's own of a narrower index)
 * and the step between consecutive lanes' elements, in elements; 0 when
 * root is no such GEP or stride no multiple of its element. */
static int index_access(struct vec *v, LLVMValueRef root, int64_t stride, LLVMValueRef *p,
                        LLVMValueRef *x, LLVMOpcode *ext, int *implicit, int64_t *step) {
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return 0;
  LLVMValueRef idx = LLVMGetOperand(root, 1);
  *p = LLVMGetOperand(root, 0);
  if (!is_uniform(v, *p) || shape_of_value(v, idx).kind != K_VARYING) return 0;
  int64_t esize = alloc_size(v, LLVMGetGEPSourceElementType(root));
  if (esize <= 0 || stride % esize || stride / esize > ((int64_t)1 << 20) ||
      stride / esize < -((int64_t)1 << 20))
    return 0;
  *step = stride / esize;
  *x = idx;
  *ext = LLVMIsAInstruction(idx) ? LLVMGetInstructionOpcode(idx) : 0;
  if ((*ext == LLVMSExt || *ext == LLVMZExt) &&
      shape_of_value(v, LLVMGetOperand(idx, 0)).kind == K_VARYING)
    *x = LLVMGetOperand(idx, 0);
  else
    *ext = 0;
  LLVMTypeRef xt = LLVMTypeOf(*x);
  if (LLVMGetTypeKind(xt) != LLVMIntegerTypeKind || LLVMGetIntTypeWidth(xt) > 64 ||
      (*ext && LLVMGetIntTypeWidth(xt) >= 64))
    return 0;
  *implicit = !*ext && LLVMGetIntTypeWidth(xt) < 64;
  if (*implicit) *ext = LLVMSExt;
  return 1;
}

/* Every lane active, and the lanes' elements in two runs: the first half's
 * consecutive from lane 0's, the second half's from lane W/2's. A radix-8
 * FFT exchanges its values through __local memory so (clFFT's passes:
 * lds[(me / 8) * 64 + me % 8 + k * 8], two runs of 8 in 16 lanes), where
 * a gather or scatter takes one memory operation per lane and two
 * half-width accesses serve. The condition, with each half's address in
 * base[]; NULL when root is no GEP of a uniform pointer by one varying
 * index. */
static LLVMValueRef halves_consecutive(struct vec *v, LLVMValueRef root, int64_t stride,
                                       LLVMValueRef base[2]) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  LLVMValueRef p, x;
  LLVMOpcode ext;
  int implicit;
  int64_t step;
  if (v->W < 8 || !index_access(v, root, stride, &p, &x, &ext, &implicit, &step)) return NULL;
  LLVMTypeRef xt = LLVMTypeOf(x), et = LLVMGetGEPSourceElementType(root);
  unsigned h = v->W / 2;
  LLVMValueRef lanes = vector_of_value(v, x), firsts[64], steps[64];
  for (unsigned l = 0; l < v->W; l++) {
    firsts[l] = LLVMConstInt(v->i32, l < h ? 0 : h, 0);
    steps[l] = LLVMConstInt(xt, (unsigned long long)((int64_t)(l % h) * step), 1);
  }
  LLVMValueRef starts = LLVMBuildShuffleVector(v->b, lanes, LLVMGetPoison(LLVMTypeOf(lanes)),
                                               LLVMConstVector(firsts, v->W), "");
  LLVMValueRef expect = LLVMBuildAdd(v->b, starts, LLVMConstVector(steps, v->W), "");
  LLVMValueRef same = LLVMBuildICmp(v->b, LLVMIntEQ, lanes, expect, "");
  LLVMValueRef bits = LLVMBuildBitCast(v->b, same, LLVMIntTypeInContext(v->ctx, v->W), "");
  LLVMValueRef ok =
      LLVMBuildICmp(v->b, LLVMIntEQ, bits, LLVMConstAllOnes(LLVMTypeOf(bits)), "halves");
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef xk = LLVMBuildExtractElement(v->b, lanes, LLVMConstInt(v->i32, k * h, 0), "");
    LLVMValueRef index = xk;
    if (ext) {
      ok = LLVMBuildAnd(v->b, ok,
                        index_run_in_range(v, xk, ext, step, LLVMConstInt(v->i64, h - 1, 0)), "");
      if (!implicit) index = LLVMBuildCast(v->b, ext, xk, LLVMTypeOf(LLVMGetOperand(root, 1)), "");
    }
    base[k] = LLVMBuildGEP2(v->b, et, scalar_of(v, p), &index, 1, "half");
  }
  return ok;
}

/* The first or second half (k) of the vector x of n elements. */
static LLVMValueRef half_of(struct vec *v, LLVMValueRef x, unsigned n, unsigned k) {
  LLVMValueRef idx[MAX_MEMBERS * 32];
  for (unsigned i = 0; i < n / 2; i++)
    idx[i] = LLVMConstInt(v->i32, k * (n / 2) + i, 0);
  return LLVMBuildShuffleVector(v->b, x, LLVMGetPoison(LLVMTypeOf(x)), LLVMConstVector(idx, n / 2),
                                "");
}

/* ---- clamped addresses ----
 *
 * Image kernels clamp their neighbours' coordinates to the edge
 * (in[y * w + max(x - 1, 0)]): the index is varying only because of the
 * clamp, which holds in no lane but those of a vector at the image's edge.
 * Such an address is rebuilt in scalars, as lane 0's value and a stride,
 * together with the condition under which every lane's address is exactly
 * that: each clamp leaves all lanes alone, and no lane wraps where a
 * sign or zero extension or a signed or unsigned clamp would see it. The
 * condition takes a handful of scalar instructions, where comparing the
 * lanes' addresses takes the vector of them. */
struct clamped {
  LLVMValueRef lane0;
  int64_t stride;
};

static LLVMValueRef and_condition(struct vec *v, LLVMValueRef c, LLVMValueRef d) {
  return c ? LLVMBuildAnd(v->b, c, d, "") : d;
}

/* Whether the W lanes lane0 + l * stride of a narrower than 64-bit integer
 * stay within its signed (or unsigned) range, so that they increase (or
 * decrease) from lane to lane and extend exactly. */
static LLVMValueRef lanes_stay_in_range(struct vec *v, LLVMValueRef lane0, int64_t stride,
                                        int is_signed) {
  unsigned bits = LLVMGetIntTypeWidth(LLVMTypeOf(lane0));
  LLVMValueRef wide =
      is_signed ? LLVMBuildSExt(v->b, lane0, v->i64, "") : LLVMBuildZExt(v->b, lane0, v->i64, "");
  LLVMValueRef last = LLVMBuildAdd(
      v->b, wide, LLVMConstInt(v->i64, (unsigned long long)((int64_t)(v->W - 1) * stride), 1), "");
  int64_t bound;
  if (stride > 0)
    bound = is_signed ? (int64_t)(((uint64_t)1 << (bits - 1)) - 1)
                      : (int64_t)(((uint64_t)1 << bits) - 1);
  else
    bound = is_signed ? -(int64_t)((uint64_t)1 << (bits - 1)) : 0;
  return LLVMBuildICmp(v->b, stride > 0 ? LLVMIntSLE : LLVMIntSGE, last,
                       LLVMConstInt(v->i64, (unsigned long long)bound, 1), "in.range");
}

static int clamped_lanes(struct vec *v, LLVMValueRef val, LLVMValueRef mask, struct clamped *out,
                         LLVMValueRef *cond, int depth) {
  struct shape s = shape_of_value(v, val);
  if (s.kind == K_UNIFORM || (s.kind == K_AFFINE && !s.assumed)) {
    out->lane0 = scalar_of(v, val);
    out->stride = s.kind == K_AFFINE ? s.stride : 0;
    return !v->status;
  }
  if (depth > 12 || !LLVMIsAInstruction(val) || s.kind == K_UNDEF) return 0;
  LLVMOpcode op = LLVMGetInstructionOpcode(val);
  LLVMTypeRef t = LLVMTypeOf(val);
  int is_int = LLVMGetTypeKind(t) == LLVMIntegerTypeKind;
  struct clamped a, c;
  switch (op) {
  case LLVMAdd:
  case LLVMSub:
    if (!clamped_lanes(v, LLVMGetOperand(val, 0), mask, &a, cond, depth + 1) ||
        !clamped_lanes(v, LLVMGetOperand(val, 1), mask, &c, cond, depth + 1))
      break;
    out->lane0 = op == LLVMAdd ? LLVMBuildAdd(v->b, a.lane0, c.lane0, "")
                               : LLVMBuildSub(v->b, a.lane0, c.lane0, "");
    out->stride = op == LLVMAdd ? a.stride + c.stride : a.stride - c.stride;
    return 1;
  case LLVMMul:
  case LLVMShl: {
    LLVMValueRef k = LLVMGetOperand(val, 1), x = LLVMGetOperand(val, 0);
    if (op == LLVMMul && LLVMIsAConstantInt(x)) k = x, x = LLVMGetOperand(val, 1);
    if (!LLVMIsAConstantInt(k) || LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64) break;
    int64_t factor = LLVMConstIntGetSExtValue(k);
    if (op == LLVMShl) {
      if (factor < 0 || factor > 30) break;
      factor = (int64_t)1 << factor;
    }
    if (factor > ((int64_t)1 << 20) || factor < -((int64_t)1 << 20)) break;
    if (!clamped_lanes(v, x, mask, &a, cond, depth + 1)) break;
    out->lane0 = LLVMBuildMul(v->b, a.lane0, LLVMConstInt(t, (unsigned long long)factor, 1), "");
    out->stride = a.stride * factor;
    return 1;
  }
  case LLVMSExt:
  case LLVMZExt:
  case LLVMTrunc: {
    LLVMValueRef x = LLVMGetOperand(val, 0);
    if (!is_int || LLVMGetTypeKind(LLVMTypeOf(x)) != LLVMIntegerTypeKind ||
        LLVMGetIntTypeWidth(LLVMTypeOf(x)) >= 64 || LLVMGetIntTypeWidth(t) > 64)
      break;
    if (!clamped_lanes(v, x, mask, &a, cond, depth + 1)) break;
    if (op != LLVMTrunc && a.stride)
      *cond = and_condition(v, *cond, lanes_stay_in_range(v, a.lane0, a.stride, op == LLVMSExt));
    out->lane0 = op == LLVMSExt   ? LLVMBuildSExt(v->b, a.lane0, t, "")
                 : op == LLVMZExt ? LLVMBuildZExt(v->b, a.lane0, t, "")
                                  : LLVMBuildTrunc(v->b, a.lane0, t, "");
    out->stride = a.stride;
    return 1;
  }
  case LLVMCall: {
    const char *name = callee_name(val);
    if (!name || !is_int || LLVMGetIntTypeWidth(t) >= 64 || LLVMGetNumArgOperands(val) != 2) break;
    int is_max = !strncmp(name, "llvm.smax.", 10) || !strncmp(name, "llvm.umax.", 10);
    int is_min = !strncmp(name, "llvm.smin.", 10) || !strncmp(name, "llvm.umin.", 10);
    if (!is_max && !is_min) break;
    int is_signed = name[5] == 's';
    LLVMValueRef x = LLVMGetOperand(val, 0), bound = LLVMGetOperand(val, 1);
    if (!is_uniform(v, bound)) x = bound, bound = LLVMGetOperand(val, 0);
    if (!is_uniform(v, bound) || !clamped_lanes(v, x, mask, &a, cond, depth + 1) || !a.stride)
      break;
    /* The lanes run from lane0 to last in order; the clamp leaves them all
     * alone when the one nearest the bound is on the right side of it. */
    LLVMValueRef last =
        LLVMBuildAdd(v->b, a.lane0,
                     LLVMConstInt(t, (unsigned long long)((int64_t)(v->W - 1) * a.stride), 1), "");
    LLVMValueRef nearest = (is_max == (a.stride > 0)) ? a.lane0 : last;
    LLVMIntPredicate p =
        is_max ? (is_signed ? LLVMIntSGE : LLVMIntUGE) : (is_signed ? LLVMIntSLE : LLVMIntULE);
    *cond = and_condition(v, *cond, lanes_stay_in_range(v, a.lane0, a.stride, is_signed));
    *cond =
        and_condition(v, *cond, LLVMBuildICmp(v->b, p, nearest, scalar_of(v, bound), "unclamped"));
    *out = a;
    return 1;
  }
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(val);
    if (n < 2) break;
    LLVMTypeRef st = LLVMGetGEPSourceElementType(val);
    LLVMValueRef idx[8];
    if (n - 1 > 8) break;
    for (unsigned k = 2; k < n; k++) {
      idx[k - 1] = LLVMGetOperand(val, k);
      if (!LLVMIsAConstantInt(idx[k - 1])) return 0;
    }
    if (!clamped_lanes(v, LLVMGetOperand(val, 0), mask, &a, cond, depth + 1) ||
        !clamped_lanes(v, LLVMGetOperand(val, 1), mask, &c, cond, depth + 1))
      break;
    /* A GEP sign-extends an index narrower than 64 bits: its lanes must
     * not wrap either. */
    if (c.stride && LLVMGetTypeKind(LLVMTypeOf(c.lane0)) == LLVMIntegerTypeKind &&
        LLVMGetIntTypeWidth(LLVMTypeOf(c.lane0)) < 64)
      *cond = and_condition(v, *cond, lanes_stay_in_range(v, c.lane0, c.stride, 1));
    idx[0] = c.lane0;
    out->lane0 = LLVMBuildGEP2(v->b, st, a.lane0, idx, n - 1, "");
    out->stride = a.stride + c.stride * alloc_size(v, st);
    return 1;
  }
  default:
    break;
  }
  /* An affine value that holds if no lane wraps, reached through an
   * operation not followed here: taken as the rest of the vectorizer takes
   * it where every lane is on (affine_base). */
  if (s.kind == K_AFFINE && !mask) {
    out->lane0 = scalar_of(v, val);
    out->stride = s.stride;
    return !v->status;
  }
  return 0;
}

/* Lane 0's address of ptrs, the varying address val, and the condition
 * under which the lanes' addresses step by stride bytes from it (NULL when
 * val is no clamped address). */
static LLVMValueRef unclamped(struct vec *v, LLVMValueRef val, LLVMValueRef mask, int64_t stride,
                              LLVMValueRef *base) {
  if (getenv("AQUILA_VECTORIZE_CLAMPED") && !strcmp(getenv("AQUILA_VECTORIZE_CLAMPED"), "0"))
    return NULL;
  struct clamped a;
  LLVMValueRef cond = NULL;
  LLVMBasicBlockRef at = LLVMGetInsertBlock(v->b);
  LLVMValueRef last = LLVMGetLastInstruction(at);
  if (!clamped_lanes(v, val, mask, &a, &cond, 0) || a.stride != stride ||
      LLVMGetTypeKind(LLVMTypeOf(a.lane0)) != LLVMPointerTypeKind) {
    /* What was built for nothing goes (nothing else uses it yet). */
    LLVMValueRef in = LLVMGetLastInstruction(at);
    while (in && in != last) {
      LLVMValueRef prev = LLVMGetPreviousInstruction(in);
      LLVMInstructionEraseFromParent(in);
      in = prev;
    }
    return NULL;
  }
  *base = a.lane0;
  return cond ? cond : LLVMConstInt(v->i1, 1, 0);
}

/* Control flow for a fast and a slow way: emission goes on in *slow after
 * the caller filled *fast; join_blocks returns where both meet. */
struct two_ways {
  LLVMBasicBlockRef fast, slow, join, fast_end, slow_end;
};

static void split_two_ways(struct vec *v, LLVMValueRef cond, struct two_ways *w) {
  w->fast = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "wide");
  w->slow = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "lanes");
  w->join = LLVMAppendBasicBlockInContext(v->ctx, v->vfn, "wide.join");
  LLVMBuildCondBr(v->b, cond, w->fast, w->slow);
  LLVMPositionBuilderAtEnd(v->b, w->fast);
}

static LLVMValueRef join_value(struct vec *v, struct two_ways *w, LLVMValueRef fast,
                               LLVMValueRef slow) {
  LLVMValueRef phi = LLVMBuildPhi(v->b, LLVMTypeOf(fast), "");
  LLVMValueRef vals[2] = {fast, slow};
  LLVMBasicBlockRef from[2] = {w->fast_end, w->slow_end};
  LLVMAddIncoming(phi, vals, from, 2);
  return phi;
}

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
static LLVMValueRef all_lanes(struct vec *v, LLVMValueRef mask) {
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
static void find_streams_allowed(struct vec *v) {
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

static LLVMValueRef dispatch_work_items(struct vec *v) {
  if (v->work_items) return v->work_items;
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(v->vfn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(v->ctx);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first)
    LLVMPositionBuilderBefore(b, first);
  else
    LLVMPositionBuilderAtEnd(b, entry);
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

static LLVMValueRef gather(struct vec *v, LLVMTypeRef t, LLVMValueRef ptrs, unsigned align,
                           LLVMValueRef mask) {
  LLVMTypeRef vt = vector_of(v, t);
  LLVMTypeRef types[2] = {vt, LLVMTypeOf(ptrs)};
  LLVMValueRef args[4] = {ptrs, LLVMConstInt(v->i32, align, 0), mask_value(v, mask),
                          LLVMGetPoison(vt)};
  return call_intrinsic(v, v->b, "llvm.masked.gather", types, 2, args, 4);
}

static void scatter(struct vec *v, LLVMValueRef data, LLVMValueRef ptrs, unsigned align,
                    LLVMValueRef mask) {
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

static void emit_group_load(struct vec *v, struct access_group *g, LLVMValueRef mask) {
  g->emitted = 1;
  struct shape rs = shape_of_value(v, g->root);
  if (rs.kind == K_AFFINE) {
    LLVMValueRef wide = wide_load(v, g, affine_base(v, g->root, mask), mask);
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) g->result[k] = deinterleave(v, v->b, wide, g->members, k);
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
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) g->result[k] = deinterleave(v, v->b, whole, g->members, k);
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
  for (unsigned k = 0; k < g->members; k++)
    if (g->member[k]) fast[k] = deinterleave(v, v->b, wide, g->members, k);
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
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) by_halves[k] = deinterleave(v, v->b, whole, g->members, k);
    w2.fast_end = LLVMGetInsertBlock(v->b);
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.slow);
  }
  for (unsigned k = 0; k < g->members; k++) {
    if (!g->member[k]) continue;
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    LLVMValueRef ptrs = k ? LLVMBuildGEP2(v->b, v->i8, roots, &off, 1, "") : roots;
    unsigned align = LLVMGetAlignment(g->member[k]);
    slow[k] = gather(v, g->type, ptrs, align ? align : 1, mask);
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
static void emit_group_store(struct vec *v, struct access_group *g, LLVMValueRef mask,
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
  for (unsigned k = 0; k < g->members; k++) {
    if (!parts[k]) continue;
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    LLVMValueRef ptrs = k ? LLVMBuildGEP2(v->b, v->i8, roots, &off, 1, "") : roots;
    scatter(v, parts[k], ptrs, g->align, mask);
  }
  if (halves) {
    LLVMBuildBr(v->b, w2.join);
    LLVMPositionBuilderAtEnd(v->b, w2.join);
  }
  LLVMBuildBr(v->b, w.join);
  LLVMPositionBuilderAtEnd(v->b, w.join);
}

static LLVMValueRef emit_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
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

static void emit_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
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

/* ---- OpenCL vectors left whole: elements and accesses ---------------------------------------- */

static void add_group(struct vec *v, struct access_group *g);
static int64_t root_element_size(struct vec *v, LLVMValueRef root);

/* Element k of a vector value, as a <W x T> vector. */
static LLVMValueRef packet_element(struct vec *v, LLVMValueRef val, unsigned k) {
  LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(val));
  if (LLVMIsAInstruction(val)) {
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (i && i->packet) {
      if (i->elems && k < i->num_elems && i->elems[k]) return i->elems[k];
      fail(v, VECTORIZE_UNSUPPORTED, "internal: an element of a vector not yet built", val);
      return LLVMGetPoison(vector_of(v, et));
    }
  }
  if (LLVMIsPoison(val) || LLVMIsUndef(val)) return LLVMGetPoison(vector_of(v, et));
  if (LLVMIsAConstant(val) && !LLVMIsAGlobalValue(val)) {
    LLVMValueRef e = LLVMGetAggregateElement(val, k);
    return e && !LLVMIsUndef(e) ? const_splat(v, e) : LLVMGetPoison(vector_of(v, et));
  }
  /* A uniform vector: the element, then splat. */
  LLVMValueRef e = LLVMBuildExtractElement(v->b, scalar_of(v, val), LLVMConstInt(v->i32, k, 0), "");
  return splat(v, v->b, e);
}

/* The <W x i1> (or scalar i1, when uniform) condition of element k of a
 * select's condition, which is an i1 or an <N x i1>. */
static LLVMValueRef packet_condition(struct vec *v, LLVMValueRef c, unsigned k) {
  if (LLVMGetTypeKind(LLVMTypeOf(c)) == LLVMVectorTypeKind) {
    if (is_uniform(v, c))
      return LLVMBuildExtractElement(v->b, scalar_of(v, c), LLVMConstInt(v->i32, k, 0), "");
    return packet_element(v, c, k);
  }
  return is_uniform(v, c) ? scalar_of(v, c) : vector_of_value(v, c);
}

static LLVMValueRef safe_division(struct vec *v, LLVMBuilderRef b, LLVMOpcode op, LLVMValueRef a,
                                  LLVMValueRef d, LLVMTypeRef t);
static LLVMValueRef emit_vector_intrinsic_on(struct vec *v, LLVMValueRef in, int element);

/* Element k of bitcast(x) to <n x et>, where x has n, n / 2^j or n * 2^j
 * elements: the same element, the bits of several elements of x joined
 * (lowest element in the low bits), or a part of one element's bits. */
static LLVMValueRef source_element(struct vec *v, LLVMValueRef x, unsigned i) {
  return LLVMGetTypeKind(LLVMTypeOf(x)) == LLVMVectorTypeKind ? packet_element(v, x, i)
                                                              : vector_of_value(v, x);
}

static LLVMValueRef packet_bitcast(struct vec *v, LLVMValueRef x, LLVMTypeRef et, unsigned n,
                                   unsigned k) {
  LLVMTypeRef from = LLVMTypeOf(x);
  int from_vector = LLVMGetTypeKind(from) == LLVMVectorTypeKind;
  LLVMTypeRef ft = from_vector ? LLVMGetElementType(from) : from;
  unsigned m = from_vector ? LLVMGetVectorSize(from) : 1;
  unsigned fbits = (unsigned)LLVMSizeOfTypeInBits(v->td, ft),
           tbits = (unsigned)LLVMSizeOfTypeInBits(v->td, et);
  if (m == n) return LLVMBuildBitCast(v->b, source_element(v, x, k), vector_of(v, et), "");
  LLVMTypeRef fi = vector_of(v, LLVMIntTypeInContext(v->ctx, fbits));
  LLVMTypeRef ti = vector_of(v, LLVMIntTypeInContext(v->ctx, tbits));
  if (m > n) {
    /* Joining r = m / n elements of x into one. */
    unsigned r = m / n;
    LLVMValueRef acc = NULL;
    for (unsigned j = 0; j < r; j++) {
      /* An element may be poison (the fourth of a vload3's <4 x T>), and
       * its bits alone must stay undefined: or-ing a poison part in would
       * make the whole joined value poison. */
      LLVMValueRef e = source_element(v, x, k * r + j);
      if (LLVMIsPoison(e) || LLVMIsUndef(e))
        e = LLVMConstNull(LLVMTypeOf(e));
      else if (!LLVMIsAConstant(e))
        e = LLVMBuildFreeze(v->b, e, "");
      LLVMValueRef part = LLVMBuildBitCast(v->b, e, fi, "");
      part = LLVMBuildZExt(v->b, part, ti, "");
      if (j)
        part = LLVMBuildShl(v->b, part,
                            const_splat(v, LLVMConstInt(LLVMGetElementType(ti), j * fbits, 0)), "");
      acc = acc ? LLVMBuildOr(v->b, acc, part, "") : part;
    }
    return LLVMBuildBitCast(v->b, acc, vector_of(v, et), "");
  }
  /* A part of one element of x: element k / r, bits (k % r) * tbits up. */
  unsigned r = n / m;
  LLVMValueRef whole = LLVMBuildBitCast(v->b, source_element(v, x, k / r), fi, "");
  if (k % r)
    whole = LLVMBuildLShr(
        v->b, whole, const_splat(v, LLVMConstInt(LLVMGetElementType(fi), (k % r) * tbits, 0)), "");
  return LLVMBuildBitCast(v->b, LLVMBuildTrunc(v->b, whole, ti, ""), vector_of(v, et), "");
}

/* An operation on OpenCL vectors, element by element. */
static void emit_packet(struct vec *v, LLVMValueRef in, struct vinfo *i) {
  LLVMTypeRef t = LLVMTypeOf(in), et = LLVMGetElementType(t);
  unsigned n = LLVMGetVectorSize(t);
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  i->num_elems = n;
  i->elems = xcalloc(n, sizeof *i->elems);
  for (unsigned k = 0; k < n && v->status == VECTORIZE_OK; k++) {
    LLVMValueRef r = NULL;
    switch (op) {
    case LLVMInsertElement: {
      LLVMValueRef idx = LLVMGetOperand(in, 2);
      LLVMValueRef old = packet_element(v, LLVMGetOperand(in, 0), k);
      LLVMValueRef x = vector_of_value(v, LLVMGetOperand(in, 1));
      if (LLVMIsAConstantInt(idx)) {
        r = LLVMConstIntGetZExtValue(idx) == k ? x : old;
      } else {
        LLVMValueRef at = is_uniform(v, idx) ? scalar_of(v, idx) : vector_of_value(v, idx);
        LLVMTypeRef it = LLVMTypeOf(at);
        LLVMValueRef kk = LLVMGetTypeKind(it) == LLVMVectorTypeKind
                              ? const_splat(v, LLVMConstInt(LLVMGetElementType(it), k, 0))
                              : LLVMConstInt(it, k, 0);
        r = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntEQ, at, kk, ""), x, old, "");
      }
      break;
    }
    case LLVMShuffleVector: {
      int m = LLVMGetMaskValue(in, k);
      unsigned na = LLVMGetVectorSize(LLVMTypeOf(LLVMGetOperand(in, 0)));
      if (m < 0)
        r = LLVMGetPoison(vector_of(v, et));
      else if ((unsigned)m < na)
        r = packet_element(v, LLVMGetOperand(in, 0), (unsigned)m);
      else
        r = packet_element(v, LLVMGetOperand(in, 1), (unsigned)m - na);
      break;
    }
    case LLVMSelect:
      r = LLVMBuildSelect(v->b, packet_condition(v, LLVMGetOperand(in, 0), k),
                          packet_element(v, LLVMGetOperand(in, 1), k),
                          packet_element(v, LLVMGetOperand(in, 2), k), "");
      break;
    case LLVMFreeze:
      r = LLVMBuildFreeze(v->b, packet_element(v, LLVMGetOperand(in, 0), k), "");
      break;
    case LLVMICmp:
      r = LLVMBuildICmp(v->b, LLVMGetICmpPredicate(in), packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), "");
      break;
    case LLVMFCmp:
      r = LLVMBuildFCmp(v->b, LLVMGetFCmpPredicate(in), packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), "");
      break;
    case LLVMFNeg:
      r = LLVMBuildFNeg(v->b, packet_element(v, LLVMGetOperand(in, 0), k), "");
      copy_safe_fmf(in, r);
      break;
    case LLVMUDiv:
    case LLVMSDiv:
    case LLVMURem:
    case LLVMSRem:
      r = safe_division(v, v->b, op, packet_element(v, LLVMGetOperand(in, 0), k),
                        packet_element(v, LLVMGetOperand(in, 1), k), et);
      break;
    case LLVMBitCast:
      r = packet_bitcast(v, LLVMGetOperand(in, 0), et, n, k);
      break;
    case LLVMTrunc:
    case LLVMZExt:
    case LLVMSExt:
    case LLVMFPToUI:
    case LLVMFPToSI:
    case LLVMUIToFP:
    case LLVMSIToFP:
    case LLVMFPTrunc:
    case LLVMFPExt:
      r = LLVMBuildCast(v->b, op, packet_element(v, LLVMGetOperand(in, 0), k), vector_of(v, et),
                        "");
      break;
    case LLVMCall:
      r = emit_vector_intrinsic_on(v, in, (int)k);
      break;
    default: /* the remaining binary operators */
      r = LLVMBuildBinOp(v->b, op, packet_element(v, LLVMGetOperand(in, 0), k),
                         packet_element(v, LLVMGetOperand(in, 1), k), "");
      copy_safe_fmf(in, r);
      break;
    }
    i->elems[k] = r;
  }
}

/* A vector load whose elements are used one by one: the lanes' vectors
 * as one wide access, like an access group of the vector's elements. */
static struct access_group *emit_packet_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  LLVMTypeRef vt = LLVMTypeOf(in), et = LLVMGetElementType(vt);
  unsigned n = LLVMGetVectorSize(vt);
  LLVMValueRef addr = LLVMGetOperand(in, 0);
  struct access_group *g = xcalloc(1, sizeof *g);
  add_group(v, g);
  g->root = addr;
  g->type = et;
  g->size = alloc_size(v, et);
  g->align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
  g->last = in;
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_RUNS && s.stride == 0 && !mask && !LLVMGetVolatile(in)) {
    /* One vector per row: a load each, its elements broadcast over the row. */
    LLVMValueRef start[2] = {scalar_of(v, addr), hi_of(v, addr)}, part[2];
    for (unsigned k = 0; k < 2; k++) {
      part[k] = LLVMBuildLoad2(v->b, vt, start[k], "");
      LLVMSetAlignment(part[k], g->align);
      copy_memory_metadata(v, in, part[k]);
    }
    g->emitted = 1;
    g->members = n;
    for (unsigned k = 0; k < n; k++) {
      LLVMValueRef e[2];
      for (unsigned r = 0; r < 2; r++)
        e[r] =
            splat(v, v->b, LLVMBuildExtractElement(v->b, part[r], LLVMConstInt(v->i32, k, 0), ""));
      g->result[k] = join_halves(v, v->b, e[0], e[1]);
    }
    return g;
  }
  int64_t stride = s.kind == K_AFFINE || s.kind == K_RUNS ? s.stride : (int64_t)n * g->size;
  int element_known = root_element_size(v, addr) == stride;
  if (stride > 0 && stride % g->size == 0 && stride / g->size <= MAX_MEMBERS &&
      (stride == (int64_t)n * g->size || element_known)) {
    g->stride = stride;
    g->members = (unsigned)(stride / g->size);
    for (unsigned k = 0; k < n; k++)
      g->member[k] = in;
    emit_group_load(v, g, mask);
    return g;
  }
  /* Elements of lanes that are apart: a gather each. */
  g->emitted = 1;
  g->members = n;
  LLVMValueRef ptrs = vector_of_value(v, addr);
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    g->result[k] =
        gather(v, et, k ? LLVMBuildGEP2(v->b, v->i8, ptrs, &off, 1, "") : ptrs, g->align, mask);
  }
  return g;
}

static void emit_packet_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask) {
  LLVMValueRef val = LLVMGetOperand(in, 0), addr = LLVMGetOperand(in, 1);
  LLVMTypeRef vt = LLVMTypeOf(val), et = LLVMGetElementType(vt);
  unsigned n = LLVMGetVectorSize(vt);
  unsigned align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
  LLVMValueRef parts[MAX_MEMBERS] = {0};
  for (unsigned k = 0; k < n; k++)
    parts[k] = packet_element(v, val, k);
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_UNIFORM) {
    /* One place for all lanes: the last active lane's vector stays. */
    LLVMValueRef last = last_lane(v, v->b, mask), x = LLVMGetPoison(vt);
    for (unsigned k = 0; k < n; k++)
      x = LLVMBuildInsertElement(v->b, x, LLVMBuildExtractElement(v->b, parts[k], last, ""),
                                 LLVMConstInt(v->i32, k, 0), "");
    LLVMValueRef st = LLVMBuildStore(v->b, x, scalar_of(v, addr));
    LLVMSetAlignment(st, align);
    copy_memory_metadata(v, in, st);
    return;
  }
  struct access_group *g = xcalloc(1, sizeof *g);
  add_group(v, g);
  g->root = addr;
  g->type = et;
  g->size = alloc_size(v, et);
  g->align = align;
  g->last = in;
  int64_t stride = s.kind == K_AFFINE || s.kind == K_RUNS ? s.stride : (int64_t)n * g->size;
  if (stride > 0 && stride % g->size == 0 && stride / g->size <= MAX_MEMBERS &&
      (stride == (int64_t)n * g->size || v->isa == 'e')) {
    g->stride = stride;
    g->members = (unsigned)(stride / g->size);
    for (unsigned k = 0; k < n; k++)
      g->member[k] = in;
    emit_group_store(v, g, mask, parts);
    return;
  }
  g->emitted = 1;
  LLVMValueRef ptrs = vector_of_value(v, addr);
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)(k * g->size), 0);
    scatter(v, parts[k], k ? LLVMBuildGEP2(v->b, v->i8, ptrs, &off, 1, "") : ptrs, align, mask);
  }
}

/* ---- access groups ------------------------------------------------------------------------ */

/* addr as root + constant byte offset, looking through one GEP. */
static void split_address(struct vec *v, LLVMValueRef addr, LLVMValueRef *root, int64_t *off) {
  *root = addr;
  *off = 0;
  if (!LLVMIsAGetElementPtrInst(addr) || LLVMGetNumOperands(addr) != 2) return;
  LLVMValueRef idx = LLVMGetOperand(addr, 1);
  if (!LLVMIsAConstantInt(idx)) return;
  *root = LLVMGetOperand(addr, 0);
  *off = LLVMConstIntGetSExtValue(idx) * alloc_size(v, LLVMGetGEPSourceElementType(addr));
}

/* The bytes per element that root steps over, from how it was computed, or 0. */
static int64_t root_element_size(struct vec *v, LLVMValueRef root) {
  if (!LLVMIsAGetElementPtrInst(root) || LLVMGetNumOperands(root) != 2) return 0;
  return alloc_size(v, LLVMGetGEPSourceElementType(root));
}

/* An index as root + c: through additions of constants (add, or of
 * disjoint bits) and the extensions and masks that shape_of_value takes as
 * affine when no lane wraps (the same assumption). root is NULL for a
 * constant index. */
static LLVMValueRef index_root(LLVMValueRef idx, int64_t *c) {
  *c = 0;
  for (int depth = 0; depth < 8; depth++) {
    if (LLVMIsAConstantInt(idx)) {
      *c += LLVMConstIntGetSExtValue(idx);
      return NULL;
    }
    if (!LLVMIsAInstruction(idx)) return idx;
    LLVMOpcode op = LLVMGetInstructionOpcode(idx);
    if (op == LLVMZExt || op == LLVMSExt) {
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    LLVMValueRef k = LLVMGetNumOperands(idx) == 2 ? LLVMGetOperand(idx, 1) : NULL;
    if (!k || !LLVMIsAConstantInt(k) || LLVMGetIntTypeWidth(LLVMTypeOf(k)) > 64) return idx;
    if (op == LLVMAdd || (op == LLVMOr && LLVMGetIsDisjoint(idx))) {
      *c += LLVMConstIntGetSExtValue(k);
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    uint64_t m = LLVMConstIntGetZExtValue(k);
    if (op == LLVMAnd && m >= 0xffffffffull && (m & (m + 1)) == 0) {
      idx = LLVMGetOperand(idx, 0);
      continue;
    }
    return idx;
  }
  return idx;
}

/* addr as a GEP whose last index is root + c and whose other indices are
 * constant: the accesses lds[8 * me + k] for k = 0 .. 7 (FFT butterflies
 * writing __local memory; after inlining, lds[zext(shl(me, 3) | k)]) share
 * *ptr and *index and lie *offset bytes apart. 0 when addr is not such a GEP. */
static int index_key(struct vec *v, LLVMValueRef addr, LLVMValueRef *ptr, LLVMValueRef *index,
                     int64_t *offset) {
  if (!LLVMIsAGetElementPtrInst(addr)) return 0;
  unsigned n = (unsigned)LLVMGetNumOperands(addr);
  if (n < 2) return 0;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(addr);
  int64_t off = 0;
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(addr, i);
    if (i > 1) {
      LLVMTypeKind k = LLVMGetTypeKind(t);
      if (k == LLVMStructTypeKind) {
        if (!LLVMIsAConstantInt(idx)) return 0;
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        off += (int64_t)LLVMOffsetOfElement(v->td, t, field);
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      if (k != LLVMArrayTypeKind) return 0;
      t = LLVMGetElementType(t);
    }
    if (i + 1 < n) {
      if (!LLVMIsAConstantInt(idx)) return 0;
      off += LLVMConstIntGetSExtValue(idx) * alloc_size(v, t);
      continue;
    }
    int64_t c;
    LLVMValueRef root = index_root(idx, &c);
    if (!root) return 0;
    *ptr = LLVMGetOperand(addr, 0);
    *index = root;
    *offset = off + c * alloc_size(v, t);
    return 1;
  }
  return 0;
}

static int groupable(struct vec *v, LLVMValueRef in) {
  int is_load = LLVMIsALoadInst(in) != NULL;
  if (!is_load && !LLVMIsAStoreInst(in)) return 0;
  if (LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) return 0;
  LLVMValueRef addr = LLVMGetOperand(in, is_load ? 0 : 1);
  struct shape s = shape_of_value(v, addr);
  if (s.kind == K_UNIFORM) return 0;
  LLVMTypeRef t = is_load ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, 0));
  if (!is_scalar_type(t) || (int64_t)LLVMStoreSizeOfType(v->td, t) != alloc_size(v, t)) return 0;
  /* Lanes walking down are served by a reversed vector. */
  if (s.kind == K_AFFINE && s.stride < 0) return 0;
  /* So are two runs walking down; one address per row is loaded once per
   * row (emit_load). */
  if (s.kind == K_RUNS && s.stride <= 0) return 0;
  /* A lane's copy of a lane-interleaved private array is not contiguous:
   * the element k bytes past a varying address is W * k bytes further on,
   * not k (private_array_gep), so its members are no group. */
  if (s.kind == K_VARYING && is_private_array_ptr(v, addr)) return 0;
  return 1;
}

static void close_groups(struct vec *v, struct access_group **open, unsigned *num_open,
                         int stores) {
  unsigned k = 0;
  for (unsigned i = 0; i < *num_open; i++)
    if (open[i]->is_store != stores) open[k++] = open[i];
  *num_open = k;
}

static void add_group(struct vec *v, struct access_group *g) {
  if (v->num_groups == v->cap_groups) {
    v->cap_groups = v->cap_groups ? 2 * v->cap_groups : 64;
    v->groups = realloc(v->groups, v->cap_groups * sizeof *v->groups);
    if (!v->groups) abort();
  }
  v->groups[v->num_groups++] = g;
}

/* Finds the access groups of block b: accesses through the same root at
 * constant offsets, with no other memory access between them that could
 * see the difference (a store between loads, any access between stores). */
static void find_groups(struct vec *v, int b) {
  struct access_group *open[64];
  unsigned num_open = 0;
  LLVMBasicBlockRef bb = v->g.blocks[b];
  for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
    LLVMOpcode op = LLVMGetInstructionOpcode(in);
    int is_load = op == LLVMLoad, is_store = op == LLVMStore;
    if (!groupable(v, in)) {
      if (is_load)
        close_groups(v, open, &num_open, 1);
      else if (is_store || op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg || op == LLVMFence)
        num_open = 0;
      else if (op == LLVMCall) {
        enum call_class cc = classify_call(in);
        if (cc == CALL_PER_LANE || cc == CALL_BARRIER || cc == CALL_UNKNOWN) num_open = 0;
      }
      continue;
    }
    /* A store ends the load groups (later loads must see it); a load ends
     * the store groups (it must see the stores before it). */
    close_groups(v, open, &num_open, is_store ? 0 : 1);
    LLVMValueRef addr = LLVMGetOperand(in, is_load ? 0 : 1), root;
    int64_t off;
    split_address(v, addr, &root, &off);
    LLVMTypeRef t = is_load ? LLVMTypeOf(in) : LLVMTypeOf(LLVMGetOperand(in, 0));
    int64_t size = alloc_size(v, t);
    struct shape rs = shape_of_value(v, root);
    if (rs.kind == K_UNIFORM || ((rs.kind == K_AFFINE || rs.kind == K_RUNS) && rs.stride <= 0)) {
      root = addr;
      off = 0;
      rs = shape_of_value(v, root);
    }
    /* No root at a constant offset: maybe one index apart from other
     * accesses (then the group's root is its first member's address). */
    LLVMValueRef key_ptr = NULL, key_index = NULL;
    int64_t key_offset = 0;
    if (root == addr && rs.kind == K_AFFINE &&
        !index_key(v, addr, &key_ptr, &key_index, &key_offset))
      key_ptr = key_index = NULL;
    struct access_group *g = NULL;
    for (unsigned i = 0; i < num_open && !g; i++) {
      if (key_index && open[i]->key_index == key_index && open[i]->key_ptr == key_ptr &&
          open[i]->type == t) {
        int64_t rel = key_offset - open[i]->key_offset;
        if (rel >= 0 && rel < open[i]->stride && rel % size == 0 && !open[i]->member[rel / size]) {
          g = open[i];
          off = rel;
          root = g->root;
        }
        continue;
      }
      if (open[i]->root == root && open[i]->type == t && off >= 0 && off < open[i]->stride &&
          off % size == 0 && !open[i]->member[off / size])
        g = open[i];
    }
    if (!g) {
      /* A varying root's element size is settled once all members are known. */
      int64_t stride = rs.kind == K_AFFINE || rs.kind == K_RUNS ? rs.stride : size * MAX_MEMBERS;
      if (off < 0 || off % size || stride % size || stride / size > MAX_MEMBERS || off >= stride)
        continue;
      g = xcalloc(1, sizeof *g);
      g->root = root;
      g->is_store = is_store;
      g->stride = stride;
      g->size = size;
      g->type = t;
      g->members = (unsigned)(stride / size);
      g->element_known = root_element_size(v, root) == stride;
      g->align = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
      g->key_ptr = key_ptr;
      g->key_index = key_index;
      g->key_offset = key_offset;
      add_group(v, g);
      if (num_open == 64) num_open = 0;
      open[num_open++] = g;
    }
    g->member[off / size] = in;
    g->last = in;
    unsigned a = LLVMGetAlignment(in) ? LLVMGetAlignment(in) : 1;
    if (a < g->align) g->align = a;
    ptr_map_put(&v->group_of, in, g);
  }
}

/* Drops groups that would read memory no lane reads: a gap is only read
 * when the element is known to span it. */
static void settle_groups(struct vec *v, size_t from) {
  for (size_t i = from; i < v->num_groups; i++) {
    struct access_group *g = v->groups[i];
    if (shape_of_value(v, g->root).kind == K_VARYING) {
      /* The element: what the root's GEP steps over, or at least the
       * members' span (consecutive() checks the guess at run time). */
      unsigned last = 0;
      for (unsigned k = 0; k < g->members; k++)
        if (g->member[k]) last = k;
      int64_t span = (int64_t)(last + 1) * g->size, element = root_element_size(v, g->root);
      g->stride = element > span && element % g->size == 0 && element / g->size <= MAX_MEMBERS
                      ? element
                      : span;
      g->members = (unsigned)(g->stride / g->size);
      g->element_known = element == g->stride;
    }
    unsigned present = 0;
    for (unsigned k = 0; k < g->members; k++)
      present += g->member[k] != NULL;
    int keep = present == g->members || (!g->is_store && g->element_known);
    /* Stores with gaps leave them out by mask: cheap with AVX-512 only. */
    if (g->is_store && present * 2 >= g->members && v->isa == 'e') keep = 1;
    /* A lone strided access moves W * stride bytes for W elements: only
     * worth it when the element is small. */
    if (present == 1 && g->members > 4) keep = 0;
    if (keep) continue;
    for (unsigned k = 0; k < g->members; k++)
      if (g->member[k]) ptr_map_put(&v->group_of, g->member[k], NULL);
  }
}

/* ---- one lane at a time ------------------------------------------------------------------ */

/* Runs in (an atomic, a call) once per lane, lane after lane: only lanes
 * on in mask unless all_lanes. Returns the vector of results (NULL for
 * void); a result of an OpenCL vector type goes to elems instead, one
 * vector per element. Emission continues in a new block. */
static LLVMValueRef emit_per_lane(struct vec *v, LLVMValueRef in, LLVMValueRef mask, int all_lanes,
                                  LLVMValueRef *elems) {
  LLVMValueRef fn = v->vfn;
  LLVMBasicBlockRef from = LLVMGetInsertBlock(v->b);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.on");
  LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.next");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(v->ctx, fn, "lane.done");
  LLVMTypeRef t = LLVMTypeOf(in);
  int has_result = LLVMGetTypeKind(t) != LLVMVoidTypeKind;
  int vec_result = has_result && LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  unsigned nres = vec_result ? LLVMGetVectorSize(t) : 1;
  LLVMTypeRef vt = has_result ? vector_of(v, vec_result ? LLVMGetElementType(t) : t) : NULL;
  /* Operands: vectors made before the loop (an OpenCL vector operand: one
   * per element). */
  int n = LLVMGetNumOperands(in);
  LLVMValueRef **ops = xcalloc((size_t)n, sizeof *ops);
  unsigned char *per_lane = xcalloc((size_t)n, 1);
  int is_call = LLVMIsACallInst(in) != NULL;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    LLVMTypeRef ot = LLVMTypeOf(o);
    int vec = LLVMGetTypeKind(ot) == LLVMVectorTypeKind;
    unsigned parts = vec ? LLVMGetVectorSize(ot) : 1;
    ops[k] = xcalloc(parts, sizeof *ops[k]);
    if ((is_call && k == n - 1) || is_uniform(v, o)) {
      ops[k][0] = is_call && k == n - 1 ? o : scalar_of(v, o); /* the callee, or uniform */
      continue;
    }
    per_lane[k] = 1;
    for (unsigned e = 0; e < parts; e++)
      ops[k][e] = LLVMBuildFreeze(v->b, vec ? packet_element(v, o, e) : vector_of_value(v, o), "");
  }
  LLVMBuildBr(v->b, head);

  LLVMPositionBuilderAtEnd(v->b, head);
  LLVMValueRef lane = LLVMBuildPhi(v->b, v->i32, "lane");
  LLVMValueRef acc[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++)
    acc[e] = LLVMBuildPhi(v->b, vt, "lanes");
  LLVMValueRef on = all_lanes || !mask ? LLVMConstInt(v->i1, 1, 0)
                                       : LLVMBuildExtractElement(v->b, mask, lane, "");
  LLVMBuildCondBr(v->b, on, body, next);

  LLVMPositionBuilderAtEnd(v->b, body);
  LLVMValueRef c = LLVMInstructionClone(in);
  for (int k = 0; k < n; k++) {
    LLVMValueRef x = ops[k][0];
    if (per_lane[k]) {
      LLVMTypeRef ot = LLVMTypeOf(LLVMGetOperand(in, (unsigned)k));
      if (LLVMGetTypeKind(ot) == LLVMVectorTypeKind) {
        x = LLVMGetPoison(ot);
        for (unsigned e = 0; e < LLVMGetVectorSize(ot); e++)
          x = LLVMBuildInsertElement(v->b, x, LLVMBuildExtractElement(v->b, ops[k][e], lane, ""),
                                     LLVMConstInt(v->i32, e, 0), "");
      } else {
        x = LLVMBuildExtractElement(v->b, ops[k][0], lane, "");
      }
    }
    LLVMSetOperand(c, (unsigned)k, x);
  }
  LLVMInsertIntoBuilder(v->b, c);
  LLVMValueRef acc_on[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++) {
    LLVMValueRef x =
        vec_result ? LLVMBuildExtractElement(v->b, c, LLVMConstInt(v->i32, e, 0), "") : c;
    acc_on[e] = LLVMBuildInsertElement(v->b, acc[e], x, lane, "");
  }
  LLVMBuildBr(v->b, next);

  LLVMPositionBuilderAtEnd(v->b, next);
  LLVMValueRef acc_next[MAX_MEMBERS] = {0};
  for (unsigned e = 0; has_result && e < nres; e++) {
    acc_next[e] = LLVMBuildPhi(v->b, vt, "");
    LLVMValueRef in_vals[2] = {acc_on[e], acc[e]};
    LLVMBasicBlockRef in_blocks[2] = {body, head};
    LLVMAddIncoming(acc_next[e], in_vals, in_blocks, 2);
  }
  LLVMValueRef lane_next = LLVMBuildAdd(v->b, lane, LLVMConstInt(v->i32, 1, 0), "");
  LLVMBuildCondBr(v->b,
                  LLVMBuildICmp(v->b, LLVMIntULT, lane_next, LLVMConstInt(v->i32, v->W, 0), ""),
                  head, done);
  LLVMValueRef lane_in[2] = {LLVMConstInt(v->i32, 0, 0), lane_next};
  LLVMBasicBlockRef lane_from[2] = {from, next};
  LLVMAddIncoming(lane, lane_in, lane_from, 2);
  for (unsigned e = 0; has_result && e < nres; e++) {
    LLVMValueRef acc_in[2] = {LLVMGetPoison(vt), acc_next[e]};
    LLVMAddIncoming(acc[e], acc_in, lane_from, 2);
  }
  LLVMPositionBuilderAtEnd(v->b, done);
  for (int k = 0; k < n; k++)
    free(ops[k]);
  free(ops);
  free(per_lane);
  if (vec_result) {
    for (unsigned e = 0; e < nres; e++)
      elems[e] = acc_next[e];
    return NULL;
  }
  return has_result ? acc_next[0] : NULL;
}

/* ---- calls -------------------------------------------------------------------------------- */

/* A call of an intrinsic with a vector form, on vectors: element -1 for a
 * scalar intrinsic on varying values, k for element k of an intrinsic on
 * OpenCL vectors. */
static LLVMValueRef emit_vector_intrinsic_on(struct vec *v, LLVMValueRef in, int element) {
  const char *name = callee_name(in);
  const struct vector_intrinsic *vi = find_vector_intrinsic(name);
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
  LLVMValueRef args[8];
  if (nargs > 8) {
    fail(v, VECTORIZE_UNSUPPORTED, "an intrinsic with too many arguments", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
  for (unsigned k = 0; k < nargs; k++) {
    LLVMValueRef o = LLVMGetOperand(in, k);
    if (vi->scalar_args >> k & 1)
      args[k] = scalar_of(v, o);
    else if (element >= 0 && LLVMGetTypeKind(LLVMTypeOf(o)) == LLVMVectorTypeKind)
      args[k] = packet_element(v, o, (unsigned)element);
    else
      args[k] = vector_of_value(v, o);
  }
  LLVMTypeRef types[2];
  unsigned nt = 0;
  LLVMTypeRef rt = LLVMTypeOf(in);
  if (element >= 0) rt = LLVMGetElementType(rt);
  switch (vi->overload) {
  case OV_RET:
    types[nt++] = vector_of(v, rt);
    break;
  case OV_RET_ARG1:
    types[nt++] = vector_of(v, rt);
    types[nt++] = LLVMTypeOf(args[1]);
    break;
  case OV_ARG0:
    types[nt++] = LLVMTypeOf(args[0]);
    break;
  case OV_RET_ARG0:
    types[nt++] = vector_of(v, rt);
    types[nt++] = LLVMTypeOf(args[0]);
    break;
  }
  char base[64];
  snprintf(base, sizeof base, "%s", vi->name);
  LLVMValueRef r = call_intrinsic(v, v->b, base, types, nt, args, nargs);
  copy_safe_fmf(in, r);
  return r;
}

/* A libm call as calls of glibc's vector variants, as wide as the ISA has
 * them, on pieces of the vector. */
static LLVMValueRef emit_libm(struct vec *v, LLVMValueRef in) {
  int is_float;
  char base[16];
  int arity = libm_function(callee_name(in), &is_float, base);
  LLVMTypeRef t = LLVMTypeOf(in);
  unsigned bits = v->isa == 'e' ? 512 : v->isa == 'd' ? 256 : 128;
  unsigned elem_bits = is_float ? 32 : 64;
  /* The widest variant the ISA has, but no wider than the vector: a
   * narrower vector on an AVX-512 machine takes the AVX2 or SSE one. */
  while (bits > 128 && bits / elem_bits > v->W)
    bits /= 2;
  unsigned piece = bits / elem_bits;
  if (piece > v->W) piece = v->W;
  char isa = bits == 512 ? 'e' : bits == 256 ? 'd' : 'b';
  char name[64];
  char vlen[8];
  snprintf(vlen, sizeof vlen, "%u", piece);
  snprintf(name, sizeof name, "_ZGV%cN%s%s_%s%s", isa, vlen, arity == 1 ? "v" : "vv", base,
           is_float ? "f" : "");
  LLVMTypeRef pt = LLVMVectorType(t, piece);
  LLVMTypeRef params[2] = {pt, pt};
  LLVMTypeRef ft = LLVMFunctionType(pt, params, (unsigned)arity, 0);
  LLVMValueRef f = LLVMGetNamedFunction(v->m, name);
  if (!f) {
    f = LLVMAddFunction(v->m, name, ft);
    LLVMAddAttributeAtIndex(
        f, LLVMAttributeFunctionIndex,
        LLVMCreateEnumAttribute(v->ctx, LLVMGetEnumAttributeKindForName("nounwind", 8), 0));
  }
  LLVMValueRef x[2];
  for (int k = 0; k < arity; k++)
    x[k] = vector_of_value(v, LLVMGetOperand(in, (unsigned)k));
  LLVMValueRef result = NULL;
  for (unsigned at = 0; at < v->W; at += piece) {
    LLVMValueRef idx[64];
    for (unsigned i = 0; i < piece; i++)
      idx[i] = LLVMConstInt(v->i32, at + i, 0);
    LLVMValueRef sel = LLVMConstVector(idx, piece);
    LLVMValueRef args[2];
    for (int k = 0; k < arity; k++)
      args[k] = piece == v->W
                    ? x[k]
                    : LLVMBuildShuffleVector(v->b, x[k], LLVMGetPoison(LLVMTypeOf(x[k])), sel, "");
    LLVMValueRef r = LLVMBuildCall2(v->b, ft, f, args, (unsigned)arity, "");
    if (piece == v->W) return r;
    /* Put the piece in place: widen it, then blend. */
    LLVMValueRef widen_idx[64], blend_idx[64];
    for (unsigned i = 0; i < v->W; i++) {
      widen_idx[i] =
          i >= at && i < at + piece ? LLVMConstInt(v->i32, i - at, 0) : LLVMGetPoison(v->i32);
      blend_idx[i] = LLVMConstInt(v->i32, i >= at && i < at + piece ? v->W + i : i, 0);
    }
    LLVMValueRef wide =
        LLVMBuildShuffleVector(v->b, r, LLVMGetPoison(pt), LLVMConstVector(widen_idx, v->W), "");
    result = result
                 ? LLVMBuildShuffleVector(v->b, result, wide, LLVMConstVector(blend_idx, v->W), "")
                 : wide;
  }
  return result;
}

/* ---- instructions -------------------------------------------------------------------------- */

static LLVMValueRef clone_uniform(struct vec *v, LLVMValueRef in) {
  LLVMValueRef c = LLVMInstructionClone(in);
  int n = LLVMGetNumOperands(in);
  int is_call = LLVMIsACallInst(in) != NULL;
  for (int k = 0; k < n; k++) {
    LLVMValueRef o = LLVMGetOperand(in, (unsigned)k);
    if (!o || LLVMIsABasicBlock(o) || (is_call && k == n - 1)) continue;
    LLVMValueRef s = scalar_of(v, o);
    if (s != o) LLVMSetOperand(c, (unsigned)k, s);
  }
  LLVMInsertIntoBuilder(v->b, c);
  size_t len;
  const char *name = LLVMGetValueName2(in, &len);
  if (len) LLVMSetValueName2(c, name, len);
  return c;
}

/* The byte offset a GEP adds to its pointer, scalar (every index uniform)
 * or as a vector. */
static LLVMValueRef gep_byte_offset(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec) {
  LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
  LLVMTypeRef it = vec ? vector_of(v, v->i64) : v->i64;
  LLVMValueRef off = LLVMConstNull(it);
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  for (unsigned i = 1; i < n; i++) {
    LLVMValueRef idx = LLVMGetOperand(in, i);
    if (i > 1) {
      if (LLVMGetTypeKind(t) == LLVMStructTypeKind) {
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        unsigned long long at = LLVMOffsetOfElement(v->td, t, field);
        off = LLVMBuildAdd(
            b, off, vec ? const_splat(v, LLVMConstInt(v->i64, at, 0)) : LLVMConstInt(v->i64, at, 0),
            "");
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      t = LLVMGetElementType(t);
    }
    LLVMValueRef x = vec ? vector_of_value(v, idx) : scalar_of(v, idx);
    x = LLVMBuildSExtOrBitCast(b, x, it, "");
    LLVMValueRef size = LLVMConstInt(v->i64, (unsigned long long)alloc_size(v, t), 0);
    off = LLVMBuildAdd(b, off, LLVMBuildMul(b, x, vec ? const_splat(v, size) : size, ""), "");
  }
  return off;
}

/* A GEP into a lane-interleaved private array: offsets grow W times. */
static LLVMValueRef private_array_gep(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec) {
  /* The offset from the array's start, over the whole chain of GEPs, kept
   * inside the array: an index out of range (undefined in OpenCL, and
   * common enough: OpenCV's Canny overruns an 8-entry stack) then stays in
   * the work-item's own array instead of reaching the compute unit's
   * stack, return addresses included. */
  LLVMTypeRef it = vec ? vector_of(v, v->i64) : v->i64;
  LLVMValueRef total = LLVMConstNull(it), root = in;
  for (int depth = 0; depth < 32 && LLVMIsAGetElementPtrInst(root); depth++) {
    int varying = !is_uniform(v, root);
    LLVMValueRef off = gep_byte_offset(v, b, root, vec && varying);
    if (vec && !varying) off = splat(v, b, off);
    total = LLVMBuildAdd(b, total, off, "");
    root = LLVMGetOperand(root, 0);
  }
  int64_t size = alloc_size(v, LLVMGetAllocatedType(root));
  int64_t e = (intptr_t)ptr_map_get(&v->soa_size, root);
  LLVMValueRef last = LLVMConstInt(v->i64, (unsigned long long)(size - e), 0);
  LLVMValueRef w = LLVMConstInt(v->i64, v->W, 0);
  if (vec) {
    last = const_splat(v, last);
    w = const_splat(v, w);
  }
  total =
      LLVMBuildSelect(b, LLVMBuildICmp(b, LLVMIntULE, total, last, ""), total, last, "in.array");
  total = LLVMBuildMul(b, total, w, "");
  return LLVMBuildGEP2(b, v->i8, vec ? vector_of_value(v, root) : scalar_of(v, root), &total, 1,
                       "lane.elem");
}

/* Lane 0's value of an affine instruction, from its operands' lane-0
 * values, without flags that lanes other than 0 might violate. */
static LLVMValueRef affine_scalar(struct vec *v, LLVMValueRef in) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef r;
  switch (op) {
  case LLVMAlloca: {
    LLVMTypeRef t = LLVMGetAllocatedType(in);
    if (ptr_map_get(&v->soa_size, in)) {
      LLVMValueRef a = LLVMBuildAlloca(
          v->b, LLVMArrayType2(v->i8, (uint64_t)alloc_size(v, t) * v->W), "lanes.interleaved");
      unsigned align = LLVMGetAlignment(in);
      LLVMSetAlignment(a, align > 64 ? align : 64);
      return a;
    }
    LLVMValueRef a = LLVMBuildAlloca(
        v->b, LLVMArrayType2(v->i8, (uint64_t)lane_copy_size(v, in) * v->W), "lanes");
    unsigned align = LLVMGetAlignment(in);
    LLVMSetAlignment(a, align ? align : 16);
    return a;
  }
  case LLVMCall: /* __aquila_local_id(0) */
    return clone_uniform(v, in);
  case LLVMGetElementPtr: {
    unsigned n = (unsigned)LLVMGetNumOperands(in);
    LLVMValueRef ops[16];
    if (is_private_array_ptr(v, LLVMGetOperand(in, 0))) return private_array_gep(v, v->b, in, 0);
    if (n > 16) {
      fail(v, VECTORIZE_UNSUPPORTED, "a GEP with too many indices", in);
      return LLVMGetPoison(LLVMTypeOf(in));
    }
    for (unsigned k = 0; k < n; k++)
      ops[k] = scalar_of(v, LLVMGetOperand(in, k));
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(in), ops[0], ops + 1, n - 1, "");
  }
  case LLVMSelect:
    return LLVMBuildSelect(v->b, scalar_of(v, LLVMGetOperand(in, 0)),
                           scalar_of(v, LLVMGetOperand(in, 1)), scalar_of(v, LLVMGetOperand(in, 2)),
                           "");
  case LLVMFreeze:
    return LLVMBuildFreeze(v->b, scalar_of(v, LLVMGetOperand(in, 0)), "");
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    return LLVMBuildCast(v->b, op, scalar_of(v, LLVMGetOperand(in, 0)), LLVMTypeOf(in), "");
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr:
  case LLVMAnd:
  case LLVMURem: /* lanes within one block of the divisor: lane 0's remainder */
  case LLVMSRem:
    r = LLVMBuildBinOp(v->b, op, scalar_of(v, LLVMGetOperand(in, 0)),
                       scalar_of(v, LLVMGetOperand(in, 1)), "");
    return r;
  case LLVMAShr:
  case LLVMLShr: {
    /* The shift pair of an extension: lane 0's value from x's. */
    LLVMValueRef shl = LLVMGetOperand(in, 0);
    if (!LLVMIsAInstruction(shl) || LLVMGetInstructionOpcode(shl) != LLVMShl)
      return runs_start(v, in, 0);
    LLVMValueRef x =
        LLVMBuildShl(v->b, scalar_of(v, LLVMGetOperand(shl, 0)), LLVMGetOperand(shl, 1), "");
    return LLVMBuildBinOp(v->b, op, x, LLVMGetOperand(in, 1), "");
  }
  case LLVMXor:
  case LLVMUDiv:
  case LLVMSDiv:
    /* Of two runs that make one (their gap H strides): lane 0's value. */
    return runs_start(v, in, 0);
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "internal: an affine value of an unexpected kind", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
}

/* val's value in lane H, the first of the second run, in scalars. */
static LLVMValueRef hi_of(struct vec *v, LLVMValueRef val) {
  struct shape s = shape_of_value(v, val);
  LLVMValueRef lo = scalar_of(v, val);
  if (s.kind == K_RUNS) {
    if (!LLVMIsAInstruction(val)) return lo; /* x: both rows start there */
    struct vinfo *i = ptr_map_get(&v->info, val);
    if (!i || !i->scalar_hi) {
      fail(v, VECTORIZE_UNSUPPORTED, "internal: no second run for", val);
      return LLVMGetPoison(LLVMTypeOf(val));
    }
    return i->scalar_hi;
  }
  if (s.kind != K_AFFINE) return lo;
  int64_t step = (int64_t)v->H * s.stride;
  if (LLVMGetTypeKind(LLVMTypeOf(lo)) == LLVMPointerTypeKind) {
    LLVMValueRef off = LLVMConstInt(v->i64, (unsigned long long)step, 1);
    return LLVMBuildGEP2(v->b, v->i8, lo, &off, 1, "");
  }
  return LLVMBuildAdd(v->b, lo, LLVMConstInt(LLVMTypeOf(lo), (unsigned long long)step, 1), "");
}

/* One run's start (lane 0's value, or with hi lane H's) of an instruction
 * of two runs: the operation on its operands' values in that lane, built
 * without flags that a lane that is off might violate. */
static LLVMValueRef runs_start(struct vec *v, LLVMValueRef in, int hi) {
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef ops[16];
  unsigned n = (unsigned)LLVMGetNumOperands(in);
  if (n > 16) {
    fail(v, VECTORIZE_UNSUPPORTED, "an instruction with too many operands", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
  LLVMValueRef shl = n == 2 ? LLVMGetOperand(in, 0) : NULL;
  if ((op == LLVMAShr || op == LLVMLShr) && LLVMIsAInstruction(shl) &&
      LLVMGetInstructionOpcode(shl) == LLVMShl && LLVMIsAConstantInt(LLVMGetOperand(shl, 1)) &&
      shape_of_value(v, shl).kind == K_VARYING) {
    /* The shift pair of an extension, whose shift left alone is varying:
     * from x's values (as affine_scalar). */
    LLVMValueRef x = LLVMGetOperand(shl, 0);
    x = LLVMBuildShl(v->b, hi ? hi_of(v, x) : scalar_of(v, x), LLVMGetOperand(shl, 1), "");
    return LLVMBuildBinOp(v->b, op, x, LLVMGetOperand(in, 1), "");
  }
  for (unsigned k = 0; k < n; k++)
    ops[k] = hi ? hi_of(v, LLVMGetOperand(in, k)) : scalar_of(v, LLVMGetOperand(in, k));
  switch (op) {
  case LLVMGetElementPtr:
    return LLVMBuildGEP2(v->b, LLVMGetGEPSourceElementType(in), ops[0], ops + 1, n - 1, "");
  case LLVMSelect:
    return LLVMBuildSelect(v->b, ops[0], ops[1], ops[2], "");
  case LLVMFreeze:
    return LLVMBuildFreeze(v->b, ops[0], "");
  case LLVMFNeg:
    return LLVMBuildFNeg(v->b, ops[0], "");
  case LLVMICmp:
    return LLVMBuildICmp(v->b, LLVMGetICmpPredicate(in), ops[0], ops[1], "");
  case LLVMFCmp:
    return LLVMBuildFCmp(v->b, LLVMGetFCmpPredicate(in), ops[0], ops[1], "");
  case LLVMTrunc:
  case LLVMZExt:
  case LLVMSExt:
  case LLVMFPTrunc:
  case LLVMFPExt:
  case LLVMFPToUI:
  case LLVMFPToSI:
  case LLVMUIToFP:
  case LLVMSIToFP:
  case LLVMPtrToInt:
  case LLVMIntToPtr:
  case LLVMBitCast:
  case LLVMAddrSpaceCast:
    return LLVMBuildCast(v->b, op, ops[0], LLVMTypeOf(in), "");
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
  case LLVMShl:
  case LLVMOr:
  case LLVMAnd:
  case LLVMXor:
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem:
  case LLVMLShr:
  case LLVMAShr:
  case LLVMFAdd:
  case LLVMFSub:
  case LLVMFMul:
  case LLVMFDiv:
  case LLVMFRem:
    return LLVMBuildBinOp(v->b, op, ops[0], ops[1], "");
  default:
    fail(v, VECTORIZE_UNSUPPORTED, "internal: runs of an unexpected kind", in);
    return LLVMGetPoison(LLVMTypeOf(in));
  }
}

static void emit_runs(struct vec *v, LLVMValueRef in, struct vinfo *i) {
  if (LLVMIsACallInst(in)) {
    /* A local id with two rows a vector: x is the same in both rows, y one
     * more in the second. */
    i->scalar = clone_uniform(v, in);
    i->scalar_hi = i->stride == 0
                       ? LLVMBuildAdd(v->b, i->scalar, LLVMConstInt(LLVMTypeOf(in), 1, 0), "y.hi")
                       : i->scalar;
    return;
  }
  i->scalar = runs_start(v, in, 0);
  i->scalar_hi = runs_start(v, in, 1);
}

/* memcpy, memset and memmove with the same operands for every lane: doing
 * it once is doing it W times. */
static int is_idempotent_call(struct vec *v, LLVMValueRef in) {
  const char *name = callee_name(in);
  if (!name || (strncmp(name, "llvm.memcpy", 11) && strncmp(name, "llvm.memset", 11) &&
                strncmp(name, "llvm.memmove", 12)))
    return 0;
  unsigned nargs = (unsigned)LLVMGetNumArgOperands(in);
  for (unsigned k = 0; k < nargs; k++)
    if (!is_uniform(v, LLVMGetOperand(in, k))) return 0;
  return 1;
}

static void record_phi(struct vec *v, LLVMValueRef orig, LLVMValueRef phi) {
  if (v->num_phis == v->cap_phis) {
    v->cap_phis = v->cap_phis ? 2 * v->cap_phis : 64;
    v->phi_orig = realloc(v->phi_orig, v->cap_phis * sizeof *v->phi_orig);
    v->phi_new = realloc(v->phi_new, v->cap_phis * sizeof *v->phi_new);
    if (!v->phi_orig || !v->phi_new) abort();
  }
  v->phi_orig[v->num_phis] = orig;
  v->phi_new[v->num_phis++] = phi;
}

static void emit_instruction(struct vec *v, int b, LLVMValueRef in) {
  struct vinfo *i = info_of(v, in);
  LLVMOpcode op = LLVMGetInstructionOpcode(in);
  LLVMValueRef mask = v->mask[b];
  if (i->drop) return;
  if (op == LLVMPHI) {
    /* Phis after a divergent loop take each lane's value at its exit. */
    int l = -1;
    unsigned count = LLVMCountIncoming(in);
    for (unsigned k = 0; k < count && l < 0; k++) {
      int p = cfg_number(&v->g, LLVMGetIncomingBlock(in, k));
      if (p >= 0) l = divergent_loop_left(v, p, b);
    }
    if (l >= 0) {
      struct divergent_loop *d = &v->dl[l];
      LLVMValueRef val = LLVMGetIncomingValue(in, 0);
      LLVMTypeRef t = LLVMTypeOf(in);
      if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        i->packet = 1;
        i->num_elems = LLVMGetVectorSize(t);
        i->elems = xcalloc(i->num_elems, sizeof *i->elems);
        for (unsigned k = 0; k < d->num_live_outs; k++)
          if (d->live_out[k] == val && d->live_elem[k] >= 0)
            i->elems[d->live_elem[k]] = d->acc_next[k];
        for (unsigned e = 0; e < i->num_elems; e++)
          if (!i->elems[e])
            fail(v, VECTORIZE_UNSUPPORTED, "internal: a live-out without accumulator", in);
        return;
      }
      for (unsigned k = 0; k < d->num_live_outs; k++)
        if (d->live_out[k] == val) i->vector = d->acc_next[k];
      if (!i->vector)
        fail(v, VECTORIZE_UNSUPPORTED, "internal: a live-out without accumulator", in);
      return;
    }
    LLVMTypeRef t = LLVMTypeOf(in);
    if (i->packet) {
      i->num_elems = LLVMGetVectorSize(t);
      i->elems = xcalloc(i->num_elems, sizeof *i->elems);
      for (unsigned e = 0; e < i->num_elems; e++)
        i->elems[e] = LLVMBuildPhi(v->b, vector_of(v, LLVMGetElementType(t)), "");
      record_phi(v, in, NULL);
      return;
    }
    if (i->kind == K_VARYING) {
      i->vector = LLVMBuildPhi(v->b, vector_of(v, t), "");
    } else {
      i->scalar = LLVMBuildPhi(v->b, t, "");
      size_t len;
      const char *name = LLVMGetValueName2(in, &len);
      if (len) LLVMSetValueName2(i->scalar, name, len);
      if (i->kind == K_RUNS) i->scalar_hi = LLVMBuildPhi(v->b, t, "hi");
    }
    record_phi(v, in, i->kind == K_VARYING ? i->vector : i->scalar);
    return;
  }
  if (i->packet && op == LLVMLoad) {
    struct access_group *g = emit_packet_load(v, in, mask);
    i->num_elems = LLVMGetVectorSize(LLVMTypeOf(in));
    i->elems = xcalloc(i->num_elems, sizeof *i->elems);
    for (unsigned k = 0; k < i->num_elems; k++)
      i->elems[k] = g->result[k];
    return;
  }
  if (i->packet && op != LLVMPHI && (op != LLVMCall || classify_call(in) == CALL_VECTOR)) {
    emit_packet(v, in, i);
    return;
  }
  if (op == LLVMExtractElement && i->kind != K_UNIFORM) {
    LLVMValueRef vec = LLVMGetOperand(in, 0), idx = LLVMGetOperand(in, 1);
    unsigned n = LLVMGetVectorSize(LLVMTypeOf(vec));
    if (LLVMIsAConstantInt(idx)) {
      uint64_t k = LLVMConstIntGetZExtValue(idx);
      i->vector =
          k < n ? packet_element(v, vec, (unsigned)k) : LLVMGetPoison(vector_of(v, LLVMTypeOf(in)));
      return;
    }
    /* An index known at run time only: a select per element. */
    LLVMValueRef at = is_uniform(v, idx) ? scalar_of(v, idx) : vector_of_value(v, idx);
    LLVMTypeRef it = LLVMTypeOf(at);
    LLVMValueRef r = packet_element(v, vec, 0);
    for (unsigned k = 1; k < n; k++) {
      LLVMValueRef kk = LLVMGetTypeKind(it) == LLVMVectorTypeKind
                            ? const_splat(v, LLVMConstInt(LLVMGetElementType(it), k, 0))
                            : LLVMConstInt(it, k, 0);
      r = LLVMBuildSelect(v->b, LLVMBuildICmp(v->b, LLVMIntEQ, at, kk, ""),
                          packet_element(v, vec, k), r, "");
    }
    i->vector = r;
    return;
  }
  if (op == LLVMStore && LLVMGetTypeKind(LLVMTypeOf(LLVMGetOperand(in, 0))) == LLVMVectorTypeKind &&
      (!is_uniform(v, LLVMGetOperand(in, 0)) || !is_uniform(v, LLVMGetOperand(in, 1)))) {
    emit_packet_store(v, in, mask);
    return;
  }
  if (op == LLVMLoad) {
    if (i->kind == K_UNIFORM)
      i->scalar = clone_uniform(v, in);
    else
      i->vector = emit_load(v, in, mask);
    return;
  }
  if (op == LLVMStore) {
    if (LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic || LLVMGetVolatile(in)) {
      if (is_uniform(v, LLVMGetOperand(in, 1)) && is_uniform(v, LLVMGetOperand(in, 0)))
        clone_uniform(v, in);
      else
        emit_per_lane(v, in, mask, 0, NULL);
      return;
    }
    emit_store(v, in, mask);
    return;
  }
  if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
    if (op == LLVMAtomicRMW && (i->vector = emit_group_counter_update(v, in, mask))) return;
    i->vector = emit_per_lane(v, in, mask, 0, NULL);
    return;
  }
  if (op == LLVMCall) {
    enum call_class cc = classify_call(in);
    if (cc == CALL_LOCAL_ID && i->kind == K_VARYING) {
      /* A dimension only known at run time. */
      LLVMValueRef d = scalar_of(v, LLVMGetOperand(in, 0));
      LLVMValueRef id = clone_uniform(v, in);
      LLVMTypeRef it = LLVMTypeOf(id);
      LLVMValueRef lanes =
          LLVMBuildAdd(v->b, splat(v, v->b, id),
                       v->rows > 1 ? run_step_vector(v, it, 1) : step_vector(v, it, 1), "");
      LLVMValueRef is_x = LLVMBuildICmp(v->b, LLVMIntEQ, d, LLVMConstNull(LLVMTypeOf(d)), "");
      LLVMValueRef other = splat(v, v->b, id);
      if (v->rows > 1) {
        /* y: one more in the second row. */
        LLVMValueRef row[64];
        for (unsigned l = 0; l < v->W; l++)
          row[l] = LLVMConstInt(it, l / v->H, 0);
        LLVMValueRef is_y =
            LLVMBuildICmp(v->b, LLVMIntEQ, d, LLVMConstInt(LLVMTypeOf(d), 1, 0), "");
        other = LLVMBuildSelect(
            v->b, is_y, LLVMBuildAdd(v->b, other, LLVMConstVector(row, v->W), ""), other, "");
      }
      i->vector = LLVMBuildSelect(v->b, is_x, lanes, other, "");
      return;
    }
    if (i->kind == K_UNIFORM && cc != CALL_PER_LANE) {
      i->scalar = clone_uniform(v, in);
      return;
    }
    if (cc == CALL_PER_LANE && is_idempotent_call(v, in)) {
      clone_uniform(v, in);
      return;
    }
    if (i->kind == K_AFFINE) {
      i->scalar = affine_scalar(v, in);
      return;
    }
    if (i->kind == K_RUNS && cc == CALL_LOCAL_ID) {
      emit_runs(v, in, i);
      return;
    }
    switch (cc) {
    case CALL_VECTOR:
      i->vector = emit_vector_intrinsic_on(v, in, -1);
      return;
    case CALL_LIBM:
      i->vector = emit_libm(v, in);
      return;
    default: {
      LLVMTypeRef t = LLVMTypeOf(in);
      LLVMValueRef *elems = NULL;
      if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        i->packet = 1;
        i->num_elems = LLVMGetVectorSize(t);
        i->elems = elems = xcalloc(i->num_elems, sizeof *i->elems);
      }
      i->vector = cc == CALL_PURE ? emit_per_lane(v, in, NULL, 1, elems)
                                  : emit_per_lane(v, in, mask, 0, elems);
      return;
    }
    }
  }
  if (i->kind == K_UNIFORM) {
    i->scalar = clone_uniform(v, in);
    return;
  }
  if (i->kind == K_AFFINE) {
    i->scalar = affine_scalar(v, in);
    return;
  }
  if (i->kind == K_RUNS) {
    emit_runs(v, in, i);
    return;
  }
  i->vector = widen_pure(v, v->b, in);
}

/* ---- blocks and control flow --------------------------------------------------------------- */

static LLVMValueRef block_mask(struct vec *v, int b) {
  struct cfg *g = &v->g;
  if (b == 0) return NULL;
  if (v->entry_mask[b]) return v->entry_mask[b];
  for (unsigned l = 0; l < g->num_loops; l++) {
    if (!v->loop_divergent[l]) continue;
    if (g->loops[l].header == b) return v->dl[l].mask_phi;
    if (v->exit_block[l] == b) return v->mask[g->loops[l].preheader];
  }
  int d = g->idom[b];
  return d >= 0 ? v->mask[d] : NULL;
}

static void begin_divergent_loop(struct vec *v, int l) {
  struct cfg *g = &v->g;
  struct divergent_loop *d = &v->dl[l];
  int pre = g->loops[l].preheader;
  LLVMBasicBlockRef from = v->vlast[pre];
  d->mask_phi = LLVMBuildPhi(v->b, v->mask_type, "active");
  LLVMValueRef m = mask_value(v, v->mask[pre]);
  LLVMAddIncoming(d->mask_phi, &m, &from, 1);
  /* The values the exit block's phis take from the latch: a slot each, or
   * one per element of an OpenCL vector. */
  int exit = v->exit_block[l];
  for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[exit]); in && LLVMIsAPHINode(in);
       in = LLVMGetNextInstruction(in)) {
    LLVMTypeRef t = LLVMTypeOf(in);
    d->num_live_outs += LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
  }
  d->live_out = xcalloc(d->num_live_outs, sizeof *d->live_out);
  d->live_elem = xcalloc(d->num_live_outs, sizeof *d->live_elem);
  d->acc_phi = xcalloc(d->num_live_outs, sizeof *d->acc_phi);
  d->acc_next = xcalloc(d->num_live_outs, sizeof *d->acc_next);
  unsigned k = 0;
  for (LLVMValueRef in = LLVMGetFirstInstruction(g->blocks[exit]); in && LLVMIsAPHINode(in);
       in = LLVMGetNextInstruction(in)) {
    LLVMTypeRef t = LLVMTypeOf(in);
    int is_vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
    unsigned n = is_vec ? LLVMGetVectorSize(t) : 1;
    LLVMTypeRef vt = vector_of(v, is_vec ? LLVMGetElementType(t) : t);
    for (unsigned e = 0; e < n; e++, k++) {
      d->live_out[k] = LLVMGetIncomingValue(in, 0);
      d->live_elem[k] = is_vec ? (int)e : -1;
      d->acc_phi[k] = LLVMBuildPhi(v->b, vt, "exit.value");
      LLVMValueRef p = LLVMGetPoison(vt);
      LLVMAddIncoming(d->acc_phi[k], &p, &from, 1);
    }
  }
}

static void emit_terminator(struct vec *v, int b) {
  struct cfg *g = &v->g;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(g->blocks[b]);
  LLVMOpcode op = LLVMGetInstructionOpcode(term);
  if (op == LLVMRet || op == LLVMUnreachable) {
    clone_uniform(v, term);
    return;
  }
  if (op == LLVMSwitch) {
    LLVMValueRef cond = LLVMGetOperand(term, 0);
    LLVMValueRef c = v->barrier_branch[b]
                         ? LLVMBuildExtractElement(v->b, vector_of_value(v, cond),
                                                   first_lane(v, v->b, v->mask[b]), "")
                         : scalar_of(v, cond);
    LLVMValueRef sw =
        LLVMBuildSwitch(v->b, c, v->vblock[cfg_number(g, LLVMGetSwitchDefaultDest(term))],
                        LLVMGetNumSuccessors(term) - 1);
    /* Operands: condition, default, then (value, destination) pairs. */
    int n = LLVMGetNumOperands(term);
    for (int k = 2; k + 1 < n; k += 2)
      LLVMAddCase(
          sw, LLVMGetOperand(term, (unsigned)k),
          v->vblock[cfg_number(g, LLVMValueAsBasicBlock(LLVMGetOperand(term, (unsigned)k + 1)))]);
    return;
  }
  if (!LLVMIsConditional(term)) {
    LLVMBuildBr(v->b, v->vblock[cfg_number(g, LLVMGetSuccessor(term, 0))]);
    return;
  }
  LLVMValueRef cond = LLVMGetCondition(term);
  int s0 = cfg_number(g, LLVMGetSuccessor(term, 0)), s1 = cfg_number(g, LLVMGetSuccessor(term, 1));
  if (v->barrier_branch[b]) {
    /* The same for every work-item (branch_guards_barrier): an active
     * lane's condition is every lane's. */
    LLVMValueRef c = LLVMBuildExtractElement(v->b, vector_of_value(v, cond),
                                             first_lane(v, v->b, v->mask[b]), "");
    LLVMBuildCondBr(v->b, c, v->vblock[s0], v->vblock[s1]);
    return;
  }
  if (!v->varying_branch[b]) {
    LLVMBuildCondBr(v->b, scalar_of(v, cond), v->vblock[s0], v->vblock[s1]);
    return;
  }
  LLVMValueRef c = vector_of_value(v, cond);
  LLVMValueRef mask = v->mask[b];
  int l = g->loop[b];
  if (l >= 0 && v->loop_divergent[l] && g->loops[l].latch == b) {
    /* The latch of a divergent loop: lanes that leave now keep their
     * values; the loop goes on while any lane stays. */
    struct divergent_loop *d = &v->dl[l];
    int exit_on_true = s0 == v->exit_block[l];
    LLVMValueRef not_c = LLVMBuildNot(v->b, c, "");
    LLVMValueRef leave = mask_and(v, v->b, mask, exit_on_true ? c : not_c);
    LLVMValueRef stay = mask_and(v, v->b, mask, exit_on_true ? not_c : c);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(v->b);
    for (unsigned k = 0; k < d->num_live_outs; k++) {
      LLVMValueRef now = d->live_elem[k] < 0
                             ? vector_of_value(v, d->live_out[k])
                             : packet_element(v, d->live_out[k], (unsigned)d->live_elem[k]);
      here = LLVMGetInsertBlock(v->b);
      d->acc_next[k] = LLVMBuildSelect(v->b, leave, now, d->acc_phi[k], "");
    }
    here = LLVMGetInsertBlock(v->b);
    for (unsigned k = 0; k < d->num_live_outs; k++)
      LLVMAddIncoming(d->acc_phi[k], &d->acc_next[k], &here, 1);
    LLVMAddIncoming(d->mask_phi, &stay, &here, 1);
    LLVMBuildCondBr(v->b, any_lane(v, v->b, stay), v->vblock[g->loops[l].header],
                    v->vblock[v->exit_block[l]]);
    return;
  }
  /* An if-then: the region runs, masked, when some lane enters it. */
  int join = g->ipdom[b];
  int entry = join == s0 ? s1 : s0;
  LLVMValueRef into = entry == s0 ? c : LLVMBuildNot(v->b, c, "");
  LLVMValueRef m = mask_and(v, v->b, mask, into);
  v->entry_mask[entry] = m;
  LLVMBuildCondBr(v->b, any_lane(v, v->b, m), v->vblock[entry], v->vblock[join]);
}

/* Incoming values of the phis, once every block is built. */
static void fill_phis(struct vec *v) {
  struct cfg *g = &v->g;
  for (size_t k = 0; k < v->num_phis; k++) {
    LLVMValueRef orig = v->phi_orig[k], phi = v->phi_new[k];
    struct vinfo *info = ptr_map_get(&v->info, orig);
    /* A packet phi is one phi per element. */
    unsigned parts = phi ? 1 : info->num_elems;
    int b = block_of(v, orig);
    /* Whether the phi is built of vectors (varying), not whether its type
     * is one: a uniform phi of an OpenCL vector type stays scalar. */
    int vec = !phi || info->kind == K_VARYING;
    int d = v->join_of[b], entry = v->region_entry[b];
    LLVMValueRef from_d = NULL;
    unsigned count = LLVMCountIncoming(orig);
    if (d >= 0 && vec)
      for (unsigned j = 0; j < count; j++)
        if (cfg_number(g, LLVMGetIncomingBlock(orig, j)) == d)
          from_d = LLVMGetIncomingValue(orig, j);
    for (unsigned e = 0; e < parts; e++) {
      LLVMValueRef target = phi ? phi : info->elems[e];
      for (unsigned j = 0; j < count; j++) {
        int p = cfg_number(g, LLVMGetIncomingBlock(orig, j));
        if (p < 0 || g->rpo_number[p] < 0) continue;
        LLVMValueRef val = LLVMGetIncomingValue(orig, j);
        LLVMBasicBlockRef pred = v->vlast[p];
        LLVMValueRef x;
        LLVMPositionBuilderBefore(v->b, LLVMGetBasicBlockTerminator(pred));
        if (!vec) {
          x = scalar_of(v, val);
          if (info->kind == K_RUNS) {
            LLVMValueRef hi = hi_of(v, val);
            LLVMAddIncoming(info->scalar_hi, &hi, &pred, 1);
          }
        } else {
          x = phi ? vector_of_value(v, val) : packet_element(v, val, e);
          if (d >= 0 && entry >= 0 && p != d && from_d) {
            /* From the masked region: its lanes' values, the others' from before. */
            LLVMValueRef before = phi ? vector_of_value(v, from_d) : packet_element(v, from_d, e);
            x = LLVMBuildSelect(v->b, v->entry_mask[entry], x, before, "blend");
          }
        }
        LLVMAddIncoming(target, &x, &pred, 1);
      }
    }
  }
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
