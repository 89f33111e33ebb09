/* The front end: libclang parses the program once for diagnostics (the build
 * log, with file, line and column) and for the kernel signatures that
 * clGetKernelArgInfo reports. Argument layout in the kernarg segment comes
 * later, from the generated code (workgroup.c). */
#include "frontend/frontend.h"

#include <CL/cl.h>
#include <clang-c/Index.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct visit_state {
  CXTranslationUnit tu;
  struct frontend_result *out;
};

static char *xstrdup(const char *s) {
  char *d = strdup(s ? s : "");
  if (!d) abort();
  return d;
}

/* OpenCL's names for the unsigned types, whatever order or abbreviation the
 * source used ("unsigned int", "int unsigned", "unsigned"): uint, uchar,
 * ushort, ulong; "signed char" is char. Pointer stars are kept. NULL when
 * the name is not such a spelling. */
static char *canonical_unsigned(const char *name) {
  size_t stars = 0, len = strlen(name);
  while (len && name[len - 1] == '*') {
    len--;
    stars++;
  }
  int is_unsigned = 0, is_signed = 0;
  const char *base = NULL;
  size_t base_len = 0;
  for (const char *p = name; p < name + len;) {
    while (p < name + len && *p == ' ')
      p++;
    const char *e = p;
    while (e < name + len && *e != ' ')
      e++;
    size_t n = (size_t)(e - p);
    if (n == 8 && !strncmp(p, "unsigned", 8))
      is_unsigned = 1;
    else if (n == 6 && !strncmp(p, "signed", 6))
      is_signed = 1;
    else if (n) {
      if (base) return NULL;
      base = p;
      base_len = n;
    }
    p = e;
  }
  if (!is_unsigned && !is_signed) return NULL;
  static const char *const bases[] = {"char", "short", "int", "long"};
  const char *b = "int";
  if (base) {
    b = NULL;
    for (int i = 0; i < 4; i++)
      if (strlen(bases[i]) == base_len && !strncmp(base, bases[i], base_len)) b = bases[i];
    if (!b) return NULL;
  }
  struct strbuf sb = {0};
  strbuf_printf(&sb, "%s%s", is_unsigned ? "u" : "", b);
  for (size_t i = 0; i < stars; i++)
    strbuf_append(&sb, "*");
  return strbuf_take(&sb);
}

/* Removes address-space, access and cv qualifier words from a spelling:
 * CL_KERNEL_ARG_TYPE_NAME is the bare type. */
static char *bare_type_name(const char *spelling) {
  static const char *const drop[] = {
      "__global",     "__local",      "__constant", "__private",  "global",     "local",
      "constant",     "private",      "const",      "volatile",   "restrict",   "__read_only",
      "__write_only", "__read_write", "read_only",  "write_only", "read_write", NULL};
  struct strbuf sb = {0};
  const char *s = spelling;
  while (*s) {
    if (*s == ' ') {
      s++;
      continue;
    }
    if (*s == '*') {
      strbuf_append(&sb, "*");
      s++;
      continue;
    }
    const char *e = s;
    while (*e && *e != ' ' && *e != '*')
      e++;
    size_t len = (size_t)(e - s);
    int dropped = 0;
    for (int i = 0; drop[i]; i++)
      if (strlen(drop[i]) == len && !strncmp(drop[i], s, len)) dropped = 1;
    if (!dropped) {
      if (sb.len && sb.data[sb.len - 1] != '*') strbuf_append(&sb, " ");
      strbuf_appendn(&sb, s, len);
    }
    s = e;
  }
  char *bare = strbuf_take(&sb);
  char *canonical = canonical_unsigned(bare);
  if (canonical) {
    free(bare);
    return canonical;
  }
  return bare;
}

static int is_image_type(CXType t) {
  return t.kind >= CXType_OCLImage1dRO && t.kind <= CXType_OCLImage2dArrayMSAADepthRW;
}

static void describe_param(CXCursor c, struct aquila_fatbin_arg *a) {
  CXType t = clang_getCursorType(c);
  CXString name = clang_getCursorSpelling(c);
  CXString spelling = clang_getTypeSpelling(t);
  const char *sp = clang_getCString(spelling);
  a->name = xstrdup(clang_getCString(name));
  a->address_qualifier = CL_KERNEL_ARG_ADDRESS_PRIVATE;
  a->access_qualifier = CL_KERNEL_ARG_ACCESS_NONE;
  a->type_qualifier = CL_KERNEL_ARG_TYPE_NONE;
  a->kind = AQUILA_ARG_VALUE;
  if (t.kind == CXType_Pointer) {
    CXType pointee = clang_getPointeeType(t);
    /* libclang reports the language address space: 1 global, 2 local, 3 constant. */
    switch (clang_getAddressSpace(pointee)) {
    case 1:
      a->address_qualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
      a->kind = AQUILA_ARG_GLOBAL_PTR;
      break;
    case 2:
      a->address_qualifier = CL_KERNEL_ARG_ADDRESS_LOCAL;
      a->kind = AQUILA_ARG_LOCAL_PTR;
      break;
    case 3:
      a->address_qualifier = CL_KERNEL_ARG_ADDRESS_CONSTANT;
      a->kind = AQUILA_ARG_CONSTANT_PTR;
      break;
    default:
      break;
    }
    if (clang_isConstQualifiedType(pointee) || a->kind == AQUILA_ARG_CONSTANT_PTR)
      a->type_qualifier |= CL_KERNEL_ARG_TYPE_CONST;
    if (clang_isVolatileQualifiedType(pointee)) a->type_qualifier |= CL_KERNEL_ARG_TYPE_VOLATILE;
    if (clang_isRestrictQualifiedType(t)) a->type_qualifier |= CL_KERNEL_ARG_TYPE_RESTRICT;
  } else if (is_image_type(t)) {
    a->kind = AQUILA_ARG_IMAGE;
    a->address_qualifier = CL_KERNEL_ARG_ADDRESS_GLOBAL;
    if (strstr(sp, "write_only"))
      a->access_qualifier = CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
    else if (strstr(sp, "read_write"))
      a->access_qualifier = CL_KERNEL_ARG_ACCESS_READ_WRITE;
    else
      a->access_qualifier = CL_KERNEL_ARG_ACCESS_READ_ONLY;
  } else {
    CXString canon = clang_getTypeSpelling(clang_getCanonicalType(t));
    if (strstr(clang_getCString(canon), "sampler_t")) a->kind = AQUILA_ARG_SAMPLER;
    clang_disposeString(canon);
  }
  a->type_name = bare_type_name(sp);
  clang_disposeString(spelling);
  clang_disposeString(name);
}

struct kernel_visit {
  struct aquila_fatbin_kernel *kernel;
};

static enum CXChildVisitResult visit_function_child(CXCursor c, CXCursor parent,
                                                    CXClientData data) {
  struct kernel_visit *kv = data;
  if (clang_getCursorKind(c) == CXCursor_ParmDecl) {
    struct aquila_fatbin_kernel *k = kv->kernel;
    struct aquila_fatbin_arg *args = realloc(k->args, (k->num_args + 1) * sizeof *args);
    if (!args) abort();
    k->args = args;
    memset(&args[k->num_args], 0, sizeof *args);
    describe_param(c, &args[k->num_args]);
    k->num_args++;
  }
  return CXChildVisit_Continue;
}

/* A kernel is a function whose type has the OpenCL kernel calling
 * convention (libclang shows it as "unexposed"; other functions have the C
 * one). Not the spelling of its attribute: `__kernel` often comes from a
 * macro (hashcat's KERNEL_FQ, defined in an included header). */
static int is_kernel(CXCursor c) {
  return clang_getFunctionTypeCallingConv(clang_getCursorType(c)) == CXCallingConv_Unexposed;
}

static enum CXChildVisitResult visit_top(CXCursor c, CXCursor parent, CXClientData data) {
  struct visit_state *vs = data;
  if (clang_getCursorKind(c) != CXCursor_FunctionDecl || !clang_isCursorDefinition(c) ||
      !is_kernel(c))
    return CXChildVisit_Continue;
  struct kernel_visit kv = {NULL};
  struct frontend_result *r = vs->out;
  struct aquila_fatbin_kernel *ks = realloc(r->kernels, (r->num_kernels + 1) * sizeof *ks);
  if (!ks) abort();
  r->kernels = ks;
  struct aquila_fatbin_kernel *k = &ks[r->num_kernels++];
  memset(k, 0, sizeof *k);
  CXString name = clang_getCursorSpelling(c);
  k->name = xstrdup(clang_getCString(name));
  clang_disposeString(name);
  k->attributes = xstrdup("");
  kv.kernel = k;
  clang_visitChildren(c, visit_function_child, &kv);
  return CXChildVisit_Continue;
}

static int recovered_from_crash;

int frontend_recovered_from_crash(void) {
  return recovered_from_crash;
}

void frontend_note_crash(void) {
  recovered_from_crash = 1;
}

/* clang_createIndex registers every LLVM target (for clang's modules) each
 * time it runs. In a new compiler process the first parse did that on its
 * thread while clang, on the other, looked up the x86 target to write
 * bitcode: it could find the target half registered, without its machine
 * code parts, and crash in LLVMTargetMachine::initAsmInfo (one build in a
 * few under AddressSanitizer failed so). Registered here first, before the
 * two start, libclang's registration only stores what is there already. */
static pthread_once_t targets_once = PTHREAD_ONCE_INIT;

static void register_targets(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMInitializeAllAsmParsers();
}

void frontend_register_targets(void) {
  pthread_once(&targets_once, register_targets);
}

int frontend_parse(const char *main_path, const char *const *args, int num_args,
                   struct frontend_result *out, struct strbuf *log) {
  memset(out, 0, sizeof *out);
  frontend_register_targets();
  CXIndex index = clang_createIndex(0, 0);
  if (!index) return -1;
  CXTranslationUnit tu = NULL;
  enum CXErrorCode err = clang_parseTranslationUnit2(index, main_path, args, num_args, NULL, 0,
                                                     CXTranslationUnit_None, &tu);
  if (err == CXError_Crashed) {
    recovered_from_crash = 1;
    strbuf_append(log, "error: clang's OpenCL C front end crashed on this program (a defect of "
                       "clang, not a diagnosis of the program)\n");
    clang_disposeIndex(index);
    return FRONTEND_CRASHED;
  }
  if (err != CXError_Success || !tu) {
    strbuf_printf(log, "error: the OpenCL C front end failed to start (libclang error %d)\n",
                  (int)err);
    clang_disposeIndex(index);
    return -1;
  }
  unsigned num_diags = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < num_diags; i++) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
    if (sev >= CXDiagnostic_Error)
      out->num_errors++;
    else if (sev == CXDiagnostic_Warning)
      out->num_warnings++;
    CXString s =
        clang_formatDiagnostic(d, CXDiagnostic_DisplaySourceLocation | CXDiagnostic_DisplayColumn |
                                      CXDiagnostic_DisplayOption);
    strbuf_printf(log, "%s\n", clang_getCString(s));
    clang_disposeString(s);
    clang_disposeDiagnostic(d);
  }
  if (out->num_errors == 0) {
    struct visit_state vs = {tu, out};
    clang_visitChildren(clang_getTranslationUnitCursor(tu), visit_top, &vs);
  }
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return 0;
}

void frontend_result_free(struct frontend_result *r) {
  for (unsigned i = 0; i < r->num_kernels; i++) {
    struct aquila_fatbin_kernel *k = &r->kernels[i];
    for (unsigned j = 0; j < k->num_args; j++) {
      free(k->args[j].name);
      free(k->args[j].type_name);
    }
    free(k->args);
    free(k->name);
    free(k->attributes);
    free(k->vec_type_hint);
    /* The footprint analysis's, set in place by workgroup_compile. */
    aquila_fatbin_footprint_free(k->footprint);
  }
  free(r->kernels);
  memset(r, 0, sizeof *r);
}
