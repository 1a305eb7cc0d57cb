#ifndef GUARDJIT_JIT_CUDA_PROGRAM_GRAPHS_H_
#define GUARDJIT_JIT_CUDA_PROGRAM_GRAPHS_H_

// reduce-overhead mode on a CUDA device (runtime/program/program_graphs.h):
// a call as one replay of its size key's CUDA graph (runtime/cuda/
// cuda_graph.h's CudaGraphSet records and replays; this class says what to
// record). GEMM steps are extern calls of the graph (cuBLASLt captured on
// the capture stream); so are conv steps (all of a convolution's strided-
// batched products in one extern op), whose im2col kernel step is a kernel
// of ours writing the column matrices into the key's pool, and whose
// product goes to the pool too unless cuBLASLt writes the output itself (an
// epilogue that only stores it). Extern operands that are call inputs or
// outputs (A, B, bias, C, D: for a convolution the weight, a pointwise
// convolution's input read in place, the output) are read and written in
// place or staged through the key's pool, as CudaGraphSet's policy decides.
// A program with a step on the host (an eager node) is refused.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_graph.h"
#include "runtime/program/program_graphs.h"

namespace guardjit {

class CudaProgramGraphs : public ProgramGraphs {
 public:
  // The graphs of `program` (a CUDA device's), whose steps `plan` made;
  // `program` outlives them.
  static absl::StatusOr<std::unique_ptr<ProgramGraphs>> Create(
      const Program& program, const Plan& plan);

  absl::StatusOr<bool> Replay(const GraphCall& call,
                              absl::Span<Tensor> outputs) const override;
  std::string Describe() const override;

 private:
  CudaProgramGraphs(const Program& program, const CudaDevice* device)
      : program_(program), graphs_(device) {}

  // What a replay records of one step.
  struct Step {
    int node = -1;
    std::vector<int> allocate;
    std::vector<int> buffer_slots;
    int module_kernel = -1;  // -1: an eager step
    std::shared_ptr<const GemmStep> gemm;
    std::shared_ptr<const ConvStep> conv;
  };

  const Program& program_;
  std::vector<Step> steps_;
  // Why the program cannot be recorded at all (empty if it can).
  std::string refusal_;
  mutable CudaGraphSet graphs_;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_PROGRAM_GRAPHS_H_
