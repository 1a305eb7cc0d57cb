#ifndef GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_
#define GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_

// The runners of a plan's kernel steps (runtime/program/step_runner.h), by
// backend:
//   - ModuleKernelStep launches a kernel through its module (the SIMT
//     emulator's, a CUDA device's), its failed index checks returned by the
//     launch or, on a device, read later from the call's fault words;
//   - the LLVM backend's host steps call the kernel's function directly:
//     HostKernelStep splits its first outer loop across the thread pool,
//     and the GEMM and conv steps run BLAS (gemm_step.h, conv_step.h) with
//     the kernel as their epilogue.
// A device's GEMM and conv steps are jit/cuda/device_steps.h.

#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "jit/schedule/fusion.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/step_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Pointers to the slots `buffer_slots` names, in order: a kernel's buffer
// parameters.
absl::InlinedVector<void*, 16> KernelParams(const StepCall& call,
                                            const std::vector<int>& slots);

// The error of the first failed check in `mask`.
absl::Status FailedCheck(const std::vector<IndexCheck>& checks, int64_t mask,
                         absl::Span<const int64_t> symbols);

class ModuleKernelStep : public StepRunner {
 public:
  ModuleKernelStep(const KernelStep& step,
                   std::shared_ptr<const KernelModule> module, int index)
      : module_(std::move(module)),
        index_(index),
        buffer_slots_(step.buffer_slots),
        checks_(step.checks) {}
  absl::Status Run(StepCall& call) const override;
  int module_kernel() const override { return index_; }
  absl::Status CheckError(int check,
                          absl::Span<const int64_t> symbols) const override {
    return FailedCheck(checks_, int64_t{1} << check, symbols);
  }

 private:
  const std::shared_ptr<const KernelModule> module_;
  const int index_;
  const std::vector<int> buffer_slots_;
  const std::vector<IndexCheck> checks_;
};

// The runner of an LLVM-backend plan step: a host kernel (`fn`), or a GEMM
// or conv step with it as the epilogue.
absl::StatusOr<std::unique_ptr<const StepRunner>> MakeHostStep(
    const PlanStep& step, HostKernelFn fn, std::shared_ptr<ThreadPool> pool);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_
