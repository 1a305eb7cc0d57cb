#include "core/graph_segments.h"

#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/function.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

bool IsPredicate(const SegmentPlan& plan) {
  return plan.at.kind == GraphBreak::Kind::kPredicate;
}

// The graph inputs among `sources`, by position.
std::vector<int> GraphInputs(const std::vector<SegmentSource>& sources) {
  std::vector<int> out;
  for (const SegmentSource& s : sources) {
    out.push_back(s.kind == SegmentSource::Kind::kInput ? s.index : -1);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GraphSegments>> GraphSegments::Create(
    std::shared_ptr<const Graph> graph, SegmentPlan plan,
    std::shared_ptr<Compiler> compiler, const FunctionOptions& options) {
  std::unique_ptr<GraphSegments> segments(new GraphSegments(
      std::move(graph), std::move(plan), std::move(compiler), options));
  const SegmentPlan& p = segments->plan_;
  const std::string& at = segments->graph_->node(p.at.node).name;
  if (p.head != nullptr) {
    ASSIGN_OR_RETURN(
        segments->head_,
        Function::Create(p.head, segments->compiler_,
                         segments->SegmentOptions(
                             absl::StrCat(options.name, " (before '", at, "')"),
                             p.head_inputs)));
  }
  if (p.step != nullptr) {
    // The breaking op runs on the reference kernels: its output sizes come
    // from the values.
    ASSIGN_OR_RETURN(segments->step_, segments->compiler_->Fallback(p.step));
  }
  return segments;
}

GraphSegments::~GraphSegments() = default;

FunctionOptions GraphSegments::SegmentOptions(
    std::string name, const std::vector<int>& graph_inputs) const {
  FunctionOptions out;
  out.name = std::move(name);
  out.recompile_limit = options_.recompile_limit;
  out.dynamic = options_.dynamic;
  out.compile_queue = options_.compile_queue;
  // A segment's CUDA calls carry the whole function's RunContext (and its
  // CUDA graph policy); the segment keeps the same settings for explain.
  out.mode = options_.mode;
  out.max_graphs_per_entry = options_.max_graphs_per_entry;
  for (const DynamicDim& d : options_.mark_dynamic) {
    for (size_t k = 0; k < graph_inputs.size(); ++k) {
      if (graph_inputs[k] == d.input) {
        DynamicDim mapped = d;
        mapped.input = static_cast<int>(k);
        out.mark_dynamic.push_back(mapped);
      }
    }
  }
  return out;
}

absl::StatusOr<Function*> GraphSegments::Continuation(int slot) {
  if (Function* f = published_[slot].load(std::memory_order_acquire)) {
    return f;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (continuations_[slot] != nullptr) return continuations_[slot].get();
  const std::string& at = graph_->node(plan_.at.node).name;
  ASSIGN_OR_RETURN(std::shared_ptr<const Graph> rest,
                   ContinuationGraph(*graph_, plan_, slot == 1));
  const std::string name =
      IsPredicate(plan_)
          ? absl::StrCat(options_.name, " (after '", at, "', ",
                         slot == 1 ? "true" : "false", " branch)")
          : absl::StrCat(options_.name, " (after '", at, "')");
  ASSIGN_OR_RETURN(
      continuations_[slot],
      Function::Create(
          std::move(rest), compiler_,
          SegmentOptions(name, GraphInputs(plan_.continuation_inputs))));
  if (LogEnabled(LogTopic::kGraphBreaks)) {
    Log(LogTopic::kGraphBreaks,
        absl::StrCat("Graph break in function '", options_.name, "' at '", at,
                     "': ", plan_.at.reason, "; resuming in '", name, "' (",
                     continuations_[slot]->graph().num_ops(), " ops)"));
  }
  published_[slot].store(continuations_[slot].get(), std::memory_order_release);
  return continuations_[slot].get();
}

absl::Status GraphSegments::Call(absl::Span<const Tensor> inputs,
                                 const CallSignature& call, RunContext& ctx,
                                 absl::Span<Tensor> outputs, bool& hit) {
  // Only the last segment writes the caller's destinations.
  RunContext inner = ctx;
  inner.destinations = {};
  std::vector<Tensor> head_out;
  if (head_ != nullptr) {
    absl::InlinedVector<Tensor, 8> in;
    absl::InlinedVector<InputView, 8> views;
    for (int k : plan_.head_inputs) {
      in.push_back(inputs[k]);
      views.push_back(call.inputs[k]);
    }
    head_out.resize(head_->graph().num_outputs());
    RETURN_IF_ERROR(head_->Call(in, {views, call.ambient}, inner,
                                absl::MakeSpan(head_out), hit));
  }
  std::vector<Tensor> step_out;
  auto value = [&](const SegmentSource& s) -> const Tensor& {
    switch (s.kind) {
      case SegmentSource::Kind::kInput:
        return inputs[s.index];
      case SegmentSource::Kind::kHead:
        return head_out[s.index];
      case SegmentSource::Kind::kStep:
        break;
    }
    return step_out[s.index];
  };
  int slot = 0;
  if (IsPredicate(plan_)) {
    Tensor predicate = value(plan_.predicate);
    const Node& cond = graph_->node(plan_.at.node);
    if (predicate.numel() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("node '", cond.name, "' (cond): the predicate has ",
                       predicate.numel(), " elements (",
                       predicate.DebugString(), "); it must have exactly one"));
    }
    if (!predicate.device().is_cpu()) {
      // The one synchronization of a break on the GPU.
      ASSIGN_OR_RETURN(predicate, compiler_->ToHost(predicate, ctx));
    }
    slot = predicate.Item().to_bool() ? 1 : 0;
  } else {
    RETURN_IF_ERROR(ctx.CheckStop());
    absl::InlinedVector<Tensor, 4> in;
    for (const SegmentSource& s : plan_.step_inputs) in.push_back(value(s));
    ASSIGN_OR_RETURN(step_out, RunToVector(*step_, inner, in));
  }
  ASSIGN_OR_RETURN(Function * next, Continuation(slot));
  absl::InlinedVector<Tensor, 8> in;
  absl::InlinedVector<InputView, 8> views;
  for (const SegmentSource& s : plan_.continuation_inputs) {
    in.push_back(value(s));
  }
  for (size_t k = 0; k < in.size(); ++k) {
    const SegmentSource& s = plan_.continuation_inputs[k];
    views.push_back(s.kind == SegmentSource::Kind::kInput
                        ? call.inputs[s.index]
                        : InputView::Of(in[k]));
  }
  return next->Call(in, {views, call.ambient}, ctx, outputs, hit);
}

absl::Status GraphSegments::Precompile(const CallSignature& call) {
  if (head_ == nullptr) return absl::OkStatus();
  absl::InlinedVector<InputView, 8> views;
  for (int k : plan_.head_inputs) views.push_back(call.inputs[k]);
  return head_->Precompile({views, call.ambient});
}

void GraphSegments::CollectGraphs(std::vector<const Function*>& graphs) const {
  if (head_ != nullptr) head_->CollectGraphs(graphs);
  for (int slot : {1, 0}) {
    if (const Function* f = published_[slot].load(std::memory_order_acquire)) {
      f->CollectGraphs(graphs);
    }
  }
}

void GraphSegments::CollectBreaks(std::vector<std::string>& reasons) const {
  if (head_ != nullptr) head_->CollectBreaks(reasons);
  bool reached = false;
  for (int slot : {1, 0}) {
    if (published_[slot].load(std::memory_order_acquire) != nullptr) {
      reached = true;
    }
  }
  if (reached) reasons.push_back(plan_.at.reason);
  for (int slot : {1, 0}) {
    if (const Function* f = published_[slot].load(std::memory_order_acquire)) {
      f->CollectBreaks(reasons);
    }
  }
}

}  // namespace guardjit
