/* Code generation for the CPU agent: runs the work-group compiler and LLVM's
 * optimizer for the target CPU (so the loop vectorizer uses its widest
 * vectors), emits an object file and links it with lld into the shared
 * object that the HSA CPU agent loads. */
#include "codegen/codegen.h"
#include "codegen/x86_cpu.h"

#include "aquila/cpu_abi.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Support.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <elf.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/ptrmap.h"
#include "codegen/interleave.h"
#include "codegen/reassociate.h"
#include "support/spawn.h"
#include "support/util.h"
#include "workgroup/workgroup.h"

#define NATIVE_PREFIX "x86_64-native:"

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void init_llvm(void) {
  /* Lets the loop vectorizer call glibc's vector math (libmvec) for loops
   * over transcendental functions. */
  /* Unroll-and-jam runs only for loops the work-group compiler marks (the
   * row loops around vectorized bodies that hold loops of their own). */
  const char *const argv[] = {"aquila", "-vector-library=LIBMVEC-X86", "-scalarize-load-store",
                              "-enable-unroll-and-jam", "-pragma-unroll-and-jam-threshold=8192"};
  LLVMParseCommandLineOptions(5, argv, NULL);
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
}

/* Whether target names this machine's CPU. */
static int target_is_host(const char *target) {
  char *host = LLVMGetHostCPUName();
  int same = !strcmp(host, target + strlen(NATIVE_PREFIX));
  LLVMDisposeMessage(host);
  return same;
}

int codegen_supports_target(const char *target) {
  return !strncmp(target, NATIVE_PREFIX, strlen(NATIVE_PREFIX)) || !strcmp(target, "x86-64-v2") ||
         !strcmp(target, "x86-64-v3") || !strcmp(target, "x86-64-v4");
}

/* How wide work-item vectors are for a target: one register's worth of
 * 32-bit lanes (AVX-512: 16, AVX2: 8, SSE: 4), and which of glibc's libmvec
 * variants match. */
static struct vectorize_target vector_target(const char *target) {
  struct vectorize_target vt = {4, 'b'};
  int avx512 = 0, avx2 = 0;
  if (!strncmp(target, NATIVE_PREFIX, strlen(NATIVE_PREFIX)) && target_is_host(target)) {
    char *features = LLVMGetHostCPUFeatures();
    avx512 = strstr(features, "+avx512f") != NULL;
    avx2 = strstr(features, "+avx2") != NULL && strstr(features, "+fma") != NULL;
    LLVMDisposeMessage(features);
  } else if (!strncmp(target, NATIVE_PREFIX, strlen(NATIVE_PREFIX))) {
    /* Another machine's CPU (a remote daemon's): the features LLVM gives
     * that CPU. */
    const char *cpu = target + strlen(NATIVE_PREFIX);
    avx512 = x86_cpu_has_feature(cpu, "avx512f");
    avx2 = x86_cpu_has_feature(cpu, "avx2") && x86_cpu_has_feature(cpu, "fma");
  } else {
    avx512 = !strcmp(target, "x86-64-v4");
    avx2 = avx512 || !strcmp(target, "x86-64-v3");
  }
  if (avx512)
    vt = (struct vectorize_target){16, 'e'};
  else if (avx2)
    vt = (struct vectorize_target){8, 'd'};
  return vt;
}

static LLVMTargetMachineRef create_target_machine(const char *target, LLVMCodeGenOptLevel level,
                                                  struct strbuf *log) {
  const char *triple = "x86_64-pc-linux-gnu";
  LLVMTargetRef t;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(triple, &t, &err)) {
    strbuf_printf(log, "error: no LLVM target for %s: %s\n", triple, err ? err : "");
    LLVMDisposeMessage(err);
    return NULL;
  }
  char *cpu, *features;
  if (!strncmp(target, NATIVE_PREFIX, strlen(NATIVE_PREFIX)) && target_is_host(target)) {
    /* This machine's CPU, with the features it really has (a virtual
     * machine may hide some that its model has). */
    cpu = LLVMGetHostCPUName();
    features = LLVMGetHostCPUFeatures();
  } else if (!strncmp(target, NATIVE_PREFIX, strlen(NATIVE_PREFIX))) {
    /* Another CPU an agent names (a remote daemon on another machine):
     * built for it wherever this process runs, with the features LLVM
     * gives that CPU. */
    const char *name = target + strlen(NATIVE_PREFIX);
    if (!x86_cpu_known(name)) {
      strbuf_printf(log, "error: target %s names a CPU that LLVM does not know\n", target);
      return NULL;
    }
    cpu = LLVMCreateMessage(name);
    features = LLVMCreateMessage("");
  } else {
    cpu = LLVMCreateMessage(target);
    features = LLVMCreateMessage("");
  }
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(t, triple, cpu, features, level, LLVMRelocPIC, LLVMCodeModelDefault);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  if (!tm) strbuf_printf(log, "error: cannot create a target machine for %s\n", target);
  return tm;
}

/* The external functions the builtin library calls (libm): generated at
 * build time from the library's bitcode, sorted. */
static const char *const library_externals[] = {
#include "builtins_externals.h"
};

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether a code object may call name: a libm function of the builtin
 * library, one of its vector variants from libmvec (_ZGV...), or a memory
 * function LLVM introduces itself. */
static int external_allowed(const char *name) {
  if (!strncmp(name, "llvm.", 5) || !strncmp(name, "_ZGV", 4)) return 1;
  if (!strcmp(name, "memcpy") || !strcmp(name, "memmove") || !strcmp(name, "memset")) return 1;
  return bsearch(&name, library_externals, sizeof library_externals / sizeof library_externals[0],
                 sizeof library_externals[0], compare_names) != NULL;
}

/* Anything else still declared is a function the program calls and nobody
 * defines (a missing builtin, or a function from another compilation unit
 * that was not linked): a clear build error beats a failure at load time. */
static int check_undefined_functions(LLVMModuleRef m, struct strbuf *log) {
  int missing = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (!LLVMIsDeclaration(f) || LLVMGetFirstUse(f) == NULL) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    if (external_allowed(name)) continue;
    strbuf_printf(log,
                  "error: undefined function '%s': neither defined by the program nor a "
                  "builtin this device provides\n",
                  name);
    missing++;
  }
  return missing ? -1 : 0;
}

/* Whether an x86-64 relocatable object refers to a symbol it does not
 * define (a libm or libmvec function, some of which instruction selection
 * introduces itself); 1 when it cannot tell. Without any, the link need
 * not read libm and libmvec: 10 of the 26 ms a small kernel's link took. */
static int object_has_undefined_symbols(const unsigned char *bytes, size_t size) {
  Elf64_Ehdr header;
  if (size < sizeof header) return 1;
  memcpy(&header, bytes, sizeof header);
  if (memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff > size ||
      (size - header.e_shoff) / sizeof(Elf64_Shdr) < header.e_shnum)
    return 1;
  int symbol_tables = 0;
  for (uint16_t i = 0; i < header.e_shnum; i++) {
    Elf64_Shdr section;
    memcpy(&section, bytes + header.e_shoff + (size_t)i * sizeof section, sizeof section);
    if (section.sh_type != SHT_SYMTAB) continue;
    symbol_tables++;
    if (section.sh_offset > size || section.sh_size > size - section.sh_offset ||
        section.sh_entsize != sizeof(Elf64_Sym))
      return 1;
    /* Entry 0 is the null symbol. */
    for (uint64_t k = 1; k < section.sh_size / sizeof(Elf64_Sym); k++) {
      Elf64_Sym symbol;
      memcpy(&symbol, bytes + section.sh_offset + k * sizeof symbol, sizeof symbol);
      if (symbol.st_shndx == SHN_UNDEF && ELF64_ST_BIND(symbol.st_info) != STB_LOCAL) return 1;
    }
  }
  return symbol_tables != 1;
}

/* LLVM reports bad bitcode through the context's diagnostic handler; without
 * one it prints and exits the process. Collect the message instead. */
static void collect_diagnostic(LLVMDiagnosticInfoRef info, void *log) {
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError) return;
  char *msg = LLVMGetDiagInfoDescription(info);
  strbuf_printf(log, "error: %s\n", msg);
  LLVMDisposeMessage(msg);
}

/* Parses bitcode for the kernels' metadata: their layout
 * (workgroup_kernel_layout) and, with check_calls, the error code
 * generation would give for calls of functions nobody defines. Before the
 * work-group compiler its hooks (__aquila_*) and printf are still calls,
 * bound later. */
/* The program's bitcode as a module of a new context (*ctx, which the
 * caller disposes of); NULL, with the reason in log, when it is invalid. */
static LLVMModuleRef parse_program(const void *bitcode, size_t bitcode_size, LLVMContextRef *ctx,
                                   struct strbuf *log) {
  pthread_once(&llvm_once, init_llvm);
  *ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(*ctx, collect_diagnostic, log);
  LLVMModuleRef m = NULL;
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(bitcode, bitcode_size, "program.bc");
  if (LLVMParseBitcodeInContext2(*ctx, buf, &m)) {
    strbuf_append(log, "error: the program's LLVM bitcode is invalid\n");
    m = NULL;
  }
  LLVMDisposeMemoryBuffer(buf);
  return m;
}

static int bitcode_metadata(const void *bitcode, size_t bitcode_size,
                            struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                            int check_calls, struct strbuf *log) {
  LLVMContextRef ctx;
  LLVMModuleRef m = parse_program(bitcode, bitcode_size, &ctx, log);
  int status = -1;
  if (m) {
    int missing = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); check_calls && f; f = LLVMGetNextFunction(f)) {
      if (!LLVMIsDeclaration(f) || LLVMGetFirstUse(f) == NULL) continue;
      size_t len;
      const char *name = LLVMGetValueName2(f, &len);
      if (external_allowed(name) || !strncmp(name, "__aquila_", 9) || !strcmp(name, "printf"))
        continue;
      strbuf_printf(log,
                    "error: undefined function '%s': neither defined by the program nor a "
                    "builtin this device provides\n",
                    name);
      missing++;
    }
    status = missing ? -1 : workgroup_kernel_layout(m, kernels, num_kernels, log);
    LLVMDisposeModule(m);
  }
  LLVMContextDispose(ctx);
  return status;
}

int codegen_check_bitcode(const void *bitcode, size_t bitcode_size,
                          struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                          struct strbuf *log) {
  return bitcode_metadata(bitcode, bitcode_size, kernels, num_kernels, 1, log);
}

int codegen_program_variables(const void *bitcode, size_t bitcode_size, uint64_t *bytes,
                              int *sub_groups, struct strbuf *log) {
  *bytes = 0;
  *sub_groups = 0;
  LLVMContextRef ctx;
  LLVMModuleRef m = parse_program(bitcode, bitcode_size, &ctx, log);
  int status = -1;
  if (m) {
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f && !*sub_groups; f = LLVMGetNextFunction(f)) {
      size_t len;
      *sub_groups = !strncmp(LLVMGetValueName2(f, &len), "__aquila_sg_", 12) &&
                    LLVMGetFirstUse(f) != NULL;
    }
    LLVMTargetDataRef td = LLVMCreateTargetData(LLVMGetDataLayoutStr(m));
    status = 0;
    /* Address space 1 is __global (-ffake-address-space-map); __constant
     * ones (2) and read-only __global ones may be copied per code object. */
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
      if (LLVMIsDeclaration(g) || LLVMIsGlobalConstant(g) ||
          LLVMGetPointerAddressSpace(LLVMTypeOf(g)) != 1)
        continue;
      uint64_t size = LLVMABISizeOfType(td, LLVMGlobalGetValueType(g));
      if (size > CODEGEN_MAX_GLOBAL_VARIABLE_SIZE) {
        size_t len;
        strbuf_printf(log,
                      "error: program-scope variable '%s' takes %llu bytes, more than "
                      "CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE (%u)\n",
                      LLVMGetValueName2(g, &len), (unsigned long long)size,
                      CODEGEN_MAX_GLOBAL_VARIABLE_SIZE);
        status = -1;
      }
      uint64_t align = LLVMGetAlignment(g) ? LLVMGetAlignment(g) : 1;
      *bytes = (*bytes + align - 1) / align * align + size;
    }
    LLVMDisposeTargetData(td);
    LLVMDisposeModule(m);
  }
  LLVMContextDispose(ctx);
  return status;
}

int codegen_kernel_layout(const void *bitcode, size_t bitcode_size,
                          struct aquila_fatbin_kernel *kernels, unsigned num_kernels,
                          struct strbuf *log) {
  return bitcode_metadata(bitcode, bitcode_size, kernels, num_kernels, 0, log);
}

/* Leaves the module with the kernels listed as its only kernels: another
 * kernel that one of them calls (OpenCL C allows it) becomes an ordinary
 * function, at its call sites too (a call whose convention differs from
 * its callee's is undefined and the optimizer deletes it); the rest goes,
 * with whatever only it used. */
static int keep_only_kernels(LLVMModuleRef m, const struct aquila_fatbin_kernel *kernels,
                             unsigned num_kernels, struct strbuf *log) {
  LLVMValueRef next;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = next) {
    next = LLVMGetNextFunction(f);
    if (LLVMGetFunctionCallConv(f) != LLVMSPIRKERNELCallConv || LLVMIsDeclaration(f)) continue;
    size_t len;
    const char *name = LLVMGetValueName2(f, &len);
    int listed = 0;
    for (unsigned i = 0; i < num_kernels && !listed; i++)
      listed = !strcmp(kernels[i].name, name);
    if (listed) continue;
    if (!LLVMGetFirstUse(f)) {
      LLVMDeleteFunction(f);
      continue;
    }
    LLVMSetFunctionCallConv(f, LLVMCCallConv);
    for (LLVMUseRef u = LLVMGetFirstUse(f); u; u = LLVMGetNextUse(u)) {
      LLVMValueRef user = LLVMGetUser(u);
      if (LLVMIsACallInst(user) && LLVMGetCalledValue(user) == f)
        LLVMSetInstructionCallConv(user, LLVMCCallConv);
    }
  }
  /* Everything else is the program's own (code objects link nothing but
   * libm): internal, so that what the kept kernels do not call goes too,
   * before the work-group compiler and the optimizer would work on it (a
   * linked program of hashcat's holds its whole library of functions). */
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) || LLVMGetFunctionCallConv(f) == LLVMSPIRKERNELCallConv) continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, "globaldce", NULL, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (!err) return 0;
  char *msg = LLVMGetErrorMessage(err);
  strbuf_printf(log, "error: internal: removing the other kernels failed: %s\n", msg);
  LLVMDisposeErrorMessage(msg);
  return -1;
}

static const char *chosen_linker = "ld.lld-19";

static void choose_linker(void) {
  const char *path = getenv("PATH");
  char *copy = strdup(path && *path ? path : "/usr/bin:/bin");
  if (!copy) return;
  char *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
    char candidate[4096];
    snprintf(candidate, sizeof candidate, "%s/ld.bfd", dir);
    if (access(candidate, X_OK) == 0) {
      chosen_linker = "ld.bfd";
      break;
    }
  }
  free(copy);
}

/* GNU ld (binutils) when present: it starts in about 20 ms, lld in about
 * 70 (it loads libLLVM), and a kernel's first launch may wait for it.
 * AQUILA_LLD names another linker. */
static const char *code_object_linker(void) {
  const char *env = getenv("AQUILA_LLD");
  if (env && *env) return env;
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, choose_linker);
  return chosen_linker;
}

/* ---- tiers: scalar code first for kernels whose vector build is costly ----
 *
 * The vector version of a kernel (ours, or LLVM's loop vectorizer on the
 * work-item loop, with a scalar remainder beside it) takes two to three
 * times as long to optimize and compile as the scalar code alone, which for
 * a kernel of thousands of instructions is hundreds of milliseconds before
 * its first launch. Such a kernel gets the scalar version first (the quick
 * tier); the runtime asks for the whole one in the background and puts it
 * in between two launches (runtime/tiers.c). The size that decides is the
 * kernels' size after inlining, estimated before any work is done on them
 * (unsimplified: clang's IR before the work-group compiler's clean-up,
 * about four times the instructions that the vectorizer reports). */

/* Measured on the 2-core Zen 5 with generated kernels of straight-line
 * arithmetic and branches (docs/BENCHMARKS.md, "Tiers"): the quick tier
 * saves 67 ms of code generation at 6,200 instructions, 162 at 9,300, 476
 * at 19,400, and its scalar code runs such a kernel about 10-25 times
 * slower, which a long first launch no longer pays whole: it takes the
 * vector version from its next range of work-groups once that is built
 * (runtime/tiers.c). Above this size the saving is worth that risk. */
#define QUICK_TIER_MIN_INSTRUCTIONS 8000

static uint64_t quick_tier_threshold(void) {
  const char *env = getenv("AQUILA_QUICK_TIER_MIN_INSTRUCTIONS");
  if (env && *env) {
    char *end;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end == 0) return v;
  }
  return QUICK_TIER_MIN_INSTRUCTIONS;
}

/* Instructions of f with every call of a defined function replaced by the
 * callee's (memoized; a cycle, which OpenCL C forbids, counts once). */
static uint64_t inlined_size(LLVMValueRef f, struct ptr_map *memo) {
  void *known = ptr_map_get(memo, f);
  if (known) return (uint64_t)(uintptr_t)known - 1;
  ptr_map_put(memo, f, (void *)(uintptr_t)1);
  uint64_t n = 0;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
      n++;
      if (!LLVMIsACallInst(i)) continue;
      LLVMValueRef callee = LLVMGetCalledValue(i);
      if (callee && LLVMIsAFunction(callee) && !LLVMIsDeclaration(callee))
        n += inlined_size(callee, memo);
      if (n > ((uint64_t)1 << 40)) n = (uint64_t)1 << 40;
    }
  ptr_map_put(memo, f, (void *)(uintptr_t)(n + 1));
  return n;
}

static uint64_t kernels_inlined_size(LLVMModuleRef m) {
  struct ptr_map memo = {0};
  uint64_t n = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
    if (LLVMGetFunctionCallConv(f) == LLVMSPIRKERNELCallConv && !LLVMIsDeclaration(f))
      n += inlined_size(f, &memo);
  ptr_map_free(&memo);
  return n;
}

/* LLVM's loop and SLP vectorizers on or off for the next optimization. The
 * pass builder options' LoopVectorization/SLPVectorization did not stop
 * either pass in LLVM 19 (measured: the same vector code, the same time),
 * the command-line options do; they are global, and a compiler process
 * builds one program at a time. */
static void set_llvm_vectorizers(int on) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static int current = 1;
  pthread_mutex_lock(&lock);
  if (on != current) {
    const char *const argv[] = {"aquila", on ? "-vectorize-loops=true" : "-vectorize-loops=false",
                                on ? "-vectorize-slp=true" : "-vectorize-slp=false"};
    LLVMParseCommandLineOptions(3, argv, NULL);
    current = on;
  }
  pthread_mutex_unlock(&lock);
}

int codegen_cpu_code_object(const void *bitcode, size_t bitcode_size, const char *target,
                            int opt_disable, struct aquila_fatbin_kernel *kernels,
                            unsigned num_kernels, int only_these, const char *dir, void **code,
                            size_t *code_size, struct strbuf *log) {
  return codegen_cpu_code_object_tiered(bitcode, bitcode_size, target, opt_disable, kernels,
                                        num_kernels, only_these, 0, NULL, NULL, dir, code,
                                        code_size, log);
}

/* ---- one code object from parts built side by side --------------------
 *
 * A small program's kernels get their code together at the first launch of
 * one of them (runtime/program.c), the application waiting: pyopencl's scan
 * (three kernels) spent 50 ms in the optimizer and 44 in instruction
 * selection, one kernel after the other on one core. The kernels need
 * nothing of each other, so each part (its kernels, the bitcode parsed
 * again in an LLVM context of its own) is optimized and compiled on a
 * thread of its own, and the linker joins the objects; the kernel table
 * comes from a small object of its own, over the parts' descriptors
 * (exported from their objects, hidden from the application). A
 * background build stays on one thread (it must leave the cores to the
 * application's kernels), and so does a program with variables that its
 * kernels write (every kernel must reach the same ones). */

struct codegen_part {
  /* What to build: kernels[0..num_kernels), from the bitcode (parsed in ctx
   * into m already, or by the part itself). */
  const void *bitcode;
  size_t bitcode_size;
  const char *target;
  int opt_disable, scalar_only, keep_only, split;
  const uint32_t *local_size;
  struct aquila_fatbin_kernel *kernels;
  unsigned num_kernels;
  LLVMContextRef ctx;
  LLVMModuleRef m;
  /* What came of it. */
  LLVMMemoryBufferRef obj;
  char **descriptors; /* split: the kernel descriptors' symbols */
  unsigned num_descriptors;
  struct strbuf log;
  double ms_parse, ms_workgroup, ms_optimize, ms_emit;
  int status;
};

static int codegen_threads_wanted = 0; /* 0: as many as the process's CPUs, at most 4 */

void codegen_set_threads(int threads) {
  codegen_threads_wanted = threads;
}

static unsigned codegen_threads(void) {
  if (codegen_threads_wanted > 0) return (unsigned)codegen_threads_wanted;
  const char *env = getenv("AQUILA_CODEGEN_THREADS");
  if (env && *env) {
    int n = atoi(env);
    return n < 1 ? 1 : n > 16 ? 16 : (unsigned)n;
  }
  cpu_set_t set;
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned)cpus;
}

/* A split part's module: its variables private to it (a copy each; only
 * constants reach here), its descriptors exported, its table dropped. */
static void internalize_variables(LLVMModuleRef m) {
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    LLVMLinkage l = LLVMGetLinkage(g);
    if (LLVMIsDeclaration(g) || l == LLVMInternalLinkage || l == LLVMPrivateLinkage) continue;
    LLVMSetLinkage(g, LLVMInternalLinkage);
  }
}

static int export_descriptors(struct codegen_part *p) {
  LLVMValueRef table = LLVMGetNamedGlobal(p->m, AQUILA_KERNEL_TABLE_SYMBOL);
  LLVMValueRef array = LLVMGetNamedGlobal(p->m, "__aquila_kernels");
  LLVMValueRef init = array ? LLVMGetInitializer(array) : NULL;
  if (!table || !init) {
    strbuf_append(&p->log, "error: internal: a part's kernel table is missing\n");
    return -1;
  }
  unsigned n = (unsigned)LLVMGetArrayLength2(LLVMTypeOf(init));
  p->descriptors = calloc(n ? n : 1, sizeof *p->descriptors);
  if (!p->descriptors) return -1;
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef kd = LLVMGetAggregateElement(init, i);
    size_t len;
    const char *name = kd && LLVMIsAGlobalVariable(kd) ? LLVMGetValueName2(kd, &len) : NULL;
    if (!name || !(p->descriptors[i] = strdup(name))) return -1;
    p->num_descriptors++;
    LLVMSetLinkage(kd, LLVMExternalLinkage);
    LLVMSetVisibility(kd, LLVMHiddenVisibility);
  }
  LLVMDeleteGlobal(table);
  LLVMDeleteGlobal(array);
  return 0;
}

/* The table object over the parts' descriptors (aquila/cpu_abi.h). */
static LLVMMemoryBufferRef emit_table_object(struct codegen_part *parts, unsigned num_parts,
                                             LLVMTargetMachineRef tm, struct strbuf *log) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("aquila-kernel-table", ctx);
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMDisposeTargetData(td);
  LLVMSetDataLayout(m, layout);
  LLVMDisposeMessage(layout);
  LLVMSetTarget(m, "x86_64-pc-linux-gnu");
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i8 = LLVMInt8TypeInContext(ctx);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  unsigned n = 0;
  for (unsigned p = 0; p < num_parts; p++)
    n += parts[p].num_descriptors;
  LLVMValueRef *descs = calloc(n ? n : 1, sizeof *descs);
  LLVMMemoryBufferRef obj = NULL;
  if (descs) {
    unsigned k = 0;
    for (unsigned p = 0; p < num_parts; p++)
      for (unsigned i = 0; i < parts[p].num_descriptors; i++) {
        LLVMValueRef g = LLVMAddGlobal(m, i8, parts[p].descriptors[i]);
        LLVMSetVisibility(g, LLVMHiddenVisibility);
        descs[k++] = g;
      }
    LLVMValueRef arr_init = LLVMConstArray2(ptr, descs, n);
    LLVMValueRef arr = LLVMAddGlobal(m, LLVMTypeOf(arr_init), "__aquila_kernels");
    LLVMSetInitializer(arr, arr_init);
    LLVMSetGlobalConstant(arr, 1);
    LLVMSetLinkage(arr, LLVMInternalLinkage);
    LLVMTypeRef fields[] = {i32, i32, ptr};
    LLVMTypeRef table_type = LLVMStructTypeInContext(ctx, fields, 3, 0);
    LLVMValueRef vals[] = {LLVMConstInt(i32, AQUILA_CPU_ABI_VERSION, 0), LLVMConstInt(i32, n, 0),
                           arr};
    LLVMValueRef table = LLVMAddGlobal(m, table_type, AQUILA_KERNEL_TABLE_SYMBOL);
    LLVMSetInitializer(table, LLVMConstNamedStruct(table_type, vals, 3));
    LLVMSetGlobalConstant(table, 1);
    char *err = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &obj)) {
      strbuf_printf(log, "error: internal: the kernel table's object failed: %s\n", err ? err : "");
      LLVMDisposeMessage(err);
      obj = NULL;
    }
    free(descs);
  }
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return obj;
}

/* One part, from the bitcode to its object in memory. */
static void *build_part(void *arg) {
  struct codegen_part *p = arg;
  double t_start = phase_ms(), t_parsed, t_workgroup, t_optimized;
  p->status = -1;
  LLVMTargetMachineRef tm = NULL;
  if (!p->ctx) {
    p->ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(p->ctx, collect_diagnostic, &p->log);
    LLVMMemoryBufferRef buf =
        LLVMCreateMemoryBufferWithMemoryRangeCopy(p->bitcode, p->bitcode_size, "program.bc");
    if (LLVMParseBitcodeInContext2(p->ctx, buf, &p->m)) {
      strbuf_append(&p->log, "error: the program's LLVM bitcode is invalid\n");
      LLVMDisposeMemoryBuffer(buf);
      p->m = NULL;
      return NULL;
    }
    LLVMDisposeMemoryBuffer(buf);
  }
  /* The quick tier's instructions are selected by FastISel (no
   * SelectionDAG): the 100 KB kernel's emission took 32 instead of 70 ms,
   * and its first launch 60 instead of 58 ms (docs/BENCHMARKS.md, "Tiers").
   * The data layout stays what it was. */
  if (!(tm = create_target_machine(
            p->target, p->scalar_only ? LLVMCodeGenLevelNone : LLVMCodeGenLevelAggressive,
            &p->log)))
    return NULL;
  LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
  char *layout = LLVMCopyStringRepOfTargetData(td);
  LLVMDisposeTargetData(td);
  LLVMSetDataLayout(p->m, layout);
  LLVMDisposeMessage(layout);
  if (p->keep_only && keep_only_kernels(p->m, p->kernels, p->num_kernels, &p->log)) goto out;
  if (p->split) internalize_variables(p->m);
  t_parsed = phase_ms();
  struct vectorize_target vt = vector_target(p->target);
  /* Width 1: scalar code, prepared as for an optimized build. */
  struct vectorize_target scalar_vt = vt;
  scalar_vt.width = 1;
  if (workgroup_compile(p->m, p->kernels, p->num_kernels,
                        p->opt_disable   ? NULL
                        : p->scalar_only ? &scalar_vt
                                         : &vt,
                        p->local_size, &p->log))
    goto out;
  t_workgroup = phase_ms();

  const char *dump = getenv("AQUILA_DUMP_IR");
  if (dump && *dump) {
    /* FILE for the first program (or part) a compiler process builds,
     * FILE.1, FILE.2, ... for the next: an application that builds several
     * programs keeps them all. */
    static _Atomic unsigned dumped;
    unsigned n = dumped++;
    struct strbuf path = {0};
    if (n)
      strbuf_printf(&path, "%s.%u", dump, n);
    else
      strbuf_append(&path, dump);
    char *err = NULL;
    if (path.data && LLVMPrintModuleToFile(p->m, path.data, &err)) LLVMDisposeMessage(err);
    strbuf_free(&path);
  }
  LLVMPassBuilderOptionsRef pbo = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(pbo, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(pbo, 1);
  LLVMPassBuilderOptionsSetLoopInterleaving(pbo, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(pbo, 1);
  /* The quick tier is there for the time to a first result: O1 built the
   * 100 KB kernel's scalar code 6 ms (15%) sooner than O3, and that code
   * ran its first launch as fast (58 ms either way). */
  const char *pipeline = p->opt_disable   ? "default<O0>"
                         : p->scalar_only ? "default<O1>"
                                          : "default<O3>";
  LLVMErrorRef err = LLVMRunPasses(p->m, pipeline, tm, pbo);
  LLVMDisposePassBuilderOptions(pbo);
  if (err) {
    char *msg = LLVMGetErrorMessage(err);
    strbuf_printf(&p->log, "error: internal: optimization failed: %s\n", msg);
    LLVMDisposeErrorMessage(msg);
    goto out;
  }
  t_optimized = phase_ms();
  if (workgroup_inline_vector_variants(p->m, &p->log)) goto out;
  /* After the pipeline, whose canonical form it reorders (reassociate.c);
   * AQUILA_REASSOCIATE=0 leaves that form (for comparisons). */
  const char *reassociate = getenv("AQUILA_REASSOCIATE");
  if (!p->opt_disable && !p->scalar_only && !(reassociate && !strcmp(reassociate, "0")))
    reassociate_for_latency(p->m);
  if (!p->opt_disable && !p->scalar_only) {
    const char *debug = getenv("AQUILA_DEBUG");
    if (interleave_search_loops(p->m, vt.libmvec_isa == 'e' ? 32 : 16,
                                vt.libmvec_isa == 'e'   ? 512
                                : vt.libmvec_isa == 'd' ? 256
                                                        : 128,
                                debug && strstr(debug, "interleave") ? &p->log : NULL, &p->log) < 0)
      goto out;
  }
  if (workgroup_record_private_sizes(p->m, &p->log)) goto out;
  if (p->split && export_descriptors(p)) goto out;
  if (check_undefined_functions(p->m, &p->log)) goto out;

  char *emit_err = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, p->m, LLVMObjectFile, &emit_err, &p->obj)) {
    strbuf_printf(&p->log, "error: internal: code generation failed: %s\n",
                  emit_err ? emit_err : "");
    LLVMDisposeMessage(emit_err);
    p->obj = NULL;
    goto out;
  }
  p->ms_parse = t_parsed - t_start;
  p->ms_workgroup = t_workgroup - t_parsed;
  p->ms_optimize = t_optimized - t_workgroup;
  p->ms_emit = phase_ms() - t_optimized;
  p->status = 0;
out:
  if (tm) LLVMDisposeTargetMachine(tm);
  return NULL;
}

static void part_release(struct codegen_part *p) {
  if (p->obj) LLVMDisposeMemoryBuffer(p->obj);
  if (p->m) LLVMDisposeModule(p->m);
  if (p->ctx) LLVMContextDispose(p->ctx);
  for (unsigned i = 0; i < p->num_descriptors; i++)
    free(p->descriptors[i]);
  free(p->descriptors);
  strbuf_free(&p->log);
}

/* Whether m defines a variable that its kernels may write and that is
 * visible outside the module: every kernel must reach the same one. */
static int has_shared_variables(LLVMModuleRef m) {
  for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
    LLVMLinkage l = LLVMGetLinkage(g);
    if (LLVMIsDeclaration(g) || LLVMIsGlobalConstant(g)) continue;
    if (l != LLVMInternalLinkage && l != LLVMPrivateLinkage) return 1;
  }
  return 0;
}

/* Splits kernels[] into at most max_parts parts of about equal inlined size
 * (largest first, each to the lightest part): part[i] for kernel i. Returns
 * the number of parts (1: no split). Small kernels gain too: a program of
 * two one-line kernels went from 133 to 98 ms to its first result on two
 * cores (a part's own parse and start cost about 1 ms). */
static unsigned plan_parts(LLVMModuleRef m, const struct aquila_fatbin_kernel *kernels,
                           unsigned num_kernels, unsigned max_parts, unsigned *part) {
  if (max_parts < 2 || num_kernels < 2) return 1;
  uint64_t *size = calloc(num_kernels, sizeof *size);
  unsigned *order = calloc(num_kernels, sizeof *order);
  uint64_t load[16] = {0};
  unsigned parts = 1;
  if (!size || !order) goto out;
  struct ptr_map memo = {0};
  for (unsigned i = 0; i < num_kernels; i++) {
    LLVMValueRef f = LLVMGetNamedFunction(m, kernels[i].name);
    size[i] = f && !LLVMIsDeclaration(f) ? inlined_size(f, &memo) : 0;
    order[i] = i;
  }
  ptr_map_free(&memo);
  for (unsigned i = 1; i < num_kernels; i++) /* by size, largest first */
    for (unsigned j = i; j > 0 && size[order[j]] > size[order[j - 1]]; j--) {
      unsigned t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  if (max_parts > num_kernels) max_parts = num_kernels;
  if (max_parts > 16) max_parts = 16;
  for (unsigned i = 0; i < num_kernels; i++) {
    unsigned lightest = 0;
    for (unsigned q = 1; q < max_parts; q++)
      if (load[q] < load[lightest]) lightest = q;
    part[order[i]] = lightest;
    load[lightest] += size[order[i]];
  }
  parts = max_parts;
out:
  free(size);
  free(order);
  return parts;
}

int codegen_cpu_code_object_tiered(const void *bitcode, size_t bitcode_size, const char *target,
                                   int opt_disable, struct aquila_fatbin_kernel *kernels,
                                   unsigned num_kernels, int only_these, int quick_if_large,
                                   const uint32_t *local_size, int *quick, const char *dir,
                                   void **code, size_t *code_size, struct strbuf *log) {
  pthread_once(&llvm_once, init_llvm);
  double t_start = phase_ms();
  if (quick) *quick = 0;
  *code = NULL;
  *code_size = 0;
  int status = -1;
  struct codegen_part *parts = NULL;
  struct aquila_fatbin_kernel *part_kernels = NULL;
  unsigned *part_of = NULL, num_parts = 1;
  LLVMTargetMachineRef table_tm = NULL;
  LLVMMemoryBufferRef table_obj = NULL;
  struct strbuf main_log = {0};
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(ctx, collect_diagnostic, &main_log);
  LLVMModuleRef m = NULL;
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(bitcode, bitcode_size, "program.bc");
  if (LLVMParseBitcodeInContext2(ctx, buf, &m)) {
    strbuf_append(log, "error: the program's LLVM bitcode is invalid\n");
    LLVMDisposeMemoryBuffer(buf);
    m = NULL;
    goto out;
  }
  LLVMDisposeMemoryBuffer(buf);
  if (only_these && keep_only_kernels(m, kernels, num_kernels, &main_log)) goto out;
  int scalar_only = 0;
  if (quick_if_large && !opt_disable) {
    uint64_t size = kernels_inlined_size(m), threshold = quick_tier_threshold();
    scalar_only = size >= threshold;
    const char *debug = getenv("AQUILA_DEBUG");
    if (debug && (strstr(debug, "tiers") || strstr(debug, "vectorize")))
      strbuf_printf(log, "aquila: %u kernel%s ('%s'%s): about %llu instructions inlined: %s\n",
                    num_kernels, num_kernels == 1 ? "" : "s", num_kernels ? kernels[0].name : "",
                    num_kernels > 1 ? ", ..." : "", (unsigned long long)size,
                    scalar_only ? "scalar code first (quick tier), the vector version follows"
                                : "the vector version at once");
  }
  if (quick) *quick = scalar_only;
  set_llvm_vectorizers(!scalar_only);

  if (!(part_of = calloc(num_kernels ? num_kernels : 1, sizeof *part_of))) goto out;
  if (only_these && !opt_disable && !has_shared_variables(m))
    num_parts = plan_parts(m, kernels, num_kernels, codegen_threads(), part_of);
  parts = calloc(num_parts, sizeof *parts);
  part_kernels = calloc(num_kernels ? num_kernels : 1, sizeof *part_kernels);
  if (!parts || !part_kernels) goto out;
  /* Each part's kernels side by side in part_kernels (workgroup_compile
   * fills them), copied back once built. */
  unsigned next = 0;
  for (unsigned q = 0; q < num_parts; q++) {
    struct codegen_part *p = &parts[q];
    p->bitcode = bitcode;
    p->bitcode_size = bitcode_size;
    p->target = target;
    p->opt_disable = opt_disable;
    p->scalar_only = scalar_only;
    p->local_size = local_size;
    p->split = num_parts > 1;
    p->keep_only = p->split;
    p->kernels = part_kernels + next;
    for (unsigned i = 0; i < num_kernels; i++)
      if (part_of[i] == q) part_kernels[next++] = kernels[i];
    p->num_kernels = (unsigned)(part_kernels + next - p->kernels);
  }
  /* The first part in this thread, on the module parsed already. */
  parts[0].ctx = ctx;
  parts[0].m = m;
  LLVMContextSetDiagnosticHandler(ctx, collect_diagnostic, &parts[0].log);
  ctx = NULL;
  m = NULL;
  pthread_t threads[16];
  int started[16] = {0};
  for (unsigned q = 1; q < num_parts; q++) {
    pthread_attr_t attr;
    /* The work-group compiler and LLVM recurse deeply on large kernels:
     * the helper serves on a thread with a stack this large, and so do
     * these (address space only, until used). */
    if (pthread_attr_init(&attr) == 0) {
      pthread_attr_setstacksize(&attr, (size_t)1 << 30);
      started[q] = pthread_create(&threads[q], &attr, build_part, &parts[q]) == 0;
      pthread_attr_destroy(&attr);
    }
  }
  build_part(&parts[0]);
  for (unsigned q = 1; q < num_parts; q++) {
    if (started[q])
      pthread_join(threads[q], NULL);
    else
      build_part(&parts[q]); /* no thread to be had: in this one */
  }
  strbuf_append(log, main_log.data ? main_log.data : "");
  int failed = 0;
  for (unsigned q = 0; q < num_parts; q++) {
    strbuf_append(log, parts[q].log.data ? parts[q].log.data : "");
    failed |= parts[q].status != 0;
  }
  /* Back whether or not the parts succeeded: workgroup_compile replaces
   * (and frees) strings the kernels own. */
  next = 0;
  for (unsigned q = 0; q < num_parts; q++)
    for (unsigned i = 0; i < num_kernels; i++)
      if (part_of[i] == q) kernels[i] = part_kernels[next++];
  if (failed) goto out;
  if (num_parts > 1) {
    if (!(table_tm = create_target_machine(target, LLVMCodeGenLevelNone, log)) ||
        !(table_obj = emit_table_object(parts, num_parts, table_tm, log)))
      goto out;
  }
  double t_emitted = phase_ms();

  /* The objects, then the shared object. */
  struct strbuf so_path = {0};
  strbuf_printf(&so_path, "%s/kernels.so", dir);
  char *objects[18] = {0};
  int wrote = 0, needs_libraries = 0;
  for (unsigned q = 0; q <= num_parts && wrote == 0; q++) {
    LLVMMemoryBufferRef obj = q < num_parts ? parts[q].obj : table_obj;
    if (!obj) continue;
    struct strbuf path = {0};
    strbuf_printf(&path, "%s/kernels%u.o", dir, q);
    objects[q] = strbuf_take(&path);
    wrote =
        objects[q] ? write_file(objects[q], LLVMGetBufferStart(obj), LLVMGetBufferSize(obj)) : -1;
    /* The table object's undefined symbols are the parts' descriptors. */
    if (q < num_parts)
      needs_libraries |= object_has_undefined_symbols(
          (const unsigned char *)LLVMGetBufferStart(obj), LLVMGetBufferSize(obj));
  }
  if (wrote == 0) {
    char *argv[32] = {(char *)code_object_linker(),
                      "-shared",
                      "--hash-style=gnu",
                      "-O1",
                      "-z",
                      "now",
                      "-o",
                      so_path.data};
    unsigned a = 8;
    for (unsigned q = 0; q <= num_parts; q++)
      if (objects[q]) argv[a++] = objects[q];
    argv[a++] = "-L/lib/x86_64-linux-gnu";
    argv[a++] = "-L/usr/lib/x86_64-linux-gnu";
    if (needs_libraries) { /* else no -lm, no -lmvec */
      argv[a++] = "-lm";
      argv[a++] = "-lmvec";
    }
    argv[a] = NULL;
    struct strbuf out = {0};
    int rc = spawn_and_wait(argv, &out);
    if (rc != 0) {
      strbuf_printf(log, "error: linking the code object failed (status %d):\n%s", rc,
                    out.data ? out.data : "");
    } else if (read_file(so_path.data, code, code_size) == 0) {
      status = 0;
    } else {
      strbuf_append(log, "error: cannot read the linked code object\n");
    }
    strbuf_free(&out);
  } else {
    strbuf_printf(log, "error: cannot write the objects in %s\n", dir);
  }
  if (status == 0 && phases_wanted()) {
    for (unsigned q = 0; q < num_parts; q++)
      strbuf_printf(log,
                    "aquila: code generation for '%s'%s%s: parse %.1f ms, work-group compiler "
                    "%.1f, optimizer %.1f, instruction selection and emission %.1f\n",
                    parts[q].num_kernels ? parts[q].kernels[0].name : "",
                    parts[q].num_kernels > 1 ? " and others" : "",
                    num_parts > 1 ? " (a part of its own thread)" : "", parts[q].ms_parse,
                    parts[q].ms_workgroup, parts[q].ms_optimize, parts[q].ms_emit);
    strbuf_printf(log, "aquila: code generation: %.1f ms in all, link %.1f\n", phase_ms() - t_start,
                  phase_ms() - t_emitted);
  }
  for (unsigned q = 0; q <= num_parts; q++) {
    if (objects[q]) unlink(objects[q]);
    free(objects[q]);
  }
  unlink(so_path.data);
  strbuf_free(&so_path);
out:
  if (parts)
    for (unsigned q = 0; q < num_parts; q++)
      part_release(&parts[q]);
  if (!parts) strbuf_append(log, main_log.data ? main_log.data : "");
  free(parts);
  free(part_kernels);
  free(part_of);
  if (table_obj) LLVMDisposeMemoryBuffer(table_obj);
  if (table_tm) LLVMDisposeTargetMachine(table_tm);
  strbuf_free(&main_log);
  if (m) LLVMDisposeModule(m);
  if (ctx) LLVMContextDispose(ctx);
  return status;
}
