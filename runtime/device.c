/* Devices: one per HSA CPU kernel agent. Owns device queries, the pool of
 * completion signals, and the watcher thread that notices finished kernel
 * dispatches and completes their events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hsa/hsa_ext_amd.h>
#include <stdbool.h>

#include "aquila/hsa_ext_aquila.h"

#include "aquila/compiler.h"
#include "runtime.h"

int device_is_valid(cl_device_id d) {
  for (cl_uint i = 0; i < aquila_num_devices; i++)
    if (d == &aquila_devices[i]) return 1;
  /* Sub-devices are allocated one by one; a live one has a parent. */
  return object_is(d, OBJECT_DEVICE) && d->parent;
}

const char *device_code_target(cl_device_id d) {
  d = device_root(d);
  /* A remote agent's daemon named its own (it may be another x86-64 level). */
  if (d->remote) return d->code_target;
  return aquila_compiler_host_target();
}

hsa_signal_t device_acquire_signal(cl_device_id d) {
  d = device_root(d); /* one pool per agent */
  hsa_signal_t s = {0};
  pthread_mutex_lock(&d->signal_lock);
  if (d->num_free_signals) s = d->free_signals[--d->num_free_signals];
  pthread_mutex_unlock(&d->signal_lock);
  if (s.handle) {
    hsa_signal_store_relaxed(s, 1);
    return s;
  }
  if (hsa_signal_create(1, 0, NULL, &s) != HSA_STATUS_SUCCESS) s.handle = 0;
  return s;
}

void device_release_signal(cl_device_id d, hsa_signal_t s) {
  d = device_root(d);
  /* The handler of a kernel abandoned at a fork never ran. */
  hsa_ven_aquila_signal_on_zero(s, NULL, NULL);
  pthread_mutex_lock(&d->signal_lock);
  if (d->num_free_signals == d->cap_free_signals) {
    size_t cap = d->cap_free_signals ? d->cap_free_signals * 2 : 64;
    hsa_signal_t *p = realloc(d->free_signals, cap * sizeof *p);
    if (!p) {
      pthread_mutex_unlock(&d->signal_lock);
      hsa_signal_destroy(s);
      return;
    }
    d->free_signals = p;
    d->cap_free_signals = cap;
  }
  d->free_signals[d->num_free_signals++] = s;
  pthread_mutex_unlock(&d->signal_lock);
}

/* The watcher completes dispatched kernels in submission order, and keeps
 * a reference to each until then. It sleeps on inflight_cond, and is woken
 * by the end of the kernel at the front of its list (kernel_ended, the
 * completion signal's handler, run by whoever made the signal 0: a compute
 * unit, or the network thread for a remote device), not at each launch
 * (an empty kernel awaited with clFinish on a remote device, alternating
 * runs: 64-104 us when the watcher woke at each launch and each end,
 * 50-80 us now). A kernel
 * that a thread in event_wait will complete does not wake it either: that
 * thread takes the ended kernels off the list afterwards
 * (device_collect_ended); a timed wait catches any that nobody took.
 * An event stays on the list until it has been completed inside a busy
 * section (fork.c): at a fork, every kernel not completed yet is on the
 * list. */
/* The device this thread watches: a watcher whose callback forks goes on
 * watching in the child. */
static _Thread_local cl_device_id watching;

/* How long the watcher sleeps at most while kernels are on its list. */
#define WATCHER_POLL_NS 20000000ull

/* Whether the end of ev can wait for the end of the packet after it:
 * nothing waits for ev itself (no dependent command, no callback), and
 * the next packet of its AQL queue is published with the barrier bit, so
 * that it ends after ev and its own end (or a thread waiting for it, which
 * then takes the ended kernels off the list) completes ev too. A stream of
 * kernels on an in-order queue (clFFT's five a transform) so wakes the
 * watcher once, at its end, instead of at each kernel's: on two cores that
 * both run compute units, each wake-up took one of them for 14-82 us
 * between two kernels. A dependency or callback added later, once the
 * kernel has ended, wakes the watcher itself (device_kernel_wanted); the
 * watcher's timed wait catches anything else. Only for a kernel that ran
 * END_WAIT_MIN_NS or more: the watcher keeps up with short ones without a
 * wake-up (it spins after completing kernels), and a stream of empty
 * kernels left to be completed at its end ran 340,000 a second instead of
 * 470,000-530,000. */
#define END_WAIT_MIN_NS 100000ull

static bool end_can_wait(cl_event ev, uint64_t now, uint64_t last_end) {
  if (ev->watch_device->remote) return false;
  uint64_t start = ev->u.ndrange.published_ns > last_end ? ev->u.ndrange.published_ns : last_end;
  if (now < start + END_WAIT_MIN_NS) return false;
  pthread_mutex_lock(&ev->lock);
  bool wanted = ev->dependents || ev->callbacks;
  pthread_mutex_unlock(&ev->lock);
  if (wanted) return false;
  hsa_queue_t *hq = ev->queue->hsa_queue;
  uint64_t next = ev->u.ndrange.packet_index + 1;
  if (hsa_queue_load_write_index_scacquire(hq) <= next) return false;
  const _Atomic uint16_t *header =
      (const _Atomic uint16_t *)((const char *)hq->base_address +
                                 (size_t)(next & (hq->size - 1)) * 64u);
  uint16_t h = atomic_load_explicit(header, memory_order_acquire);
  uint32_t type = (h >> HSA_PACKET_HEADER_TYPE) & 0xffu;
  return type == HSA_PACKET_TYPE_KERNEL_DISPATCH && ((h >> HSA_PACKET_HEADER_BARRIER) & 1u);
}

void device_kernel_wanted(cl_event ev) {
  if (ev->kind != COMMAND_NDRANGE) return;
  pthread_mutex_lock(&ev->lock);
  bool ended = ev->u.ndrange.submitted && hsa_signal_load_scacquire(ev->u.ndrange.signal) == 0;
  pthread_mutex_unlock(&ev->lock);
  if (!ended || atomic_load(&ev->completion_claimed)) return;
  cl_device_id d = ev->watch_device;
  if (!d) return;
  pthread_mutex_lock(&d->inflight_lock);
  pthread_cond_signal(&d->inflight_cond);
  pthread_mutex_unlock(&d->inflight_lock);
}

static void kernel_ended(hsa_signal_t signal, void *arg) {
  (void)signal;
  cl_event ev = arg;
  cl_device_id d = ev->watch_device;
  uint64_t now = now_ns();
  pthread_mutex_lock(&d->inflight_lock);
  uint64_t last_end = d->last_end_ns;
  d->last_end_ns = now;
  pthread_mutex_unlock(&d->inflight_lock);
  bool can_wait = end_can_wait(ev, now, last_end);
  pthread_mutex_lock(&d->inflight_lock);
  ev->watch_ended = true;
  atomic_fetch_add_explicit(&d->inflight_ended, 1, memory_order_release);
  /* The front of the list has ended (ev, or one whose end waited for ev's). */
  bool wake = d->inflight_head && d->inflight_head->watch_ended && atomic_load(&ev->waiters) == 0 &&
              !can_wait;
  pthread_mutex_unlock(&d->inflight_lock);
  /* After the unlock: the watcher woken does not block on the lock, and
   * a thread polling the event does not wait for the wake-up's system call. */
  if (wake) pthread_cond_signal(&d->inflight_cond);
}

/* How long the watcher, having just completed kernels, looks for the next
 * end before it sleeps: kernels launched back to back end a few
 * microseconds apart, and a watcher that slept between them would cost
 * each one a wake-up (a stream of empty kernels: 315,000-345,000 a second
 * without the spin, 350,000-365,000 with, in the same minutes). Not after
 * a wake-up that found nothing: a thread polling an event took it, and a
 * spin would only hold up its next kernel. */
#define WATCHER_SPIN_NS 4000ull

static uint64_t monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Takes the ended kernels off the front of the list (caller holds
 * inflight_lock); returns them, oldest first. */
static cl_event take_ended(cl_device_id d) {
  cl_event first = d->inflight_head, last = NULL;
  for (cl_event e = first; e && e->watch_ended; e = e->inflight_next)
    last = e;
  if (!last) return NULL;
  d->inflight_head = last->inflight_next;
  if (!d->inflight_head) d->inflight_tail = NULL;
  last->inflight_next = NULL;
  return first;
}

static void complete_taken(cl_device_id d, cl_event ev) {
  for (cl_event next; ev; ev = next) {
    next = ev->inflight_next;
    runtime_busy_begin();
    event_complete(ev, CL_COMPLETE);
    /* Only now, when no waiter can still be looking at it, is the signal reusable. */
    device_release_signal(d, ev->u.ndrange.signal);
    event_release_internal(ev);
    runtime_busy_end();
  }
}

void device_collect_ended(cl_device_id d) {
  if (!d) return; /* not on a list yet */
  d = device_root(d);
  pthread_mutex_lock(&d->inflight_lock);
  cl_event taken = take_ended(d);
  pthread_mutex_unlock(&d->inflight_lock);
  complete_taken(d, taken);
}

static void *watcher_main(void *arg) {
  cl_device_id d = arg;
  watching = d;
  /* Spin only right after completing kernels: a stream of them is on. */
  bool spin = false;
  for (;;) {
    pthread_mutex_lock(&d->inflight_lock);
    cl_event taken;
    while (!(taken = take_ended(d))) {
      if (!d->inflight_head) {
        pthread_cond_wait(&d->inflight_cond, &d->inflight_lock);
        continue;
      }
      if (spin) {
        spin = false;
        unsigned ended = atomic_load_explicit(&d->inflight_ended, memory_order_acquire);
        pthread_mutex_unlock(&d->inflight_lock);
        uint64_t until = monotonic_ns() + WATCHER_SPIN_NS;
        while (atomic_load_explicit(&d->inflight_ended, memory_order_acquire) == ended &&
               monotonic_ns() < until)
          __builtin_ia32_pause();
        pthread_mutex_lock(&d->inflight_lock);
        continue;
      }
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      uint64_t ns = (uint64_t)until.tv_nsec + WATCHER_POLL_NS;
      until.tv_sec += (time_t)(ns / 1000000000ull);
      until.tv_nsec = (long)(ns % 1000000000ull);
      pthread_cond_timedwait(&d->inflight_cond, &d->inflight_lock, &until);
    }
    pthread_mutex_unlock(&d->inflight_lock);
    complete_taken(d, taken);
    spin = true;
  }
  return NULL;
}

/* Caller holds d->inflight_lock, or is platform_init. */
static void start_watcher(cl_device_id d) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  d->watcher_running = pthread_create(&d->watcher, &attr, watcher_main, d) == 0;
  pthread_attr_destroy(&attr);
}

void device_start_watcher(cl_device_id d) {
  start_watcher(d);
}

/* The watcher holds a reference until it has completed the event. */
void device_watch(cl_device_id d, cl_event ev) {
  d = device_root(d); /* the root's watcher serves its sub-devices too */
  object_retain(&ev->header);
  ev->inflight_next = NULL;
  ev->watch_device = d;
  ev->watch_ended = false;
  pthread_mutex_lock(&d->inflight_lock);
  /* In a forked child, the first kernel starts the watcher again. */
  if (!d->watcher_running) start_watcher(d);
  if (d->inflight_tail)
    d->inflight_tail->inflight_next = ev;
  else
    d->inflight_head = ev;
  d->inflight_tail = ev;
  pthread_mutex_unlock(&d->inflight_lock);
  /* Run at once if the signal is 0 already. */
  hsa_ven_aquila_signal_on_zero(ev->u.ndrange.signal, kernel_ended, ev);
}

/* At a fork: the in-flight list and the signal pool are taken, so that no
 * thread is changing them; in the child the kernels on the list are the
 * parent's (fork.c) and the watcher starts again with the next one. */
int device_runs_kernels(cl_device_id d) {
  pthread_mutex_lock(&d->inflight_lock);
  int busy = d->inflight_head != NULL;
  pthread_mutex_unlock(&d->inflight_lock);
  return busy;
}

void device_fork(cl_device_id d, enum runtime_fork_phase phase) {
  if (phase == RUNTIME_FORK_PREPARE) {
    pthread_mutex_lock(&d->inflight_lock);
    pthread_mutex_lock(&d->signal_lock);
    return;
  }
  if (phase == RUNTIME_FORK_PARENT) {
    pthread_mutex_unlock(&d->signal_lock);
    pthread_mutex_unlock(&d->inflight_lock);
    return;
  }
  pthread_mutex_init(&d->inflight_lock, NULL);
  pthread_cond_init(&d->inflight_cond, NULL);
  pthread_mutex_init(&d->signal_lock, NULL);
  d->watcher_running = watching == d;
  cl_event ev = d->inflight_head;
  d->inflight_head = d->inflight_tail = NULL;
  for (cl_event next; ev; ev = next) {
    next = ev->inflight_next;
    fork_abandon(ev, d);
  }
}

/* CL_DEVICE_TYPE_ALL is 0xFFFFFFFF, so a value with all of its bits set
 * means ALL whatever its upper bits hold: applications pass ~0 or an int -1
 * widened to 64 bits (OpenCV does), and the major implementations take both
 * as ALL. Otherwise a bit no device type has, or no bit at all, is the
 * specification's CL_INVALID_DEVICE_TYPE. *device_type becomes the value to
 * match devices against. */
static cl_int device_type_check(cl_device_type *device_type) {
  const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_GPU |
                               CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM;
  if ((*device_type & CL_DEVICE_TYPE_ALL) == CL_DEVICE_TYPE_ALL) {
    *device_type = CL_DEVICE_TYPE_ALL;
    return CL_SUCCESS;
  }
  if (*device_type == 0 || (*device_type & ~known)) return CL_INVALID_DEVICE_TYPE;
  return CL_SUCCESS;
}

AQUILA_API cl_int clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
                                 cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices) {
  if (platform != NULL && platform != &aquila_platform) return CL_INVALID_PLATFORM;
  if (device_type_check(&device_type) != CL_SUCCESS) return CL_INVALID_DEVICE_TYPE;
  if ((num_entries == 0 && devices) || (!devices && !num_devices)) return CL_INVALID_VALUE;
  if (platform_init() != CL_SUCCESS) return CL_DEVICE_NOT_FOUND;
  cl_uint n = 0;
  if (device_type & (CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_DEFAULT)) {
    for (cl_uint i = 0; i < aquila_num_devices; i++) {
      if (devices && n < num_entries) devices[n] = &aquila_devices[i];
      n++;
      if (device_type == CL_DEVICE_TYPE_DEFAULT) break;
    }
  }
  if (num_devices) *num_devices = n;
  return n ? CL_SUCCESS : CL_DEVICE_NOT_FOUND;
}

/* The width of this CPU's SIMD registers in bytes, as the code generator
 * uses them (compiler/codegen/codegen.c picks its vector width the same way). */
static unsigned simd_bytes(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 64;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 32;
  return 16;
}

AQUILA_API cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                                  size_t param_value_size, void *param_value,
                                  size_t *param_value_size_ret) {
  if (!device_is_valid(device)) return CL_INVALID_DEVICE;
  cl_int err;
  if (device_own_info(device, param_name, param_value_size, param_value, param_value_size_ret,
                      &err))
    return err;
  /* Everything else a sub-device answers as its root device does. */
  cl_device_id d = device_root(device);
  if (features_device_info(d, param_name, param_value_size, param_value, param_value_size_ret,
                           &err))
    return err;
  switch (param_name) {
  case CL_DEVICE_TYPE:
    INFO_VALUE(cl_device_type, CL_DEVICE_TYPE_CPU);
  case CL_DEVICE_VENDOR_ID:
    INFO_VALUE(cl_uint, 0x10000 /* no PCI vendor: Khronos vendor id range */);
  case CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS:
    INFO_VALUE(cl_uint, 3);
  case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
    size_t sizes[3] = {d->max_work_group_size, d->max_work_group_size, d->max_work_group_size};
    return info_copy(sizes, sizeof sizes, param_value_size, param_value, param_value_size_ret);
  }
  case CL_DEVICE_MAX_WORK_GROUP_SIZE:
    INFO_VALUE(size_t, d->max_work_group_size);
  /* One SIMD register's worth: applications that run one work-item per
   * group (hashcat) get their SIMD from vector types of this width. */
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR:
    INFO_VALUE(cl_uint, 16); /* OpenCL C's widest vector */
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT:
    INFO_VALUE(cl_uint, simd_bytes() / 2 > 16 ? 16 : simd_bytes() / 2);
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_INT:
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT:
    INFO_VALUE(cl_uint, simd_bytes() / 4);
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG:
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
    INFO_VALUE(cl_uint, simd_bytes() / 8);
  case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
  case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF:
    INFO_VALUE(cl_uint, 0);
  case CL_DEVICE_MAX_CLOCK_FREQUENCY: {
    uint32_t mhz = 0;
    hsa_agent_get_info(d->agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY, &mhz);
    INFO_VALUE(cl_uint, mhz);
  }
  case CL_DEVICE_ADDRESS_BITS:
    INFO_VALUE(cl_uint, 64);
  case CL_DEVICE_MAX_READ_IMAGE_ARGS:
  case CL_DEVICE_MAX_WRITE_IMAGE_ARGS:
  case CL_DEVICE_MAX_SAMPLERS: {
    /* From the agent's image extension (image.c). */
    struct image_limits l;
    device_image_limits(d, &l);
    INFO_VALUE(cl_uint, param_name == CL_DEVICE_MAX_READ_IMAGE_ARGS    ? l.read_args
                        : param_name == CL_DEVICE_MAX_WRITE_IMAGE_ARGS ? l.write_args
                                                                       : l.samplers);
  }
  case CL_DEVICE_MAX_MEM_ALLOC_SIZE: {
    uint64_t v = d->global_mem_size / 4;
    if (v < 128ull * 1024 * 1024) v = 128ull * 1024 * 1024;
    INFO_VALUE(cl_ulong, v);
  }
  case CL_DEVICE_IMAGE2D_MAX_WIDTH:
  case CL_DEVICE_IMAGE2D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_WIDTH:
  case CL_DEVICE_IMAGE3D_MAX_HEIGHT:
  case CL_DEVICE_IMAGE3D_MAX_DEPTH:
  case CL_DEVICE_IMAGE_MAX_BUFFER_SIZE:
  case CL_DEVICE_IMAGE_MAX_ARRAY_SIZE: {
    struct image_limits l;
    device_image_limits(d, &l);
    size_t v = param_name == CL_DEVICE_IMAGE2D_MAX_WIDTH    ? l.width_2d
               : param_name == CL_DEVICE_IMAGE2D_MAX_HEIGHT ? l.height_2d
               : param_name == CL_DEVICE_IMAGE3D_MAX_WIDTH  ? l.width_3d
               : param_name == CL_DEVICE_IMAGE3D_MAX_HEIGHT ? l.height_3d
               : param_name == CL_DEVICE_IMAGE3D_MAX_DEPTH  ? l.depth_3d
               : param_name == CL_DEVICE_IMAGE_MAX_BUFFER_SIZE ? l.buffer_size
                                                               : l.array_size;
    INFO_VALUE(size_t, v);
  }
  case CL_DEVICE_IMAGE_SUPPORT:
    INFO_VALUE(cl_bool, CL_TRUE);
  case CL_DEVICE_MAX_PARAMETER_SIZE:
    INFO_VALUE(size_t, 1024);
  case CL_DEVICE_MEM_BASE_ADDR_ALIGN:
    INFO_VALUE(cl_uint, 1024);
  case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE:
    INFO_VALUE(cl_uint, 128);
  case CL_DEVICE_SINGLE_FP_CONFIG:
    INFO_VALUE(cl_device_fp_config, CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                                        CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA);
  case CL_DEVICE_DOUBLE_FP_CONFIG:
    INFO_VALUE(cl_device_fp_config, CL_FP_DENORM | CL_FP_INF_NAN | CL_FP_ROUND_TO_NEAREST |
                                        CL_FP_ROUND_TO_ZERO | CL_FP_ROUND_TO_INF | CL_FP_FMA);
  case CL_DEVICE_GLOBAL_MEM_CACHE_TYPE:
    INFO_VALUE(cl_device_mem_cache_type, CL_READ_WRITE_CACHE);
  case CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE:
    INFO_VALUE(cl_uint, 64);
  case CL_DEVICE_GLOBAL_MEM_CACHE_SIZE: {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    INFO_VALUE(cl_ulong, l2 > 0 ? (cl_ulong)l2 : 256 * 1024);
  }
  case CL_DEVICE_GLOBAL_MEM_SIZE:
    INFO_VALUE(cl_ulong, d->global_mem_size);
  case CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE:
    INFO_VALUE(cl_ulong, 1024 * 1024);
  case CL_DEVICE_MAX_CONSTANT_ARGS:
    INFO_VALUE(cl_uint, 16);
  case CL_DEVICE_LOCAL_MEM_TYPE:
    INFO_VALUE(cl_device_local_mem_type, CL_GLOBAL);
  case CL_DEVICE_LOCAL_MEM_SIZE:
    INFO_VALUE(cl_ulong, d->local_mem_size);
  case CL_DEVICE_ERROR_CORRECTION_SUPPORT:
    INFO_VALUE(cl_bool, CL_FALSE);
  case CL_DEVICE_HOST_UNIFIED_MEMORY:
    INFO_VALUE(cl_bool, device_root(d)->remote ? CL_FALSE : CL_TRUE);
  case CL_DEVICE_PROFILING_TIMER_RESOLUTION:
    INFO_VALUE(size_t, 1);
  case CL_DEVICE_ENDIAN_LITTLE:
    INFO_VALUE(cl_bool, CL_TRUE);
  case CL_DEVICE_AVAILABLE: {
    /* A remote device whose daemon was lost is not available. */
    bool available = true;
    hsa_agent_get_info(device_root(d)->agent, HSA_VEN_AQUILA_AGENT_INFO_AVAILABLE, &available);
    INFO_VALUE(cl_bool, available ? CL_TRUE : CL_FALSE);
  }
  case CL_DEVICE_COMPILER_AVAILABLE:
    INFO_VALUE(cl_bool, CL_TRUE);
  case CL_DEVICE_LINKER_AVAILABLE:
    INFO_VALUE(cl_bool, CL_TRUE);
  case CL_DEVICE_EXECUTION_CAPABILITIES:
    /* Native kernels are host functions: not for another machine. */
    INFO_VALUE(cl_device_exec_capabilities,
               device_root(d)->remote ? CL_EXEC_KERNEL : CL_EXEC_KERNEL | CL_EXEC_NATIVE_KERNEL);
  case CL_DEVICE_QUEUE_PROPERTIES:
    INFO_VALUE(cl_command_queue_properties,
               CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE);
  case CL_DEVICE_PLATFORM:
    INFO_VALUE(cl_platform_id, d->platform);
  case CL_DEVICE_NAME:
    INFO_STRING(d->name);
  case CL_DEVICE_VENDOR:
    INFO_STRING("Aquila");
  case CL_DRIVER_VERSION: {
    /* The compiler's build id in it: applications that cache program
     * binaries keyed by the driver version (OpenCV, hashcat) rebuild them
     * when Aquila generates different code, instead of reusing old code. */
    char version[64];
    snprintf(version, sizeof version, "%s+%s", AQUILA_VERSION, aquila_compiler_build_id());
    INFO_STRING(version);
  }
  case CL_DEVICE_PROFILE:
    INFO_STRING("FULL_PROFILE");
  case CL_DEVICE_VERSION:
    INFO_STRING("OpenCL 3.0 Aquila " AQUILA_VERSION);
  case CL_DEVICE_OPENCL_C_VERSION:
    /* The newest version whose every optional feature this compiler has:
     * OpenCL C 3.0 is in CL_DEVICE_OPENCL_C_ALL_VERSIONS (features.c). */
    INFO_STRING("OpenCL C 1.2 ");
  case CL_DEVICE_EXTENSIONS:
    INFO_STRING(features_device_extensions(d));
  case CL_DEVICE_BUILT_IN_KERNELS:
    INFO_STRING("");
  case CL_DEVICE_PRINTF_BUFFER_SIZE:
    INFO_VALUE(size_t, 1024 * 1024);
  case CL_DEVICE_PREFERRED_INTEROP_USER_SYNC:
    INFO_VALUE(cl_bool, CL_TRUE);
  default:
    return CL_INVALID_VALUE;
  }
}
