/* Remote agents inside the HSA runtime: their handles, their answers to
 * agent queries, the forwarding of their queues' packets, their code
 * objects and memory (hsa_ext_aquila.h). The connections themselves live in
 * libaquila-remote.so (client.c), loaded at hsa_init only when
 * AQUILA_REMOTE is set, so that UCX never loads into other processes. */
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hsa_internal.h"
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ext_image.h>
#include "aquila/hsa_ext_aquila.h"
#include "plugin.h"

#define AQ_REMOTE_AGENT_MAGIC 0x4e307eu

struct aq_remote_agent {
  uint32_t magic;
  uint32_t index;
  /* The kernels loaded on it: a dispatch's kernarg size (the packet does
   * not say it). */
  pthread_mutex_t kernels_lock;
  struct known {
    uint64_t object, executable;
    uint32_t kernarg_size;
  } * kernels;
  size_t num_kernels, cap_kernels;
};

static struct aq_remote_agent agents[AQ_REMOTE_MAX_AGENTS];
static uint32_t num_agents;
static const struct aq_remote_plugin *plugin;
static void *plugin_library;

/* ---- services for the plugin -------------------------------------------------- */

static void dispatch_done(hsa_signal_t signal, int fault_signal, uint64_t fault_address,
                          const uint32_t group[3], uint64_t start_ns, uint64_t end_ns) {
  struct aq_signal *s = aq_signal_from_handle(signal);
  if (!s) return;
  s->fault_address = fault_address;
  memcpy(s->fault_group, group, sizeof s->fault_group);
  s->dispatch_start = start_ns;
  s->dispatch_end = end_ns;
  atomic_store_explicit(&s->fault_signal, fault_signal, memory_order_release);
  aq_signal_subtract_release(s, 1);
}

/* What was loaded on the agent before is gone with its old connection. */
static void agent_reconnected(uint32_t index) {
  if (index >= num_agents) return;
  struct aq_remote_agent *a = &agents[index];
  pthread_mutex_lock(&a->kernels_lock);
  a->num_kernels = 0;
  pthread_mutex_unlock(&a->kernels_lock);
}

static const struct aq_remote_services services = {
    .dispatch_done = dispatch_done,
    .now_ns = aq_now_ns,
    .agent_reconnected = agent_reconnected,
    .debug = aq_debug,
    .setting = aq_remote_setting,
};

/* ---- start and stop -------------------------------------------------------------- */

static char *plugin_path(void) {
  const char *env = getenv("AQUILA_REMOTE_PLUGIN");
  if (env && *env) return strdup(env);
  Dl_info info;
  if (!dladdr((void *)plugin_path, &info) || !info.dli_fname) return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  size_t dir = slash ? (size_t)(slash - info.dli_fname) : 0;
  const char *name = "/aquila/libaquila-remote.so";
  char *path = malloc(dir + strlen(name) + 2);
  if (!path) return NULL;
  if (slash)
    memcpy(path, info.dli_fname, dir);
  else
    path[dir++] = '.';
  strcpy(path + dir, name);
  return path;
}

void aq_remote_start(void) {
  const char *list = aq_remote_setting("AQUILA_REMOTE");
  if (!list || !*list || plugin) return;
  char *path = plugin_path();
  void *library = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!library) {
    aq_debug("AQUILA_REMOTE is set, but the remote agents' library %s did not load: %s",
             path ? path : "(not found)", dlerror());
    free(path);
    return;
  }
  free(path);
  aq_remote_plugin_start_fn start =
      (aq_remote_plugin_start_fn)(uintptr_t)dlsym(library, AQ_REMOTE_PLUGIN_ENTRY);
  const struct aq_remote_plugin *p = start ? start(AQ_REMOTE_PLUGIN_VERSION, &services) : NULL;
  if (!p) {
    dlclose(library);
    return;
  }
  plugin = p;
  plugin_library = library;
  num_agents = p->num_agents < AQ_REMOTE_MAX_AGENTS ? p->num_agents : AQ_REMOTE_MAX_AGENTS;
  for (uint32_t i = 0; i < num_agents; i++) {
    agents[i].magic = AQ_REMOTE_AGENT_MAGIC;
    agents[i].index = i;
    pthread_mutex_init(&agents[i].kernels_lock, NULL);
  }
}

void aq_remote_stop(void) {
  if (!plugin) return;
  plugin->stop();
  for (uint32_t i = 0; i < num_agents; i++) {
    free(agents[i].kernels);
    agents[i].kernels = NULL;
    agents[i].num_kernels = agents[i].cap_kernels = 0;
    agents[i].magic = 0;
  }
  num_agents = 0;
  plugin = NULL;
  /* The library stays loaded: its threads are gone, but UCX keeps
   * process-wide state that does not survive an unload. */
}

/* ---- agents ---------------------------------------------------------------------- */

uint32_t aq_remote_agent_count(void) {
  return num_agents;
}

hsa_agent_t aq_remote_agent_handle(uint32_t index) {
  hsa_agent_t agent = {(uint64_t)(uintptr_t)&agents[index]};
  return agent;
}

int aq_remote_agent_index(hsa_agent_t agent) {
  uint64_t base = (uint64_t)(uintptr_t)agents;
  if (agent.handle < base || agent.handle >= base + sizeof agents) return -1;
  uint64_t off = agent.handle - base;
  if (off % sizeof agents[0]) return -1;
  const struct aq_remote_agent *a = &agents[off / sizeof agents[0]];
  return a->magic == AQ_REMOTE_AGENT_MAGIC && a->index < num_agents ? (int)a->index : -1;
}

hsa_status_t aq_remote_agent_info(uint32_t index, hsa_agent_info_t attribute, void *value) {
  const struct aq_remote_description *d = plugin->describe(index);
  switch ((uint32_t)attribute) {
  case HSA_AGENT_INFO_NAME:
  case HSA_AGENT_INFO_VENDOR_NAME: {
    const char *src = attribute == HSA_AGENT_INFO_NAME ? d->name : "Aquila";
    memset(value, 0, 64);
    memcpy(value, src, strnlen(src, 63));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_AGENT_INFO_FEATURE:
    *(hsa_agent_feature_t *)value = HSA_AGENT_FEATURE_KERNEL_DISPATCH;
    return HSA_STATUS_SUCCESS;
  case HSA_AGENT_INFO_DEVICE:
    *(hsa_device_type_t *)value = HSA_DEVICE_TYPE_CPU;
    return HSA_STATUS_SUCCESS;
  case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
    *(uint32_t *)value = d->max_workgroup_size;
    return HSA_STATUS_SUCCESS;
  case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
    *(uint32_t *)value = d->compute_units;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_REMOTE:
    *(bool *)value = true;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_CODE_TARGET:
    memcpy(value, d->target, sizeof d->target);
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_AVAILABLE:
    *(bool *)value = plugin->available(index);
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_LOCATION:
    memcpy(value, d->address, sizeof d->address);
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_MEMORY_SIZE:
    *(uint64_t *)value = d->memory_size;
    return HSA_STATUS_SUCCESS;
  case HSA_VEN_AQUILA_AGENT_INFO_EPOCH:
    *(uint32_t *)value = plugin->epoch(index);
    return HSA_STATUS_SUCCESS;
  default:
    /* Everything else: as the CPU agent answers (same kind of processor). */
    return hsa_agent_get_info(aq_cpu_agent_handle(), attribute, value);
  }
}

/* ---- code objects ------------------------------------------------------------------ */

hsa_status_t aq_remote_load(uint32_t index, const void *code, size_t size, uint64_t *executable,
                            struct aq_remote_kernel **kernels, uint32_t *num_kernels) {
  hsa_status_t st = plugin->load(index, code, size, executable, kernels, num_kernels);
  if (st != HSA_STATUS_SUCCESS) return st;
  struct aq_remote_agent *a = &agents[index];
  pthread_mutex_lock(&a->kernels_lock);
  if (a->num_kernels + *num_kernels > a->cap_kernels) {
    size_t cap = a->cap_kernels ? a->cap_kernels : 64;
    while (cap < a->num_kernels + *num_kernels)
      cap *= 2;
    struct known *k = realloc(a->kernels, cap * sizeof *k);
    if (!k) {
      pthread_mutex_unlock(&a->kernels_lock);
      plugin->free_kernels(*kernels, *num_kernels);
      plugin->unload(index, *executable);
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    a->kernels = k;
    a->cap_kernels = cap;
  }
  for (uint32_t i = 0; i < *num_kernels; i++)
    a->kernels[a->num_kernels++] =
        (struct known){(*kernels)[i].kernel_object, *executable, (*kernels)[i].kernarg_size};
  pthread_mutex_unlock(&a->kernels_lock);
  return HSA_STATUS_SUCCESS;
}

void aq_remote_free_kernels(struct aq_remote_kernel *kernels, uint32_t num_kernels) {
  plugin->free_kernels(kernels, num_kernels);
}

void aq_remote_unload(uint32_t index, uint64_t executable) {
  if (!plugin || index >= num_agents) return;
  struct aq_remote_agent *a = &agents[index];
  pthread_mutex_lock(&a->kernels_lock);
  for (size_t i = 0; i < a->num_kernels;)
    if (a->kernels[i].executable == executable)
      a->kernels[i] = a->kernels[--a->num_kernels];
    else
      i++;
  pthread_mutex_unlock(&a->kernels_lock);
  plugin->unload(index, executable);
}

static bool kernarg_size_of(struct aq_remote_agent *a, uint64_t object, uint32_t *size) {
  bool found = false;
  pthread_mutex_lock(&a->kernels_lock);
  for (size_t i = 0; i < a->num_kernels && !found; i++)
    if (a->kernels[i].object == object) {
      *size = a->kernels[i].kernarg_size;
      found = true;
    }
  pthread_mutex_unlock(&a->kernels_lock);
  return found;
}

/* ---- images --------------------------------------------------------------------------- */

hsa_status_t aq_remote_image_create(uint32_t index, const hsa_ext_image_descriptor_t *desc,
                                    uint64_t address, hsa_access_permission_t access,
                                    size_t row_pitch, size_t slice_pitch, uint64_t *handle) {
  struct aq_wire_image m = {
      .address = address,
      .width = desc->width,
      .height = desc->height,
      .depth = desc->depth,
      .array_size = desc->array_size,
      .row_pitch = row_pitch,
      .slice_pitch = slice_pitch,
      .geometry = (uint32_t)desc->geometry,
      .channel_type = desc->format.channel_type,
      .channel_order = desc->format.channel_order,
      .access = (uint32_t)access,
  };
  return plugin->image_create(index, &m, handle);
}

void aq_remote_image_destroy(uint32_t index, uint64_t handle) {
  plugin->image_destroy(index, handle);
}

/* ---- queues: packets forwarded by whoever rings the doorbell ------------------------ */

void aq_remote_ring(struct aq_queue *q) {
  uint32_t index = q->remote - 1;
  struct aq_remote_agent *a = &agents[index];
  uint32_t none[3] = {0, 0, 0};
  pthread_mutex_lock(&q->forward_lock);
  for (;;) {
    uint64_t r = atomic_load_explicit(&q->read_index, memory_order_relaxed);
    uint64_t w = atomic_load_explicit(&q->write_index, memory_order_acquire);
    if (r >= w) break;
    char *slot = (char *)q->ring + (r & (q->public_queue.size - 1)) * 64;
    uint16_t header = __atomic_load_n((uint16_t *)slot, __ATOMIC_ACQUIRE);
    if (aq_queue_slot_unpublished(q, r, header)) break;
    hsa_kernel_dispatch_packet_t packet;
    memcpy(&packet, slot, sizeof packet);
    unsigned type = (header >> HSA_PACKET_HEADER_TYPE) & ((1u << HSA_PACKET_HEADER_WIDTH_TYPE) - 1);
    int fault = 0;
    uint32_t kernarg_size = 0;
    if (type != HSA_PACKET_TYPE_KERNEL_DISPATCH || !atomic_load(&q->active))
      fault = SIGILL;
    else if (!kernarg_size_of(a, packet.kernel_object, &kernarg_size))
      fault = SIGILL;
    else if (plugin->dispatch(index, (uint32_t)q->public_queue.id, &packet, header,
                              packet.kernarg_address, kernarg_size,
                              atomic_load_explicit(&q->profiling, memory_order_relaxed)) !=
             HSA_STATUS_SUCCESS)
      fault = SIGPIPE;
    /* The slot is free for the producer's next lap. */
    __atomic_store_n((uint16_t *)slot, HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE,
                     __ATOMIC_RELAXED);
    atomic_store_explicit(&q->read_index, r + 1, memory_order_release);
    if (fault && packet.completion_signal.handle)
      dispatch_done(packet.completion_signal, fault, 0, none, 0, 0);
  }
  pthread_mutex_unlock(&q->forward_lock);
}

/* ---- memory (hsa_ext_aquila.h) ------------------------------------------------------ */

#define REMOTE_AGENT_OR_RETURN(var, agent)                                                         \
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;                       \
  int var = aq_remote_agent_index(agent);                                                          \
  if (var < 0) return HSA_STATUS_ERROR_INVALID_AGENT

struct awaited {
  struct aq_signal *signal;
  hsa_signal_condition_t condition;
  hsa_signal_value_t compare_value;
};

static bool still_waiting(void *arg) {
  const struct awaited *w = arg;
  return !aq_signal_condition_holds(atomic_load_explicit(&w->signal->value, memory_order_acquire),
                                    w->condition, w->compare_value);
}

bool aq_remote_receive_while_waiting(struct aq_signal *s, hsa_signal_condition_t condition,
                                     hsa_signal_value_t compare_value, uint64_t max_ns) {
  if (!plugin) return false;
  struct awaited w = {s, condition, compare_value};
  return plugin->work_while(still_waiting, &w, max_ns);
}

hsa_status_t hsa_ven_aquila_agent_memory_allocate(hsa_agent_t agent, size_t size,
                                                  uint64_t *address) {
  REMOTE_AGENT_OR_RETURN(i, agent);
  if (!address || size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return plugin->allocate((uint32_t)i, size, address);
}

hsa_status_t hsa_ven_aquila_agent_memory_free(hsa_agent_t agent, uint64_t address) {
  REMOTE_AGENT_OR_RETURN(i, agent);
  plugin->release((uint32_t)i, address);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_ven_aquila_agent_memory_write(hsa_agent_t agent, uint64_t address, const void *src,
                                               size_t size) {
  REMOTE_AGENT_OR_RETURN(i, agent);
  if (!src && size) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size == 0) return HSA_STATUS_SUCCESS;
  return plugin->write((uint32_t)i, address, src, size);
}

hsa_status_t hsa_ven_aquila_agent_memory_fill(hsa_agent_t agent, uint64_t address, size_t size,
                                              const void *pattern, uint32_t pattern_size) {
  REMOTE_AGENT_OR_RETURN(i, agent);
  if (!pattern || pattern_size == 0 || pattern_size > 128 || size % pattern_size)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size == 0) return HSA_STATUS_SUCCESS;
  return plugin->fill((uint32_t)i, address, size, pattern, pattern_size);
}

hsa_status_t hsa_ven_aquila_agent_memory_copy(hsa_agent_t dst_agent, uint64_t dst,
                                              hsa_agent_t src_agent, uint64_t src, size_t size) {
  REMOTE_AGENT_OR_RETURN(d, dst_agent);
  int s = aq_remote_agent_index(src_agent);
  if (s < 0) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (size == 0) return HSA_STATUS_SUCCESS;
  if (s == d) return plugin->move((uint32_t)d, dst, src, size);
  return plugin->copy((uint32_t)d, dst, (uint32_t)s, src, size);
}

hsa_status_t hsa_ven_aquila_agent_memory_read(hsa_agent_t agent, void *dst, uint64_t address,
                                              size_t size) {
  REMOTE_AGENT_OR_RETURN(i, agent);
  if (!dst && size) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (size == 0) return HSA_STATUS_SUCCESS;
  return plugin->read((uint32_t)i, dst, address, size);
}
