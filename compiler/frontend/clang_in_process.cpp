/* Runs one clang driver command line (a single compile job) inside the
 * compiler process instead of starting clang-19: starting it costs about
 * 100 ms (it loads libclang-cpp and libLLVM), compiling a small program
 * to bitcode about 5. libclang's C API cannot generate code, hence C++ here,
 * kept to this file. */
#include "frontend/clang_in_process.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

extern "C" int clang_emit_bitcode_in_process(const char *const *argv, int argc, const char *output,
                                             char **diagnostics) {
  std::string text;
  int status = 1;
  {
    llvm::raw_string_ostream os(text);
    auto diag_opts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    auto diags = clang::CompilerInstance::createDiagnostics(
        diag_opts.get(), new clang::TextDiagnosticPrinter(os, diag_opts.get()), true);
    clang::CreateInvocationOptions opts;
    opts.Diags = diags;
    std::shared_ptr<clang::CompilerInvocation> invocation =
        clang::createInvocation(llvm::ArrayRef<const char *>(argv, (size_t)argc), opts);
    if (invocation) {
      /* The driver's -o names the job's output, which createInvocation
       * leaves out: tools that use it only parse. */
      invocation->getFrontendOpts().OutputFile = output;
      /* Without carets ExecuteAction does not print its "N warnings
       * generated." to standard error, which is the application's. */
      invocation->getDiagnosticOpts().ShowCarets = false;
      clang::CompilerInstance ci;
      ci.setInvocation(invocation);
      ci.createDiagnostics(new clang::TextDiagnosticPrinter(os, &ci.getDiagnosticOpts()), true);
      clang::EmitBCAction action;
      bool ok = false;
      /* A crash in clang ends this compile, not the compiler process (which
       * the caller then retires, as after a crash libclang recovered from). */
      llvm::CrashRecoveryContext::Enable();
      llvm::CrashRecoveryContext crc;
      if (!crc.RunSafely([&] { ok = ci.ExecuteAction(action); }))
        status = -1;
      else
        status = ok && !ci.getDiagnostics().hasErrorOccurred() ? 0 : 1;
    }
    os.flush();
  }
  *diagnostics = strdup(text.c_str());
  return status;
}
