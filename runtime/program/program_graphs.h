#ifndef GUARDJIT_RUNTIME_PROGRAM_PROGRAM_GRAPHS_H_
#define GUARDJIT_RUNTIME_PROGRAM_PROGRAM_GRAPHS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/run_context.h"
#include "core/tensor.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/device_faults.h"
#include "runtime/program/output_placement.h"
#include "runtime/program/program.h"

namespace guardjit {

// What a replay of a device program's call reads.
struct GraphCall {
  const RunContext& ctx;  // ctx.cuda_graphs set
  absl::Span<const Tensor> inputs;
  absl::Span<const int64_t> symbols;
  const CallSizes& sizes;
  const std::shared_ptr<Allocator>& allocator;
  const OutputPlacement& placement;
  // The program's fault words (null: no kernel has device-side checks).
  DeviceFaultPool* faults = nullptr;
};

// reduce-overhead mode's CUDA-graph capture and replay over a device
// program: per size key, the second call records the program's launches
// (and its extern steps' library calls) into a graph, and later calls
// replay it with their addresses patched in. Supplied by the CUDA backend
// (jit/cuda/program_graphs.h); ProgramRunner asks it first on every call
// in reduce-overhead mode.
class ProgramGraphs {
 public:
  virtual ~ProgramGraphs() = default;
  // The call as one replay of its size key's graph, outputs into
  // `outputs`: true. False when the call must run plain launches instead:
  // the key's first call (warm-up), a refused program or key, a call with
  // stop conditions (a graph cannot stop between kernels), or another call
  // replaying the key at the same time. With `faults`, a replay hands the
  // key's fault words to faults->GraphReplayed (the caller does), and a
  // call that does not replay gives them back.
  virtual absl::StatusOr<bool> Replay(const GraphCall& call,
                                      absl::Span<Tensor> outputs) const = 0;
  // What the graphs did, or why they were refused (explain()).
  virtual std::string Describe() const = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_PROGRAM_GRAPHS_H_
