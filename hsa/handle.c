/* The registry of live objects behind opaque handles. A handle is the
 * address of its object; once the object is destroyed its memory is freed
 * and may hold anything, so a stale handle can only be told apart without
 * reading it: an object is valid while its (address, kind) pair is here.
 * One hash set (open addressing, linear probing, backward-shift deletion)
 * under one mutex: adding, removing and looking up are O(1) on average,
 * however many objects live. Signals and queues, whose handles are used on
 * every packet, do not come here: their memory is pooled and never freed
 * (signal.c, queue.c). */
#include "hsa_internal.h"

#include <pthread.h>
#include <stdlib.h>

struct handle_entry {
  uintptr_t address; /* 0: empty slot */
  uint32_t kind;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_entry *entries;
static size_t capacity; /* a power of two, or 0 before the first add */
static size_t live_count;

void aq_handle_fork(enum aq_fork_phase phase) {
  aq_fork_lock(&registry_lock, phase);
}

static size_t home_slot(uintptr_t address, size_t table_capacity) {
  /* Fibonacci hashing: the high bits of the product mix every address bit. */
  uint64_t h = (uint64_t)address * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 32) & (table_capacity - 1);
}

static void place(struct handle_entry *table, size_t table_capacity, struct handle_entry entry) {
  size_t i = home_slot(entry.address, table_capacity);
  while (table[i].address)
    i = (i + 1) & (table_capacity - 1);
  table[i] = entry;
}

/* Caller holds registry_lock. Returns the slot of (address, kind) or SIZE_MAX. */
static size_t find(uintptr_t address, enum aq_handle_kind kind) {
  if (!capacity) return SIZE_MAX;
  for (size_t i = home_slot(address, capacity);; i = (i + 1) & (capacity - 1)) {
    if (!entries[i].address) return SIZE_MAX;
    if (entries[i].address == address) return entries[i].kind == kind ? i : SIZE_MAX;
  }
}

static bool grow(void) {
  size_t new_capacity = capacity ? capacity * 2 : 64;
  struct handle_entry *table = calloc(new_capacity, sizeof(*table));
  if (!table) return false;
  for (size_t i = 0; i < capacity; i++)
    if (entries[i].address) place(table, new_capacity, entries[i]);
  free(entries);
  entries = table;
  capacity = new_capacity;
  return true;
}

bool aq_handle_add(const void *object, enum aq_handle_kind kind) {
  pthread_mutex_lock(&registry_lock);
  /* At most half full, so that probe sequences stay short. */
  bool ok = (live_count + 1) * 2 <= capacity || grow();
  if (ok) {
    struct handle_entry entry = {(uintptr_t)object, (uint32_t)kind};
    place(entries, capacity, entry);
    live_count++;
  }
  pthread_mutex_unlock(&registry_lock);
  return ok;
}

bool aq_handle_remove(const void *object, enum aq_handle_kind kind) {
  pthread_mutex_lock(&registry_lock);
  size_t hole = find((uintptr_t)object, kind);
  bool found = hole != SIZE_MAX;
  if (found) {
    /* Backward-shift deletion: move later members of the probe run into the
     * hole when their home slot does not lie between the hole and them. */
    entries[hole].address = 0;
    for (size_t i = (hole + 1) & (capacity - 1); entries[i].address; i = (i + 1) & (capacity - 1)) {
      size_t home = home_slot(entries[i].address, capacity);
      size_t dist_home = (i - home) & (capacity - 1), dist_hole = (i - hole) & (capacity - 1);
      if (dist_home >= dist_hole) {
        entries[hole] = entries[i];
        entries[i].address = 0;
        hole = i;
      }
    }
    live_count--;
  }
  pthread_mutex_unlock(&registry_lock);
  return found;
}

bool aq_handle_is_live(uint64_t handle, enum aq_handle_kind kind) {
  if (!handle || handle > UINTPTR_MAX) return false;
  pthread_mutex_lock(&registry_lock);
  bool live = find((uintptr_t)handle, kind) != SIZE_MAX;
  pthread_mutex_unlock(&registry_lock);
  return live;
}
