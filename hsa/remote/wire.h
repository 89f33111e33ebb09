/* The messages between Aquila's remote agents (the client side, in the
 * application's process) and aquilad (the daemon that serves its machine's
 * CPU agent). A message is a fixed header and a payload of the header's
 * length, sent over one UCX stream per connection; both ends are x86-64, so
 * fields are little-endian and laid out as the structs below say. Every
 * message received is checked by aq_wire_check before anything reads it: a
 * peer that sends a malformed one is disconnected. */
#ifndef AQUILA_REMOTE_WIRE_H
#define AQUILA_REMOTE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AQ_WIRE_MAGIC 0x52575141u /* "AQWR" */
#define AQ_WIRE_VERSION 2u
#define AQ_WIRE_NONCE_BYTES 32u
#define AQ_WIRE_PROOF_BYTES 32u
/* Before a client has proven it holds the key, no message may be longer. */
#define AQ_WIRE_MAX_UNAUTHENTICATED 128u
/* One message carries at most this much data (a larger write is several). */
#define AQ_WIRE_MAX_PAYLOAD (64ull << 20)
/* Large writes and reads travel in messages of this size, pipelined: one
 * message of tens of MiB made UCX's streams crawl (70 MB/s over shared
 * memory); over TCP 16 MiB read 3.2-3.3 GB/s against 2.8 with 4 MiB. */
#define AQ_WIRE_CHUNK (16ull << 20)
/* A REPLY to READ whose payload is the bytes alone (status success). */
#define AQ_WIRE_FLAG_RAW 1u
#define AQ_WIRE_MAX_KERNARG 65536u
#define AQ_WIRE_MAX_KERNELS 65536u
#define AQ_WIRE_MAX_NAME 4096u
#define AQ_WIRE_MAX_REASON 256u
#define AQ_WIRE_REFUSAL_LINGER_SECONDS 2

struct aq_wire_header {
  uint32_t magic;
  uint16_t type; /* enum aq_wire_type */
  uint16_t flags;
  uint64_t id;     /* a request's id, echoed by its reply; a dispatch's completion id */
  uint64_t length; /* bytes of payload after the header */
};

enum aq_wire_type {
  AQ_MSG_HELLO = 1, /* client: struct aq_wire_hello */
  AQ_MSG_CHALLENGE, /* daemon: struct aq_wire_challenge */
  AQ_MSG_AUTH,      /* client: proof of the key over both nonces */
  AQ_MSG_WELCOME,   /* daemon: struct aq_wire_welcome (the client is admitted) */
  AQ_MSG_ALLOC,     /* client: uint64 size -> REPLY with the address */
  AQ_MSG_FREE,      /* client: uint64 address (no reply) */
  AQ_MSG_WRITE,     /* client: the bytes; the header's id is the address (no reply) */
  AQ_MSG_READ,      /* client: struct aq_wire_range -> REPLY with the bytes */
  AQ_MSG_LOAD,      /* client: a code object -> REPLY with aq_wire_loaded and kernels */
  AQ_MSG_UNLOAD,    /* client: uint64 executable (no reply) */
  AQ_MSG_DISPATCH,  /* client: struct aq_wire_dispatch and the kernarg bytes */
  AQ_MSG_REPLY,     /* daemon: struct aq_wire_reply, then the request's result */
  AQ_MSG_DONE,      /* daemon: 1 to AQ_WIRE_MAX_DONES struct aq_wire_done, each with its id */
  AQ_MSG_FILL,      /* client: struct aq_wire_fill, then the pattern (no reply) */
  AQ_MSG_PING,      /* client: -> REPLY (no payload): the round trip, and an order point */
  /* A buffer moved daemon to daemon: the client asks the source for a grant
   * (a one-use token for a range of its memory), then the destination to
   * pull that range from the source with it; the bytes never pass the
   * client. */
  AQ_MSG_GRANT,      /* client: struct aq_wire_range -> REPLY, then the token */
  AQ_MSG_PULL,       /* client: struct aq_wire_pull -> REPLY when the bytes are in place */
  AQ_MSG_GRANT_READ, /* daemon to daemon: struct aq_wire_grant_read -> REPLY (raw bytes) */
  AQ_MSG_COPY,       /* client: struct aq_wire_copy, within its memory (no reply) */
  /* An image over the client's memory, for its kernels: the daemon's HSA
   * image handle is what they take as the argument. */
  AQ_MSG_IMAGE_CREATE,  /* client: struct aq_wire_image -> REPLY with the handle */
  AQ_MSG_IMAGE_DESTROY, /* client: uint64 handle (no reply) */
  /* Why the daemon refuses this client (a wrong key, another wire version,
   * other UCX segment sizes, a malformed or forbidden message): a
   * NUL-terminated sentence of at most AQ_WIRE_MAX_REASON bytes. The daemon
   * reads nothing more from the link and leaves the close to the client
   * (it closes the link itself AQ_WIRE_REFUSAL_LINGER_SECONDS later), so
   * that the reason arrives before the connection ends. */
  AQ_MSG_REFUSED,
  AQ_MSG_TYPE_END
};

struct aq_wire_hello {
  uint32_t version;
  uint32_t tcp_segments;   /* the sender's aq_link_tcp_segments() */
  uint64_t client_time_ns; /* the client's clock when sent */
  uint8_t nonce[AQ_WIRE_NONCE_BYTES];
};

struct aq_wire_challenge {
  uint64_t daemon_time_ns; /* the daemon's clock when sent (clock offset) */
  uint8_t nonce[AQ_WIRE_NONCE_BYTES];
  uint8_t proof[AQ_WIRE_PROOF_BYTES]; /* the daemon's: it holds the key too */
};

struct aq_wire_welcome {
  uint32_t compute_units;
  uint32_t max_workgroup_size;
  uint64_t memory_size; /* what this client may allocate */
  char name[64];        /* the CPU's model */
  char target[128];     /* the fat binary target of its code */
  char host[64];        /* the daemon machine's host name */
  uint32_t tcp_segments; /* the daemon's aq_link_tcp_segments() */
  uint32_t reserved;
};

struct aq_wire_range {
  uint64_t address;
  uint64_t size;
};

struct aq_wire_copy {
  uint64_t dst, src, size;
};

struct aq_wire_fill {
  uint64_t address;
  uint64_t size;
  uint64_t pattern_size; /* 1 to 128, dividing size; the pattern follows */
};

#define AQ_WIRE_TOKEN_BYTES 32u

struct aq_wire_pull {
  uint64_t address; /* where the bytes go, in the destination's memory */
  uint64_t size;
  uint64_t source_address; /* where they are, in the source's */
  uint8_t token[AQ_WIRE_TOKEN_BYTES];
  char source[96]; /* the source daemon, "ADDR:PORT" */
};

struct aq_wire_grant_read {
  uint64_t address;
  uint64_t size;
  uint8_t token[AQ_WIRE_TOKEN_BYTES];
};

/* hsa_ext_image_create_with_layout's arguments (linear layout). */
struct aq_wire_image {
  uint64_t address; /* the image's bytes, in the client's memory there */
  uint64_t width, height, depth, array_size;
  uint64_t row_pitch, slice_pitch;
  uint32_t geometry;      /* hsa_ext_image_geometry_t */
  uint32_t channel_type;  /* hsa_ext_image_channel_type_t */
  uint32_t channel_order; /* hsa_ext_image_channel_order_t */
  uint32_t access;        /* hsa_access_permission_t */
};

struct aq_wire_reply {
  int32_t status; /* hsa_status_t */
  uint32_t reserved;
  uint64_t value; /* ALLOC: the address; LOAD: the executable; IMAGE_CREATE: the handle */
};

/* After LOAD's reply, per kernel: this and its name's bytes. */
struct aq_wire_kernel {
  uint64_t kernel_object;
  uint32_t kernarg_size;
  uint32_t kernarg_alignment;
  uint32_t group_segment_size;
  uint32_t private_segment_size;
  uint32_t name_length;
  uint32_t reserved;
};

struct aq_wire_dispatch {
  uint16_t header; /* the AQL header (barrier bit, fences) */
  uint16_t setup;  /* dimensions */
  uint16_t workgroup_size[3];
  uint16_t profiling;
  uint32_t grid_size[3];
  uint32_t group_segment_size;
  uint32_t padding; /* 0: no byte of the struct is left unwritten on the wire */
  uint64_t kernel_object;
  uint32_t kernarg_size; /* bytes after this struct */
  uint32_t reserved;     /* the client's queue: one AQL queue per queue on the daemon */
  uint64_t group_range;  /* the packet's reserved2: HSA_VEN_AQUILA_GROUP_RANGE, or 0 */
};

/* A DONE reports the dispatches of one queue that have ended since the
 * last, oldest first. */
#define AQ_WIRE_MAX_DONES 64u

struct aq_wire_done {
  uint64_t id;          /* the dispatch's */
  int32_t fault_signal; /* 0, or the signal a kernel fault raised */
  uint32_t fault_group[3];
  uint64_t fault_address;
  uint64_t start_ns, end_ns; /* the daemon's clock, when profiling */
};

/* The structs have no padding: every byte sent is one the sender wrote. */
_Static_assert(sizeof(struct aq_wire_header) == 24, "wire header");
_Static_assert(sizeof(struct aq_wire_dispatch) == 56, "wire dispatch");
_Static_assert(sizeof(struct aq_wire_done) == 48, "wire done");
_Static_assert(sizeof(struct aq_wire_welcome) == 280, "wire welcome");
_Static_assert(sizeof(struct aq_wire_image) == 72, "wire image");

/* The message type's name, for logs ("unknown" for none). */
const char *aq_wire_type_name(unsigned type);

/* Whether a message of this type and payload length may come from the peer
 * in this state: from_daemon selects the direction, authenticated whether
 * the handshake is over. Checks the payload's own counts and lengths when
 * payload is not NULL (the whole payload has arrived). */
bool aq_wire_check(const struct aq_wire_header *header, const void *payload, bool from_daemon,
                   bool authenticated);
/* Whether a REPLY to LOAD (its whole payload) is well formed: the reply's
 * reserved field counts the kernels that follow, each with its name. */
bool aq_wire_check_loaded(const void *payload, uint64_t length);

#endif
