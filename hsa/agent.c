/* The agents Aquila exposes (one CPU kernel agent), their attributes, their
 * caches, and the CPU ISA and its wavefront with the hsa_isa_* queries. */
#include "hsa_internal.h"
#include "cpu_share.h"
#include "aquila/hsa_ext_aquila.h"

#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AQ_AGENT_NAME "Aquila CPU"
#define AQ_VENDOR_NAME "Aquila"
/* The ISA of CPU code objects: x86-64 code following cpu_abi.h. */
#define AQ_CPU_ISA_NAME "aquila-x86_64-cpu"

struct aq_agent {
  uint32_t magic;
};
struct aq_cache {
  uint32_t magic;
  uint8_t level;
  int sysconf_name;
  const char *name;
};
struct aq_isa {
  uint32_t magic;
};
struct aq_wavefront {
  uint32_t magic;
};

#define AQ_AGENT_MAGIC 0xa6e47u
#define AQ_CACHE_MAGIC 0xcac4eu
#define AQ_ISA_MAGIC 0x15au
#define AQ_WAVEFRONT_MAGIC 0xa7eu

static const struct aq_agent cpu_agent = {AQ_AGENT_MAGIC};
static const struct aq_isa cpu_isa = {AQ_ISA_MAGIC};
static const struct aq_wavefront cpu_wavefront = {AQ_WAVEFRONT_MAGIC};
static const struct aq_cache cpu_caches[] = {
    {AQ_CACHE_MAGIC, 1, _SC_LEVEL1_DCACHE_SIZE, "L1 data"},
    {AQ_CACHE_MAGIC, 2, _SC_LEVEL2_CACHE_SIZE, "L2"},
    {AQ_CACHE_MAGIC, 3, _SC_LEVEL3_CACHE_SIZE, "L3"},
};

hsa_agent_t aq_cpu_agent_handle(void) {
  hsa_agent_t agent = {(uint64_t)(uintptr_t)&cpu_agent};
  return agent;
}

bool aq_agent_is_valid(hsa_agent_t agent) {
  return agent.handle == (uint64_t)(uintptr_t)&cpu_agent;
}

bool aq_agent_exists(hsa_agent_t agent) {
  return aq_agent_is_valid(agent) || aq_remote_agent_index(agent) >= 0;
}

/* The CPUs the process may use (cpu_share.c), read once: the affinity
 * mask's CPUs capped by the cgroup's CPU quota. */
static uint32_t share_units;
static pthread_once_t share_once = PTHREAD_ONCE_INIT;

static void read_share(void) {
  static int cpus[AQ_CPU_SHARE_MAX];
  int allowed = aq_cpu_share_cpus(cpus, AQ_CPU_SHARE_MAX);
  if (allowed <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    allowed = online >= 1 ? (int)online : 1;
  }
  share_units = aq_cpu_share_units("", allowed);
}

uint32_t aq_agent_compute_unit_count(void) {
  const char *env = getenv("AQUILA_CPU_UNITS");
  if (env && *env) {
    char *end;
    long n = strtol(env, &end, 10);
    if (*end == '\0' && n >= 1 && n <= 1024) return (uint32_t)n;
  }
  pthread_once(&share_once, read_share);
  return share_units > 1024 ? 1024 : share_units;
}

static uint32_t cache_size(const struct aq_cache *cache) {
  long size = sysconf(cache->sysconf_name);
  return size > 0 ? (uint32_t)size : 0;
}

hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void *data),
                                void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_status_t status = callback(aq_cpu_agent_handle(), data);
  for (uint32_t i = 0; status == HSA_STATUS_SUCCESS && i < aq_remote_agent_count(); i++)
    status = callback(aq_remote_agent_handle(i), data);
  return status;
}

/* The CPU's maximum clock in MHz: cpufreq's figure where the kernel has one,
 * else the first "cpu MHz" of /proc/cpuinfo, else 0 (unknown). */
static uint32_t cpu_max_clock_mhz(void) {
  unsigned long khz = 0;
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
  if (f) {
    if (fscanf(f, "%lu", &khz) != 1) khz = 0;
    fclose(f);
    if (khz) return (uint32_t)(khz / 1000);
  }
  f = fopen("/proc/cpuinfo", "r");
  if (!f) return 0;
  char line[256];
  double mhz = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "cpu MHz : %lf", &mhz) == 1) break;
  fclose(f);
  return (uint32_t)mhz;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  int remote = aq_remote_agent_index(agent);
  if (remote < 0 && !aq_agent_is_valid(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (remote >= 0) return aq_remote_agent_info((uint32_t)remote, attribute, value);
  switch ((int)attribute) {
  case HSA_VEN_AQUILA_AGENT_INFO_REMOTE:
    *(bool *)value = false;
    break;
  case HSA_VEN_AQUILA_AGENT_INFO_AVAILABLE:
    *(bool *)value = true;
    break;
  case HSA_VEN_AQUILA_AGENT_INFO_LOCATION:
    memset(value, 0, 96);
    break;
  case HSA_VEN_AQUILA_AGENT_INFO_EPOCH:
    *(uint32_t *)value = 0;
    break;
  case HSA_AGENT_INFO_NAME:
    memset(value, 0, 64);
    strcpy(value, AQ_AGENT_NAME);
    break;
  case HSA_AGENT_INFO_VENDOR_NAME:
    memset(value, 0, 64);
    strcpy(value, AQ_VENDOR_NAME);
    break;
  case HSA_AGENT_INFO_FEATURE:
    *(hsa_agent_feature_t *)value = HSA_AGENT_FEATURE_KERNEL_DISPATCH;
    break;
  case HSA_AGENT_INFO_MACHINE_MODEL:
    *(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE;
    break;
  /* The CPU agent shares all host memory, which is what the full profile
   * requires. */
  case HSA_AGENT_INFO_PROFILE:
    *(hsa_profile_t *)value = HSA_PROFILE_FULL;
    break;
  case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
    *(hsa_default_float_rounding_mode_t *)value = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
    break;
  case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
    *(hsa_default_float_rounding_mode_t *)value = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
    break;
  case HSA_AGENT_INFO_FAST_F16_OPERATION:
    *(bool *)value = false;
    break;
  case HSA_AGENT_INFO_WAVEFRONT_SIZE:
    *(uint32_t *)value = 1;
    break;
  case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
    uint16_t *dims = value;
    dims[0] = dims[1] = dims[2] = AQ_WORKGROUP_MAX_SIZE;
    break;
  }
  case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
    *(uint32_t *)value = AQ_WORKGROUP_MAX_SIZE;
    break;
  case HSA_AGENT_INFO_GRID_MAX_DIM: {
    hsa_dim3_t *dims = value;
    dims->x = dims->y = dims->z = UINT32_MAX;
    break;
  }
  case HSA_AGENT_INFO_GRID_MAX_SIZE:
    *(uint32_t *)value = UINT32_MAX;
    break;
  /* fbarriers are an HSAIL feature that CPU code objects never use. */
  case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
    *(uint32_t *)value = AQ_FBARRIER_MAX;
    break;
  case HSA_AGENT_INFO_QUEUES_MAX:
    *(uint32_t *)value = AQ_QUEUES_MAX;
    break;
  case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
    *(uint32_t *)value = AQ_QUEUE_MIN_SIZE;
    break;
  case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
    *(uint32_t *)value = AQ_QUEUE_MAX_SIZE;
    break;
  case HSA_AGENT_INFO_QUEUE_TYPE:
    *(hsa_queue_type32_t *)value = HSA_QUEUE_TYPE_MULTI;
    break;
  case HSA_AGENT_INFO_NODE:
    *(uint32_t *)value = 0;
    break;
  case HSA_AGENT_INFO_DEVICE:
    *(hsa_device_type_t *)value = HSA_DEVICE_TYPE_CPU;
    break;
  case HSA_AGENT_INFO_CACHE_SIZE: {
    uint32_t *sizes = value;
    for (int i = 0; i < 4; i++)
      sizes[i] = i < 3 ? cache_size(&cpu_caches[i]) : 0;
    break;
  }
  case HSA_AGENT_INFO_ISA:
    ((hsa_isa_t *)value)->handle = (uint64_t)(uintptr_t)&cpu_isa;
    break;
  case HSA_AGENT_INFO_EXTENSIONS:
    memset(value, 0, 128);
    ((uint8_t *)value)[HSA_EXTENSION_IMAGES / 8] |= 1u << (HSA_EXTENSION_IMAGES % 8);
    break;
  case HSA_AGENT_INFO_VERSION_MAJOR:
    *(uint16_t *)value = 1;
    break;
  case HSA_AGENT_INFO_VERSION_MINOR:
    *(uint16_t *)value = 1;
    break;
  /* Two attributes of AMD's agent-info extension that OpenCL needs and that
   * the core attributes lack. */
  case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
    *(uint32_t *)value = aq_agent_compute_unit_count();
    break;
  case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
    *(uint32_t *)value = AQ_CACHE_LINE;
    break;
  case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
    *(uint32_t *)value = cpu_max_clock_mhz();
    break;
  default:
    /* The image extension's limits (hsa_ext_image.h) live with the images. */
    if (aq_image_agent_info((uint32_t)attribute, value)) break;
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_exception_policies(hsa_agent_t agent, hsa_profile_t profile,
                                              uint16_t *mask) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!mask || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* Native x86 code neither breaks on nor records HSAIL exceptions. */
  *mask = 0;
  return HSA_STATUS_SUCCESS;
}

static const struct aq_cache *cache_from_handle(hsa_cache_t cache) {
  for (size_t i = 0; i < sizeof(cpu_caches) / sizeof(cpu_caches[0]); i++)
    if (cache.handle == (uint64_t)(uintptr_t)&cpu_caches[i]) return &cpu_caches[i];
  return NULL;
}

hsa_status_t hsa_cache_get_info(hsa_cache_t cache, hsa_cache_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  const struct aq_cache *c = cache_from_handle(cache);
  if (!c) return HSA_STATUS_ERROR_INVALID_CACHE;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
  /* The name is a NUL-terminated string, so its length counts the NUL:
   * a caller that allocates the length it was given receives exactly that
   * many bytes (the same rule as the ISA name below). */
  case HSA_CACHE_INFO_NAME_LENGTH:
    *(uint32_t *)value = (uint32_t)strlen(c->name) + 1;
    break;
  case HSA_CACHE_INFO_NAME:
    memcpy(value, c->name, strlen(c->name) + 1);
    break;
  case HSA_CACHE_INFO_LEVEL:
    *(uint8_t *)value = c->level;
    break;
  case HSA_CACHE_INFO_SIZE:
    *(uint32_t *)value = cache_size(c);
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_caches(hsa_agent_t agent,
                                      hsa_status_t (*callback)(hsa_cache_t cache, void *data),
                                      void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (size_t i = 0; i < sizeof(cpu_caches) / sizeof(cpu_caches[0]); i++) {
    if (cache_size(&cpu_caches[i]) == 0) continue; /* the level does not exist here */
    hsa_cache_t cache = {(uint64_t)(uintptr_t)&cpu_caches[i]};
    hsa_status_t status = callback(cache, data);
    if (status != HSA_STATUS_SUCCESS) return status;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent,
                                           uint16_t version_major, uint16_t version_minor,
                                           bool *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!result || !aq_extension_id_is_known(extension)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = false;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_major_extension_supported(uint16_t extension, hsa_agent_t agent,
                                                 uint16_t version_major, uint16_t *version_minor,
                                                 bool *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!result || !version_minor || !aq_extension_id_is_known(extension))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = false;
  return HSA_STATUS_SUCCESS;
}

/* ---- ISA ---- */

static bool isa_is_valid(hsa_isa_t isa) {
  return isa.handle == (uint64_t)(uintptr_t)&cpu_isa;
}

hsa_status_t hsa_isa_from_name(const char *name, hsa_isa_t *isa) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!name || !isa) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (strcmp(name, AQ_CPU_ISA_NAME) != 0) return HSA_STATUS_ERROR_INVALID_ISA_NAME;
  isa->handle = (uint64_t)(uintptr_t)&cpu_isa;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent,
                                    hsa_status_t (*callback)(hsa_isa_t isa, void *data),
                                    void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!aq_agent_exists(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_isa_t isa = {(uint64_t)(uintptr_t)&cpu_isa};
  return callback(isa, data);
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (attribute) {
  /* The name is written with its NUL, so that it can go straight to
   * hsa_isa_from_name, and the length counts that NUL (as ROCr does), so
   * that a caller allocating the length it was given is never overrun.
   * hsa.h's "not including the NUL terminator" would leave such a caller
   * one byte short. */
  case HSA_ISA_INFO_NAME_LENGTH:
    *(uint32_t *)value = (uint32_t)sizeof(AQ_CPU_ISA_NAME);
    break;
  case HSA_ISA_INFO_NAME:
    memcpy(value, AQ_CPU_ISA_NAME, sizeof(AQ_CPU_ISA_NAME));
    break;
  case HSA_ISA_INFO_MACHINE_MODELS: {
    bool *models = value;
    models[HSA_MACHINE_MODEL_SMALL] = false;
    models[HSA_MACHINE_MODEL_LARGE] = true;
    break;
  }
  case HSA_ISA_INFO_PROFILES: {
    bool *profiles = value;
    profiles[HSA_PROFILE_BASE] = true;
    profiles[HSA_PROFILE_FULL] = true;
    break;
  }
  case HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES:
  case HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
    bool *modes = value;
    modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT] = true;
    modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO] = false;
    modes[HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR] = true;
    break;
  }
  case HSA_ISA_INFO_FAST_F16_OPERATION:
    *(bool *)value = false;
    break;
  case HSA_ISA_INFO_WORKGROUP_MAX_DIM: {
    uint16_t *dims = value;
    dims[0] = dims[1] = dims[2] = AQ_WORKGROUP_MAX_SIZE;
    break;
  }
  case HSA_ISA_INFO_WORKGROUP_MAX_SIZE:
    *(uint32_t *)value = AQ_WORKGROUP_MAX_SIZE;
    break;
  case HSA_ISA_INFO_GRID_MAX_DIM: {
    hsa_dim3_t *dims = value;
    dims->x = dims->y = dims->z = UINT32_MAX;
    break;
  }
  case HSA_ISA_INFO_GRID_MAX_SIZE:
    *(uint64_t *)value = UINT64_MAX;
    break;
  case HSA_ISA_INFO_FBARRIER_MAX_SIZE:
    *(uint32_t *)value = AQ_FBARRIER_MAX;
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_info(hsa_isa_t isa, hsa_isa_info_t attribute, uint32_t index,
                              void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* hsa.h: index "must have a value between 0 (inclusive) and the value of
   * HSA_ISA_INFO_CALL_CONVENTION_COUNT (not inclusive)", whatever the
   * attribute; the ISA has one call convention. */
  if (index != 0) return HSA_STATUS_ERROR_INVALID_INDEX;
  switch (attribute) {
  /* The ISA has a single call convention: one work-item per wavefront. */
  case HSA_ISA_INFO_CALL_CONVENTION_COUNT:
    *(uint32_t *)value = 1;
    return HSA_STATUS_SUCCESS;
  case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE:
  case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT:
    *(uint32_t *)value =
        attribute == HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE ? 1 : AQ_WORKGROUP_MAX_SIZE;
    return HSA_STATUS_SUCCESS;
  default:
    return hsa_isa_get_info_alt(isa, attribute, value);
  }
}

hsa_status_t hsa_isa_get_exception_policies(hsa_isa_t isa, hsa_profile_t profile, uint16_t *mask) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!mask || (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *mask = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_round_method(hsa_isa_t isa, hsa_fp_type_t fp_type,
                                      hsa_flush_mode_t flush_mode,
                                      hsa_round_method_t *round_method) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!round_method ||
      (fp_type != HSA_FP_TYPE_16 && fp_type != HSA_FP_TYPE_32 && fp_type != HSA_FP_TYPE_64) ||
      (flush_mode != HSA_FLUSH_MODE_FTZ && flush_mode != HSA_FLUSH_MODE_NON_FTZ))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* x86 SSE arithmetic rounds every operation once. */
  *round_method = HSA_ROUND_METHOD_SINGLE;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_wavefront_get_info(hsa_wavefront_t wavefront, hsa_wavefront_info_t attribute,
                                    void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (wavefront.handle != (uint64_t)(uintptr_t)&cpu_wavefront)
    return HSA_STATUS_ERROR_INVALID_WAVEFRONT;
  if (!value || attribute != HSA_WAVEFRONT_INFO_SIZE) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *(uint32_t *)value = 1;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_iterate_wavefronts(
    hsa_isa_t isa, hsa_status_t (*callback)(hsa_wavefront_t wavefront, void *data), void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
  if (!callback) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_wavefront_t wavefront = {(uint64_t)(uintptr_t)&cpu_wavefront};
  return callback(wavefront, data);
}

hsa_status_t hsa_isa_compatible(hsa_isa_t code_object_isa, hsa_isa_t agent_isa, bool *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!isa_is_valid(code_object_isa) || !isa_is_valid(agent_isa))
    return HSA_STATUS_ERROR_INVALID_ISA;
  if (!result) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = code_object_isa.handle == agent_isa.handle;
  return HSA_STATUS_SUCCESS;
}
