/* The printf service of the CPU agent (cpu_abi.h): OpenCL C's printf,
 * called by kernels through aquila_cpu_services. It formats with the C
 * library, adding OpenCL's vector conversions (%v4hlf, %v2d, ...), writes
 * each call's output in one piece, and the agent flushes standard output
 * when a dispatch that printed completes, so that output is there by the
 * time the host sees the kernel finish. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hsa_internal.h"

static atomic_int printed_since_flush;

typedef char v2b __attribute__((vector_size(2)));
typedef char v4b __attribute__((vector_size(4)));
typedef char v8b __attribute__((vector_size(8)));
typedef char v16b __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef float v4f __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

struct out {
  char *data;
  size_t len, cap;
};

static void out_append(struct out *o, const char *s, size_t n) {
  if (o->len + n + 1 > o->cap) {
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + n + 1) cap *= 2;
    char *d = realloc(o->data, cap);
    if (!d) return;
    o->data = d;
    o->cap = cap;
  }
  memcpy(o->data + o->len, s, n);
  o->len += n;
  o->data[o->len] = 0;
}

/* Fetches a vector argument of total size bytes into buf. Vector arguments
 * travel by the x86-64 ABI of vector types, which va_arg of a vector type of
 * the same size follows. */
static int fetch_vector(va_list *ap, size_t bytes, unsigned char *buf, int is_float) {
  switch (bytes) {
  case 2: { v2b v = va_arg(*ap, v2b); memcpy(buf, &v, 2); return 0; }
  case 4: { v4b v = va_arg(*ap, v4b); memcpy(buf, &v, 4); return 0; }
  case 8:
    if (is_float) { v2f v = va_arg(*ap, v2f); memcpy(buf, &v, 8); }
    else { v8b v = va_arg(*ap, v8b); memcpy(buf, &v, 8); }
    return 0;
  case 16:
    if (is_float == 4) { v4f v = va_arg(*ap, v4f); memcpy(buf, &v, 16); }
    else if (is_float == 8) { v2d v = va_arg(*ap, v2d); memcpy(buf, &v, 16); }
    else { v16b v = va_arg(*ap, v16b); memcpy(buf, &v, 16); }
    return 0;
  case 32:
  case 64:
  case 128: {
    /* Vectors wider than 16 bytes reach a variadic call indirectly (the
     * kernel's call passes the address of its copy). */
    const void *p = va_arg(*ap, const void *);
    if (!p) return -1;
    memcpy(buf, p, bytes);
    return 0;
  }
  default: return -1;
  }
}

/* Formats one vector conversion: spec is the conversion without the vector
 * part (e.g. "%5.2f"), n the element count, elem the element size. */
static void format_vector(struct out *o, const char *spec, char conv, unsigned n, unsigned elem,
                          va_list *ap) {
  unsigned storage = n == 3 ? 4 : n;
  unsigned char buf[128] = {0};
  int is_float = strchr("fFeEgGaA", conv) ? (int)elem : 0;
  if (fetch_vector(ap, (size_t)storage * elem, buf, is_float)) return;
  char piece[512];
  for (unsigned i = 0; i < n; i++) {
    if (i) out_append(o, ",", 1);
    int len = 0;
    const unsigned char *p = buf + i * elem;
    if (is_float) {
      double v = elem == 4 ? (double)*(const float *)p : *(const double *)p;
      len = snprintf(piece, sizeof piece, spec, v);
    } else {
      long long sv = elem == 1 ? *(const int8_t *)p : elem == 2 ? *(const int16_t *)p
                   : elem == 4 ? *(const int32_t *)p : *(const int64_t *)p;
      unsigned long long uv = elem == 1 ? *(const uint8_t *)p : elem == 2 ? *(const uint16_t *)p
                            : elem == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
      /* spec carries "ll" so one formatter serves every width. */
      len = strchr("di", conv) ? snprintf(piece, sizeof piece, spec, sv)
                               : snprintf(piece, sizeof piece, spec, uv);
    }
    if (len > 0) out_append(o, piece, (size_t)len < sizeof piece ? (size_t)len : sizeof piece - 1);
  }
}

int aq_printf(const char *format, ...) {
  struct out o = {0};
  va_list ap;
  va_start(ap, format);
  const char *f = format;
  while (*f) {
    if (*f != '%') {
      const char *e = strchr(f, '%');
      size_t n = e ? (size_t)(e - f) : strlen(f);
      out_append(&o, f, n);
      f += n;
      continue;
    }
    if (f[1] == '%') {
      out_append(&o, "%", 1);
      f += 2;
      continue;
    }
    /* %[flags][width][.precision][vN][length]conversion */
    const char *start = f++;
    char flags[64];
    size_t fl = 0;
    while (*f && strchr("-+ #0", *f) && fl < 8) flags[fl++] = *f++;
    while (*f >= '0' && *f <= '9' && fl < 24) flags[fl++] = *f++;
    if (*f == '.') {
      flags[fl++] = *f++;
      while (*f >= '0' && *f <= '9' && fl < 40) flags[fl++] = *f++;
    }
    flags[fl] = 0;
    unsigned vec = 0;
    if (*f == 'v') {
      f++;
      vec = (unsigned)strtoul(f, (char **)&f, 10);
    }
    unsigned elem = 0; /* bytes, from the length modifier */
    if (f[0] == 'h' && f[1] == 'h') elem = 1, f += 2;
    else if (f[0] == 'h' && f[1] == 'l') elem = 4, f += 2;
    else if (f[0] == 'h') elem = 2, f += 1;
    else if (f[0] == 'l') elem = 8, f += 1;
    char conv = *f ? *f++ : 0;
    char spec[96];
    if (vec) {
      if (!(vec == 2 || vec == 3 || vec == 4 || vec == 8 || vec == 16) || !conv) break;
      int is_float = strchr("fFeEgGaA", conv) != NULL;
      if (!elem) elem = is_float ? 8 : 4;
      snprintf(spec, sizeof spec, "%%%s%s%c", flags, is_float ? "" : "ll", conv);
      format_vector(&o, spec, conv, vec, elem, &ap);
      continue;
    }
    char piece[1024];
    int len = 0;
    switch (conv) {
    case 'd':
    case 'i':
      snprintf(spec, sizeof spec, "%%%sll%c", flags, conv);
      len = snprintf(piece, sizeof piece, spec,
                     elem == 8 ? va_arg(ap, long long) : (long long)va_arg(ap, int));
      break;
    case 'o': case 'u': case 'x': case 'X':
      snprintf(spec, sizeof spec, "%%%sll%c", flags, conv);
      len = snprintf(piece, sizeof piece, spec,
                     elem == 8 ? va_arg(ap, unsigned long long)
                               : (unsigned long long)(elem == 1   ? (unsigned char)va_arg(ap, unsigned)
                                                      : elem == 2 ? (unsigned short)va_arg(ap, unsigned)
                                                                  : va_arg(ap, unsigned)));
      break;
    case 'c':
      snprintf(spec, sizeof spec, "%%%sc", flags);
      len = snprintf(piece, sizeof piece, spec, va_arg(ap, int));
      break;
    case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
      snprintf(spec, sizeof spec, "%%%s%c", flags, conv);
      len = snprintf(piece, sizeof piece, spec, va_arg(ap, double));
      break;
    case 's': {
      snprintf(spec, sizeof spec, "%%%ss", flags);
      const char *s = va_arg(ap, const char *);
      len = snprintf(piece, sizeof piece, spec, s ? s : "(null)");
      break;
    }
    case 'p':
      len = snprintf(piece, sizeof piece, "%p", va_arg(ap, void *));
      break;
    default:
      /* Not a conversion OpenCL C knows: print it as written. */
      out_append(&o, start, (size_t)(f - start));
      continue;
    }
    if (len > 0) out_append(&o, piece, (size_t)len < sizeof piece ? (size_t)len : sizeof piece - 1);
  }
  va_end(ap);
  /* OpenCL C's printf returns 0 once it has printed, -1 otherwise. */
  int written = 0;
  if (o.data) {
    flockfile(stdout);
    fwrite(o.data, 1, o.len, stdout);
    funlockfile(stdout);
    free(o.data);
  }
  atomic_store_explicit(&printed_since_flush, 1, memory_order_relaxed);
  return written;
}

void aq_printf_flush(void) {
  if (atomic_load_explicit(&printed_since_flush, memory_order_relaxed) &&
      atomic_exchange(&printed_since_flush, 0))
    fflush(stdout);
}
