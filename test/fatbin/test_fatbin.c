/* Unit tests of libaquila_fatbin: the in-memory object, the writer, and the
 * reader against truncated, bit-flipped and crafted images. */
#include <stdio.h>

#include "../check.h"
#include "../../fatbin/fatbin_format.h"
#include "sample.h"

static void check_same_kernel(const struct aquila_fatbin_kernel *a,
                              const struct aquila_fatbin_kernel *b) {
  CHECK(strcmp(a->name, b->name) == 0);
  CHECK((a->vec_type_hint == NULL) == (b->vec_type_hint == NULL));
  if (a->vec_type_hint && b->vec_type_hint) CHECK(strcmp(a->vec_type_hint, b->vec_type_hint) == 0);
  CHECK(strcmp(a->attributes, b->attributes) == 0);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_INT(a->reqd_work_group_size[i], b->reqd_work_group_size[i]);
    CHECK_EQ_INT(a->work_group_size_hint[i], b->work_group_size_hint[i]);
  }
  CHECK_EQ_INT(a->local_mem_size, b->local_mem_size);
  CHECK_EQ_INT(a->kernarg_size, b->kernarg_size);
  CHECK_EQ_INT(a->kernarg_alignment, b->kernarg_alignment);
  CHECK_EQ_INT(a->hidden_kernarg_offset, b->hidden_kernarg_offset);
  CHECK_EQ_INT(a->num_args, b->num_args);
  for (uint32_t i = 0; i < a->num_args && i < b->num_args; i++) {
    const struct aquila_fatbin_arg *x = &a->args[i], *y = &b->args[i];
    CHECK(strcmp(x->name, y->name) == 0);
    CHECK(strcmp(x->type_name, y->type_name) == 0);
    CHECK_EQ_INT(x->kind, y->kind);
    CHECK_EQ_INT(x->address_qualifier, y->address_qualifier);
    CHECK_EQ_INT(x->access_qualifier, y->access_qualifier);
    CHECK_EQ_INT(x->type_qualifier, y->type_qualifier);
    CHECK_EQ_INT(x->size, y->size);
    CHECK_EQ_INT(x->alignment, y->alignment);
    CHECK_EQ_INT(x->offset, y->offset);
  }
  CHECK((a->footprint == NULL) == (b->footprint == NULL));
  if (a->footprint && b->footprint) {
    const struct aquila_fatbin_footprint *x = a->footprint, *y = b->footprint;
    CHECK_EQ_INT(x->flags, y->flags);
    CHECK_EQ_INT(x->num_args, y->num_args);
    CHECK(x->num_args != y->num_args ||
          !memcmp(x->arg_state, y->arg_state, x->num_args * sizeof *x->arg_state));
    CHECK_EQ_INT(x->num_forms, y->num_forms);
    for (uint32_t i = 0; i < x->num_forms && i < y->num_forms; i++) {
      const struct aquila_footprint_form *f = &x->forms[i], *g = &y->forms[i];
      CHECK(f->kind == g->kind && f->arg == g->arg && f->work_dims == g->work_dims &&
            f->lo == g->lo && f->hi == g->hi && f->num_terms == g->num_terms);
      CHECK(f->num_terms != g->num_terms ||
            !memcmp(f->terms, g->terms, f->num_terms * sizeof *f->terms));
    }
  }
}

static void check_same(const struct aquila_fatbin *a, const struct aquila_fatbin *b) {
  CHECK_EQ_INT(a->kind, b->kind);
  CHECK(b->version == AQUILA_FATBIN_VERSION || b->version == 1);
  CHECK_EQ_INT(a->num_kernels, b->num_kernels);
  for (uint32_t i = 0; i < a->num_kernels && i < b->num_kernels; i++)
    check_same_kernel(&a->kernels[i], &b->kernels[i]);
  CHECK_EQ_INT(a->num_codes, b->num_codes);
  for (uint32_t i = 0; i < a->num_codes && i < b->num_codes; i++) {
    CHECK(strcmp(a->codes[i].target, b->codes[i].target) == 0);
    CHECK_EQ_INT(a->codes[i].size, b->codes[i].size);
    CHECK(a->codes[i].size != b->codes[i].size ||
          memcmp(a->codes[i].data, b->codes[i].data, a->codes[i].size) == 0);
  }
  CHECK((a->source == NULL) == (b->source == NULL));
  if (a->source && b->source) CHECK(strcmp(a->source, b->source) == 0);
  CHECK((a->build_options == NULL) == (b->build_options == NULL));
  if (a->build_options && b->build_options) CHECK(strcmp(a->build_options, b->build_options) == 0);
}

/* Writes fb, reads it back, and compares. */
static void check_round_trip(const struct aquila_fatbin *fb) {
  void *data = NULL;
  size_t size = 0;
  char err[256];
  REQUIRE(aquila_fatbin_write(fb, &data, &size) == 0);
  CHECK(aquila_fatbin_is_fatbin(data, size));
  struct aquila_fatbin *back = NULL;
  int rc = aquila_fatbin_read(data, size, &back, err, sizeof err);
  if (rc) printf("  read: %s\n", err);
  CHECK(rc == 0);
  if (back) check_same(fb, back);
  aquila_fatbin_destroy(back);
  free(data);
}

static void round_trip_every_field(void) {
  struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
  REQUIRE(fb);
  REQUIRE(fb->num_kernels == 2 && fb->num_codes == 3);
  check_round_trip(fb);
  aquila_fatbin_destroy(fb);
}

/* A version 1 image (no footprint after the arguments) is still read, its
 * kernels without a footprint: the sample rewritten as version 1 would
 * have written it (the kernel records shortened by their footprint flag,
 * the meta section by as much, the digest anew). */
static void version1_still_read(void) {
  struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
  REQUIRE(fb);
  aquila_fatbin_footprint_free(fb->kernels[0].footprint);
  fb->kernels[0].footprint = NULL;
  void *data = NULL;
  size_t size = 0;
  REQUIRE(aquila_fatbin_write(fb, &data, &size) == 0);
  unsigned char *img = data;
  size_t sh = sample_find_section(img, size, ".aquila.meta"), msz;
  REQUIRE(sh);
  unsigned char *m = sample_section_data(img, sh, &msz);
  unsigned char *v1 = malloc(msz);
  REQUIRE(v1);
  size_t at = 12, out = 12;
  memcpy(v1, m, 12);
  sample_put_le32(v1, 1);
  for (uint32_t k = 0; k < sample_le32(m + 8); k++) {
    uint32_t len = sample_le32(m + at);
    REQUIRE(len >= 4 && sample_le32(m + at + len) == 0); /* its flag: no footprint */
    sample_put_le32(v1 + out, len - 4);
    memcpy(v1 + out + 4, m + at + 4, len - 4);
    at += 4 + len;
    out += len;
  }
  REQUIRE(at == msz);
  memcpy(m, v1, out);
  sample_put_le64(img + sh + 32, out);
  free(v1);
  /* The digest over the .aquila.* sections in section order. */
  uint64_t shoff = sample_le64(img + 40);
  unsigned shnum = img[60] | img[61] << 8, shstrndx = img[62] | img[63] << 8;
  const char *strtab = (const char *)img + sample_le64(img + shoff + 64 * shstrndx + 24);
  uint64_t digest = FATBIN_DIGEST_INIT;
  unsigned char *stored = NULL;
  for (unsigned i = 1; i < shnum; i++) {
    unsigned char *h = img + shoff + 64 * i;
    const char *name = strtab + sample_le32(h);
    if (strncmp(name, ".aquila.", 8)) continue;
    if (!strcmp(name, ".aquila.digest")) {
      stored = img + sample_le64(h + 24);
      continue;
    }
    digest = fatbin_digest_section(digest, name, img + sample_le64(h + 24), sample_le64(h + 32));
  }
  REQUIRE(stored);
  sample_put_le64(stored, digest);
  struct aquila_fatbin *back = NULL;
  char err[256] = "";
  int rc = aquila_fatbin_read(img, size, &back, err, sizeof err);
  if (rc) printf("  read: %s\n", err);
  CHECK_EQ_INT(rc, 0);
  if (back) {
    CHECK_EQ_INT(back->version, 1);
    check_same(fb, back);
  }
  aquila_fatbin_destroy(back);
  aquila_fatbin_destroy(fb);
  free(data);
}

static void round_trip_empty(void) {
  struct aquila_fatbin *fb = aquila_fatbin_create(AQUILA_FATBIN_LIBRARY);
  REQUIRE(fb);
  check_round_trip(fb);
  /* An empty source and empty options are kept apart from absent ones. */
  REQUIRE(aquila_fatbin_set_source(fb, "", "") == 0);
  REQUIRE(aquila_fatbin_add_code(fb, "x86-64-v4", NULL, 0) == 0);
  check_round_trip(fb);
  aquila_fatbin_destroy(fb);
}

static void round_trip_many_code_objects(void) {
  struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
  REQUIRE(fb);
  char target[64];
  for (int i = 0; i < 60; i++) {
    snprintf(target, sizeof target, "x86_64-native:cpu%d", i);
    sample_add_target(fb, target, (size_t)i * 13);
  }
  sample_add_target(fb, "amdgcn-amd-amdhsa--gfx90a", 4096);
  sample_add_target(fb, "nvptx64-nvidia-cuda", 1000);
  REQUIRE(fb->num_codes == 65);
  check_round_trip(fb);
  aquila_fatbin_destroy(fb);
}

static void kinds(void) {
  for (uint32_t kind = AQUILA_FATBIN_EXECUTABLE; kind <= AQUILA_FATBIN_LIBRARY; kind++) {
    struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
    REQUIRE(fb);
    fb->kind = kind;
    check_round_trip(fb);
    aquila_fatbin_destroy(fb);
  }
  uint32_t bad[] = {0, 4, 0xffffffffu};
  for (size_t i = 0; i < 3; i++) {
    struct aquila_fatbin *fb = aquila_fatbin_create(bad[i]);
    REQUIRE(fb);
    void *data = NULL;
    size_t size = 0;
    CHECK(aquila_fatbin_write(fb, &data, &size) == -1);
    CHECK(data == NULL);
    aquila_fatbin_destroy(fb);
  }
}

static void find_functions(void) {
  struct aquila_fatbin *fb = sample_program(NULL, 0, 0);
  REQUIRE(fb);
  const struct aquila_fatbin_code *c = aquila_fatbin_find_code(fb, "x86-64-v3");
  REQUIRE(c);
  CHECK(strcmp(c->target, "x86-64-v3") == 0);
  CHECK(aquila_fatbin_find_code(fb, "x86-64-v4") == NULL);
  CHECK(aquila_fatbin_find_code(fb, NULL) == NULL);
  CHECK(aquila_fatbin_find_code(NULL, "bitcode") == NULL);
  const struct aquila_fatbin_kernel *k = aquila_fatbin_find_kernel(fb, "scale");
  REQUIRE(k);
  CHECK_EQ_INT(k->num_args, 6);
  CHECK(aquila_fatbin_find_kernel(fb, "noargs") != NULL);
  CHECK(aquila_fatbin_find_kernel(fb, "missing") == NULL);
  CHECK(aquila_fatbin_find_kernel(NULL, "scale") == NULL);
  aquila_fatbin_destroy(fb);
}

static void add_replace_remove(void) {
  struct aquila_fatbin *fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
  REQUIRE(fb);
  unsigned char bytes[4] = {1, 2, 3, 4};
  CHECK(aquila_fatbin_add_code(fb, "x86-64-v2", bytes, 4) == 0);
  bytes[0] = 9; /* the fat binary holds a copy */
  REQUIRE(fb->num_codes == 1);
  CHECK(((unsigned char *)fb->codes[0].data)[0] == 1);
  CHECK(aquila_fatbin_add_code(fb, "x86-64-v2", bytes, 2) == 0);
  CHECK_EQ_INT(fb->num_codes, 1);
  CHECK_EQ_INT(fb->codes[0].size, 2);
  CHECK(((unsigned char *)fb->codes[0].data)[0] == 9);
  CHECK(aquila_fatbin_add_code(fb, "bitcode", bytes, 4) == 0);
  CHECK(aquila_fatbin_add_code(fb, "", bytes, 4) == -1);
  CHECK(aquila_fatbin_add_code(fb, NULL, bytes, 4) == -1);
  CHECK(aquila_fatbin_add_code(fb, "has space", bytes, 4) == -1);
  CHECK(aquila_fatbin_add_code(fb, "tab\t", bytes, 4) == -1);
  CHECK(aquila_fatbin_add_code(fb, "x86-64-v3", NULL, 4) == -1);
  char longname[300];
  memset(longname, 'a', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  CHECK(aquila_fatbin_add_code(fb, longname, bytes, 4) == -1);
  CHECK(aquila_fatbin_add_code(NULL, "x", bytes, 4) == -1);
  CHECK_EQ_INT(fb->num_codes, 2);
  CHECK(aquila_fatbin_remove_code(fb, "x86-64-v2") == 0);
  CHECK(aquila_fatbin_remove_code(fb, "x86-64-v2") == -1);
  CHECK(aquila_fatbin_remove_code(fb, NULL) == -1);
  REQUIRE(fb->num_codes == 1);
  CHECK(strcmp(fb->codes[0].target, "bitcode") == 0);

  /* Kernels are deep copies; a repeated name is refused. */
  char name[] = "scale";
  struct aquila_fatbin_arg args[6];
  memcpy(args, sample_scale_args, sizeof args);
  char argname[] = "dst_arg";
  args[0].name = argname;
  struct aquila_fatbin_kernel k = sample_scale_kernel();
  k.name = name;
  k.args = args;
  CHECK(aquila_fatbin_add_kernel(fb, &k) == 0);
  name[0] = 'X';
  argname[0] = 'X';
  args[1].size = 1234;
  REQUIRE(fb->num_kernels == 1);
  CHECK(strcmp(fb->kernels[0].name, "scale") == 0);
  CHECK(strcmp(fb->kernels[0].args[0].name, "dst_arg") == 0);
  CHECK_EQ_INT(fb->kernels[0].args[1].size, 8);
  name[0] = 's';
  CHECK(aquila_fatbin_add_kernel(fb, &k) == -1);
  k.name = NULL;
  CHECK(aquila_fatbin_add_kernel(fb, &k) == -1);
  k.name = "other";
  k.args = NULL;
  CHECK(aquila_fatbin_add_kernel(fb, &k) == -1);
  CHECK(aquila_fatbin_add_kernel(fb, NULL) == -1);
  CHECK_EQ_INT(fb->num_kernels, 1);
  aquila_fatbin_destroy(fb);
  aquila_fatbin_destroy(NULL);
}

static void set_source(void) {
  struct aquila_fatbin *fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
  REQUIRE(fb);
  CHECK(aquila_fatbin_set_source(fb, "kernel void k() {}", NULL) == 0);
  CHECK(fb->source && strcmp(fb->source, "kernel void k() {}") == 0);
  CHECK(fb->build_options == NULL);
  check_round_trip(fb);
  CHECK(aquila_fatbin_set_source(fb, NULL, "-O2") == 0);
  CHECK(fb->source == NULL);
  CHECK(fb->build_options && strcmp(fb->build_options, "-O2") == 0);
  check_round_trip(fb);
  CHECK(aquila_fatbin_set_source(NULL, "x", NULL) == -1);
  aquila_fatbin_destroy(fb);
}

static void write_refuses_what_reader_refuses(void) {
  char err[256];
  struct aquila_fatbin_arg args[6];
  uint32_t states[6];
  struct aquila_footprint_form forms[2];
  for (int c = 0; c < 12; c++) {
    memcpy(args, sample_scale_args, sizeof args);
    struct aquila_fatbin_kernel k = sample_scale_kernel();
    k.args = args;
    struct aquila_fatbin_footprint fp = *k.footprint;
    memcpy(states, fp.arg_state, sizeof states);
    memcpy(forms, fp.forms, sizeof forms);
    fp.arg_state = states;
    fp.forms = forms;
    k.footprint = &fp;
    const char *expect = "";
    switch (c) {
    case 0:
      args[3].offset = 72;
      expect = "outside the kernarg size";
      break;
    case 1:
      args[3].alignment = 3;
      expect = "not a power of two";
      break;
    case 2:
      args[3].offset = 26;
      expect = "not a multiple";
      break;
    case 3:
      args[0].address_qualifier = CL_KERNEL_ARG_ADDRESS_LOCAL;
      expect = "address qualifier";
      break;
    case 4:
      args[0].access_qualifier = CL_KERNEL_ARG_ACCESS_READ_ONLY;
      expect = "access qualifier";
      break;
    case 5:
      args[0].type_qualifier = 1u << 10;
      expect = "type qualifier";
      break;
    case 6:
      k.kernarg_alignment = 0;
      expect = "kernarg alignment";
      break;
    case 7:
      k.hidden_kernarg_offset = 100;
      expect = "hidden kernarg offset";
      break;
    case 8:
      states[2] = 4;
      expect = "unknown state";
      break;
    case 9:
      states[0] = AQUILA_FOOTPRINT_ANYWHERE; /* its write form then names it wrongly */
      expect = "not written in forms";
      break;
    case 10:
      forms[1].arg = 65;
      expect = "width outside";
      break;
    case 11:
      forms[0].work_dims = 0x1;
      expect = "work dimensions";
      break;
    }
    struct aquila_fatbin *fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
    REQUIRE(fb);
    REQUIRE(aquila_fatbin_add_kernel(fb, &k) == 0);
    CHECK(aquila_fatbin_validate(fb, err, sizeof err) == -1);
    if (!strstr(err, expect)) printf("  case %d: '%s' lacks '%s'\n", c, err, expect);
    CHECK(strstr(err, expect) != NULL);
    void *data = NULL;
    size_t size = 0;
    CHECK(aquila_fatbin_write(fb, &data, &size) == -1);
    CHECK(data == NULL && size == 0);
    aquila_fatbin_destroy(fb);
  }
  CHECK(aquila_fatbin_validate(NULL, err, sizeof err) == -1);
}

static void is_fatbin(void) {
  void *data = NULL;
  size_t size = 0;
  REQUIRE(sample_image(&data, &size) == 0);
  CHECK(aquila_fatbin_is_fatbin(data, size));
  CHECK(!aquila_fatbin_is_fatbin(data, 63));
  CHECK(!aquila_fatbin_is_fatbin(NULL, size));
  CHECK(!aquila_fatbin_is_fatbin("\177ELF", 4));
  unsigned char *img = data;
  img[48] ^= 1;
  CHECK(!aquila_fatbin_is_fatbin(data, size));
  free(data);
}

static void bad_cases(void) {
  void *good = NULL;
  size_t good_size = 0;
  REQUIRE(sample_image(&good, &good_size) == 0);
  unsigned char *img = malloc(good_size);
  REQUIRE(img);
  for (size_t i = 0; i < SAMPLE_NUM_BAD_CASES; i++) {
    memcpy(img, good, good_size);
    size_t size = good_size;
    char err[256] = "";
    struct aquila_fatbin *out = (struct aquila_fatbin *)1;
    CHECK(sample_bad_cases[i].make(img, &size) == 0);
    int rc = aquila_fatbin_read(img, size, &out, err, sizeof err);
    CHECK(rc == -1);
    CHECK(out == NULL);
    CHECK(err[0] != 0);
    if (!strstr(err, sample_bad_cases[i].expect)) {
      printf("  %s: got '%s', expected '%s'\n", sample_bad_cases[i].name, err,
             sample_bad_cases[i].expect);
      check_case_failed = 1;
    }
  }
  free(img);
  free(good);
}

static void truncated_at_every_length(void) {
  void *good = NULL;
  size_t size = 0;
  REQUIRE(sample_image(&good, &size) == 0);
  int failures = 0;
  for (size_t n = 0; n < size; n++) {
    /* A fresh allocation of exactly n bytes, so a read past the end is caught
     * by tools such as valgrind or ASan. */
    unsigned char *prefix = malloc(n ? n : 1);
    REQUIRE(prefix);
    memcpy(prefix, good, n);
    struct aquila_fatbin *out = NULL;
    char err[128];
    if (aquila_fatbin_read(prefix, n, &out, err, sizeof err) == 0) {
      printf("  prefix of %zu bytes read as valid\n", n);
      failures++;
      aquila_fatbin_destroy(out);
    }
    free(prefix);
  }
  CHECK_EQ_INT(failures, 0);
  free(good);
}

static void bit_flips_at_every_byte(void) {
  void *good = NULL;
  size_t size = 0;
  REQUIRE(sample_image(&good, &size) == 0);
  unsigned char *img = malloc(size);
  REQUIRE(img);
  static const unsigned char masks[] = {0x01, 0x80, 0xff};
  size_t accepted = 0, refused = 0;
  for (size_t i = 0; i < size; i++) {
    for (size_t m = 0; m < sizeof masks; m++) {
      memcpy(img, good, size);
      img[i] ^= masks[m];
      struct aquila_fatbin *out = NULL;
      char err[128];
      if (aquila_fatbin_read(img, size, &out, err, sizeof err) == 0) {
        accepted++;
        /* Whatever was accepted must be a valid fat binary in itself. */
        void *again = NULL;
        size_t again_size = 0;
        CHECK(aquila_fatbin_write(out, &again, &again_size) == 0);
        free(again);
        aquila_fatbin_destroy(out);
      } else {
        refused++;
        CHECK(out == NULL);
      }
    }
  }
  CHECK(refused > 0);
  printf("  %zu flips accepted, %zu refused\n", accepted, refused);
  free(img);
  free(good);
}

static void bad_arguments(void) {
  void *good = NULL;
  size_t size = 0;
  REQUIRE(sample_image(&good, &size) == 0);
  struct aquila_fatbin *out = NULL;
  char err[8];
  CHECK(aquila_fatbin_read(good, size, NULL, err, sizeof err) == -1);
  CHECK(aquila_fatbin_read(NULL, size, &out, err, sizeof err) == -1 && out == NULL);
  CHECK(aquila_fatbin_read(good, 0, &out, NULL, 0) == -1 && out == NULL);
  /* A short error buffer is truncated, never overrun. */
  CHECK(aquila_fatbin_read("not an elf file", 15, &out, err, sizeof err) == -1);
  CHECK(strlen(err) < sizeof err);
  CHECK(aquila_fatbin_read(good, size, &out, NULL, 0) == 0);
  aquila_fatbin_destroy(out);
  void *data;
  size_t n;
  CHECK(aquila_fatbin_write(NULL, &data, &n) == -1);
  free(good);
}

int main(void) {
  RUN(round_trip_every_field);
  RUN(version1_still_read);
  RUN(round_trip_empty);
  RUN(round_trip_many_code_objects);
  RUN(kinds);
  RUN(find_functions);
  RUN(add_replace_remove);
  RUN(set_source);
  RUN(write_refuses_what_reader_refuses);
  RUN(is_fatbin);
  RUN(bad_cases);
  RUN(truncated_at_every_length);
  RUN(bit_flips_at_every_byte);
  RUN(bad_arguments);
  CHECK_EXIT();
}
