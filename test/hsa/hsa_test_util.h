/* Helpers shared by the HSA tests: finding the CPU agent and its regions,
 * loading the hand-written test code objects, and writing AQL packets the
 * way any HSA client does (header last, with a release store). */
#ifndef AQUILA_TEST_HSA_UTIL_H
#define AQUILA_TEST_HSA_UTIL_H

#include <hsa/hsa.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hsa_status_t util_first_agent(hsa_agent_t agent, void *data) {
  *(hsa_agent_t *)data = agent;
  return HSA_STATUS_INFO_BREAK;
}

static inline hsa_agent_t util_cpu_agent(void) {
  hsa_agent_t agent = {0};
  hsa_iterate_agents(util_first_agent, &agent);
  return agent;
}

struct util_region_query {
  uint32_t want_flag;
  hsa_region_t found;
};

static hsa_status_t util_region_cb(hsa_region_t region, void *data) {
  struct util_region_query *q = data;
  hsa_region_segment_t segment;
  hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment);
  if (segment != HSA_REGION_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  uint32_t flags = 0;
  hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
  if (flags & q->want_flag) {
    q->found = region;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

static inline hsa_region_t util_region(hsa_agent_t agent, uint32_t flag) {
  struct util_region_query q = {flag, {0}};
  hsa_agent_iterate_regions(agent, util_region_cb, &q);
  return q.found;
}

static inline void *util_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long length = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *bytes = malloc(length > 0 ? (size_t)length : 1);
  if (bytes && fread(bytes, 1, (size_t)length, f) != (size_t)length) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  *size = (size_t)length;
  return bytes;
}

/* Loads $(BUILD)/test/hsa/<name>.so into a frozen executable. */
static inline hsa_status_t util_load_executable(const char *name, hsa_agent_t agent,
                                                hsa_executable_t *exec) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s.so", HSA_TEST_KERNEL_DIR, name);
  size_t size = 0;
  void *bytes = util_read_file(path, &size);
  if (!bytes) return HSA_STATUS_ERROR_INVALID_FILE;
  hsa_code_object_reader_t reader;
  hsa_status_t status = hsa_code_object_reader_create_from_memory(bytes, size, &reader);
  free(bytes);
  if (status != HSA_STATUS_SUCCESS) return status;
  status = hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                     NULL, exec);
  if (status == HSA_STATUS_SUCCESS)
    status = hsa_executable_load_agent_code_object(*exec, agent, reader, NULL, NULL);
  if (status == HSA_STATUS_SUCCESS) status = hsa_executable_freeze(*exec, NULL);
  hsa_code_object_reader_destroy(reader);
  return status;
}

static inline uint64_t util_kernel_object(hsa_executable_t exec, hsa_agent_t agent,
                                          const char *name) {
  hsa_executable_symbol_t symbol;
  if (hsa_executable_get_symbol_by_name(exec, name, &agent, &symbol) != HSA_STATUS_SUCCESS)
    return 0;
  uint64_t object = 0;
  hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object);
  return object;
}

static inline uint16_t util_header(hsa_packet_type_t type, bool barrier) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) |
                    ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

/* Reserves a slot, waiting while the queue is full. */
static inline uint64_t util_reserve(hsa_queue_t *queue) {
  uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
  while (index - hsa_queue_load_read_index_scacquire(queue) >= queue->size) {
  }
  return index;
}

static inline void util_publish(hsa_queue_t *queue, uint64_t index, void *packet, uint16_t header,
                                uint16_t setup) {
  uint32_t word = header | ((uint32_t)setup << 16);
  __atomic_store_n((uint32_t *)packet, word, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
}

/* Submits a kernel dispatch; returns its packet index. */
static inline uint64_t util_dispatch(hsa_queue_t *queue, uint64_t kernel_object, void *kernarg,
                                     uint32_t dims, const uint32_t grid[3], const uint16_t wg[3],
                                     uint32_t group_segment_size, hsa_signal_t completion,
                                     bool barrier) {
  uint64_t index = util_reserve(queue);
  hsa_kernel_dispatch_packet_t *p =
      (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
  memset((char *)p + 4, 0, sizeof(*p) - 4);
  p->workgroup_size_x = wg[0];
  p->workgroup_size_y = wg[1];
  p->workgroup_size_z = wg[2];
  p->grid_size_x = grid[0];
  p->grid_size_y = grid[1];
  p->grid_size_z = grid[2];
  p->group_segment_size = group_segment_size;
  p->kernel_object = kernel_object;
  p->kernarg_address = kernarg;
  p->completion_signal = completion;
  util_publish(queue, index, p, util_header(HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier),
               (uint16_t)(dims << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS));
  return index;
}

static inline void util_barrier(hsa_queue_t *queue, hsa_packet_type_t type,
                                const hsa_signal_t deps[5], hsa_signal_t completion) {
  uint64_t index = util_reserve(queue);
  hsa_barrier_and_packet_t *p =
      (hsa_barrier_and_packet_t *)queue->base_address + (index & (queue->size - 1));
  memset((char *)p + 4, 0, sizeof(*p) - 4);
  for (int i = 0; i < 5; i++)
    p->dep_signal[i] = deps[i];
  p->completion_signal = completion;
  util_publish(queue, index, p, util_header(type, false), 0);
}

static inline bool util_wait_zero(hsa_signal_t signal, uint64_t timeout_ns) {
  return hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_EQ, 0, timeout_ns,
                                   HSA_WAIT_STATE_BLOCKED) == 0;
}

#endif
