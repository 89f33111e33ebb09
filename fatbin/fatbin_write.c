/* Serializes a fat binary: the .aquila.meta byte layout, and the ELF
 * container around it, laid out by libelf into an anonymous memory file. */
#include "aquila/fatbin.h"
#include "fatbin_format.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A growing byte buffer; once an append fails, every later one is ignored and
 * failed stays set, so callers check once at the end. */
struct bytes {
  unsigned char *data;
  size_t size, cap;
  int failed;
};

static void put(struct bytes *b, const void *p, size_t n) {
  if (b->failed) return;
  if (n > SIZE_MAX - b->size) {
    b->failed = 1;
    return;
  }
  if (b->size + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->size + n) {
      if (cap > SIZE_MAX / 2) {
        b->failed = 1;
        return;
      }
      cap *= 2;
    }
    unsigned char *d = realloc(b->data, cap);
    if (!d) {
      b->failed = 1;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

/* Little-endian regardless of the host, as ELFDATA2LSB promises. */
static void put_u32(struct bytes *b, uint32_t v) {
  unsigned char le[4] = {v, v >> 8, v >> 16, v >> 24};
  put(b, le, 4);
}

static void put_u64(struct bytes *b, uint64_t v) {
  put_u32(b, (uint32_t)v);
  put_u32(b, (uint32_t)(v >> 32));
}

static void patch_u32(struct bytes *b, size_t at, uint32_t v) {
  if (b->failed) return;
  unsigned char le[4] = {v, v >> 8, v >> 16, v >> 24};
  memcpy(b->data + at, le, 4);
}

static void put_string(struct bytes *b, const char *s) {
  if (!s) {
    put_u32(b, FATBIN_ABSENT_STRING);
    return;
  }
  size_t len = strlen(s);
  if (len >= FATBIN_ABSENT_STRING) {
    b->failed = 1;
    return;
  }
  put_u32(b, (uint32_t)len);
  put(b, s, len + 1);
}

/* A record starts with its length (the bytes after the length field). */
static size_t begin_record(struct bytes *b) {
  size_t at = b->size;
  put_u32(b, 0);
  return at;
}

static void end_record(struct bytes *b, size_t at) {
  if (b->failed) return;
  size_t len = b->size - at - 4;
  if (len > UINT32_MAX) {
    b->failed = 1;
    return;
  }
  patch_u32(b, at, (uint32_t)len);
}

static void put_kernel(struct bytes *b, const struct aquila_fatbin_kernel *k) {
  size_t rec = begin_record(b);
  put_string(b, k->name);
  put_string(b, k->vec_type_hint);
  put_string(b, k->attributes ? k->attributes : "");
  for (int i = 0; i < 3; i++)
    put_u32(b, k->reqd_work_group_size[i]);
  for (int i = 0; i < 3; i++)
    put_u32(b, k->work_group_size_hint[i]);
  put_u64(b, k->local_mem_size);
  put_u32(b, k->kernarg_size);
  put_u32(b, k->kernarg_alignment);
  put_u32(b, k->hidden_kernarg_offset);
  put_u32(b, k->num_args);
  for (uint32_t i = 0; i < k->num_args; i++) {
    const struct aquila_fatbin_arg *a = &k->args[i];
    size_t arec = begin_record(b);
    put_string(b, a->name ? a->name : "");
    put_string(b, a->type_name ? a->type_name : "");
    put_u32(b, a->kind);
    put_u32(b, a->address_qualifier);
    put_u32(b, a->access_qualifier);
    put_u64(b, a->type_qualifier);
    put_u32(b, a->size);
    put_u32(b, a->alignment);
    put_u32(b, a->offset);
    end_record(b, arec);
  }
  /* Version 2: the footprint, after a presence flag. */
  const struct aquila_fatbin_footprint *f = k->footprint;
  put_u32(b, f ? 1 : 0);
  if (f) {
    put_u32(b, f->flags);
    put_u32(b, f->num_args);
    for (uint32_t i = 0; i < f->num_args; i++)
      put_u32(b, f->arg_state[i]);
    put_u32(b, f->num_forms);
    for (uint32_t i = 0; i < f->num_forms; i++) {
      const struct aquila_footprint_form *x = &f->forms[i];
      put_u32(b, x->kind);
      put_u32(b, x->arg);
      put_u32(b, x->work_dims);
      put_u64(b, (uint64_t)x->lo);
      put_u64(b, (uint64_t)x->hi);
      put_u32(b, x->num_terms);
      for (uint32_t t = 0; t < x->num_terms; t++) {
        put_u64(b, (uint64_t)x->terms[t].coef);
        put_u32(b, x->terms[t].var);
        put_u32(b, x->terms[t].factor[0]);
        put_u32(b, x->terms[t].factor[1]);
        put_u32(b, x->terms[t].factor[2]);
      }
    }
  }
  end_record(b, rec);
}

static int serialize_meta(const struct aquila_fatbin *fb, struct bytes *b) {
  put_u32(b, AQUILA_FATBIN_VERSION);
  put_u32(b, fb->kind);
  put_u32(b, fb->num_kernels);
  for (uint32_t i = 0; i < fb->num_kernels; i++)
    put_kernel(b, &fb->kernels[i]);
  return b->failed ? -1 : 0;
}

static pthread_once_t elf_init_once = PTHREAD_ONCE_INIT;
static int elf_ready;
static void elf_init(void) {
  elf_ready = elf_version(EV_CURRENT) != EV_NONE;
}

/* Adds one section; name_offset indexes .shstrtab. data must outlive the
 * elf_update call (libelf does not copy). */
static int add_section(Elf *elf, size_t name_offset, Elf64_Word type, const void *data, size_t size,
                       size_t align) {
  Elf_Scn *scn = elf_newscn(elf);
  if (!scn) return -1;
  Elf_Data *d = elf_newdata(scn);
  if (!d) return -1;
  d->d_buf = (void *)data;
  d->d_size = size;
  d->d_align = align;
  d->d_type = ELF_T_BYTE;
  d->d_version = EV_CURRENT;
  GElf_Shdr sh;
  if (!gelf_getshdr(scn, &sh)) return -1;
  sh.sh_name = name_offset;
  sh.sh_type = type;
  sh.sh_flags = 0;
  sh.sh_addralign = align;
  return gelf_update_shdr(scn, &sh) ? 0 : -1;
}

/* Lays out the container with libelf into fd. */
static int write_elf(int fd, const struct aquila_fatbin *fb, const struct bytes *meta) {
  int rc = -1;
  struct bytes names = {0};
  size_t *code_names = calloc(fb->num_codes ? fb->num_codes : 1, sizeof *code_names);
  if (!code_names) return -1;

  /* .shstrtab: the empty name first, as ELF requires. */
  put(&names, "", 1);
  size_t shstrtab_name = names.size;
  put(&names, ".shstrtab", sizeof ".shstrtab");
  size_t meta_name = names.size;
  put(&names, FATBIN_SECTION_META, sizeof FATBIN_SECTION_META);
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    code_names[i] = names.size;
    put(&names, FATBIN_SECTION_CODE_PREFIX, strlen(FATBIN_SECTION_CODE_PREFIX));
    put(&names, fb->codes[i].target, strlen(fb->codes[i].target) + 1);
  }
  size_t source_name = names.size;
  put(&names, FATBIN_SECTION_SOURCE, sizeof FATBIN_SECTION_SOURCE);
  size_t options_name = names.size;
  put(&names, FATBIN_SECTION_OPTIONS, sizeof FATBIN_SECTION_OPTIONS);
  size_t digest_name = names.size;
  put(&names, FATBIN_SECTION_DIGEST, sizeof FATBIN_SECTION_DIGEST);
  if (names.failed) goto out;

  /* The digest covers the sections below, in the order they are written. */
  uint64_t digest = fatbin_digest_section(FATBIN_DIGEST_INIT, FATBIN_SECTION_META, meta->data,
                                          meta->size);
  char section_name[sizeof FATBIN_SECTION_CODE_PREFIX + FATBIN_MAX_TARGET_LEN + 1];
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    snprintf(section_name, sizeof section_name, "%s%s", FATBIN_SECTION_CODE_PREFIX,
             fb->codes[i].target);
    digest = fatbin_digest_section(digest, section_name, fb->codes[i].data, fb->codes[i].size);
  }
  if (fb->source)
    digest = fatbin_digest_section(digest, FATBIN_SECTION_SOURCE, fb->source,
                                   strlen(fb->source) + 1);
  if (fb->build_options)
    digest = fatbin_digest_section(digest, FATBIN_SECTION_OPTIONS, fb->build_options,
                                   strlen(fb->build_options) + 1);
  unsigned char digest_le[8];
  for (int i = 0; i < 8; i++) digest_le[i] = (unsigned char)(digest >> (8 * i));

  Elf *elf = elf_begin(fd, ELF_C_WRITE, NULL);
  if (!elf) goto out;
  Elf64_Ehdr *eh = elf64_newehdr(elf);
  if (!eh) goto out_elf;
  eh->e_ident[EI_CLASS] = ELFCLASS64;
  eh->e_ident[EI_DATA] = ELFDATA2LSB;
  eh->e_ident[EI_VERSION] = EV_CURRENT;
  eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
  eh->e_type = ET_REL;
  eh->e_machine = EM_NONE;
  eh->e_version = EV_CURRENT;
  eh->e_flags = FATBIN_ELF_FLAGS;

  if (add_section(elf, shstrtab_name, SHT_STRTAB, names.data, names.size, 1)) goto out_elf;
  eh->e_shstrndx = 1;
  if (add_section(elf, meta_name, SHT_PROGBITS, meta->data, meta->size, 8)) goto out_elf;
  /* 16-byte alignment lets a loader use a code object in place. */
  for (uint32_t i = 0; i < fb->num_codes; i++)
    if (add_section(elf, code_names[i], SHT_PROGBITS, fb->codes[i].data, fb->codes[i].size, 16))
      goto out_elf;
  if (fb->source &&
      add_section(elf, source_name, SHT_PROGBITS, fb->source, strlen(fb->source) + 1, 1))
    goto out_elf;
  if (fb->build_options && add_section(elf, options_name, SHT_PROGBITS, fb->build_options,
                                       strlen(fb->build_options) + 1, 1))
    goto out_elf;
  if (add_section(elf, digest_name, SHT_PROGBITS, digest_le, sizeof digest_le, 8)) goto out_elf;
  if (elf_update(elf, ELF_C_WRITE) < 0) goto out_elf;
  rc = 0;
out_elf:
  elf_end(elf);
out:
  free(names.data);
  free(code_names);
  return rc;
}

static int open_scratch_file(void) {
  int fd = memfd_create("aquila-fatbin", MFD_CLOEXEC);
  if (fd >= 0) return fd;
  /* Kernels without memfd: an unlinked temporary file does the same job. */
  FILE *f = tmpfile();
  if (!f) return -1;
  fd = dup(fileno(f));
  fclose(f);
  return fd;
}

int aquila_fatbin_write(const struct aquila_fatbin *fb, void **data, size_t *size) {
  if (!data || !size) return -1;
  *data = NULL;
  *size = 0;
  if (aquila_fatbin_validate(fb, NULL, 0)) return -1;
  pthread_once(&elf_init_once, elf_init);
  if (!elf_ready) return -1;

  struct bytes meta = {0};
  int rc = -1, fd = -1;
  unsigned char *image = NULL;
  if (serialize_meta(fb, &meta)) goto out;
  fd = open_scratch_file();
  if (fd < 0) goto out;
  if (write_elf(fd, fb, &meta)) goto out;
  struct stat st;
  if (fstat(fd, &st) || st.st_size <= 0) goto out;
  size_t n = (size_t)st.st_size;
  image = malloc(n);
  if (!image) goto out;
  for (size_t done = 0; done < n;) {
    ssize_t got = pread(fd, image + done, n - done, (off_t)done);
    if (got <= 0) goto out;
    done += (size_t)got;
  }
  *data = image;
  *size = n;
  image = NULL;
  rc = 0;
out:
  free(image);
  free(meta.data);
  if (fd >= 0) close(fd);
  return rc;
}
