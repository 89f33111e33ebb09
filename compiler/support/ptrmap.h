/* Hash sets and maps keyed by pointers (LLVM values and blocks), for the
 * analyses of the work-group compiler: open addressing, linear probing, no
 * deletion. */
#ifndef AQUILA_COMPILER_PTRMAP_H
#define AQUILA_COMPILER_PTRMAP_H

#include <stddef.h>

struct ptr_set {
  const void **slots;
  size_t cap, len;
};

int ptr_set_has(const struct ptr_set *s, const void *p);
int ptr_set_add(struct ptr_set *s, const void *p); /* 1 when p was new */
void ptr_set_free(struct ptr_set *s);

struct ptr_map {
  const void **keys;
  void **values;
  size_t cap, len;
};

/* The value stored for key, or NULL. */
void *ptr_map_get(const struct ptr_map *m, const void *key);
/* Stores value for key, replacing an earlier one. */
void ptr_map_put(struct ptr_map *m, const void *key, void *value);
void ptr_map_free(struct ptr_map *m);

#endif
