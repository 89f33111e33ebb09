/* libFuzzer harness for aquila_fatbin_read (`make fuzz`): any input must be
 * either refused with a message or read into a fat binary that is valid by
 * itself, so writing it back and reading that again must succeed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/fatbin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct aquila_fatbin *fb = NULL;
  char err[256];
  (void)aquila_fatbin_is_fatbin(data, size);
  if (aquila_fatbin_read(data, size, &fb, err, sizeof err) != 0) {
    if (fb || !err[0]) abort();
    return 0;
  }
  void *again = NULL;
  size_t again_size = 0;
  if (aquila_fatbin_write(fb, &again, &again_size) != 0) abort();
  struct aquila_fatbin *back = NULL;
  if (aquila_fatbin_read(again, again_size, &back, err, sizeof err) != 0) abort();
  if (back->num_kernels != fb->num_kernels || back->num_codes != fb->num_codes) abort();
  aquila_fatbin_destroy(back);
  free(again);
  aquila_fatbin_destroy(fb);
  return 0;
}
