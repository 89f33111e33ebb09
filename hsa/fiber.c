/* Work-item fibers: the run_workitems / barrier services of cpu_abi.h.
 *
 * Each compute unit owns a fiber pool: stacks for up to 4096 work-items,
 * 64 KiB each below a guard page, reserved once and reused by every
 * work-group. run_workitems starts one fiber per work-item and resumes them
 * round-robin; a barrier switches back to the scheduler, so every work-item
 * reaches barrier k before any of them passes it. */
#include "hsa_internal.h"

#include <aquila/cpu_abi.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define AQ_FIBER_STACK_SIZE (64u * 1024u)
#define AQ_FIBER_GUARD_SIZE 4096u
#define AQ_FIBER_STRIDE (AQ_FIBER_STACK_SIZE + AQ_FIBER_GUARD_SIZE)
#define AQ_FIBER_MAX AQ_WORKGROUP_MAX_SIZE

void aq_fiber_switch(void **save_sp, void *new_sp);
void aq_fiber_start(void);

struct aq_fiber_pool {
  char *stacks;           /* AQ_FIBER_MAX strides, PROT_NONE until used */
  uint32_t stacks_usable; /* stacks made readable and writable so far */
  uint32_t count;         /* work-items of the running work-group */
  uint32_t current;
  uint32_t finished;
  bool direct; /* a single work-item runs on the unit's own stack */
  void *scheduler_sp;
  void *fiber_sp[AQ_FIBER_MAX];
  uint8_t done[AQ_FIBER_MAX];
  unsigned stack_ids[AQ_FIBER_MAX]; /* AQ_STACK_REGISTER's */
  int private_id;                   /* aq_address_range_add's: the whole mapping */
  aquila_workitem_fn fn;
  const void *kernarg;
  const struct aquila_workgroup *wg;
};

static __thread struct aq_fiber_pool *thread_pool;

struct aq_fiber_pool *aq_fiber_pool_create(void) {
  struct aq_fiber_pool *pool = calloc(1, sizeof(*pool));
  if (!pool) return NULL;
  pool->stacks = mmap(NULL, (size_t)AQ_FIBER_MAX * AQ_FIBER_STRIDE, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (pool->stacks == MAP_FAILED) {
    free(pool);
    return NULL;
  }
  pool->private_id = aq_address_range_add(
      pool->stacks, (char *)pool->stacks + (size_t)AQ_FIBER_MAX * AQ_FIBER_STRIDE,
      AQUILA_ADDRESS_PRIVATE);
  return pool;
}

void aq_fiber_pool_destroy(struct aq_fiber_pool *pool) {
  if (!pool) return;
  for (uint32_t i = 0; i < pool->stacks_usable; i++)
    AQ_STACK_DEREGISTER(pool->stack_ids[i]);
  aq_address_range_remove(pool->private_id);
  munmap(pool->stacks, (size_t)AQ_FIBER_MAX * AQ_FIBER_STRIDE);
  free(pool);
}

struct aq_fiber_pool *aq_fiber_pool_bind_thread(struct aq_fiber_pool *pool) {
  struct aq_fiber_pool *previous = thread_pool;
  thread_pool = pool;
  return previous;
}

static bool ensure_stacks(struct aq_fiber_pool *pool, uint32_t count) {
  while (pool->stacks_usable < count) {
    char *stack =
        pool->stacks + (size_t)pool->stacks_usable * AQ_FIBER_STRIDE + AQ_FIBER_GUARD_SIZE;
    if (mprotect(stack, AQ_FIBER_STACK_SIZE, PROT_READ | PROT_WRITE) != 0) return false;
    pool->stack_ids[pool->stacks_usable] = AQ_STACK_REGISTER(stack, stack + AQ_FIBER_STACK_SIZE);
    pool->stacks_usable++;
  }
  return true;
}

static void run_current_workitem(struct aq_fiber_pool *pool) {
  const struct aquila_workgroup *wg = pool->wg;
  uint32_t i = pool->current;
  uint32_t x = i % wg->local_size[0];
  uint32_t y = (i / wg->local_size[0]) % wg->local_size[1];
  uint32_t z = i / (wg->local_size[0] * wg->local_size[1]);
  pool->fn(pool->kernarg, wg, x, y, z);
}

static void fiber_entry(void *argument) {
  struct aq_fiber_pool *pool = argument;
  run_current_workitem(pool);
  uint32_t i = pool->current;
  pool->done[i] = 1;
  pool->finished++;
  aq_fiber_switch(&pool->fiber_sp[i], pool->scheduler_sp);
  __builtin_unreachable();
}

/* Builds, below top (16-byte aligned), the frame aq_fiber_switch pops:
 * control words, r15..r12, rbx, rbp, then the return address
 * aq_fiber_start, which calls entry(argument). */
static void *build_frame(char *top, void (*entry)(void *), void *argument) {
  uint64_t *frame = (uint64_t *)(top - 8 * sizeof(uint64_t));
  uint32_t mxcsr;
  uint16_t x87_control;
  __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
  __asm__ volatile("fnstcw %0" : "=m"(x87_control));
  frame[0] = (uint64_t)mxcsr | ((uint64_t)x87_control << 32);
  frame[1] = 0;                             /* r15 */
  frame[2] = 0;                             /* r14 */
  frame[3] = (uint64_t)(uintptr_t)entry;    /* r13 */
  frame[4] = (uint64_t)(uintptr_t)argument; /* r12 */
  frame[5] = 0;                             /* rbx */
  frame[6] = 0;                             /* rbp */
  frame[7] = (uint64_t)(uintptr_t)aq_fiber_start;
  return frame;
}

static void *initial_frame(struct aq_fiber_pool *pool, uint32_t index) {
  char *top = pool->stacks + (size_t)(index + 1) * AQ_FIBER_STRIDE - 16;
  return build_frame(top, fiber_entry, pool);
}

struct stack_call {
  void (*fn)(void *);
  void *argument;
  void *caller_sp, *callee_sp;
};

/* Never returns: it switches back to aq_call_on_stack's caller instead.
 * Not instrumented by ThreadSanitizer, whose shadow call stack would keep
 * the entry of every call that never returned. */
__attribute__((no_sanitize_thread)) static void stack_call_entry(void *argument) {
  struct stack_call *call = argument;
  call->fn(call->argument);
  aq_fiber_switch(&call->callee_sp, call->caller_sp);
  __builtin_unreachable();
}

void aq_call_on_stack(void *stack_top, void (*fn)(void *), void *argument) {
  struct stack_call call = {fn, argument, NULL, NULL};
  char *top = (char *)((uintptr_t)stack_top & ~(uintptr_t)15);
  aq_fiber_switch(&call.caller_sp, build_frame(top, stack_call_entry, &call));
}

static void run_workitems(aquila_workitem_fn fn, const void *kernarg,
                          const struct aquila_workgroup *wg) {
  struct aq_fiber_pool *pool = thread_pool;
  if (!pool) {
    /* A thread that is not a compute unit (a test calling a kernel
     * directly) gets its own pool, kept for the thread's lifetime. */
    pool = aq_fiber_pool_create();
    if (!pool) abort();
    thread_pool = pool;
  }
  uint64_t count = (uint64_t)wg->local_size[0] * wg->local_size[1] * wg->local_size[2];
  if (count == 0) return;
  if (count > AQ_FIBER_MAX) abort(); /* the agent never makes such a work-group */
  pool->fn = fn;
  pool->kernarg = kernarg;
  pool->wg = wg;
  pool->count = (uint32_t)count;
  pool->finished = 0;
  if (count == 1) {
    pool->direct = true;
    pool->current = 0;
    run_current_workitem(pool);
    pool->direct = false;
    return;
  }
  if (!ensure_stacks(pool, pool->count)) abort();
  for (uint32_t i = 0; i < pool->count; i++) {
    pool->done[i] = 0;
    pool->fiber_sp[i] = initial_frame(pool, i);
  }
  while (pool->finished < pool->count) {
    for (uint32_t i = 0; i < pool->count; i++) {
      if (pool->done[i]) continue;
      pool->current = i;
      aq_fiber_switch(&pool->scheduler_sp, pool->fiber_sp[i]);
    }
  }
}

static void barrier(void) {
  struct aq_fiber_pool *pool = thread_pool;
  if (!pool || pool->direct || pool->count <= 1) return;
  aq_fiber_switch(&pool->fiber_sp[pool->current], pool->scheduler_sp);
}

const struct aquila_cpu_services aq_cpu_services = {
    .version = 2,
    .run_workitems = run_workitems,
    .barrier = barrier,
    .printf = aq_printf,
    .address_space_of = aq_address_space_of,
};
