#ifndef GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_
#define GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_

// The runners of a plan's kernel steps (runtime/program/step_runner.h), by
// backend:
//   - ModuleKernelStep launches a kernel through its module (the SIMT
//     emulator's, a CUDA device's), its failed index checks returned by the
//     launch or, on a device, read later from the call's fault words;
//   - the LLVM backend's host steps call the kernel's function directly:
//     HostKernelStep splits its first outer loop across the thread pool,
//     and the GEMM and conv steps run BLAS, oneDNN or a packed product's
//     generated code (gemm_step.h, conv_step.h, onednn_conv.h,
//     packed_gemm.h) with the kernel as their epilogue.
// A device's GEMM and conv steps are jit/cuda/device_steps.h.

#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "core/graph.h"
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

// A kernel's loop extents: what its split and its work depend on.
struct KernelExtents {
  std::vector<IndexExpr> outer;                // its outer loops'
  std::vector<std::vector<IndexExpr>> stages;  // each stage's loops'

  explicit KernelExtents(const Kernel& k);
};

// How a kernel's first outer loop is split at some sizes.
struct KernelSplit {
  int64_t extent = 1;  // the first outer loop's iterations
  int64_t grain = 0;   // iterations per chunk; 0: on the calling thread
  int64_t work = 0;    // element operations of the whole run
};

// How the host runner splits `k` when all its extents are constants; a split
// of nothing (grain 0) otherwise.
KernelSplit StaticSplitOf(const Kernel& k);

// A fused kernel of the host: its function called directly, its first
// outer loop split across the pool when it has enough work (in rounds that
// check the call's stop when it has one).
class HostKernelStep : public StepRunner {
 public:
  HostKernelStep(const KernelStep& step, HostKernelFn fn,
                 std::shared_ptr<ThreadPool> pool);
  absl::Status Run(StepCall& call) const override;
  // Run with `pointers` as the kernel's buffer parameters instead of its
  // slots' memory (an extern step's epilogue reading its scratch).
  absl::Status RunWith(StepCall& call, absl::Span<void* const> pointers) const;
  // Iterations [begin, end) of the first outer loop with `pointers`, on the
  // calling thread (an extern step running its epilogue part by part).
  absl::Status RunRange(const StepCall& call, absl::Span<void* const> pointers,
                        int64_t begin, int64_t end) const;

 private:
  const HostKernelFn fn_;
  const std::shared_ptr<ThreadPool> pool_;
  const KernelExtents extents_;
  const bool dynamic_;
  const std::vector<int> buffer_slots_;
  const std::vector<IndexCheck> checks_;
  KernelSplit static_split_;  // a static kernel's
};

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

// Whether a host step ever calls its kernel: not a GEMM or conv step whose
// product BLAS or oneDNN writes straight to the output (result_param), the
// epilogue then being a bare store that never runs. Such a kernel is not
// compiled (a cold start compiles fewer kernels: mobilenet_v2's projection
// convolutions, a bare linear layer), and its runner gets no function.
bool HostStepRunsKernel(const PlanStep& step);

// The runner of an LLVM-backend plan step of `graph`: a host kernel (`fn`),
// or a GEMM or conv step (BLAS, or oneDNN: onednn_conv.h) with it as the
// epilogue. `fn` is null exactly when !HostStepRunsKernel(step).
absl::StatusOr<std::unique_ptr<const StepRunner>> MakeHostStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_KERNEL_STEPS_H_
