/* What the work-group compiler's files share (the overview is in
 * workgroup.c): the IR types of the work-group descriptor, one kernel's
 * build state (struct kernel_build), and the functions one file calls in
 * another. Not for use outside workgroup/. */
#ifndef AQUILA_COMPILER_WORKGROUP_KERNEL_BUILD_H
#define AQUILA_COMPILER_WORKGROUP_KERNEL_BUILD_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <stdint.h>

#include "aquila/fatbin.h"
#include "support/strbuf.h"
#include "vectorize/vectorize.h"
#include "workgroup/regions.h"

/* Field numbers of struct aquila_workgroup in the IR type (init_types). */
enum {
  WG_GLOBAL_SIZE = 0,
  WG_LOCAL_SIZE,
  WG_ENQUEUED_LOCAL_SIZE,
  WG_GROUP_ID,
  WG_NUM_GROUPS,
  WG_WORK_DIM,
  WG_GROUP_SEGMENT_SIZE,
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
  int paired;             /* K.wi_vec is K.wi.pair, two work-items (workitem_pairs.c) */
  struct strbuf pair_why; /* why a kernel not vectorized was not paired either */
  struct aquila_fatbin_kernel *meta;
  uint32_t hidden_offset, kernarg_size, kernarg_align;
  uint32_t reqd[3];
  int uses_barrier;
  int split_at_barriers;         /* work-item loops split at barriers (regions.c), else fibers */
  int scalar_used;               /* K.wi runs some work-items (no vectorized version, or a tail) */
  struct regions_report regions; /* what the split function became, for the report */
  uint64_t local_mem;
  unsigned prefetches; /* ahead of loops' accesses, in K.wi.v<W> (prefetch.c) */
  int uses_sub_groups; /* calls __aquila_sg_* (sub_groups.c) */
  uint32_t reqd_sub_group_size; /* intel_reqd_sub_group_size(N), or 0 */
  int size_indifferent; /* AQUILA_KERNEL_SIZE_INDIFFERENT (size_indifferent in vector_kernels.c) */
};

/* ---- workgroup.c: the entry points, the kernel table, passes ---- */
int run_passes(LLVMModuleRef m, const char *passes, struct strbuf *log);

/* ---- workitem.c: K.wi, kernarg layout, work-item builtins ---- */
void init_types(struct wg_types *t, LLVMModuleRef m);
unsigned attr_kind(const char *name);
void add_fn_attr(LLVMValueRef f, const char *name);
int is_vector_variant_name(const char *name);
void add_param_attr(LLVMValueRef f, unsigned param, const char *name);
uint32_t align_up(uint32_t v, uint32_t a);
void read_function_md_ints(LLVMContextRef ctx, LLVMValueRef f, const char *kind_name,
                           uint32_t out[3]);
char *read_vec_type_hint(LLVMContextRef ctx, LLVMValueRef f);
LLVMValueRef load_wg_field(struct wg_types *t, LLVMBuilderRef b, LLVMValueRef wg, unsigned field,
                           LLVMValueRef index, LLVMTypeRef type);
void copy_fp_attributes(LLVMValueRef from, LLVMValueRef to);
int kernel_arg_slot(struct wg_types *t, LLVMValueRef k, unsigned i, LLVMTypeRef *value_type,
                    uint32_t *size, uint32_t *align);
void record_arg_layout(struct aquila_fatbin_arg *a, uint32_t offset, uint32_t size, uint32_t align,
                       int is_local_ptr);
int build_workitem_function(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kb,
                            struct strbuf *log);
void guard_integer_division(struct wg_types *t, LLVMValueRef fn);
void unvolatile_private_variables(LLVMValueRef fn);
char *kernel_attributes(const struct aquila_fatbin_kernel *k);
int calls_function(LLVMValueRef fn, const char *name);
int bind_workitem_builtins(struct wg_types *t, struct kernel_build *kb, LLVMValueRef fn,
                           int uniform_only, struct strbuf *log);

/* ---- workitem_pairs.c: two work-items in one body ---- */
/* "<fn>.pair", fn's work-item function for work-items x and x + 1 (of
 * instructions instructions), or NULL with why it was not built. */
LLVMValueRef pair_workitems(LLVMModuleRef m, LLVMValueRef fn, unsigned instructions,
                            struct strbuf *why);
/* Whether pair_workitems would pair fn's work-items (nothing built). */
int workitems_pairable(LLVMValueRef fn, unsigned instructions);

/* ---- group_function.c: K.wg, the work-group function ---- */
void build_loop_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb);
void build_fiber_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb);
void build_region_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                            unsigned width);
void build_scalar_twin(struct wg_types *t, LLVMModuleRef m, LLVMBuilderRef b,
                       struct kernel_build *kb);
void build_vector_loop_workgroup(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                                 unsigned width);
/* Whether the range's global sizes let the vector version run (NULL: no
 * condition), as the work-group functions decide it. */
LLVMValueRef vector_range_ok(struct wg_types *t, LLVMBuilderRef b, struct kernel_build *kb,
                             LLVMValueRef wg);

/* ---- sub_groups.c: sub-groups' ids and sizes, and their scalar primitives ---- */
int uses_sub_groups(LLVMValueRef fn);
/* The kernel's sub-group size where its vector version runs: W, or 1. */
unsigned sub_group_width(const struct kernel_build *kb);
/* Whether a row's last vector holds the row's tail (sub-group kernels
 * without barriers), and the test in K.wi that makes that vector's other
 * lanes off: the body runs while x < Lx. */
int tail_is_vector(const struct kernel_build *kb);
void guard_row_tail(struct wg_types *t, struct kernel_build *kb);
/* What the __aquila_sg_* call stands for in fn (K.wi or K.wi.v<W>), built
 * before it; NULL with the reason in log. */
LLVMValueRef bind_sub_group_call(struct wg_types *t, struct kernel_build *kb, LLVMValueRef fn,
                                 LLVMBuilderRef b, LLVMValueRef call, int uniform_only,
                                 struct strbuf *log);

/* ---- group_memory.c: __local variables in the group segment ---- */
void localize_group_variables(struct wg_types *t, LLVMModuleRef m, struct kernel_build *kbs,
                              unsigned n);

/* ---- vector_kernels.c: vectorized versions of kernels ---- */
void contain_private_accesses(struct wg_types *t, LLVMValueRef fn);
int check_mode(void);
int vectorizing(const struct vectorize_target *vt);
unsigned vector_rows(const struct kernel_build *kb, const struct vectorize_target *vt);
int size_indifferent(const struct kernel_build *kb, const struct vectorize_target *vt);
unsigned widest_vector_arithmetic(LLVMValueRef fn);
void vectorize_kernels(LLVMModuleRef m, struct kernel_build *kbs, unsigned n,
                       const struct vectorize_target *vt, int use_fibers);
int footprint_report_wanted(void);
int report_wanted(void);
void report_kernel(const struct kernel_build *kb, const struct vectorize_target *vt, int fibers,
                   struct strbuf *log);

/* ---- vector_variants.c: the builtin library's vector variants ---- */
int is_out_of_line(LLVMValueRef f);
void mark_vector_variants(LLVMModuleRef m);

#endif
