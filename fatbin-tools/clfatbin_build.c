/* `clfatbin build`: OpenCL C sources and build options to a fat binary,
 * through aquila_compile(). Kept apart from clfatbin.c so the tool links
 * without the compiler library (built with -DAQUILA_NO_COMPILER) until that
 * library exists. */
#include "clfatbin.h"

#include <stdio.h>
#include <string.h>

static int wants_build_help(int argc, char **argv) {
  return argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
}

static void build_usage(void) {
  printf("usage: clfatbin build -o OUT [--target T]... [--options STRING] SOURCE...\n"
         "Compiles OpenCL C (the SOURCE files joined in order) into a fat binary.\n"
         "  --target T        a target name (repeatable; default: the host CPU):\n"
         "                    x86_64-native:<cpu>, x86-64-v2, x86-64-v3, x86-64-v4,\n"
         "                    amdgcn-amd-amdhsa--<gfx> (e.g. --gfx90a), nvptx64-nvidia-cuda\n"
         "                    [--sm_<N>]; 'bitcode' is always included\n"
         "  --options STRING  OpenCL build options, e.g. \"-cl-fast-relaxed-math -DN=4\"\n"
         "  -o OUT            the output file ('-' for standard output)\n"
         "The build log goes to standard error.\n");
}

#ifdef AQUILA_NO_COMPILER

int clfatbin_build(int argc, char **argv) {
  if (wants_build_help(argc, argv)) {
    build_usage();
    printf("(This clfatbin was built without the compiler: build is unavailable.)\n");
    return EXIT_OK;
  }
  fprintf(stderr, "clfatbin: this build has no compiler\n");
  return EXIT_USAGE;
}

#else

#include <getopt.h>
#include <stdlib.h>

#include "aquila/compiler.h"

/* compiler/frontend/frontend.h's switch (the tool links the compiler itself). */
extern int compile_frontend_in_sequence;

static const char *status_text(enum aquila_compile_status status) {
  switch (status) {
  case AQUILA_COMPILE_OK:
    return "ok";
  case AQUILA_COMPILE_INVALID_OPTIONS:
    return "invalid build options";
  case AQUILA_COMPILE_FAILED:
    return "compilation failed";
  case AQUILA_COMPILE_UNAVAILABLE:
    return "no compiler on this machine";
  case AQUILA_COMPILE_NO_MEMORY:
    return "out of memory";
  }
  return "unknown compiler status";
}

/* Joins the sources in order, each on its own lines. */
static char *join_sources(char **paths, int n) {
  char *all = NULL;
  size_t len = 0;
  for (int i = 0; i < n; i++) {
    char *text;
    size_t size;
    if (clfatbin_read_file(paths[i], &text, &size)) goto fail;
    if (memchr(text, 0, size)) {
      fprintf(stderr, "clfatbin: %s: source has a NUL byte\n", paths[i]);
      free(text);
      goto fail;
    }
    char *bigger = realloc(all, len + size + 2);
    if (!bigger) {
      free(text);
      goto fail;
    }
    all = bigger;
    memcpy(all + len, text, size);
    len += size;
    all[len++] = '\n';
    all[len] = 0;
    free(text);
  }
  return all;
fail:
  free(all);
  return NULL;
}

int clfatbin_build(int argc, char **argv) {
  if (wants_build_help(argc, argv)) {
    build_usage();
    return EXIT_OK;
  }
  static const struct option opts[] = {{"target", required_argument, 0, 't'},
                                       {"options", required_argument, 0, 'O'},
                                       {"output", required_argument, 0, 'o'},
                                       {0, 0, 0, 0}};
  const char **targets = calloc((size_t)argc, sizeof *targets);
  const char *options = NULL, *out = NULL;
  size_t num_targets = 0;
  int c;
  if (!targets) return EXIT_INVALID;
  while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
    switch (c) {
    case 't':
      targets[num_targets++] = optarg;
      break;
    case 'O':
      options = optarg;
      break;
    case 'o':
      out = optarg;
      break;
    default:
      free(targets);
      fprintf(stderr, "clfatbin build: unknown option (see clfatbin build --help)\n");
      return EXIT_USAGE;
    }
  }
  if (!out || optind >= argc) {
    free(targets);
    fprintf(stderr, "clfatbin build: need -o OUT and at least one SOURCE\n");
    return EXIT_USAGE;
  }
  char *source = join_sources(argv + optind, argc - optind);
  if (!source) {
    free(targets);
    return EXIT_INVALID;
  }
  struct aquila_compile_input in = {0};
  in.source = source;
  in.options = options;
  in.targets = num_targets ? targets : NULL;
  in.num_targets = num_targets;
  struct aquila_fatbin *fb = NULL;
  char *log = NULL;
  /* The compiler runs in this process: libclang's parse first, which
   * survives clang front-end crashes that clang's code generation beside
   * it would not (compiler/compile.c). */
  compile_frontend_in_sequence = 1;
  enum aquila_compile_status status = aquila_compile(&in, &fb, &log);
  if (log && *log) fputs(log, stderr);
  free(log);
  int rc = EXIT_OK;
  if (status != AQUILA_COMPILE_OK || !fb) {
    fprintf(stderr, "clfatbin build: %s\n", status_text(status));
    rc = EXIT_INVALID;
  } else if (clfatbin_save(fb, out)) {
    rc = EXIT_INVALID;
  }
  aquila_fatbin_destroy(fb);
  free(source);
  free(targets);
  return rc;
}

#endif
