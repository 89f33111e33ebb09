/* Runtime lifetime (reference-counted hsa_init / hsa_shut_down), status
 * strings, system-wide information and the extension queries. Of the
 * optional extensions Aquila implements images (hsa/image.c), version 1.0,
 * whose function tables these entry points hand out. */
#include "hsa_internal.h"

#include <hsa/hsa_ext_amd.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint32_t runtime_refcount;

/* hsa_init may be called this many times without a matching shut down. */
#define AQ_REFCOUNT_MAX (1u << 30)

bool aq_runtime_is_initialized(void) {
  return atomic_load_explicit(&runtime_refcount, memory_order_acquire) > 0;
}

uint64_t aq_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fork: the child of a process that used the runtime keeps using it. Every
 * global lock is taken before the fork (runtime_lock first, as hsa_init
 * and hsa_shut_down take it around the others) so that no other thread
 * holds one at the moment of the fork; the child, where only the forking
 * thread exists, makes them anew, and the CPU agent forgets its compute
 * units' threads and the parent's work, and starts new threads when work
 * comes (cpu_agent.c). */
static void fork_prepare(void) {
  pthread_mutex_lock(&runtime_lock);
  aq_cpu_agent_fork(AQ_FORK_PREPARE);
  aq_signal_fork(AQ_FORK_PREPARE);
  aq_queue_fork(AQ_FORK_PREPARE);
  aq_handle_fork(AQ_FORK_PREPARE);
  aq_memory_fork(AQ_FORK_PREPARE);
}

static void fork_parent(void) {
  aq_memory_fork(AQ_FORK_PARENT);
  aq_handle_fork(AQ_FORK_PARENT);
  aq_queue_fork(AQ_FORK_PARENT);
  aq_signal_fork(AQ_FORK_PARENT);
  aq_cpu_agent_fork(AQ_FORK_PARENT);
  pthread_mutex_unlock(&runtime_lock);
}

static void fork_child(void) {
  pthread_mutex_init(&runtime_lock, NULL);
  aq_memory_fork(AQ_FORK_CHILD);
  aq_handle_fork(AQ_FORK_CHILD);
  aq_queue_fork(AQ_FORK_CHILD);
  aq_signal_fork(AQ_FORK_CHILD);
  aq_cpu_agent_fork(AQ_FORK_CHILD);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) {
  pthread_atfork(fork_prepare, fork_parent, fork_child);
}

hsa_status_t hsa_init(void) {
  hsa_status_t status = HSA_STATUS_SUCCESS;
  pthread_once(&atfork_once, register_atfork);
  pthread_mutex_lock(&runtime_lock);
  uint32_t count = atomic_load(&runtime_refcount);
  if (count >= AQ_REFCOUNT_MAX) {
    status = HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
  } else if (count == 0) {
    status = aq_cpu_agent_start();
    if (status == HSA_STATUS_SUCCESS) {
      atomic_store(&runtime_refcount, 1);
      aq_remote_start();
    }
  } else {
    atomic_store(&runtime_refcount, count + 1);
  }
  pthread_mutex_unlock(&runtime_lock);
  return status;
}

hsa_status_t hsa_shut_down(void) {
  hsa_status_t status = HSA_STATUS_SUCCESS;
  pthread_mutex_lock(&runtime_lock);
  uint32_t count = atomic_load(&runtime_refcount);
  if (count == 0) {
    status = HSA_STATUS_ERROR_NOT_INITIALIZED;
  } else if (count == 1) {
    /* The last user is gone: stop the compute units first so no thread is
     * touching memory that is released afterwards. */
    aq_remote_stop();
    atomic_store(&runtime_refcount, 0);
    aq_cpu_agent_stop();
    aq_memory_release_all();
  } else {
    atomic_store(&runtime_refcount, count - 1);
  }
  pthread_mutex_unlock(&runtime_lock);
  return status;
}

hsa_status_t hsa_status_string(hsa_status_t status, const char **status_string) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!status_string) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const char *text = NULL;
  switch ((int)status) {
  case HSA_STATUS_SUCCESS:
    text = "HSA_STATUS_SUCCESS: the function succeeded";
    break;
  case HSA_STATUS_INFO_BREAK:
    text = "HSA_STATUS_INFO_BREAK: a traversal was stopped";
    break;
  case HSA_STATUS_ERROR:
    text = "HSA_STATUS_ERROR: a generic error";
    break;
  case HSA_STATUS_ERROR_INVALID_ARGUMENT:
    text = "HSA_STATUS_ERROR_INVALID_ARGUMENT: an argument is invalid";
    break;
  case HSA_STATUS_ERROR_INVALID_QUEUE_CREATION:
    text = "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: the queue cannot be created";
    break;
  case HSA_STATUS_ERROR_INVALID_ALLOCATION:
    text = "HSA_STATUS_ERROR_INVALID_ALLOCATION: the allocation is not allowed";
    break;
  case HSA_STATUS_ERROR_INVALID_AGENT:
    text = "HSA_STATUS_ERROR_INVALID_AGENT: invalid agent";
    break;
  case HSA_STATUS_ERROR_INVALID_REGION:
    text = "HSA_STATUS_ERROR_INVALID_REGION: invalid memory region";
    break;
  case HSA_STATUS_ERROR_INVALID_SIGNAL:
    text = "HSA_STATUS_ERROR_INVALID_SIGNAL: invalid signal";
    break;
  case HSA_STATUS_ERROR_INVALID_QUEUE:
    text = "HSA_STATUS_ERROR_INVALID_QUEUE: invalid queue";
    break;
  case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
    text = "HSA_STATUS_ERROR_OUT_OF_RESOURCES: the runtime ran out of resources";
    break;
  case HSA_STATUS_ERROR_INVALID_PACKET_FORMAT:
    text = "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: a packet has an invalid format";
    break;
  case HSA_STATUS_ERROR_RESOURCE_FREE:
    text = "HSA_STATUS_ERROR_RESOURCE_FREE: a resource could not be released";
    break;
  case HSA_STATUS_ERROR_NOT_INITIALIZED:
    text = "HSA_STATUS_ERROR_NOT_INITIALIZED: the runtime is not initialized";
    break;
  case HSA_STATUS_ERROR_REFCOUNT_OVERFLOW:
    text = "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: the runtime reference count overflowed";
    break;
  case HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS:
    text = "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: arguments are incompatible";
    break;
  case HSA_STATUS_ERROR_INVALID_INDEX:
    text = "HSA_STATUS_ERROR_INVALID_INDEX: invalid index";
    break;
  case HSA_STATUS_ERROR_INVALID_ISA:
    text = "HSA_STATUS_ERROR_INVALID_ISA: invalid ISA";
    break;
  case HSA_STATUS_ERROR_INVALID_ISA_NAME:
    text = "HSA_STATUS_ERROR_INVALID_ISA_NAME: invalid ISA name";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT:
    text = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: invalid code object";
    break;
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE:
    text = "HSA_STATUS_ERROR_INVALID_EXECUTABLE: invalid executable";
    break;
  case HSA_STATUS_ERROR_FROZEN_EXECUTABLE:
    text = "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: the executable is frozen";
    break;
  case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME:
    text = "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: no symbol has that name";
    break;
  case HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED:
    text = "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: the variable is already defined";
    break;
  case HSA_STATUS_ERROR_VARIABLE_UNDEFINED:
    text = "HSA_STATUS_ERROR_VARIABLE_UNDEFINED: a variable is undefined";
    break;
  case HSA_STATUS_ERROR_EXCEPTION:
    text = "HSA_STATUS_ERROR_EXCEPTION: an HSAIL exception was raised";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_SYMBOL:
    text = "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: invalid code symbol";
    break;
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL:
    text = "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: invalid executable symbol";
    break;
  case HSA_STATUS_ERROR_INVALID_FILE:
    text = "HSA_STATUS_ERROR_INVALID_FILE: invalid file";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER:
    text = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: invalid code object reader";
    break;
  case HSA_STATUS_ERROR_INVALID_CACHE:
    text = "HSA_STATUS_ERROR_INVALID_CACHE: invalid cache";
    break;
  case HSA_STATUS_ERROR_INVALID_WAVEFRONT:
    text = "HSA_STATUS_ERROR_INVALID_WAVEFRONT: invalid wavefront";
    break;
  case HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP:
    text = "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: invalid signal group";
    break;
  case HSA_STATUS_ERROR_INVALID_RUNTIME_STATE:
    text = "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: the runtime is in an invalid state";
    break;
  case HSA_STATUS_ERROR_FATAL:
    text = "HSA_STATUS_ERROR_FATAL: a fatal error";
    break;
  /* hsa_ext_amd.h's: what a kernel's fault ends its dispatch with. */
  case HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION:
    text = "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: a kernel accessed memory it may not";
    break;
  case HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION:
    text = "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: a kernel ran an instruction the processor "
           "does not have";
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  *status_string = text;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!value) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch ((int)attribute) {
  case HSA_SYSTEM_INFO_VERSION_MAJOR:
    *(uint16_t *)value = 1;
    break;
  case HSA_SYSTEM_INFO_VERSION_MINOR:
    *(uint16_t *)value = 1;
    break;
  /* Timestamps are CLOCK_MONOTONIC nanoseconds, so the frequency is 1 GHz
   * and signal wait timeouts are nanoseconds as well. */
  case HSA_SYSTEM_INFO_TIMESTAMP:
    *(uint64_t *)value = aq_now_ns();
    break;
  case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
    *(uint64_t *)value = 1000000000ull;
    break;
  case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
    *(uint64_t *)value = UINT64_MAX;
    break;
  case HSA_SYSTEM_INFO_ENDIANNESS:
    *(hsa_endianness_t *)value = HSA_ENDIANNESS_LITTLE;
    break;
  case HSA_SYSTEM_INFO_MACHINE_MODEL:
    *(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE;
    break;
  case HSA_SYSTEM_INFO_EXTENSIONS:
    memset(value, 0, 128);
    ((uint8_t *)value)[HSA_EXTENSION_IMAGES / 8] |= 1u << (HSA_EXTENSION_IMAGES % 8);
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_extension_get_name(uint16_t extension, const char **name) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!name) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (extension) {
  case HSA_EXTENSION_FINALIZER:
    *name = "HSA_EXTENSION_FINALIZER";
    break;
  case HSA_EXTENSION_IMAGES:
    *name = "HSA_EXTENSION_IMAGES";
    break;
  case HSA_EXTENSION_PERFORMANCE_COUNTERS:
    *name = "HSA_EXTENSION_PERFORMANCE_COUNTERS";
    break;
  case HSA_EXTENSION_PROFILING_EVENTS:
    *name = "HSA_EXTENSION_PROFILING_EVENTS";
    break;
  case HSA_EXTENSION_AMD_PROFILER:
    *name = "HSA_EXTENSION_AMD_PROFILER";
    break;
  case HSA_EXTENSION_AMD_LOADER:
    *name = "HSA_EXTENSION_AMD_LOADER";
    break;
  case HSA_EXTENSION_AMD_AQLPROFILE:
    *name = "HSA_EXTENSION_AMD_AQLPROFILE";
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  return HSA_STATUS_SUCCESS;
}

bool aq_extension_id_is_known(uint16_t extension) {
  return extension <= HSA_EXTENSION_STD_LAST ||
         (extension >= HSA_AMD_FIRST_EXTENSION && extension <= HSA_AMD_LAST_EXTENSION);
}

hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t version_major,
                                            uint16_t version_minor, bool *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!result || !aq_extension_id_is_known(extension)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = extension == HSA_EXTENSION_IMAGES && version_major == 1 && version_minor == 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                                  uint16_t *version_minor, bool *result) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!result || !version_minor || !aq_extension_id_is_known(extension))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  *result = extension == HSA_EXTENSION_IMAGES && version_major == 1;
  if (*result) *version_minor = 0;
  return HSA_STATUS_SUCCESS;
}

/* Only the images extension has a table; for any other extension (or
 * version) the specification's error for an unsupported one is
 * INVALID_ARGUMENT. */
hsa_status_t hsa_system_get_extension_table(uint16_t extension, uint16_t version_major,
                                            uint16_t version_minor, void *table) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!table || extension != HSA_EXTENSION_IMAGES || version_major != 1 || version_minor != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  aq_image_table(false, table, 0);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_major_extension_table(uint16_t extension, uint16_t version_major,
                                                  size_t table_length, void *table) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!table || extension != HSA_EXTENSION_IMAGES || version_major != 1)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  aq_image_table(true, table, table_length);
  return HSA_STATUS_SUCCESS;
}

bool aq_debug_enabled(void) {
  const char *e = getenv("AQUILA_DEBUG");
  return e && *e && strcmp(e, "0") != 0;
}

void aq_debug(const char *fmt, ...) {
  if (!aq_debug_enabled()) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "aquila: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
