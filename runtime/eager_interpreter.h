#ifndef GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_
#define GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_

#include <memory>
#include <string>
#include <utility>
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
  // `ctx` are checked against the outputs before any node runs, and the
  // last node to run writes the outputs it produces into their destinations
  // when its kernel can (KernelRegistry::writes_destinations), the call
  // cannot be stopped and the destination overlaps no input: nothing can
  // fail after that write. Other outputs are returned for the caller to copy
  // (DescribeOutputCopies says which and why). `ctx`'s stop conditions are
  // checked before each node. A node whose op has a data-dependent output
  // size (OpDef::data_dependent_output) runs only without `planned`: its
  // kernel sizes the results and their metadata is taken from them; with
  // `planned` it is FAILED_PRECONDITION naming the node.
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor> inputs,
                                          const GraphMeta* planned = nullptr,
                                          const RunContext& ctx = {}) const;

  const Graph& graph() const { return *graph_; }

  // "outputs copied: 0 'a' (a view of input 0 ('x')), ..." for the outputs
  // a planned run with destinations copies; "" when it writes all in place.
  std::string DescribeOutputCopies() const;

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

  // Fills in_place_ and copy_reasons_.
  void PlanOutputWrites(const KernelRegistry& registry);

  absl::StatusOr<std::vector<Tensor>> RunCond(
      const Node& node, int index,
      const std::vector<std::vector<Tensor>>& values) const;

  std::shared_ptr<const Graph> graph_;
  std::vector<const KernelFn*> kernels_;  // per node; null for non-calls
  // Values whose last use is node i, freed after it runs.
  std::vector<std::vector<int>> release_after_;
  std::vector<CondBranches> branches_;  // per node; set for cond nodes
  // The last call node, when its kernel writes destinations (else -1), and
  // which of its outputs go to which graph outputs: {graph output, node
  // output index}.
  int in_place_node_ = -1;
  std::vector<std::pair<int, int>> in_place_;
  // Per graph output: why it is copied ("" = written in place).
  std::vector<std::string> copy_reasons_;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_EAGER_INTERPRETER_H_
