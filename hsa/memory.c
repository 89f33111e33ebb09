/* Memory regions of the CPU agent (global fine-grained + kernarg, global
 * coarse-grained, group) and the hsa_memory_* allocation API. Allocations
 * are recorded so that hsa_memory_free can reject pointers it never handed
 * out instead of corrupting the heap. */
#include "hsa_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AQ_REGION_MAGIC 0x7e6105u
#define AQ_ALLOC_ALIGNMENT 4096u

struct aq_region {
  uint32_t magic;
  hsa_region_segment_t segment;
  uint32_t global_flags;
  bool alloc_allowed;
};

static const struct aq_region cpu_regions[] = {
    {AQ_REGION_MAGIC, HSA_REGION_SEGMENT_GLOBAL,
     HSA_REGION_GLOBAL_FLAG_KERNARG | HSA_REGION_GLOBAL_FLAG_FINE_GRAINED, true},
    {AQ_REGION_MAGIC, HSA_REGION_SEGMENT_GLOBAL, HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED, true},
    {AQ_REGION_MAGIC, HSA_REGION_SEGMENT_GROUP, 0, false},
};
#define AQ_REGION_COUNT (sizeof(cpu_regions) / sizeof(cpu_regions[0]))

static const struct aq_region *region_from_handle(hsa_region_t region) {
  for (size_t i = 0; i < AQ_REGION_COUNT; i++)
    if (region.handle == (uint64_t)(uintptr_t)&cpu_regions[i]) return &cpu_regions[i];
  return NULL;
}

static size_t physical_memory_size(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
}

hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  const struct aq_region *r = region_from_handle(region);
  if (!r) return HSA_STATUS_ERROR_INVALID_REGION;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  bool group = r->segment == HSA_REGION_SEGMENT_GROUP;
  switch (attribute) {
  case HSA_REGION_INFO_SEGMENT:
    *(hsa_region_segment_t *)value = r->segment;
    break;
  case HSA_REGION_INFO_GLOBAL_FLAGS:
    /* hsa.h: "undefined if the value of HSA_REGION_INFO_SEGMENT is not
     * HSA_REGION_SEGMENT_GLOBAL" - a value, not an error: no flag. */
    *(uint32_t *)value = r->global_flags;
    break;
  case HSA_REGION_INFO_SIZE:
    *(size_t *)value = group ? AQ_GROUP_SEGMENT_MAX : physical_memory_size();
    break;
  case HSA_REGION_INFO_ALLOC_MAX_SIZE:
    *(size_t *)value = group ? AQ_GROUP_SEGMENT_MAX : physical_memory_size();
    break;
  /* Only meaningful for a private-segment region, which the CPU agent does
   * not expose (private memory is the work-item's stack). */
  case HSA_REGION_INFO_ALLOC_MAX_PRIVATE_WORKGROUP_SIZE:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED:
    *(bool *)value = r->alloc_allowed;
    break;
  case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    *(size_t *)value = r->alloc_allowed ? AQ_ALLOC_ALIGNMENT : 0;
    break;
  /* hsa.h defines it only where RUNTIME_ALLOC_ALLOWED, and as a power of 2:
   * for the group region, the alignment of the group segment a dispatch gets. */
  case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT:
    *(size_t *)value = r->alloc_allowed ? AQ_ALLOC_ALIGNMENT : AQ_GROUP_SEGMENT_ALIGNMENT;
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent,
                                       hsa_status_t (*callback)(hsa_region_t region, void *data),
                                       void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* A remote agent's memory is reached through hsa_ext_aquila.h, not regions. */
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_SUCCESS;
  for (size_t i = 0; i < AQ_REGION_COUNT; i++) {
    hsa_region_t region = {(uint64_t)(uintptr_t)&cpu_regions[i]};
    hsa_status_t status = callback(region, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

/* ---- allocation registry: an open-addressing hash set of live blocks ---- */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static void **registry_slots; /* NULL = empty, TOMBSTONE = deleted */
static size_t registry_capacity, registry_used;
static char registry_tombstone;
#define TOMBSTONE ((void *)&registry_tombstone)

void aq_memory_fork(enum aq_fork_phase phase) {
  aq_fork_lock(&registry_lock, phase);
}

static size_t pointer_hash(const void *ptr, size_t capacity) {
  uint64_t x = (uint64_t)(uintptr_t)ptr;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (capacity - 1);
}

static bool registry_insert_slot(void **slots, size_t capacity, void *ptr) {
  for (size_t i = pointer_hash(ptr, capacity), n = 0; n < capacity;
       n++, i = (i + 1) & (capacity - 1)) {
    if (slots[i] == NULL || slots[i] == TOMBSTONE) {
      slots[i] = ptr;
      return true;
    }
  }
  return false;
}

static bool registry_add(void *ptr) {
  if ((registry_used + 1) * 2 > registry_capacity) {
    size_t capacity = registry_capacity ? registry_capacity * 2 : 1024;
    void **slots = calloc(capacity, sizeof(void *));
    if (!slots) return false;
    registry_used = 0;
    for (size_t i = 0; i < registry_capacity; i++) {
      if (registry_slots[i] && registry_slots[i] != TOMBSTONE) {
        registry_insert_slot(slots, capacity, registry_slots[i]);
        registry_used++;
      }
    }
    free(registry_slots);
    registry_slots = slots;
    registry_capacity = capacity;
  }
  registry_insert_slot(registry_slots, registry_capacity, ptr);
  registry_used++;
  return true;
}

static bool registry_remove(void *ptr) {
  if (!registry_capacity) return false;
  for (size_t i = pointer_hash(ptr, registry_capacity), n = 0; n < registry_capacity;
       n++, i = (i + 1) & (registry_capacity - 1)) {
    if (registry_slots[i] == NULL) return false;
    if (registry_slots[i] == ptr) {
      registry_slots[i] = TOMBSTONE;
      return true;
    }
  }
  return false;
}

void aq_memory_release_all(void) {
  pthread_mutex_lock(&registry_lock);
  for (size_t i = 0; i < registry_capacity; i++)
    if (registry_slots[i] && registry_slots[i] != TOMBSTONE) free(registry_slots[i]);
  free(registry_slots);
  registry_slots = NULL;
  registry_capacity = registry_used = 0;
  pthread_mutex_unlock(&registry_lock);
}

hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void **ptr) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  const struct aq_region *r = region_from_handle(region);
  if (!r) return HSA_STATUS_ERROR_INVALID_REGION;
  if (!ptr || size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!r->alloc_allowed || size > physical_memory_size())
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  void *block = NULL;
  if (posix_memalign(&block, AQ_ALLOC_ALIGNMENT, size) != 0)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  pthread_mutex_lock(&registry_lock);
  bool recorded = registry_add(block);
  pthread_mutex_unlock(&registry_lock);
  if (!recorded) {
    free(block);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  *ptr = block;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_free(void *ptr) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!ptr) return HSA_STATUS_SUCCESS;
  pthread_mutex_lock(&registry_lock);
  bool known = registry_remove(ptr);
  pthread_mutex_unlock(&registry_lock);
  if (!known) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  free(ptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!dst || !src) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size) memmove(dst, src, size);
  return HSA_STATUS_SUCCESS;
}

/* Every region is host memory that the CPU agent reads and writes directly,
 * so ownership needs no migration: validating the request is the work. */
hsa_status_t hsa_memory_assign_agent(void *ptr, hsa_agent_t agent, hsa_access_permission_t access) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!ptr || access < HSA_ACCESS_PERMISSION_RO || access > HSA_ACCESS_PERMISSION_RW)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_SUCCESS;
}

/* Registration exists so that agents without access to all host memory can
 * pin it; the CPU agent already accesses every host address. */
hsa_status_t hsa_memory_register(void *ptr, size_t size) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (size == 0 && ptr) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_deregister(void *ptr, size_t size) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_SUCCESS;
}
