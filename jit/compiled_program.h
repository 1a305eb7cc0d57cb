#ifndef GUARDJIT_JIT_COMPILED_PROGRAM_H_
#define GUARDJIT_JIT_COMPILED_PROGRAM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "jit/fusion.h"
#include "jit/kernel_compiler.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

// A compiled graph for one input layout: the plan's kernels in order, with
// the nodes the JIT left alone run by their eager reference kernels in
// between. Allocates outputs and intermediates per call and frees each
// intermediate after its last reader. A kernel with enough work splits its
// first outer loop across the global ThreadPool. Run is thread-safe (no
// state).
class CompiledProgram {
 public:
  // Compiles the plan's kernels with `compiler` (which must outlive this).
  static absl::StatusOr<std::unique_ptr<CompiledProgram>> Create(
      std::shared_ptr<const Graph> graph, GraphMeta metas, Plan plan,
      KernelCompiler& compiler);

  // Inputs must have the dtypes, sizes and layout the program was built for.
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const;

  const Plan& plan() const { return plan_; }

 private:
  CompiledProgram(std::shared_ptr<const Graph> graph, GraphMeta metas,
                  Plan plan)
      : graph_(std::move(graph)),
        metas_(std::move(metas)),
        plan_(std::move(plan)) {}

  std::shared_ptr<const Graph> graph_;
  GraphMeta metas_;
  Plan plan_;
  std::vector<CompiledKernelFn> kernels_;  // per step; null for eager steps
  std::vector<const KernelFn*> eager_;     // per step; null for kernels
  std::vector<std::vector<int>> extern_output_slots_;  // per step
  std::vector<int64_t> outer_extent_;  // per step: first outer loop's extent
  std::vector<int64_t> grain_;  // per step: outer iterations per chunk; 0
                                // runs the kernel on the calling thread
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_COMPILED_PROGRAM_H_
