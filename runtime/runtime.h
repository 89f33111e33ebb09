/* The OpenCL objects and the scheduler's internal interface.
 *
 * Every OpenCL object starts with struct object_header: the ICD dispatch
 * table pointer first (cl_khr_icd requires it), then a kind tag that lets
 * each entry point reject NULL, foreign or wrong-kind handles with the
 * specification's CL_INVALID_* code, then the reference count. */
#ifndef AQUILA_RUNTIME_H
#define AQUILA_RUNTIME_H

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <CL/cl_icd.h>
#include <hsa/hsa.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "aquila/fatbin.h"

#define AQUILA_API __attribute__((visibility("default")))

enum object_kind {
  OBJECT_PLATFORM = 0x41515001,
  OBJECT_DEVICE,
  OBJECT_CONTEXT,
  OBJECT_QUEUE,
  OBJECT_MEM,
  OBJECT_PROGRAM,
  OBJECT_KERNEL,
  OBJECT_EVENT,
  OBJECT_SAMPLER,
};

struct object_header {
  const cl_icd_dispatch *dispatch;
  uint32_t kind;
  atomic_uint refcount;
};

extern cl_icd_dispatch aquila_dispatch;

void object_init(struct object_header *h, enum object_kind kind);
/* Whether p is a live Aquila object of that kind (NULL and foreign handles are not). */
int object_is(const void *p, enum object_kind kind);
void object_retain(struct object_header *h);
/* Returns 1 when this was the last reference. */
int object_release(struct object_header *h);
/* Frees an object whose last reference object_release dropped: after a
 * quarantine, so that a stale handle still fails object_is (object.c). */
void object_free(void *object);

/* Whether a command's times are taken: its queue profiles, or AQUILA_TRACE
 * records a timeline (aquila/trace.h). */
int queue_takes_times(cl_command_queue q);

/* Debug messages, enabled by AQUILA_DEBUG=1. */
void debug_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int debug_enabled(void);

/* clGet*Info size protocol: copies value unless param_value is NULL; errors
 * with CL_INVALID_VALUE when the caller's buffer is too small. */
cl_int info_copy(const void *value, size_t size, size_t param_value_size, void *param_value,
                 size_t *param_value_size_ret);
#define INFO_VALUE(type, v)                                                                        \
  do {                                                                                             \
    type info_v_ = (v);                                                                            \
    return info_copy(&info_v_, sizeof info_v_, param_value_size, param_value,                      \
                     param_value_size_ret);                                                        \
  } while (0)
#define INFO_STRING(s)                                                                             \
  do {                                                                                             \
    const char *info_s_ = (s);                                                                     \
    return info_copy(info_s_, strlen(info_s_) + 1, param_value_size, param_value,                  \
                     param_value_size_ret);                                                        \
  } while (0)

uint64_t now_ns(void);

/* A copy of a 0-terminated property list of `entries` entries (the 0 not
 * counted) of entry_size bytes, kept for a CL_*_PROPERTIES query: *copy is
 * NULL and *bytes 0 for a NULL list. -1 on no memory. */
int property_list_copy(const void *list, size_t entries, size_t entry_size, void **copy,
                       size_t *bytes);

/* ---- what the platform and devices support (features.c) ---------------- */

const char *features_platform_extensions(void);
const char *features_device_extensions(cl_device_id d);
/* The cl_intel_unified_shared_memory queries (usm.c); 0 for the others. */
int usm_device_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                    void *param_value, size_t *param_value_size_ret, cl_int *err);
/* The 3.0 queries and those of optional features: 1 and *err set when
 * param_name is one of them. */
int features_platform_info(cl_platform_info param_name, size_t param_value_size, void *param_value,
                           size_t *param_value_size_ret, cl_int *err);
int features_device_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                         void *param_value, size_t *param_value_size_ret, cl_int *err);

/* ---- platform and devices ---------------------------------------------- */

struct _cl_platform_id {
  struct object_header header;
};

struct _cl_device_id {
  struct object_header header;
  cl_platform_id platform;
  hsa_agent_t agent;
  hsa_region_t kernarg_region;
  uint32_t compute_units;
  uint32_t max_work_group_size;
  uint64_t global_mem_size;
  uint64_t local_mem_size;
  char name[128];
  /* The completion watcher: notices finished kernel dispatches. Started
   * with the platform, and again by the first kernel of a forked child. */
  pthread_t watcher;
  int watcher_running; /* under inflight_lock */
  pthread_mutex_t inflight_lock;
  pthread_cond_t inflight_cond;
  struct _cl_event *inflight_head, *inflight_tail;
  atomic_uint inflight_ended; /* ends of watched kernels so far */
  uint64_t last_end_ns;       /* the latest of them (now_ns), under inflight_lock */
  /* Completion signals for reuse. */
  pthread_mutex_t signal_lock;
  hsa_signal_t *free_signals;
  size_t num_free_signals, cap_free_signals;
  /* Sub-devices (runtime/subdevice.c): parent is NULL for a root device. A
   * sub-device copies its root's description and shares the root's agent,
   * code target, watcher and signal pool; it runs on the agent's compute
   * units set in unit_mask (bit i: unit i), through its queues' CU masks. */
  cl_device_id parent, root;
  uint32_t unit_mask[32];
  cl_device_partition_property *partition_type; /* CL_DEVICE_PARTITION_TYPE, 0-terminated */
  size_t partition_type_len;                    /* with the 0; 0 for a root device */
  /* A remote agent's device (docs/REMOTE.md): its memory is not the
   * host's; buffers move to it and back (residency.c). remote_index is
   * the agent's place among the remote agents. */
  int remote;
  uint32_t remote_index;
  char code_target[128]; /* the fat binary target of its code */
  /* The AQL queue its chunks of spread NDRanges go to (spread.c). */
  pthread_mutex_t spread_lock;
  hsa_queue_t *spread_queue;
};

/* The platform's devices; returns 0 and CL_SUCCESS once HSA is up. */
cl_int platform_init(void);
extern struct _cl_platform_id aquila_platform;
extern struct _cl_device_id *aquila_devices;
extern cl_uint aquila_num_devices;
/* This machine's CPU agent, a device or not (AQUILA_LOCAL_DEVICE=0): the
 * HSA image extension works on host memory through it. */
extern hsa_agent_t aquila_host_agent;
int device_is_valid(cl_device_id d);
/* The fat binary target name of the device's code (the host CPU's). Asked
 * of the compiler on first use, not at start-up, since naming it may start
 * the compiler process. */
const char *device_code_target(cl_device_id d);
/* The root device whose watcher, signals and agent d uses. */
static inline cl_device_id device_root(cl_device_id d) {
  return d->parent ? d->root : d;
}
/* Answers the queries a sub-device answers itself (partitions, reference
 * count, compute units); returns 0 for the others. */
int device_own_info(cl_device_id d, cl_device_info param_name, size_t param_value_size,
                    void *param_value, size_t *param_value_size_ret, cl_int *err);
/* References held by contexts on their sub-devices (root devices are not counted). */
void device_retain_internal(cl_device_id d);
void device_release_internal(cl_device_id d);

hsa_signal_t device_acquire_signal(cl_device_id d);
void device_release_signal(cl_device_id d, hsa_signal_t s);

/* ---- contexts ------------------------------------------------------------ */

struct _cl_context {
  struct object_header header;
  int has_remote; /* a device is remote: buffers track where they are valid */
  cl_uint num_devices;
  cl_device_id *devices;
  cl_context_properties *properties; /* copy, 0-terminated, NULL if none given */
  size_t num_properties;
  void(CL_CALLBACK *notify)(const char *, const void *, size_t, void *);
  void *notify_data;
  struct context_destructor *destructors; /* clSetContextDestructorCallback's, newest first */
  /* SVM and USM allocations (svm.c), sorted by address, under svm_lock. */
  pthread_mutex_t svm_lock;
  struct svm_block *svm_blocks;
  size_t svm_count, svm_capacity;
  /* The context's command queues (queue.c), for clMemBlockingFreeINTEL. */
  pthread_mutex_t queues_lock;
  struct _cl_command_queue *queues;
};

int context_has_device(cl_context c, cl_device_id d);

/* ---- svm.c and usm.c: shared virtual memory ------------------------------ */

/* One allocation of clSVMAlloc or of a clMemAllocINTEL call: the bytes
 * [ptr, ptr + size) inside storage (mem_storage_alloc's). */
struct svm_block {
  char *ptr;
  size_t size;
  void *storage;
  size_t storage_size;
  cl_svm_mem_flags svm_flags; /* clSVMAlloc's */
  cl_uint usm_type;           /* CL_MEM_TYPE_*_INTEL; 0 for clSVMAlloc's */
  cl_device_id usm_device;    /* the device of a device or shared USM allocation */
  cl_bitfield usm_flags;      /* CL_MEM_ALLOC_FLAGS_INTEL */
};

/* What SVM the device has: every kind on the CPU agent, none on a remote one. */
cl_device_svm_capabilities device_svm_capabilities(cl_device_id d);
/* Registers a new block of c (alignment a power of two); NULL if no memory. */
void *svm_block_allocate(cl_context c, size_t size, size_t alignment, const struct svm_block *kind);
/* Frees the block that starts at p; 0 if no block does. */
int svm_block_free(cl_context c, void *p);
/* Whether a block of c holds p; *out (if not NULL) gets a copy of it. */
int svm_block_find(cl_context c, const void *p, struct svm_block *out);
void svm_context_release(cl_context c);
/* Commands on host pointers, their arguments checked. */
cl_int svm_enqueue_copy(cl_command_queue q, cl_command_type type, cl_bool blocking, void *dst,
                        const void *src, size_t size, cl_uint num_wait, const cl_event *wait_list,
                        cl_event *event);
cl_int svm_enqueue_fill(cl_command_queue q, cl_command_type type, void *dst, const void *pattern,
                        size_t pattern_size, size_t size, cl_uint num_wait,
                        const cl_event *wait_list, cl_event *event);
/* A command that moves nothing (map, unmap, migrate, advice on the CPU
 * agent): ordered like any other and, if blocking, waited for. */
cl_int svm_enqueue_ordering(cl_command_queue q, cl_command_type type, cl_bool blocking,
                            cl_uint num_wait, const cl_event *wait_list, cl_event *event);
int svm_fill_arguments_valid(const void *ptr, const void *pattern, size_t pattern_size,
                             size_t size);

/* ---- command queues ------------------------------------------------------ */

struct _cl_command_queue {
  struct object_header header;
  cl_context context;
  cl_device_id device;
  struct _cl_command_queue *context_next; /* the context's list of queues */
  cl_command_queue_properties properties;
  /* clCreateCommandQueueWithProperties' list, 0-terminated, for
   * CL_QUEUE_PROPERTIES_ARRAY; NULL for clCreateCommandQueue's queues. */
  cl_queue_properties *properties_array;
  size_t properties_array_size; /* in bytes, the 0 included */
  hsa_queue_t *hsa_queue;
  pthread_mutex_t lock;
  pthread_cond_t idle_cond;
  struct _cl_event *last;             /* most recent command (in-order dependency) */
  struct _cl_event *barrier;          /* latest barrier of an out-of-order queue */
  struct _cl_event *outstanding_head; /* every command not yet complete */
  size_t outstanding;                 /* commands enqueued and not yet complete */
  /* Complete commands whose buffers are not released or callbacks not run
   * yet (event.c's second phase); clFinish waits for them too. */
  size_t callbacks_pending;
  /* Complete commands whose buffers and kernel are not released yet, and
   * the sequence numbers commands get at submission: a blocking call on an
   * in-order queue returns once the commands before it let go too. */
  struct _cl_event *unreleased_head;
  uint64_t next_seq;
  uint32_t release_waiters;
  uint32_t trace_track; /* AQUILA_TRACE's row for its commands, or 0 */
};

/* ---- memory objects ------------------------------------------------------ */

struct mem_destructor {
  void(CL_CALLBACK *fn)(cl_mem, void *);
  void *data;
  struct mem_destructor *next;
};

struct _cl_mem {
  struct object_header header;
  cl_context context;
  cl_mem_object_type type;
  cl_mem_flags flags;
  size_t size;
  void *host_ptr; /* as given with CL_MEM_USE_HOST_PTR */
  int uses_svm;   /* host_ptr is in an SVM allocation (svm.c) */
  /* Made by clCreate{Buffer,Image}WithProperties with a list (which can
   * only be empty: core OpenCL defines no memory property): CL_MEM_PROPERTIES
   * then returns that list, {0}. */
  int has_properties;
  char *data;     /* the storage kernels see */
  int owns_data;
  size_t storage_size; /* the mapping behind data when owns_data (mem_storage_alloc) */
  /* A root's storage of 2 MiB or more that nothing has touched since it
   * was mapped: its pages are placed when the host writes it first
   * (mem_place_for_host). */
  atomic_int pages_untouched;
  cl_mem parent; /* sub-buffers */
  size_t offset;
  atomic_uint map_count;
  pthread_mutex_t lock;
  struct mem_destructor *destructors;
  /* Images (type CL_MEM_OBJECT_IMAGE*; image.c): an HSA image in the linear
   * layout over data. A 1D buffer image uses its buffer's storage (parent). */
  uint64_t image_handle; /* hsa_ext_image_t; 0 for buffers */
  /* The image's handles on remote devices, over its copy there (made at
   * its first kernel there), or NULL. */
  struct image_remote *remote_images;
  cl_image_format image_format;
  cl_image_desc image_desc; /* width/height/depth/array_size of its geometry only */
  size_t element_size, row_pitch, slice_pitch; /* the storage's layout */
  /* Where a root buffer's bytes are valid, in a context with a remote
   * device (residency.c); NULL otherwise. */
  struct mem_residency *residency;
};

/* ---- residency.c: buffers across agents -------------------------------------
 * In a context with a remote device a buffer lives where it was last
 * written: the host storage (data) and each remote device's copy are
 * valid or not, and bytes move only when a command needs them elsewhere.
 * Sub-buffers share their root buffer's state. Every call is a no-op for
 * memory objects of contexts without a remote device. */
#define AQ_MAX_REMOTE_DEVICES 32
/* Starts tracking a new root buffer (valid on the host). */
cl_int mem_residency_init(cl_mem m);
/* Frees the buffer's copies on remote devices. */
void mem_residency_free(cl_mem m);
/* Makes the host storage hold the buffer's current bytes. */
cl_int mem_make_host_valid(cl_mem m);
/* The host storage was written: other copies are stale. */
void mem_host_wrote(cl_mem m);
/* The buffer's address on remote device d (allocated on first use). */
cl_int mem_device_address(cl_mem m, cl_device_id d, uint64_t *address);
/* Before a kernel on device d that reads (and writes, when writes) m;
 * writes == 2: a kernel that overwrites every byte of root buffer m
 * without reading it (its old bytes are not moved). */
cl_int mem_prepare_for_device(cl_mem m, cl_device_id d, int writes);
/* clEnqueueReadBuffer's bytes straight from a remote copy when the host's
 * is stale: 1 when done, 0 when the host storage holds them, or an error. */
cl_int mem_read_direct(cl_mem m, size_t offset, size_t size, void *dst);
/* clEnqueueWriteBuffer through remote device d's queue: straight into d's
 * copy, which alone is valid after; 1 when done, 0 for the host path. */
cl_int mem_write_direct(cl_mem m, cl_device_id d, size_t offset, size_t size, const void *src);
/* clEnqueueFillBuffer and clEnqueueCopyBuffer through remote device d's
 * queue, done there; 1 when done, 0 for the host path. */
cl_int mem_fill_direct(cl_mem m, cl_device_id d, size_t offset, size_t size, const void *pattern,
                       size_t pattern_size);
cl_int mem_copy_direct(cl_mem dst, size_t dst_offset, cl_mem src, size_t src_offset, size_t size,
                       cl_device_id d);

/* ---- programs and kernels ------------------------------------------------ */

/* One HSA executable loaded on a device, and the reader of its code. */
struct loaded_code {
  hsa_executable_t executable;
  hsa_code_object_reader_t reader;
  /* Code made on demand: its code object's bytes, which
   * CL_PROGRAM_BINARIES carries (NULL for a program's whole code, which
   * its fat binary holds). */
  void *image;
  size_t image_size;
};

/* A kernel's version for launches of one work-group size (specialize.c).
 * local_size is written before state leaves SPECIALIZED_FREE, object
 * before state becomes SPECIALIZED_READY. */
enum specialized_state {
  SPECIALIZED_FREE,   /* no size yet */
  SPECIALIZED_QUEUED, /* asked for: its build is queued or under way (tiers.c) */
  SPECIALIZED_READY,  /* object runs launches of that size */
  SPECIALIZED_FAILED, /* no such version: launches of that size keep the usual code */
};
#define SPECIALIZED_PER_KERNEL 4
struct specialized_version {
  uint32_t local_size[3];
  _Atomic uint32_t state;
  atomic_uint reported; /* AQUILA_DEBUG: its first launch was told */
  _Atomic uint64_t object;
};

struct program_device {
  cl_build_status status;
  char *log;
  int loaded; /* built for the device: whole is loaded, or code comes on demand */
  /* A code object holding every kernel (from a binary, the kernel cache or
   * AQUILA_CODEGEN=eager); without one, machine code is made kernel by
   * kernel at their first launches (program_make_kernel_code),
   * each batch its own executable. */
  int has_whole;
  struct loaded_code whole;
  struct loaded_code *on_demand;
  uint32_t num_on_demand;
  int32_t *kernel_code; /* per kernel of fatbin: its index in on_demand, -1 before */
  /* Per kernel of fatbin: 0 for code made whole, 1 for quick-tier code
   * whose vector version is still to come (runtime/tiers.c), then that
   * version's kernel object. Kernels created with quick-tier code point at
   * their entry (struct _cl_kernel's upgrades); it lives as long as the
   * program. */
  _Atomic uint64_t *upgraded;
  /* Per kernel of fatbin, SPECIALIZED_PER_KERNEL versions for work-group
   * sizes its launches use (specialize.c); NULL without bitcode to build
   * them from. Their code is loaded in on_demand. */
  struct specialized_version *specialized;
  cl_program_binary_type binary_type;
};

struct _cl_program {
  struct object_header header;
  cl_context context;
  int created_from_source; /* clCreateProgramWithSource or WithIL, not a binary */
  char *source;            /* NULL for a program made from IL */
  /* clCreateProgramWithIL's SPIR-V module, and the specialization
   * constants set on it (values zero-extended), newest value per id. */
  void *il;
  size_t il_size;
  size_t num_spec_constants;
  uint32_t *spec_constant_ids;
  uint64_t *spec_constant_values;
  char *options;
  struct aquila_fatbin *fatbin;
  cl_uint num_devices;
  cl_device_id *devices;
  struct program_device *per_device;
  pthread_mutex_t lock;
  /* Held while machine code is made on demand and while anything reads the
   * layout it fills into fatbin's kernels (CL_PROGRAM_BINARIES). */
  pthread_mutex_t codegen_lock;
  atomic_uint num_kernels_attached; /* kernels the application holds */
  atomic_uint num_kernels_alive;    /* those, and kernels only enqueued commands hold */
  int building;
  /* Executables replaced by a new build while enqueued commands still ran
   * their code; destroyed with the program, which those kernels hold. */
  struct program_device *retired;
  cl_uint num_retired;
  /* Per kernel of fatbin: whether clGetKernelArgInfo answers its names and
   * types (source compiled with -cl-kernel-arg-info); NULL: none does. */
  unsigned char *kernel_arg_info;
  /* The image CL_PROGRAM_BINARY_SIZES measured last, which
   * CL_PROGRAM_BINARIES returns: code made between the two queries must
   * not change the size the application allocated. Under codegen_lock. */
  void *binary;
  size_t binary_size;
};

/* Makes machine code for the kernels (indices into p->fatbin->kernels) on
 * program device slot i, if it builds code on demand and lacks it, before
 * they are launched there. CL_SUCCESS, or an error with the reason in the
 * device's build log. */
cl_int program_make_kernel_code(cl_program p, cl_uint i, const uint32_t *kernels,
                                uint32_t num_kernels);
/* The executable holding kernel k's code on device slot i (loaded). */
hsa_executable_t program_kernel_executable(cl_program p, cl_uint i, uint32_t k);
/* The build of the whole (vector) version of kernels whose code on a
 * device came from the quick tier, in three steps (runtime/tiers.c runs
 * them): prepare copies what it needs of p (under its codegen lock; NULL
 * when the program no longer needs it or on no memory), run builds in a
 * compiler process without touching p (of low priority unless urgent),
 * install loads the result into p and puts it in place for the kernels'
 * next launches and for the ranges of work-groups that running launches of
 * the quick code have not started. */
struct upgrade_build;
struct upgrade_build *program_upgrade_prepare(cl_program p, cl_uint i, const uint32_t *kernels,
                                              uint32_t num_kernels);
void upgrade_build_run(struct upgrade_build *b, int urgent);
void program_upgrade_install(cl_program p, cl_uint i, struct upgrade_build *b);
void upgrade_build_free(struct upgrade_build *b);
/* The same steps for kernel k's version specialized to work-groups of
 * local_size (v, its entry in p's table on device slot i). */
struct upgrade_build *program_specialize_prepare(cl_program p, cl_uint i, uint32_t k,
                                                 const uint32_t local_size[3]);
void program_specialize_install(cl_program p, cl_uint i, struct upgrade_build *b,
                                struct specialized_version *v);
/* Kernel k's version for work-groups of local_size from the kernel cache,
 * if it holds one: installed as v's object (1), else 0 with v untouched,
 * or failed where the cached code could not be used. */
int program_specialize_from_cache(cl_program p, cl_uint i, uint32_t k,
                                  const uint32_t local_size[3], struct specialized_version *v);

/* ---- specialized versions (specialize.c) ---- */
/* A table of specialized versions for fb's kernels, or NULL (none wanted:
 * AQUILA_SPECIALIZE=0, no bitcode, no memory). */
struct specialized_version *specialize_table_create(const struct aquila_fatbin *fb);
/* The kernel object a launch of k on device slot with work-groups of
 * local runs: its version for that size once built, else generic (and the
 * launch counts towards that version's build). */
uint64_t specialize_kernel_object(cl_kernel k, cl_uint slot, const size_t local[3],
                                  uint64_t generic);

/* ---- tiers (tiers.c) ---- */
/* Queues the upgrade of quick-tier kernels of p on device slot i for the
 * background worker. It holds no reference to p: p's unload drops it. */
void tiers_queue_upgrade(cl_program p, cl_uint i, const uint32_t *kernels, uint32_t num_kernels);
/* Queues the build of kernel k's specialized version v of p on device
 * slot i, as a launched upgrade: it goes ahead when the devices idle, a
 * while after it was asked for, or at once when they stay busy. */
void tiers_queue_specialization(cl_program p, cl_uint i, uint32_t k, struct specialized_version *v);
/* Drops p's queued upgrades, and one under way (waiting while it reads or
 * writes p): before a rebuild replaces p's code, and before p goes. */
void tiers_forget_program(cl_program p);
/* A launch of quick-tier code was enqueued (kernel_object_now) for the
 * kernel whose upgraded entry is entry: its build waits for idle devices
 * no longer than a while after its first launch, and goes ahead at once,
 * at normal priority, when the devices stay busy long after a launch. */
void tiers_quick_code_launched(const _Atomic uint64_t *entry);
/* Whether kernels run (or wait to) on d now (device.c). */
int device_runs_kernels(cl_device_id d);

/* The kernel object a launch of k on program device slot uses now: its
 * whole version once that replaced quick-tier code, else what k was
 * created with. */
uint64_t kernel_object_now(cl_kernel k, cl_uint slot);
/* Kernel k's code on program device slot, made at its first launch (or
 * the first query that needs it), not when the kernel is created: most
 * kernels an application creates, it never launches. CL_SUCCESS, or
 * CL_INVALID_PROGRAM_EXECUTABLE (no code for that device), or
 * CL_OUT_OF_HOST_MEMORY. Thread-safe; cheap once the code is there. */
cl_int kernel_code_ready(cl_kernel k, cl_uint slot);

struct kernel_arg {
  int set;
  size_t local_size; /* __local arguments */
  cl_mem mem;        /* buffer arguments (not retained, as the specification says) */
  int pointer;       /* set by clSetKernelArgSVMPointer: arg_values holds the address */
};

struct _cl_kernel {
  struct object_header header;
  cl_program program;
  const struct aquila_fatbin_kernel *meta;
  /* Per program device, valid once its code_ready is set
   * (kernel_code_ready): the kernel object, and its descriptor's flags
   * (sub-group width). */
  uint64_t *kernel_objects;
  uint32_t *code_flags;
  atomic_int *code_ready;
  pthread_mutex_t code_lock; /* making and finding the code */
  /* Per program device: where the whole version's kernel object appears
   * when this kernel's code came from the quick tier (NULL: no such
   * place); see kernel_object_now. */
  _Atomic uint64_t **upgrades;
  atomic_uint tier_reported; /* AQUILA_DEBUG: 1 quick code ran, 2 the whole version ran */
  /* Stack bytes a work-group takes (the largest over the devices):
   * CL_KERNEL_PRIVATE_MEM_SIZE, and a launch over the CPU agent's limit is
   * refused. */
  _Atomic uint32_t private_size;
  unsigned char *arg_values; /* explicit kernarg image (values; buffers patched at enqueue) */
  struct kernel_arg *args;
  /* Guards arg_values and args: clSetKernelArg against an enqueue's
   * snapshot. The specification makes clSetKernelArg on one kernel from
   * two threads the application's race; the lock keeps that race (and a
   * set beside another thread's enqueue) from tearing a buffer's address. */
  pthread_mutex_t args_lock;
  /* The application's references; the header counts these and those of
   * enqueued commands. */
  atomic_uint app_refs;
  int arg_info; /* the program's kernel_arg_info for this kernel */
};

/* ---- events and commands ------------------------------------------------- */

enum command_kind {
  COMMAND_NONE, /* markers, barriers, user events */
  COMMAND_NDRANGE,
  COMMAND_READ,      /* memcpy region */
  COMMAND_COPY_RECT, /* generic rectangular copy (read/write/copy rect) */
  COMMAND_FILL,
  COMMAND_NATIVE,
  COMMAND_MAP,
  COMMAND_UNMAP,
  COMMAND_IMAGE, /* read/write/copy/fill image through the HSA image extension */
};

struct event_callback {
  cl_int status;
  void(CL_CALLBACK *fn)(cl_event, cl_int, void *);
  void *data;
  struct event_callback *next;
};

struct dependent {
  struct _cl_event *event;
  struct dependent *next;
};

struct _cl_event {
  struct object_header header;
  cl_context context;
  cl_command_queue queue; /* NULL for user events */
  cl_command_type type;
  atomic_int status;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  /* The second phase of its completion has run (event.c): the command's
   * buffers and kernel are released, its callbacks called. Under lock. */
  int finished;
  struct event_callback *callbacks;
  struct dependent *dependents;
  atomic_int pending;    /* unfinished dependencies + 1 while being submitted */
  int failed_dependency; /* a dependency ended in error */
  /* Profiling times, kept when the queue profiles or AQUILA_TRACE is set;
   * t_ready (its dependencies complete) only for the trace. */
  uint64_t t_queued, t_ready, t_submit, t_start, t_end;
  /* The command. */
  enum command_kind kind;
  cl_mem *retained_mems;
  size_t num_retained_mems;
  /* Per retained memory object: whether the command writes it (residency.c). */
  unsigned char *mem_writes;
  cl_kernel kernel; /* retained for NDRange */
  union {
    struct {
      void *kernarg;
      hsa_signal_t signal;
      uint64_t packet_index;
      uint64_t kernel_object; /* the device's HSA kernel object */
      int submitted;          /* packet written to the queue */
      uint64_t published_ns;  /* when (now_ns), for the watcher (device.c) */
      int barrier_bit;        /* ordered by the AQL barrier bit, not by the runtime */
      uint32_t dims;
      uint32_t group_segment_size;
      uint32_t workgroup[3];
      uint64_t grid[3];
      struct ndrange_check *check; /* AQUILA_VECTORIZE=check (vector_check.c), or NULL */
      /* Spread over the context's devices (spread.c): never behind a
       * barrier bit, its dependencies complete first. */
      int spread;
      /* Per retained memory object: where its address is in kernarg
       * (UINT32_MAX: not a buffer argument). */
      uint32_t *mem_arg_offset;
    } ndrange;
    struct {
      char *dst;
      const char *src;
      size_t region[3];
      size_t dst_row, dst_slice, src_row, src_slice;
    } copy;
    struct {
      char *dst;
      size_t size;
      unsigned char pattern[128];
      size_t pattern_size;
    } fill;
    struct {
      void(CL_CALLBACK *fn)(void *);
      void *args;
    } native;
    struct {
      cl_mem image, other; /* other: the destination of a copy */
      void *host;          /* read/write */
      size_t row_pitch, slice_pitch;
      size_t origin[3], other_origin[3], region[3];
      unsigned char color[16]; /* fill */
    } image;
  } u;
  atomic_int completion_claimed;
  /* The device watcher's list (device.c): the next kernel, the root device
   * whose list it is, whether its dispatch has ended (under that device's
   * inflight_lock), and how many threads in event_wait will complete it. */
  struct _cl_event *inflight_next;
  cl_device_id watch_device;
  bool watch_ended;
  atomic_int waiters;
  struct _cl_event *queue_prev, *queue_next; /* the queue's outstanding list */
  /* The queue's list of commands not released yet, and the command's place
   * in its queue's submission order. */
  struct _cl_event *unreleased_prev, *unreleased_next;
  uint64_t seq;
};

/* Creates a command event for queue (status CL_QUEUED, refcount 1 held by the
 * scheduler until completion; the API reference is added by the caller). */
cl_event event_create_command(cl_command_queue q, cl_command_type type, enum command_kind kind);
/* Validates a wait list against a context (CL_INVALID_EVENT_WAIT_LIST / CL_INVALID_CONTEXT). */
cl_int event_check_wait_list(cl_context ctx, cl_uint num, const cl_event *list);
/* Hands a filled command to the scheduler: it runs once every event in the
 * wait list (and, for in-order queues, the previous command) is complete. */
void command_submit(cl_event ev, cl_uint num_wait, const cl_event *wait_list);
/* For markers and barriers without a wait list on an out-of-order queue:
 * submits ev behind every command of the queue not yet complete. */
void command_submit_after_all(cl_event ev);
/* Marks an event complete (status CL_COMPLETE or a negative error): runs
 * callbacks, releases the command's resources, readies dependents. */
void event_complete(cl_event ev, cl_int status);
/* Whether the calling thread is inside a completion's callbacks (an event
 * callback, or a memory object's destructor run by a completion). */
int event_in_callback(void);
/* Blocks until ev is complete; returns its final status. */
cl_int event_wait(cl_event ev);
void event_set_status(cl_event ev, cl_int status);
void event_release_internal(cl_event ev);
/* Returns the event to the caller: out (if non-NULL) gets a reference. */
void event_hand_out(cl_event ev, cl_event *out);

void scheduler_push_ready(cl_event ev);
/* A dependency or callback was just added to ev: if it is a kernel that has
 * ended and whose completion waits for the next kernel's (device.c), the
 * device's watcher completes it now. */
void device_kernel_wanted(cl_event ev);

/* fork (fork.c). The scheduler's workers and the devices' watchers complete
 * commands inside busy sections, which a fork waits for; sections nest. */
void runtime_busy_begin(void);
void runtime_busy_end(void);
/* Registers the fork handlers; platform_init calls it after hsa_init. */
void runtime_register_atfork(void);
enum runtime_fork_phase { RUNTIME_FORK_PREPARE, RUNTIME_FORK_PARENT, RUNTIME_FORK_CHILD };
void scheduler_fork(enum runtime_fork_phase phase);
void device_fork(cl_device_id d, enum runtime_fork_phase phase);
void tiers_fork(enum runtime_fork_phase phase);
/* From a child handler: ev's command was the parent's, in flight at the
 * fork; the child completes it. watcher: the device whose watcher list held
 * it (a kernel: its reference and signal go too), or NULL. */
void fork_abandon(cl_event ev, cl_device_id watcher);
void ndrange_submit(cl_event ev);

/* vector_check.c: AQUILA_VECTORIZE=check, the vectorizer's self-check. */
struct ndrange_check;
int vector_check_enabled(void);

/* A kernel dispatch packet of ev's geometry in hq (waiting for room), all
 * but its header; ndrange_publish writes the header and rings the doorbell. */
hsa_kernel_dispatch_packet_t *ndrange_packet(hsa_queue_t *hq, cl_event ev, uint64_t kernel_object,
                                             void *kernarg, hsa_signal_t signal,
                                             uint64_t group_range, uint64_t *index);
void ndrange_publish(hsa_queue_t *hq, hsa_kernel_dispatch_packet_t *pkt, uint64_t index,
                     int barrier, uint32_t dims);

/* ---- launch_footprint.c: what a launch's work-groups write -------------- */
struct footprint_launch {
  const struct aquila_fatbin_kernel *meta;
  const unsigned char *kernarg;
  uint32_t work_dim;
  uint64_t grid[3], local[3], offset[3], groups[3];
  int uniform; /* every work-group whole */
  int usable;  /* the footprint's checks hold: its write forms may be used */
};
/* Prepares the evaluation of meta's footprint for one launch (kernarg its
 * segment with the hidden arguments); 1 when its write forms can be used. */
int footprint_launch_init(struct footprint_launch *l, const struct aquila_fatbin_kernel *meta,
                          const void *kernarg, uint32_t work_dim, const uint64_t grid[3],
                          const uint32_t local[3]);
/* The bytes [*lo, *hi), from the address buffer argument arg holds, that
 * the work-groups first..last (inclusive, per dimension) may write: 1; 0
 * when they write none; -1 when unknown. */
int footprint_range(const struct footprint_launch *l, uint32_t arg, const uint64_t first[3],
                    const uint64_t last[3], int64_t *lo, int64_t *hi);
/* 1 when the work-items of the box write every byte of [*lo, *hi) through
 * argument arg, and nothing else, without reading it (the argument is
 * "overwritten": a store in every work-item, its forms dense over the box):
 * the bytes there before the kernel are not needed. Else 0. */
int footprint_dense(const struct footprint_launch *l, uint32_t arg, const uint64_t first[3],
                    const uint64_t last[3], int64_t *lo, int64_t *hi);
/* 0 when the compiler proved the kernel never writes through argument arg. */
int footprint_arg_written(const struct aquila_fatbin_kernel *meta, uint32_t arg);
/* Whether the kernel's work-groups can run on several devices: analysed,
 * no atomics on global memory, no printf. */
int footprint_spreadable(const struct aquila_fatbin_kernel *meta);

/* ---- spread.c: one NDRange over several devices (AQUILA_SPREAD=1) ---- */
/* Whether kernel k's launch of that many work-groups on q is spread. */
int spread_eligible(cl_command_queue q, cl_kernel k, uint64_t groups);
/* Runs a spread NDRange (its dependencies complete) on a thread of its own. */
void spread_start(cl_event ev);
/* The check of a command of kernel with its arguments as they are now;
 * NULL when the kernel is not compared (image arguments) or out of memory. */
struct ndrange_check *vector_check_create(cl_kernel kernel);
void vector_check_register(struct ndrange_check *c, const void *kernarg);
/* At the command's completion: counts it, and reports a difference. */
void vector_check_report(cl_event ev, struct ndrange_check *c);
void vector_check_free(struct ndrange_check *c);
void device_watch(cl_device_id d, cl_event ev);
/* Takes the watched kernels that have ended off the front of d's list, as
 * the watcher would: for a thread that has just completed one itself. */
void device_collect_ended(cl_device_id d);

cl_int queue_check(cl_command_queue q);

/* Mem helpers for the enqueue functions. */
int mem_is_buffer(cl_mem m);
/* Storage the runtime allocates for a buffer or an image, and its release.
 * NULL past the device's global memory size, counted over all of them.
 * *fresh (when fresh is not NULL): 1 for a new mapping of 2 MiB or more,
 * whose pages nothing has touched yet. */
void *mem_storage_alloc(size_t size, size_t *storage_size, int *fresh);
/* Before the host first writes m's storage (a copy at creation, a host
 * command that writes it): untouched pages are interleaved over the NUMA
 * nodes of the CPU agent's units (hsa_ven_aquila_memory_place), as any of
 * them may read each page. A kernel that writes it first places its pages
 * itself, on the nodes of its units: mem_pages_touched at its enqueue. */
void mem_place_for_host(cl_mem m);
void mem_pages_touched(cl_mem m);
void mem_storage_set_limit(uint64_t bytes);
void mem_storage_free(void *data, size_t storage_size);
/* CL_INVALID_VALUE unless flags is a valid cl_mem_flags combination. */
cl_int mem_check_flags(cl_mem_flags flags);
/* The command keeps a reference on m until it completes; retain_mem
 * counts it as written (what residency.c assumes when nobody says). */
cl_int retain_mem(cl_event ev, cl_mem m);
cl_int retain_mem_access(cl_event ev, cl_mem m, int writes);
/* Submits ev and, for blocking calls, waits for it. */
cl_int finish_enqueue(cl_event ev, cl_uint num_wait, const cl_event *wait_list, cl_bool blocking,
                      cl_event *event);
int mem_is_image(cl_mem m);
/* Frees an image's HSA image (clReleaseMemObject, last reference). */
void image_destroy(cl_mem m);
/* The handle a kernel on remote device d takes for image m: of an image
 * over m's copy there (residency.c), made on first use. */
cl_int image_device_handle(cl_mem m, cl_device_id d, uint64_t *handle);
/* Runs a COMMAND_IMAGE on a scheduler worker; returns the event's final status. */
cl_int image_command_execute(cl_event ev);
/* The device's image limits (clGetDeviceInfo), from its HSA agent. */
struct image_limits {
  size_t width_2d, height_2d, width_3d, height_3d, depth_3d, buffer_size, array_size;
  cl_uint read_args, write_args, samplers;
};
void device_image_limits(cl_device_id d, struct image_limits *l);

/* ---- samplers ------------------------------------------------------------ */

struct _cl_sampler {
  struct object_header header;
  cl_context context;
  cl_bool normalized_coords;
  cl_addressing_mode addressing_mode;
  cl_filter_mode filter_mode;
  uint64_t bits; /* hsa_ext_sampler_t: what a sampler_t kernel argument carries */
  /* clCreateSamplerWithProperties' list, 0-terminated, for
   * CL_SAMPLER_PROPERTIES; NULL otherwise. */
  cl_sampler_properties *properties;
  size_t properties_size; /* in bytes, the 0 included */
};

/* SPIR-V modules as the runtime reads them (spirv_module.c): whether il is
 * one, and the size in bytes of its specialization constant spec_id (0 when
 * it has none of that id). */
int spirv_module_check(const void *il, size_t size);
int spirv_module_spec_constant_size(const void *il, size_t size, uint32_t spec_id, size_t *bytes);
/* A malloc'd copy of the module with `count` constants (ids[i] set to
 * values[i], zero-extended) applied; NULL on no memory. */
void *spirv_module_specialize(const void *il, size_t size, size_t count, const uint32_t *ids,
                              const uint64_t *values);

/* The checks of clCreate{Buffer,Image}WithProperties before their 1.2
 * calls': the context, then the property list (which must be empty:
 * CL_INVALID_PROPERTY). 0, with *errcode_ret set, on an error. */
int memory_properties_check(cl_context context, const cl_mem_properties *properties,
                            cl_int *errcode_ret);

/* Program helpers. */
cl_int program_load_for_device(cl_program p, cl_uint dev_index);
/* Whether p has an executable for at least one device, loading an
 * executable binary that clBuildProgram has not seen yet. */
int program_has_executable(cl_program p);
/* Drops a reference that an enqueued command held. */
void kernel_release_internal(cl_kernel k);
/* An SVM or USM pointer as a __global or __constant pointer argument:
 * CL_INVALID_ARG_INDEX, CL_INVALID_ARG_VALUE for an argument of another
 * kind, else CL_SUCCESS. */
cl_int kernel_set_arg_pointer(cl_kernel k, cl_uint arg_index, const void *pointer);
/* The bytes of the program's writable program-scope variables (OpenCL C
 * 2.0), 0 for none: the compiler's "program-variables" entry of the fat
 * binary. Their program's code is one object per device. */
uint64_t program_variables_size(cl_program p);
/* Whether p's code is one object per device made at the build, never
 * code by kernel, by tier or by work-group size: programs with
 * program-scope variables (which every kernel must share) or sub-groups
 * (whose size is the vector version's width). Such kernels are not
 * spread over devices, and the vectorizer's self-check skips them. */
int program_compiled_whole(cl_program p);
/* clFinish of every queue of c: what clMemBlockingFreeINTEL waits for. */
void context_finish_queues(cl_context c);

#endif
