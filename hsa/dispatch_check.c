/* The vectorizer's self-check (AQUILA_VECTORIZE=check; hsa_ext_aquila.h):
 * the checks clients register for dispatches, and a checked dispatch's run
 * of both work-group functions on two copies of its memory, their
 * comparison, and the replay that names the work-group where they first
 * part. The CPU agent (cpu_agent.c) runs the work-groups themselves.
 *
 * Registration costs nothing while no check is registered: the agent looks
 * at one counter per dispatch it launches. */
#include "hsa_internal.h"

#include <aquila/cpu_abi.h>
#include <aquila/hsa_ext_aquila.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct registered_check {
  const void *kernarg;
  hsa_ven_aquila_dispatch_check_t *check;
  struct registered_check *next;
};

static pthread_mutex_t checks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct registered_check *checks;
static _Atomic uint32_t checks_pending;

static struct registered_check *aq_check_take_registration(const void *kernarg);

hsa_status_t hsa_ven_aquila_dispatch_check(const void *kernarg,
                                           hsa_ven_aquila_dispatch_check_t *check) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (kernarg && !check) {
    free(aq_check_take_registration(kernarg));
    return HSA_STATUS_SUCCESS;
  }
  if (!kernarg || (check->num_ranges && !check->ranges) || (check->num_slots && !check->slots))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < check->num_slots; i++)
    if (check->slots[i].range >= check->num_ranges || check->slots[i].kernarg_offset % 8)
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (uint32_t i = 0; i < check->num_ranges; i++)
    if (check->ranges[i].base + check->ranges[i].size < check->ranges[i].base)
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct registered_check *r = malloc(sizeof *r);
  if (!r) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  check->result = HSA_VEN_AQUILA_CHECK_NOT_RUN;
  r->kernarg = kernarg;
  r->check = check;
  pthread_mutex_lock(&checks_lock);
  r->next = checks;
  checks = r;
  atomic_fetch_add(&checks_pending, 1);
  pthread_mutex_unlock(&checks_lock);
  return HSA_STATUS_SUCCESS;
}

/* The registration for kernarg, out of the list, or NULL. */
static struct registered_check *aq_check_take_registration(const void *kernarg) {
  if (!atomic_load_explicit(&checks_pending, memory_order_acquire)) return NULL;
  struct registered_check *found = NULL;
  pthread_mutex_lock(&checks_lock);
  for (struct registered_check **p = &checks; *p; p = &(*p)->next) {
    if ((*p)->kernarg != kernarg) continue;
    found = *p;
    *p = found->next;
    atomic_fetch_sub(&checks_pending, 1);
    break;
  }
  pthread_mutex_unlock(&checks_lock);
  return found;
}

hsa_ven_aquila_dispatch_check_t *aq_check_take(const void *kernarg) {
  struct registered_check *r = aq_check_take_registration(kernarg);
  if (!r) return NULL;
  hsa_ven_aquila_dispatch_check_t *check = r->check;
  free(r);
  return check;
}

/* A copy of a range at the same offset within a page as the original, so
 * that the kernel's accesses have the alignment they have there. */
struct range_copy {
  unsigned char *block;
  unsigned char *at;
};

static int copy_alloc(struct range_copy *c, const hsa_ven_aquila_check_range_t *r) {
  size_t page = 4096, misalign = (size_t)(r->base % page);
  size_t bytes = (misalign + (size_t)r->size + page - 1) / page * page;
  c->block = aligned_alloc(page, bytes ? bytes : page);
  c->at = c->block ? c->block + misalign : NULL;
  return c->block ? 0 : -1;
}

static void *range_ptr(const hsa_ven_aquila_check_range_t *r) {
  return (void *)(uintptr_t)r->base;
}

struct check_state {
  hsa_ven_aquila_dispatch_check_t *check;
  struct range_copy *before, *shadow, *after;
  unsigned char *shadow_kernarg;
};

static void free_copies(struct range_copy *c, uint32_t n) {
  if (!c) return;
  for (uint32_t i = 0; i < n; i++)
    free(c[i].block);
  free(c);
}

static struct range_copy *alloc_copies(const hsa_ven_aquila_dispatch_check_t *check) {
  struct range_copy *c = calloc(check->num_ranges ? check->num_ranges : 1, sizeof *c);
  if (!c) return NULL;
  for (uint32_t i = 0; i < check->num_ranges; i++)
    if (copy_alloc(&c[i], &check->ranges[i])) {
      free_copies(c, check->num_ranges);
      return NULL;
    }
  return c;
}

/* Real memory from (to_real) or into the copies. */
static void copy_ranges(const hsa_ven_aquila_dispatch_check_t *check, struct range_copy *c,
                        int to_real) {
  for (uint32_t i = 0; i < check->num_ranges; i++) {
    void *real = range_ptr(&check->ranges[i]);
    size_t size = (size_t)check->ranges[i].size;
    if (to_real)
      memcpy(real, c[i].at, size);
    else
      memcpy(c[i].at, real, size);
  }
}

static void copy_between(const hsa_ven_aquila_dispatch_check_t *check, struct range_copy *dst,
                         const struct range_copy *src) {
  for (uint32_t i = 0; i < check->num_ranges; i++)
    memcpy(dst[i].at, src[i].at, (size_t)check->ranges[i].size);
}

/* Whether floating-point values a and b (their bits, as signed integers
 * ordered like the values) are close in the sense of close_ulps. */
static int close_values(const hsa_ven_aquila_dispatch_check_t *check, int64_t a, int64_t b,
                        int a_nan, int b_nan, int a_finite, int b_finite, int64_t smallest_normal) {
  if (a_nan && b_nan) return 1;
  if (check->denormals_may_flush && a < smallest_normal && a > -smallest_normal &&
      b < smallest_normal && b > -smallest_normal)
    return 1;
  if (check->finite_math_only && (!a_finite || !b_finite)) return 1;
  if (a_nan || b_nan || !a_finite || !b_finite) return 0;
  uint64_t d = a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
  return d <= check->close_ulps;
}

/* Bits of a float or double turned into integers that are ordered like the
 * values (so that neighbours differ by one). */
static int64_t ordered32(uint32_t u) {
  return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
static int64_t ordered64(uint64_t u) {
  return (u >> 63) ? -(int64_t)(u & 0x7fffffffffffffffull) : (int64_t)u;
}

static int element_close(const hsa_ven_aquila_dispatch_check_t *check, uint32_t element,
                         const unsigned char *x, const unsigned char *y) {
  if (element == HSA_VEN_AQUILA_CHECK_FLOAT32) {
    uint32_t a, b;
    memcpy(&a, x, 4);
    memcpy(&b, y, 4);
    int an = (a & 0x7fffffffu) > 0x7f800000u, bn = (b & 0x7fffffffu) > 0x7f800000u;
    int af = (a & 0x7f800000u) != 0x7f800000u, bf = (b & 0x7f800000u) != 0x7f800000u;
    return close_values(check, ordered32(a), ordered32(b), an, bn, af, bf, 0x00800000);
  }
  uint64_t a, b;
  memcpy(&a, x, 8);
  memcpy(&b, y, 8);
  const uint64_t exp = 0x7ff0000000000000ull, abs = 0x7fffffffffffffffull;
  int an = (a & abs) > exp, bn = (b & abs) > exp;
  int af = (a & exp) != exp, bf = (b & exp) != exp;
  return close_values(check, ordered64(a), ordered64(b), an, bn, af, bf,
                      (int64_t)0x0010000000000000ll);
}

/* The first byte where the real memory and the shadow copy differ: 2 when
 * it is a real difference, 1 when every difference is a close one (then
 * the first of those), 0 when the two are the same. */
static int first_difference(const hsa_ven_aquila_dispatch_check_t *check,
                            const struct range_copy *shadow, uint32_t *range, uint64_t *offset) {
  int found = 0;
  for (uint32_t i = 0; i < check->num_ranges; i++) {
    const unsigned char *real = range_ptr(&check->ranges[i]);
    size_t size = (size_t)check->ranges[i].size;
    if (!memcmp(real, shadow[i].at, size)) continue;
    uint32_t element = check->ranges[i].element;
    size_t step = element == HSA_VEN_AQUILA_CHECK_FLOAT32   ? 4
                  : element == HSA_VEN_AQUILA_CHECK_FLOAT64 ? 8
                                                            : 1;
    size_t vec3 = check->ranges[i].vec3_component_size;
    if (vec3 && vec3 % step) vec3 = 0;
    for (size_t at = 0; at < size; at += step) {
      size_t n = size - at < step ? size - at : step;
      /* A 3-element vector's padding component is undefined. */
      if (vec3 && at % (4 * vec3) >= 3 * vec3) continue;
      if (!memcmp(real + at, shadow[i].at + at, n)) continue;
      int close =
          step > 1 && n == step && element_close(check, element, real + at, shadow[i].at + at);
      if (!close || !found) {
        size_t byte = at;
        while (real[byte] == shadow[i].at[byte])
          byte++;
        *range = i;
        *offset = byte;
        found = 1;
      }
      if (!close) return 2;
    }
  }
  return found;
}

static size_t window(const hsa_ven_aquila_dispatch_check_t *check) {
  uint64_t left = check->ranges[check->range].size - check->offset;
  return left < 16 ? (size_t)left : 16;
}

static int window_differs(const hsa_ven_aquila_dispatch_check_t *check,
                          const struct range_copy *shadow) {
  const unsigned char *real = range_ptr(&check->ranges[check->range]);
  return memcmp(real + check->offset, shadow[check->range].at + check->offset, window(check)) != 0;
}

static void release(struct check_state *s) {
  uint32_t n = s->check->num_ranges;
  free_copies(s->before, n);
  free_copies(s->shadow, n);
  free_copies(s->after, n);
  free(s->shadow_kernarg);
}

void aq_check_run(hsa_ven_aquila_dispatch_check_t *check,
                  const struct aquila_kernel_descriptor *kernel, const void *kernarg,
                  uint64_t groups, const struct aq_check_runner *runner) {
  struct check_state s = {check, NULL, NULL, NULL, NULL};
  if (!(kernel->flags & AQUILA_KERNEL_HAS_SCALAR_TWIN) || !kernel->run_workgroup_scalar) {
    check->result = HSA_VEN_AQUILA_CHECK_NO_SCALAR;
    runner->run(runner->context, kernel->run_workgroup, kernarg, 0, 0, groups);
    return;
  }
  s.before = alloc_copies(check);
  s.shadow = alloc_copies(check);
  /* As aligned as the real one: the kernel loads a long16 argument with
   * instructions that need its alignment. */
  size_t align = kernel->kernarg_alignment > 16 ? kernel->kernarg_alignment : 16;
  if (align & (align - 1)) align = 128;
  s.shadow_kernarg =
      aligned_alloc(align, (kernel->kernarg_size + align - 1) / align * align + align);
  if (!s.before || !s.shadow || !s.shadow_kernarg) {
    release(&s);
    check->result = HSA_VEN_AQUILA_CHECK_SKIPPED;
    runner->run(runner->context, kernel->run_workgroup, kernarg, 0, 0, groups);
    return;
  }
  copy_ranges(check, s.before, 0);
  copy_between(check, s.shadow, s.before);
  /* The scalar run's pointers lead into the copies. */
  memcpy(s.shadow_kernarg, kernarg, kernel->kernarg_size);
  for (uint32_t i = 0; i < check->num_slots; i++) {
    const hsa_ven_aquila_check_slot_t *slot = &check->slots[i];
    if (slot->kernarg_offset + 8 > kernel->kernarg_size) continue;
    uint64_t p;
    memcpy(&p, s.shadow_kernarg + slot->kernarg_offset, sizeof p);
    const hsa_ven_aquila_check_range_t *r = &check->ranges[slot->range];
    if (p < r->base || p > r->base + r->size) continue;
    uint64_t moved = (uint64_t)(uintptr_t)s.shadow[slot->range].at + (p - r->base);
    memcpy(s.shadow_kernarg + slot->kernarg_offset, &moved, sizeof moved);
  }
  if (!runner->run(runner->context, kernel->run_workgroup, kernarg, 0, 0, groups)) {
    check->result = HSA_VEN_AQUILA_CHECK_SKIPPED; /* the fault is the dispatch's outcome */
    release(&s);
    return;
  }
  /* A fault of the scalar function alone is a difference too: it shows
   * where the real memory is left as the vectorized function wrote it. */
  int scalar_ran =
      runner->run(runner->context, kernel->run_workgroup_scalar, s.shadow_kernarg, 1, 0, groups);
  if (!scalar_ran) runner->clear_fault(runner->context);
  int difference =
      scalar_ran ? first_difference(check, s.shadow, &check->range, &check->offset) : 2;
  if (difference < 2) {
    check->result = difference ? HSA_VEN_AQUILA_CHECK_CLOSE : HSA_VEN_AQUILA_CHECK_SAME;
    if (difference) {
      check->num_bytes = (uint32_t)window(check);
      memcpy(check->vector_bytes,
             (unsigned char *)range_ptr(&check->ranges[check->range]) + check->offset,
             check->num_bytes);
      memcpy(check->scalar_bytes, s.shadow[check->range].at + check->offset, check->num_bytes);
    }
    release(&s);
    return;
  }
  check->result = HSA_VEN_AQUILA_CHECK_DIFFERENT;
  check->group_known = 0;
  if (!scalar_ran) {
    check->num_bytes = 0;
    check->range = UINT32_MAX;
    release(&s);
    return;
  }
  check->num_bytes = (uint32_t)window(check);
  memcpy(check->vector_bytes,
         (unsigned char *)range_ptr(&check->ranges[check->range]) + check->offset,
         check->num_bytes);
  memcpy(check->scalar_bytes, s.shadow[check->range].at + check->offset, check->num_bytes);
  /* The replay, from the starting contents, one work-group of each at a
   * time; then the real memory as the vectorized run left it. */
  s.after = alloc_copies(check);
  if (!s.after) {
    release(&s);
    return;
  }
  copy_ranges(check, s.after, 0);
  copy_ranges(check, s.before, 1);
  copy_between(check, s.shadow, s.before);
  for (uint64_t g = 0; g < groups; g++) {
    if (!runner->run(runner->context, kernel->run_workgroup, kernarg, 0, g, g + 1) ||
        !runner->run(runner->context, kernel->run_workgroup_scalar, s.shadow_kernarg, 1, g,
                     g + 1)) {
      runner->clear_fault(runner->context);
      break;
    }
    if (window_differs(check, s.shadow)) {
      runner->group_of(runner->context, g, check->group_id);
      check->group_known = 1;
      break;
    }
  }
  copy_ranges(check, s.after, 1);
  release(&s);
}
