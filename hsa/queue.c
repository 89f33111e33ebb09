/* AQL queues: creation (agent queues processed by the CPU agent, and soft
 * queues processed by the application), destruction, inactivation and the
 * read/write index operations in every memory order. */
#include "hsa_internal.h"

#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define AQ_QUEUE_MAGIC 0x90e0e5u
#define AQ_PACKET_SIZE 64u

static _Atomic uint64_t next_queue_id;

/* Queues are used on every packet (index operations, doorbells), so they
 * are not looked up in the handle registry: like signals, their structs are
 * pooled and never returned to the heap, and a destroyed one keeps magic 0
 * until it is reused. The pool is first-in first-out, so that a stale
 * pointer stays invalid for as long as possible. */
static pthread_mutex_t queue_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aq_queue *queue_pool_head, *queue_pool_tail;
/* Bytes of ring mapped by all live queues, against queue_memory_limit(). */
static size_t queue_memory_used;

void aq_queue_fork(enum aq_fork_phase phase) {
  aq_fork_lock(&queue_pool_lock, phase);
}

struct aq_queue *aq_queue_from_public(const hsa_queue_t *queue) {
  struct aq_queue *q = (struct aq_queue *)queue;
  if (!aq_handle_plausible((uintptr_t)q, AQ_CACHE_LINE) ||
      atomic_load_explicit(&q->magic, memory_order_acquire) != AQ_QUEUE_MAGIC)
    return NULL;
  return q;
}

bool aq_queue_slot_unpublished(const struct aq_queue *queue, uint64_t index, uint16_t header) {
  uint32_t type = (header >> HSA_PACKET_HEADER_TYPE) & 0xffu;
  return type == HSA_PACKET_TYPE_INVALID || (header == 0 && index < queue->public_queue.size);
}

static bool is_power_of_two(uint32_t x) {
  return x && !(x & (x - 1));
}

/* Rings are mapped, not written, at creation: a queue of 2^20 packets costs
 * the pages its producer touches. What all rings may map together is bounded
 * by a quarter of physical memory, so that many large queues end in
 * OUT_OF_RESOURCES rather than in the kernel's out-of-memory killer. */
static size_t queue_memory_limit(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t physical = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)1 << 32;
  return physical / 4;
}

static struct aq_queue *queue_new(uint32_t size, hsa_queue_type32_t type, uint32_t features,
                                  bool write_headers) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t ring_bytes = ((size_t)size * AQ_PACKET_SIZE + page - 1) & ~(page - 1);
  pthread_mutex_lock(&queue_pool_lock);
  bool fits = queue_memory_used + ring_bytes <= queue_memory_limit();
  if (fits) queue_memory_used += ring_bytes;
  struct aq_queue *q = fits ? queue_pool_head : NULL;
  if (q) {
    queue_pool_head = q->next_free;
    if (!queue_pool_head) queue_pool_tail = NULL;
  }
  pthread_mutex_unlock(&queue_pool_lock);
  if (!fits) return NULL;
  if (!q) q = aligned_alloc(AQ_CACHE_LINE, sizeof(*q));
  void *ring = q ? mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                 : MAP_FAILED;
  if (ring == MAP_FAILED) {
    pthread_mutex_lock(&queue_pool_lock);
    queue_memory_used -= ring_bytes;
    if (q) { /* back to the pool: a pooled struct is never freed */
      q->next_free = queue_pool_head;
      queue_pool_head = q;
      if (!queue_pool_tail) queue_pool_tail = q;
    }
    pthread_mutex_unlock(&queue_pool_lock);
    return NULL;
  }
  memset(q, 0, sizeof(*q));
  q->ring = ring;
  q->ring_bytes = ring_bytes;
  /* A soft queue's slots start INVALID, as its application-side packet
   * processor expects; the CPU agent reads a zero header in the ring's first
   * lap as unpublished instead (aq_queue_slot_unpublished). */
  for (uint32_t i = 0; write_headers && i < size; i++)
    *(uint16_t *)((char *)ring + (size_t)i * AQ_PACKET_SIZE) = HSA_PACKET_TYPE_INVALID
                                                               << HSA_PACKET_HEADER_TYPE;
  q->public_queue.type = type;
  q->public_queue.features = features;
  q->public_queue.base_address = q->ring;
  q->public_queue.size = size;
  q->public_queue.id = atomic_fetch_add(&next_queue_id, 1);
  atomic_init(&q->active, 1);
  atomic_store_explicit(&q->magic, AQ_QUEUE_MAGIC, memory_order_release);
  return q;
}

/* Caller has taken q out of service (its magic swapped to 0). */
static void queue_free(struct aq_queue *q) {
  atomic_store(&q->magic, 0);
  munmap(q->ring, q->ring_bytes);
  pthread_mutex_lock(&queue_pool_lock);
  queue_memory_used -= q->ring_bytes;
  q->next_free = NULL;
  if (queue_pool_tail)
    queue_pool_tail->next_free = q;
  else
    queue_pool_head = q;
  queue_pool_tail = q;
  pthread_mutex_unlock(&queue_pool_lock);
}

hsa_status_t
hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                 void (*callback)(hsa_status_t status, hsa_queue_t *source, void *data), void *data,
                 uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t **queue) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  int remote = aq_remote_agent_index(agent);
  if (remote < 0 && !aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!queue || !is_power_of_two(size) ||
      (type != HSA_QUEUE_TYPE_MULTI && type != HSA_QUEUE_TYPE_SINGLE))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size > AQ_QUEUE_MAX_SIZE) return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  /* hsa.h: "The size of the newly created queue is the maximum of size and
   * the value of HSA_AGENT_INFO_QUEUE_MIN_SIZE". */
  if (size < AQ_QUEUE_MIN_SIZE) size = AQ_QUEUE_MIN_SIZE;
  if (group_segment_size != UINT32_MAX && group_segment_size > AQ_GROUP_SEGMENT_MAX)
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;

  struct aq_queue *q = queue_new(size, type, HSA_QUEUE_FEATURE_KERNEL_DISPATCH, false);
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
  if (remote >= 0) {
    /* No compute unit of this process takes its packets: a ring forwards
     * them (remote/agents.c). Soft for everything that asks about units. */
    q->soft = true;
    q->remote = (uint32_t)remote + 1;
    pthread_mutex_init(&q->forward_lock, NULL);
    q->doorbell->doorbell_queue = q;
    *queue = &q->public_queue;
    return HSA_STATUS_SUCCESS;
  }
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
  struct aq_queue *q = queue_new(size, type, features, true);
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
  /* Of two destroys of one queue, the one that swaps the magic owns it. */
  uint32_t magic = AQ_QUEUE_MAGIC;
  if (!atomic_compare_exchange_strong(&q->magic, &magic, 0)) return HSA_STATUS_ERROR_INVALID_QUEUE;
  if (q->remote) {
    /* No forwarding after this one ends. */
    q->doorbell->doorbell_queue = NULL;
    pthread_mutex_lock(&q->forward_lock);
    pthread_mutex_unlock(&q->forward_lock);
  } else if (!q->soft) {
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

/* ROCr's dispatch profiling: a queue's dispatches record in their
 * completion signals when they ran (hsa_amd_profiling_get_dispatch_time,
 * signal.c). The CPU agent's clock is the system timestamp. */
hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *queue, int enable) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_queue *q = queue ? aq_queue_from_public(queue) : NULL;
  if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
  atomic_store_explicit(&q->profiling, enable ? 1u : 0u, memory_order_relaxed);
  return HSA_STATUS_SUCCESS;
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
