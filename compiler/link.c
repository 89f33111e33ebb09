/* clLinkProgram's compiler side: links the portable bitcode of compiled
 * objects and libraries with LLVM's linker, then either packages a library
 * or generates the host CPU's code object for an executable. */
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <stdlib.h>
#include <string.h>

#include "aquila/compiler.h"
#include "codegen/codegen.h"
#include "support/strbuf.h"
#include "support/util.h"

/* Link options of OpenCL 1.2 (section 5.6.5.3). The math options are
 * accepted; the code keeps the math flags it was compiled with. */
static int parse_link_options(const char *options, int *create_library, struct strbuf *log) {
  static const char *const accepted[] = {"-enable-link-options",
                                         "-cl-denorms-are-zero",
                                         "-cl-no-signed-zeros",
                                         "-cl-unsafe-math-optimizations",
                                         "-cl-finite-math-only",
                                         "-cl-fast-relaxed-math",
                                         NULL};
  *create_library = 0;
  const char *s = options ? options : "";
  while (*s) {
    while (*s == ' ' || *s == '\t' || *s == '\n')
      s++;
    if (!*s) break;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\n')
      e++;
    size_t len = (size_t)(e - s);
    int known = 0;
    if (len == strlen("-create-library") && !strncmp(s, "-create-library", len)) {
      *create_library = known = 1;
    }
    for (int i = 0; accepted[i] && !known; i++)
      known = len == strlen(accepted[i]) && !strncmp(s, accepted[i], len);
    if (!known) {
      strbuf_printf(log, "error: unknown link option '%.*s'\n", (int)len, s);
      return -1;
    }
    s = e;
  }
  return 0;
}

static void collect_diagnostic(LLVMDiagnosticInfoRef info, void *data) {
  char *msg = LLVMGetDiagInfoDescription(info);
  strbuf_printf(data, "error: link: %s\n", msg);
  LLVMDisposeMessage(msg);
}

enum aquila_compile_status aquila_link(const struct aquila_fatbin *const *inputs, size_t num_inputs,
                                       const char *options, int code_on_demand,
                                       struct aquila_fatbin **out, char **log_out) {
  struct strbuf log = {0};
  *out = NULL;
  int create_library = 0;
  if (parse_link_options(options, &create_library, &log)) {
    *log_out = strbuf_take(&log);
    return AQUILA_COMPILE_INVALID_OPTIONS;
  }
  enum aquila_compile_status status = AQUILA_COMPILE_FAILED;
  struct aquila_fatbin *fb =
      aquila_fatbin_create(create_library ? AQUILA_FATBIN_LIBRARY : AQUILA_FATBIN_EXECUTABLE);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(ctx, collect_diagnostic, &log);
  LLVMModuleRef linked = NULL;
  LLVMMemoryBufferRef linked_bc = NULL;
  char *dir = NULL;
  if (!fb) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  for (size_t i = 0; i < num_inputs; i++) {
    const struct aquila_fatbin *in = inputs[i];
    const struct aquila_fatbin_code *bc = aquila_fatbin_find_code(in, "bitcode");
    if (!bc || (in->kind != AQUILA_FATBIN_COMPILED_OBJECT && in->kind != AQUILA_FATBIN_LIBRARY)) {
      strbuf_printf(&log, "error: input %zu is not a compiled object or library\n", i);
      goto out;
    }
    for (uint32_t k = 0; k < in->num_kernels; k++) {
      if (aquila_fatbin_find_kernel(fb, in->kernels[k].name)) {
        strbuf_printf(&log, "error: link: kernel '%s' is defined more than once\n",
                      in->kernels[k].name);
        goto out;
      }
      if (aquila_fatbin_add_kernel(fb, &in->kernels[k])) {
        status = AQUILA_COMPILE_NO_MEMORY;
        goto out;
      }
    }
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(bc->data, bc->size, "object.bc");
    LLVMModuleRef m = NULL;
    int bad = LLVMParseBitcodeInContext2(ctx, buf, &m);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
      strbuf_printf(&log, "error: input %zu holds invalid bitcode\n", i);
      goto out;
    }
    if (!linked) {
      linked = m;
    } else if (LLVMLinkModules2(linked, m)) { /* m is consumed either way */
      strbuf_append(&log, "error: linking failed\n");
      goto out;
    }
  }
  if (!linked) {
    strbuf_append(&log, "error: nothing to link\n");
    goto out;
  }
  linked_bc = LLVMWriteBitcodeToMemoryBuffer(linked);
  const void *bc_data = LLVMGetBufferStart(linked_bc);
  size_t bc_size = LLVMGetBufferSize(linked_bc);
  uint64_t variables = 0;
  int sub_groups = 0;
  if (!create_library) {
    if (codegen_program_variables(bc_data, bc_size, &variables, &sub_groups, &log)) goto out;
    static const unsigned char one = 1;
    if (sub_groups && aquila_fatbin_add_code(fb, CODEGEN_SUB_GROUPS_ENTRY, &one, 1)) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
      le[i] = (unsigned char)(variables >> (8 * i));
    if (variables && aquila_fatbin_add_code(fb, CODEGEN_PROGRAM_VARIABLES_ENTRY, le, sizeof le)) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
  }
  /* Writable program-scope variables: one code object, made now (compile.c). */
  if (!create_library && code_on_demand && !variables && !sub_groups) {
    /* What code generation would refuse (a function nobody defines) is the
     * link's error still; the code itself comes at kernels' first launches. */
    if (codegen_check_bitcode(bc_data, bc_size, fb->kernels, fb->num_kernels, &log)) goto out;
  } else if (!create_library) {
    if (!(dir = make_scratch_dir())) {
      strbuf_append(&log, "error: cannot create a scratch directory\n");
      goto out;
    }
    const char *host = aquila_compiler_host_target();
    void *code = NULL;
    size_t code_size = 0;
    if (codegen_cpu_code_object(bc_data, bc_size, host, 0, fb->kernels, fb->num_kernels, 0, dir,
                                &code, &code_size, &log))
      goto out;
    int rc = aquila_fatbin_add_code(fb, host, code, code_size);
    free(code);
    if (rc) {
      status = AQUILA_COMPILE_NO_MEMORY;
      goto out;
    }
  }
  if (aquila_fatbin_add_code(fb, "bitcode", bc_data, bc_size) ||
      aquila_fatbin_set_source(fb, NULL, options ? options : "")) {
    status = AQUILA_COMPILE_NO_MEMORY;
    goto out;
  }
  *out = fb;
  fb = NULL;
  status = AQUILA_COMPILE_OK;
out:
  if (dir) {
    remove_scratch_dir(dir);
    free(dir);
  }
  if (linked_bc) LLVMDisposeMemoryBuffer(linked_bc);
  if (linked) LLVMDisposeModule(linked);
  LLVMContextDispose(ctx);
  aquila_fatbin_destroy(fb);
  *log_out = strbuf_take(&log);
  return status;
}
