/* The message format between libaquila.so and aquila-compiler (helper_wire.h):
 * encoding, decoding, and sending over a socket with a time limit. */
#include "helper/helper_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Larger than any program a build may carry, smaller than what a corrupt
 * length could make us allocate. */
#define WIRE_MAX_MESSAGE ((uint64_t)1 << 31)
#define WIRE_NULL UINT64_MAX

extern char **environ;

static void put_raw(struct wire *w, const void *data, size_t len) {
  if (w->failed) return;
  if (w->len + len > w->cap) {
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + len)
      cap *= 2;
    char *grown = realloc(w->data, cap);
    if (!grown) {
      w->failed = 1;
      return;
    }
    w->data = grown;
    w->cap = cap;
  }
  if (len) memcpy(w->data + w->len, data, len);
  w->len += len;
}

void wire_put_u64(struct wire *w, uint64_t v) {
  put_raw(w, &v, sizeof v);
}

void wire_put_bytes(struct wire *w, const void *data, size_t len) {
  wire_put_u64(w, len);
  put_raw(w, data, len);
  put_raw(w, "", 1); /* so that a string field reads back NUL-terminated */
}

void wire_put_str(struct wire *w, const char *s) {
  if (!s) {
    wire_put_u64(w, WIRE_NULL);
    return;
  }
  wire_put_bytes(w, s, strlen(s));
}

uint64_t wire_get_u64(struct wire *w) {
  uint64_t v = 0;
  if (w->failed || w->len - w->pos < sizeof v) {
    w->failed = 1;
    return 0;
  }
  memcpy(&v, w->data + w->pos, sizeof v);
  w->pos += sizeof v;
  return v;
}

static const char *get_field(struct wire *w, size_t *len, int *is_null) {
  uint64_t n = wire_get_u64(w);
  *is_null = n == WIRE_NULL;
  if (w->failed || *is_null) return NULL;
  if (n >= w->len - w->pos || w->data[w->pos + n] != 0) {
    w->failed = 1;
    return NULL;
  }
  const char *p = w->data + w->pos;
  w->pos += n + 1;
  *len = n;
  return p;
}

const char *wire_get_str(struct wire *w) {
  size_t len;
  int is_null;
  const char *s = get_field(w, &len, &is_null);
  if (s && memchr(s, 0, len)) w->failed = 1;
  return w->failed ? NULL : s;
}

const void *wire_get_bytes(struct wire *w, size_t *len) {
  int is_null;
  *len = 0;
  const char *p = get_field(w, len, &is_null);
  if (is_null) w->failed = 1;
  return w->failed ? NULL : p;
}

const void *wire_get_bytes_or_null(struct wire *w, size_t *len) {
  int is_null;
  *len = 0;
  const char *p = get_field(w, len, &is_null);
  return w->failed ? NULL : p;
}

void wire_free(struct wire *w) {
  free(w->data);
  memset(w, 0, sizeof *w);
}

static int send_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int wire_send(int fd, const struct wire *w) {
  if (w->failed) {
    errno = ENOMEM;
    return -1;
  }
  uint64_t len = w->len;
  if (send_all(fd, &len, sizeof len)) return -1;
  return send_all(fd, w->data, w->len);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int recv_all(int fd, void *data, size_t len, int64_t deadline) {
  char *p = data;
  while (len) {
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      struct pollfd pfd = {.fd = fd, .events = POLLIN};
      int r = left > 0 ? poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left) : 0;
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return -1;
      if (r == 0) {
        if (now_ms() < deadline) continue;
        errno = ETIMEDOUT;
        return -1;
      }
    }
    ssize_t n = recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) {
      errno = EPIPE;
      return -1;
    }
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int wire_recv(int fd, struct wire *w, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  uint64_t len;
  if (recv_all(fd, &len, sizeof len, deadline)) return -1;
  if (len > WIRE_MAX_MESSAGE) {
    errno = EMSGSIZE;
    return -1;
  }
  w->data = malloc(len ? len : 1);
  if (!w->data) {
    errno = ENOMEM;
    return -1;
  }
  w->cap = w->len = len;
  w->pos = 0;
  w->failed = 0;
  return recv_all(fd, w->data, len, deadline);
}

void wire_put_aquila_env(struct wire *w) {
  struct wire block = {0};
  for (char **e = environ; e && *e; e++)
    if (!strncmp(*e, "AQUILA_", 7)) put_raw(&block, *e, strlen(*e) + 1);
  if (block.failed) w->failed = 1;
  wire_put_bytes(w, block.data, block.len);
  wire_free(&block);
}

void wire_apply_aquila_env(const char *block, size_t len) {
  /* Drop ours first: a variable the caller unset must be unset here too. */
  size_t count = 0;
  for (char **e = environ; e && *e; e++)
    count += !strncmp(*e, "AQUILA_", 7);
  char **names = calloc(count + 1, sizeof *names);
  size_t k = 0;
  for (char **e = environ; names && e && *e && k < count; e++)
    if (!strncmp(*e, "AQUILA_", 7)) names[k++] = strndup(*e, strcspn(*e, "="));
  for (size_t i = 0; i < k; i++) {
    if (names[i]) unsetenv(names[i]);
    free(names[i]);
  }
  free(names);
  for (size_t i = 0; i < len;) {
    const char *entry = block + i;
    size_t n = strnlen(entry, len - i);
    const char *eq = memchr(entry, '=', n);
    if (eq && (size_t)(eq - entry) < 256) {
      char name[256];
      memcpy(name, entry, (size_t)(eq - entry));
      name[eq - entry] = 0;
      char *value = strndup(eq + 1, n - (size_t)(eq - entry) - 1);
      if (value) setenv(name, value, 1);
      free(value);
    }
    i += n + 1;
  }
}
