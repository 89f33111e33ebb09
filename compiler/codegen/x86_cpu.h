/* What LLVM knows of a named x86 CPU (x86_cpu.cpp). */
#ifndef AQUILA_COMPILER_X86_CPU_H
#define AQUILA_COMPILER_X86_CPU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Whether cpu is an x86-64 CPU LLVM builds for ("haswell", "znver5"). */
int x86_cpu_known(const char *cpu);

/* Whether that CPU has feature ("avx512f", "avx2", "fma"; LLVM's names,
 * without the '+'). */
int x86_cpu_has_feature(const char *cpu, const char *feature);

#ifdef __cplusplus
}
#endif

#endif
