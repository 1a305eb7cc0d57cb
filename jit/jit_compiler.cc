#include "jit/jit_compiler.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/logging.h"
#include "core/op_registry.h"
#include "core/ops/control_flow.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "jit/compiled_program.h"
#include "jit/gemm_epilogue.h"
#include "jit/lowering.h"
#include "runtime/eager_compiler.h"

namespace guardjit {
namespace {

using Layout = std::vector<Shape>;

// Whether `t` is laid out as `strides` (size-0/1 dims match any stride).
bool HasLayout(const Tensor& t, const Shape& strides) {
  if (t.dim() != static_cast<int>(strides.size())) return false;
  for (int d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) != strides[d]) return false;
  }
  return true;
}

absl::StatusOr<Plan> PlanGraph(const Graph& graph, const GraphMeta& metas,
                               const Layout& layout) {
  std::vector<std::string> fallbacks;
  ASSIGN_OR_RETURN(LoweredGraph lowered,
                   Lower(graph, metas, layout, &fallbacks));
  ASSIGN_OR_RETURN(Plan plan, Schedule(lowered));
  FuseGemmEpilogues(graph, plan);
  if (LogEnabled(LogTopic::kCodegen)) {
    std::string message =
        absl::StrCat("graph '", graph.name(), "': ", plan.num_kernels(),
                     " kernels\n", plan.ToString());
    if (!fallbacks.empty()) {
      absl::StrAppend(&message, "eager nodes:\n  ",
                      absl::StrJoin(fallbacks, "\n  "), "\n");
    }
    Log(LogTopic::kCodegen, message);
  }
  return plan;
}

class JitExecutable : public Executable {
 public:
  JitExecutable(std::shared_ptr<const Graph> graph, GraphMeta metas,
                std::shared_ptr<KernelCompiler> kernels, Layout layout,
                std::unique_ptr<CompiledProgram> program)
      : graph_(std::move(graph)),
        metas_(std::move(metas)),
        kernels_(std::move(kernels)),
        layout_(std::move(layout)),
        program_(std::move(program)) {}

  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const override {
    RETURN_IF_ERROR(CheckInputCount(*graph_, inputs.size()));
    if (Matches(layout_, inputs)) return program_->Run(inputs);
    ASSIGN_OR_RETURN(const CompiledProgram* variant, Variant(inputs));
    return variant->Run(inputs);
  }

  std::string Describe() const override {
    int eager = 0;
    for (const PlanStep& s : program_->plan().steps) eager += !s.is_kernel;
    return absl::StrCat("jit: ", program_->plan().num_kernels(),
                        " fused kernels, ", eager, " eager nodes");
  }

 private:
  static bool Matches(const Layout& layout, absl::Span<const Tensor> inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!HasLayout(inputs[i], layout[i])) return false;
    }
    return true;
  }

  absl::StatusOr<const CompiledProgram*> Variant(
      absl::Span<const Tensor> inputs) const {
    absl::MutexLock lock(&mu_);
    for (const auto& [layout, program] : variants_) {
      if (Matches(layout, inputs)) return program.get();
    }
    Layout layout;
    for (const Tensor& t : inputs) {
      layout.emplace_back(t.strides().begin(), t.strides().end());
    }
    ASSIGN_OR_RETURN(Plan plan, PlanGraph(*graph_, metas_, layout));
    ASSIGN_OR_RETURN(
        std::unique_ptr<CompiledProgram> program,
        CompiledProgram::Create(graph_, metas_, std::move(plan), *kernels_));
    variants_.push_back({std::move(layout), std::move(program)});
    return variants_.back().second.get();
  }

  std::shared_ptr<const Graph> graph_;
  GraphMeta metas_;
  std::shared_ptr<KernelCompiler> kernels_;
  Layout layout_;
  std::unique_ptr<CompiledProgram> program_;
  mutable absl::Mutex mu_;
  mutable std::vector<std::pair<Layout, std::unique_ptr<CompiledProgram>>>
      variants_ ABSL_GUARDED_BY(mu_);
};

Layout ContiguousLayout(const Specialization& spec) {
  Layout layout;
  for (const TensorMeta& meta : spec.inputs) {
    std::vector<IndexExpr> sizes;
    for (int d = 0; d < meta.dim(); ++d) sizes.push_back(SizeExpr(meta, d));
    const std::optional<Shape> shape = ConcreteShape(sizes);
    layout.push_back(shape.has_value() ? ContiguousStrides(*shape) : Shape());
  }
  return layout;
}

}  // namespace

absl::StatusOr<std::unique_ptr<JitCompiler>> JitCompiler::Create() {
  ASSIGN_OR_RETURN(std::unique_ptr<KernelCompiler> kernels,
                   KernelCompiler::Create());
  return std::unique_ptr<JitCompiler>(new JitCompiler(std::move(kernels)));
}

absl::StatusOr<Plan> JitCompiler::PlanFor(const Graph& graph,
                                          const Specialization& spec) {
  ASSIGN_OR_RETURN(GraphMeta metas, InferShapes(graph, spec.inputs));
  return PlanGraph(graph, metas, ContiguousLayout(spec));
}

namespace {

// Graphs the lowering does not take yet: control flow (a cond the
// specializer could not inline runs in the interpreter) and sizes computed
// by nodes (their values feed view sizes per call).
std::optional<std::string> EagerOnlyReason(const Graph& graph) {
  for (const Node& node : graph.nodes()) {
    if (node.target == kCondTarget) {
      return absl::StrCat("node '", node.name, "' is a cond");
    }
    if (node.op != nullptr && node.op->schema.returns_int) {
      return absl::StrCat("node '", node.name, "' (", node.target,
                          ") computes a size");
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> JitCompiler::Compile(
    std::shared_ptr<const Graph> graph, const Specialization& spec) {
  if (std::optional<std::string> why = EagerOnlyReason(*graph)) {
    if (LogEnabled(LogTopic::kCodegen)) {
      Log(LogTopic::kCodegen, absl::StrCat("jit: graph '", graph->name(),
                                           "' runs the eager plan: ", *why));
    }
    return EagerCompiler().Compile(std::move(graph), spec);
  }
  if (spec.dynamic()) {
    // The lowering takes concrete sizes so far: a dynamic entry runs the
    // dynamic eager plan (its sizes evaluated per call) until kernels take
    // the symbols as arguments.
    if (LogEnabled(LogTopic::kCodegen)) {
      Log(LogTopic::kCodegen,
          absl::StrCat("jit: graph '", graph->name(), "' has ",
                       spec.symbols.size(),
                       " size symbols; running the dynamic eager plan"));
    }
    return EagerCompiler().Compile(std::move(graph), spec);
  }
  // Shapes the graph rejects are the caller's error.
  ASSIGN_OR_RETURN(GraphMeta metas, InferShapes(*graph, spec.inputs));
  Layout layout = ContiguousLayout(spec);
  absl::StatusOr<std::unique_ptr<CompiledProgram>> program = [&] {
    absl::StatusOr<Plan> plan = PlanGraph(*graph, metas, layout);
    if (!plan.ok()) {
      return absl::StatusOr<std::unique_ptr<CompiledProgram>>(plan.status());
    }
    return CompiledProgram::Create(graph, metas, *std::move(plan), *kernels_);
  }();
  if (!program.ok()) {
    // A JIT failure must not fail the call: run the eager plan instead.
    Log(LogTopic::kWarnings,
        absl::StrCat("jit: graph '", graph->name(),
                     "' runs eagerly: ", program.status().ToString()));
    return EagerCompiler().Compile(std::move(graph), spec);
  }
  return std::make_unique<JitExecutable>(std::move(graph), std::move(metas),
                                         kernels_, std::move(layout),
                                         *std::move(program));
}

absl::StatusOr<std::unique_ptr<Executable>> JitCompiler::Fallback(
    std::shared_ptr<const Graph> graph) {
  return EagerCompiler().Fallback(std::move(graph));
}

}  // namespace guardjit
