#ifndef GUARDJIT_JIT_KERNEL_COMPILER_H_
#define GUARDJIT_JIT_KERNEL_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "jit/llvm_codegen.h"
#include "jit/loop_ir.h"
#include "jit/orc_jit.h"

namespace guardjit {

// Compiles loop-IR kernels to host code through one OrcJit, with an
// in-memory cache keyed by (printed loop IR, target): identical kernels,
// from one graph or many, compile once. Thread-safe; compiled code lives as
// long as this object.
class KernelCompiler {
 public:
  static absl::StatusOr<std::unique_ptr<KernelCompiler>> Create();

  // The compiled function of each kernel (new ones share one LLVM module).
  absl::StatusOr<std::vector<CompiledKernelFn>> Compile(
      const std::vector<const Kernel*>& kernels);

  // Kernels compiled and cache hits so far (for tests and explain()).
  int compiled() const;
  int cache_hits() const;
  const std::string& target() const { return target_; }

 private:
  KernelCompiler(std::unique_ptr<OrcJit> jit, std::string target)
      : jit_(std::move(jit)), target_(std::move(target)) {}

  std::unique_ptr<OrcJit> jit_;
  const std::string target_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, CompiledKernelFn> cache_
      ABSL_GUARDED_BY(mu_);
  int compiled_ ABSL_GUARDED_BY(mu_) = 0;
  int hits_ ABSL_GUARDED_BY(mu_) = 0;
  int next_module_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_KERNEL_COMPILER_H_
