#ifndef GUARDJIT_JIT_LLVM_ORC_JIT_H_
#define GUARDJIT_JIT_LLVM_ORC_JIT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"

namespace guardjit {

// An in-process LLVM ORC LLJIT for the host CPU (its name and features, code
// generation at the aggressive level). One per compiler; adding modules and
// looking up symbols are thread-safe (ORC's own locking). Symbols the JIT's
// code calls (libm) resolve against the host process.
class OrcJit {
 public:
  static absl::StatusOr<std::unique_ptr<OrcJit>> Create();

  // Adds an IR module; its functions become callable after Lookup. The
  // returned tracker owns the module's code: Remove(tracker) frees it.
  absl::StatusOr<llvm::orc::ResourceTrackerSP> AddModule(
      llvm::orc::ThreadSafeModule module);
  // Frees the code and symbols of a module added with AddModule.
  absl::Status Remove(const llvm::orc::ResourceTrackerSP& tracker);
  // Address of a compiled function (compiling it on first lookup).
  absl::StatusOr<void*> Lookup(absl::string_view name);

  // "x86_64-pc-linux-gnu" and the CPU name the JIT targets.
  std::string TargetDescription() const;

  // A TargetMachine for the JIT's target, for optimizing IR before AddModule
  // (the pass pipeline needs the CPU's cost model to vectorize).
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine()
      const;

 private:
  OrcJit(std::unique_ptr<llvm::orc::LLJIT> jit,
         llvm::orc::JITTargetMachineBuilder builder)
      : jit_(std::move(jit)), builder_(std::move(builder)) {}
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITTargetMachineBuilder builder_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_ORC_JIT_H_
