/* The messages between libaquila.so and its compiler helper process
 * (aquila-compiler): a message is a 64-bit length and a body of fields, each
 * a 64-bit number or a byte string with a 64-bit length (UINT64_MAX for a
 * NULL string). Both ends run the same build, so there is no versioning. */
#ifndef AQUILA_COMPILER_HELPER_WIRE_H
#define AQUILA_COMPILER_HELPER_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum wire_op {
  WIRE_COMPILE = 1,      /* aquila_compile */
  WIRE_LINK = 2,         /* aquila_link */
  WIRE_FROM_BITCODE = 3, /* aquila_compile_from_bitcode */
  WIRE_HOST_TARGET = 4,  /* aquila_compiler_host_target */
  WIRE_KERNELS = 5,      /* aquila_compile_kernels */
};

/* A message being built (put) or read (get). A get past the end or of the
 * wrong shape sets failed and returns zero/NULL; so does a put that finds
 * no memory. */
struct wire {
  char *data;
  size_t len, cap, pos;
  int failed;
};

void wire_put_u64(struct wire *w, uint64_t v);
void wire_put_bytes(struct wire *w, const void *data, size_t len);
void wire_put_str(struct wire *w, const char *s); /* s may be NULL */
uint64_t wire_get_u64(struct wire *w);
/* Points into the message (NUL-terminated); valid until wire_free. */
const char *wire_get_str(struct wire *w);
const void *wire_get_bytes(struct wire *w, size_t *len);
/* The same, where a NULL field (wire_put_str(w, NULL)) is NULL, not a failure. */
const void *wire_get_bytes_or_null(struct wire *w, size_t *len);
void wire_free(struct wire *w);

/* Sends the message on a stream socket; 0 or -1 (peer gone: no SIGPIPE). */
int wire_send(int fd, const struct wire *w);
/* Receives one message into w (empty on entry). Waits at most timeout_ms
 * in all (-1: no limit). 0, or -1 with errno: ETIMEDOUT, EPIPE when the
 * peer closed the connection, EMSGSIZE for a message over the limit. */
int wire_recv(int fd, struct wire *w, int timeout_ms);

/* Every AQUILA_* variable of the environment as one NUL-separated block,
 * and its inverse: the receiving process takes exactly those variables. */
void wire_put_aquila_env(struct wire *w);
void wire_apply_aquila_env(const char *block, size_t len);

#endif
