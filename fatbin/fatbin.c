/* The in-memory fat binary: creation, deep copies of kernels and code
 * objects, lookup, and the semantic validation shared by writer and reader. */
#include "aquila/fatbin.h"
#include "fatbin_format.h"

#include <CL/cl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || errlen == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static char *dup_or_empty(const char *s) {
  return strdup(s ? s : "");
}

static int is_power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

struct aquila_fatbin *aquila_fatbin_create(uint32_t kind) {
  struct aquila_fatbin *fb = calloc(1, sizeof *fb);
  if (!fb) return NULL;
  fb->version = AQUILA_FATBIN_VERSION;
  fb->kind = kind;
  return fb;
}

void aquila_fatbin_footprint_free(struct aquila_fatbin_footprint *f) {
  if (!f) return;
  free(f->arg_state);
  free(f->forms);
  free(f);
}

struct aquila_fatbin_footprint *
aquila_fatbin_footprint_copy(const struct aquila_fatbin_footprint *f) {
  if (!f) return NULL;
  struct aquila_fatbin_footprint *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  *c = *f;
  c->arg_state = calloc(f->num_args ? f->num_args : 1, sizeof *c->arg_state);
  c->forms = calloc(f->num_forms ? f->num_forms : 1, sizeof *c->forms);
  if (!c->arg_state || !c->forms) {
    aquila_fatbin_footprint_free(c);
    return NULL;
  }
  if (f->num_args) memcpy(c->arg_state, f->arg_state, f->num_args * sizeof *c->arg_state);
  if (f->num_forms) memcpy(c->forms, f->forms, f->num_forms * sizeof *c->forms);
  return c;
}

int aquila_fatbin_footprint_check(const struct aquila_fatbin_footprint *f, uint32_t num_args,
                                  char *err, size_t errlen) {
  if (f->flags & ~AQUILA_FOOTPRINT_FLAGS) {
    set_err(err, errlen, "footprint: unknown flags 0x%x", f->flags);
    return -1;
  }
  if (f->num_args != num_args || (num_args && !f->arg_state)) {
    set_err(err, errlen, "footprint: %u argument states for %u arguments", f->num_args, num_args);
    return -1;
  }
  for (uint32_t i = 0; i < num_args; i++)
    if (f->arg_state[i] > AQUILA_FOOTPRINT_OVERWRITTEN) {
      set_err(err, errlen, "footprint: argument %u has unknown state %u", i, f->arg_state[i]);
      return -1;
    }
  if (f->num_forms > AQUILA_FOOTPRINT_MAX_FORMS || (f->num_forms && !f->forms)) {
    set_err(err, errlen, "footprint: %u forms (at most %u)", f->num_forms,
            AQUILA_FOOTPRINT_MAX_FORMS);
    return -1;
  }
  for (uint32_t i = 0; i < f->num_forms; i++) {
    const struct aquila_footprint_form *x = &f->forms[i];
    const char *why = NULL;
    if (x->kind > AQUILA_FOOTPRINT_FITS_SIGNED)
      why = "unknown kind";
    else if (x->kind == AQUILA_FOOTPRINT_WRITE &&
             (x->arg >= num_args || (f->arg_state[x->arg] != AQUILA_FOOTPRINT_IN_FORMS &&
                                     f->arg_state[x->arg] != AQUILA_FOOTPRINT_OVERWRITTEN)))
      why = "writes an argument not written in forms";
    else if (x->kind != AQUILA_FOOTPRINT_WRITE && (x->arg < 1 || x->arg > 64))
      why = "checks a width outside 1..64";
    else if (!x->work_dims || (x->work_dims & ~0xeu))
      why = "holds for work dimensions outside 1..3";
    else if (x->lo >= x->hi)
      why = "has an empty byte range";
    else if (x->num_terms > AQUILA_FOOTPRINT_MAX_TERMS)
      why = "has too many terms";
    for (uint32_t t = 0; !why && t < x->num_terms; t++) {
      const struct aquila_footprint_term *term = &x->terms[t];
      if (term->var >= AQUILA_FOOTPRINT_VARS) why = "has a term of an unknown variable";
      for (int j = 0; j < 3 && !why; j++) {
        uint32_t kind = term->factor[j] >> 8, index = term->factor[j] & 0xffu;
        if (!term->factor[j]) continue;
        if (kind == 0 || kind >= AQUILA_FOOTPRINT_FACTOR_KINDS || (term->factor[j] >> 16))
          why = "has a factor of an unknown kind";
        else if (kind <= AQUILA_FOOTPRINT_ARG_SEXT ? index >= num_args : index > 2)
          why = "has a factor of an unknown argument or dimension";
      }
    }
    if (why) {
      set_err(err, errlen, "footprint form %u %s", i, why);
      return -1;
    }
  }
  return 0;
}

static void free_kernel(struct aquila_fatbin_kernel *k) {
  aquila_fatbin_footprint_free(k->footprint);
  for (uint32_t i = 0; k->args && i < k->num_args; i++) {
    free(k->args[i].name);
    free(k->args[i].type_name);
  }
  free(k->args);
  free(k->name);
  free(k->vec_type_hint);
  free(k->attributes);
  memset(k, 0, sizeof *k);
}

void aquila_fatbin_destroy(struct aquila_fatbin *fb) {
  if (!fb) return;
  for (uint32_t i = 0; fb->kernels && i < fb->num_kernels; i++)
    free_kernel(&fb->kernels[i]);
  free(fb->kernels);
  for (uint32_t i = 0; fb->codes && i < fb->num_codes; i++) {
    free(fb->codes[i].target);
    free(fb->codes[i].data);
  }
  free(fb->codes);
  free(fb->source);
  free(fb->build_options);
  free(fb);
}

const char *fatbin_target_name_problem(const char *target) {
  if (!target || !*target) return "target name is empty";
  size_t len = strlen(target);
  if (len > FATBIN_MAX_TARGET_LEN) return "target name is longer than 255 bytes";
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)target[i];
    /* Printable, no spaces: the name is also a section name and a command
     * line argument of clfatbin. */
    if (c <= 0x20 || c >= 0x7f) return "target name has a space or non-printable byte";
  }
  return NULL;
}

const struct aquila_fatbin_code *aquila_fatbin_find_code(const struct aquila_fatbin *fb,
                                                         const char *target) {
  if (!fb || !target) return NULL;
  for (uint32_t i = 0; i < fb->num_codes; i++)
    if (strcmp(fb->codes[i].target, target) == 0) return &fb->codes[i];
  return NULL;
}

const struct aquila_fatbin_kernel *aquila_fatbin_find_kernel(const struct aquila_fatbin *fb,
                                                             const char *name) {
  if (!fb || !name) return NULL;
  for (uint32_t i = 0; i < fb->num_kernels; i++)
    if (strcmp(fb->kernels[i].name, name) == 0) return &fb->kernels[i];
  return NULL;
}

int aquila_fatbin_add_code(struct aquila_fatbin *fb, const char *target, const void *data,
                           size_t size) {
  if (!fb || fatbin_target_name_problem(target) || (!data && size > 0)) return -1;
  /* malloc(0) may return NULL; keep one byte so data is never NULL. */
  void *copy = malloc(size ? size : 1);
  if (!copy) return -1;
  if (size) memcpy(copy, data, size);
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    if (strcmp(fb->codes[i].target, target) == 0) {
      free(fb->codes[i].data);
      fb->codes[i].data = copy;
      fb->codes[i].size = size;
      return 0;
    }
  }
  if (fb->num_codes == UINT32_MAX) goto fail;
  char *name = strdup(target);
  if (!name) goto fail;
  struct aquila_fatbin_code *codes = realloc(fb->codes, (fb->num_codes + 1) * sizeof *codes);
  if (!codes) {
    free(name);
    goto fail;
  }
  fb->codes = codes;
  codes[fb->num_codes].target = name;
  codes[fb->num_codes].data = copy;
  codes[fb->num_codes].size = size;
  fb->num_codes++;
  return 0;
fail:
  free(copy);
  return -1;
}

int aquila_fatbin_remove_code(struct aquila_fatbin *fb, const char *target) {
  if (!fb || !target) return -1;
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    if (strcmp(fb->codes[i].target, target) != 0) continue;
    free(fb->codes[i].target);
    free(fb->codes[i].data);
    /* Keep the order of the others: it is the order they are written in. */
    memmove(&fb->codes[i], &fb->codes[i + 1], (fb->num_codes - i - 1) * sizeof *fb->codes);
    fb->num_codes--;
    return 0;
  }
  return -1;
}

int aquila_fatbin_add_kernel(struct aquila_fatbin *fb, const struct aquila_fatbin_kernel *kernel) {
  if (!fb || !kernel || !kernel->name || !*kernel->name) return -1;
  if (kernel->num_args > 0 && !kernel->args) return -1;
  if (aquila_fatbin_find_kernel(fb, kernel->name)) return -1;
  if (fb->num_kernels == UINT32_MAX) return -1;

  struct aquila_fatbin_kernel k = *kernel;
  k.args = NULL;
  k.name = strdup(kernel->name);
  k.attributes = dup_or_empty(kernel->attributes);
  k.vec_type_hint = kernel->vec_type_hint ? strdup(kernel->vec_type_hint) : NULL;
  k.footprint = NULL;
  /* free_kernel walks num_args entries of args; start from zero. */
  k.num_args = 0;
  if (!k.name || !k.attributes || (kernel->vec_type_hint && !k.vec_type_hint)) goto fail;
  if (kernel->footprint && !(k.footprint = aquila_fatbin_footprint_copy(kernel->footprint)))
    goto fail;
  if (kernel->num_args) {
    k.args = calloc(kernel->num_args, sizeof *k.args);
    if (!k.args) goto fail;
    for (uint32_t i = 0; i < kernel->num_args; i++) {
      k.args[i] = kernel->args[i];
      k.args[i].name = dup_or_empty(kernel->args[i].name);
      k.args[i].type_name = dup_or_empty(kernel->args[i].type_name);
      k.num_args = i + 1;
      if (!k.args[i].name || !k.args[i].type_name) goto fail;
    }
  }
  struct aquila_fatbin_kernel *kernels =
      realloc(fb->kernels, (fb->num_kernels + 1) * sizeof *kernels);
  if (!kernels) goto fail;
  fb->kernels = kernels;
  kernels[fb->num_kernels++] = k;
  return 0;
fail:
  free_kernel(&k);
  return -1;
}

int aquila_fatbin_set_source(struct aquila_fatbin *fb, const char *source, const char *options) {
  if (!fb) return -1;
  char *s = source ? strdup(source) : NULL;
  char *o = options ? strdup(options) : NULL;
  if ((source && !s) || (options && !o)) {
    free(s);
    free(o);
    return -1;
  }
  free(fb->source);
  free(fb->build_options);
  fb->source = s;
  fb->build_options = o;
  return 0;
}

static int valid_address_qualifier(uint32_t kind, uint32_t q) {
  switch (kind) {
  case AQUILA_ARG_VALUE:
  case AQUILA_ARG_SAMPLER:
    return q == CL_KERNEL_ARG_ADDRESS_PRIVATE;
  case AQUILA_ARG_GLOBAL_PTR:
  case AQUILA_ARG_IMAGE: /* OpenCL reports images as __global */
    return q == CL_KERNEL_ARG_ADDRESS_GLOBAL;
  case AQUILA_ARG_CONSTANT_PTR:
    return q == CL_KERNEL_ARG_ADDRESS_CONSTANT;
  case AQUILA_ARG_LOCAL_PTR:
    return q == CL_KERNEL_ARG_ADDRESS_LOCAL;
  }
  return 0;
}

static int valid_access_qualifier(uint32_t kind, uint32_t q) {
  if (kind != AQUILA_ARG_IMAGE) return q == CL_KERNEL_ARG_ACCESS_NONE;
  return q == CL_KERNEL_ARG_ACCESS_READ_ONLY || q == CL_KERNEL_ARG_ACCESS_WRITE_ONLY ||
         q == CL_KERNEL_ARG_ACCESS_READ_WRITE;
}

/* CL_KERNEL_ARG_TYPE_PIPE (OpenCL 2.0) is 1 << 3; accepted so a 2.0 front end
 * does not make unreadable binaries. */
#define KNOWN_TYPE_QUALIFIERS                                                                      \
  ((uint64_t)CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_RESTRICT |                              \
   CL_KERNEL_ARG_TYPE_VOLATILE | (1u << 3))

int fatbin_check_kernel(const struct aquila_fatbin_kernel *k, char *err, size_t errlen) {
  if (!k->name || !*k->name) {
    set_err(err, errlen, "kernel with an empty name");
    return -1;
  }
  if (k->num_args > 0 && !k->args) {
    set_err(err, errlen, "kernel %s: %u arguments but no argument array", k->name, k->num_args);
    return -1;
  }
  if (!is_power_of_two(k->kernarg_alignment) || k->kernarg_alignment > FATBIN_MAX_ALIGNMENT) {
    set_err(err, errlen, "kernel %s: kernarg alignment %u is not a power of two up to %u", k->name,
            k->kernarg_alignment, FATBIN_MAX_ALIGNMENT);
    return -1;
  }
  if (k->hidden_kernarg_offset > k->kernarg_size) {
    set_err(err, errlen, "kernel %s: hidden kernarg offset %u is past the kernarg size %u", k->name,
            k->hidden_kernarg_offset, k->kernarg_size);
    return -1;
  }
  for (uint32_t i = 0; i < k->num_args; i++) {
    const struct aquila_fatbin_arg *a = &k->args[i];
    if (a->kind > AQUILA_ARG_SAMPLER) {
      set_err(err, errlen, "kernel %s argument %u: unknown kind %u", k->name, i, a->kind);
      return -1;
    }
    if (!valid_address_qualifier(a->kind, a->address_qualifier)) {
      set_err(err, errlen, "kernel %s argument %u: address qualifier 0x%x does not fit kind %u",
              k->name, i, a->address_qualifier, a->kind);
      return -1;
    }
    if (!valid_access_qualifier(a->kind, a->access_qualifier)) {
      set_err(err, errlen, "kernel %s argument %u: access qualifier 0x%x does not fit kind %u",
              k->name, i, a->access_qualifier, a->kind);
      return -1;
    }
    if (a->type_qualifier & ~KNOWN_TYPE_QUALIFIERS) {
      set_err(err, errlen, "kernel %s argument %u: unknown type qualifier bits 0x%llx", k->name, i,
              (unsigned long long)(a->type_qualifier & ~KNOWN_TYPE_QUALIFIERS));
      return -1;
    }
    if (!is_power_of_two(a->alignment) || a->alignment > FATBIN_MAX_ALIGNMENT) {
      set_err(err, errlen, "kernel %s argument %u: alignment %u is not a power of two up to %u",
              k->name, i, a->alignment, FATBIN_MAX_ALIGNMENT);
      return -1;
    }
    if (a->offset % a->alignment != 0) {
      set_err(err, errlen, "kernel %s argument %u: offset %u is not a multiple of alignment %u",
              k->name, i, a->offset, a->alignment);
      return -1;
    }
    if ((uint64_t)a->offset + a->size > k->kernarg_size) {
      set_err(err, errlen, "kernel %s argument %u: bytes %u..%llu lie outside the kernarg size %u",
              k->name, i, a->offset, (unsigned long long)a->offset + a->size, k->kernarg_size);
      return -1;
    }
  }
  if (k->footprint) {
    char why[200];
    if (aquila_fatbin_footprint_check(k->footprint, k->num_args, why, sizeof why)) {
      set_err(err, errlen, "kernel %s: %s", k->name, why);
      return -1;
    }
  }
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Finds a repeated name by sorting, so hostile inputs with tens of thousands
 * of entries cost n log n, not n squared. Returns 1 with *dup set, 0 if all
 * differ, -1 on no memory. */
static int find_duplicate(const char **names, size_t n, const char **dup) {
  if (n < 2) return 0;
  qsort(names, n, sizeof *names, compare_names);
  for (size_t i = 1; i < n; i++) {
    if (strcmp(names[i - 1], names[i]) == 0) {
      *dup = names[i];
      return 1;
    }
  }
  return 0;
}

int aquila_fatbin_validate(const struct aquila_fatbin *fb, char *err, size_t errlen) {
  if (!fb) {
    set_err(err, errlen, "no fat binary");
    return -1;
  }
  if (fb->kind < AQUILA_FATBIN_EXECUTABLE || fb->kind > AQUILA_FATBIN_LIBRARY) {
    set_err(err, errlen, "unknown binary kind %u", fb->kind);
    return -1;
  }
  if ((fb->num_kernels && !fb->kernels) || (fb->num_codes && !fb->codes)) {
    set_err(err, errlen, "counts without arrays");
    return -1;
  }
  for (uint32_t i = 0; i < fb->num_kernels; i++) {
    if (fatbin_check_kernel(&fb->kernels[i], err, errlen)) return -1;
  }
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    const char *problem = fatbin_target_name_problem(fb->codes[i].target);
    if (problem) {
      set_err(err, errlen, "code object %u: %s", i, problem);
      return -1;
    }
    if (!fb->codes[i].data && fb->codes[i].size) {
      set_err(err, errlen, "code object %s has no data", fb->codes[i].target);
      return -1;
    }
  }
  size_t most = fb->num_kernels > fb->num_codes ? fb->num_kernels : fb->num_codes;
  const char **names = malloc((most ? most : 1) * sizeof *names);
  if (!names) {
    set_err(err, errlen, "out of memory");
    return -1;
  }
  const char *dup = NULL;
  for (uint32_t i = 0; i < fb->num_kernels; i++)
    names[i] = fb->kernels[i].name;
  int found = find_duplicate(names, fb->num_kernels, &dup);
  if (found > 0) set_err(err, errlen, "kernel %s appears twice", dup);
  if (!found) {
    for (uint32_t i = 0; i < fb->num_codes; i++)
      names[i] = fb->codes[i].target;
    found = find_duplicate(names, fb->num_codes, &dup);
    if (found > 0) set_err(err, errlen, "target %s appears twice", dup);
  }
  free(names);
  return found ? -1 : 0;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t size) {
  const unsigned char *p = data;
  for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

uint64_t fatbin_digest_section(uint64_t digest, const char *name, const void *data, size_t size) {
  unsigned char le[8];
  for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)size >> (8 * i));
  digest = fnv1a(digest, name, strlen(name) + 1);
  digest = fnv1a(digest, le, sizeof le);
  return fnv1a(digest, data, size);
}
