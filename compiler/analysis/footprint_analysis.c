/* The footprint analysis: for each __global pointer argument of a kernel,
 * whether its work-items write through it and, if so, where: a union of
 * byte ranges whose start is affine in the work-group and local ids, with
 * coefficients that are constants times kernel arguments or the NDRange's
 * sizes; and whether the kernel uses atomics on memory that may be global,
 * or printf. The runtime uses it to spread one NDRange over several devices
 * (runtime/spread.c: each device's chunk of work-groups writes a range of
 * each buffer known before the launch, and only that range comes back) and
 * to keep a buffer a kernel only reads valid where it was (residency.c).
 *
 * A value is a union of affine forms (struct form), each holding for some
 * work dimensions: get_global_id(1) is a select on get_work_dim(), the ids
 * in a 2D range and 0 in a 1D one. The forms' arithmetic is exact; LLVM's
 * is modulo 2^w. The two agree modulo 2^w (add, sub, mul and shl are ring
 * homomorphisms, trunc a reduction), so a value extended to a wider type
 * equals its form whenever the form's value fits the narrower type: each
 * extension records that as a check form, which the runtime evaluates over
 * the whole grid before it trusts any write form.
 *
 * What the analysis cannot follow (a value computed in a loop, a division,
 * a pointer loaded from memory, a call that takes a global pointer) makes
 * the argument concerned, or every argument when the pointer's origin is
 * unknown, "written anywhere": never a wrong range, at worst none. */
#include "analysis/footprint_analysis.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/cfg.h"
#include "support/ptrmap.h"

#define MAX_SET 4              /* forms in one value's union */
#define MAX_VISITS 20000u      /* values computed per kernel */
#define MAX_POINTER_STEPS 256u /* steps back from one pointer to its argument */
#define ALL_DIMS 0xeu          /* work dimensions 1, 2 and 3 */
#define MAX_TERMS AQUILA_FOOTPRINT_MAX_TERMS

struct form {
  uint32_t dims;
  int64_t c;
  uint32_t n;
  struct aquila_footprint_term t[MAX_TERMS];
};

/* known == 0: any value. Every known set covers all work dimensions
 * together (each operation keeps that). */
struct fset {
  int known;
  uint32_t n;
  struct form f[MAX_SET];
};

enum { P_UNKNOWN, P_NONGLOBAL, P_ARG };
struct pinfo {
  int kind;
  uint32_t arg;
  struct fset off; /* bytes from the argument's address */
};

struct analysis {
  LLVMValueRef wi, kernarg;
  LLVMTargetDataRef td;
  struct aquila_fatbin_kernel *meta;
  struct ptr_map values;  /* value -> struct fset *, or &in_progress */
  unsigned visits;        /* values computed */
  unsigned pointer_steps; /* steps of the current pointer's walk */
  struct aquila_fatbin_footprint *fp;
  uint32_t forms_cap;
  int anywhere_all; /* a write whose pointer's origin is unknown */
  int too_many;     /* more forms than the format holds */
  /* For "overwritten": per argument, whether it is read (or passed on),
   * its stores and the last of them; reads from an unknown pointer. */
  unsigned char *read;
  unsigned *stores;
  LLVMValueRef *store;
  int read_unknown;
};

static struct fset unknown_set; /* known == 0 */
static char in_progress;

/* ---- forms ------------------------------------------------------------------ */

static int term_key_cmp(const struct aquila_footprint_term *a,
                        const struct aquila_footprint_term *b) {
  if (a->var != b->var) return a->var < b->var ? -1 : 1;
  for (int i = 0; i < 3; i++)
    if (a->factor[i] != b->factor[i]) return a->factor[i] < b->factor[i] ? -1 : 1;
  return 0;
}

/* Factors in descending order (zeros last), terms sorted and combined,
 * constant terms folded into c. Terms come in tmp (up to cap). -1 when the
 * result has more than MAX_TERMS terms or a sum overflows. */
static int normalize(struct form *out, struct aquila_footprint_term *tmp, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    for (int j = 1; j < 3; j++)
      for (int k = j; k > 0 && tmp[i].factor[k - 1] < tmp[i].factor[k]; k--) {
        uint32_t f = tmp[i].factor[k - 1];
        tmp[i].factor[k - 1] = tmp[i].factor[k];
        tmp[i].factor[k] = f;
      }
  /* Insertion sort: a few dozen terms at most. */
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && term_key_cmp(&tmp[j - 1], &tmp[j]) > 0; j--) {
      struct aquila_footprint_term x = tmp[j];
      tmp[j] = tmp[j - 1];
      tmp[j - 1] = x;
    }
  out->n = 0;
  for (uint32_t i = 0; i < n; i++) {
    struct aquila_footprint_term x = tmp[i];
    if (x.var == AQUILA_FOOTPRINT_ONE && !x.factor[0]) {
      if (__builtin_add_overflow(out->c, x.coef, &out->c)) return -1;
      continue;
    }
    if (out->n && !term_key_cmp(&out->t[out->n - 1], &x)) {
      if (__builtin_add_overflow(out->t[out->n - 1].coef, x.coef, &out->t[out->n - 1].coef))
        return -1;
      if (!out->t[out->n - 1].coef) out->n--;
      continue;
    }
    if (!x.coef) continue;
    if (out->n == MAX_TERMS) return -1;
    out->t[out->n++] = x;
  }
  return 0;
}

static int form_add(const struct form *a, const struct form *b, int negate, struct form *out) {
  struct aquila_footprint_term tmp[2 * MAX_TERMS];
  uint32_t n = 0;
  int64_t bc = b->c;
  if (negate && __builtin_sub_overflow((int64_t)0, bc, &bc)) return -1;
  for (uint32_t i = 0; i < a->n; i++)
    tmp[n++] = a->t[i];
  for (uint32_t i = 0; i < b->n; i++) {
    tmp[n] = b->t[i];
    if (negate && __builtin_sub_overflow((int64_t)0, tmp[n].coef, &tmp[n].coef)) return -1;
    n++;
  }
  out->dims = a->dims & b->dims;
  if (__builtin_add_overflow(a->c, bc, &out->c)) return -1;
  return normalize(out, tmp, n);
}

/* The product of two terms (a constant is a term of var ONE without
 * factors): at most one variable and two factors. */
static int term_mul(const struct aquila_footprint_term *a, const struct aquila_footprint_term *b,
                    struct aquila_footprint_term *out) {
  if (a->var != AQUILA_FOOTPRINT_ONE && b->var != AQUILA_FOOTPRINT_ONE) return -1;
  out->var = a->var != AQUILA_FOOTPRINT_ONE ? a->var : b->var;
  uint32_t f[6] = {a->factor[0], a->factor[1], a->factor[2],
                   b->factor[0], b->factor[1], b->factor[2]};
  uint32_t nf = 0;
  out->factor[0] = out->factor[1] = out->factor[2] = 0;
  for (int i = 0; i < 6; i++) {
    if (!f[i]) continue;
    if (nf == 3) return -1;
    out->factor[nf++] = f[i];
  }
  return __builtin_mul_overflow(a->coef, b->coef, &out->coef) ? -1 : 0;
}

static int form_mul(const struct form *a, const struct form *b, struct form *out) {
  struct aquila_footprint_term at[MAX_TERMS + 1], bt[MAX_TERMS + 1];
  uint32_t an = 0, bn = 0;
  at[an++] = (struct aquila_footprint_term){a->c, AQUILA_FOOTPRINT_ONE, {0, 0, 0}};
  for (uint32_t i = 0; i < a->n; i++)
    at[an++] = a->t[i];
  bt[bn++] = (struct aquila_footprint_term){b->c, AQUILA_FOOTPRINT_ONE, {0, 0, 0}};
  for (uint32_t i = 0; i < b->n; i++)
    bt[bn++] = b->t[i];
  struct aquila_footprint_term tmp[(MAX_TERMS + 1) * (MAX_TERMS + 1)];
  uint32_t n = 0;
  for (uint32_t i = 0; i < an; i++)
    for (uint32_t j = 0; j < bn; j++) {
      if (!at[i].coef || !bt[j].coef) continue;
      if (term_mul(&at[i], &bt[j], &tmp[n])) return -1;
      n++;
    }
  out->dims = a->dims & b->dims;
  out->c = 0;
  return normalize(out, tmp, n);
}

static int form_equal_terms(const struct form *a, const struct form *b) {
  if (a->n != b->n) return 0;
  for (uint32_t i = 0; i < a->n; i++)
    if (term_key_cmp(&a->t[i], &b->t[i]) || a->t[i].coef != b->t[i].coef) return 0;
  return 1;
}

/* ---- unions of forms -------------------------------------------------------- */

static struct fset *set_new(void) {
  struct fset *s = calloc(1, sizeof *s);
  if (!s) abort();
  return s;
}

static void set_const(struct fset *s, int64_t c) {
  memset(s, 0, sizeof *s);
  s->known = 1;
  s->n = 1;
  s->f[0].dims = ALL_DIMS;
  s->f[0].c = c;
}

static void set_term(struct fset *s, uint32_t var, uint32_t factor) {
  set_const(s, 0);
  s->f[0].n = 1;
  s->f[0].t[0] = (struct aquila_footprint_term){1, var, {factor, 0, 0}};
}

/* Adds x to s: merged with an equal form of other dimensions; 0, or -1 when
 * s would hold too many. */
static int set_add(struct fset *s, const struct form *x) {
  if (!x->dims) return 0;
  for (uint32_t i = 0; i < s->n; i++)
    if (s->f[i].c == x->c && form_equal_terms(&s->f[i], x)) {
      s->f[i].dims |= x->dims;
      return 0;
    }
  if (s->n == MAX_SET) return -1;
  s->f[s->n++] = *x;
  return 0;
}

enum { OP_ADD, OP_SUB, OP_MUL };

static void set_binop(const struct fset *a, const struct fset *b, int op, struct fset *out) {
  memset(out, 0, sizeof *out);
  if (!a->known || !b->known) return;
  out->known = 1;
  for (uint32_t i = 0; i < a->n; i++)
    for (uint32_t j = 0; j < b->n; j++) {
      if (!(a->f[i].dims & b->f[j].dims)) continue;
      struct form x;
      int bad = op == OP_MUL ? form_mul(&a->f[i], &b->f[j], &x)
                             : form_add(&a->f[i], &b->f[j], op == OP_SUB, &x);
      if (bad || set_add(out, &x)) {
        out->known = 0;
        return;
      }
    }
}

static void set_union(const struct fset *a, const struct fset *b, struct fset *out) {
  *out = *a;
  if (!a->known || !b->known) {
    out->known = 0;
    return;
  }
  for (uint32_t i = 0; i < b->n; i++)
    if (set_add(out, &b->f[i])) {
      out->known = 0;
      return;
    }
}

/* a's forms where mask holds, and b's where it does not. */
static void set_select(const struct fset *a, const struct fset *b, uint32_t mask,
                       struct fset *out) {
  memset(out, 0, sizeof *out);
  if (!a->known || !b->known) return;
  out->known = 1;
  for (int side = 0; side < 2; side++) {
    const struct fset *s = side ? b : a;
    uint32_t m = side ? ALL_DIMS & ~mask : mask;
    for (uint32_t i = 0; i < s->n; i++) {
      struct form x = s->f[i];
      x.dims &= m;
      if (set_add(out, &x)) {
        out->known = 0;
        return;
      }
    }
  }
}

/* ---- work dimension guards -------------------------------------------------- */

static const char *callee_name(LLVMValueRef call) {
  if (!LLVMIsACallInst(call)) return NULL;
  LLVMValueRef callee = LLVMGetCalledValue(call);
  if (!callee || !LLVMIsAFunction(callee)) return NULL;
  size_t len;
  return LLVMGetValueName2(callee, &len);
}

static int int_width(LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? (int)LLVMGetIntTypeWidth(t) : 0;
}

/* v's value for work_dim 1, 2 and 3, when it depends on nothing else. */
static int work_dim_values(LLVMValueRef v, int64_t out[3], int depth) {
  if (depth > 16) return 0;
  if (LLVMIsAConstantInt(v)) {
    out[0] = out[1] = out[2] = LLVMConstIntGetSExtValue(v);
    return 1;
  }
  if (!LLVMIsAInstruction(v)) return 0;
  const char *name = callee_name(v);
  if (name && !strcmp(name, "__aquila_work_dim")) {
    for (int i = 0; i < 3; i++)
      out[i] = i + 1;
    return 1;
  }
  int64_t a[3], b[3], c[3];
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  if (name && (!strncmp(name, "llvm.umax.", 10) || !strncmp(name, "llvm.umin.", 10) ||
               !strncmp(name, "llvm.smax.", 10) || !strncmp(name, "llvm.smin.", 10))) {
    if (!work_dim_values(LLVMGetOperand(v, 0), a, depth + 1) ||
        !work_dim_values(LLVMGetOperand(v, 1), b, depth + 1))
      return 0;
    int is_max = name[7] == 'a', is_unsigned = name[5] == 'u';
    for (int i = 0; i < 3; i++) {
      int a_less = is_unsigned ? (uint64_t)a[i] < (uint64_t)b[i] : a[i] < b[i];
      out[i] = is_max == a_less ? b[i] : a[i];
    }
    return 1;
  }
  switch (op) {
  case LLVMZExt:
  case LLVMTrunc:
  case LLVMFreeze:
    return work_dim_values(LLVMGetOperand(v, 0), out, depth + 1);
  case LLVMSExt:
    if (!work_dim_values(LLVMGetOperand(v, 0), out, depth + 1)) return 0;
    if (int_width(LLVMGetOperand(v, 0)) == 1)
      for (int i = 0; i < 3; i++)
        out[i] = out[i] ? -1 : 0;
    return 1;
  case LLVMAnd:
  case LLVMOr:
  case LLVMXor:
    if (int_width(v) != 1 || !work_dim_values(LLVMGetOperand(v, 0), a, depth + 1) ||
        !work_dim_values(LLVMGetOperand(v, 1), b, depth + 1))
      return 0;
    for (int i = 0; i < 3; i++)
      out[i] = op == LLVMAnd  ? (a[i] & b[i] & 1)
               : op == LLVMOr ? ((a[i] | b[i]) & 1)
                              : ((a[i] ^ b[i]) & 1);
    return 1;
  case LLVMSelect:
    if (!work_dim_values(LLVMGetOperand(v, 0), c, depth + 1) ||
        !work_dim_values(LLVMGetOperand(v, 1), a, depth + 1) ||
        !work_dim_values(LLVMGetOperand(v, 2), b, depth + 1))
      return 0;
    for (int i = 0; i < 3; i++)
      out[i] = (c[i] & 1) ? a[i] : b[i];
    return 1;
  case LLVMICmp: {
    if (!work_dim_values(LLVMGetOperand(v, 0), a, depth + 1) ||
        !work_dim_values(LLVMGetOperand(v, 1), b, depth + 1))
      return 0;
    LLVMIntPredicate p = LLVMGetICmpPredicate(v);
    for (int i = 0; i < 3; i++) {
      uint64_t ua = (uint64_t)a[i], ub = (uint64_t)b[i];
      int r;
      switch (p) {
      case LLVMIntEQ:
        r = a[i] == b[i];
        break;
      case LLVMIntNE:
        r = a[i] != b[i];
        break;
      case LLVMIntUGT:
        r = ua > ub;
        break;
      case LLVMIntUGE:
        r = ua >= ub;
        break;
      case LLVMIntULT:
        r = ua < ub;
        break;
      case LLVMIntULE:
        r = ua <= ub;
        break;
      case LLVMIntSGT:
        r = a[i] > b[i];
        break;
      case LLVMIntSGE:
        r = a[i] >= b[i];
        break;
      case LLVMIntSLT:
        r = a[i] < b[i];
        break;
      default:
        r = a[i] <= b[i];
        break;
      }
      out[i] = r;
    }
    return 1;
  }
  default:
    return 0;
  }
}

static uint32_t dims_where_true(const int64_t c[3]) {
  uint32_t mask = 0;
  for (int i = 0; i < 3; i++)
    if (c[i] & 1) mask |= 2u << i;
  return mask;
}

/* The work dimensions in which control can pass from block `from` to block
 * `to`: get_global_id(1) is a branch on get_work_dim() around the calls of
 * the ids, and a phi after it. Known from `from`'s own branch and, while
 * blocks have one predecessor, from theirs. */
static uint32_t edge_dims(LLVMBasicBlockRef from, LLVMBasicBlockRef to, int depth) {
  uint32_t mask = ALL_DIMS;
  LLVMValueRef term = LLVMGetBasicBlockTerminator(from);
  if (term && LLVMIsABranchInst(term) && LLVMIsConditional(term)) {
    int64_t c[3];
    LLVMBasicBlockRef t = LLVMGetSuccessor(term, 0), f = LLVMGetSuccessor(term, 1);
    if (t != f && work_dim_values(LLVMGetCondition(term), c, 0)) {
      uint32_t taken = dims_where_true(c);
      mask = t == to ? taken : ALL_DIMS & ~taken;
    }
  }
  if (depth >= 8) return mask;
  /* from's single predecessor, if it has one (one branch naming it once). */
  LLVMUseRef use = LLVMGetFirstUse(LLVMBasicBlockAsValue(from));
  if (!use || LLVMGetNextUse(use)) return mask;
  LLVMValueRef user = LLVMGetUser(use);
  if (!LLVMIsABranchInst(user)) return mask;
  unsigned named = 0;
  for (unsigned i = 0; i < LLVMGetNumSuccessors(user); i++)
    named += LLVMGetSuccessor(user, i) == from;
  if (named != 1) return mask;
  return mask & edge_dims(LLVMGetInstructionParent(user), from, depth + 1);
}

/* ---- values ----------------------------------------------------------------- */

/* A check that the forms of s fit `width` bits: FITS forms in the footprint
 * (a form without terms is checked here and now; 0 when it cannot fit). */
static int add_checks(struct analysis *a, const struct fset *s, unsigned width, int is_signed);

static const struct fset *eval(struct analysis *a, LLVMValueRef v);

/* The offset of p from base when p is base plus constant bytes. */
static int constant_offset(LLVMTargetDataRef td, LLVMValueRef p, LLVMValueRef base, int64_t *off) {
  *off = 0;
  for (int depth = 0; depth < 8; depth++) {
    if (p == base) return 1;
    int is_gep = LLVMIsAGetElementPtrInst(p) ||
                 (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr);
    if (!is_gep || LLVMGetNumOperands(p) != 2) return 0;
    LLVMValueRef idx = LLVMGetOperand(p, 1);
    if (!LLVMIsAConstantInt(idx)) return 0;
    int64_t size = (int64_t)LLVMABISizeOfType(td, LLVMGetGEPSourceElementType(p));
    *off += LLVMConstIntGetSExtValue(idx) * size;
    p = LLVMGetOperand(p, 0);
  }
  return 0;
}

/* The argument whose kernarg slot p points at, or -1. */
static int kernarg_slot(struct analysis *a, LLVMValueRef p, uint32_t kind) {
  int64_t off;
  if (!constant_offset(a->td, p, a->kernarg, &off)) return -1;
  for (uint32_t i = 0; i < a->meta->num_args; i++)
    if (a->meta->args[i].kind == kind && (int64_t)a->meta->args[i].offset == off) return (int)i;
  return -1;
}

static int is_unsigned_type(const char *name) {
  return name && (name[0] == 'u' || !strncmp(name, "size_t", 6) || !strcmp(name, "bool"));
}

static void eval_call(struct analysis *a, LLVMValueRef v, struct fset *out) {
  const char *name = callee_name(v);
  if (!name || strncmp(name, "__aquila_", 9) || LLVMGetNumArgOperands(v) != 1) return;
  LLVMValueRef dim = LLVMGetOperand(v, 0);
  if (!LLVMIsAConstantInt(dim)) return;
  uint64_t d = LLVMConstIntGetZExtValue(dim);
  if (d > 2) return;
  static const struct {
    const char *name;
    uint32_t var, factor_kind;
  } queries[] = {
      {"__aquila_group_id", AQUILA_FOOTPRINT_GROUP_ID, 0},
      {"__aquila_local_id", AQUILA_FOOTPRINT_LOCAL_ID, 0},
      {"__aquila_enqueued_local_size", 0, AQUILA_FOOTPRINT_ENQUEUED_LOCAL_SIZE},
      {"__aquila_local_size", 0, AQUILA_FOOTPRINT_LOCAL_SIZE},
      {"__aquila_global_size", 0, AQUILA_FOOTPRINT_GLOBAL_SIZE},
      {"__aquila_num_groups", 0, AQUILA_FOOTPRINT_NUM_GROUPS},
      {"__aquila_global_offset", 0, AQUILA_FOOTPRINT_GLOBAL_OFFSET},
  };
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
    if (strcmp(name + 9, queries[i].name + 9)) continue;
    if (queries[i].var)
      set_term(out, queries[i].var + (uint32_t)d, 0);
    else
      set_term(out, AQUILA_FOOTPRINT_ONE, queries[i].factor_kind << 8 | (uint32_t)d);
    return;
  }
}

static void eval_load(struct analysis *a, LLVMValueRef v, struct fset *out) {
  int arg = kernarg_slot(a, LLVMGetOperand(v, 0), AQUILA_ARG_VALUE);
  if (arg < 0 || arg > 0xff) return;
  const struct aquila_fatbin_arg *m = &a->meta->args[arg];
  int w = int_width(v);
  if (w == 0 || w > 64 || (uint32_t)w != 8 * m->size) return;
  uint32_t kind =
      is_unsigned_type(m->type_name) ? AQUILA_FOOTPRINT_ARG_ZEXT : AQUILA_FOOTPRINT_ARG_SEXT;
  set_term(out, AQUILA_FOOTPRINT_ONE, kind << 8 | (uint32_t)arg);
}

/* An extension of s from `from` bits: a constant is extended here; other
 * forms are themselves once the runtime has checked that they fit. */
static void eval_extension(struct analysis *a, const struct fset *s, unsigned from, int is_signed,
                           struct fset *out) {
  *out = *s;
  if (!s->known || from >= 64) return;
  for (uint32_t i = 0; i < out->n; i++) {
    struct form *x = &out->f[i];
    if (x->n) continue;
    uint64_t u = (uint64_t)x->c & ((1ull << from) - 1);
    if (is_signed && (u >> (from - 1)) & 1) u |= ~((1ull << from) - 1);
    x->c = (int64_t)u;
  }
  if (!add_checks(a, out, from, is_signed)) out->known = 0;
}

static void compute(struct analysis *a, LLVMValueRef v, struct fset *out) {
  memset(out, 0, sizeof *out);
  int w = int_width(v);
  if (w == 0 || w > 64) return;
  if (LLVMIsAConstantInt(v)) {
    set_const(out, LLVMConstIntGetSExtValue(v));
    return;
  }
  if (LLVMIsAArgument(v)) {
    for (unsigned d = 0; d < 3 && 2 + d < LLVMCountParams(a->wi); d++)
      if (LLVMGetParam(a->wi, 2 + d) == v) set_term(out, AQUILA_FOOTPRINT_LOCAL_ID + d, 0);
    return;
  }
  if (!LLVMIsAInstruction(v)) return;
  LLVMOpcode op = LLVMGetInstructionOpcode(v);
  switch (op) {
  case LLVMCall:
    eval_call(a, v, out);
    return;
  case LLVMLoad:
    eval_load(a, v, out);
    return;
  case LLVMAdd:
  case LLVMSub:
  case LLVMMul:
    set_binop(eval(a, LLVMGetOperand(v, 0)), eval(a, LLVMGetOperand(v, 1)),
              op == LLVMAdd   ? OP_ADD
              : op == LLVMSub ? OP_SUB
                              : OP_MUL,
              out);
    return;
  case LLVMOr:
    if (LLVMGetIsDisjoint(v))
      set_binop(eval(a, LLVMGetOperand(v, 0)), eval(a, LLVMGetOperand(v, 1)), OP_ADD, out);
    return;
  case LLVMShl: {
    LLVMValueRef amount = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(amount) || LLVMConstIntGetZExtValue(amount) >= (uint64_t)w ||
        LLVMConstIntGetZExtValue(amount) > 62)
      return;
    struct fset scale;
    set_const(&scale, (int64_t)1 << LLVMConstIntGetZExtValue(amount));
    set_binop(eval(a, LLVMGetOperand(v, 0)), &scale, OP_MUL, out);
    return;
  }
  case LLVMAnd: {
    /* x & (2^k - 1): x itself once x fits k bits (instcombine's zext). */
    LLVMValueRef mask = LLVMGetOperand(v, 1);
    if (!LLVMIsAConstantInt(mask)) return;
    uint64_t m = LLVMConstIntGetZExtValue(mask);
    if (!m || (m & (m + 1))) return;
    unsigned k = (unsigned)__builtin_popcountll(m);
    if (k >= (unsigned)w) {
      *out = *eval(a, LLVMGetOperand(v, 0));
      return;
    }
    eval_extension(a, eval(a, LLVMGetOperand(v, 0)), k, 0, out);
    return;
  }
  case LLVMZExt:
  case LLVMSExt: {
    LLVMValueRef x = LLVMGetOperand(v, 0);
    unsigned from = (unsigned)int_width(x);
    if (!from) return;
    eval_extension(a, eval(a, x), from, op == LLVMSExt, out);
    return;
  }
  case LLVMTrunc:
  case LLVMFreeze:
    *out = *eval(a, LLVMGetOperand(v, 0));
    return;
  case LLVMSelect: {
    int64_t c[3];
    uint32_t mask = 0;
    if (work_dim_values(LLVMGetOperand(v, 0), c, 0)) {
      for (int i = 0; i < 3; i++)
        if (c[i] & 1) mask |= 2u << i;
    } else {
      /* Either value in any dimension. */
      set_union(eval(a, LLVMGetOperand(v, 1)), eval(a, LLVMGetOperand(v, 2)), out);
      return;
    }
    set_select(eval(a, LLVMGetOperand(v, 1)), eval(a, LLVMGetOperand(v, 2)), mask, out);
    return;
  }
  case LLVMPHI: {
    unsigned n = LLVMCountIncoming(v);
    LLVMBasicBlockRef here = LLVMGetInstructionParent(v);
    out->known = 1;
    for (unsigned i = 0; i < n && out->known; i++) {
      struct fset part, u, none = {1, 0, {{0}}};
      set_select(eval(a, LLVMGetIncomingValue(v, i)), &none,
                 edge_dims(LLVMGetIncomingBlock(v, i), here, 0), &part);
      set_union(out, &part, &u);
      *out = u;
    }
    return;
  }
  default:
    return;
  }
}

static const struct fset *eval(struct analysis *a, LLVMValueRef v) {
  void *got = ptr_map_get(&a->values, v);
  if (got == &in_progress) return &unknown_set; /* a cycle: a loop's value */
  if (got) return got;
  if (++a->visits > MAX_VISITS) return &unknown_set;
  ptr_map_put(&a->values, v, &in_progress);
  struct fset *s = set_new();
  compute(a, v, s);
  ptr_map_put(&a->values, v, s);
  return s;
}

/* ---- the footprint being built ---------------------------------------------- */

static struct aquila_footprint_form *new_form(struct analysis *a) {
  struct aquila_fatbin_footprint *fp = a->fp;
  if (fp->num_forms == AQUILA_FOOTPRINT_MAX_FORMS) {
    a->too_many = 1;
    return NULL;
  }
  if (fp->num_forms == a->forms_cap) {
    uint32_t cap = a->forms_cap ? 2 * a->forms_cap : 16;
    struct aquila_footprint_form *f = realloc(fp->forms, cap * sizeof *f);
    if (!f) abort();
    fp->forms = f;
    a->forms_cap = cap;
  }
  struct aquila_footprint_form *x = &fp->forms[fp->num_forms++];
  memset(x, 0, sizeof *x);
  return x;
}

static void copy_terms(struct aquila_footprint_form *to, const struct form *from) {
  to->num_terms = from->n;
  memcpy(to->terms, from->t, from->n * sizeof *from->t);
}

static int same_terms(const struct aquila_footprint_form *x, const struct form *f) {
  if (x->num_terms != f->n) return 0;
  for (uint32_t i = 0; i < f->n; i++)
    if (term_key_cmp(&x->terms[i], &f->t[i]) || x->terms[i].coef != f->t[i].coef) return 0;
  return 1;
}

static int add_checks(struct analysis *a, const struct fset *s, unsigned width, int is_signed) {
  for (uint32_t i = 0; i < s->n; i++) {
    const struct form *f = &s->f[i];
    if (!f->n) {
      /* Extended above already: nothing to check. */
      continue;
    }
    uint32_t kind = is_signed ? AQUILA_FOOTPRINT_FITS_SIGNED : AQUILA_FOOTPRINT_FITS_UNSIGNED;
    int seen = 0;
    for (uint32_t j = 0; j < a->fp->num_forms && !seen; j++) {
      struct aquila_footprint_form *x = &a->fp->forms[j];
      if (x->kind == kind && x->arg == width && x->lo == f->c && same_terms(x, f)) {
        x->work_dims |= f->dims;
        seen = 1;
      }
    }
    if (seen) continue;
    struct aquila_footprint_form *x = new_form(a);
    if (!x) return 0;
    x->kind = kind;
    x->arg = width;
    x->work_dims = f->dims;
    x->lo = f->c;
    x->hi = f->c + 1;
    if (f->c == INT64_MAX) x->lo--, x->hi = INT64_MAX; /* never met: fits no width */
    copy_terms(x, f);
  }
  return 1;
}

/* ---- pointers ------------------------------------------------------------- */

static void pointer_info(struct analysis *a, LLVMValueRef p, struct pinfo *out, int depth);

static void gep_info(struct analysis *a, LLVMValueRef p, struct pinfo *out, int depth) {
  pointer_info(a, LLVMGetOperand(p, 0), out, depth + 1);
  if (out->kind != P_ARG) return;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(p);
  unsigned n = (unsigned)LLVMGetNumOperands(p);
  for (unsigned i = 1; i < n && out->off.known; i++) {
    LLVMValueRef idx = LLVMGetOperand(p, i);
    if (i > 1) {
      LLVMTypeKind k = LLVMGetTypeKind(t);
      if (k == LLVMStructTypeKind) {
        if (!LLVMIsAConstantInt(idx)) goto unknown;
        unsigned field = (unsigned)LLVMConstIntGetZExtValue(idx);
        struct fset c;
        set_const(&c, (int64_t)LLVMOffsetOfElement(a->td, t, field));
        struct fset sum;
        set_binop(&out->off, &c, OP_ADD, &sum);
        out->off = sum;
        t = LLVMStructGetTypeAtIndex(t, field);
        continue;
      }
      if (k != LLVMArrayTypeKind && k != LLVMVectorTypeKind) goto unknown;
      t = LLVMGetElementType(t);
    }
    unsigned w = (unsigned)int_width(idx);
    if (!w) goto unknown;
    const struct fset *is = eval(a, idx);
    struct fset index = *is;
    /* A narrower index is sign-extended. */
    if (w < 64) eval_extension(a, is, w, 1, &index);
    struct fset scale, scaled, sum;
    set_const(&scale, (int64_t)LLVMABISizeOfType(a->td, t));
    set_binop(&index, &scale, OP_MUL, &scaled);
    set_binop(&out->off, &scaled, OP_ADD, &sum);
    out->off = sum;
  }
  return;
unknown:
  out->off.known = 0; /* the argument's, somewhere */
}

static void pointer_info(struct analysis *a, LLVMValueRef p, struct pinfo *out, int depth) {
  memset(out, 0, sizeof *out);
  out->kind = P_UNKNOWN;
  LLVMTypeRef t = LLVMTypeOf(p);
  if (depth == 0) a->pointer_steps = 0;
  if (LLVMGetTypeKind(t) != LLVMPointerTypeKind || depth > 32 ||
      ++a->pointer_steps > MAX_POINTER_STEPS)
    return;
  unsigned as = LLVMGetPointerAddressSpace(t);
  /* __constant, __local; the kernarg segment and the work-group's record. */
  if (as == 2 || as == 3 || p == a->kernarg || p == LLVMGetParam(a->wi, 1)) {
    out->kind = P_NONGLOBAL;
    return;
  }
  if (LLVMIsAAllocaInst(p)) {
    out->kind = P_NONGLOBAL;
    return;
  }
  if (LLVMIsAGetElementPtrInst(p) ||
      (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr)) {
    gep_info(a, p, out, depth);
    return;
  }
  if (LLVMIsABitCastInst(p) || LLVMIsAAddrSpaceCastInst(p) ||
      (LLVMIsAConstantExpr(p) &&
       (LLVMGetConstOpcode(p) == LLVMAddrSpaceCast || LLVMGetConstOpcode(p) == LLVMBitCast))) {
    pointer_info(a, LLVMGetOperand(p, 0), out, depth + 1);
    return;
  }
  if (LLVMIsALoadInst(p)) {
    int arg = kernarg_slot(a, LLVMGetOperand(p, 0), AQUILA_ARG_GLOBAL_PTR);
    if (arg >= 0) {
      out->kind = P_ARG;
      out->arg = (uint32_t)arg;
      set_const(&out->off, 0);
      return;
    }
    if (kernarg_slot(a, LLVMGetOperand(p, 0), AQUILA_ARG_CONSTANT_PTR) >= 0)
      out->kind = P_NONGLOBAL;
    return;
  }
  if (LLVMIsASelectInst(p) || LLVMIsAPHINode(p)) {
    int is_select = LLVMIsASelectInst(p) != NULL;
    unsigned n = is_select ? 2 : LLVMCountIncoming(p);
    int64_t c[3];
    uint32_t mask = ALL_DIMS;
    int guarded = is_select && work_dim_values(LLVMGetOperand(p, 0), c, 0);
    if (guarded) mask = dims_where_true(c);
    struct pinfo *parts = calloc(n ? n : 1, sizeof *parts);
    if (!parts) abort();
    int all_nonglobal = 1, same_arg = 1;
    for (unsigned i = 0; i < n; i++) {
      LLVMValueRef in = is_select ? LLVMGetOperand(p, 1 + i) : LLVMGetIncomingValue(p, i);
      if (in == p) { /* a pointer that walks in a loop */
        same_arg = all_nonglobal = 0;
        break;
      }
      pointer_info(a, in, &parts[i], depth + 1);
      if (parts[i].kind != P_NONGLOBAL) all_nonglobal = 0;
      if (parts[i].kind != P_ARG || parts[i].arg != parts[0].arg) same_arg = 0;
    }
    if (all_nonglobal) {
      out->kind = P_NONGLOBAL;
    } else if (same_arg) {
      out->kind = P_ARG;
      out->arg = parts[0].arg;
      if (is_select) {
        set_select(&parts[0].off, &parts[1].off, guarded ? mask : ALL_DIMS, &out->off);
        if (!guarded) {
          struct fset u;
          set_union(&out->off, &parts[1].off, &u);
          out->off = u;
        }
      } else {
        LLVMBasicBlockRef here = LLVMGetInstructionParent(p);
        struct fset none = {1, 0, {{0}}};
        out->off = none;
        for (unsigned i = 0; i < n && out->off.known; i++) {
          struct fset part, u;
          set_select(&parts[i].off, &none, edge_dims(LLVMGetIncomingBlock(p, i), here, 0), &part);
          set_union(&out->off, &part, &u);
          out->off = u;
        }
      }
    }
    free(parts);
    return;
  }
}

/* A read through p (or p handed on). */
static void note_read(struct analysis *a, LLVMValueRef p) {
  struct pinfo pi;
  pointer_info(a, p, &pi, 0);
  if (pi.kind == P_ARG)
    a->read[pi.arg] = 1;
  else if (pi.kind == P_UNKNOWN)
    a->read_unknown = 1;
}

/* ---- writes --------------------------------------------------------------- */

static void write_anywhere(struct analysis *a, uint32_t arg) {
  a->fp->arg_state[arg] = AQUILA_FOOTPRINT_ANYWHERE;
}

/* A write of the bytes [p, p + size) (size < 0: unknown). */
static void record_write(struct analysis *a, LLVMValueRef p, int64_t size) {
  struct pinfo pi;
  pointer_info(a, p, &pi, 0);
  if (pi.kind == P_NONGLOBAL) return;
  if (pi.kind == P_UNKNOWN) {
    a->anywhere_all = 1;
    return;
  }
  uint32_t arg = pi.arg;
  if (a->fp->arg_state[arg] == AQUILA_FOOTPRINT_ANYWHERE) return;
  if (size <= 0 || !pi.off.known) {
    write_anywhere(a, arg);
    return;
  }
  a->fp->arg_state[arg] = AQUILA_FOOTPRINT_IN_FORMS;
  for (uint32_t i = 0; i < pi.off.n; i++) {
    const struct form *f = &pi.off.f[i];
    int64_t hi;
    if (__builtin_add_overflow(f->c, size, &hi)) {
      write_anywhere(a, arg);
      return;
    }
    struct aquila_footprint_form *x = NULL;
    for (uint32_t j = 0; j < a->fp->num_forms && !x; j++) {
      struct aquila_footprint_form *y = &a->fp->forms[j];
      if (y->kind == AQUILA_FOOTPRINT_WRITE && y->arg == arg && y->work_dims == f->dims &&
          same_terms(y, f))
        x = y;
    }
    if (x) {
      if (f->c < x->lo) x->lo = f->c;
      if (hi > x->hi) x->hi = hi;
      continue;
    }
    x = new_form(a);
    if (!x) return;
    x->kind = AQUILA_FOOTPRINT_WRITE;
    x->arg = arg;
    x->work_dims = f->dims;
    x->lo = f->c;
    x->hi = hi;
    copy_terms(x, f);
  }
}

/* Calls: memory intrinsics write their destination; printf; a call that is
 * given a pointer that may be global may write anywhere through it. */
static void scan_call(struct analysis *a, LLVMValueRef in) {
  const char *name = callee_name(in);
  if (name && !strcmp(name, "printf")) {
    a->fp->flags |= AQUILA_FOOTPRINT_PRINTF;
    return;
  }
  /* Work-item queries and the barrier touch no memory of the kernel's. */
  static const char *const queries[] = {"__aquila_work_dim",   "__aquila_global_size",
                                        "__aquila_local_size", "__aquila_enqueued_local_size",
                                        "__aquila_num_groups", "__aquila_group_id",
                                        "__aquila_local_id",   "__aquila_global_offset",
                                        "__aquila_barrier"};
  for (size_t i = 0; name && i < sizeof queries / sizeof queries[0]; i++)
    if (!strcmp(name, queries[i])) return;
  if (name && (!strncmp(name, "llvm.lifetime.", 14) || !strncmp(name, "llvm.prefetch", 13) ||
               !strncmp(name, "llvm.assume", 11) || !strncmp(name, "llvm.dbg.", 9) ||
               !strncmp(name, "llvm.experimental.noalias.scope.decl", 36)))
    return;
  if (name && (!strncmp(name, "llvm.memset.", 12) || !strncmp(name, "llvm.memcpy.", 12) ||
               !strncmp(name, "llvm.memmove.", 13))) {
    LLVMValueRef len = LLVMGetOperand(in, 2);
    int64_t size = LLVMIsAConstantInt(len) ? LLVMConstIntGetSExtValue(len) : -1;
    if (size != 0) record_write(a, LLVMGetOperand(in, 0), size);
    struct pinfo pi;
    pointer_info(a, LLVMGetOperand(in, 0), &pi, 0);
    if (pi.kind == P_ARG) a->stores[pi.arg] += 2; /* not one plain store */
    if (strncmp(name, "llvm.memset.", 12)) note_read(a, LLVMGetOperand(in, 1));
    return;
  }
  /* Defined functions kept out of line: their atomics and printf count. */
  LLVMValueRef callee = LLVMGetCalledValue(in);
  if (!callee || !LLVMIsAFunction(callee)) {
    a->anywhere_all = 1;
    a->fp->flags |= AQUILA_FOOTPRINT_GLOBAL_ATOMICS;
    return;
  }
  unsigned n = (unsigned)LLVMGetNumArgOperands(in);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef x = LLVMGetOperand(in, i);
    LLVMTypeRef t = LLVMTypeOf(x);
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind &&
        LLVMGetTypeKind(LLVMGetElementType(t)) == LLVMPointerTypeKind) {
      a->anywhere_all = 1; /* a scatter, or the like */
      continue;
    }
    if (LLVMGetTypeKind(t) != LLVMPointerTypeKind) continue;
    struct pinfo pi;
    pointer_info(a, x, &pi, 0);
    if (pi.kind == P_ARG)
      write_anywhere(a, pi.arg);
    else if (pi.kind == P_UNKNOWN)
      a->anywhere_all = 1;
    note_read(a, x);
  }
}

static void scan_function(struct analysis *a, LLVMValueRef f, int depth);

static void scan_callee_effects(struct analysis *a, LLVMValueRef in, int depth) {
  LLVMValueRef callee = LLVMGetCalledValue(in);
  if (callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee) && callee != a->wi &&
      depth < 4)
    scan_function(a, callee, depth + 1);
}

/* Atomics and printf anywhere in f (and what it calls); the writes only
 * in the work-item function itself. */
static void scan_function(struct analysis *a, LLVMValueRef f, int depth) {
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = LLVMGetNextInstruction(in)) {
      LLVMOpcode op = LLVMGetInstructionOpcode(in);
      if (op == LLVMAtomicRMW || op == LLVMAtomicCmpXchg) {
        LLVMValueRef p = LLVMGetOperand(in, 0);
        if (LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != 3) {
          if (depth == 0) {
            struct pinfo pi;
            pointer_info(a, p, &pi, 0);
            if (pi.kind == P_NONGLOBAL) continue;
            if (pi.kind == P_ARG)
              write_anywhere(a, pi.arg);
            else
              a->anywhere_all = 1;
          }
          a->fp->flags |= AQUILA_FOOTPRINT_GLOBAL_ATOMICS;
        }
        continue;
      }
      if (op == LLVMStore && depth == 0) {
        LLVMValueRef value = LLVMGetOperand(in, 0);
        record_write(a, LLVMGetOperand(in, 1),
                     (int64_t)LLVMStoreSizeOfType(a->td, LLVMTypeOf(value)));
        struct pinfo pi;
        pointer_info(a, LLVMGetOperand(in, 1), &pi, 0);
        if (pi.kind == P_ARG) {
          a->stores[pi.arg]++;
          a->store[pi.arg] = in;
        }
        /* A global pointer stored is read back where the analysis cannot see. */
        if (LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMPointerTypeKind) note_read(a, value);
        continue;
      }
      if (op == LLVMLoad && depth == 0) {
        note_read(a, LLVMGetOperand(in, 0));
        continue;
      }
      if (op == LLVMCall) {
        const char *name = callee_name(in);
        if (name && !strcmp(name, "printf")) a->fp->flags |= AQUILA_FOOTPRINT_PRINTF;
        if (depth == 0) scan_call(a, in);
        scan_callee_effects(a, in, depth);
      }
    }
}

/* ---- the report ------------------------------------------------------------- */

static void describe_factor(struct strbuf *sb, const struct aquila_fatbin_kernel *meta,
                            uint32_t factor) {
  static const char *const names[] = {"",
                                      "",
                                      "",
                                      "get_enqueued_local_size",
                                      "get_local_size",
                                      "get_global_size",
                                      "get_num_groups",
                                      "get_global_offset"};
  uint32_t kind = factor >> 8, index = factor & 0xffu;
  if (kind <= AQUILA_FOOTPRINT_ARG_SEXT)
    strbuf_printf(sb, "*%s",
                  index < meta->num_args && meta->args[index].name ? meta->args[index].name : "?");
  else
    strbuf_printf(sb, "*%s(%u)", names[kind], index);
}

static void describe_form(struct strbuf *sb, const struct aquila_fatbin_kernel *meta,
                          const struct aquila_footprint_form *x) {
  static const char *const vars[] = {"",
                                     "get_group_id(0)",
                                     "get_group_id(1)",
                                     "get_group_id(2)",
                                     "get_local_id(0)",
                                     "get_local_id(1)",
                                     "get_local_id(2)"};
  if (!x->num_terms) strbuf_printf(sb, "0");
  for (uint32_t i = 0; i < x->num_terms; i++) {
    const struct aquila_footprint_term *t = &x->terms[i];
    strbuf_printf(sb, "%s%lld",
                  i && t->coef >= 0 ? " + "
                  : i               ? " - "
                                    : "",
                  (long long)(i && t->coef < 0 ? -t->coef : t->coef));
    for (int j = 0; j < 3; j++)
      if (t->factor[j]) describe_factor(sb, meta, t->factor[j]);
    if (t->var) strbuf_printf(sb, "*%s", vars[t->var]);
  }
  if (x->kind == AQUILA_FOOTPRINT_WRITE)
    strbuf_printf(sb, " + [%lld, %lld)", (long long)x->lo, (long long)x->hi);
  else if (x->lo)
    strbuf_printf(sb, " + %lld", (long long)x->lo);
  if (x->work_dims != ALL_DIMS) {
    strbuf_printf(sb, " (work_dim");
    for (int d = 1; d <= 3; d++)
      if (x->work_dims & (1u << d)) strbuf_printf(sb, " %d", d);
    strbuf_printf(sb, ")");
  }
}

static void report(const struct aquila_fatbin_kernel *meta, struct strbuf *sb) {
  const struct aquila_fatbin_footprint *fp = meta->footprint;
  strbuf_printf(sb, "aquila: kernel '%s': footprint:", meta->name);
  if (fp->flags & AQUILA_FOOTPRINT_GLOBAL_ATOMICS) strbuf_printf(sb, " global atomics;");
  if (fp->flags & AQUILA_FOOTPRINT_PRINTF) strbuf_printf(sb, " printf;");
  int any = 0;
  for (uint32_t i = 0; i < meta->num_args; i++) {
    if (meta->args[i].kind != AQUILA_ARG_GLOBAL_PTR) continue;
    any = 1;
    strbuf_printf(sb, " %s:", meta->args[i].name ? meta->args[i].name : "?");
    if (fp->arg_state[i] == AQUILA_FOOTPRINT_NOT_WRITTEN) strbuf_printf(sb, " not written;");
    if (fp->arg_state[i] == AQUILA_FOOTPRINT_ANYWHERE) strbuf_printf(sb, " written anywhere;");
    if (fp->arg_state[i] != AQUILA_FOOTPRINT_IN_FORMS &&
        fp->arg_state[i] != AQUILA_FOOTPRINT_OVERWRITTEN)
      continue;
    if (fp->arg_state[i] == AQUILA_FOOTPRINT_OVERWRITTEN) strbuf_printf(sb, " overwritten,");
    int first = 1;
    for (uint32_t j = 0; j < fp->num_forms; j++) {
      const struct aquila_footprint_form *x = &fp->forms[j];
      if (x->kind != AQUILA_FOOTPRINT_WRITE || x->arg != i) continue;
      strbuf_printf(sb, "%s", first ? " bytes " : ", ");
      describe_form(sb, meta, x);
      first = 0;
    }
    strbuf_printf(sb, ";");
  }
  if (!any) strbuf_printf(sb, " no global buffers;");
  uint32_t checks = 0;
  for (uint32_t j = 0; j < fp->num_forms; j++)
    if (fp->forms[j].kind != AQUILA_FOOTPRINT_WRITE) checks++;
  strbuf_printf(sb, " %u checks\n", checks);
}

/* Whether store runs in every work-item: its block post-dominates the
 * entry. */
static int runs_always(LLVMValueRef wi, LLVMValueRef store) {
  struct cfg g;
  if (cfg_build(&g, wi)) return 0;
  int b = cfg_number(&g, LLVMGetInstructionParent(store)), on = 0;
  for (int x = 0, steps = 0; x >= 0 && steps <= (int)g.n && !on; x = g.ipdom[x], steps++)
    on = x == b;
  cfg_free(&g);
  return on;
}

/* IN_FORMS arguments that are never read and written by one store that
 * runs in every work-item, one form per work dimension: overwritten. */
static void find_overwritten(struct analysis *a) {
  struct aquila_fatbin_footprint *fp = a->fp;
  for (uint32_t i = 0; i < fp->num_args; i++) {
    if (fp->arg_state[i] != AQUILA_FOOTPRINT_IN_FORMS || a->read[i] || a->read_unknown ||
        a->stores[i] != 1)
      continue;
    uint32_t dims = 0;
    int overlap = 0;
    for (uint32_t j = 0; j < fp->num_forms; j++) {
      const struct aquila_footprint_form *x = &fp->forms[j];
      if (x->kind != AQUILA_FOOTPRINT_WRITE || x->arg != i) continue;
      overlap |= (dims & x->work_dims) != 0;
      dims |= x->work_dims;
    }
    if (!overlap && runs_always(a->wi, a->store[i]))
      fp->arg_state[i] = AQUILA_FOOTPRINT_OVERWRITTEN;
  }
}

void footprint_analyse(LLVMValueRef wi, LLVMTargetDataRef td, struct aquila_fatbin_kernel *meta,
                       struct strbuf *log) {
  struct aquila_fatbin_footprint *fp = calloc(1, sizeof *fp);
  if (!fp) abort();
  fp->num_args = meta->num_args;
  fp->arg_state = calloc(meta->num_args ? meta->num_args : 1, sizeof *fp->arg_state);
  if (!fp->arg_state) abort();
  struct analysis a = {.wi = wi, .kernarg = LLVMGetParam(wi, 0), .td = td, .meta = meta, .fp = fp};
  uint32_t slots = meta->num_args ? meta->num_args : 1;
  a.read = calloc(slots, 1);
  a.stores = calloc(slots, sizeof *a.stores);
  a.store = calloc(slots, sizeof *a.store);
  if (!a.read || !a.stores || !a.store) abort();
  scan_function(&a, wi, 0);

  /* Unknown pointers or too many forms: every global argument anywhere. */
  for (uint32_t i = 0; i < meta->num_args; i++)
    if ((a.anywhere_all || a.too_many) && meta->args[i].kind == AQUILA_ARG_GLOBAL_PTR)
      fp->arg_state[i] = AQUILA_FOOTPRINT_ANYWHERE;
    else if (meta->args[i].kind != AQUILA_ARG_GLOBAL_PTR)
      fp->arg_state[i] = AQUILA_FOOTPRINT_NOT_WRITTEN;
  /* Write forms only of arguments written in forms; checks only if any. */
  int any_forms = 0;
  for (uint32_t i = 0; i < meta->num_args; i++)
    any_forms |= fp->arg_state[i] == AQUILA_FOOTPRINT_IN_FORMS;
  uint32_t kept = 0;
  for (uint32_t j = 0; j < fp->num_forms; j++) {
    struct aquila_footprint_form *x = &fp->forms[j];
    int keep = x->kind == AQUILA_FOOTPRINT_WRITE
                   ? fp->arg_state[x->arg] == AQUILA_FOOTPRINT_IN_FORMS
                   : any_forms;
    if (keep) fp->forms[kept++] = *x;
  }
  fp->num_forms = kept;
  find_overwritten(&a);
  free(a.read);
  free(a.stores);
  free(a.store);

  for (size_t i = 0; i < a.values.cap; i++)
    if (a.values.keys[i] && a.values.values[i] != &in_progress) free(a.values.values[i]);
  ptr_map_free(&a.values);
  aquila_fatbin_footprint_free(meta->footprint);
  meta->footprint = fp;
  if (log) report(meta, log);
}
