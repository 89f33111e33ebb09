/* AQUILA_VECTORIZE=check on the runtime's side: for each kernel command,
 * the memory its arguments reach (each argument's buffer or sub-buffer,
 * once where arguments overlap) and the kernarg slots that point into it,
 * registered with the agent (hsa_ven_aquila_dispatch_check) so that it
 * runs the vectorized and the scalar work-group functions side by side;
 * and, when the command completes, the report of a difference: on
 * standard error and to the context's notification callback. The counts
 * go to standard error when the library is unloaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/hsa_ext_aquila.h"
#include "runtime.h"

struct ndrange_check {
  hsa_ven_aquila_dispatch_check_t check;
  hsa_ven_aquila_check_range_t *ranges;
  hsa_ven_aquila_check_slot_t *slots;
  uint32_t *slot_arg;      /* the kernel argument of each slot */
  uint64_t *slot_in_range; /* where that argument's buffer starts in its range */
  const void *kernarg;     /* registered for this kernarg segment, or NULL */
};

/* Floats closer than this count as close, not as different (two math
 * builtins within OpenCL's bounds of up to 4 ulp each, after a few
 * operations more). */
#define CLOSE_ULPS 16
/* Under -cl-unsafe-math-optimizations: the widest of OpenCL's bounds for
 * builtins built with it (atan2, pow and others: 8192 ulp). */
#define CLOSE_ULPS_UNSAFE 8192

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static int mode_on;
static atomic_ulong compared, differed, close_only, not_vectorized, skipped, with_images;

/* The component size of a 3-element vector type name ("uchar3*": 1),
 * else 0. */
static uint32_t vec3_component_size(const char *type_name) {
  static const struct {
    const char *name;
    uint32_t size;
  } types[] = {{"char3", 1}, {"uchar3", 1}, {"short3", 2}, {"ushort3", 2},
               {"half3", 2}, {"int3", 4},   {"uint3", 4},  {"float3", 4},
               {"long3", 8}, {"ulong3", 8}, {"double3", 8}};
  if (!type_name) return 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    size_t n = strlen(types[i].name);
    if (!strncmp(type_name, types[i].name, n) && (type_name[n] == '*' || type_name[n] == ' '))
      return types[i].size;
  }
  return 0;
}

/* How an argument of this type name ("float4*") compares. */
static uint32_t element_of(const char *type_name) {
  if (!type_name) return HSA_VEN_AQUILA_CHECK_BYTES;
  if (!strncmp(type_name, "float", 5)) return HSA_VEN_AQUILA_CHECK_FLOAT32;
  if (!strncmp(type_name, "double", 6)) return HSA_VEN_AQUILA_CHECK_FLOAT64;
  return HSA_VEN_AQUILA_CHECK_BYTES;
}

static void read_mode(void) {
  const char *env = getenv("AQUILA_VECTORIZE");
  mode_on = env && !strcmp(env, "check");
}

int vector_check_enabled(void) {
  pthread_once(&mode_once, read_mode);
  return mode_on;
}

/* One argument's buffer (a sub-buffer: its own part of the storage). */
struct extent {
  uint64_t lo, hi;
  uint32_t element, vec3;
};

static int by_start(const void *a, const void *b) {
  const struct extent *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct ndrange_check *vector_check_create(cl_kernel kernel) {
  const struct aquila_fatbin_kernel *meta = kernel->meta;
  uint32_t pointers = 0;
  for (uint32_t i = 0; i < meta->num_args; i++) {
    const struct aquila_fatbin_arg *a = &meta->args[i];
    if (a->kind == AQUILA_ARG_IMAGE || kernel->args[i].pointer) {
      /* The scalar run would write the real image, or the memory an SVM
       * pointer reaches (which has no bounds to copy): not compared. */
      atomic_fetch_add(&with_images, 1);
      return NULL;
    }
    if ((a->kind == AQUILA_ARG_GLOBAL_PTR || a->kind == AQUILA_ARG_CONSTANT_PTR) &&
        kernel->args[i].mem)
      pointers++;
  }
  struct ndrange_check *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  size_t n = pointers ? pointers : 1;
  c->ranges = calloc(n, sizeof *c->ranges);
  c->slots = calloc(n, sizeof *c->slots);
  c->slot_arg = calloc(n, sizeof *c->slot_arg);
  c->slot_in_range = calloc(n, sizeof *c->slot_in_range);
  struct extent *extents = calloc(n, sizeof *extents);
  if (!c->ranges || !c->slots || !c->slot_arg || !c->slot_in_range || !extents) {
    free(extents);
    vector_check_free(c);
    return NULL;
  }
  /* The ranges: the arguments' buffers, those that overlap merged (one
   * buffer as two arguments, a sub-buffer beside its parent), so that the
   * copies alias as the originals do. Only what the arguments reach is
   * copied and compared: other commands may be writing the rest of a
   * buffer whose sub-buffer this kernel gets (the CTS's math tests give
   * each thread its own part of one buffer). */
  uint32_t num_slots = 0;
  for (uint32_t i = 0; i < meta->num_args; i++) {
    const struct aquila_fatbin_arg *a = &meta->args[i];
    cl_mem m = kernel->args[i].mem;
    if ((a->kind != AQUILA_ARG_GLOBAL_PTR && a->kind != AQUILA_ARG_CONSTANT_PTR) || !m) continue;
    extents[num_slots].lo = (uint64_t)(uintptr_t)m->data;
    extents[num_slots].hi = extents[num_slots].lo + m->size;
    extents[num_slots].element = element_of(a->type_name);
    extents[num_slots].vec3 = vec3_component_size(a->type_name);
    c->slots[num_slots].kernarg_offset = a->offset;
    c->slot_arg[num_slots] = i;
    num_slots++;
  }
  struct extent *sorted = calloc(n, sizeof *sorted);
  if (!sorted) {
    free(extents);
    vector_check_free(c);
    return NULL;
  }
  memcpy(sorted, extents, num_slots * sizeof *sorted);
  qsort(sorted, num_slots, sizeof *sorted, by_start);
  uint32_t num_ranges = 0;
  for (uint32_t k = 0; k < num_slots; k++) {
    hsa_ven_aquila_check_range_t *last = num_ranges ? &c->ranges[num_ranges - 1] : NULL;
    if (last && sorted[k].lo < last->base + last->size) {
      if (sorted[k].hi > last->base + last->size) last->size = sorted[k].hi - last->base;
      /* Seen as two types: compared as bytes. */
      if (last->element != sorted[k].element) last->element = HSA_VEN_AQUILA_CHECK_BYTES;
      if (last->vec3_component_size != sorted[k].vec3 || sorted[k].lo != last->base)
        last->vec3_component_size = 0;
      continue;
    }
    c->ranges[num_ranges].base = sorted[k].lo;
    c->ranges[num_ranges].size = sorted[k].hi - sorted[k].lo;
    c->ranges[num_ranges].element = sorted[k].element;
    c->ranges[num_ranges].vec3_component_size = sorted[k].vec3;
    num_ranges++;
  }
  for (uint32_t k = 0; k < num_slots; k++) {
    uint32_t r = 0;
    while (r + 1 < num_ranges && !(extents[k].lo >= c->ranges[r].base &&
                                   extents[k].lo < c->ranges[r].base + c->ranges[r].size))
      r++;
    c->slots[k].range = r;
    c->slot_in_range[k] = extents[k].lo - c->ranges[r].base;
  }
  free(sorted);
  free(extents);
  const char *options = kernel->program->options;
  c->check.close_ulps = CLOSE_ULPS;
  c->check.finite_math_only = options && (strstr(options, "-cl-fast-relaxed-math") ||
                                          strstr(options, "-cl-finite-math-only"));
  int unsafe = options && (strstr(options, "-cl-fast-relaxed-math") ||
                           strstr(options, "-cl-unsafe-math-optimizations"));
  if (unsafe) c->check.close_ulps = CLOSE_ULPS_UNSAFE;
  c->check.denormals_may_flush = unsafe || (options && strstr(options, "-cl-denorms-are-zero"));
  c->check.num_ranges = num_ranges;
  c->check.num_slots = num_slots;
  c->check.ranges = c->ranges;
  c->check.slots = c->slots;
  return c;
}

void vector_check_register(struct ndrange_check *c, const void *kernarg) {
  if (hsa_ven_aquila_dispatch_check(kernarg, &c->check) == HSA_STATUS_SUCCESS)
    c->kernarg = kernarg;
  else
    c->check.result = HSA_VEN_AQUILA_CHECK_SKIPPED;
}

/* The argument whose buffer holds the difference, and the offset in it. */
static void difference_in_argument(const struct ndrange_check *c, uint32_t *arg, uint64_t *offset) {
  const hsa_ven_aquila_dispatch_check_t *k = &c->check;
  *arg = UINT32_MAX;
  *offset = k->offset;
  for (uint32_t s = 0; s < k->num_slots; s++) {
    if (k->slots[s].range != k->range || k->offset < c->slot_in_range[s]) continue;
    if (*arg == UINT32_MAX || c->slot_in_range[s] >= k->offset - *offset) {
      *arg = c->slot_arg[s];
      *offset = k->offset - c->slot_in_range[s];
    }
  }
}

static void append_bytes(char *out, size_t size, const uint8_t *bytes, uint32_t n) {
  size_t len = strlen(out);
  for (uint32_t i = 0; i < n && len + 4 < size; i++)
    len += (size_t)snprintf(out + len, size - len, "%s%02x", i ? " " : "", bytes[i]);
}

void vector_check_report(cl_event ev, struct ndrange_check *c) {
  const hsa_ven_aquila_dispatch_check_t *k = &c->check;
  const char *name = ev->kernel && ev->kernel->meta ? ev->kernel->meta->name : "?";
  switch (k->result) {
  case HSA_VEN_AQUILA_CHECK_SAME:
    atomic_fetch_add(&compared, 1);
    return;
  case HSA_VEN_AQUILA_CHECK_CLOSE:
    atomic_fetch_add(&compared, 1);
    atomic_fetch_add(&close_only, 1);
    debug_log("AQUILA_VECTORIZE=check: kernel '%s': floating-point results within %u ulp (or "
              "NaNs of other bits) between the vectorized and the scalar versions",
              name, k->close_ulps);
    return;
  case HSA_VEN_AQUILA_CHECK_NO_SCALAR:
    atomic_fetch_add(&not_vectorized, 1);
    debug_log("AQUILA_VECTORIZE=check: kernel '%s' has no vectorized version to compare (not "
              "vectorized, or built without the check mode)",
              name);
    return;
  case HSA_VEN_AQUILA_CHECK_DIFFERENT:
    break;
  default:
    atomic_fetch_add(&skipped, 1);
    debug_log("AQUILA_VECTORIZE=check: kernel '%s' ran without a comparison (out of memory for "
              "the copies, or it faulted)",
              name);
    return;
  }
  atomic_fetch_add(&compared, 1);
  atomic_fetch_add(&differed, 1);
  char message[1024];
  if (k->range == UINT32_MAX) {
    snprintf(message, sizeof message,
             "AQUILA_VECTORIZE=check: kernel '%s': the scalar work-group function faulted where "
             "the vectorized one did not",
             name);
  } else {
    uint32_t arg;
    uint64_t offset;
    difference_in_argument(c, &arg, &offset);
    char where[64] = "";
    if (k->group_known)
      snprintf(where, sizeof where, ", first after work-group (%u, %u, %u)", k->group_id[0],
               k->group_id[1], k->group_id[2]);
    char vector[64] = "", scalar[64] = "";
    append_bytes(vector, sizeof vector, k->vector_bytes, k->num_bytes);
    append_bytes(scalar, sizeof scalar, k->scalar_bytes, k->num_bytes);
    snprintf(message, sizeof message,
             "AQUILA_VECTORIZE=check: kernel '%s': the vectorized and the scalar work-group "
             "functions differ in argument %d at byte offset %llu%s: vectorized %s, scalar %s",
             name, arg == UINT32_MAX ? -1 : (int)arg, (unsigned long long)offset, where, vector,
             scalar);
  }
  fprintf(stderr, "aquila: %s\n", message);
  cl_context ctx = ev->queue ? ev->queue->context : NULL;
  if (ctx && ctx->notify) ctx->notify(message, NULL, 0, ctx->notify_data);
}

void vector_check_free(struct ndrange_check *c) {
  if (!c) return;
  /* A packet that never ran (a forked child's, a queue's last ones) must
   * not leave the agent a registration of freed memory. */
  if (c->kernarg && c->check.result == HSA_VEN_AQUILA_CHECK_NOT_RUN)
    hsa_ven_aquila_dispatch_check(c->kernarg, NULL);
  free(c->ranges);
  free(c->slots);
  free(c->slot_arg);
  free(c->slot_in_range);
  free(c);
}

__attribute__((destructor)) static void vector_check_summary(void) {
  if (!mode_on) return;
  unsigned long n = atomic_load(&compared), d = atomic_load(&differed),
                cl = atomic_load(&close_only), nv = atomic_load(&not_vectorized),
                s = atomic_load(&skipped), im = atomic_load(&with_images);
  if (!n && !nv && !s && !im) return;
  fprintf(stderr,
          "aquila: AQUILA_VECTORIZE=check: %lu kernel commands compared, %lu differed (%lu more "
          "only by floating-point rounding); %lu of kernels not vectorized, %lu with image or "
          "SVM arguments and %lu others ran without a comparison\n",
          n, d, cl, nv, im, s);
}
