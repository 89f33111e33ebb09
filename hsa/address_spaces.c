/* Where work-items' private and local memory is: the stacks they run on
 * (the compute units' threads, the helpers' stacks, the fiber pools, the
 * self-check's stacks) and the compute units' group segments. On a CPU
 * every address space is the process's one, so this is how to_private,
 * to_local and get_fence of a generic pointer (compiler/builtins/generic.cl)
 * tell private, local and global apart when the pointer is another
 * work-item's or another work-group's, on another thread. Ranges are added
 * as the memory is made and cleared when it goes; a lookup takes no lock. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "aquila/cpu_abi.h"
#include "hsa_internal.h"

/* A few per compute unit; a machine past this many loses only the answer
 * for another thread's memory. */
#define AQ_MAX_RANGES 4096

static struct {
  _Atomic uintptr_t low, high;
  _Atomic int space;
} ranges[AQ_MAX_RANGES];
static atomic_uint range_count;

int aq_address_range_add(const void *low, const void *high, int space) {
  unsigned i = atomic_fetch_add(&range_count, 1);
  if (i >= AQ_MAX_RANGES) {
    atomic_fetch_sub(&range_count, 1);
    return -1;
  }
  atomic_store_explicit(&ranges[i].space, space, memory_order_relaxed);
  atomic_store_explicit(&ranges[i].low, (uintptr_t)low, memory_order_relaxed);
  atomic_store_explicit(&ranges[i].high, (uintptr_t)high, memory_order_release);
  return (int)i;
}

void aq_address_range_remove(int id) {
  if (id < 0 || id >= AQ_MAX_RANGES) return;
  atomic_store_explicit(&ranges[id].high, 0, memory_order_relaxed);
  atomic_store_explicit(&ranges[id].low, 0, memory_order_relaxed);
}

int aq_address_range_add_thread_stack(void) {
  pthread_attr_t attr;
  void *low = NULL;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr)) return -1;
  int ok = pthread_attr_getstack(&attr, &low, &size) == 0;
  pthread_attr_destroy(&attr);
  return ok ? aq_address_range_add(low, (char *)low + size, AQUILA_ADDRESS_PRIVATE) : -1;
}

int aq_address_space_of(const void *address) {
  uintptr_t a = (uintptr_t)address;
  unsigned n = atomic_load_explicit(&range_count, memory_order_acquire);
  if (n > AQ_MAX_RANGES) n = AQ_MAX_RANGES;
  for (unsigned i = 0; i < n; i++) {
    uintptr_t high = atomic_load_explicit(&ranges[i].high, memory_order_acquire);
    if (a < high && a >= atomic_load_explicit(&ranges[i].low, memory_order_relaxed))
      return atomic_load_explicit(&ranges[i].space, memory_order_relaxed);
  }
  return AQUILA_ADDRESS_GLOBAL;
}
