/* Sample fat binaries for the fatbin tests, make_sample and the fuzzer's
 * seeds: one good program, and a table of ways to break its image, each with
 * a fragment of the error the reader must give. Header-only so that each
 * test program includes what it uses. */
#ifndef AQUILA_TEST_FATBIN_SAMPLE_H
#define AQUILA_TEST_FATBIN_SAMPLE_H

#include <CL/cl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/fatbin.h"

static const char sample_source[] =
    "__kernel void scale(__global float *restrict dst_arg, __constant float *src,\n"
    "                    __local float *scratch, float factor,\n"
    "                    __read_only image2d_t img, sampler_t smp) {}\n"
    "__kernel void noargs(void) {}\n";
static const char sample_options[] = "-cl-fast-relaxed-math -DN=4";

/* The code object bytes for a target: recognizable and target-specific. */
static void sample_code_bytes(const char *target, unsigned char *buf, size_t size) {
  size_t tl = strlen(target);
  for (size_t i = 0; i < size; i++)
    buf[i] = (unsigned char)(target[i % tl] ^ (i * 7));
}

static void sample_add_target(struct aquila_fatbin *fb, const char *target, size_t size) {
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) return;
  sample_code_bytes(target, buf, size);
  aquila_fatbin_add_code(fb, target, buf, size);
  free(buf);
}

static const struct aquila_fatbin_arg sample_scale_args[] = {
    {"dst_arg", "float*", AQUILA_ARG_GLOBAL_PTR, CL_KERNEL_ARG_ADDRESS_GLOBAL,
     CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_TYPE_RESTRICT, 8, 8, 0},
    {"src", "float*", AQUILA_ARG_CONSTANT_PTR, CL_KERNEL_ARG_ADDRESS_CONSTANT,
     CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_TYPE_CONST, 8, 8, 8},
    {"scratch", "float*", AQUILA_ARG_LOCAL_PTR, CL_KERNEL_ARG_ADDRESS_LOCAL,
     CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_TYPE_NONE, 8, 8, 16},
    {"factor", "float", AQUILA_ARG_VALUE, CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_ACCESS_NONE,
     CL_KERNEL_ARG_TYPE_NONE, 4, 4, 24},
    {"img", "image2d_t", AQUILA_ARG_IMAGE, CL_KERNEL_ARG_ADDRESS_GLOBAL,
     CL_KERNEL_ARG_ACCESS_READ_ONLY, CL_KERNEL_ARG_TYPE_NONE, 8, 8, 32},
    {"smp", "sampler_t", AQUILA_ARG_SAMPLER, CL_KERNEL_ARG_ADDRESS_PRIVATE,
     CL_KERNEL_ARG_ACCESS_NONE, CL_KERNEL_ARG_TYPE_NONE, 8, 8, 40},
};

/* What "scale" writes: dst_arg at 4 * (group * size + local id), its
 * factor fitting 32 bits; the coefficient 0x1234567890 marks the check's
 * term in the image for the breakers. */
static uint32_t sample_scale_states[6] = {AQUILA_FOOTPRINT_IN_FORMS};
static struct aquila_footprint_form sample_scale_forms[2] = {
    {AQUILA_FOOTPRINT_WRITE,
     0,
     0xe,
     0,
     4,
     2,
     {{4, AQUILA_FOOTPRINT_GROUP_ID, {AQUILA_FOOTPRINT_ENQUEUED_LOCAL_SIZE << 8, 0, 0}},
      {4, AQUILA_FOOTPRINT_LOCAL_ID, {0, 0, 0}}}},
    {AQUILA_FOOTPRINT_FITS_UNSIGNED,
     32,
     0x2,
     -7,
     -6,
     1,
     {{0x1234567890, AQUILA_FOOTPRINT_ONE, {AQUILA_FOOTPRINT_ARG_ZEXT << 8 | 3, 0, 0}}}},
};
static struct aquila_fatbin_footprint sample_scale_footprint = {
    AQUILA_FOOTPRINT_PRINTF, 6, sample_scale_states, 2, sample_scale_forms};

static struct aquila_fatbin_kernel sample_scale_kernel(void) {
  struct aquila_fatbin_kernel k = {0};
  k.name = "scale";
  k.num_args = 6;
  k.args = (struct aquila_fatbin_arg *)sample_scale_args;
  k.reqd_work_group_size[0] = 16;
  k.reqd_work_group_size[1] = 1;
  k.reqd_work_group_size[2] = 1;
  k.vec_type_hint = "float4";
  k.attributes = "reqd_work_group_size(16,1,1) vec_type_hint(float4)";
  k.local_mem_size = 256;
  k.kernarg_size = 72;
  k.kernarg_alignment = 8;
  k.hidden_kernarg_offset = 48;
  k.footprint = &sample_scale_footprint;
  return k;
}

static struct aquila_fatbin_kernel sample_noargs_kernel(void) {
  struct aquila_fatbin_kernel k = {0};
  k.name = "noargs";
  k.work_group_size_hint[0] = 64;
  k.work_group_size_hint[1] = 2;
  k.work_group_size_hint[2] = 1;
  k.attributes = "";
  k.kernarg_size = 24;
  k.kernarg_alignment = 8;
  k.hidden_kernarg_offset = 0;
  return k;
}

/* The sample program with the given targets (NULL: x86-64-v2, x86-64-v3 and
 * bitcode). other != 0 gives a different program (one kernel renamed). */
static struct aquila_fatbin *sample_program(const char *const *targets, size_t num_targets,
                                            int other) {
  static const char *const default_targets[] = {"x86-64-v2", "x86-64-v3", "bitcode"};
  if (!targets) {
    targets = default_targets;
    num_targets = 3;
  }
  struct aquila_fatbin *fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
  if (!fb) return NULL;
  struct aquila_fatbin_kernel scale = sample_scale_kernel(), noargs = sample_noargs_kernel();
  if (other) noargs.name = "other_kernel";
  aquila_fatbin_add_kernel(fb, &scale);
  aquila_fatbin_add_kernel(fb, &noargs);
  for (size_t i = 0; i < num_targets; i++)
    sample_add_target(fb, targets[i], 100 + 37 * i + strlen(targets[i]));
  aquila_fatbin_set_source(fb, sample_source, sample_options);
  return fb;
}

static int sample_image(void **data, size_t *size) {
  struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
  int rc = fb ? aquila_fatbin_write(fb, data, size) : -1;
  aquila_fatbin_destroy(fb);
  return rc;
}

static uint32_t sample_le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t sample_le64(const unsigned char *p) {
  return (uint64_t)sample_le32(p) | (uint64_t)sample_le32(p + 4) << 32;
}
static void sample_put_le32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}
static void sample_put_le64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

/* Locates a section of a well-formed image written by the library: returns
 * the offset of its section header, or 0 if not found. */
static size_t sample_find_section(const unsigned char *img, size_t size, const char *name) {
  uint64_t shoff = sample_le64(img + 40);
  unsigned shnum = img[60] | img[61] << 8, shstrndx = img[62] | img[63] << 8;
  const unsigned char *strsh = img + shoff + 64 * shstrndx;
  const char *strtab = (const char *)img + sample_le64(strsh + 24);
  for (unsigned i = 1; i < shnum; i++) {
    const unsigned char *sh = img + shoff + 64 * i;
    if (strcmp(strtab + sample_le32(sh), name) == 0) return (size_t)(sh - img);
  }
  (void)size;
  return 0;
}

/* The section's bytes, given its header offset. */
static unsigned char *sample_section_data(unsigned char *img, size_t shdr, size_t *sz) {
  if (sz) *sz = (size_t)sample_le64(img + shdr + 32);
  return img + sample_le64(img + shdr + 24);
}

static unsigned char *sample_meta(unsigned char *img, size_t size, size_t *sz) {
  size_t sh = sample_find_section(img, size, ".aquila.meta");
  return sh ? sample_section_data(img, sh, sz) : NULL;
}

/* The first byte after a NUL-terminated string inside the meta section. */
static unsigned char *sample_after(unsigned char *img, size_t size, const char *s) {
  size_t msz;
  unsigned char *m = sample_meta(img, size, &msz);
  unsigned char *hit = m ? memmem(m, msz, s, strlen(s) + 1) : NULL;
  return hit ? hit + strlen(s) + 1 : NULL;
}

/* Each breaker changes a copy of the sample image (it may shrink *size) and
 * returns 0, or -1 if the image did not have the expected shape. */
typedef int (*sample_breaker)(unsigned char *img, size_t *size);

static int break_empty(unsigned char *img, size_t *size) {
  *size = 0;
  return 0;
}
static int break_not_elf(unsigned char *img, size_t *size) {
  memcpy(img, "hello, this is not ELF", 22);
  *size = 22;
  return 0;
}
static int break_half(unsigned char *img, size_t *size) {
  *size /= 2;
  return 0;
}
static int break_class32(unsigned char *img, size_t *size) {
  img[4] = 1; /* ELFCLASS32 */
  return 0;
}
static int break_plain_elf(unsigned char *img, size_t *size) {
  sample_put_le32(img + 48, 0);
  return 0;
}
static int break_newer_version(unsigned char *img, size_t *size) {
  unsigned char *m = sample_meta(img, *size, NULL);
  if (!m) return -1;
  sample_put_le32(m, 3);
  return 0;
}
static unsigned char *sample_footprint_term(unsigned char *img, size_t size) {
  size_t msz;
  unsigned char *m = sample_meta(img, size, &msz);
  const unsigned char coef[8] = {0x90, 0x78, 0x56, 0x34, 0x12, 0, 0, 0};
  return m ? memmem(m, msz, coef, 8) : NULL;
}
static int break_footprint_var(unsigned char *img, size_t *size) {
  unsigned char *t = sample_footprint_term(img, *size);
  if (!t) return -1;
  sample_put_le32(t + 8, 99);
  return 0;
}
static int break_footprint_factor(unsigned char *img, size_t *size) {
  unsigned char *t = sample_footprint_term(img, *size);
  if (!t) return -1;
  sample_put_le32(t + 12, AQUILA_FOOTPRINT_ARG_ZEXT << 8 | 6); /* past the arguments */
  return 0;
}
static int break_footprint_terms(unsigned char *img, size_t *size) {
  unsigned char *t = sample_footprint_term(img, *size);
  if (!t) return -1;
  sample_put_le32(t - 4, 0x10000); /* the term count before it */
  return 0;
}
static int break_version0(unsigned char *img, size_t *size) {
  unsigned char *m = sample_meta(img, *size, NULL);
  if (!m) return -1;
  sample_put_le32(m, 0);
  return 0;
}
static int break_kernel_count(unsigned char *img, size_t *size) {
  unsigned char *m = sample_meta(img, *size, NULL);
  if (!m) return -1;
  sample_put_le32(m + 8, 0xffffffffu);
  return 0;
}
static int break_arg_count(unsigned char *img, size_t *size) {
  /* In "scale": after the attributes string come 6 + 2 + 3 words (the
   * 3-vectors, the 64-bit local size, the kernarg fields), then the count. */
  unsigned char *p = sample_after(img, *size, "reqd_work_group_size(16,1,1) vec_type_hint(float4)");
  if (!p) return -1;
  sample_put_le32(p + 4 * 11, 0x10000000u);
  return 0;
}
static int break_section_offset(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.code.x86-64-v3");
  if (!sh) return -1;
  sample_put_le64(img + sh + 24, (uint64_t)*size - 10);
  return 0;
}
static int break_section_size_overflow(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.source");
  if (!sh) return -1;
  sample_put_le64(img + sh + 32, UINT64_MAX - 4);
  return 0;
}
static int break_shoff(unsigned char *img, size_t *size) {
  sample_put_le64(img + 40, (uint64_t)*size - 64);
  return 0;
}
static int break_shstrndx(unsigned char *img, size_t *size) {
  img[62] = 0xf0;
  img[63] = 0x00;
  return 0;
}
static int break_source_unterminated(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.source"), sz;
  if (!sh) return -1;
  unsigned char *d = sample_section_data(img, sh, &sz);
  d[sz - 1] = '!';
  return 0;
}
static int break_source_embedded_nul(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.source"), sz;
  if (!sh) return -1;
  unsigned char *d = sample_section_data(img, sh, &sz);
  d[3] = 0;
  return 0;
}
static int break_duplicate_target(unsigned char *img, size_t *size) {
  /* Renames x86-64-v3 to x86-64-v2 in the section name table. */
  size_t sh = sample_find_section(img, *size, ".aquila.code.x86-64-v3");
  size_t str = sample_find_section(img, *size, ".shstrtab");
  if (!sh || !str) return -1;
  char *name = (char *)sample_section_data(img, str, NULL) + sample_le32(img + sh);
  name[strlen(name) - 1] = '2';
  return 0;
}
static int break_duplicate_meta(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.code.x86-64-v2");
  size_t str = sample_find_section(img, *size, ".shstrtab");
  if (!sh || !str) return -1;
  memcpy((char *)sample_section_data(img, str, NULL) + sample_le32(img + sh), ".aquila.meta", 13);
  return 0;
}
static int break_no_meta(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.meta");
  size_t str = sample_find_section(img, *size, ".shstrtab");
  if (!sh || !str) return -1;
  ((char *)sample_section_data(img, str, NULL) + sample_le32(img + sh))[1] = 'X';
  return 0;
}
static int break_meta_nobits(unsigned char *img, size_t *size) {
  size_t sh = sample_find_section(img, *size, ".aquila.meta");
  if (!sh) return -1;
  sample_put_le32(img + sh + 4, 8 /* SHT_NOBITS */);
  return 0;
}
static int break_arg_kind(unsigned char *img, size_t *size) {
  /* dst_arg's record: name, then the type name "float*", then the kind. */
  unsigned char *p = sample_after(img, *size, "dst_arg");
  if (!p) return -1;
  sample_put_le32(p + 4 + 7, 9);
  return 0;
}
static int break_arg_offset(unsigned char *img, size_t *size) {
  unsigned char *p = sample_after(img, *size, "smp");
  if (!p) return -1;
  /* type "sampler_t", kind, 2 qualifiers, 64-bit type qualifier, size,
   * alignment, then the offset. */
  sample_put_le32(p + 4 + 10 + 4 * 3 + 8 + 4 * 2, 4096);
  return 0;
}
static int break_string_length(unsigned char *img, size_t *size) {
  unsigned char *p = sample_after(img, *size, "noargs");
  if (!p) return -1;
  /* The length field precedes the 7 bytes of "noargs" and its NUL. */
  sample_put_le32(p - 7 - 4, 0x7ffffff0u);
  return 0;
}
static int break_kind(unsigned char *img, size_t *size) {
  unsigned char *m = sample_meta(img, *size, NULL);
  if (!m) return -1;
  sample_put_le32(m + 4, 7);
  return 0;
}
static int break_meta_trailing(unsigned char *img, size_t *size) {
  /* Grows the meta section by one byte into whatever follows it. */
  size_t sh = sample_find_section(img, *size, ".aquila.meta");
  if (!sh) return -1;
  sample_put_le64(img + sh + 32, sample_le64(img + sh + 32) + 1);
  return 0;
}

struct sample_bad_case {
  const char *name;
  sample_breaker make;
  const char *expect; /* a fragment of the reader's error message */
};

static const struct sample_bad_case sample_bad_cases[] = {
    {"empty", break_empty, "empty input"},
    {"not_elf", break_not_elf, "not an ELF file"},
    {"half", break_half, ""},
    {"class32", break_class32, "64-bit little-endian"},
    {"plain_elf", break_plain_elf, "not an Aquila fat binary"},
    {"newer_version", break_newer_version, "fat binary version 3 is newer than this reader (2)"},
    {"version0", break_version0, "version 0"},
    {"footprint_var", break_footprint_var, "term of an unknown variable"},
    {"footprint_factor", break_footprint_factor, "factor of an unknown argument"},
    {"footprint_terms", break_footprint_terms, "65536 terms"},
    {"kernel_count", break_kernel_count, "kernel count 4294967295 does not fit"},
    {"arg_count", break_arg_count, "argument count 268435456 does not fit"},
    {"section_offset", break_section_offset, "lies outside"},
    {"section_size_overflow", break_section_size_overflow, "lies outside"},
    {"shoff", break_shoff, "section header table lies outside"},
    {"shstrndx", break_shstrndx, "section name table index"},
    {"source_unterminated", break_source_unterminated, "source section is not NUL-terminated"},
    {"source_embedded_nul", break_source_embedded_nul, "embedded NUL"},
    {"duplicate_target", break_duplicate_target, "target x86-64-v2 appears twice"},
    {"duplicate_meta", break_duplicate_meta, "two .aquila.meta sections"},
    {"no_meta", break_no_meta, "no .aquila.meta section"},
    {"meta_nobits", break_meta_nobits, "not SHT_PROGBITS"},
    {"arg_kind", break_arg_kind, "unknown kind 9"},
    {"arg_offset", break_arg_offset, "outside the kernarg size"},
    {"string_length", break_string_length, "runs past"},
    {"kind", break_kind, "unknown binary kind 7"},
    {"meta_trailing", break_meta_trailing, "trailing bytes"},
};

#define SAMPLE_NUM_BAD_CASES (sizeof sample_bad_cases / sizeof sample_bad_cases[0])

#endif
