/* GPU code objects: OpenCL C straight to an AMD HSA code object or to NVIDIA
 * PTX, with the clang-19 driver and libclc-19's builtin library.
 *
 * No GPU agent runs these yet; they are built so that one fat binary can
 * carry every device's code. They start from the source, not from the
 * portable bitcode: that bitcode was generated for x86-64 (its data layout,
 * calling convention and Aquila's own builtin library are the CPU's), so it
 * cannot be retargeted. The kernel metadata stays the CPU layout pass's. */
#include "codegen/codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/spawn.h"
#include "support/util.h"

#define AMD_PREFIX "amdgcn-amd-amdhsa--"
#define NVIDIA_NAME "nvptx64-nvidia-cuda"
#define NVIDIA_PREFIX NVIDIA_NAME "--"

/* PTX for .target sm_XY runs on every GPU sm_MN with MN >= XY (the driver
 * compiles it when the program loads), so the unsuffixed NVIDIA target pins
 * the oldest architecture that current CUDA drivers still support instead of
 * clang's default (sm_30), which those drivers and ptxas refuse. */
#define NVIDIA_DEFAULT_ARCH "sm_50"

static const char *libclc_dir(void) {
  const char *dir = getenv("AQUILA_LIBCLC_DIR");
  return dir && *dir ? dir : "/usr/lib/clc";
}

/* A processor name clang may take as -mcpu/-march: letters, digits, '-' and
 * '_', plus ':', '+' for AMD target IDs such as gfx90a:xnack-. Anything else
 * (spaces, quotes, path separators) is refused before reaching a command. */
static int valid_processor(const char *p, const char *prefix, int allow_features) {
  size_t n = strlen(prefix);
  if (strncmp(p, prefix, n) != 0 || !p[n]) return 0;
  for (const char *c = p + n; *c; c++) {
    int ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ||
             (allow_features && (*c == ':' || *c == '+'));
    if (!ok) return 0;
  }
  return 1;
}

enum gpu_kind gpu_target_kind(const char *target) {
  if (!strncmp(target, AMD_PREFIX, strlen(AMD_PREFIX)))
    return valid_processor(target + strlen(AMD_PREFIX), "gfx", 1) ? GPU_AMD : GPU_INVALID;
  if (!strcmp(target, NVIDIA_NAME)) return GPU_NVIDIA;
  if (!strncmp(target, NVIDIA_PREFIX, strlen(NVIDIA_PREFIX)))
    return valid_processor(target + strlen(NVIDIA_PREFIX), "sm_", 0) ? GPU_NVIDIA : GPU_INVALID;
  /* Looks like a GPU name but is not one of the forms above. */
  if (!strncmp(target, "amdgcn", 6) || !strncmp(target, "nvptx", 5)) return GPU_INVALID;
  return GPU_NONE;
}

/* The libclc-19 library for the target. amdgcn--amdhsa.bc is the one built
 * for the HSA ABI (implicit kernel arguments, dispatch packet); the per-gfx
 * files (gfx90a-amdgcn--.bc) target the OS-less amdgcn-- (Mesa) ABI, whose
 * get_local_size reads implicit kernel arguments (llvm.r600.read.local.size)
 * that an HSA dispatch does not provide. The generic HSA library is
 * processor-neutral: -mlink-builtin-bitcode gives its functions the
 * program's -mcpu when it links them.
 * nvptx64--nvidiacl.bc is the OpenCL flavour (get_global_id includes the
 * global offset); nvptx64--.bc is for CUDA-style callers. */
static const char *libclc_file(enum gpu_kind kind) {
  return kind == GPU_AMD ? "amdgcn--amdhsa.bc" : "nvptx64--nvidiacl.bc";
}

char *gpu_libclc_path(const char *target) {
  enum gpu_kind kind = gpu_target_kind(target);
  if (kind != GPU_AMD && kind != GPU_NVIDIA) return NULL;
  struct strbuf sb = {0};
  strbuf_printf(&sb, "%s/%s", libclc_dir(), libclc_file(kind));
  return strbuf_take(&sb);
}

/* Names the functions a PTX module declares .extern .func: a function the
 * program calls and neither it nor libclc defines. ptxas would accept the
 * module and the failure would come only when a driver links it, far from
 * the build; the CPU build refuses the same program, so this one does too. */
static int check_ptx_externs(const char *ptx, struct strbuf *log) {
  int missing = 0;
  for (const char *p = strstr(ptx, ".extern .func"); p; p = strstr(p + 1, ".extern .func")) {
    if (p != ptx && p[-1] != '\n') continue;
    const char *c = p + strlen(".extern .func");
    while (*c == ' ' || *c == '\t')
      c++;
    if (*c == '(') { /* the return value's parameter list */
      const char *close = strchr(c, ')');
      if (!close) break;
      c = close + 1;
      while (*c == ' ' || *c == '\t')
        c++;
    }
    size_t len = strcspn(c, " \t\r\n(;");
    strbuf_printf(log,
                  "error: undefined function '%.*s': neither defined by the program nor a "
                  "builtin libclc-19 provides\n",
                  (int)len, c);
    missing++;
  }
  return missing ? -1 : 0;
}

int codegen_gpu_code_object(const char *target, const struct build_options *opts,
                            const char *src_path, const char *dir, void **code, size_t *code_size,
                            struct strbuf *log) {
  *code = NULL;
  *code_size = 0;
  enum gpu_kind kind = gpu_target_kind(target);
  if (kind != GPU_AMD && kind != GPU_NVIDIA) {
    strbuf_printf(log, "error: cannot generate code for target '%s'\n", target);
    return -1;
  }
  char *libclc = gpu_libclc_path(target);
  struct stat sb;
  if (stat(libclc, &sb) != 0) {
    strbuf_printf(log,
                  "error: cannot build for %s: libclc-19's %s is not installed (expected at %s; "
                  "install the libclc-19 package)\n",
                  target, libclc_file(kind), libclc);
    free(libclc);
    return -1;
  }

  const char *clang = getenv("AQUILA_CLANG");
  struct strbuf out_path = {0}, std_arg = {0}, cpu_arg = {0};
  strbuf_printf(&out_path, "%s/%s", dir, kind == GPU_AMD ? "program.hsaco" : "program.ptx");
  strbuf_printf(&std_arg, "-cl-std=%s", opts->cl_std);
  if (kind == GPU_AMD) {
    strbuf_printf(&cpu_arg, "-mcpu=%s", target + strlen(AMD_PREFIX));
  } else {
    const char *arch = strncmp(target, NVIDIA_PREFIX, strlen(NVIDIA_PREFIX))
                           ? NVIDIA_DEFAULT_ARCH
                           : target + strlen(NVIDIA_PREFIX);
    strbuf_printf(&cpu_arg, "-march=%s", arch);
  }

  size_t n = opts->num_clang_args + 32;
  char **argv = calloc(n, sizeof *argv);
  if (!argv) abort();
  int k = 0;
  argv[k++] = (char *)(clang ? clang : "clang-19");
  argv[k++] = "-x";
  argv[k++] = "cl";
  argv[k++] = std_arg.data;
  argv[k++] = "-target";
  argv[k++] = kind == GPU_AMD ? "amdgcn-amd-amdhsa" : NVIDIA_NAME;
  argv[k++] = cpu_arg.data;
  /* The same language as the CPU build sees, so that one source means the
   * same on every device: the device's OpenCL version, and no half type
   * (the CPU device does not report cl_khr_fp16). */
  argv[k++] = "-Xclang";
  argv[k++] = "-finclude-default-header";
  argv[k++] = "-Xclang";
  argv[k++] = "-cl-ext=-cl_khr_fp16";
  argv[k++] = "-D__OPENCL_VERSION__=120";
  /* Without -nogpulib the AMD driver looks for the ROCm device libraries;
   * libclc takes their place. */
  if (kind == GPU_AMD) argv[k++] = "-nogpulib";
  /* libclc names its triples amdgcn-unknown-amdhsa and
   * nvptx64-unknown-nvidiacl: the same targets and data layouts under other
   * vendor/OS spellings, which clang reports as a linker warning on every
   * build. Only that mismatch produces linker warnings here. */
  argv[k++] = "-Wno-linker-warnings";
  argv[k++] = "-Wno-unused-command-line-argument";
  argv[k++] = "-I";
  argv[k++] = (char *)dir; /* embedded headers, as for the CPU build */
  for (size_t i = 0; i < opts->num_clang_args; i++)
    argv[k++] = opts->clang_args[i];
  argv[k++] = opts->opt_disable ? "-O0" : "-O3";
  if (kind == GPU_NVIDIA) argv[k++] = "-S"; /* PTX is the text assembly */
  argv[k++] = "-Xclang";
  argv[k++] = "-mlink-builtin-bitcode";
  argv[k++] = "-Xclang";
  argv[k++] = libclc;
  argv[k++] = "-o";
  argv[k++] = out_path.data;
  argv[k++] = (char *)src_path;
  argv[k] = NULL;

  struct strbuf driver_out = {0};
  int rc = spawn_and_wait(argv, &driver_out);
  int status = -1;
  if (rc != 0) {
    strbuf_printf(log, "error: code generation for %s failed (clang status %d)\n", target, rc);
    if (driver_out.data) strbuf_append(log, driver_out.data);
  } else if (read_file(out_path.data, code, code_size) != 0) {
    strbuf_printf(log, "error: cannot read the code object generated for %s\n", target);
  } else {
    status = 0;
    if (kind == GPU_NVIDIA) {
      /* PTX is stored as a NUL-free text; read_file does not terminate it. */
      char *text = realloc(*code, *code_size + 1);
      if (!text) abort();
      text[*code_size] = 0;
      *code = text;
      status = check_ptx_externs(text, log);
    }
    if (status) {
      free(*code);
      *code = NULL;
      *code_size = 0;
    }
  }
  unlink(out_path.data);
  strbuf_free(&driver_out);
  free(argv);
  free(libclc);
  strbuf_free(&out_path);
  strbuf_free(&std_arg);
  strbuf_free(&cpu_arg);
  return status;
}
