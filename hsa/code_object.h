/* The code object reader shared by code_object.c (which creates readers) and
 * executable.c (which loads what they hold). */
#ifndef AQUILA_HSA_CODE_OBJECT_H
#define AQUILA_HSA_CODE_OBJECT_H

#include "hsa_internal.h"

#include <stddef.h>

struct aq_code_object_reader {
  uint32_t magic;
  void *bytes;
  size_t size;
};

struct aq_code_object_reader *aq_reader_from_handle(hsa_code_object_reader_t reader);

#endif
