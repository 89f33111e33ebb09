/* AQL queues: creation (agent queues processed by the CPU agent, and soft
 * queues processed by the application), destruction, inactivation and the
 * read/write index operations in every memory order. */
#include "hsa_internal.h"

#include <hsa/hsa_ext_amd.h>
#include <stdlib.h>
#include <string.h>

#define AQ_QUEUE_MAGIC 0x90e0e5u
#define AQ_PACKET_SIZE 64u

static _Atomic uint64_t next_queue_id;

struct aq_queue *aq_queue_from_public(const hsa_queue_t *queue) {
  struct aq_queue *q = (struct aq_queue *)queue;
  if (!aq_handle_plausible((uintptr_t)q, AQ_CACHE_LINE) || q->magic != AQ_QUEUE_MAGIC) return NULL;
  return q;
}

static bool is_power_of_two(uint32_t x) {
  return x && !(x & (x - 1));
}

static struct aq_queue *queue_new(uint32_t size, hsa_queue_type32_t type, uint32_t features) {
  struct aq_queue *q = aligned_alloc(AQ_CACHE_LINE, sizeof(*q));
  if (!q) return NULL;
  memset(q, 0, sizeof(*q));
  q->ring = aligned_alloc(AQ_PACKET_SIZE, (size_t)size * AQ_PACKET_SIZE);
  if (!q->ring) {
    free(q);
    return NULL;
  }
  /* Every slot starts INVALID, so the packet processor stops at slots whose
   * producer has not published a header yet. */
  for (uint32_t i = 0; i < size; i++) {
    uint16_t *header = (uint16_t *)((char *)q->ring + (size_t)i * AQ_PACKET_SIZE);
    memset(header, 0, AQ_PACKET_SIZE);
    *header = HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE;
  }
  q->public_queue.type = type;
  q->public_queue.features = features;
  q->public_queue.base_address = q->ring;
  q->public_queue.size = size;
  q->public_queue.id = atomic_fetch_add(&next_queue_id, 1);
  atomic_init(&q->active, 1);
  q->magic = AQ_QUEUE_MAGIC;
  return q;
}

static void queue_free(struct aq_queue *q) {
  q->magic = 0;
  free(q->ring);
  free(q);
}

hsa_status_t
hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                 void (*callback)(hsa_status_t status, hsa_queue_t *source, void *data), void *data,
                 uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t **queue) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!queue || !is_power_of_two(size) ||
      (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size < AQ_QUEUE_MIN_SIZE || size > AQ_QUEUE_MAX_SIZE)
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  if (group_segment_size != UINT32_MAX && group_segment_size > AQ_GROUP_SEGMENT_MAX)
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;

  struct aq_queue *q = queue_new(size, type, HSA_QUEUE_FEATURE_KERNEL_DISPATCH);
  if (!q) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  q->doorbell = aq_signal_new(0);
  if (!q->doorbell) {
    queue_free(q);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  q->owns_doorbell = true;
  q->error_callback = callback;
  q->error_data = data;
  q->public_queue.doorbell_signal = aq_signal_to_handle(q->doorbell);
  hsa_status_t status = aq_cpu_agent_add_queue(q);
  if (status != HSA_STATUS_SUCCESS) {
    aq_signal_free(q->doorbell);
    queue_free(q);
    return status;
  }
  /* Published last: from here a doorbell store reaches the agent. */
  q->doorbell->doorbell_queue = q;
  *queue = &q->public_queue;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_soft_queue_create(hsa_region_t region, uint32_t size, hsa_queue_type32_t type,
                                   uint32_t features, hsa_signal_t doorbell_signal,
                                   hsa_queue_t **queue) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  bool region_allows_alloc = false;
  if (hsa_region_get_info(region, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &region_allows_alloc) !=
      HSA_STATUS_SUCCESS)
    return HSA_STATUS_ERROR_INVALID_REGION;
  if (!region_allows_alloc) return HSA_STATUS_ERROR_INVALID_REGION;
  struct aq_signal *doorbell = aq_signal_from_handle(doorbell_signal);
  if (!queue || !is_power_of_two(size) || !doorbell || doorbell->doorbell_queue ||
      (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE) || features == 0 ||
      (features &
       ~(uint32_t)(HSA_QUEUE_FEATURE_KERNEL_DISPATCH | HSA_QUEUE_FEATURE_AGENT_DISPATCH)))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size > AQ_QUEUE_MAX_SIZE) return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  struct aq_queue *q = queue_new(size, type, features);
  if (!q) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  q->soft = true;
  q->doorbell = doorbell;
  q->public_queue.doorbell_signal = doorbell_signal;
  *queue = &q->public_queue;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_destroy(hsa_queue_t *queue) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!queue) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_queue *q = aq_queue_from_public(queue);
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  if (!q->soft) {
    /* Waits until no compute unit touches the queue and every launched
     * packet has completed; packets not launched yet are dropped. */
    aq_cpu_agent_remove_queue(q);
    q->doorbell->doorbell_queue = NULL;
  }
  if (q->owns_doorbell) aq_signal_free(q->doorbell);
  queue_free(q);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t *queue) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!queue) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct aq_queue *q = aq_queue_from_public(queue);
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  atomic_store(&q->active, 0);
  return HSA_STATUS_SUCCESS;
}

/* The AMD extension's compute-unit affinity: bit i of the mask is compute
 * unit i of the CPU agent (its worker thread i). hsa_ext_amd.h: a count of 0
 * enables every unit; the count is in bits, a multiple of 32. */
hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t *queue, uint32_t num_cu_mask_count,
                                       const uint32_t *cu_mask) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_queue *q = queue ? aq_queue_from_public(queue) : NULL;
  /* A soft queue is processed by the application: no unit to restrict. */
  if (!q || q->soft) return HSA_STATUS_ERROR_INVALID_QUEUE;
  if (num_cu_mask_count % 32u || (num_cu_mask_count && !cu_mask))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return aq_cpu_agent_set_cu_mask(q, num_cu_mask_count, cu_mask);
}

/* ---- indices ---- */

#define QUEUE_OR_RETURN(var, queue, ret)                                                           \
  struct aq_queue *var = aq_queue_from_public(queue);                                              \
  if (!var) return ret

#define QUEUE_LOAD(which, suffix, order)                                                           \
  uint64_t hsa_queue_load_##which##_index_##suffix(const hsa_queue_t *queue) {                     \
    QUEUE_OR_RETURN(q, queue, 0);                                                                  \
    return atomic_load_explicit(&q->which##_index, order);                                         \
  }

#define QUEUE_STORE(which, suffix, order)                                                          \
  void hsa_queue_store_##which##_index_##suffix(const hsa_queue_t *queue, uint64_t value) {        \
    QUEUE_OR_RETURN(q, queue, );                                                                   \
    atomic_store_explicit(&q->which##_index, value, order);                                        \
  }

#define QUEUE_CAS(suffix, order)                                                                   \
  uint64_t hsa_queue_cas_write_index_##suffix(const hsa_queue_t *queue, uint64_t expected,         \
                                              uint64_t value) {                                    \
    QUEUE_OR_RETURN(q, queue, 0);                                                                  \
    uint64_t observed = expected;                                                                  \
    atomic_compare_exchange_strong_explicit(&q->write_index, &observed, value, order,              \
                                            memory_order_relaxed);                                 \
    return observed;                                                                               \
  }

#define QUEUE_ADD(suffix, order)                                                                   \
  uint64_t hsa_queue_add_write_index_##suffix(const hsa_queue_t *queue, uint64_t value) {          \
    QUEUE_OR_RETURN(q, queue, 0);                                                                  \
    return atomic_fetch_add_explicit(&q->write_index, value, order);                               \
  }

QUEUE_LOAD(read, acquire, memory_order_acquire)
QUEUE_LOAD(read, scacquire, memory_order_acquire)
QUEUE_LOAD(read, relaxed, memory_order_relaxed)
QUEUE_LOAD(write, acquire, memory_order_acquire)
QUEUE_LOAD(write, scacquire, memory_order_acquire)
QUEUE_LOAD(write, relaxed, memory_order_relaxed)
QUEUE_STORE(write, relaxed, memory_order_relaxed)
QUEUE_STORE(write, release, memory_order_release)
QUEUE_STORE(write, screlease, memory_order_release)
QUEUE_STORE(read, relaxed, memory_order_relaxed)
QUEUE_STORE(read, release, memory_order_release)
QUEUE_STORE(read, screlease, memory_order_release)
QUEUE_CAS(acq_rel, memory_order_acq_rel)
QUEUE_CAS(scacq_screl, memory_order_acq_rel)
QUEUE_CAS(acquire, memory_order_acquire)
QUEUE_CAS(scacquire, memory_order_acquire)
QUEUE_CAS(relaxed, memory_order_relaxed)
QUEUE_CAS(release, memory_order_release)
QUEUE_CAS(screlease, memory_order_release)
QUEUE_ADD(acq_rel, memory_order_acq_rel)
QUEUE_ADD(scacq_screl, memory_order_acq_rel)
QUEUE_ADD(acquire, memory_order_acquire)
QUEUE_ADD(scacquire, memory_order_acquire)
QUEUE_ADD(relaxed, memory_order_relaxed)
QUEUE_ADD(release, memory_order_release)
QUEUE_ADD(screlease, memory_order_release)
