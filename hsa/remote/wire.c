/* Checks of the messages between remote agents and aquilad (wire.h): the
 * only code that looks at a peer's bytes before they are trusted. */
#include "wire.h"

#include <string.h>

static bool length_is(const struct aq_wire_header *h, uint64_t size) {
  return h->length == size;
}

/* LOAD's reply: the reply, then count kernels each followed by its name. */
static bool loaded_kernels_fit(const unsigned char *p, uint64_t length) {
  struct aq_wire_reply reply;
  if (length < sizeof reply) return false;
  memcpy(&reply, p, sizeof reply);
  if (reply.status != 0) return length == sizeof reply;
  uint64_t count = reply.reserved;
  if (count > AQ_WIRE_MAX_KERNELS) return false;
  uint64_t at = sizeof reply;
  for (uint64_t i = 0; i < count; i++) {
    struct aq_wire_kernel k;
    if (length - at < sizeof k) return false;
    memcpy(&k, p + at, sizeof k);
    at += sizeof k;
    if (k.name_length == 0 || k.name_length > AQ_WIRE_MAX_NAME || length - at < k.name_length)
      return false;
    if (memchr(p + at, 0, k.name_length)) return false;
    if (k.kernarg_size > AQ_WIRE_MAX_KERNARG) return false;
    at += k.name_length;
  }
  return at == length;
}

bool aq_wire_check(const struct aq_wire_header *h, const void *payload, bool from_daemon,
                   bool authenticated) {
  if (h->magic != AQ_WIRE_MAGIC || h->type == 0 || h->type >= AQ_MSG_TYPE_END) return false;
  if (!authenticated && !from_daemon && h->length > AQ_WIRE_MAX_UNAUTHENTICATED) return false;
  if (h->length > AQ_WIRE_MAX_PAYLOAD + 4096) return false;
  const unsigned char *p = payload;
  if (from_daemon) {
    switch (h->type) {
    case AQ_MSG_CHALLENGE:
      return !authenticated && length_is(h, sizeof(struct aq_wire_challenge));
    case AQ_MSG_WELCOME:
      if (!length_is(h, sizeof(struct aq_wire_welcome))) return false;
      if (p) {
        struct aq_wire_welcome w;
        memcpy(&w, p, sizeof w);
        if (!memchr(w.name, 0, sizeof w.name) || !memchr(w.target, 0, sizeof w.target) ||
            !memchr(w.host, 0, sizeof w.host) || w.compute_units == 0 || w.max_workgroup_size == 0)
          return false;
      }
      return true;
    case AQ_MSG_REPLY:
      /* Its shape depends on the request; the client checks it there
       * (aq_wire_check_loaded for LOAD). */
      if (h->flags & ~AQ_WIRE_FLAG_RAW) return false;
      return authenticated &&
             ((h->flags & AQ_WIRE_FLAG_RAW) || h->length >= sizeof(struct aq_wire_reply));
    case AQ_MSG_REFUSED:
      if (h->length == 0 || h->length > AQ_WIRE_MAX_REASON) return false;
      return !p || memchr(p, 0, h->length) != NULL;
    case AQ_MSG_DONE:
      return authenticated && h->length >= sizeof(struct aq_wire_done) &&
             h->length % sizeof(struct aq_wire_done) == 0 &&
             h->length / sizeof(struct aq_wire_done) <= AQ_WIRE_MAX_DONES;
    default:
      return false;
    }
  }
  switch (h->type) {
  case AQ_MSG_HELLO:
    /* Any version's hello (its first field is the version): the daemon
     * refuses another version with a reason the client can show. */
    return !authenticated && h->length >= sizeof(uint32_t);
  case AQ_MSG_AUTH:
    return !authenticated && length_is(h, AQ_WIRE_PROOF_BYTES);
  default:
    break;
  }
  if (!authenticated) return false;
  switch (h->type) {
  case AQ_MSG_ALLOC:
  case AQ_MSG_FREE:
  case AQ_MSG_UNLOAD:
  case AQ_MSG_IMAGE_DESTROY:
    return length_is(h, sizeof(uint64_t));
  case AQ_MSG_IMAGE_CREATE:
    /* Its fields are the HSA runtime's to check, on the daemon. */
    return length_is(h, sizeof(struct aq_wire_image));
  case AQ_MSG_WRITE:
    return h->length <= AQ_WIRE_MAX_PAYLOAD;
  case AQ_MSG_READ:
    if (!length_is(h, sizeof(struct aq_wire_range))) return false;
    if (p) {
      struct aq_wire_range r;
      memcpy(&r, p, sizeof r);
      if (r.size > AQ_WIRE_MAX_PAYLOAD) return false;
    }
    return true;
  case AQ_MSG_FILL:
    if (h->length < sizeof(struct aq_wire_fill) || h->length > sizeof(struct aq_wire_fill) + 128)
      return false;
    if (p) {
      struct aq_wire_fill f;
      memcpy(&f, p, sizeof f);
      if (f.pattern_size == 0 || f.pattern_size > 128 || f.pattern_size != h->length - sizeof f ||
          f.size % f.pattern_size)
        return false;
    }
    return true;
  case AQ_MSG_LOAD:
    return h->length > 0 && h->length <= AQ_WIRE_MAX_PAYLOAD;
  case AQ_MSG_PING:
    return h->length == 0;
  case AQ_MSG_GRANT:
    return length_is(h, sizeof(struct aq_wire_range));
  case AQ_MSG_COPY:
    return length_is(h, sizeof(struct aq_wire_copy));
  case AQ_MSG_GRANT_READ:
    return length_is(h, sizeof(struct aq_wire_grant_read));
  case AQ_MSG_PULL:
    if (!length_is(h, sizeof(struct aq_wire_pull))) return false;
    if (p) {
      struct aq_wire_pull pull;
      memcpy(&pull, p, sizeof pull);
      if (!memchr(pull.source, 0, sizeof pull.source) || pull.size > (1ull << 40)) return false;
    }
    return true;
  case AQ_MSG_DISPATCH:
    if (h->length < sizeof(struct aq_wire_dispatch) ||
        h->length > sizeof(struct aq_wire_dispatch) + AQ_WIRE_MAX_KERNARG)
      return false;
    if (p) {
      struct aq_wire_dispatch d;
      memcpy(&d, p, sizeof d);
      if (d.kernarg_size != h->length - sizeof d || d.setup < 1 || d.setup > 3) return false;
      for (int i = 0; i < 3; i++)
        if (d.workgroup_size[i] == 0 || d.grid_size[i] == 0) return false;
    }
    return true;
  default:
    return false;
  }
}

const char *aq_wire_type_name(unsigned type) {
  static const char *const names[AQ_MSG_TYPE_END] = {
      [AQ_MSG_HELLO] = "HELLO",         [AQ_MSG_CHALLENGE] = "CHALLENGE",
      [AQ_MSG_AUTH] = "AUTH",           [AQ_MSG_WELCOME] = "WELCOME",
      [AQ_MSG_ALLOC] = "ALLOC",         [AQ_MSG_FREE] = "FREE",
      [AQ_MSG_WRITE] = "WRITE",         [AQ_MSG_READ] = "READ",
      [AQ_MSG_LOAD] = "LOAD",           [AQ_MSG_UNLOAD] = "UNLOAD",
      [AQ_MSG_DISPATCH] = "DISPATCH",   [AQ_MSG_REPLY] = "REPLY",
      [AQ_MSG_DONE] = "DONE",           [AQ_MSG_FILL] = "FILL",
      [AQ_MSG_PING] = "PING",           [AQ_MSG_GRANT] = "GRANT",
      [AQ_MSG_PULL] = "PULL",           [AQ_MSG_GRANT_READ] = "GRANT_READ",
      [AQ_MSG_COPY] = "COPY",           [AQ_MSG_IMAGE_CREATE] = "IMAGE_CREATE",
      [AQ_MSG_IMAGE_DESTROY] = "IMAGE_DESTROY", [AQ_MSG_REFUSED] = "REFUSED",
  };
  return type < AQ_MSG_TYPE_END && names[type] ? names[type] : "unknown";
}

bool aq_wire_check_loaded(const void *payload, uint64_t length) {
  return loaded_kernels_fit(payload, length);
}
