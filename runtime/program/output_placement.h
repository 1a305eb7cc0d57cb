#ifndef GUARDJIT_RUNTIME_PROGRAM_OUTPUT_PLACEMENT_H_
#define GUARDJIT_RUNTIME_PROGRAM_OUTPUT_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "runtime/program/program.h"

namespace guardjit {

// Where a program writes each output of a call that gives it a destination:
// the one place that decides (for plain runs and CUDA-graph replays alike).
//
// An output is written straight into its destination when the step that
// produces it writes its slot (a kernel, a GEMM or conv epilogue, or an
// eager step whose reference kernel writes destinations), the output is the
// whole contiguous slot, no step that can still fail runs after the slot is
// written (a failed call leaves every destination unwritten), and at run
// time the destination is contiguous, overlaps no input, and the call has
// no stop conditions (a stop between steps would leave it half-written).
// Every other output comes back as a tensor the caller copies, for a reason
// explain() gives.
class OutputPlacement {
 public:
  explicit OutputPlacement(const Program& program);

  // The destination slot `slot` is written into directly on this call, or
  // null.
  const Tensor* Destination(const RunContext& ctx,
                            absl::Span<const Tensor> inputs, int slot) const {
    const int k = direct_output_[slot];
    if (k < 0 || ctx.stoppable()) return nullptr;
    const Tensor* dest = ctx.destination(k);
    if (dest == nullptr || !dest->is_contiguous()) return nullptr;
    const ByteRange range = MemoryRange(*dest);
    for (const Tensor& in : inputs) {
      if (range.Overlaps(MemoryRange(in))) return nullptr;
    }
    return dest;
  }
  // The output written in place into its destination from slot `slot`, or
  // -1.
  int direct_output(int slot) const { return direct_output_[slot]; }
  // How many outputs a call with destinations for all of them writes in
  // place.
  int num_direct_outputs() const;
  // explain()'s account of the outputs a call with destinations still
  // copies, each with its reason ("outputs copied: 1 'v' (a view of input
  // 'x')"), or empty when every output is written in place.
  std::string DescribeCopies() const;

 private:
  const Program& program_;
  std::vector<int> direct_output_;        // per slot
  std::vector<std::string> copy_reason_;  // per output
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_OUTPUT_PLACEMENT_H_
