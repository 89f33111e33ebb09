/* Runs one clang driver command line (a single compile job) inside the
 * compiler process instead of starting clang-19: starting it costs about
 * 100 ms (it loads libclang-cpp and libLLVM), compiling a small program
 * to bitcode about 5. libclang's C API cannot generate code, hence C++ here,
 * kept to this file.
 *
 * The builtin library is linked here too, as clang's -mlink-builtin-bitcode
 * would link it, but at the cost of what the program uses: clang's option
 * gives every one of the library's 12,000 functions the program's default
 * attributes before the link keeps the few it needs, 25 to 30 ms of the 45
 * that linking the library cost a small program (its bitcode in 50 ms,
 * about 20 now). */
#include "frontend/clang_in_process.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Frontend/Utils.h>
#include <llvm/ADT/StringSet.h>
#include <llvm-c/Core.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/CrashRecoveryContext.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/Internalize.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

/* What clang's -mlink-builtin-bitcode applies to each of the library's
 * functions (clang/lib/CodeGen/CGCall.cpp): exported by libclang-cpp 19,
 * declared in no installed header. */
namespace clang::CodeGen {
void mergeDefaultFunctionDefinitionAttributes(llvm::Function &f, const CodeGenOptions &codegen,
                                              const LangOptions &lang, const TargetOptions &target,
                                              bool will_internalize);
}

/* Links into m what it needs of library (read lazily: only what m reaches
 * is read at all), consuming library; what comes from it becomes internal,
 * as clang's -mlink-builtin-bitcode makes it. False on failure. */
static bool link_needed(llvm::Module &m, std::unique_ptr<llvm::Module> library) {
  return !llvm::Linker::linkModules(
      m, std::move(library), llvm::Linker::Flags::LinkOnlyNeeded,
      [](llvm::Module &linked, const llvm::StringSet<> &imported) {
        llvm::internalizeModule(linked, [&imported](const llvm::GlobalValue &g) {
          return !g.hasName() || imported.count(g.getName()) == 0;
        });
      });
}

extern "C" int aquila_link_needed(LLVMModuleRef m, LLVMModuleRef library) {
  return link_needed(*llvm::unwrap(m), std::unique_ptr<llvm::Module>(llvm::unwrap(library))) ? 0
                                                                                             : -1;
}

/* Links the library (lazily read: only the functions the program reaches
 * are read at all) into m; what it brings becomes internal, and each
 * function it brings gets the defaults of this compile (denormals, fast
 * math, target features), which clang's option gives them before the
 * link. False, with the reason in os, on failure. */
static bool link_builtin_library(clang::CompilerInstance &ci, llvm::Module &m, const char *library,
                                 size_t library_size, llvm::raw_ostream &os) {
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(library, library_size), "builtins.bc", false);
  llvm::Expected<std::unique_ptr<llvm::Module>> lazy =
      llvm::getOwningLazyBitcodeModule(std::move(buffer), m.getContext());
  if (!lazy) {
    os << "error: internal: the builtin library cannot be read: "
       << llvm::toString(lazy.takeError()) << "\n";
    return false;
  }
  /* The program's own functions: those it defines, and those it only
   * declares (which the library may define). */
  llvm::StringSet<> defined_before, declared_before;
  for (llvm::Function &f : m)
    (f.isDeclaration() ? declared_before : defined_before).insert(f.getName());
  if (!link_needed(m, std::move(*lazy))) {
    os << "error: internal: linking the builtin library failed\n";
    return false;
  }
  /* What the library brought: its definitions of what the program
   * declared, and the functions (declarations too) it added. */
  for (llvm::Function &f : m)
    if (!f.isIntrinsic() && !defined_before.count(f.getName()) &&
        (!f.isDeclaration() || !declared_before.count(f.getName())))
      clang::CodeGen::mergeDefaultFunctionDefinitionAttributes(
          f, ci.getCodeGenOpts(), ci.getLangOpts(), ci.getTargetOpts(), true);
  return true;
}

extern "C" int clang_emit_bitcode_in_process(const char *const *argv, int argc, const char *output,
                                             const void *library, size_t library_size,
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
      /* The action's modules live in clang_context, which outlives the
       * action and the compiler instance (either may free a module as it
       * ends). After a crash clang's state is left as the crash found it:
       * none of it is freed (the caller retires this process, as after a
       * crash libclang recovered from). */
      auto *clang_context = new llvm::LLVMContext;
      auto *ci = new clang::CompilerInstance;
      ci->setInvocation(invocation);
      ci->createDiagnostics(new clang::TextDiagnosticPrinter(os, &ci->getDiagnosticOpts()), true);
      clang_context->setDiscardValueNames(ci->getCodeGenOpts().DiscardValueNames);
      /* Clang writes the program's bitcode, which is read back into a
       * context of this function's, linked with the library and written
       * again: a millisecond for a small program. */
      auto *action = new clang::EmitBCAction(clang_context);
      bool ok = false;
      /* A crash in clang ends this compile, not the compiler process. */
      llvm::CrashRecoveryContext::Enable();
      llvm::CrashRecoveryContext crc;
      if (!crc.RunSafely([&] {
            ok = ci->ExecuteAction(*action) && !ci->getDiagnostics().hasErrorOccurred();
            if (!ok) return;
            llvm::LLVMContext context;
            /* As clang's own context: local values unnamed. */
            context.setDiscardValueNames(ci->getCodeGenOpts().DiscardValueNames);
            llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> program =
                llvm::MemoryBuffer::getFile(output);
            llvm::Expected<std::unique_ptr<llvm::Module>> parsed =
                program ? llvm::parseBitcodeFile((*program)->getMemBufferRef(), context)
                        : llvm::Expected<std::unique_ptr<llvm::Module>>(nullptr);
            std::unique_ptr<llvm::Module> m;
            if (parsed)
              m = std::move(*parsed);
            else
              llvm::consumeError(parsed.takeError());
            if (!m) os << "error: internal: cannot read clang's bitcode back\n";
            ok = m && link_builtin_library(*ci, *m, static_cast<const char *>(library),
                                           library_size, os);
            if (ok) {
              std::error_code ec;
              llvm::raw_fd_ostream out(output, ec, llvm::sys::fs::OF_None);
              if (!ec) llvm::WriteBitcodeToFile(*m, out);
              out.close();
              ok = !ec && !out.has_error();
              if (!ok) os << "error: cannot write the bitcode to " << output << "\n";
              out.clear_error();
            }
          })) {
        status = -1;
      } else {
        status = ok ? 0 : 1;
        delete action;
        delete ci;
        delete clang_context;
      }
    }
    os.flush();
  }
  *diagnostics = strdup(text.c_str());
  return status;
}
