/* Reads and validates a fat binary image. The raw ELF structure is checked
 * first (header, section table and section bounds, string table), so libelf
 * only ever sees a well-formed container; then .aquila.meta is decoded field
 * by field against the bytes that remain. */
#include "aquila/fatbin.h"
#include "fatbin_format.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct reader {
  char *err;
  size_t errlen;
};

static int fail(struct reader *r, const char *fmt, ...) {
  if (r->err && r->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

static uint16_t le16(const unsigned char *p) {
  return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* Offsets of the Elf64_Ehdr and Elf64_Shdr fields, read byte by byte so the
 * checks depend neither on host byte order nor on alignment. */
enum {
  EH_TYPE = 16,
  EH_MACHINE = 18,
  EH_VERSION = 20,
  EH_PHOFF = 32,
  EH_SHOFF = 40,
  EH_FLAGS = 48,
  EH_EHSIZE = 52,
  EH_PHNUM = 56,
  EH_SHENTSIZE = 58,
  EH_SHNUM = 60,
  EH_SHSTRNDX = 62,
  SH_NAME = 0,
  SH_TYPE = 4,
  SH_OFFSET = 24,
  SH_SIZE = 32,
};

int aquila_fatbin_is_fatbin(const void *data, size_t size) {
  const unsigned char *p = data;
  if (!p || size < sizeof(Elf64_Ehdr)) return 0;
  return memcmp(p, ELFMAG, SELFMAG) == 0 && p[EI_CLASS] == ELFCLASS64 &&
         p[EI_DATA] == ELFDATA2LSB && p[EI_VERSION] == EV_CURRENT && le16(p + EH_TYPE) == ET_REL &&
         le16(p + EH_MACHINE) == EM_NONE && le32(p + EH_FLAGS) == FATBIN_ELF_FLAGS;
}

/* Everything about the container that libelf would otherwise trust. */
static int check_container(struct reader *r, const unsigned char *p, size_t size) {
  if (size < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0) return fail(r, "not an ELF file");
  if (size < sizeof(Elf64_Ehdr)) return fail(r, "truncated ELF header (%zu bytes)", size);
  if (p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != ELFDATA2LSB)
    return fail(r, "not a 64-bit little-endian ELF file");
  if (p[EI_VERSION] != EV_CURRENT || le32(p + EH_VERSION) != EV_CURRENT)
    return fail(r, "unknown ELF version");
  if (le16(p + EH_TYPE) != ET_REL || le16(p + EH_MACHINE) != EM_NONE ||
      le32(p + EH_FLAGS) != FATBIN_ELF_FLAGS)
    return fail(r, "ELF file is not an Aquila fat binary");
  if (le16(p + EH_EHSIZE) != sizeof(Elf64_Ehdr)) return fail(r, "bad ELF header size");
  if (le16(p + EH_PHNUM) != 0 || le64(p + EH_PHOFF) != 0)
    return fail(r, "fat binary has program headers");
  if (le16(p + EH_SHENTSIZE) != sizeof(Elf64_Shdr)) return fail(r, "bad section header size");

  uint64_t shoff = le64(p + EH_SHOFF);
  uint32_t shnum = le16(p + EH_SHNUM);
  uint32_t shstrndx = le16(p + EH_SHSTRNDX);
  /* Extended numbering (counts in section 0) is never written: at most a few
   * hundred sections, so a zero or reserved count is refused. */
  if (shnum < 2 || shnum >= SHN_LORESERVE) return fail(r, "bad section count %u", shnum);
  if (shoff < sizeof(Elf64_Ehdr) || shoff > size ||
      (uint64_t)shnum * sizeof(Elf64_Shdr) > size - shoff)
    return fail(r, "section header table lies outside the file");
  if (shstrndx == 0 || shstrndx >= shnum)
    return fail(r, "bad section name table index %u", shstrndx);

  const unsigned char *sh0 = p + shoff;
  for (size_t i = 0; i < sizeof(Elf64_Shdr); i++)
    if (sh0[i] != 0) return fail(r, "section 0 is not empty");

  uint64_t strtab_size = 0;
  for (uint32_t i = 1; i < shnum; i++) {
    const unsigned char *sh = p + shoff + (uint64_t)i * sizeof(Elf64_Shdr);
    uint32_t type = le32(sh + SH_TYPE);
    uint64_t off = le64(sh + SH_OFFSET), sz = le64(sh + SH_SIZE);
    if (type != SHT_NOBITS && (off > size || sz > size - off))
      return fail(r, "section %u (offset %llu, size %llu) lies outside the %zu-byte file", i,
                  (unsigned long long)off, (unsigned long long)sz, size);
    if (i == shstrndx) {
      if (type != SHT_STRTAB || sz == 0) return fail(r, "bad section name table");
      if (p[off + sz - 1] != 0) return fail(r, "section name table is not NUL-terminated");
      strtab_size = sz;
    }
  }
  for (uint32_t i = 1; i < shnum; i++) {
    const unsigned char *sh = p + shoff + (uint64_t)i * sizeof(Elf64_Shdr);
    if (le32(sh + SH_NAME) >= strtab_size)
      return fail(r, "section %u name lies outside the name table", i);
  }
  return 0;
}

/* A cursor over bytes that have not been decoded yet. */
struct cursor {
  const unsigned char *p;
  size_t left;
};

static int get_u32(struct reader *r, struct cursor *c, uint32_t *v, const char *what) {
  if (c->left < 4) return fail(r, "truncated %s", what);
  *v = le32(c->p);
  c->p += 4;
  c->left -= 4;
  return 0;
}

static int get_u64(struct reader *r, struct cursor *c, uint64_t *v, const char *what) {
  if (c->left < 8) return fail(r, "truncated %s", what);
  *v = le64(c->p);
  c->p += 8;
  c->left -= 8;
  return 0;
}

/* A length-prefixed string followed by a NUL; optional ones may be absent. */
static int get_string(struct reader *r, struct cursor *c, char **out, int optional,
                      const char *what) {
  uint32_t len = 0;
  *out = NULL;
  if (get_u32(r, c, &len, what)) return -1;
  if (len == FATBIN_ABSENT_STRING) {
    if (optional) return 0;
    return fail(r, "%s is missing", what);
  }
  if (len >= c->left) return fail(r, "%s (%u bytes) runs past its record", what, len);
  if (c->p[len] != 0) return fail(r, "%s is not NUL-terminated", what);
  if (memchr(c->p, 0, len)) return fail(r, "%s has an embedded NUL", what);
  *out = malloc((size_t)len + 1);
  if (!*out) return fail(r, "out of memory");
  memcpy(*out, c->p, (size_t)len + 1);
  c->p += (size_t)len + 1;
  c->left -= (size_t)len + 1;
  return 0;
}

/* Splits off a record: its length, then exactly that many bytes. */
static int get_record(struct reader *r, struct cursor *c, struct cursor *rec, const char *what) {
  uint32_t len = 0;
  if (get_u32(r, c, &len, what)) return -1;
  if (len > c->left)
    return fail(r, "%s (%u bytes) runs past the %zu bytes that remain", what, len, c->left);
  rec->p = c->p;
  rec->left = len;
  c->p += len;
  c->left -= len;
  return 0;
}

static int parse_arg(struct reader *r, struct cursor *c, struct aquila_fatbin_arg *a,
                     const char *kname, uint32_t index) {
  char what[64];
  snprintf(what, sizeof what, "argument %u record", index);
  struct cursor rec;
  if (get_record(r, c, &rec, what)) return -1;
  if (get_string(r, &rec, &a->name, 0, "argument name") ||
      get_string(r, &rec, &a->type_name, 0, "argument type name") ||
      get_u32(r, &rec, &a->kind, "argument kind") ||
      get_u32(r, &rec, &a->address_qualifier, "argument address qualifier") ||
      get_u32(r, &rec, &a->access_qualifier, "argument access qualifier") ||
      get_u64(r, &rec, &a->type_qualifier, "argument type qualifier") ||
      get_u32(r, &rec, &a->size, "argument size") ||
      get_u32(r, &rec, &a->alignment, "argument alignment") ||
      get_u32(r, &rec, &a->offset, "argument offset"))
    return -1;
  if (rec.left)
    return fail(r, "kernel %s argument %u record has %zu trailing bytes", kname, index, rec.left);
  return 0;
}

/* Version 2's footprint: counts checked against the bytes that remain
 * before anything is allocated, then the rules of
 * aquila_fatbin_footprint_check. */
#define FOOTPRINT_MIN_FORM (4u * 3u + 8u * 2u + 4u)
static int parse_footprint(struct reader *r, struct cursor *rec, struct aquila_fatbin_kernel *k) {
  uint32_t present;
  if (get_u32(r, rec, &present, "footprint flag")) return -1;
  if (present > 1) return fail(r, "kernel %s: footprint flag %u is not 0 or 1", k->name, present);
  if (!present) return 0;
  struct aquila_fatbin_footprint *f = calloc(1, sizeof *f);
  if (!f) return fail(r, "out of memory");
  k->footprint = f;
  uint32_t num_args, num_forms;
  if (get_u32(r, rec, &f->flags, "footprint flags") ||
      get_u32(r, rec, &num_args, "footprint argument count"))
    return -1;
  if (num_args != k->num_args)
    return fail(r, "kernel %s: footprint for %u arguments, the kernel has %u", k->name, num_args,
                k->num_args);
  if (num_args > rec->left / 4)
    return fail(r, "kernel %s: footprint runs past its record", k->name);
  f->arg_state = calloc(num_args ? num_args : 1, sizeof *f->arg_state);
  if (!f->arg_state) return fail(r, "out of memory");
  f->num_args = num_args;
  for (uint32_t i = 0; i < num_args; i++)
    if (get_u32(r, rec, &f->arg_state[i], "footprint argument state")) return -1;
  if (get_u32(r, rec, &num_forms, "footprint form count")) return -1;
  if (num_forms > AQUILA_FOOTPRINT_MAX_FORMS || num_forms > rec->left / FOOTPRINT_MIN_FORM)
    return fail(r, "kernel %s: footprint form count %u is too large", k->name, num_forms);
  f->forms = calloc(num_forms ? num_forms : 1, sizeof *f->forms);
  if (!f->forms) return fail(r, "out of memory");
  f->num_forms = num_forms;
  for (uint32_t i = 0; i < num_forms; i++) {
    struct aquila_footprint_form *x = &f->forms[i];
    uint64_t lo, hi;
    if (get_u32(r, rec, &x->kind, "footprint form kind") ||
        get_u32(r, rec, &x->arg, "footprint form argument") ||
        get_u32(r, rec, &x->work_dims, "footprint form dimensions") ||
        get_u64(r, rec, &lo, "footprint form start") ||
        get_u64(r, rec, &hi, "footprint form end") ||
        get_u32(r, rec, &x->num_terms, "footprint term count"))
      return -1;
    x->lo = (int64_t)lo;
    x->hi = (int64_t)hi;
    if (x->num_terms > AQUILA_FOOTPRINT_MAX_TERMS)
      return fail(r, "kernel %s: footprint form %u has %u terms (at most %u)", k->name, i,
                  x->num_terms, AQUILA_FOOTPRINT_MAX_TERMS);
    for (uint32_t t = 0; t < x->num_terms; t++) {
      uint64_t coef = 0;
      if (get_u64(r, rec, &coef, "footprint term coefficient") ||
          get_u32(r, rec, &x->terms[t].var, "footprint term variable") ||
          get_u32(r, rec, &x->terms[t].factor[0], "footprint term factor") ||
          get_u32(r, rec, &x->terms[t].factor[1], "footprint term factor") ||
          get_u32(r, rec, &x->terms[t].factor[2], "footprint term factor"))
        return -1;
      x->terms[t].coef = (int64_t)coef;
    }
  }
  char why[200];
  if (aquila_fatbin_footprint_check(f, k->num_args, why, sizeof why))
    return fail(r, "kernel %s: %s", k->name, why);
  return 0;
}

static int parse_kernel(struct reader *r, struct cursor *c, struct aquila_fatbin_kernel *k,
                        uint32_t index, uint32_t version) {
  char what[64];
  snprintf(what, sizeof what, "kernel %u record", index);
  struct cursor rec;
  if (get_record(r, c, &rec, what)) return -1;
  if (get_string(r, &rec, &k->name, 0, "kernel name") ||
      get_string(r, &rec, &k->vec_type_hint, 1, "vec_type_hint") ||
      get_string(r, &rec, &k->attributes, 0, "kernel attributes"))
    return -1;
  for (int i = 0; i < 3; i++)
    if (get_u32(r, &rec, &k->reqd_work_group_size[i], "reqd_work_group_size")) return -1;
  for (int i = 0; i < 3; i++)
    if (get_u32(r, &rec, &k->work_group_size_hint[i], "work_group_size_hint")) return -1;
  uint32_t num_args;
  if (get_u64(r, &rec, &k->local_mem_size, "local memory size") ||
      get_u32(r, &rec, &k->kernarg_size, "kernarg size") ||
      get_u32(r, &rec, &k->kernarg_alignment, "kernarg alignment") ||
      get_u32(r, &rec, &k->hidden_kernarg_offset, "hidden kernarg offset") ||
      get_u32(r, &rec, &num_args, "argument count"))
    return -1;
  /* Checked before allocating, so a hostile count cannot ask for memory. */
  if (num_args > rec.left / FATBIN_MIN_ARG_RECORD)
    return fail(r, "kernel %s: argument count %u does not fit in the %zu bytes that remain",
                k->name, num_args, rec.left);
  if (num_args) {
    k->args = calloc(num_args, sizeof *k->args);
    if (!k->args) return fail(r, "out of memory");
  }
  for (uint32_t i = 0; i < num_args; i++) {
    /* Counted before parsing so destroy frees a half-parsed argument. */
    k->num_args = i + 1;
    if (parse_arg(r, &rec, &k->args[i], k->name, i)) return -1;
  }
  if (version >= 2 && parse_footprint(r, &rec, k)) return -1;
  if (rec.left) return fail(r, "kernel %s record has %zu trailing bytes", k->name, rec.left);
  return 0;
}

static int parse_meta(struct reader *r, const unsigned char *p, size_t size,
                      struct aquila_fatbin *fb) {
  struct cursor c = {p, size};
  uint32_t version, num_kernels;
  if (get_u32(r, &c, &version, "fat binary version")) return -1;
  if (version == 0) return fail(r, "fat binary version 0 is invalid");
  if (version > AQUILA_FATBIN_VERSION)
    return fail(r, "fat binary version %u is newer than this reader (%u)", version,
                AQUILA_FATBIN_VERSION);
  fb->version = version;
  if (get_u32(r, &c, &fb->kind, "binary kind") || get_u32(r, &c, &num_kernels, "kernel count"))
    return -1;
  if (fb->kind < AQUILA_FATBIN_EXECUTABLE || fb->kind > AQUILA_FATBIN_LIBRARY)
    return fail(r, "unknown binary kind %u", fb->kind);
  if (num_kernels > c.left / FATBIN_MIN_KERNEL_RECORD)
    return fail(r, "kernel count %u does not fit in the %zu bytes that remain", num_kernels,
                c.left);
  if (num_kernels) {
    fb->kernels = calloc(num_kernels, sizeof *fb->kernels);
    if (!fb->kernels) return fail(r, "out of memory");
  }
  for (uint32_t i = 0; i < num_kernels; i++) {
    fb->num_kernels = i + 1;
    if (parse_kernel(r, &c, &fb->kernels[i], i, version)) return -1;
  }
  if (c.left) return fail(r, "%s has %zu trailing bytes", FATBIN_SECTION_META, c.left);
  return 0;
}

/* Source and options: text, one NUL at the very end and none before. */
static int get_text(struct reader *r, const Elf_Data *d, char **out, const char *what) {
  if (*out) return fail(r, "two %s sections", what);
  if (d->d_size == 0 || ((const char *)d->d_buf)[d->d_size - 1] != 0)
    return fail(r, "%s section is not NUL-terminated", what);
  if (memchr(d->d_buf, 0, d->d_size - 1)) return fail(r, "%s section has an embedded NUL", what);
  *out = malloc(d->d_size);
  if (!*out) return fail(r, "out of memory");
  memcpy(*out, d->d_buf, d->d_size);
  return 0;
}

static int add_code(struct reader *r, struct aquila_fatbin *fb, uint32_t capacity,
                    const char *target, const Elf_Data *d) {
  const char *problem = fatbin_target_name_problem(target);
  if (problem) return fail(r, "bad code section name: %s", problem);
  /* Repeated targets are caught by aquila_fatbin_validate, in n log n. */
  if (fb->num_codes >= capacity) return fail(r, "too many code sections");
  struct aquila_fatbin_code *code = &fb->codes[fb->num_codes];
  code->target = strdup(target);
  code->data = malloc(d->d_size ? d->d_size : 1);
  code->size = d->d_size;
  fb->num_codes++;
  if (!code->target || !code->data) return fail(r, "out of memory");
  if (d->d_size) memcpy(code->data, d->d_buf, d->d_size);
  return 0;
}

static pthread_once_t elf_init_once = PTHREAD_ONCE_INIT;
static int elf_ready;
static void elf_init(void) {
  elf_ready = elf_version(EV_CURRENT) != EV_NONE;
}

/* The section's bytes as stored, checked against the header libelf reports. */
static const Elf_Data *section_bytes(Elf_Scn *scn, const GElf_Shdr *sh) {
  Elf_Data *d = elf_rawdata(scn, NULL);
  if (!d) return NULL;
  if (d->d_size != sh->sh_size || (d->d_size && !d->d_buf)) return NULL;
  return d;
}

/* Last, once the structure is known to be sound: the digest over our
 * sections (see fatbin_format.h) must match. */
static int check_digest(struct reader *r, Elf *elf, size_t shnum, size_t shstrndx) {
  uint64_t digest = FATBIN_DIGEST_INIT;
  const Elf_Data *stored = NULL;
  for (size_t i = 1; i < shnum; i++) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) return fail(r, "libelf: %s", elf_errmsg(-1));
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || strncmp(name, ".aquila.", 8) != 0) continue;
    const Elf_Data *d = section_bytes(scn, &sh);
    if (!d) return fail(r, "cannot read section %s", name);
    if (!strcmp(name, FATBIN_SECTION_DIGEST)) {
      if (stored) return fail(r, "two %s sections", FATBIN_SECTION_DIGEST);
      stored = d;
      continue;
    }
    digest = fatbin_digest_section(digest, name, d->d_buf, d->d_size);
  }
  if (!stored) return fail(r, "no %s section: the fat binary is damaged", FATBIN_SECTION_DIGEST);
  if (stored->d_size != 8 || le64(stored->d_buf) != digest)
    return fail(r, "digest mismatch: the fat binary is damaged");
  return 0;
}

static int read_sections(struct reader *r, Elf *elf, struct aquila_fatbin *fb) {
  size_t shnum, shstrndx;
  if (elf_getshdrnum(elf, &shnum) || elf_getshdrstrndx(elf, &shstrndx))
    return fail(r, "libelf: %s", elf_errmsg(-1));

  /* The meta section first: its version decides how the rest is read. */
  const Elf_Data *meta = NULL;
  uint32_t num_code_sections = 0;
  for (size_t i = 1; i < shnum; i++) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) return fail(r, "libelf: %s", elf_errmsg(-1));
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) return fail(r, "section %zu has no name", i);
    int is_code =
        strncmp(name, FATBIN_SECTION_CODE_PREFIX, strlen(FATBIN_SECTION_CODE_PREFIX)) == 0;
    num_code_sections += is_code;
    if (strcmp(name, FATBIN_SECTION_META) != 0) continue;
    if (meta) return fail(r, "two %s sections", FATBIN_SECTION_META);
    if (sh.sh_type != SHT_PROGBITS) return fail(r, "%s is not SHT_PROGBITS", name);
    meta = section_bytes(scn, &sh);
    if (!meta) return fail(r, "cannot read section %s", name);
  }
  if (!meta) return fail(r, "no %s section", FATBIN_SECTION_META);
  if (parse_meta(r, meta->d_buf, meta->d_size, fb)) return -1;

  if (num_code_sections) {
    fb->codes = calloc(num_code_sections, sizeof *fb->codes);
    if (!fb->codes) return fail(r, "out of memory");
  }
  for (size_t i = 1; i < shnum; i++) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) return fail(r, "libelf: %s", elf_errmsg(-1));
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) return fail(r, "section %zu has no name", i);
    int is_code =
        strncmp(name, FATBIN_SECTION_CODE_PREFIX, strlen(FATBIN_SECTION_CODE_PREFIX)) == 0;
    int is_source = strcmp(name, FATBIN_SECTION_SOURCE) == 0;
    int is_options = strcmp(name, FATBIN_SECTION_OPTIONS) == 0;
    /* Other sections (.shstrtab, .comment, ...) are not ours: ignored. */
    if (!is_code && !is_source && !is_options) continue;
    if (sh.sh_type != SHT_PROGBITS) return fail(r, "%s is not SHT_PROGBITS", name);
    const Elf_Data *d = section_bytes(scn, &sh);
    if (!d) return fail(r, "cannot read section %s", name);
    if (is_code && add_code(r, fb, num_code_sections, name + strlen(FATBIN_SECTION_CODE_PREFIX), d))
      return -1;
    if (is_source && get_text(r, d, &fb->source, "source")) return -1;
    if (is_options && get_text(r, d, &fb->build_options, "build options")) return -1;
  }
  char why[256];
  if (aquila_fatbin_validate(fb, why, sizeof why)) return fail(r, "%s", why);
  return check_digest(r, elf, shnum, shstrndx);
}

int aquila_fatbin_read(const void *data, size_t size, struct aquila_fatbin **out, char *err,
                       size_t errlen) {
  struct reader r = {err, errlen};
  if (err && errlen) err[0] = 0;
  if (!out) return fail(&r, "no output pointer");
  *out = NULL;
  if (!data || size == 0) return fail(&r, "empty input");
  if (check_container(&r, data, size)) return -1;
  pthread_once(&elf_init_once, elf_init);
  if (!elf_ready) return fail(&r, "libelf: %s", elf_errmsg(-1));

  /* libelf may write into the image it reads (in-place conversions), and the
   * caller's buffer is const. */
  void *copy = malloc(size);
  if (!copy) return fail(&r, "out of memory");
  memcpy(copy, data, size);
  struct aquila_fatbin *fb = NULL;
  Elf *elf = elf_memory(copy, size);
  if (!elf) {
    fail(&r, "libelf: %s", elf_errmsg(-1));
    goto bad;
  }
  if (elf_kind(elf) != ELF_K_ELF) {
    fail(&r, "not an ELF file");
    goto bad;
  }
  fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
  if (!fb) {
    fail(&r, "out of memory");
    goto bad;
  }
  if (read_sections(&r, elf, fb)) goto bad;
  elf_end(elf);
  free(copy);
  *out = fb;
  return 0;
bad:
  aquila_fatbin_destroy(fb);
  if (elf) elf_end(elf);
  free(copy);
  return -1;
}
