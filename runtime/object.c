/* The object header shared by every OpenCL object, the clGet*Info size
 * protocol, and debug logging (AQUILA_DEBUG). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime.h"

void object_init(struct object_header *h, enum object_kind kind) {
  h->dispatch = &aquila_dispatch;
  h->kind = kind;
  atomic_init(&h->refcount, 1);
}

int object_is(const void *p, enum object_kind kind) {
  const struct object_header *h = p;
  return h && h->dispatch == &aquila_dispatch && h->kind == kind &&
         atomic_load_explicit(&h->refcount, memory_order_relaxed) > 0;
}

void object_retain(struct object_header *h) {
  atomic_fetch_add_explicit(&h->refcount, 1, memory_order_relaxed);
}

int object_release(struct object_header *h) {
  if (atomic_fetch_sub_explicit(&h->refcount, 1, memory_order_acq_rel) == 1) {
    h->kind = 0; /* a stale handle now fails object_is */
    return 1;
  }
  return 0;
}

/* Freed objects wait in a quarantine before their memory goes back to
 * malloc. Through the ICD loader a handle is dereferenced (its dispatch
 * table) before Aquila sees it, so a handle released once too often — which
 * real programs do: pyopencl releases the program of a failed clLinkProgram
 * twice — would crash in the loader on freed memory. In quarantine the
 * header still points at the dispatch table and says "no object", so the
 * call returns the specification's CL_INVALID_* instead. */
#define QUARANTINE_SIZE 4096
static _Atomic(void *) quarantine[QUARANTINE_SIZE];
static atomic_size_t quarantine_next;

/* Lock-free: every completed event passes here. */
void object_free(void *object) {
  size_t slot = atomic_fetch_add_explicit(&quarantine_next, 1, memory_order_relaxed);
  free(atomic_exchange(&quarantine[slot % QUARANTINE_SIZE], object));
}

static int debug_on;
static pthread_once_t debug_once = PTHREAD_ONCE_INIT;

static void read_debug_setting(void) {
  const char *e = getenv("AQUILA_DEBUG");
  debug_on = e && *e && strcmp(e, "0") != 0;
}

int debug_enabled(void) {
  pthread_once(&debug_once, read_debug_setting);
  return debug_on;
}

void debug_log(const char *fmt, ...) {
  if (!debug_enabled()) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("aquila: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

cl_int info_copy(const void *value, size_t size, size_t param_value_size, void *param_value,
                 size_t *param_value_size_ret) {
  if (param_value) {
    if (param_value_size < size) return CL_INVALID_VALUE;
    if (size) memcpy(param_value, value, size); /* an empty value may be NULL */
  }
  if (param_value_size_ret) *param_value_size_ret = size;
  return CL_SUCCESS;
}

int property_list_copy(const void *list, size_t entries, size_t entry_size, void **copy,
                       size_t *bytes) {
  *copy = NULL;
  *bytes = 0;
  if (!list) return 0;
  *bytes = (entries + 1) * entry_size;
  if (!(*copy = malloc(*bytes))) return -1;
  memcpy(*copy, list, *bytes);
  return 0;
}

uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
