/* Pointer-keyed hash sets and maps (ptrmap.h). Keys are never NULL; tables
 * grow at half load, so probes stay short. */
#include "support/ptrmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t ptr_hash(const void *p, size_t cap) {
  uintptr_t v = (uintptr_t)p;
  v ^= v >> 17;
  v *= 0x9e3779b97f4a7c15ull;
  return (size_t)(v >> 7) & (cap - 1);
}

int ptr_set_has(const struct ptr_set *s, const void *p) {
  if (!s->cap) return 0;
  for (size_t i = ptr_hash(p, s->cap);; i = (i + 1) & (s->cap - 1)) {
    if (!s->slots[i]) return 0;
    if (s->slots[i] == p) return 1;
  }
}

int ptr_set_add(struct ptr_set *s, const void *p) {
  if (ptr_set_has(s, p)) return 0;
  if ((s->len + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    const void **slots = calloc(cap, sizeof *slots);
    if (!slots) abort();
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i])
        for (size_t j = ptr_hash(s->slots[i], cap);; j = (j + 1) & (cap - 1))
          if (!slots[j]) {
            slots[j] = s->slots[i];
            break;
          }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
  }
  for (size_t i = ptr_hash(p, s->cap);; i = (i + 1) & (s->cap - 1))
    if (!s->slots[i]) {
      s->slots[i] = p;
      s->len++;
      return 1;
    }
}

void ptr_set_free(struct ptr_set *s) {
  free(s->slots);
  memset(s, 0, sizeof *s);
}

void *ptr_map_get(const struct ptr_map *m, const void *key) {
  if (!m->cap) return NULL;
  for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (!m->keys[i]) return NULL;
    if (m->keys[i] == key) return m->values[i];
  }
}

static void ptr_map_grow(struct ptr_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 256;
  const void **keys = calloc(cap, sizeof *keys);
  void **values = calloc(cap, sizeof *values);
  if (!keys || !values) abort();
  for (size_t i = 0; i < m->cap; i++)
    if (m->keys[i])
      for (size_t j = ptr_hash(m->keys[i], cap);; j = (j + 1) & (cap - 1))
        if (!keys[j]) {
          keys[j] = m->keys[i];
          values[j] = m->values[i];
          break;
        }
  free(m->keys);
  free(m->values);
  m->keys = keys;
  m->values = values;
  m->cap = cap;
}

void ptr_map_put(struct ptr_map *m, const void *key, void *value) {
  if ((m->len + 1) * 2 > m->cap) ptr_map_grow(m);
  for (size_t i = ptr_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) {
      m->values[i] = value;
      return;
    }
    if (!m->keys[i]) {
      m->keys[i] = key;
      m->values[i] = value;
      m->len++;
      return;
    }
  }
}

void ptr_map_free(struct ptr_map *m) {
  free(m->keys);
  free(m->values);
  memset(m, 0, sizeof *m);
}
