/* Footprints at a launch: which bytes of a buffer argument a box of
 * work-groups may write, from the compiler's footprint of the kernel
 * (struct aquila_fatbin_footprint, compiler/analysis/footprint_analysis.c) and the launch's
 * values: the kernarg segment's arguments, the grid, the work-group size,
 * the global offset.
 *
 * Each form is evaluated as an interval over the box (interval arithmetic
 * in 128 bits; an overflow means "unknown", never a wrong range). The check
 * forms come first, over the whole grid: if one fails, the narrow integer
 * arithmetic of the kernel may wrap, and no write form is used. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "runtime.h"

typedef __int128 wide;

/* AQUILA_FOOTPRINT=0: write ranges and "never written" unused (for
 * comparisons); spreading still needs the footprint's other facts. */
static int footprint_enabled(void) {
  static atomic_int enabled = -1;
  int v = atomic_load_explicit(&enabled, memory_order_relaxed);
  if (v < 0) {
    const char *e = getenv("AQUILA_FOOTPRINT");
    v = !(e && !strcmp(e, "0"));
    atomic_store_explicit(&enabled, v, memory_order_relaxed);
  }
  return v;
}

struct interval {
  wide lo, hi;
};

static int factor_value(const struct footprint_launch *l, uint32_t factor, wide *out) {
  uint32_t kind = factor >> 8, d = factor & 0xffu;
  const struct aquila_fatbin_kernel *m = l->meta;
  switch (kind) {
  case AQUILA_FOOTPRINT_ARG_ZEXT:
  case AQUILA_FOOTPRINT_ARG_SEXT: {
    if (d >= m->num_args) return -1;
    const struct aquila_fatbin_arg *a = &m->args[d];
    if (a->kind != AQUILA_ARG_VALUE ||
        (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) ||
        (uint64_t)a->offset + a->size > m->kernarg_size)
      return -1;
    uint64_t u = 0;
    memcpy(&u, l->kernarg + a->offset, a->size); /* little-endian */
    if (kind == AQUILA_FOOTPRINT_ARG_SEXT && a->size < 8 && (u >> (8 * a->size - 1)) & 1)
      u |= ~0ull << (8 * a->size);
    *out = kind == AQUILA_FOOTPRINT_ARG_SEXT ? (wide)(int64_t)u : (wide)u;
    return 0;
  }
  case AQUILA_FOOTPRINT_ENQUEUED_LOCAL_SIZE:
    *out = d < 3 ? l->local[d] : 1;
    return 0;
  case AQUILA_FOOTPRINT_LOCAL_SIZE:
    if (!l->uniform) return -1; /* the last group's differs */
    *out = d < 3 ? l->local[d] : 1;
    return 0;
  case AQUILA_FOOTPRINT_GLOBAL_SIZE:
    *out = d < 3 ? l->grid[d] : 1;
    return 0;
  case AQUILA_FOOTPRINT_NUM_GROUPS:
    *out = d < 3 ? l->groups[d] : 1;
    return 0;
  case AQUILA_FOOTPRINT_GLOBAL_OFFSET:
    *out = d < 3 ? l->offset[d] : 0;
    return 0;
  default:
    return -1;
  }
}

static int mul_interval(struct interval *x, wide k) {
  wide a, b;
  if (__builtin_mul_overflow(x->lo, k, &a) || __builtin_mul_overflow(x->hi, k, &b)) return -1;
  x->lo = a < b ? a : b;
  x->hi = a < b ? b : a;
  return 0;
}

/* The interval of a form's value (terms plus lo) over the groups
 * first..last (inclusive, per dimension). */
static int form_interval(const struct footprint_launch *l, const struct aquila_footprint_form *x,
                         const uint64_t first[3], const uint64_t last[3], struct interval *out) {
  out->lo = out->hi = x->lo;
  for (uint32_t i = 0; i < x->num_terms && i < AQUILA_FOOTPRINT_MAX_TERMS; i++) {
    const struct aquila_footprint_term *t = &x->terms[i];
    struct interval v;
    if (t->var == AQUILA_FOOTPRINT_ONE) {
      v.lo = v.hi = 1;
    } else if (t->var >= AQUILA_FOOTPRINT_GROUP_ID && t->var < AQUILA_FOOTPRINT_LOCAL_ID) {
      uint32_t d = t->var - AQUILA_FOOTPRINT_GROUP_ID;
      v.lo = first[d];
      v.hi = last[d];
    } else if (t->var >= AQUILA_FOOTPRINT_LOCAL_ID && t->var < AQUILA_FOOTPRINT_VARS) {
      uint32_t d = t->var - AQUILA_FOOTPRINT_LOCAL_ID;
      v.lo = 0;
      v.hi = (wide)l->local[d] - 1;
    } else {
      return -1;
    }
    if (mul_interval(&v, t->coef)) return -1;
    for (int j = 0; j < 3; j++) {
      wide f;
      if (!t->factor[j]) continue;
      if (factor_value(l, t->factor[j], &f) || mul_interval(&v, f)) return -1;
    }
    if (__builtin_add_overflow(out->lo, v.lo, &out->lo) ||
        __builtin_add_overflow(out->hi, v.hi, &out->hi))
      return -1;
  }
  return 0;
}

int footprint_launch_init(struct footprint_launch *l, const struct aquila_fatbin_kernel *meta,
                          const void *kernarg, uint32_t work_dim, const uint64_t grid[3],
                          const uint32_t local[3]) {
  memset(l, 0, sizeof *l);
  l->meta = meta;
  l->kernarg = kernarg;
  l->work_dim = work_dim;
  l->uniform = 1;
  if (!meta->footprint || work_dim < 1 || work_dim > 3 || !footprint_enabled()) return 0;
  for (int d = 0; d < 3; d++) {
    l->grid[d] = grid[d] ? grid[d] : 1;
    l->local[d] = local[d] ? local[d] : 1;
    l->groups[d] = (l->grid[d] + l->local[d] - 1) / l->local[d];
    if (l->grid[d] % l->local[d]) l->uniform = 0;
  }
  if ((uint64_t)meta->hidden_kernarg_offset + sizeof(struct aquila_hidden_kernargs) <=
      meta->kernarg_size) {
    const struct aquila_hidden_kernargs *h =
        (const void *)(l->kernarg + meta->hidden_kernarg_offset);
    memcpy(l->offset, h->global_offset, sizeof l->offset);
  } else {
    return 0;
  }
  /* The checks, over the whole grid. */
  const uint64_t first[3] = {0, 0, 0};
  const uint64_t last[3] = {l->groups[0] - 1, l->groups[1] - 1, l->groups[2] - 1};
  const struct aquila_fatbin_footprint *f = meta->footprint;
  for (uint32_t i = 0; i < f->num_forms; i++) {
    const struct aquila_footprint_form *x = &f->forms[i];
    if (x->kind == AQUILA_FOOTPRINT_WRITE || !(x->work_dims & (1u << work_dim))) continue;
    struct interval v;
    if (form_interval(l, x, first, last, &v)) return 0;
    unsigned w = x->arg;
    wide lo = x->kind == AQUILA_FOOTPRINT_FITS_SIGNED ? -((wide)1 << (w - 1)) : 0;
    wide hi =
        x->kind == AQUILA_FOOTPRINT_FITS_SIGNED ? ((wide)1 << (w - 1)) - 1 : ((wide)1 << w) - 1;
    if (v.lo < lo || v.hi > hi) return 0;
  }
  l->usable = 1;
  return 1;
}

int footprint_range(const struct footprint_launch *l, uint32_t arg, const uint64_t first[3],
                    const uint64_t last[3], int64_t *lo, int64_t *hi) {
  const struct aquila_fatbin_footprint *f = l->meta->footprint;
  if (!f || arg >= f->num_args) return -1;
  if (!l->usable) return -1;
  if (f->arg_state[arg] == AQUILA_FOOTPRINT_NOT_WRITTEN) return 0;
  if (f->arg_state[arg] != AQUILA_FOOTPRINT_IN_FORMS &&
      f->arg_state[arg] != AQUILA_FOOTPRINT_OVERWRITTEN)
    return -1;
  int any = 0;
  wide rlo = 0, rhi = 0;
  for (uint32_t i = 0; i < f->num_forms; i++) {
    const struct aquila_footprint_form *x = &f->forms[i];
    if (x->kind != AQUILA_FOOTPRINT_WRITE || x->arg != arg || !(x->work_dims & (1u << l->work_dim)))
      continue;
    struct interval v;
    if (form_interval(l, x, first, last, &v)) return -1;
    /* lo is in the interval already; the bytes run to hi - lo past it. */
    wide end;
    if (__builtin_add_overflow(v.hi, (wide)x->hi - x->lo, &end)) return -1;
    if (!any || v.lo < rlo) rlo = v.lo;
    if (!any || end > rhi) rhi = end;
    any = 1;
  }
  if (!any) return 0;
  /* The kernel's 64-bit address arithmetic equals the forms' only here. */
  if (rlo < INT64_MIN || rhi > INT64_MAX) return -1;
  *lo = (int64_t)rlo;
  *hi = (int64_t)rhi;
  return 1;
}

int footprint_dense(const struct footprint_launch *l, uint32_t arg, const uint64_t first[3],
                    const uint64_t last[3], int64_t *lo, int64_t *hi) {
  const struct aquila_fatbin_footprint *f = l->meta->footprint;
  if (!f || !l->usable || !l->uniform || arg >= f->num_args ||
      f->arg_state[arg] != AQUILA_FOOTPRINT_OVERWRITTEN)
    return 0;
  const struct aquila_footprint_form *x = NULL;
  for (uint32_t i = 0; i < f->num_forms; i++) {
    const struct aquila_footprint_form *y = &f->forms[i];
    if (y->kind != AQUILA_FOOTPRINT_WRITE || y->arg != arg || !(y->work_dims & (1u << l->work_dim)))
      continue;
    if (x) return 0;
    x = y;
  }
  if (!x) return 0;
  /* Each variable's step and count over the box, and the lowest value. */
  wide step[AQUILA_FOOTPRINT_VARS] = {0}, base = x->lo;
  uint64_t count[AQUILA_FOOTPRINT_VARS] = {0};
  for (uint32_t i = 0; i < x->num_terms && i < AQUILA_FOOTPRINT_MAX_TERMS; i++) {
    const struct aquila_footprint_term *t = &x->terms[i];
    wide c = t->coef;
    for (int j = 0; j < 3; j++) {
      wide v;
      if (t->factor[j] && (factor_value(l, t->factor[j], &v) || __builtin_mul_overflow(c, v, &c)))
        return 0;
    }
    if (t->var >= AQUILA_FOOTPRINT_VARS) return 0;
    if (__builtin_add_overflow(step[t->var], c, &step[t->var])) return 0;
  }
  for (uint32_t v = 0; v < AQUILA_FOOTPRINT_VARS; v++) {
    uint64_t from = 0;
    if (v == AQUILA_FOOTPRINT_ONE) {
      count[v] = 1;
      from = 1;
    } else if (v < AQUILA_FOOTPRINT_LOCAL_ID) {
      from = first[v - AQUILA_FOOTPRINT_GROUP_ID];
      count[v] = last[v - AQUILA_FOOTPRINT_GROUP_ID] - from + 1;
    } else {
      count[v] = l->local[v - AQUILA_FOOTPRINT_LOCAL_ID];
    }
    wide at, span;
    if (__builtin_mul_overflow(step[v], (wide)from, &at) || __builtin_add_overflow(base, at, &base))
      return 0;
    if (step[v] < 0) { /* walked downward: the lowest value at the last */
      if (__builtin_mul_overflow(step[v], (wide)(count[v] - 1), &span) ||
          __builtin_add_overflow(base, span, &base))
        return 0;
      step[v] = -step[v];
    }
    if (count[v] == 1 || v == AQUILA_FOOTPRINT_ONE) step[v] = 0; /* a constant */
  }
  /* Dense when the steps, in increasing order, are each the size of all
   * that the smaller ones cover (a mixed radix over the work-items). */
  wide covered = (wide)x->hi - x->lo;
  for (;;) {
    int next = -1;
    for (int v = 0; v < AQUILA_FOOTPRINT_VARS; v++)
      if (step[v] && (next < 0 || step[v] < step[next])) next = v;
    if (next < 0) break;
    if (step[next] != covered || __builtin_mul_overflow(covered, (wide)count[next], &covered))
      return 0;
    step[next] = 0;
  }
  wide end;
  if (__builtin_add_overflow(base, covered, &end) || base < INT64_MIN || end > INT64_MAX) return 0;
  *lo = (int64_t)base;
  *hi = (int64_t)end;
  return 1;
}

int footprint_arg_written(const struct aquila_fatbin_kernel *meta, uint32_t arg) {
  const struct aquila_fatbin_footprint *f = meta->footprint;
  return !f || arg >= f->num_args || f->arg_state[arg] != AQUILA_FOOTPRINT_NOT_WRITTEN ||
         !footprint_enabled();
}

int footprint_spreadable(const struct aquila_fatbin_kernel *meta) {
  const struct aquila_fatbin_footprint *f = meta->footprint;
  return f && !(f->flags & (AQUILA_FOOTPRINT_GLOBAL_ATOMICS | AQUILA_FOOTPRINT_PRINTF));
}
