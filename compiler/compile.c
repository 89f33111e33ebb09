/* The compiler's entry points: OpenCL C source to an executable fat binary.
 *
 *   1. libclang parses the source: diagnostics for the log, kernel signatures;
 *   2. the clang driver generates portable LLVM bitcode with the builtin
 *      library linked in (only what the program uses);
 *   3. for each CPU target, codegen.c builds a CPU code object from that
 *      bitcode; for each GPU target, gpu.c builds a code object from the
 *      source with the driver and libclc (the bitcode is x86-64's).
 *
 * Scratch files live in a private directory under $TMPDIR, removed after. */
#include "aquila/compiler.h"

#include <errno.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helper/cache.h"
#include "frontend/clang_in_process.h"
#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "frontend/options.h"
#include "frontend/spirv.h"
#include "support/spawn.h"
#include "support/strbuf.h"
#include "support/util.h"

/* The builtin library, embedded at build time (builtins_blob.S). */
extern const char aquila_builtins_bc_start[];
extern const char aquila_builtins_bc_end[];

static const char *const common_args[] = {
    "-x",
    "cl",
    "-target",
    "x86_64-pc-linux-gnu",
    "-fPIC",
    "-Xclang",
    "-finclude-default-header",
    "-Xclang",
    "-ffake-address-space-map",
    /* Builtins' names as SPIR's (builtins.mk): SPIR-V's calls find them. */
    "-Xclang",
    "-faddress-space-map-mangling=yes",
    "-Xclang",
    "-cl-ext=-cl_khr_fp16",
    "-D__OPENCL_VERSION__=300", /* the device's version (runtime/features.c) */
    "-D__IMAGE_SUPPORT__=1",
    "-Wno-unused-command-line-argument",
    "-Wno-psabi",
};
#define NUM_COMMON_ARGS (sizeof common_args / sizeof common_args[0])

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char host_target[128];

static void find_host_target(void) {
  const char *level = cpu_target_override();
  if (level) {
    snprintf(host_target, sizeof host_target, "%s", level);
    return;
  }
  char *cpu = LLVMGetHostCPUName();
  snprintf(host_target, sizeof host_target, "x86_64-native:%s", cpu);
  LLVMDisposeMessage(cpu);
}

const char *aquila_compiler_host_target(void) {
  pthread_once(&host_once, find_host_target);
  return host_target;
}

void aquila_compiler_unload(void) {
  /* In-process, LLVM's state stays loaded with the library. */
}

static char *path_in(const char *dir, const char *name) {
  struct strbuf sb = {0};
  strbuf_printf(&sb, "%s/%s", dir, name);
  return strbuf_take(&sb);
}

/* Builds the argument vector shared by libclang and the driver. */
static const char **frontend_args(const struct build_options *opts, const char *dir,
                                  char std_arg[32], int *count) {
  size_t n = NUM_COMMON_ARGS + opts->num_clang_args + 4;
  const char **args = calloc(n, sizeof *args);
  if (!args) abort();
  int k = 0;
  for (size_t i = 0; i < NUM_COMMON_ARGS; i++)
    args[k++] = common_args[i];
  snprintf(std_arg, 32, "-cl-std=%s", opts->cl_std);
  args[k++] = std_arg;
  args[k++] = "-I";
  args[k++] = dir;
  for (size_t i = 0; i < opts->num_clang_args; i++)
    args[k++] = opts->clang_args[i];
  *count = k;
  return args;
}

/* Refuses a target name this build cannot generate code for, before any
 * work, with the names it does accept. */
static int check_targets(const char *const *targets, size_t num_targets, struct strbuf *log) {
  int bad = 0;
  for (size_t i = 0; i < num_targets; i++) {
    const char *t = targets[i];
    if (!strcmp(t, "bitcode") || codegen_supports_target(t)) continue;
    enum gpu_kind kind = gpu_target_kind(t);
    if (kind == GPU_AMD || kind == GPU_NVIDIA) continue;
    strbuf_printf(log,
                  "error: unknown target '%s' (targets: x86_64-native:<cpu> for this CPU, "
                  "x86-64-v2, x86-64-v3, x86-64-v4, bitcode, amdgcn-amd-amdhsa--gfx<N>, "
                  "nvptx64-nvidia-cuda, nvptx64-nvidia-cuda--sm_<N>)\n",
                  t);
    bad++;
  }
  return bad ? -1 : 0;
}

static void copy_kernels(struct aquila_fatbin *fb, const struct frontend_result *fr) {
  for (unsigned i = 0; i < fr->num_kernels; i++)
    aquila_fatbin_add_kernel(fb, &fr->kernels[i]);
}

/* Appends what the clang driver printed, less the report of a crash of its
 * own (the request for a bug report and the stack dump, of no use to the
 * program's author): the diagnostics before it and the driver's closing
 * line stay. */
static void append_driver_output(struct strbuf *log, const char *text) {
  if (!text) return;
  const char *report = strstr(text, "PLEASE submit a bug report");
  const char *dump = strstr(text, "Stack dump:");
  if (!report || (dump && dump < report)) report = dump;
  if (!report) {
    strbuf_append(log, text);
    return;
  }
  strbuf_appendn(log, text, (size_t)(report - text));
  const char *closing = strstr(report, "error: clang frontend command failed");
  if (!closing) return;
  while (closing > report && closing[-1] != '\n')
    closing--;
  strbuf_append(log, closing);
}

/* The clang driver's command line: AQUILA_CLANG or clang-19, the front
 * end's arguments, and room for `extra` more and the terminating NULL;
 * *count is the next free slot. NULL when out of memory. */
static char **driver_argv(const char *const *args, int nargs, size_t extra, int *count) {
  const char *clang = getenv("AQUILA_CLANG");
  char **argv = calloc((size_t)nargs + extra + 3, sizeof *argv);
  if (!argv) return NULL;
  int k = 0;
  argv[k++] = (char *)(clang ? clang : "clang-19");
  for (int i = 0; i < nargs; i++)
    argv[k++] = (char *)args[i];
  /* Should clang crash, its reproducer (the preprocessed program and a
   * script) would be left in the system's temporary directory. */
  argv[k++] = "-fno-crash-diagnostics";
  *count = k;
  return argv;
}

/* libclang keeps no diagnostics of a parse it crashed in; the driver,
 * given the same arguments, prints them before it crashes the same way. */
static void append_diagnostics_before_crash(const char *const *args, int nargs,
                                            const char *src_path, struct strbuf *log) {
  int k;
  char **argv = driver_argv(args, nargs, 2, &k);
  if (!argv) return;
  argv[k++] = "-fsyntax-only";
  argv[k++] = (char *)src_path;
  struct strbuf out = {0};
  spawn_and_wait(argv, &out);
  free(argv);
  append_driver_output(log, out.data);
  strbuf_free(&out);
}

/* Clang recurses once per nesting level of a program (helper.c serves
 * requests on a thread with a stack this large; the parse's thread gets
 * one too). */
#define COMPILE_STACK_SIZE ((size_t)1 << 30)

struct parse_job {
  const char *src_path;
  const char *const *args;
  int nargs;
  struct frontend_result *fr;
  struct strbuf log;
  int parsed; /* frontend_parse's result */
  double ms;
};

static void *run_parse(void *arg) {
  struct parse_job *job = arg;
  double t0 = phase_ms();
  job->parsed = frontend_parse(job->src_path, job->args, job->nargs, job->fr, &job->log);
  job->ms = phase_ms() - t0;
  return NULL;
}

int compile_frontend_in_sequence;

enum { EMIT_NO_MEMORY = -100, EMIT_CRASHED = -101, EMIT_FAILED = -102, EMIT_NO_DRIVER = -103 };

/* Clang's bitcode for the program, linked with the builtin library, into
 * bc_path: in this process, or with AQUILA_CLANG's driver (which reads the
 * library from lib_path, written for it). 0, an EMIT_ code, or the
 * driver's exit status; *diagnostics gets what clang printed. */
static int emit_bitcode(const char *const *args, int nargs, const char *lib_path,
                        const char *bc_path, const char *src_path, char **diagnostics) {
  int k;
  char **argv = driver_argv(args, nargs, 16, &k);
  *diagnostics = NULL;
  if (!argv) return EMIT_NO_MEMORY;
  /* -O1 without LLVM passes: unoptimized IR, but C99 inline definitions
   * (`inline` without `static` or `extern`, common in shared OpenCL
   * headers) are emitted as available_externally bodies instead of being
   * dropped, so calls to them resolve like on every other OpenCL compiler.
   * Lifetime markers stay off: a value kept once for all work-items would
   * carry one work-item's lifetime end into the others. */
  argv[k++] = "-O1";
  argv[k++] = "-Xclang";
  argv[k++] = "-disable-llvm-passes";
  argv[k++] = "-Xclang";
  argv[k++] = "-disable-lifetime-markers";
  argv[k++] = "-emit-llvm";
  argv[k++] = "-c";
  argv[k++] = "-o";
  argv[k++] = (char *)bc_path;
  argv[k++] = (char *)src_path;
  argv[k] = NULL;
  if (!getenv("AQUILA_CLANG")) {
    /* In this process: no clang-19 to start, and the library is linked
     * from memory. AQUILA_CLANG runs that driver instead. */
    int rc = clang_emit_bitcode_in_process(
        (const char *const *)argv, k, bc_path, aquila_builtins_bc_start,
        (size_t)(aquila_builtins_bc_end - aquila_builtins_bc_start), diagnostics);
    free(argv);
    if (rc < 0) frontend_note_crash();
    return rc == 0 ? 0 : rc < 0 ? EMIT_CRASHED : EMIT_FAILED;
  }
  if (write_file(lib_path, aquila_builtins_bc_start,
                 (size_t)(aquila_builtins_bc_end - aquila_builtins_bc_start)) != 0) {
    free(argv);
    return EMIT_NO_DRIVER;
  }
  k -= 3; /* the library before -o output input */
  argv[k++] = "-Xclang";
  argv[k++] = "-mlink-builtin-bitcode";
  argv[k++] = "-Xclang";
  argv[k++] = (char *)lib_path;
  argv[k++] = "-o";
  argv[k++] = (char *)bc_path;
  argv[k++] = (char *)src_path;
  argv[k] = NULL;
  struct strbuf driver_out = {0};
  int rc = spawn_and_wait(argv, &driver_out);
  free(argv);
  *diagnostics = strbuf_take(&driver_out);
  return rc == 0 ? 0 : rc < 0 ? EMIT_NO_DRIVER : rc;
}

enum aquila_compile_status aquila_compile(const struct aquila_compile_input *in,
                                          struct aquila_fatbin **out, char **log_out) {
  struct strbuf log = {0};
  struct build_options opts;
  *out = NULL;
  if (build_options_parse(in->options, &opts, &log)) {
    *log_out = strbuf_take(&log);
    return AQUILA_COMPILE_INVALID_OPTIONS;
  }
  if (!in->compile_only && check_targets(in->targets, in->num_targets, &log)) {
    build_options_free(&opts);
    *log_out = strbuf_take(&log);
    return AQUILA_COMPILE_FAILED;
  }
  enum aquila_compile_status status = AQUILA_COMPILE_FAILED;
  struct cache_key key;
  int cacheable = cache_make_key(in, &key) == 0;
  if (cacheable) {
    struct aquila_fatbin *cached = cache_load(&key);
    if (cached) {
      build_options_free(&opts);
      *out = cached;
      *log_out = strbuf_take(&log);
      return AQUILA_COMPILE_OK;
    }
  }
  char *dir = make_scratch_dir();
  char *src_path = NULL, *bc_path = NULL, *lib_path = NULL;
  void *bitcode = NULL;
  size_t bitcode_size = 0;
  struct frontend_result fr = {0};
  struct aquila_fatbin *fb = NULL;
  const char **args = NULL;
  double t_start = phase_ms(), t_bitcode = 0, parse_ms = 0;
  if (!dir) {
    strbuf_printf(&log, "error: cannot create a scratch directory: %s\n", strerror(errno));
    goto out;
  }
  if (in->il) {
    /* SPIR-V: the translator and spirv.c stand for clang and libclang. */
    if (in->num_headers || (in->num_targets && !(in->num_targets == 1 &&
                                                 codegen_supports_target(in->targets[0])))) {
      strbuf_append(&log, "error: a SPIR-V program is built for this CPU's targets only, "
                          "without headers\n");
      goto out;
    }
    if (spirv_to_bitcode(in, dir, &bitcode, &bitcode_size, &fr, &log)) goto out;
    t_bitcode = phase_ms();
    goto have_bitcode;
  }
  src_path = path_in(dir, "input.cl");
  bc_path = path_in(dir, "program.bc");
  lib_path = path_in(dir, "builtins.bc");
  int ok = write_file(src_path, in->source, strlen(in->source)) == 0;
  for (size_t i = 0; ok && i < in->num_headers; i++) {
    if (strstr(in->header_names[i], "..") || in->header_names[i][0] == '/') {
      strbuf_printf(&log, "error: header name '%s' must be a relative path\n", in->header_names[i]);
      ok = 0;
      break;
    }
    char *p = path_in(dir, in->header_names[i]);
    for (char *slash = strchr(p + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
      *slash = 0;
      mkdir(p, 0700);
      *slash = '/';
    }
    ok = write_file(p, in->header_sources[i], strlen(in->header_sources[i])) == 0;
    free(p);
  }
  if (!ok) {
    strbuf_append(&log, "error: cannot write the program to the scratch directory\n");
    goto out;
  }

  int nargs = 0;
  char std_arg[32];
  args = frontend_args(&opts, dir, std_arg, &nargs);
  /* libclang's parse (diagnostics, kernel metadata) and clang's bitcode
   * generation read the same source: they run side by side, the parse on
   * a thread of its own (a 100 KB kernel: 75 ms and 150 ms, one after the
   * other before). The bitcode is used only when the parse found no
   * errors. Clang inside this process does not survive every crash that
   * libclang does (a program that crashes clang's front end ends this
   * process): the application then asks again with the two in sequence
   * (helper_client.c), which brings back libclang's diagnostics. */
  struct parse_job parse = {src_path, args, nargs, &fr, {0}, -1, 0};
  frontend_register_targets();
  pthread_t parse_thread;
  pthread_attr_t attr;
  int parallel = !compile_frontend_in_sequence && pthread_attr_init(&attr) == 0;
  if (parallel) {
    parallel = pthread_attr_setstacksize(&attr, COMPILE_STACK_SIZE) == 0 &&
               pthread_create(&parse_thread, &attr, run_parse, &parse) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!parallel) run_parse(&parse);
  char *diagnostics = NULL;
  int rc = parallel || (parse.parsed == 0 && fr.num_errors == 0)
               ? emit_bitcode(args, nargs, lib_path, bc_path, src_path, &diagnostics)
               : EMIT_FAILED;
  if (parallel) pthread_join(parse_thread, NULL);
  t_bitcode = phase_ms();
  parse_ms = parse.ms;
  strbuf_append(&log, parse.log.data ? parse.log.data : "");
  strbuf_free(&parse.log);
  if (parse.parsed == FRONTEND_CRASHED)
    append_diagnostics_before_crash(args, nargs, src_path, &log);
  if (parse.parsed != 0 || fr.num_errors) {
    free(diagnostics);
    goto out;
  }
  if (rc != 0) {
    if (rc == EMIT_NO_MEMORY) {
      status = AQUILA_COMPILE_NO_MEMORY;
    } else if (rc == EMIT_CRASHED) {
      strbuf_append(&log, "error: clang crashed generating code for this program (a "
                          "defect of clang, not a diagnosis of the program)\n");
    } else if (rc == EMIT_FAILED) {
      strbuf_append(&log, "error: code generation failed\n");
    } else if (rc == EMIT_NO_DRIVER) {
      strbuf_append(&log, "error: code generation failed (clang did not start)\n");
      status = AQUILA_COMPILE_UNAVAILABLE;
    } else {
      strbuf_printf(&log, "error: code generation failed (clang status %d)\n", rc);
    }
    append_driver_output(&log, diagnostics);
    free(diagnostics);
    goto out;
  }
  free(diagnostics);
  if (read_file(bc_path, &bitcode, &bitcode_size)) {
    strbuf_append(&log, "error: cannot read the generated bitcode\n");
    goto out;
  }

have_bitcode:
  fb = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE);
  if (!fb) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  const char *host = aquila_compiler_host_target();
  if (in->compile_only) {
    /* A compiled object: bitcode and metadata; code comes at link time. */
    fb->kind = AQUILA_FATBIN_COMPILED_OBJECT;
    if (codegen_kernel_layout(bitcode, bitcode_size, fr.kernels, fr.num_kernels, &log)) goto out;
    copy_kernels(fb, &fr);
    if (aquila_fatbin_add_code(fb, "bitcode", bitcode, bitcode_size) ||
        aquila_fatbin_set_source(fb, in->source, in->options ? in->options : "")) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
    *out = fb;
    fb = NULL;
    status = AQUILA_COMPILE_OK;
    goto out;
  }
  const char *const *targets = in->num_targets ? in->targets : &host;
  size_t num_targets = in->num_targets ? in->num_targets : 1;
  int layout_done = 0; /* the kernels' layout filled in */
  /* Writable program-scope variables: every kernel must reach the same
   * ones, so the code is one object, made now. */
  uint64_t variables = 0;
  int sub_groups = 0;
  if (codegen_program_variables(bitcode, bitcode_size, &variables, &sub_groups, &log)) goto out;
  static const unsigned char one = 1;
  if (sub_groups && aquila_fatbin_add_code(fb, CODEGEN_SUB_GROUPS_ENTRY, &one, 1)) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  if (variables) {
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
      le[i] = (unsigned char)(variables >> (8 * i));
    if (aquila_fatbin_add_code(fb, CODEGEN_PROGRAM_VARIABLES_ENTRY, le, sizeof le)) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
  }
  if (in->code_on_demand && in->num_targets == 0 && !variables && !sub_groups) {
    /* Code comes kernel by kernel when the application uses one
     * (aquila_compile_kernels); the build still reports what code
     * generation would refuse. */
    if (codegen_check_bitcode(bitcode, bitcode_size, fr.kernels, fr.num_kernels, &log)) goto out;
    num_targets = 0;
    layout_done = 1;
  }
  for (size_t i = 0; i < num_targets; i++) {
    if (!strcmp(targets[i], "bitcode") || !strcmp(targets[i], CODEGEN_PROGRAM_VARIABLES_ENTRY) ||
        !strcmp(targets[i], CODEGEN_SUB_GROUPS_ENTRY))
      continue; /* always included, or not code */
    void *code = NULL;
    size_t code_size = 0;
    if (codegen_supports_target(targets[i])) {
      if (codegen_cpu_code_object(bitcode, bitcode_size, targets[i], opts.opt_disable, fr.kernels,
                                  fr.num_kernels, 0, dir, &code, &code_size, &log))
        goto out;
      layout_done = 1;
    } else if (codegen_gpu_code_object(targets[i], &opts, src_path, dir, &code, &code_size, &log)) {
      goto out;
    }
    int rc = aquila_fatbin_add_code(fb, targets[i], code, code_size);
    free(code);
    if (rc) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
  }
  if (!layout_done) {
    /* No CPU code object (bitcode and GPU targets only): the kernel layout
     * still comes from code generation, for this CPU, whose code object is
     * not kept. */
    void *code = NULL;
    size_t code_size = 0;
    if (codegen_cpu_code_object(bitcode, bitcode_size, host, opts.opt_disable, fr.kernels,
                                fr.num_kernels, 0, dir, &code, &code_size, &log))
      goto out;
    free(code);
  }
  copy_kernels(fb, &fr);
  if (aquila_fatbin_add_code(fb, "bitcode", bitcode, bitcode_size) ||
      aquila_fatbin_set_source(fb, in->source, in->options ? in->options : "")) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  if (cacheable) cache_store(&key, fb);
  if (phases_wanted())
    strbuf_printf(&log,
                  "aquila: build: parse and diagnostics (libclang) %.1f ms, beside it bitcode with "
                  "the builtin library (clang), %.1f for both, then checks, layout and code "
                  "%.1f\n",
                  parse_ms, t_bitcode - t_start, phase_ms() - t_bitcode);
  *out = fb;
  fb = NULL;
  status = AQUILA_COMPILE_OK;
out:
  if (dir) remove_scratch_dir(dir);
  free(dir);
  free(src_path);
  free(bc_path);
  free(lib_path);
  free(args);
  free(bitcode);
  frontend_result_free(&fr);
  aquila_fatbin_destroy(fb);
  build_options_free(&opts);
  *log_out = strbuf_take(&log);
  return status;
}

/* Refuses a target that code cannot be generated for from the bitcode. */
static int check_bitcode_target(const char *target, struct strbuf *log) {
  if (codegen_supports_target(target)) return 0;
  enum gpu_kind kind = gpu_target_kind(target);
  if (kind == GPU_AMD || kind == GPU_NVIDIA)
    strbuf_printf(log,
                  "error: cannot generate code for target '%s' from the portable bitcode "
                  "(it is x86-64's): GPU code is built from the source with aquila_compile\n",
                  target);
  else
    strbuf_printf(log, "error: cannot generate code for target '%s'\n", target);
  return -1;
}

/* aquila_compile_kernels, and with facts its specialized version. */
static enum aquila_compile_status compile_kernels(struct aquila_fatbin *fb, const char *target,
                                                  const char *const *names, size_t num_names,
                                                  const struct aquila_launch_facts *facts,
                                                  unsigned flags, struct aquila_fatbin **out,
                                                  int *quick, char **log_out) {
  if (quick) *quick = 0;
  if (facts) flags &= ~(unsigned)AQUILA_CODEGEN_QUICK_IF_LARGE;
  struct strbuf log = {0};
  enum aquila_compile_status status = AQUILA_COMPILE_FAILED;
  const struct aquila_fatbin_code *bc = aquila_fatbin_find_code(fb, "bitcode");
  struct aquila_fatbin *built = NULL;
  char *dir = NULL;
  void *code = NULL;
  size_t code_size = 0;
  *out = NULL;
  if (!bc) {
    strbuf_append(&log, "error: the binary holds no portable bitcode to build from\n");
    goto out;
  }
  if (check_bitcode_target(target, &log)) goto out;
  struct cache_key key;
  int cacheable =
      (facts ? cache_make_specialized_kernels_key(fb, target, names, num_names, facts, &key)
             : cache_make_kernels_key(fb, target, names, num_names, &key)) == 0;
  if (cacheable && (built = cache_load(&key)) != NULL) {
    if (aquila_fatbin_find_code(built, target) &&
        (facts || fatbin_adopt_layout(fb, built, 0) == 0)) {
      *out = built;
      built = NULL;
      status = AQUILA_COMPILE_OK;
      goto out;
    }
    aquila_fatbin_destroy(built);
    built = NULL;
  }
  if (flags & AQUILA_CODEGEN_CACHED_ONLY) {
    strbuf_append(&log, "the kernel cache does not hold that code\n");
    status = AQUILA_COMPILE_UNAVAILABLE;
    goto out;
  }
  if (!(built = aquila_fatbin_create(AQUILA_FATBIN_EXECUTABLE))) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  for (size_t i = 0; i < num_names; i++) {
    const struct aquila_fatbin_kernel *k = aquila_fatbin_find_kernel(fb, names[i]);
    if (!k) {
      strbuf_printf(&log, "error: the program has no kernel '%s'\n", names[i]);
      goto out;
    }
    if (facts && (k->reqd_work_group_size[0] || k->reqd_work_group_size[1] ||
                  k->reqd_work_group_size[2])) {
      strbuf_printf(&log,
                    "error: kernel '%s' declares its work-group size: no version for another\n",
                    names[i]);
      goto out;
    }
    if (aquila_fatbin_add_kernel(built, k)) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
  }
  if (!(dir = make_scratch_dir())) {
    strbuf_printf(&log, "error: cannot create a scratch directory: %s\n", strerror(errno));
    goto out;
  }
  int opt_disable = fb->build_options && strstr(fb->build_options, "-cl-opt-disable");
  int made_quick = 0;
  if (codegen_cpu_code_object_tiered(
          bc->data, bc->size, target, opt_disable, built->kernels, built->num_kernels, 1,
          (flags & AQUILA_CODEGEN_QUICK_IF_LARGE) != 0, facts ? facts->local_size : NULL,
          &made_quick, dir, &code, &code_size, &log))
    goto out;
  if (aquila_fatbin_add_code(built, target, code, code_size) ||
      (!facts && fatbin_adopt_layout(fb, built, 0))) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  /* A whole version under its key; the quick tier's code under its own
   * (the next run starts from it if the vector version never came). */
  if (cacheable && !made_quick) cache_store(&key, built);
  struct cache_key quick_key;
  if (made_quick && !facts &&
      cache_make_quick_kernels_key(fb, target, names, num_names, &quick_key) == 0)
    cache_store(&quick_key, built);
  if (quick) *quick = made_quick;
  *out = built;
  built = NULL;
  status = AQUILA_COMPILE_OK;
out:
  if (dir) {
    remove_scratch_dir(dir);
    free(dir);
  }
  free(code);
  aquila_fatbin_destroy(built);
  *log_out = strbuf_take(&log);
  return status;
}

enum aquila_compile_status aquila_compile_kernels(struct aquila_fatbin *fb, const char *target,
                                                  const char *const *names, size_t num_names,
                                                  unsigned flags, struct aquila_fatbin **out,
                                                  int *quick, char **log_out) {
  return compile_kernels(fb, target, names, num_names, NULL, flags, out, quick, log_out);
}

enum aquila_compile_status aquila_compile_kernels_specialized(
    struct aquila_fatbin *fb, const char *target, const char *const *names, size_t num_names,
    const struct aquila_launch_facts *facts, unsigned flags, struct aquila_fatbin **out,
    char **log_out) {
  return compile_kernels(fb, target, names, num_names, facts, flags, out, NULL, log_out);
}

enum aquila_compile_status aquila_compile_from_bitcode(struct aquila_fatbin *fb, const char *target,
                                                       char **log_out) {
  struct strbuf log = {0};
  enum aquila_compile_status status = AQUILA_COMPILE_FAILED;
  const struct aquila_fatbin_code *bc = aquila_fatbin_find_code(fb, "bitcode");
  char *dir = NULL;
  if (!bc) {
    strbuf_append(&log, "error: the binary holds no portable bitcode to build from\n");
    goto out;
  }
  if (check_bitcode_target(target, &log)) goto out;
  if (!(dir = make_scratch_dir())) {
    strbuf_printf(&log, "error: cannot create a scratch directory: %s\n", strerror(errno));
    goto out;
  }
  int opt_disable = fb->build_options && strstr(fb->build_options, "-cl-opt-disable");
  void *code = NULL;
  size_t code_size = 0;
  if (codegen_cpu_code_object(bc->data, bc->size, target, opt_disable, fb->kernels, fb->num_kernels,
                              0, dir, &code, &code_size, &log))
    goto out;
  status = aquila_fatbin_add_code(fb, target, code, code_size) ? AQUILA_COMPILE_NO_MEMORY
                                                               : AQUILA_COMPILE_OK;
  free(code);
out:
  if (dir) {
    remove_scratch_dir(dir);
    free(dir);
  }
  *log_out = strbuf_take(&log);
  return status;
}
