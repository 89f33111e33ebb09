/* Code object readers: the bytes of a CPU code object, taken from memory or
 * from a file, kept until an executable loads them. */
#include "code_object.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define AQ_READER_MAGIC 0xc0dec0u

struct aq_code_object_reader *aq_reader_from_handle(hsa_code_object_reader_t reader) {
  struct aq_code_object_reader *r = (struct aq_code_object_reader *)(uintptr_t)reader.handle;
  if (!aq_handle_is_live(reader.handle, AQ_HANDLE_CODE_OBJECT_READER)) return NULL;
  return r;
}

static hsa_status_t reader_new(void *bytes, size_t size, hsa_code_object_reader_t *out) {
  struct aq_code_object_reader *r = malloc(sizeof(*r));
  if (!r) {
    free(bytes);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  r->magic = AQ_READER_MAGIC;
  r->bytes = bytes;
  r->size = size;
  if (!aq_handle_add(r, AQ_HANDLE_CODE_OBJECT_READER)) {
    free(bytes);
    free(r);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  out->handle = (uint64_t)(uintptr_t)r;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_code_object_reader_create_from_memory(const void *code_object, size_t size,
                                          hsa_code_object_reader_t *code_object_reader) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!code_object || size == 0 || !code_object_reader) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  /* A private copy: the application may release its buffer once the
   * reader exists. */
  void *bytes = malloc(size);
  if (!bytes) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  memcpy(bytes, code_object, size);
  return reader_new(bytes, size, code_object_reader);
}

hsa_status_t hsa_code_object_reader_create_from_file(hsa_file_t file,
                                                     hsa_code_object_reader_t *code_object_reader) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!code_object_reader) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  struct stat st;
  if (file < 0 || fstat(file, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
    return HSA_STATUS_ERROR_INVALID_FILE;
  size_t size = (size_t)st.st_size;
  char *bytes = malloc(size);
  if (!bytes) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(file, bytes + done, size - done, (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      free(bytes);
      return HSA_STATUS_ERROR_INVALID_FILE;
    }
    done += (size_t)n;
  }
  return reader_new(bytes, size, code_object_reader);
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t code_object_reader) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  struct aq_code_object_reader *r = aq_reader_from_handle(code_object_reader);
  if (!r || !aq_handle_remove(r, AQ_HANDLE_CODE_OBJECT_READER))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  r->magic = 0;
  free(r->bytes);
  free(r);
  return HSA_STATUS_SUCCESS;
}
