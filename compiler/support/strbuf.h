/* A growable string for build logs and command lines. */
#ifndef AQUILA_COMPILER_STRBUF_H
#define AQUILA_COMPILER_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
  char *data; /* always NUL-terminated once anything was appended */
  size_t len, cap;
};

void strbuf_append(struct strbuf *sb, const char *s);
void strbuf_appendn(struct strbuf *sb, const char *s, size_t n);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the string over to the caller (never NULL) and empties sb. */
char *strbuf_take(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);

#endif
