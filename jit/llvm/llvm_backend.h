#ifndef GUARDJIT_JIT_LLVM_LLVM_BACKEND_H_
#define GUARDJIT_JIT_LLVM_LLVM_BACKEND_H_

// The host backend: a program's kernels compiled by KernelCompiler (LLVM ORC,
// per-kernel cache) into host functions. Its step runners call them directly
// (KernelModule::host_functions), splitting their first outer loop across
// its ThreadPool; Launch runs one on the calling thread.

#include <memory>
#include <string>
#include <vector>

#include "jit/kernel_backend.h"
#include "jit/llvm/kernel_compiler.h"
#include "runtime/index_expr.h"

namespace guardjit {

class LlvmKernelBackend : public KernelBackend {
 public:
  explicit LlvmKernelBackend(std::shared_ptr<KernelCompiler> compiler)
      : compiler_(std::move(compiler)) {}

  std::string name() const override { return "llvm:" + compiler_->target(); }
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override;
  bool host_code() const override { return true; }
  // A GEMM or conv step whose product is written straight to its output
  // never runs its (bare-store) epilogue: HostStepRunsKernel.
  bool RunsKernelOf(const PlanStep& step) const override;
  // Host steps: the kernel's function called directly, GEMM and conv steps
  // on BLAS (jit/steps/kernel_steps.h); index -1 for a step that does not
  // run its kernel.
  absl::StatusOr<std::unique_ptr<const StepRunner>> MakeStepRunner(
      const PlanStep& step, const Graph& graph,
      std::shared_ptr<const KernelModule> module, int index,
      const std::shared_ptr<ThreadPool>& pool) const override;
  KernelCacheStats cache_stats() const override {
    return compiler_->cache_stats();
  }

  KernelCompiler& compiler() const { return *compiler_; }

 private:
  const std::shared_ptr<KernelCompiler> compiler_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LLVM_BACKEND_H_
