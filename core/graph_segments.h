#ifndef GUARDJIT_CORE_GRAPH_SEGMENTS_H_
#define GUARDJIT_CORE_GRAPH_SEGMENTS_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/call_signature.h"
#include "core/compiler.h"
#include "core/function_options.h"
#include "core/graph_breaks.h"
#include "core/run_context.h"
#include "core/tensor.h"

namespace guardjit {

class Function;

// A function whose graph breaks, run as segments (Dynamo's graph breaks and
// resumed continuations): the head (everything before the first break) is a
// Function of its own; the host then reads the predicate (a cond over tensor
// values) or runs the breaking op eagerly (an op whose output size depends
// on values); the rest of the graph is a continuation Function per branch
// taken, created and compiled when first reached. A continuation that breaks
// again is segmented the same way. Every segment has its own guards, cache
// entries and recompile limit, so past the limit only that segment runs
// eager. Thread-safe.
class GraphSegments {
 public:
  static absl::StatusOr<std::unique_ptr<GraphSegments>> Create(
      std::shared_ptr<const Graph> graph, SegmentPlan plan,
      std::shared_ptr<Compiler> compiler, const FunctionOptions& options);
  ~GraphSegments();

  // Runs the segments in turn, the last one into `outputs` (Function::Call).
  // `hit`: set false when any segment missed.
  absl::Status Call(absl::Span<const Tensor> inputs, const CallSignature& call,
                    RunContext& ctx, absl::Span<Tensor> outputs, bool& hit);
  // Compiles the head for `call` (what follows depends on values).
  absl::Status Precompile(const CallSignature& call);

  // The graphs (segments) reached so far, in the order explain() lists
  // them: the head, then each continuation (true branch first).
  void CollectGraphs(std::vector<const Function*>& graphs) const;
  // Breaks reached so far (distinct break sites), with their reasons.
  void CollectBreaks(std::vector<std::string>& reasons) const;

  const SegmentPlan& plan() const { return plan_; }

 private:
  GraphSegments(std::shared_ptr<const Graph> graph, SegmentPlan plan,
                std::shared_ptr<Compiler> compiler, FunctionOptions options)
      : graph_(std::move(graph)),
        plan_(std::move(plan)),
        compiler_(std::move(compiler)),
        options_(std::move(options)) {}

  // The continuation for `slot` (a cond's branch: 1 true, 0 false; 0 after
  // an output-size break), created on first use.
  absl::StatusOr<Function*> Continuation(int slot);
  // The options of a segment whose inputs come from `sources`: mark_dynamic
  // follows the graph inputs it names.
  FunctionOptions SegmentOptions(std::string name,
                                 const std::vector<int>& graph_inputs) const;

  const std::shared_ptr<const Graph> graph_;
  const SegmentPlan plan_;
  const std::shared_ptr<Compiler> compiler_;
  const FunctionOptions options_;
  std::unique_ptr<Function> head_;
  std::unique_ptr<Executable> step_;

  mutable std::mutex mu_;  // guards continuations_ and the log flag
  std::unique_ptr<Function> continuations_[2];
  std::atomic<Function*> published_[2] = {nullptr, nullptr};
  bool logged_ = false;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GRAPH_SEGMENTS_H_
