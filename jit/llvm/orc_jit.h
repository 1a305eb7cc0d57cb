#ifndef GUARDJIT_JIT_LLVM_ORC_JIT_H_
#define GUARDJIT_JIT_LLVM_ORC_JIT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/Support/MemoryBuffer.h"

namespace guardjit {

// An in-process LLVM ORC LLJIT for the host CPU (its name and features, code
// generation at the aggressive level). One per compiler; adding modules and
// looking up symbols are thread-safe (ORC's own locking). Symbols the JIT's
// code calls (libm) resolve against the host process.
class OrcJit {
 public:
  static absl::StatusOr<std::unique_ptr<OrcJit>> Create();

  // A new, empty JITDylib (a namespace for symbols) that resolves what its
  // code calls (libm, libmvec) against the host process. Each loaded object
  // gets its own, so the same object may be loaded twice (a cached kernel
  // evicted while a program still runs it, then loaded again) without its
  // symbols clashing.
  absl::StatusOr<llvm::orc::JITDylib*> CreateDylib();
  // Frees a dylib made by CreateDylib with all its code.
  absl::Status RemoveDylib(llvm::orc::JITDylib* dylib);
  // Links an object file (from CompileToObject, or the compile cache) into
  // `dylib`; its functions become callable after Lookup.
  absl::Status AddObject(llvm::orc::JITDylib* dylib,
                         std::unique_ptr<llvm::MemoryBuffer> object);
  // Address of function `name` in `dylib` (linking its object on first
  // lookup).
  absl::StatusOr<void*> Lookup(llvm::orc::JITDylib* dylib,
                               absl::string_view name);

  // `module` (optimized for CreateTargetMachine's machine) as an ELF object
  // file, as the JIT's own compile layer would make it.
  absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> CompileToObject(
      llvm::Module& module, llvm::TargetMachine& machine) const;

  // "x86_64-pc-linux-gnu" and the CPU name the JIT targets.
  std::string TargetDescription() const;
  // Everything about the target that changes generated code: the triple,
  // the CPU and its feature string ("+avx2,+fma,..."), and the LLVM
  // version. Part of every compile-cache key.
  std::string TargetFingerprint() const;

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
  std::atomic<uint64_t> next_dylib_{0};
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_ORC_JIT_H_
