/* Hand-written CPU code object for the HSA tests: a few kernels following
 * hsa/include/aquila/cpu_abi.h, compiled with gcc -shared -fPIC. */
#include <aquila/cpu_abi.h>
#include <pthread.h>
#include <stdint.h>

/* ---- vector_add: c[i] = a[i] + b[i] for i < n ---- */
struct vector_add_args {
  const float *a;
  const float *b;
  float *c;
  uint64_t n;
  struct aquila_hidden_kernargs hidden;
};

static void vector_add_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct vector_add_args *args = kernarg;
  uint64_t base =
      (uint64_t)wg->group_id[0] * wg->enqueued_local_size[0] + args->hidden.global_offset[0];
  for (uint32_t x = 0; x < wg->local_size[0]; x++) {
    uint64_t i = base + x;
    if (i < args->n) args->c[i] = args->a[i] + args->b[i];
  }
}

static const struct aquila_kernel_descriptor vector_add = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct vector_add_args),
    .kernarg_alignment = 8,
    .hidden_kernarg_offset = 32,
    .private_segment_size = 64,
    .run_workgroup = vector_add_group,
    .name = "vector_add",
};

/* ---- empty: does nothing ---- */
static void empty_group(const void *kernarg, const struct aquila_workgroup *wg) {
  (void)kernarg;
  (void)wg;
}

static const struct aquila_kernel_descriptor empty = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_alignment = 8,
    .run_workgroup = empty_group,
    .name = "empty",
};

/* ---- record: counts every work-item that ran, and checks the work-group
 * fields the agent filled in ---- */
struct record_args {
  uint32_t *hits;   /* one counter per work-item of the grid */
  uint32_t *errors; /* incremented on an inconsistent work-group */
};

static void record_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct record_args *args = kernarg;
  for (int d = 0; d < 3; d++) {
    uint64_t first = (uint64_t)wg->group_id[d] * wg->enqueued_local_size[d];
    uint64_t expect = wg->global_size[d] - first;
    if (expect > wg->enqueued_local_size[d]) expect = wg->enqueued_local_size[d];
    if (wg->local_size[d] != expect || wg->group_id[d] >= wg->num_groups[d])
      __atomic_fetch_add(args->errors, 1, __ATOMIC_RELAXED);
  }
  if (wg->services == 0 || wg->services->run_workitems == 0)
    __atomic_fetch_add(args->errors, 1, __ATOMIC_RELAXED);
  for (uint32_t z = 0; z < wg->local_size[2]; z++)
    for (uint32_t y = 0; y < wg->local_size[1]; y++)
      for (uint32_t x = 0; x < wg->local_size[0]; x++) {
        uint64_t gx = (uint64_t)wg->group_id[0] * wg->enqueued_local_size[0] + x;
        uint64_t gy = (uint64_t)wg->group_id[1] * wg->enqueued_local_size[1] + y;
        uint64_t gz = (uint64_t)wg->group_id[2] * wg->enqueued_local_size[2] + z;
        uint64_t linear = gx + wg->global_size[0] * (gy + wg->global_size[1] * gz);
        __atomic_fetch_add(&args->hits[linear], 1, __ATOMIC_RELAXED);
      }
}

static const struct aquila_kernel_descriptor record = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct record_args),
    .kernarg_alignment = 8,
    .run_workgroup = record_group,
    .name = "record",
};

/* ---- group_memory: fills and checks the dynamic group segment ---- */
struct group_memory_args {
  uint32_t *results; /* per work-group: 1 = ok, 2 = bad */
  uint32_t bytes;
};

static void group_memory_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct group_memory_args *args = kernarg;
  uint32_t group = wg->group_id[0];
  volatile unsigned char *memory = wg->group_segment;
  int ok = memory != 0 && ((uintptr_t)memory & 63) == 0;
  for (uint32_t i = 0; ok && i < args->bytes; i++)
    memory[i] = (unsigned char)(group + i);
  for (uint32_t i = 0; ok && i < args->bytes; i++)
    if (memory[i] != (unsigned char)(group + i)) ok = 0;
  args->results[group] = ok ? 1 : 2;
}

static const struct aquila_kernel_descriptor group_memory = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct group_memory_args),
    .kernarg_alignment = 8,
    .run_workgroup = group_memory_group,
    .name = "group_memory",
};

/* ---- barrier: work-items exchange values through the group segment
 * between barriers; a work-item that passed a barrier early would read a
 * value its neighbour has not written yet ---- */
struct barrier_args {
  uint32_t *results; /* per work-item of the grid: 1 = ok, 2 = bad */
};

static void barrier_item(const void *kernarg, const struct aquila_workgroup *wg, uint32_t x,
                         uint32_t y, uint32_t z) {
  const struct barrier_args *args = kernarg;
  uint32_t n = wg->local_size[0] * wg->local_size[1] * wg->local_size[2];
  uint32_t local = x + wg->local_size[0] * (y + wg->local_size[1] * z);
  volatile uint32_t *slots = wg->group_segment;
  int ok = 1;
  for (uint32_t round = 0; round < 3; round++) {
    slots[local] = local * 7 + round;
    wg->services->barrier();
    uint32_t neighbour = (local + 1) % n;
    if (slots[neighbour] != neighbour * 7 + round) ok = 0;
    wg->services->barrier();
  }
  uint64_t gx = (uint64_t)wg->group_id[0] * wg->enqueued_local_size[0] + x;
  uint64_t gy = (uint64_t)wg->group_id[1] * wg->enqueued_local_size[1] + y;
  uint64_t gz = (uint64_t)wg->group_id[2] * wg->enqueued_local_size[2] + z;
  uint64_t linear = gx + wg->global_size[0] * (gy + wg->global_size[1] * gz);
  args->results[linear] = ok ? 1 : 2;
}

static void barrier_group(const void *kernarg, const struct aquila_workgroup *wg) {
  wg->services->run_workitems(barrier_item, kernarg, wg);
}

static const struct aquila_kernel_descriptor barrier = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .flags = AQUILA_KERNEL_USES_BARRIER,
    .kernarg_size = sizeof(struct barrier_args),
    .kernarg_alignment = 8,
    .run_workgroup = barrier_group,
    .name = "barrier",
};

/* ---- uneven: work-group g spins for (g % 8) units and records which
 * thread ran it ---- */
struct uneven_args {
  uint64_t *runner; /* per work-group: an id of the thread that ran it */
  uint32_t spin;
};

static __thread int uneven_thread_marker;

static void uneven_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct uneven_args *args = kernarg;
  uint32_t group = wg->group_id[0];
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < (uint64_t)(group % 8) * args->spin; i++)
    sink += i;
  args->runner[group] = (uint64_t)(uintptr_t)&uneven_thread_marker;
}

static const struct aquila_kernel_descriptor uneven = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct uneven_args),
    .kernarg_alignment = 8,
    .run_workgroup = uneven_group,
    .name = "uneven",
};

/* ---- whoami: records the thread that ran each work-group (pthread_self),
 * takes a ticket from a counter (the order dispatches ran in), and uses
 * stack_bytes of stack ---- */
struct whoami_args {
  uint64_t *runner;   /* per work-group */
  uint32_t *counter;  /* NULL: no ticket */
  uint32_t *ticket;   /* per work-group */
  uint32_t stack_bytes;
};

static void whoami_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct whoami_args *args = kernarg;
  uint32_t group = wg->group_id[0];
  if (args->stack_bytes) {
    volatile unsigned char frame[args->stack_bytes];
    for (uint32_t i = 0; i < args->stack_bytes; i += 1024)
      frame[i] = (unsigned char)i;
    for (uint32_t i = 0; i < args->stack_bytes; i += 1024)
      if (frame[i] != (unsigned char)i) return; /* runner stays 0: the test fails */
  }
  if (args->counter) args->ticket[group] = __atomic_fetch_add(args->counter, 1, __ATOMIC_RELAXED);
  args->runner[group] = (uint64_t)pthread_self();
}

static const struct aquila_kernel_descriptor whoami = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct whoami_args),
    .kernarg_alignment = 8,
    .run_workgroup = whoami_group,
    .name = "whoami",
};

/* ---- spin: says it started, then runs until released ---- */
struct spin_args {
  uint32_t *started;
  const uint32_t *release;
};

static void spin_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct spin_args *args = kernarg;
  (void)wg;
  __atomic_store_n(args->started, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(args->release, __ATOMIC_ACQUIRE)) {
  }
}

static const struct aquila_kernel_descriptor spin = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct spin_args),
    .kernarg_alignment = 8,
    .run_workgroup = spin_group,
    .name = "spin",
};

/* ---- mark_first / mark_second: the same layout, each work-group leaves
 * its mark (1 or 2); mark_first's wait at a gate, so that a test can
 * supersede it while a dispatch of it runs ---- */
struct mark_args {
  uint32_t *marks; /* one per work-group */
  const uint32_t *gate;
};

static void mark_first_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct mark_args *args = kernarg;
  __atomic_store_n(&args->marks[wg->group_id[0]], 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(args->gate, __ATOMIC_ACQUIRE)) {
  }
}

static void mark_second_group(const void *kernarg, const struct aquila_workgroup *wg) {
  const struct mark_args *args = kernarg;
  __atomic_store_n(&args->marks[wg->group_id[0]], 2, __ATOMIC_RELEASE);
}

static const struct aquila_kernel_descriptor mark_first = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct mark_args),
    .kernarg_alignment = 8,
    .run_workgroup = mark_first_group,
    .name = "mark_first",
};

static const struct aquila_kernel_descriptor mark_second = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernarg_size = sizeof(struct mark_args),
    .kernarg_alignment = 8,
    .run_workgroup = mark_second_group,
    .name = "mark_second",
};

static const struct aquila_kernel_descriptor *const kernels[] = {
    &vector_add, &empty,  &record, &group_memory, &barrier,
    &uneven,     &whoami, &spin,   &mark_first,   &mark_second,
};

__attribute__((visibility("default"))) const struct aquila_kernel_table __aquila_kernel_table = {
    .abi_version = AQUILA_CPU_ABI_VERSION,
    .kernel_count = sizeof(kernels) / sizeof(kernels[0]),
    .kernels = kernels,
};
