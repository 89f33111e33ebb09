/* Specialized versions: a kernel that declares no reqd_work_group_size gets,
 * for the work-group sizes its launches really use, versions compiled as if
 * it had declared that size (the compiler's
 * aquila_compile_kernels_specialized): constant trip counts, rows jammed,
 * no scalar path for a partial vector. A 16 x 16 tiled SGEMM runs about
 * twice as fast so. A kernel whose code says a size gains it nothing
 * (AQUILA_KERNEL_SIZE_INDIFFERENT: no barriers, no vector version) gets
 * none.
 *
 * This module owns each program device's table of those versions (a few
 * per kernel, SPECIALIZED_PER_KERNEL; sizes past those keep the usual
 * code) and the choice of code at a launch. The first launch of a size
 * takes the version from the kernel cache when it holds one (the next run
 * of a program starts with it); else it runs the usual code and asks for
 * the version as a background build of the tiers' worker (tiers.c), which
 * starts it when the devices idle, a while after it was asked for, or at
 * once when they stay busy; later launches of that size run it once it is
 * in place.
 *
 * AQUILA_SPECIALIZE=0 turns them off; =now builds a size's version at its
 * first launch, which waits for it. A launch reads the table without a
 * lock: an entry's size is written before its state leaves
 * SPECIALIZED_FREE, its object before the state becomes
 * SPECIALIZED_READY. */
#include <stdlib.h>
#include <string.h>

#include "aquila/cpu_abi.h"
#include "runtime.h"

/* 0: off; 1: versions built in the background; 2 (AQUILA_SPECIALIZE=now):
 * built at the first launch of a size, which waits for it (tests and the
 * conformance suites: every launch of a kernel without a required size
 * then runs a version made for its size). */
static int specialize_mode(void) {
  const char *mode = getenv("AQUILA_SPECIALIZE");
  if (mode && !strcmp(mode, "0")) return 0;
  if (mode && !strcmp(mode, "now")) return 2;
  return 1;
}

static int specialize_enabled(void) {
  return specialize_mode() != 0;
}

/* AQUILA_SPECIALIZE=now: kernel k's version for size, built here. */
static void build_now(cl_program p, cl_uint slot, uint32_t k, const uint32_t size[3],
                      struct specialized_version *v) {
  struct upgrade_build *b = program_specialize_prepare(p, slot, k, size);
  if (!b) {
    atomic_store(&v->state, SPECIALIZED_FAILED);
    return;
  }
  upgrade_build_run(b, 1);
  program_specialize_install(p, slot, b, v);
  upgrade_build_free(b);
}

struct specialized_version *specialize_table_create(const struct aquila_fatbin *fb) {
  if (!specialize_enabled() || !fb->num_kernels || !aquila_fatbin_find_code(fb, "bitcode"))
    return NULL;
  /* Unoptimized code gains nothing from a known size. */
  if (fb->build_options && strstr(fb->build_options, "-cl-opt-disable")) return NULL;
  return calloc((size_t)fb->num_kernels * SPECIALIZED_PER_KERNEL,
                sizeof(struct specialized_version));
}

static int same_size(const struct specialized_version *v, const uint32_t size[3]) {
  return v->local_size[0] == size[0] && v->local_size[1] == size[1] &&
         v->local_size[2] == size[2];
}

static struct specialized_version *find_entry(struct specialized_version *entries,
                                              const uint32_t size[3]) {
  for (int e = 0; e < SPECIALIZED_PER_KERNEL; e++)
    if (atomic_load_explicit(&entries[e].state, memory_order_acquire) != SPECIALIZED_FREE &&
        same_size(&entries[e], size))
      return &entries[e];
  return NULL;
}

/* A new size: an entry claimed for it under the program's lock (so that
 * two launches with it take one), or NULL when another launch claimed it
 * first or every entry has a size. */
static struct specialized_version *claim_entry(cl_program p, struct specialized_version *entries,
                                               const uint32_t size[3]) {
  struct specialized_version *v = NULL;
  pthread_mutex_lock(&p->lock);
  if (!find_entry(entries, size))
    for (int e = 0; e < SPECIALIZED_PER_KERNEL && !v; e++)
      if (atomic_load_explicit(&entries[e].state, memory_order_acquire) == SPECIALIZED_FREE) {
        v = &entries[e];
        memcpy(v->local_size, size, sizeof v->local_size);
        atomic_store_explicit(&v->state, SPECIALIZED_QUEUED, memory_order_release);
      }
  pthread_mutex_unlock(&p->lock);
  return v;
}

uint64_t specialize_kernel_object(cl_kernel k, cl_uint slot, const size_t local[3],
                                  uint64_t generic) {
  cl_program p = k->program;
  struct program_device *pd = &p->per_device[slot];
  const uint32_t *reqd = k->meta->reqd_work_group_size;
  /* One work-item a group (clEnqueueTask) gains nothing from its size, nor
   * does a kernel whose code says so (no barriers, no vector version). */
  if (!pd->specialized || reqd[0] || reqd[1] || reqd[2] || local[0] * local[1] * local[2] == 1 ||
      (k->code_flags[slot] & AQUILA_KERNEL_SIZE_INDIFFERENT))
    return generic;
  uint32_t index = (uint32_t)(k->meta - p->fatbin->kernels);
  uint32_t size[3] = {(uint32_t)local[0], (uint32_t)local[1], (uint32_t)local[2]};
  struct specialized_version *entries = &pd->specialized[(size_t)index * SPECIALIZED_PER_KERNEL];
  struct specialized_version *v = find_entry(entries, size);
  if (!v) {
    v = claim_entry(p, entries, size);
    /* This launch asks for the version: from the cache, else built. */
    if (v && !program_specialize_from_cache(p, slot, index, size, v) &&
        atomic_load_explicit(&v->state, memory_order_acquire) == SPECIALIZED_QUEUED) {
      if (specialize_mode() == 2) {
        build_now(p, slot, index, size, v);
      } else {
        debug_log("kernel '%s': launched with work-groups of %u x %u x %u: a version for that "
                  "size is built in the background",
                  k->meta->name, size[0], size[1], size[2]);
        tiers_queue_specialization(p, slot, index, v);
      }
    }
    if (!v) v = find_entry(entries, size);
    if (!v) return generic;
  }
  switch (atomic_load_explicit(&v->state, memory_order_acquire)) {
  case SPECIALIZED_READY:
    if (debug_enabled() && !atomic_exchange(&v->reported, 1))
      debug_log("kernel '%s': launched with its version for work-groups of %u x %u x %u",
                k->meta->name, size[0], size[1], size[2]);
    return atomic_load_explicit(&v->object, memory_order_acquire);
  case SPECIALIZED_QUEUED:
    tiers_quick_code_launched(&v->object);
    return generic;
  default:
    return generic;
  }
}
