/* What the platform and its devices support, as OpenCL 3.0 reports it: the
 * version strings and numbers, the extensions (one table gives both the
 * extension strings and their name-version arrays, so the two cannot
 * disagree), the OpenCL C versions and optional features, the atomic
 * capabilities, and the 2.x device queries of the features a 3.0 device may
 * leave out: SVM (svm.c), the generic address space, program-scope
 * variables, work-group collectives, non-uniform work-groups and
 * sub-groups are here; pipes and device-side enqueue are not. SPIR-V programs are
 * taken. What is
 * absent here is reported absent everywhere: the compiler defines the same __opencl_c_* macros
 * (compiler/frontend/options.c), and the entry points of absent features
 * return the specified errors (icd/opencl2.c). */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

#define VERSION_3_0 CL_MAKE_VERSION(3, 0, 0)

static const cl_name_version platform_extensions[] = {
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_icd"},
};

static const cl_name_version device_extensions[] = {
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_icd"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_fp64"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_byte_addressable_store"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_global_int32_base_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_global_int32_extended_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_local_int32_base_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_local_int32_extended_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_int64_base_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_int64_extended_atomics"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_3d_image_writes"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_il_program"},
    /* Last: what only the CPU agent in this process has. Sub-groups
     * (compiler/builtins/subgroups.cl): a remote device's code is the
     * daemon's, whose sub-group width this process does not know. The
     * OpenCL C 3.0 feature, not cl_khr_subgroups, which requires
     * independent forward progress: a work-group's sub-groups run one
     * after another on its thread. */
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_extended_types"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_non_uniform_vote"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_ballot"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_non_uniform_arithmetic"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_shuffle"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_shuffle_relative"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_rotate"},
    {CL_MAKE_VERSION(1, 0, 0), "cl_khr_subgroup_clustered_reduce"},
    /* Memory in the host's address space (svm.c, usm.c). */
    {CL_MAKE_VERSION(1, 0, 0), "cl_intel_unified_shared_memory"},
};
/* A remote device lists the extensions before these. */
#define LOCAL_AGENT_EXTENSIONS 9

/* What the SPIR-V/LLVM translator of Debian 12 (llvm-spirv-15) reads in
 * full: it takes 1.4's version number but stops (an assertion) at some of
 * its instructions (OpCopyLogical, OpPtrDiff: the CTS's spirv14 tests). */
static const cl_name_version intermediate_languages[] = {
    {CL_MAKE_VERSION(1, 0, 0), "SPIR-V"},
    {CL_MAKE_VERSION(1, 1, 0), "SPIR-V"},
    {CL_MAKE_VERSION(1, 2, 0), "SPIR-V"},
    {CL_MAKE_VERSION(1, 3, 0), "SPIR-V"},
};

static const cl_name_version opencl_c_versions[] = {
    {CL_MAKE_VERSION(1, 0, 0), "OpenCL C"},
    {CL_MAKE_VERSION(1, 1, 0), "OpenCL C"},
    {CL_MAKE_VERSION(1, 2, 0), "OpenCL C"},
    {CL_MAKE_VERSION(3, 0, 0), "OpenCL C"},
};

/* OpenCL C 3.0's optional features this compiler has: the ones OpenCL C 1.2
 * had (64-bit integers, images, 3D image writes, doubles), every memory
 * order and scope of the C11 atomics, which on a CPU are the processor's own
 * (compiler/builtins/atomic_c11.cl), and those below. Keep in step with
 * compiler/frontend/options.c's list. */
static const cl_name_version opencl_c_features[] = {
    {VERSION_3_0, "__opencl_c_int64"},
    {VERSION_3_0, "__opencl_c_images"},
    {VERSION_3_0, "__opencl_c_3d_image_writes"},
    {VERSION_3_0, "__opencl_c_fp64"},
    {VERSION_3_0, "__opencl_c_atomic_order_acq_rel"},
    {VERSION_3_0, "__opencl_c_atomic_order_seq_cst"},
    {VERSION_3_0, "__opencl_c_atomic_scope_device"},
    {VERSION_3_0, "__opencl_c_atomic_scope_all_devices"},
    /* Every pointer is an address of the process (builtins/generic.cl). */
    {VERSION_3_0, "__opencl_c_generic_address_space"},
    /* One code object per device holds them (compiler/compile.c). */
    {VERSION_3_0, "__opencl_c_program_scope_global_variables"},
    /* Atomics on a __local word in work-item order (builtins/collectives.cl). */
    {VERSION_3_0, "__opencl_c_work_group_collective_functions"},
    /* Last, as it is the CPU agent's alone (the extensions above say why):
     * a sub-group is the vectorizer's vector (builtins/subgroups.cl). */
    {VERSION_3_0, "__opencl_c_subgroups"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* "name name ... name" of a table. */
static void names_of(const cl_name_version *table, size_t n, char *buffer, size_t size) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(table[i].name);
    if (at + len + 2 > size) break;
    if (i) buffer[at++] = ' ';
    memcpy(buffer + at, table[i].name, len);
    at += len;
  }
  buffer[at] = 0;
}

static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static char device_extension_names[1024], remote_extension_names[1024],
    platform_extension_names[256];

/* How many of device_extensions d has. */
static size_t extension_count(cl_device_id d) {
  return COUNT(device_extensions) - (device_root(d)->remote ? LOCAL_AGENT_EXTENSIONS : 0);
}

static void make_names(void) {
  names_of(device_extensions, COUNT(device_extensions), device_extension_names,
           sizeof device_extension_names);
  names_of(device_extensions, COUNT(device_extensions) - LOCAL_AGENT_EXTENSIONS,
           remote_extension_names, sizeof remote_extension_names);
  names_of(platform_extensions, COUNT(platform_extensions), platform_extension_names,
           sizeof platform_extension_names);
}

const char *features_device_extensions(cl_device_id d) {
  pthread_once(&names_once, make_names);
  return device_root(d)->remote ? remote_extension_names : device_extension_names;
}

const char *features_platform_extensions(void) {
  pthread_once(&names_once, make_names);
  return platform_extension_names;
}

#define INFO_ARRAY(table)                                                                          \
  info_copy(table, sizeof(table), param_value_size, param_value, param_value_size_ret)

int features_platform_info(cl_platform_info param_name, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret, cl_int *err) {
  switch (param_name) {
  case CL_PLATFORM_NUMERIC_VERSION: {
    cl_version v = VERSION_3_0;
    *err = info_copy(&v, sizeof v, param_value_size, param_value, param_value_size_ret);
    return 1;
  }
  case CL_PLATFORM_EXTENSIONS_WITH_VERSION:
    *err = INFO_ARRAY(platform_extensions);
    return 1;
  case CL_PLATFORM_HOST_TIMER_RESOLUTION: {
    /* clGetHostTimer reads CLOCK_MONOTONIC (icd/opencl2.c). */
    struct timespec res;
    cl_ulong ns = clock_getres(CLOCK_MONOTONIC, &res)
                      ? 1
                      : (cl_ulong)res.tv_sec * 1000000000ull + (cl_ulong)res.tv_nsec;
    *err = info_copy(&ns, sizeof ns, param_value_size, param_value, param_value_size_ret);
    return 1;
  }
  default:
    return 0;
  }
}

#define ANSWER(type, v)                                                                            \
  do {                                                                                             \
    type answer_ = (v);                                                                            \
    *err =                                                                                         \
        info_copy(&answer_, sizeof answer_, param_value_size, param_value, param_value_size_ret);  \
    return 1;                                                                                      \
  } while (0)
#define ANSWER_ARRAY(table)                                                                        \
  do {                                                                                             \
    *err = INFO_ARRAY(table);                                                                      \
    return 1;                                                                                      \
  } while (0)
#define ANSWER_EMPTY()                                                                             \
  do {                                                                                             \
    *err = info_copy(NULL, 0, param_value_size, param_value, param_value_size_ret);                \
    return 1;                                                                                      \
  } while (0)
#define ANSWER_STRING(s)                                                                           \
  do {                                                                                             \
    *err = info_copy(s, strlen(s) + 1, param_value_size, param_value, param_value_size_ret);       \
    return 1;                                                                                      \
  } while (0)

int features_device_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                         void *param_value, size_t *param_value_size_ret, cl_int *err) {
  if (usm_device_info(d, param_name, param_value_size, param_value, param_value_size_ret, err))
    return 1;
  switch (param_name) {
  case CL_DEVICE_NUMERIC_VERSION:
    ANSWER(cl_version, VERSION_3_0);
  case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    *err = info_copy(device_extensions, extension_count(d) * sizeof device_extensions[0],
                     param_value_size, param_value, param_value_size_ret);
    return 1;
  case CL_DEVICE_OPENCL_C_ALL_VERSIONS:
    ANSWER_ARRAY(opencl_c_versions);
  case CL_DEVICE_OPENCL_C_FEATURES:
    *err = info_copy(opencl_c_features,
                     (COUNT(opencl_c_features) - (device_root(d)->remote ? 1 : 0)) *
                         sizeof opencl_c_features[0],
                     param_value_size, param_value, param_value_size_ret);
    return 1;
  case CL_DEVICE_ILS_WITH_VERSION:
    ANSWER_ARRAY(intermediate_languages);
  case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
    ANSWER_EMPTY();
  case CL_DEVICE_IL_VERSION:
    ANSWER_STRING("SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2 SPIR-V_1.3");
  case CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED:
    /* Not submitted to Khronos' conformance process (docs/CONFORMANCE.md
     * has the suites' counts). */
    ANSWER_STRING("v0000-01-01-00");
  /* Every order and scope: on a CPU each is the processor's own atomics. */
  case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
    ANSWER(cl_device_atomic_capabilities,
           CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
               CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP |
               CL_DEVICE_ATOMIC_SCOPE_DEVICE | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES);
  case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
    ANSWER(cl_device_atomic_capabilities,
           CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_ORDER_ACQ_REL |
               CL_DEVICE_ATOMIC_ORDER_SEQ_CST | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM |
               CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP | CL_DEVICE_ATOMIC_SCOPE_DEVICE |
               CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES);
  /* The agent runs a partial last work-group as HSA defines it
   * (hsa/cpu_agent.c); enqueue.c says which programs may ask for one. */
  case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
    ANSWER(cl_bool, CL_TRUE);
  case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
    ANSWER(cl_bool, CL_TRUE);
  case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
    ANSWER(cl_bool, CL_TRUE);
  /* A work-group's largest number of sub-groups: rows of one work-item
   * each (kernel.c). Sub-groups of one work-group run one after another
   * on its thread: none waits for another's progress. */
  case CL_DEVICE_MAX_NUM_SUB_GROUPS:
    ANSWER(cl_uint, device_root(d)->remote ? 0 : (cl_uint)d->max_work_group_size);
  case CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS:
  /* The optional features of 2.x that this device does not have. */
  case CL_DEVICE_PIPE_SUPPORT:
    ANSWER(cl_bool, CL_FALSE);
  case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES:
    ANSWER(cl_device_device_enqueue_capabilities, 0);
  case CL_DEVICE_SVM_CAPABILITIES:
    ANSWER(cl_device_svm_capabilities, device_svm_capabilities(d));
  case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES:
    ANSWER(cl_command_queue_properties, 0);
  case CL_DEVICE_QUEUE_ON_HOST_PROPERTIES:
    ANSWER(cl_command_queue_properties,
           CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE);
  case CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS:
  case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
  case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
  case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
  case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
  case CL_DEVICE_MAX_PIPE_ARGS:
  case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
  case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
  case CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT:
  case CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT:
  case CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT:
  case CL_DEVICE_IMAGE_PITCH_ALIGNMENT:
  case CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT:
    ANSWER(cl_uint, 0);
  /* The specification's least (compiler/codegen/codegen.h's limit). */
  case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
  case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE:
    ANSWER(size_t, 65536);
  case CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE:
    /* What clGetKernelWorkGroupInfo says for every kernel (kernel.c). */
    ANSWER(size_t, 16);
  case CL_DEVICE_HALF_FP_CONFIG:
    ANSWER(cl_device_fp_config, 0); /* no cl_khr_fp16 */
  default:
    return 0;
  }
}
