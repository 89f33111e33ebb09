/* clfatbin: lists, extracts, combines, strips and verifies Aquila fat
 * binaries (subcommand `build`, which needs the compiler, lives in
 * clfatbin_build.c). */
#include "clfatbin.h"

#include <CL/cl.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int clfatbin_read_file(const char *path, char **data, size_t *size) {
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "clfatbin: %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
    if (n == cap) {
      char *bigger = cap <= SIZE_MAX / 4 ? realloc(buf, cap * 2 + 1) : NULL;
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  int bad = !buf || ferror(f);
  if (f != stdin) fclose(f);
  if (bad) {
    fprintf(stderr, "clfatbin: %s: %s\n", path, buf ? "read error" : "out of memory");
    free(buf);
    return -1;
  }
  buf[n] = 0;
  *data = buf;
  *size = n;
  return 0;
}

static int write_bytes(const char *path, const void *data, size_t size) {
  if (strcmp(path, "-") == 0) {
    if (fwrite(data, 1, size, stdout) != size || fflush(stdout) != 0) {
      fprintf(stderr, "clfatbin: standard output: write error\n");
      return -1;
    }
    return 0;
  }
  /* Written next to the destination and renamed over it, so a failure never
   * leaves a half-written file (and strip can overwrite its own input). */
  size_t len = strlen(path);
  char *tmp = malloc(len + 16);
  if (!tmp) return -1;
  snprintf(tmp, len + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    fprintf(stderr, "clfatbin: %s: %s\n", path, strerror(errno));
    free(tmp);
    return -1;
  }
  FILE *f = fdopen(fd, "wb");
  int ok = f && (size == 0 || fwrite(data, 1, size, f) == size);
  if (f) {
    if (fclose(f) != 0) ok = 0;
  } else {
    close(fd);
  }
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) {
    fprintf(stderr, "clfatbin: %s: %s\n", path, strerror(errno));
    unlink(tmp);
  }
  free(tmp);
  return ok ? 0 : -1;
}

int clfatbin_save(const struct aquila_fatbin *fb, const char *path) {
  void *data = NULL;
  size_t size = 0;
  char why[256];
  if (aquila_fatbin_validate(fb, why, sizeof why)) {
    fprintf(stderr, "clfatbin: %s: cannot write: %s\n", path, why);
    return -1;
  }
  if (aquila_fatbin_write(fb, &data, &size)) {
    fprintf(stderr, "clfatbin: %s: cannot serialize the fat binary\n", path);
    return -1;
  }
  int rc = write_bytes(path, data, size);
  free(data);
  return rc;
}

/* Reads and validates; prints the reason on failure. */
static struct aquila_fatbin *load(const char *path) {
  char *data;
  size_t size;
  if (clfatbin_read_file(path, &data, &size)) return NULL;
  struct aquila_fatbin *fb = NULL;
  char why[512];
  if (aquila_fatbin_read(data, size, &fb, why, sizeof why))
    fprintf(stderr, "clfatbin: %s: %s\n", path, why);
  free(data);
  return fb;
}

static int usage_error(const char *cmd, const char *what) {
  fprintf(stderr, "clfatbin %s: %s (see clfatbin %s --help)\n", cmd, what, cmd);
  return EXIT_USAGE;
}

/* ---- names of enumerations, for both output formats ---- */

static const char *kind_name(uint32_t kind) {
  switch (kind) {
  case AQUILA_FATBIN_EXECUTABLE:
    return "executable";
  case AQUILA_FATBIN_COMPILED_OBJECT:
    return "compiled_object";
  case AQUILA_FATBIN_LIBRARY:
    return "library";
  }
  return "unknown";
}

static const char *arg_kind_name(uint32_t kind) {
  static const char *const names[] = {"value",     "global_ptr", "constant_ptr",
                                      "local_ptr", "image",      "sampler"};
  return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

static const char *address_name(uint32_t q) {
  switch (q) {
  case CL_KERNEL_ARG_ADDRESS_GLOBAL:
    return "global";
  case CL_KERNEL_ARG_ADDRESS_LOCAL:
    return "local";
  case CL_KERNEL_ARG_ADDRESS_CONSTANT:
    return "constant";
  case CL_KERNEL_ARG_ADDRESS_PRIVATE:
    return "private";
  }
  return "unknown";
}

static const char *access_name(uint32_t q) {
  switch (q) {
  case CL_KERNEL_ARG_ACCESS_READ_ONLY:
    return "read_only";
  case CL_KERNEL_ARG_ACCESS_WRITE_ONLY:
    return "write_only";
  case CL_KERNEL_ARG_ACCESS_READ_WRITE:
    return "read_write";
  case CL_KERNEL_ARG_ACCESS_NONE:
    return "none";
  }
  return "unknown";
}

static const struct {
  uint64_t bit;
  const char *name;
} type_qualifiers[] = {{CL_KERNEL_ARG_TYPE_CONST, "const"},
                       {CL_KERNEL_ARG_TYPE_RESTRICT, "restrict"},
                       {CL_KERNEL_ARG_TYPE_VOLATILE, "volatile"},
                       {1u << 3, "pipe"}};
#define NUM_TYPE_QUALIFIERS (sizeof type_qualifiers / sizeof type_qualifiers[0])

/* ---- JSON output ---- */

static void json_string(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      printf("\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", stdout);
    else if (*p < 0x20)
      printf("\\u%04x", *p);
    else
      putchar(*p);
  }
  putchar('"');
}

static void json_triple(const uint32_t v[3]) {
  printf("[%u, %u, %u]", v[0], v[1], v[2]);
}

static void json_arg(const struct aquila_fatbin_arg *a) {
  printf("{\"name\": ");
  json_string(a->name);
  printf(", \"type_name\": ");
  json_string(a->type_name);
  printf(", \"kind\": \"%s\", \"address_qualifier\": \"%s\", \"access_qualifier\": \"%s\", "
         "\"type_qualifiers\": [",
         arg_kind_name(a->kind), address_name(a->address_qualifier),
         access_name(a->access_qualifier));
  const char *sep = "";
  for (size_t q = 0; q < NUM_TYPE_QUALIFIERS; q++) {
    if (a->type_qualifier & type_qualifiers[q].bit) {
      printf("%s\"%s\"", sep, type_qualifiers[q].name);
      sep = ", ";
    }
  }
  printf("], \"size\": %u, \"alignment\": %u, \"offset\": %u}", a->size, a->alignment, a->offset);
}

static void json_kernel(const struct aquila_fatbin_kernel *k, int details) {
  printf("{\"name\": ");
  json_string(k->name);
  printf(", \"num_args\": %u", k->num_args);
  if (details) {
    printf(", \"reqd_work_group_size\": ");
    json_triple(k->reqd_work_group_size);
    printf(", \"work_group_size_hint\": ");
    json_triple(k->work_group_size_hint);
    printf(", \"vec_type_hint\": ");
    json_string(k->vec_type_hint);
    printf(", \"attributes\": ");
    json_string(k->attributes);
    printf(", \"local_mem_size\": %llu, \"kernarg_size\": %u, \"kernarg_alignment\": %u, "
           "\"hidden_kernarg_offset\": %u, \"args\": [",
           (unsigned long long)k->local_mem_size, k->kernarg_size, k->kernarg_alignment,
           k->hidden_kernarg_offset);
    for (uint32_t i = 0; i < k->num_args; i++) {
      printf(i ? ",\n        " : "\n        ");
      json_arg(&k->args[i]);
    }
    printf("]");
  }
  printf("}");
}

static void json_fatbin(const struct aquila_fatbin *fb, int details) {
  printf("{\n  \"version\": %u,\n  \"kind\": \"%s\",\n  \"targets\": [", fb->version,
         kind_name(fb->kind));
  for (uint32_t i = 0; i < fb->num_codes; i++) {
    printf(i ? ",\n    " : "\n    ");
    printf("{\"target\": ");
    json_string(fb->codes[i].target);
    printf(", \"size\": %zu}", fb->codes[i].size);
  }
  printf("],\n  \"kernels\": [");
  for (uint32_t i = 0; i < fb->num_kernels; i++) {
    printf(i ? ",\n    " : "\n    ");
    json_kernel(&fb->kernels[i], details);
  }
  printf("],\n  \"source_size\": ");
  if (fb->source)
    printf("%zu", strlen(fb->source));
  else
    printf("null");
  printf(",\n  \"build_options\": ");
  json_string(fb->build_options);
  printf("\n}\n");
}

/* ---- text output ---- */

static void text_list(const struct aquila_fatbin *fb) {
  printf("version %u\nkind %s\n", fb->version, kind_name(fb->kind));
  for (uint32_t i = 0; i < fb->num_codes; i++)
    printf("target %s %zu\n", fb->codes[i].target, fb->codes[i].size);
  for (uint32_t i = 0; i < fb->num_kernels; i++)
    printf("kernel %s %u\n", fb->kernels[i].name, fb->kernels[i].num_args);
  if (fb->source) printf("source %zu\n", strlen(fb->source));
  if (fb->build_options) printf("options %s\n", fb->build_options);
}

/* One line: what the kernel writes (docs/FATBIN.md, "The footprint"). */
static void text_footprint(const struct aquila_fatbin_kernel *k) {
  const struct aquila_fatbin_footprint *f = k->footprint;
  if (!f) {
    printf("    footprint: none\n");
    return;
  }
  printf("    footprint:%s%s", f->flags & AQUILA_FOOTPRINT_GLOBAL_ATOMICS ? " global atomics," : "",
         f->flags & AQUILA_FOOTPRINT_PRINTF ? " printf," : "");
  uint32_t checks = 0;
  for (uint32_t i = 0; i < f->num_forms; i++)
    checks += f->forms[i].kind != AQUILA_FOOTPRINT_WRITE;
  for (uint32_t j = 0; j < k->num_args && j < f->num_args; j++) {
    if (k->args[j].kind != AQUILA_ARG_GLOBAL_PTR) continue;
    uint32_t forms = 0;
    for (uint32_t i = 0; i < f->num_forms; i++)
      forms += f->forms[i].kind == AQUILA_FOOTPRINT_WRITE && f->forms[i].arg == j;
    if (f->arg_state[j] == AQUILA_FOOTPRINT_IN_FORMS)
      printf(" %s written in %u range%s;", k->args[j].name, forms, forms == 1 ? "" : "s");
    else if (f->arg_state[j] == AQUILA_FOOTPRINT_OVERWRITTEN)
      printf(" %s overwritten in %u range%s;", k->args[j].name, forms, forms == 1 ? "" : "s");
    else
      printf(" %s %s;", k->args[j].name,
             f->arg_state[j] == AQUILA_FOOTPRINT_NOT_WRITTEN ? "not written" : "written anywhere");
  }
  printf(" %u check%s\n", checks, checks == 1 ? "" : "s");
}

static void text_triple(const char *label, const uint32_t v[3]) {
  if (v[0] || v[1] || v[2])
    printf("    %s: %u %u %u\n", label, v[0], v[1], v[2]);
  else
    printf("    %s: none\n", label);
}

static void text_info(const struct aquila_fatbin *fb) {
  printf("version: %u\nkind: %s\n", fb->version, kind_name(fb->kind));
  if (fb->source)
    printf("source: %zu bytes\n", strlen(fb->source));
  else
    printf("source: none\n");
  printf("build options: %s\n", fb->build_options ? fb->build_options : "none");
  printf("targets: %u\n", fb->num_codes);
  for (uint32_t i = 0; i < fb->num_codes; i++)
    printf("  %s: %zu bytes\n", fb->codes[i].target, fb->codes[i].size);
  printf("kernels: %u\n", fb->num_kernels);
  for (uint32_t i = 0; i < fb->num_kernels; i++) {
    const struct aquila_fatbin_kernel *k = &fb->kernels[i];
    printf("  %s\n", k->name);
    text_triple("reqd_work_group_size", k->reqd_work_group_size);
    text_triple("work_group_size_hint", k->work_group_size_hint);
    printf("    vec_type_hint: %s\n", k->vec_type_hint ? k->vec_type_hint : "none");
    printf("    attributes: %s\n", *k->attributes ? k->attributes : "none");
    printf("    local memory: %llu bytes\n", (unsigned long long)k->local_mem_size);
    printf("    kernarg: %u bytes, alignment %u, hidden arguments at %u\n", k->kernarg_size,
           k->kernarg_alignment, k->hidden_kernarg_offset);
    printf("    arguments: %u\n", k->num_args);
    for (uint32_t j = 0; j < k->num_args; j++) {
      const struct aquila_fatbin_arg *a = &k->args[j];
      printf("      %u %s: %s, %s, address %s, access %s, type qualifiers", j, a->name,
             a->type_name, arg_kind_name(a->kind), address_name(a->address_qualifier),
             access_name(a->access_qualifier));
      int any = 0;
      for (size_t q = 0; q < NUM_TYPE_QUALIFIERS; q++) {
        if (a->type_qualifier & type_qualifiers[q].bit) {
          printf("%s%s", any ? "," : " ", type_qualifiers[q].name);
          any = 1;
        }
      }
      printf("%s, size %u, alignment %u, offset %u\n", any ? "" : " none", a->size, a->alignment,
             a->offset);
    }
    text_footprint(k);
  }
}

/* ---- subcommands ---- */

static int wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
  return 0;
}

static int cmd_show(int argc, char **argv, int details) {
  const char *cmd = argv[0];
  if (wants_help(argc, argv)) {
    printf("usage: clfatbin %s [--json] FILE\n"
           "%s\n"
           "  --json   print one JSON object instead of text\n",
           cmd,
           details ? "Prints the targets, and the kernels with their attributes and arguments\n"
                     "(types, qualifiers, sizes, offsets)."
                   : "Prints the version, kind, targets with sizes, and kernels with argument "
                     "counts.");
    return EXIT_OK;
  }
  static const struct option opts[] = {{"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
  int json = 0, c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'j')
      json = 1;
    else
      return usage_error(cmd, "unknown option");
  }
  if (optind != argc - 1) return usage_error(cmd, "expected one FILE");
  struct aquila_fatbin *fb = load(argv[optind]);
  if (!fb) return EXIT_INVALID;
  if (json)
    json_fatbin(fb, details);
  else if (details)
    text_info(fb);
  else
    text_list(fb);
  aquila_fatbin_destroy(fb);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_INVALID;
}

static int cmd_extract(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    printf("usage: clfatbin extract (--target T | --bitcode | --source | --options) "
           "[-o OUT] FILE\n"
           "Writes one part of the fat binary to OUT (default: standard output):\n"
           "  --target T   the code object for target T\n"
           "  --bitcode    the portable LLVM bitcode (the same as --target bitcode)\n"
           "  --source     the OpenCL C source\n"
           "  --options    the build options\n");
    return EXIT_OK;
  }
  static const struct option opts[] = {
      {"target", required_argument, 0, 't'}, {"bitcode", no_argument, 0, 'b'},
      {"source", no_argument, 0, 's'},       {"options", no_argument, 0, 'O'},
      {"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
  const char *target = NULL, *out = "-";
  int what = 0, choices = 0, c;
  while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
    switch (c) {
    case 't':
      target = optarg;
      what = 't';
      choices++;
      break;
    case 'b':
      target = "bitcode";
      what = 't';
      choices++;
      break;
    case 's':
      what = 's';
      choices++;
      break;
    case 'O':
      what = 'O';
      choices++;
      break;
    case 'o':
      out = optarg;
      break;
    default:
      return usage_error("extract", "unknown option");
    }
  }
  if (choices != 1)
    return usage_error("extract", "choose one of --target, --bitcode, --source, --options");
  if (optind != argc - 1) return usage_error("extract", "expected one FILE");
  struct aquila_fatbin *fb = load(argv[optind]);
  if (!fb) return EXIT_INVALID;
  const void *data = NULL;
  size_t size = 0;
  if (what == 't') {
    const struct aquila_fatbin_code *code = aquila_fatbin_find_code(fb, target);
    if (code)
      data = code->data, size = code->size;
    else
      fprintf(stderr, "clfatbin: %s: no code object for target %s\n", argv[optind], target);
  } else {
    const char *text = what == 's' ? fb->source : fb->build_options;
    if (text)
      data = text, size = strlen(text);
    else
      fprintf(stderr, "clfatbin: %s: no %s\n", argv[optind],
              what == 's' ? "source" : "build options");
  }
  int rc = data && write_bytes(out, data, size) == 0 ? EXIT_OK : EXIT_INVALID;
  aquila_fatbin_destroy(fb);
  return rc;
}

static int same_string(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int same_kernel(const struct aquila_fatbin_kernel *a, const struct aquila_fatbin_kernel *b) {
  if (strcmp(a->name, b->name) || !same_string(a->vec_type_hint, b->vec_type_hint) ||
      strcmp(a->attributes, b->attributes) ||
      memcmp(a->reqd_work_group_size, b->reqd_work_group_size, sizeof a->reqd_work_group_size) ||
      memcmp(a->work_group_size_hint, b->work_group_size_hint, sizeof a->work_group_size_hint) ||
      a->local_mem_size != b->local_mem_size || a->kernarg_size != b->kernarg_size ||
      a->kernarg_alignment != b->kernarg_alignment ||
      a->hidden_kernarg_offset != b->hidden_kernarg_offset || a->num_args != b->num_args)
    return 0;
  for (uint32_t i = 0; i < a->num_args; i++) {
    const struct aquila_fatbin_arg *x = &a->args[i], *y = &b->args[i];
    if (strcmp(x->name, y->name) || strcmp(x->type_name, y->type_name) || x->kind != y->kind ||
        x->address_qualifier != y->address_qualifier ||
        x->access_qualifier != y->access_qualifier || x->type_qualifier != y->type_qualifier ||
        x->size != y->size || x->alignment != y->alignment || x->offset != y->offset)
      return 0;
  }
  return 1;
}

/* Why two fat binaries are not the same program, or NULL if they are. */
static const char *program_difference(const struct aquila_fatbin *a,
                                      const struct aquila_fatbin *b) {
  if (a->kind != b->kind) return "the binary kinds differ";
  if (a->num_kernels != b->num_kernels) return "the kernel counts differ";
  for (uint32_t i = 0; i < a->num_kernels; i++) {
    const struct aquila_fatbin_kernel *k = aquila_fatbin_find_kernel(b, a->kernels[i].name);
    if (!k || !same_kernel(&a->kernels[i], k)) return "the kernel metadata differs";
  }
  if (a->source && b->source && strcmp(a->source, b->source) != 0) return "the sources differ";
  if (a->build_options && b->build_options && strcmp(a->build_options, b->build_options) != 0)
    return "the build options differ";
  return NULL;
}

static int cmd_combine(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    printf("usage: clfatbin combine -o OUT FILE FILE...\n"
           "Merges fat binaries of the same program (same kind, kernels and metadata,\n"
           "source and options where present) into one holding every target.\n"
           "A target present in several inputs must have identical code.\n");
    return EXIT_OK;
  }
  static const struct option opts[] = {{"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
  const char *out = NULL;
  int c;
  while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
    if (c == 'o')
      out = optarg;
    else
      return usage_error("combine", "unknown option");
  }
  if (!out) return usage_error("combine", "-o OUT is required");
  if (optind >= argc) return usage_error("combine", "expected at least one FILE");
  struct aquila_fatbin *result = load(argv[optind]);
  if (!result) return EXIT_INVALID;
  int rc = EXIT_OK;
  for (int i = optind + 1; i < argc && rc == EXIT_OK; i++) {
    struct aquila_fatbin *fb = load(argv[i]);
    if (!fb) {
      rc = EXIT_INVALID;
      break;
    }
    const char *why = program_difference(result, fb);
    if (why) {
      fprintf(stderr, "clfatbin: %s and %s are not the same program: %s\n", argv[optind], argv[i],
              why);
      rc = EXIT_INVALID;
    }
    for (uint32_t j = 0; !why && j < fb->num_codes && rc == EXIT_OK; j++) {
      const struct aquila_fatbin_code *code = &fb->codes[j];
      const struct aquila_fatbin_code *have = aquila_fatbin_find_code(result, code->target);
      if (have) {
        if (have->size != code->size || memcmp(have->data, code->data, code->size) != 0) {
          fprintf(stderr, "clfatbin: %s: target %s differs from the one already combined\n",
                  argv[i], code->target);
          rc = EXIT_INVALID;
        }
      } else if (aquila_fatbin_add_code(result, code->target, code->data, code->size)) {
        fprintf(stderr, "clfatbin: out of memory\n");
        rc = EXIT_INVALID;
      }
    }
    if (rc == EXIT_OK && (!result->source || !result->build_options) &&
        aquila_fatbin_set_source(result, result->source ? result->source : fb->source,
                                 result->build_options ? result->build_options
                                                       : fb->build_options)) {
      fprintf(stderr, "clfatbin: out of memory\n");
      rc = EXIT_INVALID;
    }
    aquila_fatbin_destroy(fb);
  }
  if (rc == EXIT_OK && clfatbin_save(result, out)) rc = EXIT_INVALID;
  aquila_fatbin_destroy(result);
  return rc;
}

static int cmd_strip(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    printf("usage: clfatbin strip [--target T]... [--bitcode] [--source] [--options] "
           "[-o OUT] FILE\n"
           "Removes parts of a fat binary and writes the result to OUT (default: FILE\n"
           "itself, replaced only once the new file is complete):\n"
           "  --target T   drop the code object for T (repeatable; an absent T is an error)\n"
           "  --bitcode    drop the portable bitcode\n"
           "  --source     drop the OpenCL C source\n"
           "  --options    drop the build options\n");
    return EXIT_OK;
  }
  static const struct option opts[] = {
      {"target", required_argument, 0, 't'}, {"bitcode", no_argument, 0, 'b'},
      {"source", no_argument, 0, 's'},       {"options", no_argument, 0, 'O'},
      {"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
  const char *out = NULL;
  char **targets = calloc((size_t)argc, sizeof *targets);
  int num_targets = 0, bitcode = 0, source = 0, options = 0, c;
  if (!targets) return EXIT_INVALID;
  while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
    switch (c) {
    case 't':
      targets[num_targets++] = optarg;
      break;
    case 'b':
      bitcode = 1;
      break;
    case 's':
      source = 1;
      break;
    case 'O':
      options = 1;
      break;
    case 'o':
      out = optarg;
      break;
    default:
      free(targets);
      return usage_error("strip", "unknown option");
    }
  }
  if (!num_targets && !bitcode && !source && !options) {
    free(targets);
    return usage_error("strip", "nothing to strip");
  }
  if (optind != argc - 1) {
    free(targets);
    return usage_error("strip", "expected one FILE");
  }
  const char *in = argv[optind];
  if (!out) out = in;
  struct aquila_fatbin *fb = load(in);
  int rc = fb ? EXIT_OK : EXIT_INVALID;
  for (int i = 0; rc == EXIT_OK && i < num_targets; i++) {
    if (aquila_fatbin_remove_code(fb, targets[i])) {
      fprintf(stderr, "clfatbin: %s: no code object for target %s\n", in, targets[i]);
      rc = EXIT_INVALID;
    }
  }
  if (rc == EXIT_OK && bitcode) aquila_fatbin_remove_code(fb, "bitcode");
  if (rc == EXIT_OK && (source || options) &&
      aquila_fatbin_set_source(fb, source ? NULL : fb->source,
                               options ? NULL : fb->build_options)) {
    fprintf(stderr, "clfatbin: out of memory\n");
    rc = EXIT_INVALID;
  }
  if (rc == EXIT_OK && clfatbin_save(fb, out)) rc = EXIT_INVALID;
  aquila_fatbin_destroy(fb);
  free(targets);
  return rc;
}

static int cmd_verify(int argc, char **argv) {
  if (wants_help(argc, argv)) {
    printf("usage: clfatbin verify [-q] FILE...\n"
           "Reads and validates each FILE, printing \"FILE: ok ...\" or \"FILE: reason\".\n"
           "Exit status 0 if every file is valid, 1 otherwise.\n"
           "  -q   print only the failures\n");
    return EXIT_OK;
  }
  int quiet = 0, c;
  while ((c = getopt(argc, argv, "q")) != -1) {
    if (c == 'q')
      quiet = 1;
    else
      return usage_error("verify", "unknown option");
  }
  if (optind >= argc) return usage_error("verify", "expected at least one FILE");
  int rc = EXIT_OK;
  for (int i = optind; i < argc; i++) {
    char *data;
    size_t size;
    if (clfatbin_read_file(argv[i], &data, &size)) {
      rc = EXIT_INVALID;
      continue;
    }
    struct aquila_fatbin *fb = NULL;
    char why[512];
    if (aquila_fatbin_read(data, size, &fb, why, sizeof why)) {
      printf("%s: %s\n", argv[i], why);
      rc = EXIT_INVALID;
    } else if (!quiet) {
      printf("%s: ok, version %u, %s, %u kernels, %u targets\n", argv[i], fb->version,
             kind_name(fb->kind), fb->num_kernels, fb->num_codes);
    }
    aquila_fatbin_destroy(fb);
    free(data);
  }
  return rc;
}

static void usage(FILE *to) {
  fprintf(to,
          "usage: clfatbin COMMAND [OPTIONS] ...\n"
          "Aquila fat binaries (format version %d; see clfatbin(1) and docs/FATBIN.md).\n"
          "commands:\n"
          "  list     targets and kernels, one per line\n"
          "  info     everything, with kernel arguments and attributes\n"
          "  extract  write one code object, the bitcode, the source or the options\n"
          "  combine  merge fat binaries of the same program\n"
          "  strip    drop targets, bitcode, source or options\n"
          "  verify   validate; exit status 0 or 1\n"
          "  build    compile OpenCL C to a fat binary\n"
          "clfatbin COMMAND --help describes one command. Exit status: 0 ok,\n"
          "1 invalid input or failure, 2 usage error.\n",
          AQUILA_FATBIN_VERSION);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  /* Each subcommand parses argv + 1, whose argv[0] is its own name. */
  argc--;
  argv++;
  if (strcmp(cmd, "list") == 0) return cmd_show(argc, argv, 0);
  if (strcmp(cmd, "info") == 0) return cmd_show(argc, argv, 1);
  if (strcmp(cmd, "extract") == 0) return cmd_extract(argc, argv);
  if (strcmp(cmd, "combine") == 0) return cmd_combine(argc, argv);
  if (strcmp(cmd, "strip") == 0) return cmd_strip(argc, argv);
  if (strcmp(cmd, "verify") == 0) return cmd_verify(argc, argv);
  if (strcmp(cmd, "build") == 0) return clfatbin_build(argc, argv);
  fprintf(stderr, "clfatbin: unknown command '%s'\n", cmd);
  usage(stderr);
  return EXIT_USAGE;
}
