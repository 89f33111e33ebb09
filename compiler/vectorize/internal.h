/* What the vectorizer's files share (the overview is in vectorize.c): the
 * state of one vectorization (struct vec), each instruction's analysis
 * results and built values (struct vinfo), the shapes and integer facts
 * the analyses give, and the functions one file calls in another. Not for
 * use outside vectorize/. */
#ifndef AQUILA_COMPILER_VECTORIZE_INTERNAL_H
#define AQUILA_COMPILER_VECTORIZE_INTERNAL_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <stdint.h>

#include "analysis/cfg.h"
#include "support/ptrmap.h"
#include "support/strbuf.h"
#include "vectorize/vectorize.h"

/* In the order shapes rise during the analysis. */
enum kind { K_UNDEF, K_UNIFORM, K_AFFINE, K_RUNS, K_VARYING };

struct vinfo {
  /* The analysis's (analyze in shape.c; drop and packet from check_shapes
   * in legality.c). The transformation reads these, through
   * shape_of_value where a value may not be an instruction. */
  unsigned char kind;
  unsigned char assumed;   /* affine only if no lane's value wraps (a zext/sext in the chain) */
  unsigned char gap_known; /* runs: lane H's value minus lane 0's is gap */
  int64_t gap_align;       /* runs: a power of two that divides the gap */
  int64_t stride;          /* affine and runs: per-lane step, in bytes for pointers */
  int64_t gap;
  unsigned char drop; /* emits nothing (lifetime markers, assumptions) */
  /* A varying OpenCL vector kept as its elements apart: planned by
   * check_shapes (is_packet); the transformation also builds a call's or a
   * divergent loop's vector result so, and marks it when it does. */
  unsigned char packet;

  /* The transformation's: what it built for the value. */
  unsigned num_elems;
  LLVMValueRef *elems;    /* a packet's elements, each a <W x T> */
  LLVMValueRef scalar;    /* uniform: the clone; affine and runs: lane 0's value */
  LLVMValueRef scalar_hi; /* runs: lane H's value */
  LLVMValueRef vector;    /* varying: the value; others: their vector form, once built */
};

/* Loads (or stores) in one block of the parts of one element of memory:
 * lane l's element starts at root's lane-l address and spans stride bytes,
 * member k lies k * size bytes into it. OpenCL vectors and structs of
 * scalars are accessed so (float4 after the scalarizer). One wide access
 * and shuffles serve them all, instead of a gather or scatter each. */
#define MAX_MEMBERS 16
/* An address as pointer + a sum of masked, scaled terms + a constant
 * number of bytes (access_groups.c). */
#define MAX_INDEX_TERMS 4
struct index_form {
  LLVMValueRef ptr;
  unsigned num_terms;
  LLVMValueRef term[MAX_INDEX_TERMS];
  uint64_t mask[MAX_INDEX_TERMS]; /* each term's, all its bits when it has none */
  int64_t scale[MAX_INDEX_TERMS]; /* each term's bytes per unit */
  int64_t offset;                 /* bytes */
};

struct access_group {
  LLVMValueRef root;
  int is_store;
  unsigned space;                   /* the members' address space */
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
  /* Members found by their index forms (root is then the first member's
   * address, at key.offset bytes from the form's origin). */
  int has_key;
  struct index_form key;
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
  int scalar_pairs;     /* struct vectorize_target's */
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
  /* A private slot that a gather's lanes that are off read instead of
   * their own address, per address space (gather). */
  LLVMValueRef spare_slot[8];
};

/* An alignment that stands for any: low_bit(0), and beyond. */
#define ALIGN_ANY ((int64_t)1 << 40)

/* Intrinsics with a vector form: how it is overloaded, and which
 * arguments must stay scalar. */
enum overload { OV_RET, OV_RET_ARG1, OV_ARG0, OV_RET_ARG0 };
struct vector_intrinsic {
  const char *name;
  enum overload overload;
  unsigned scalar_args; /* bit i: argument i stays scalar (and must be uniform) */
};

/* What a call becomes (classify_call). */
enum call_class {
  CALL_LOCAL_ID, /* __aquila_local_id */
  CALL_WORKITEM, /* another __aquila_* query: uniform */
  CALL_BARRIER,  /* __aquila_barrier */
  CALL_DROP,     /* an optimizer hint */
  CALL_VECTOR,   /* an intrinsic with a vector form */
  CALL_LIBM,     /* a libm function with a libmvec variant */
  CALL_PURE,     /* no side effects: vector calls lane by lane, every lane */
  CALL_PER_LANE, /* side effects: once per active lane */
  CALL_SUB_GROUP, /* a sub-group primitive: across the lanes (sub_groups.c) */
  CALL_UNKNOWN,  /* an indirect call or a function with a body */
};

/* A value's shape (the analysis's result, shape.c): kind is one of enum
 * kind; stride and the runs' gap as in struct vinfo. */
struct shape {
  unsigned char kind, assumed, gap_known;
  int64_t stride, gap;
  int64_t gap_align; /* runs: a power of two that divides the gap, known or not */
};

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

/* Control flow for a fast and a slow way: emission goes on in *slow after
 * the caller filled *fast; join_blocks returns where both meet. */
struct two_ways {
  LLVMBasicBlockRef fast, slow, join, fast_end, slow_end;
};

/* ---- vectorize.c: the entry points and helpers every file uses ---- */
void *xcalloc(size_t n, size_t size);
void fail(struct vec *v, enum vectorize_status status, const char *what, LLVMValueRef in);
struct vinfo *info_of(struct vec *v, LLVMValueRef val);
const char *callee_name(LLVMValueRef call);
int is_scalar_type(LLVMTypeRef t);
int is_scalar_vector_type(LLVMTypeRef t);
LLVMTypeRef vector_of(struct vec *v, LLVMTypeRef t);
int block_of(struct vec *v, LLVMValueRef in);

/* ---- shape.c: the shape analysis ---- */
int64_t min64(int64_t a, int64_t b);
int64_t low_bit(int64_t x);
struct shape shape_of_value(struct vec *v, LLVMValueRef val);
struct shape varying(void);
int64_t alloc_size(struct vec *v, LLVMTypeRef t);
int64_t lane_copy_size(struct vec *v, LLVMValueRef alloca);
void find_private_arrays(struct vec *v);
int is_private_array_ptr(struct vec *v, LLVMValueRef p);
int divergent_loop_left(struct vec *v, int b, int c);
void analyze(struct vec *v);

/* ---- facts.c: integer facts ---- */
struct int_facts facts_of(struct vec *v, LLVMValueRef val, int depth);

/* ---- packet.c: OpenCL vectors left whole ---- */
int is_packet(struct vec *v, LLVMValueRef in);
LLVMValueRef packet_element(struct vec *v, LLVMValueRef val, unsigned k);
LLVMValueRef packet_bitcast(struct vec *v, LLVMValueRef x, LLVMTypeRef et, unsigned n, unsigned k);
void emit_packet(struct vec *v, LLVMValueRef in, struct vinfo *i);
struct access_group *emit_packet_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask);
void emit_packet_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask);

/* ---- legality.c: what the transformation supports ---- */
void check_shapes(struct vec *v);

/* ---- build.c: building vectors, masks ---- */
LLVMValueRef const_splat(struct vec *v, LLVMValueRef c);
LLVMValueRef splat(struct vec *v, LLVMBuilderRef b, LLVMValueRef s);
LLVMValueRef step_vector(struct vec *v, LLVMTypeRef t, int64_t stride);
LLVMValueRef run_step_vector(struct vec *v, LLVMTypeRef t, int64_t stride);
LLVMValueRef join_halves(struct vec *v, LLVMBuilderRef b, LLVMValueRef lo, LLVMValueRef hi);
LLVMValueRef all_ones_mask(struct vec *v);
LLVMValueRef scalar_of(struct vec *v, LLVMValueRef val);
LLVMValueRef vector_of_value(struct vec *v, LLVMValueRef val);
int is_uniform(struct vec *v, LLVMValueRef val);
void copy_safe_fmf(LLVMValueRef from, LLVMValueRef to);
LLVMValueRef safe_division(struct vec *v, LLVMBuilderRef b, LLVMOpcode op, LLVMValueRef a,
                           LLVMValueRef d, LLVMTypeRef t);
LLVMValueRef widen_pure(struct vec *v, LLVMBuilderRef b, LLVMValueRef in);
LLVMValueRef mask_value(struct vec *v, LLVMValueRef m);
LLVMValueRef mask_and(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, LLVMValueRef c);
LLVMValueRef any_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m);
LLVMValueRef last_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m);
LLVMValueRef first_lane(struct vec *v, LLVMBuilderRef b, LLVMValueRef m);

/* ---- address.c: addresses of vector accesses ---- */
LLVMValueRef call_intrinsic(struct vec *v, LLVMBuilderRef b, const char *name, LLVMTypeRef *types,
                            unsigned num_types, LLVMValueRef *args, unsigned num_args);
LLVMValueRef emit_group_counter_update(struct vec *v, LLVMValueRef in, LLVMValueRef mask);
LLVMValueRef reverse(struct vec *v, LLVMBuilderRef b, LLVMValueRef x);
LLVMValueRef lane_value(struct vec *v, LLVMValueRef val, LLVMValueRef lane, int depth);
LLVMValueRef affine_base(struct vec *v, LLVMValueRef addr, LLVMValueRef mask);
void copy_memory_metadata(struct vec *v, LLVMValueRef from, LLVMValueRef to);
LLVMValueRef expand_mask(struct vec *v, LLVMBuilderRef b, LLVMValueRef m, unsigned n);
LLVMValueRef deinterleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef wide, unsigned n,
                          unsigned k);
/* The members (those present: non-NULL) of a vector of n per lane, into
 * out: one shuffle per member, or, for 4 or more (a power of two) all
 * present, n log2 n two-input shuffles shared by all. */
void deinterleave_members(struct vec *v, LLVMBuilderRef b, LLVMValueRef wide, unsigned n,
                          LLVMValueRef const *present, LLVMValueRef *out);
LLVMValueRef interleave(struct vec *v, LLVMBuilderRef b, LLVMValueRef *parts, unsigned n,
                        LLVMTypeRef t);
LLVMValueRef consecutive(struct vec *v, LLVMValueRef ptrs, LLVMValueRef mask, int64_t stride,
                         LLVMValueRef *base);
LLVMValueRef consecutive_index(struct vec *v, LLVMValueRef root, LLVMValueRef mask, int64_t stride,
                               LLVMValueRef *base);
LLVMValueRef halves_consecutive(struct vec *v, LLVMValueRef root, int64_t stride,
                                LLVMValueRef base[2]);
LLVMValueRef half_of(struct vec *v, LLVMValueRef x, unsigned n, unsigned k);

/* ---- clamped.c: clamped addresses, fast and slow ways ---- */
LLVMValueRef unclamped(struct vec *v, LLVMValueRef val, LLVMValueRef mask, int64_t stride,
                       LLVMValueRef *base);
void split_two_ways(struct vec *v, LLVMValueRef cond, struct two_ways *w);
LLVMValueRef join_value(struct vec *v, struct two_ways *w, LLVMValueRef fast, LLVMValueRef slow);

/* ---- load_store.c: loads and stores ---- */
LLVMValueRef all_lanes(struct vec *v, LLVMValueRef mask);
void find_streams_allowed(struct vec *v);
/* Whether a varying address is computed from what a gather loaded (a
 * table lookup's index from an earlier lookup). */
int address_from_gather(struct vec *v, LLVMValueRef addr);
LLVMValueRef gather(struct vec *v, LLVMTypeRef t, LLVMValueRef ptrs, unsigned align,
                    LLVMValueRef mask);
void gather_members_of_8_bytes(struct vec *v, LLVMTypeRef member_type, unsigned members,
                               LLVMValueRef roots, unsigned align, LLVMValueRef mask,
                               LLVMValueRef *result);
void scatter(struct vec *v, LLVMValueRef data, LLVMValueRef ptrs, unsigned align,
             LLVMValueRef mask);
void emit_group_load(struct vec *v, struct access_group *g, LLVMValueRef mask);
void emit_group_store(struct vec *v, struct access_group *g, LLVMValueRef mask,
                      LLVMValueRef *parts);
LLVMValueRef emit_load(struct vec *v, LLVMValueRef in, LLVMValueRef mask);
void emit_store(struct vec *v, LLVMValueRef in, LLVMValueRef mask);

/* ---- access_groups.c: access groups ---- */
int64_t root_element_size(struct vec *v, LLVMValueRef root);
void add_group(struct vec *v, struct access_group *g);
void find_groups(struct vec *v, int b);
void settle_groups(struct vec *v, size_t from);

/* ---- calls.c: calls: classes, vector forms, one lane at a time ---- */
const struct vector_intrinsic *find_vector_intrinsic(const char *name);
int is_dropped_intrinsic(const char *name);
enum call_class classify_call(LLVMValueRef call);
LLVMValueRef emit_per_lane(struct vec *v, LLVMValueRef in, LLVMValueRef mask, int all_lanes,
                           LLVMValueRef *elems);
LLVMValueRef emit_vector_intrinsic_on(struct vec *v, LLVMValueRef in, int element);
LLVMValueRef emit_libm(struct vec *v, LLVMValueRef in);

/* ---- instructions.c: instructions ---- */
LLVMValueRef clone_uniform(struct vec *v, LLVMValueRef in);
LLVMValueRef private_array_gep(struct vec *v, LLVMBuilderRef b, LLVMValueRef in, int vec);
LLVMValueRef hi_of(struct vec *v, LLVMValueRef val);
LLVMValueRef runs_start(struct vec *v, LLVMValueRef in, int hi);
void emit_instruction(struct vec *v, int b, LLVMValueRef in);

/* ---- sub_groups.c: sub-group operations across the lanes ---- */
int is_sub_group_primitive(const char *name);
LLVMValueRef emit_sub_group(struct vec *v, LLVMValueRef in, LLVMValueRef mask);

/* ---- control_flow.c: blocks and control flow ---- */
LLVMValueRef block_mask(struct vec *v, int b);
void begin_divergent_loop(struct vec *v, int l);
void emit_terminator(struct vec *v, int b);
void fill_phis(struct vec *v);

#endif
