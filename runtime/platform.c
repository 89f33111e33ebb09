/* The Aquila platform: brings up HSA once, finds the CPU kernel agents that
 * become OpenCL devices, and answers clGetPlatformIDs/clGetPlatformInfo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hsa/hsa_ext_amd.h>
#include <stdbool.h>

#include "aquila/hsa_ext_aquila.h"

#include "aquila/compiler.h"
#include "runtime.h"


struct _cl_platform_id aquila_platform;
struct _cl_device_id *aquila_devices;
cl_uint aquila_num_devices;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static cl_int init_status = CL_SUCCESS;

void device_start_watcher(cl_device_id d);

static hsa_status_t find_kernarg_region(hsa_region_t region, void *data) {
  hsa_region_segment_t segment;
  uint32_t flags = 0;
  if (hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment) != HSA_STATUS_SUCCESS ||
      segment != HSA_REGION_SEGMENT_GLOBAL)
    return HSA_STATUS_SUCCESS;
  hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
  if (flags & HSA_REGION_GLOBAL_FLAG_KERNARG) {
    *(hsa_region_t *)data = region;
    return HSA_STATUS_INFO_BREAK;
  }
  return HSA_STATUS_SUCCESS;
}

/* The memory limit of the process's cgroup (v2 memory.max of its group
 * and the groups above it, or v1 memory.limit_in_bytes), or UINT64_MAX. */
static uint64_t cgroup_memory_limit(void) {
  uint64_t limit = UINT64_MAX;
  FILE *f = fopen("/proc/self/cgroup", "r");
  if (!f) return limit;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char path[700];
    const char *group = NULL, *file = NULL, *root = NULL;
    if (!strncmp(line, "0::", 3)) {
      group = line + 3, file = "memory.max", root = "/sys/fs/cgroup";
    } else {
      const char *c = strchr(line, ':');
      if (c && !strncmp(c + 1, "memory:", 7))
        group = c + 8, file = "memory.limit_in_bytes", root = "/sys/fs/cgroup/memory";
    }
    if (!group) continue;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", group);
    for (;;) {
      snprintf(path, sizeof path, "%s%s/%s", root, dir, file);
      FILE *g = fopen(path, "r");
      if (g) {
        unsigned long long v;
        if (fscanf(g, "%llu", &v) == 1 && v < limit) limit = v;
        fclose(g);
      }
      char *slash = strrchr(dir, '/');
      if (!slash || slash == dir) break;
      *slash = '\0';
    }
  }
  fclose(f);
  return limit;
}

/* CL_DEVICE_GLOBAL_MEM_SIZE, which is also the most that the device's
 * buffers and images may take together (memory.c): three quarters of the
 * machine's memory, or of the cgroup's limit when lower, so that the
 * application, the other processes and the kernel keep the rest; or
 * AQUILA_GLOBAL_MEM_SIZE (bytes, or with a K, M or G suffix). Past it an
 * allocation fails with CL_MEM_OBJECT_ALLOCATION_FAILURE instead of the
 * system's out-of-memory killer ending the process when the pages are
 * first touched. */
static uint64_t device_memory_size(void) {
  const char *env = getenv("AQUILA_GLOBAL_MEM_SIZE");
  if (env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    int shift = *end == 'K' || *end == 'k'   ? 10
                : *end == 'M' || *end == 'm' ? 20
                : *end == 'G' || *end == 'g' ? 30
                                             : 0;
    if (v && v < (1ull << (63 - shift))) return (uint64_t)v << shift;
    debug_log("AQUILA_GLOBAL_MEM_SIZE=%s is not a size: ignored", env);
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t physical = (uint64_t)pages * (uint64_t)page;
  uint64_t cgroup = cgroup_memory_limit();
  uint64_t total = cgroup < physical ? cgroup : physical;
  return total / 4 * 3;
}

static uint32_t num_remote;
hsa_agent_t aquila_host_agent;

static hsa_status_t add_cpu_agent(hsa_agent_t agent, void *data) {
  hsa_device_type_t type;
  uint32_t features = 0;
  if (hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS ||
      type != HSA_DEVICE_TYPE_CPU)
    return HSA_STATUS_SUCCESS;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &features);
  if (!(features & HSA_AGENT_FEATURE_KERNEL_DISPATCH)) return HSA_STATUS_SUCCESS;
  bool remote = false;
  hsa_agent_get_info(agent, HSA_VEN_AQUILA_AGENT_INFO_REMOTE, &remote);
  /* AQUILA_LOCAL_DEVICE=0: only remote devices (to run an application, or
   * the tests, on a remote device alone). */
  if (!remote && !aquila_host_agent.handle) aquila_host_agent = agent;
  const char *local = getenv("AQUILA_LOCAL_DEVICE");
  if (!remote && local && !strcmp(local, "0")) return HSA_STATUS_SUCCESS;
  struct _cl_device_id *devs = realloc(aquila_devices, (aquila_num_devices + 1) * sizeof *devs);
  if (!devs) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  aquila_devices = devs;
  struct _cl_device_id *d = &devs[aquila_num_devices++];
  memset(d, 0, sizeof *d);
  object_init(&d->header, OBJECT_DEVICE);
  d->platform = &aquila_platform;
  d->agent = agent;
  hsa_agent_iterate_regions(agent, find_kernarg_region, &d->kernarg_region);
  uint32_t cus = 0;
  if (hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus) !=
          HSA_STATUS_SUCCESS ||
      cus == 0)
    cus = 1; /* the agent always says; a unit is the least a device has */
  d->compute_units = cus ? cus : 1;
  uint32_t wg_max = 0;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg_max);
  d->max_work_group_size = wg_max ? wg_max : 4096;
  d->local_mem_size = 64 * 1024;
  char agent_name[64] = {0};
  hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, agent_name);

  if (remote) {
    /* Another machine's CPU agent (docs/REMOTE.md): named by where it is. */
    char location[96] = {0};
    uint64_t memory = 0;
    hsa_agent_get_info(agent, HSA_VEN_AQUILA_AGENT_INFO_LOCATION, location);
    hsa_agent_get_info(agent, HSA_VEN_AQUILA_AGENT_INFO_CODE_TARGET, d->code_target);
    hsa_agent_get_info(agent, HSA_VEN_AQUILA_AGENT_INFO_MEMORY_SIZE, &memory);
    d->remote = 1;
    d->remote_index = num_remote++;
    d->global_mem_size = memory;
    snprintf(d->name, sizeof d->name, "%.63s (remote, %.40s)", agent_name, location);
  } else {
    d->global_mem_size = device_memory_size();
    mem_storage_set_limit(d->global_mem_size);
    strncpy(d->name, agent_name[0] ? agent_name : "Aquila CPU", sizeof d->name - 1);
  }
  pthread_mutex_init(&d->inflight_lock, NULL);
  pthread_cond_init(&d->inflight_cond, NULL);
  pthread_mutex_init(&d->signal_lock, NULL);
  pthread_mutex_init(&d->spread_lock, NULL);
  return HSA_STATUS_SUCCESS;
}

static void init_platform(void) {
  object_init(&aquila_platform.header, OBJECT_PLATFORM);
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    debug_log("hsa_init failed: no devices");
    init_status = CL_PLATFORM_NOT_FOUND_KHR;
    return;
  }
  hsa_iterate_agents(add_cpu_agent, NULL);
  for (cl_uint i = 0; i < aquila_num_devices; i++) device_start_watcher(&aquila_devices[i]);
  runtime_register_atfork();
  debug_log("platform up with %u device(s)", aquila_num_devices);
}

cl_int platform_init(void) {
  pthread_once(&init_once, init_platform);
  return init_status;
}

AQUILA_API cl_int clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                         cl_uint *num_platforms) {
  if ((num_entries == 0 && platforms) || (!platforms && !num_platforms)) return CL_INVALID_VALUE;
  if (platform_init() != CL_SUCCESS) return CL_PLATFORM_NOT_FOUND_KHR;
  if (platforms) platforms[0] = &aquila_platform;
  if (num_platforms) *num_platforms = 1;
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                                   cl_uint *num_platforms) {
  return clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms);
}

AQUILA_API cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                                    size_t param_value_size, void *param_value,
                                    size_t *param_value_size_ret) {
  if (platform != NULL && platform != &aquila_platform) return CL_INVALID_PLATFORM;
  cl_int err;
  if (features_platform_info(param_name, param_value_size, param_value, param_value_size_ret,
                             &err))
    return err;
  switch (param_name) {
  case CL_PLATFORM_PROFILE: INFO_STRING("FULL_PROFILE");
  case CL_PLATFORM_VERSION: INFO_STRING("OpenCL 3.0 Aquila " AQUILA_VERSION);
  case CL_PLATFORM_NAME: INFO_STRING("Aquila");
  case CL_PLATFORM_VENDOR: INFO_STRING("Aquila");
  case CL_PLATFORM_EXTENSIONS: INFO_STRING(features_platform_extensions());
  case CL_PLATFORM_ICD_SUFFIX_KHR: INFO_STRING("AQUILA");
  default: return CL_INVALID_VALUE;
  }
}

AQUILA_API cl_int clUnloadPlatformCompiler(cl_platform_id platform) {
  if (platform != &aquila_platform) return CL_INVALID_PLATFORM;
  aquila_compiler_unload();
  return CL_SUCCESS;
}

AQUILA_API cl_int clUnloadCompiler(void) {
  aquila_compiler_unload();
  return CL_SUCCESS;
}
