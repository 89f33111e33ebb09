/* Runtime lifetime, system/agent/region/ISA/cache information and memory. */
#include "check.h"
#include "hsa_test_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_not_initialized(void) {
  hsa_agent_t agent = {0};
  uint16_t major;
  CHECK_EQ_INT(hsa_shut_down(), HSA_STATUS_ERROR_NOT_INITIALIZED);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
  CHECK_EQ_INT(hsa_iterate_agents(util_first_agent, &agent), HSA_STATUS_ERROR_NOT_INITIALIZED);
  hsa_signal_t signal;
  CHECK_EQ_INT(hsa_signal_create(1, 0, NULL, &signal), HSA_STATUS_ERROR_NOT_INITIALIZED);
  void *ptr;
  hsa_region_t region = {0};
  CHECK_EQ_INT(hsa_memory_allocate(region, 64, &ptr), HSA_STATUS_ERROR_NOT_INITIALIZED);
  const char *text = NULL;
  /* hsa.h lists NOT_INITIALIZED for hsa_status_string too. */
  CHECK_EQ_INT(hsa_status_string(HSA_STATUS_ERROR_INVALID_AGENT, &text),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
}

static void test_status_string(void) {
  const char *text = NULL;
  CHECK_EQ_INT(hsa_status_string(HSA_STATUS_ERROR_INVALID_AGENT, &text), HSA_STATUS_SUCCESS);
  CHECK(text && strstr(text, "INVALID_AGENT"));
  CHECK_EQ_INT(hsa_status_string((hsa_status_t)0x7777, &text), HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static void test_refcount(void) {
  REQUIRE(hsa_init() == HSA_STATUS_SUCCESS);
  REQUIRE(hsa_init() == HSA_STATUS_SUCCESS);
  uint16_t major = 0;
  CHECK_EQ_INT(hsa_shut_down(), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(major, 1);
  CHECK_EQ_INT(hsa_shut_down(), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major),
               HSA_STATUS_ERROR_NOT_INITIALIZED);
  /* Re-initialisation after a full shut down works. */
  CHECK_EQ_INT(hsa_init(), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_shut_down(), HSA_STATUS_SUCCESS);
}

static void test_system_info(void) {
  uint64_t t0 = 0, t1 = 0, frequency = 0, max_wait = 0;
  hsa_endianness_t endianness;
  hsa_machine_model_t model;
  uint8_t extensions[128];
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t0), HSA_STATUS_SUCCESS);
  usleep(2000);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &t1), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &frequency),
               HSA_STATUS_SUCCESS);
  CHECK(frequency >= 1000000);
  CHECK(t1 > t0 && (t1 - t0) * 1000 / frequency >= 2); /* at least 2 ms passed */
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT, &max_wait), HSA_STATUS_SUCCESS);
  CHECK(max_wait > 0);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_ENDIANNESS, &endianness), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(endianness, HSA_ENDIANNESS_LITTLE);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_MACHINE_MODEL, &model), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(model, HSA_MACHINE_MODEL_LARGE);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_EXTENSIONS, extensions), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_system_get_info((hsa_system_info_t)0x1234, &t0),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, NULL),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  bool supported = true;
  uint16_t minor;
  CHECK_EQ_INT(hsa_system_major_extension_supported(HSA_EXTENSION_FINALIZER, 1, &minor, &supported),
               HSA_STATUS_SUCCESS);
  CHECK(!supported);
  const char *name = NULL;
  CHECK_EQ_INT(hsa_extension_get_name(HSA_EXTENSION_IMAGES, &name), HSA_STATUS_SUCCESS);
  CHECK(name && strcmp(name, "HSA_EXTENSION_IMAGES") == 0);
  char table[64];
  CHECK_EQ_INT(
      hsa_system_get_major_extension_table(HSA_EXTENSION_FINALIZER, 1, sizeof(table), table),
      HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static hsa_status_t count_agent(hsa_agent_t agent, void *data) {
  ++*(int *)data;
  return HSA_STATUS_SUCCESS;
}

static void test_agent_info(void) {
  int agents = 0;
  CHECK_EQ_INT(hsa_iterate_agents(count_agent, &agents), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(agents, 1);
  hsa_agent_t agent = util_cpu_agent();
  char name[64], vendor[64];
  CHECK_EQ_INT(hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, name), HSA_STATUS_SUCCESS);
  CHECK(strcmp(name, "Aquila CPU") == 0);
  CHECK_EQ_INT(hsa_agent_get_info(agent, HSA_AGENT_INFO_VENDOR_NAME, vendor), HSA_STATUS_SUCCESS);
  hsa_agent_feature_t feature;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &feature);
  CHECK(feature & HSA_AGENT_FEATURE_KERNEL_DISPATCH);
  hsa_device_type_t device;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &device);
  CHECK_EQ_INT(device, HSA_DEVICE_TYPE_CPU);
  uint32_t wavefront = 0, wg_max = 0, qmin = 0, qmax = 0, queues_max = 0, units = 0;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wavefront);
  CHECK_EQ_INT(wavefront, 1);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, &wg_max);
  CHECK_EQ_INT(wg_max, 4096);
  uint16_t wg_dims[3];
  hsa_agent_get_info(agent, HSA_AGENT_INFO_WORKGROUP_MAX_DIM, wg_dims);
  CHECK_EQ_INT(wg_dims[0], 4096);
  hsa_dim3_t grid;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_GRID_MAX_DIM, &grid);
  CHECK(grid.x == UINT32_MAX);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &qmin);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &qmax);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUES_MAX, &queues_max);
  CHECK(qmin >= 1 && qmin <= qmax && queues_max > 0);
  uint32_t fbarriers = 0;
  CHECK_EQ_INT(hsa_agent_get_info(agent, HSA_AGENT_INFO_FBARRIER_MAX_SIZE, &fbarriers),
               HSA_STATUS_SUCCESS);
  CHECK(fbarriers >= 32); /* hsa.h: "Must be at least 32." */
  bool supported = true;
  CHECK_EQ_INT(hsa_agent_extension_supported(0x7777, agent, 1, 0, &supported),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint16_t minor = 0;
  CHECK_EQ_INT(hsa_agent_major_extension_supported(0x7777, agent, 1, &minor, &supported),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_queue_type32_t qtype;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_QUEUE_TYPE, &qtype);
  CHECK_EQ_INT(qtype, HSA_QUEUE_TYPE_MULTI);
  uint32_t cache[4];
  CHECK_EQ_INT(hsa_agent_get_info(agent, HSA_AGENT_INFO_CACHE_SIZE, cache), HSA_STATUS_SUCCESS);
  /* HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT */
  CHECK_EQ_INT(hsa_agent_get_info(agent, (hsa_agent_info_t)0xA002, &units), HSA_STATUS_SUCCESS);
  const char *env = getenv("AQUILA_CPU_UNITS");
  CHECK_EQ_INT(units, env && *env ? (uint32_t)atoi(env) : (uint32_t)sysconf(_SC_NPROCESSORS_ONLN));
  uint16_t major = 0;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_VERSION_MAJOR, &major);
  CHECK_EQ_INT(major, 1);
  hsa_profile_t profile;
  hsa_agent_get_info(agent, HSA_AGENT_INFO_PROFILE, &profile);
  CHECK_EQ_INT(profile, HSA_PROFILE_FULL);
  hsa_agent_t bogus = {12345};
  CHECK_EQ_INT(hsa_agent_get_info(bogus, HSA_AGENT_INFO_NAME, name),
               HSA_STATUS_ERROR_INVALID_AGENT);
  CHECK_EQ_INT(hsa_agent_get_info(agent, (hsa_agent_info_t)0x9999, name),
               HSA_STATUS_ERROR_INVALID_ARGUMENT);
}

static hsa_status_t first_isa(hsa_isa_t isa, void *data) {
  *(hsa_isa_t *)data = isa;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t count_cache(hsa_cache_t cache, void *data) {
  uint8_t level = 0;
  if (hsa_cache_get_info(cache, HSA_CACHE_INFO_LEVEL, &level) == HSA_STATUS_SUCCESS && level >= 1)
    ++*(int *)data;
  /* A buffer of exactly the length reported holds the whole name, NUL
   * included (under check-asan an overrun of it is a failure). */
  uint32_t length = 0;
  CHECK_EQ_INT(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME_LENGTH, &length), HSA_STATUS_SUCCESS);
  char *name = malloc(length);
  if (name && length) {
    CHECK_EQ_INT(hsa_cache_get_info(cache, HSA_CACHE_INFO_NAME, name), HSA_STATUS_SUCCESS);
    CHECK(name[length - 1] == '\0' && strlen(name) + 1 == length);
  }
  free(name);
  return HSA_STATUS_SUCCESS;
}

static void test_isa_and_caches(void) {
  hsa_agent_t agent = util_cpu_agent();
  hsa_isa_t isa = {0}, agent_isa = {0}, named = {0};
  CHECK_EQ_INT(hsa_agent_iterate_isas(agent, first_isa, &isa), HSA_STATUS_SUCCESS);
  hsa_agent_get_info(agent, HSA_AGENT_INFO_ISA, &agent_isa);
  CHECK(isa.handle && isa.handle == agent_isa.handle);
  uint32_t length = 0;
  CHECK_EQ_INT(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &length), HSA_STATUS_SUCCESS);
  /* Exactly the length reported, not zeroed: the name comes with its own
   * NUL and the length counts it, as ROCr's does (check-asan catches a
   * byte written past it). */
  REQUIRE(length > 1 && length < 256);
  char *name = malloc(length);
  REQUIRE(name);
  memset(name, 'x', length);
  CHECK_EQ_INT(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, name), HSA_STATUS_SUCCESS);
  CHECK(name[length - 1] == '\0' && strlen(name) + 1 == length);
  CHECK_EQ_INT(hsa_isa_from_name(name, &named), HSA_STATUS_SUCCESS);
  CHECK(named.handle == isa.handle);
  free(name);
  CHECK_EQ_INT(hsa_isa_from_name("no-such-isa", &named), HSA_STATUS_ERROR_INVALID_ISA_NAME);
  uint32_t wf = 0;
  CHECK_EQ_INT(hsa_isa_get_info(isa, HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE, 0, &wf),
               HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(wf, 1);
  CHECK_EQ_INT(hsa_isa_get_info(isa, HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE, 3, &wf),
               HSA_STATUS_ERROR_INVALID_INDEX);
  CHECK_EQ_INT(hsa_isa_get_info(isa, HSA_ISA_INFO_NAME_LENGTH, (uint32_t)-1, &length),
               HSA_STATUS_ERROR_INVALID_INDEX);
  uint32_t fbarriers = 0;
  CHECK_EQ_INT(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_FBARRIER_MAX_SIZE, &fbarriers),
               HSA_STATUS_SUCCESS);
  CHECK(fbarriers >= 32);
  bool compatible = false;
  CHECK_EQ_INT(hsa_isa_compatible(isa, agent_isa, &compatible), HSA_STATUS_SUCCESS);
  CHECK(compatible);
  hsa_isa_t bad = {77};
  CHECK_EQ_INT(hsa_isa_get_info_alt(bad, HSA_ISA_INFO_NAME_LENGTH, &length),
               HSA_STATUS_ERROR_INVALID_ISA);
  int caches = 0;
  CHECK_EQ_INT(hsa_agent_iterate_caches(agent, count_cache, &caches), HSA_STATUS_SUCCESS);
  hsa_cache_t bad_cache = {5};
  uint8_t level;
  CHECK_EQ_INT(hsa_cache_get_info(bad_cache, HSA_CACHE_INFO_LEVEL, &level),
               HSA_STATUS_ERROR_INVALID_CACHE);
}

struct region_census {
  int fine_kernarg, coarse, group;
};

static hsa_status_t census(hsa_region_t region, void *data) {
  struct region_census *c = data;
  hsa_region_segment_t segment;
  hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment);
  bool allowed = false;
  hsa_region_get_info(region, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &allowed);
  if (segment == HSA_REGION_SEGMENT_GROUP) {
    /* Global flags are undefined for a group region: a value, not an error. */
    uint32_t flags = 0;
    CHECK_EQ_INT(hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags),
                 HSA_STATUS_SUCCESS);
    /* Undefined where allocation is not allowed, but always a power of 2. */
    size_t alignment = 0;
    CHECK_EQ_INT(hsa_region_get_info(region, HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT, &alignment),
                 HSA_STATUS_SUCCESS);
    CHECK(alignment && !(alignment & (alignment - 1)));
    size_t size = 0;
    hsa_region_get_info(region, HSA_REGION_INFO_SIZE, &size);
    if (size > 0 && !allowed) c->group++;
    return HSA_STATUS_SUCCESS;
  }
  uint32_t flags = 0;
  hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags);
  if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG) && (flags & HSA_REGION_GLOBAL_FLAG_FINE_GRAINED) &&
      allowed)
    c->fine_kernarg++;
  if ((flags & HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED) && allowed) c->coarse++;
  return HSA_STATUS_SUCCESS;
}

static void test_regions_and_memory(void) {
  hsa_agent_t agent = util_cpu_agent();
  struct region_census c = {0};
  CHECK_EQ_INT(hsa_agent_iterate_regions(agent, census, &c), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(c.fine_kernarg, 1);
  CHECK_EQ_INT(c.coarse, 1);
  CHECK_EQ_INT(c.group, 1);
  hsa_region_t region = util_region(agent, HSA_REGION_GLOBAL_FLAG_FINE_GRAINED);
  REQUIRE(region.handle != 0);
  size_t alignment = 0;
  hsa_region_get_info(region, HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT, &alignment);
  CHECK(alignment >= 64);
  void *a = NULL, *b = NULL;
  CHECK_EQ_INT(hsa_memory_allocate(region, 1000, &a), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_allocate(region, 1000, &b), HSA_STATUS_SUCCESS);
  REQUIRE(a && b);
  CHECK(((uintptr_t)a % alignment) == 0);
  memset(a, 0x5a, 1000);
  CHECK_EQ_INT(hsa_memory_copy(b, a, 1000), HSA_STATUS_SUCCESS);
  CHECK(((unsigned char *)b)[999] == 0x5a);
  CHECK_EQ_INT(hsa_memory_assign_agent(a, agent, HSA_ACCESS_PERMISSION_RW), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_copy(NULL, a, 10), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_memory_allocate(region, 0, &a), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_memory_allocate(region, 64, NULL), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_region_t bogus = {99};
  void *c2;
  CHECK_EQ_INT(hsa_memory_allocate(bogus, 64, &c2), HSA_STATUS_ERROR_INVALID_REGION);
  CHECK_EQ_INT(hsa_memory_allocate(region, (size_t)1 << 62, &c2),
               HSA_STATUS_ERROR_INVALID_ALLOCATION);
  char stack_buffer[16];
  CHECK_EQ_INT(hsa_memory_free(stack_buffer), HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK_EQ_INT(hsa_memory_register(stack_buffer, sizeof(stack_buffer)), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_deregister(stack_buffer, sizeof(stack_buffer)), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_free(a), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_free(a), HSA_STATUS_ERROR_INVALID_ARGUMENT); /* double free detected */
  CHECK_EQ_INT(hsa_memory_free(b), HSA_STATUS_SUCCESS);
  CHECK_EQ_INT(hsa_memory_free(NULL), HSA_STATUS_SUCCESS);
}

int main(void) {
  RUN(test_not_initialized);
  RUN(test_refcount);
  if (hsa_init() != HSA_STATUS_SUCCESS) return 1;
  RUN(test_status_string);
  RUN(test_system_info);
  RUN(test_agent_info);
  RUN(test_isa_and_caches);
  RUN(test_regions_and_memory);
  hsa_shut_down();
  CHECK_EXIT();
}
