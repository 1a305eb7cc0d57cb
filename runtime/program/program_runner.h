#ifndef GUARDJIT_RUNTIME_PROGRAM_PROGRAM_RUNNER_H_
#define GUARDJIT_RUNTIME_PROGRAM_PROGRAM_RUNNER_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/device_faults.h"
#include "runtime/program/output_placement.h"
#include "runtime/program/program.h"
#include "runtime/program/program_graphs.h"
#include "runtime/program/step_profile.h"

namespace guardjit {

// Runs a Program for calls. Thread-safe.
//
// Memory: the intermediates only kernels touch live at offsets in one arena
// per call (the plan's liveness-shared buffers, laid end to end), one block
// of the call's allocator taken when the call starts and returned when it
// ends: the caching allocator hands a hit the last call's block, so a hit
// with caller destinations makes no heap allocation (a dynamic program's
// evaluated sizes live in pooled workspaces, one per concurrent call), and
// between calls the block counts as cached memory, not in use. Outputs
// without a destination, and the values eager steps read or return, are
// allocated per call. A device program allocates its buffers per call from
// the stream-ordered device allocator.
class ProgramRunner {
 public:
  // `graphs`: a device program's CUDA graphs for reduce-overhead mode, or
  // null.
  static absl::StatusOr<std::unique_ptr<ProgramRunner>> Create(
      std::unique_ptr<const Program> program,
      std::unique_ptr<ProgramGraphs> graphs = nullptr);

  // Inputs must have the dtypes, layout and (static program) sizes the
  // program was built for; `symbols` holds the call's symbol values (one per
  // symbol, empty for a static program). Writes one tensor per output into
  // `outputs` (Executable::Run): outputs with a destination in `ctx` are
  // written straight into it where OutputPlacement allows; others come back
  // as tensors the caller copies. Destinations are checked before any step.
  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<const int64_t> symbols,
                   absl::Span<Tensor> outputs) const;

  const Program& program() const { return *program_; }
  const OutputPlacement& placement() const { return placement_; }
  // The intermediates' arena: how many plan buffers it holds, and its size
  // at the program's sizes (a static program) or -1 (a dynamic one).
  int num_arena_buffers() const {
    return static_cast<int>(program_->buffer_bytes.size());
  }
  int64_t static_arena_bytes() const {
    return program_->num_symbols > 0 ? -1 : static_sizes_.arena_bytes;
  }
  // Step times over the calls made with GJ_PROFILE=1 (step_profile.h), or
  // empty.
  std::string DescribeProfile() const {
    return profile_ != nullptr
               ? profile_->Describe(*program_, StepProfileTopSteps())
               : std::string();
  }
  // reduce-overhead mode's account (ProgramGraphs::Describe), or empty.
  std::string DescribeCudaGraphs() const {
    return graphs_ != nullptr ? graphs_->Describe() : std::string();
  }

 private:
  explicit ProgramRunner(std::unique_ptr<const Program> program)
      : program_(std::move(program)), placement_(*program_) {}

  // A dynamic program's evaluated sizes for one call, reused by later calls.
  std::unique_ptr<CallSizes> AcquireSizes() const;
  void ReleaseSizes(std::unique_ptr<CallSizes> sizes) const;
  // Runs the steps (no replay).
  absl::Status RunSteps(const RunContext& ctx, absl::Span<const Tensor> inputs,
                        absl::Span<const int64_t> symbols,
                        const CallSizes& sizes,
                        const std::shared_ptr<Allocator>& allocator,
                        const DeviceFaultWords* fault_words,
                        absl::Span<Tensor> outputs) const;
  // `fault` (a check that failed on the device, in this call or in an
  // earlier one) as the check's error, naming its node.
  absl::Status DeviceFaultError(const DeviceFault& fault, bool this_call) const;

  const std::unique_ptr<const Program> program_;
  const OutputPlacement placement_;
  CallSizes static_sizes_;  // a static program's sizes
  // Device programs with device-side checks: the fault words the calls
  // launch with (the module is shared with every program of the same
  // source; the words are not). Null for programs without checks.
  std::unique_ptr<DeviceFaultPool> faults_;
  // Declared after program_: destroyed before the kernels they launch.
  std::unique_ptr<ProgramGraphs> graphs_;
  // With GJ_PROFILE=1: each step's time, summed over the calls.
  std::unique_ptr<StepProfile> profile_;
  // Idle workspaces; as many exist as calls have run at once.
  // std::mutex, not absl::Mutex: Debian's Abseil is not built with TSan,
  // which then cannot see absl::Mutex's ordering.
  mutable std::mutex workspace_mu_;
  mutable std::vector<std::unique_ptr<CallSizes>> workspaces_
      ABSL_GUARDED_BY(workspace_mu_);
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_PROGRAM_RUNNER_H_
