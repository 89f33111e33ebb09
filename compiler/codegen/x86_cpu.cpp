// What LLVM knows of a named x86 CPU (x86_cpu.h): whether it is a CPU
// LLVM can build for, and its features. C++ because LLVM-C has no route to
// a CPU's features other than the host's: code for a remote daemon's CPU
// (or any CPU an agent names) is built here on a machine of another kind.
#include "codegen/x86_cpu.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/TargetParser/X86TargetParser.h>

extern "C" int x86_cpu_known(const char *cpu) {
  return llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) != llvm::X86::CK_None;
}

extern "C" int x86_cpu_has_feature(const char *cpu, const char *feature) {
  llvm::SmallVector<llvm::StringRef, 64> features;
  llvm::X86::getFeaturesForCPU(cpu, features);
  for (llvm::StringRef f : features)
    if (f == feature) return 1;
  return 0;
}
