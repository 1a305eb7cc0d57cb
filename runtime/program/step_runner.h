#ifndef GUARDJIT_RUNTIME_PROGRAM_STEP_RUNNER_H_
#define GUARDJIT_RUNTIME_PROGRAM_STEP_RUNNER_H_

// The step interface of a program (program.h): one runner per step kind,
// supplied by the backend that compiled the program's kernels (the LLVM
// backend's host kernels, BLAS GEMM and oneDNN or im2col convolution steps:
// jit/steps/; the CUDA backends' launches and cuBLASLt steps: jit/cuda/),
// plus the eager step every backend shares (eager_step.h). ProgramRunner
// gives each step its slots' memory, runs it, and lets go of what nothing
// reads after it.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/program.h"

namespace guardjit {

// One step of one call: what its runner reads and writes.
struct StepCall {
  const RunContext& ctx;
  const Program& program;
  size_t step = 0;  // its index in program.steps
  // The call's symbol values (empty for a static program).
  absl::Span<const int64_t> symbols;
  // Per slot: the call's tensor (inputs, constants, what earlier steps
  // wrote, and this step's allocated slots, already given memory).
  absl::Span<Tensor> slots;
  // Memory for what the step allocates itself (on the program's device).
  const std::shared_ptr<Allocator>& allocator;
  // Device programs with index checks: the fault words this call's kernels
  // write; else null.
  const DeviceFaultWords* fault_words = nullptr;
  // Eager steps: the destination output slot `s` is written into in place,
  // or null (OutputPlacement::Destination).
  absl::FunctionRef<const Tensor*(int slot)> destination;

  // OK while the call may go on, else its stop (CANCELLED or
  // DEADLINE_EXCEEDED) naming this step: "cancelled by the host before step
  // 3 of 7 (kernel computing add, relu)".
  absl::Status CheckStop() const;
};

class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Runs the step on call.slots. Errors name the step's node where it has
  // one; a failed index check is the check's error.
  virtual absl::Status Run(StepCall& call) const = 0;
  // Device programs: the kernel of the program's module this step launches
  // (its fault word), or -1.
  virtual int module_kernel() const { return -1; }
  // Bytes of the graph's constants this runner holds again in a layout of
  // its own (a weight packed once into a kernel's panels or oneDNN's
  // blocked format), for gj_memory_stats.packed_weight_bytes.
  virtual int64_t packed_bytes() const { return 0; }
  // The error of index check `check` of that kernel, failed on the device
  // with `symbols` (DeviceFaultPool reports it later than Run returns).
  virtual absl::Status CheckError(int check,
                                  absl::Span<const int64_t> symbols) const {
    (void)check;
    (void)symbols;
    return absl::InternalError("the step has no index checks");
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_STEP_RUNNER_H_
