#ifndef GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_
#define GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "runtime/kernel_registry.h"

namespace guardjit {

// Runs a graph node by node with the reference kernels: the fallback for
// functions past their recompile limit and for ops a backend cannot compile,
// and the oracle every compiled path is tested against. A cond node runs the
// branch its predicate's value selects (data-dependent predicates included).
class EagerInterpreter {
 public:
  // Fails (UNIMPLEMENTED, naming the node) if an op has no reference kernel.
  static absl::StatusOr<std::unique_ptr<EagerInterpreter>> Create(
      std::shared_ptr<const Graph> graph,
      const KernelRegistry& kernels = KernelRegistry::Global());

  // Runs on CPU inputs (borrowed for the call). Outputs may be views of the
  // inputs or of each other, as in PyTorch. Thread-safe: Run keeps no state.
  // `planned` is every node's output metadata for inputs of exactly these
  // dtypes and shapes (InferShapes), saving shape inference per call; the
  // caller guarantees the inputs match it. With `planned`, destinations in
  // `ctx` are checked against the outputs before any node runs; outputs are
  // never written into them (the caller copies). `ctx`'s stop conditions are
  // checked before each node. A node whose op has a data-dependent output
  // size (OpDef::data_dependent_output) runs only without `planned`: its
  // kernel sizes the results and their metadata is taken from them; with
  // `planned` it is FAILED_PRECONDITION naming the node.
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor> inputs,
                                          const GraphMeta* planned = nullptr,
                                          const RunContext& ctx = {}) const;

  const Graph& graph() const { return *graph_; }

 private:
  struct CondBranches {
    std::unique_ptr<EagerInterpreter> if_true, if_false;
  };

  EagerInterpreter(std::shared_ptr<const Graph> graph,
                   std::vector<const KernelFn*> kernels,
                   std::vector<std::vector<int>> release_after,
                   std::vector<CondBranches> branches)
      : graph_(std::move(graph)),
        kernels_(std::move(kernels)),
        release_after_(std::move(release_after)),
        branches_(std::move(branches)) {}

  absl::StatusOr<std::vector<Tensor>> RunCond(
      const Node& node, int index,
      const std::vector<std::vector<Tensor>>& values) const;

  std::shared_ptr<const Graph> graph_;
  std::vector<const KernelFn*> kernels_;  // per node; null for non-calls
  // Values whose last use is node i, freed after it runs.
  std::vector<std::vector<int>> release_after_;
  std::vector<CondBranches> branches_;  // per node; set for cond nodes
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_
