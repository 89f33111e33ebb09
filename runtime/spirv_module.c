/* What the runtime reads and writes of a SPIR-V module itself, before any
 * compiler sees it: whether the bytes are one (clCreateProgramWithIL's
 * CL_INVALID_VALUE), its specialization constants' ids and sizes
 * (clSetProgramSpecializationConstant's CL_INVALID_SPEC_ID and
 * CL_INVALID_VALUE), and the module with the values set applied: each
 * OpSpecConstant's default literal replaced, each boolean's True or False
 * chosen, as a consumer of SPIR-V specializes a module. The compiler gets
 * that module (and the kernel cache keys on it); the translation itself is
 * the compiler's (compiler/frontend/spirv.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"

#define SPIRV_MAGIC 0x07230203u
#define SPIRV_HEADER_WORDS 5

enum {
  OP_TYPE_BOOL = 20,
  OP_TYPE_INT = 21,
  OP_TYPE_FLOAT = 22,
  OP_SPEC_CONSTANT_TRUE = 48,
  OP_SPEC_CONSTANT_FALSE = 49,
  OP_SPEC_CONSTANT = 50,
  OP_DECORATE = 71,
  DECORATION_SPEC_ID = 1,
};

/* The module's words in this machine's order, or NULL when il is not a
 * SPIR-V module; *swapped when they need swapping. */
static int module_words(const void *il, size_t size, int *swapped) {
  if (!il || size < SPIRV_HEADER_WORDS * 4 || size % 4) return 0;
  uint32_t magic;
  memcpy(&magic, il, 4);
  if (magic == SPIRV_MAGIC) {
    *swapped = 0;
    return 1;
  }
  if (magic == __builtin_bswap32(SPIRV_MAGIC)) {
    *swapped = 1;
    return 1;
  }
  return 0;
}

int spirv_module_check(const void *il, size_t size) {
  int swapped;
  return module_words(il, size, &swapped);
}

static uint32_t word_at(const unsigned char *p, size_t i, int swapped) {
  uint32_t w;
  memcpy(&w, p + i * 4, 4);
  return swapped ? __builtin_bswap32(w) : w;
}

/* The result id that SpecId spec_id decorates; 0 when none. */
static uint32_t decorated_constant(const unsigned char *p, size_t n, int swapped,
                                   uint32_t spec_id) {
  for (size_t i = SPIRV_HEADER_WORDS; i < n;) {
    uint32_t first = word_at(p, i, swapped), count = first >> 16, op = first & 0xffff;
    if (count == 0 || i + count > n) return 0;
    if (op == OP_DECORATE && count >= 4 && word_at(p, i + 2, swapped) == DECORATION_SPEC_ID &&
        word_at(p, i + 3, swapped) == spec_id)
      return word_at(p, i + 1, swapped);
    i += count;
  }
  return 0;
}

static void put_word(unsigned char *p, size_t i, uint32_t w, int swapped) {
  if (swapped) w = __builtin_bswap32(w);
  memcpy(p + i * 4, &w, 4);
}

void *spirv_module_specialize(const void *il, size_t size, size_t count, const uint32_t *ids,
                              const uint64_t *values) {
  int swapped;
  unsigned char *p = malloc(size ? size : 1);
  if (!p) return NULL;
  memcpy(p, il, size);
  if (!module_words(il, size, &swapped)) return p;
  size_t n = size / 4;
  for (size_t c = 0; c < count; c++) {
    uint32_t target = decorated_constant(p, n, swapped, ids[c]);
    for (size_t i = SPIRV_HEADER_WORDS; target && i < n;) {
      uint32_t first = word_at(p, i, swapped), words = first >> 16, op = first & 0xffff;
      if (words == 0 || i + words > n) break;
      int constant = op == OP_SPEC_CONSTANT || op == OP_SPEC_CONSTANT_TRUE ||
                     op == OP_SPEC_CONSTANT_FALSE;
      if (constant && words >= 3 && word_at(p, i + 2, swapped) == target) {
        if (op == OP_SPEC_CONSTANT_TRUE || op == OP_SPEC_CONSTANT_FALSE) {
          uint32_t chosen = values[c] ? OP_SPEC_CONSTANT_TRUE : OP_SPEC_CONSTANT_FALSE;
          put_word(p, i, (words << 16) | chosen, swapped);
        } else if (op == OP_SPEC_CONSTANT && words >= 4) {
          /* The literal's low word first; a 64-bit type has a second. */
          put_word(p, i + 3, (uint32_t)values[c], swapped);
          if (words >= 5) put_word(p, i + 4, (uint32_t)(values[c] >> 32), swapped);
        }
        break;
      }
      i += words;
    }
  }
  return p;
}

/* Scans the module twice over its instructions: the SpecId decorations,
 * then the constant they decorate and that constant's type. */
int spirv_module_spec_constant_size(const void *il, size_t size, uint32_t spec_id, size_t *bytes) {
  int swapped;
  if (!module_words(il, size, &swapped)) return 0;
  const unsigned char *p = il;
  size_t n = size / 4;
  uint32_t target = 0;
  int found = 0;
  for (size_t i = SPIRV_HEADER_WORDS; i < n && !found;) {
    uint32_t first = word_at(p, i, swapped), count = first >> 16, op = first & 0xffff;
    if (count == 0 || i + count > n) return 0;
    if (op == OP_DECORATE && count >= 4 && word_at(p, i + 2, swapped) == DECORATION_SPEC_ID &&
        word_at(p, i + 3, swapped) == spec_id) {
      target = word_at(p, i + 1, swapped);
      found = 1;
    }
    i += count;
  }
  if (!found) return 0;
  uint32_t type = 0;
  for (size_t i = SPIRV_HEADER_WORDS; i < n && !type;) {
    uint32_t first = word_at(p, i, swapped), count = first >> 16, op = first & 0xffff;
    if ((op == OP_SPEC_CONSTANT || op == OP_SPEC_CONSTANT_TRUE || op == OP_SPEC_CONSTANT_FALSE) &&
        count >= 3 && word_at(p, i + 2, swapped) == target)
      type = word_at(p, i + 1, swapped);
    i += count;
  }
  for (size_t i = SPIRV_HEADER_WORDS; type && i < n;) {
    uint32_t first = word_at(p, i, swapped), count = first >> 16, op = first & 0xffff;
    if (count >= 2 && word_at(p, i + 1, swapped) == type) {
      if (op == OP_TYPE_BOOL) {
        *bytes = 1;
        return 1;
      }
      if ((op == OP_TYPE_INT || op == OP_TYPE_FLOAT) && count >= 3) {
        *bytes = word_at(p, i + 2, swapped) / 8;
        return 1;
      }
    }
    i += count;
  }
  return 0;
}
