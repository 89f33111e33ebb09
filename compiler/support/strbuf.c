/* A growable string for build logs and command lines. Allocation failure
 * aborts: a build log is never worth corrupting state over. */
#include "support/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void strbuf_reserve(struct strbuf *sb, size_t extra) {
  if (sb->len + extra + 1 <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap : 256;
  while (cap < sb->len + extra + 1) cap *= 2;
  char *data = realloc(sb->data, cap);
  if (!data) abort();
  sb->data = data;
  sb->cap = cap;
}

void strbuf_appendn(struct strbuf *sb, const char *s, size_t n) {
  strbuf_reserve(sb, n);
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = 0;
}

void strbuf_append(struct strbuf *sb, const char *s) {
  strbuf_appendn(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  strbuf_reserve(sb, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->len += (size_t)n;
}

char *strbuf_take(struct strbuf *sb) {
  char *s = sb->data ? sb->data : strdup("");
  if (!s) abort();
  sb->data = NULL;
  sb->len = sb->cap = 0;
  return s;
}

void strbuf_free(struct strbuf *sb) {
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}
