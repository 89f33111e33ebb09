/* libFuzzer harness for the remote agents' message checks (`make fuzz`):
 * aq_wire_check and aq_wire_check_loaded read any bytes without reading
 * past them, and what they accept holds what the daemon and the client
 * then rely on. Input: a message header, then its payload. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../hsa/remote/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct aq_wire_header h;
  if (size < sizeof h) {
    (void)aq_wire_check_loaded(data, size);
    return 0;
  }
  memcpy(&h, data, sizeof h);
  size_t n = size - sizeof h;
  /* The payload exactly as long as the header says, in a buffer of its own
   * (so that ASan sees any read past it). */
  if (h.length != n) h.length = n;
  uint8_t *payload = malloc(n ? n : 1);
  if (!payload) return 0;
  memcpy(payload, data + sizeof h, n);
  for (int mode = 0; mode < 4; mode++) {
    bool from_daemon = mode & 1, authenticated = mode & 2;
    if (!aq_wire_check(&h, NULL, from_daemon, authenticated)) continue;
    if (!aq_wire_check(&h, payload, from_daemon, authenticated)) continue;
    if (!authenticated && !from_daemon && h.length > AQ_WIRE_MAX_UNAUTHENTICATED) abort();
    if (!from_daemon && authenticated && h.type == AQ_MSG_DISPATCH) {
      struct aq_wire_dispatch d;
      memcpy(&d, payload, sizeof d);
      if (d.kernarg_size != h.length - sizeof d || d.setup < 1 || d.setup > 3) abort();
    }
    if (!from_daemon && authenticated && h.type == AQ_MSG_FILL) {
      struct aq_wire_fill f;
      memcpy(&f, payload, sizeof f);
      if (f.pattern_size == 0 || f.pattern_size > 128 || f.size % f.pattern_size) abort();
    }
  }
  (void)aq_wire_check_loaded(payload, n);
  free(payload);
  return 0;
}
