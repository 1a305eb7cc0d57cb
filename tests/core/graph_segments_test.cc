// A graph that breaks, run as segments (core/graph_segments.h): the head,
// the host's predicate read or the eager step, and the continuation of the
// branch taken, created when first reached. The backend here evaluates the
// few ops the graphs use, so every test checks the values a call returns.
// (tests/capi/graph_breaks_test.cc runs split graphs through the C API.)

#include "core/graph_segments.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/executable.h"
#include "core/function.h"
#include "core/graph_breaks.h"
#include "core/graph_builder.h"
#include "core/ops/control_flow.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_graphs.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeTensor;
using testing::ToDoubles;

// What the evaluating backend saw: compiles (graph name and the number of
// symbols of the specialization) and runs (graph name and whether the run
// was handed destinations).
struct BackendLog {
  std::mutex mu;
  std::vector<std::pair<std::string, size_t>> compiles;
  std::vector<std::pair<std::string, bool>> runs;

  std::vector<std::string> CompiledGraphs() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& c : compiles) out.push_back(c.first);
    return out;
  }
  int Runs(const std::string& graph) {
    std::lock_guard<std::mutex> lock(mu);
    int n = 0;
    for (const auto& r : runs) n += r.first == graph;
    return n;
  }
};

// Runs a graph of add/sub/mul/neg/sum/gt.Scalar/nonzero over contiguous
// tensors (the second operand of a binary op: same sizes or one element).
class Evaluator : public Executable {
 public:
  Evaluator(std::shared_ptr<const Graph> graph, BackendLog* log)
      : graph_(std::move(graph)), log_(log) {}

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    {
      std::lock_guard<std::mutex> lock(log_->mu);
      log_->runs.emplace_back(graph_->name(), !ctx.destinations.empty());
    }
    std::vector<std::vector<Tensor>> env(graph_->nodes().size());
    auto value = [&](const Arg& a) -> Tensor {
      if (a.is_value()) return env[a.as_value().node][a.as_value().index];
      return Tensor::FromScalar(a.as_scalar(), DType::kFloat32);
    };
    size_t next_input = 0;
    for (size_t i = 0; i < graph_->nodes().size(); ++i) {
      const Node& node = graph_->node(static_cast<int>(i));
      switch (node.kind) {
        case NodeKind::kPlaceholder:
          env[i] = {inputs[next_input++]};
          break;
        case NodeKind::kConstant:
          env[i] = {node.constant};
          break;
        case NodeKind::kGetItem:
          env[i] = {env[node.args[0].as_value().node]
                       [static_cast<size_t>(node.args[1].as_int())]};
          break;
        case NodeKind::kCallFunction: {
          absl::StatusOr<Tensor> out = Eval(node, value);
          if (!out.ok()) return out.status();
          env[i] = {*std::move(out)};
          break;
        }
        case NodeKind::kOutput:
          for (size_t k = 0; k < node.args.size(); ++k) {
            outputs[k] = value(node.args[k]);
            RETURN_IF_ERROR(CheckDestination(ctx, k, outputs[k].dtype(),
                                             outputs[k].sizes()));
          }
          break;
        default:
          return absl::InternalError(absl::StrCat("node kind of ", node.name));
      }
    }
    return absl::OkStatus();
  }
  size_t num_outputs() const override { return graph_->num_outputs(); }
  std::string Describe() const override { return "evaluator"; }

  static bool Supports(const std::string& target) {
    for (const char* t :
         {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
          "aten.neg.default", "aten.sum.default", "aten.gt.Scalar",
          "aten.nonzero.default"}) {
      if (target == t) return true;
    }
    return false;
  }

 private:
  template <typename ValueFn>
  static absl::StatusOr<Tensor> Eval(const Node& node, ValueFn&& value) {
    const Tensor self = value(node.args[0]);
    const std::vector<double> a = ToDoubles(self);
    std::vector<double> out;
    if (node.target == "aten.sum.default") {
      double s = 0;
      for (double v : a) s += v;
      return MakeTensor(self.dtype(), {}, {s});
    }
    if (node.target == "aten.nonzero.default") {
      for (size_t k = 0; k < a.size(); ++k) {
        if (a[k] != 0) out.push_back(static_cast<double>(k));
      }
      return MakeTensor(DType::kInt64, {static_cast<int64_t>(out.size()), 1},
                        out);
    }
    if (node.target == "aten.gt.Scalar") {
      const double other = node.args[1].as_scalar().to_double();
      for (double v : a) out.push_back(v > other ? 1 : 0);
      return MakeTensor(DType::kBool, self.sizes(), out);
    }
    if (node.target == "aten.neg.default") {
      for (double v : a) out.push_back(-v);
      return MakeTensor(self.dtype(), self.sizes(), out);
    }
    const std::vector<double> b = ToDoubles(value(node.args[1]));
    for (size_t k = 0; k < a.size(); ++k) {
      const double y = b.size() == 1 ? b[0] : b[k];
      if (node.target == "aten.mul.Tensor") {
        out.push_back(a[k] * y);
      } else {
        const double alpha = node.args[2].as_scalar().to_double();
        out.push_back(node.target == "aten.add.Tensor" ? a[k] + alpha * y
                                                       : a[k] - alpha * y);
      }
    }
    return MakeTensor(self.dtype(), self.sizes(), out);
  }

  const std::shared_ptr<const Graph> graph_;
  BackendLog* const log_;
};

class EvaluatingCompiler : public Compiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override {
    RETURN_IF_ERROR(CheckOps(*graph));
    {
      std::lock_guard<std::mutex> lock(log.mu);
      log.compiles.emplace_back(graph->name(), spec.symbols.size());
    }
    return std::make_unique<Evaluator>(std::move(graph), &log);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override {
    if (refuse_fallback) {
      return absl::UnavailableError("no reference kernels here");
    }
    RETURN_IF_ERROR(CheckOps(*graph));
    return std::make_unique<Evaluator>(std::move(graph), &log);
  }
  std::string name() const override { return "evaluating"; }

  BackendLog log;
  bool refuse_fallback = false;

 private:
  static absl::Status CheckOps(const Graph& graph) {
    for (const Node& node : graph.nodes()) {
      if (node.kind == NodeKind::kCallFunction &&
          !Evaluator::Supports(node.target)) {
        return absl::UnimplementedError(
            absl::StrCat("node '", node.name, "': ", node.target));
      }
    }
    return absl::OkStatus();
  }
};

// f(x, y) = (sum(x) > 0 ? x + y : x - y) * y: a cond over tensor values.
std::shared_ptr<const Graph> CondGraph() {
  GraphBuilder b("f");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  AddAddSubBranches(b);
  EXPECT_TRUE(b.AddNode("s", "aten.sum.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode("p", "aten.gt.Scalar", {Arg::Ref("s"), Arg::Int(0)}).ok());
  EXPECT_TRUE(b.AddNode("cond", kCondTarget,
                        {Arg::Ref("p"), Arg::Subgraph("true_graph_0"),
                         Arg::Subgraph("false_graph_0"),
                         Arg::OfList({Arg::Ref("x"), Arg::Ref("y")})})
                  .ok());
  EXPECT_TRUE(b.AddNode("r", "getitem", {Arg::Ref("cond"), Arg::Int(0)}).ok());
  EXPECT_TRUE(
      b.AddNode("out", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::shared_ptr<const Graph>(*std::move(g)) : nullptr;
}

// g(pred, x) = pred ? -x : x + x: the cond reads a graph input, so nothing
// runs before the break.
std::shared_ptr<const Graph> InputCondGraph() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("pred").ok());
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  {
    GraphBuilder br("true_graph_0");
    EXPECT_TRUE(br.AddPlaceholder("a").ok());
    EXPECT_TRUE(br.AddNode("n", "aten.neg.default", {Arg::Ref("a")}).ok());
    EXPECT_TRUE(br.SetOutputs({Arg::Ref("n")}).ok());
    EXPECT_TRUE(b.AddSubgraph("true_graph_0", *br.Finish()).ok());
  }
  {
    GraphBuilder br("false_graph_0");
    EXPECT_TRUE(br.AddPlaceholder("a").ok());
    EXPECT_TRUE(
        br.AddNode("d", "aten.add.Tensor", {Arg::Ref("a"), Arg::Ref("a")})
            .ok());
    EXPECT_TRUE(br.SetOutputs({Arg::Ref("d")}).ok());
    EXPECT_TRUE(b.AddSubgraph("false_graph_0", *br.Finish()).ok());
  }
  EXPECT_TRUE(
      b.AddNode("cond", kCondTarget,
                {Arg::Ref("pred"), Arg::Subgraph("true_graph_0"),
                 Arg::Subgraph("false_graph_0"), Arg::OfList({Arg::Ref("x")})})
          .ok());
  EXPECT_TRUE(b.AddNode("r", "getitem", {Arg::Ref("cond"), Arg::Int(0)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::shared_ptr<const Graph>(*std::move(g)) : nullptr;
}

SegmentPlan PlanOf(const std::shared_ptr<const Graph>& graph) {
  absl::StatusOr<std::optional<SegmentPlan>> plan = PlanGraphBreak(graph);
  EXPECT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan.ok() && plan->has_value());
  return plan.ok() && plan->has_value() ? **plan : SegmentPlan();
}

struct Fixture {
  explicit Fixture(std::shared_ptr<const Graph> g, FunctionOptions options = {})
      : graph(std::move(g)), compiler(std::make_shared<EvaluatingCompiler>()) {
    if (options.name.empty()) options.name = graph->name();
    absl::StatusOr<std::unique_ptr<GraphSegments>> made =
        GraphSegments::Create(graph, PlanOf(graph), compiler, options);
    EXPECT_TRUE(made.ok()) << made.status();
    if (made.ok()) segments = *std::move(made);
  }

  // Runs `inputs`; `hit` is what the segments said of the call.
  absl::StatusOr<Tensor> Call(std::vector<Tensor> inputs, bool& hit,
                              RunContext ctx = {}) {
    std::vector<InputView> views;
    for (const Tensor& t : inputs) views.push_back(InputView::Of(t));
    std::vector<Tensor> out(1);
    hit = true;
    RETURN_IF_ERROR(segments->Call(inputs, {views, AmbientState()}, ctx,
                                   absl::MakeSpan(out), hit));
    return out[0];
  }
  std::vector<std::string> GraphNames() const {
    std::vector<const Function*> graphs;
    segments->CollectGraphs(graphs);
    std::vector<std::string> out;
    for (const Function* f : graphs) out.push_back(f->name());
    return out;
  }
  std::vector<std::string> Breaks() const {
    std::vector<std::string> out;
    segments->CollectBreaks(out);
    return out;
  }

  std::shared_ptr<const Graph> graph;
  std::shared_ptr<EvaluatingCompiler> compiler;
  std::unique_ptr<GraphSegments> segments;
};

Tensor F32(std::vector<double> values) {
  return MakeTensor(DType::kFloat32, {static_cast<int64_t>(values.size())},
                    values);
}

constexpr char kCondReason[] =
    "data-dependent predicate: cond 'cond' reads the value of 'p'";

TEST(GraphSegmentsTest, PredicateOnTheHostPicksTheBranch) {
  Fixture f(CondGraph());
  ASSERT_NE(f.segments, nullptr);
  bool hit = true;
  // sum(x) = 2 > 0: (x + y) * y.
  absl::StatusOr<Tensor> out = f.Call({F32({1, 2, -1}), F32({3, 4, 5})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(12, 24, 20));
  // sum(x) = -2: (x - y) * y.
  out = f.Call({F32({1, -2, -1}), F32({3, 4, 5})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(-6, -24, -30));
  // The head once, then one continuation per branch, each compiled when
  // first reached.
  EXPECT_THAT(f.compiler->log.CompiledGraphs(),
              ElementsAre("f.head", "f.cond.true", "f.cond.false"));
}

TEST(GraphSegmentsTest, ContinuationsAreCreatedOnceAndCallsThenHit) {
  Fixture f(CondGraph());
  ASSERT_NE(f.segments, nullptr);
  bool hit = true;
  ASSERT_TRUE(f.Call({F32({1, 1}), F32({2, 2})}, hit).ok());
  EXPECT_FALSE(hit);  // head and continuation both missed
  ASSERT_TRUE(f.Call({F32({5, 1}), F32({1, 2})}, hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(f.compiler->log.CompiledGraphs().size(), 2u);
  // The other branch: the head hits, its continuation is new.
  ASSERT_TRUE(f.Call({F32({-5, 1}), F32({1, 2})}, hit).ok());
  EXPECT_FALSE(hit);
  ASSERT_TRUE(f.Call({F32({-5, 1}), F32({1, 2})}, hit).ok());
  EXPECT_TRUE(hit);
  EXPECT_EQ(f.compiler->log.CompiledGraphs().size(), 3u);
  EXPECT_EQ(f.compiler->log.Runs("f.head"), 4);
  EXPECT_EQ(f.compiler->log.Runs("f.cond.true"), 2);
  EXPECT_EQ(f.compiler->log.Runs("f.cond.false"), 2);
}

TEST(GraphSegmentsTest, CollectsGraphsAndTheBreakOnlyOnceReached) {
  Fixture f(CondGraph(), {.name = "fn"});
  ASSERT_NE(f.segments, nullptr);
  EXPECT_THAT(f.GraphNames(), ElementsAre("fn (before 'cond')"));
  EXPECT_TRUE(f.Breaks().empty());
  bool hit;
  // The false branch first: explain() still lists the true branch first.
  ASSERT_TRUE(f.Call({F32({-1}), F32({1})}, hit).ok());
  EXPECT_THAT(f.GraphNames(), ElementsAre("fn (before 'cond')",
                                          "fn (after 'cond', false branch)"));
  EXPECT_THAT(f.Breaks(), ElementsAre(kCondReason));
  ASSERT_TRUE(f.Call({F32({1}), F32({1})}, hit).ok());
  EXPECT_THAT(f.GraphNames(), ElementsAre("fn (before 'cond')",
                                          "fn (after 'cond', true branch)",
                                          "fn (after 'cond', false branch)"));
  // One break site, however many branches were reached.
  EXPECT_THAT(f.Breaks(), ElementsAre(kCondReason));
}

TEST(GraphSegmentsTest, NoHeadWhenThePredicateIsAnInput) {
  Fixture f(InputCondGraph());
  ASSERT_NE(f.segments, nullptr);
  EXPECT_TRUE(f.GraphNames().empty());
  // Nothing to compile before the break.
  ASSERT_TRUE(f.segments->Precompile({{}, AmbientState()}).ok());
  EXPECT_TRUE(f.compiler->log.CompiledGraphs().empty());
  bool hit;
  const Tensor yes = MakeTensor(DType::kBool, {}, {1});
  const Tensor no = MakeTensor(DType::kBool, {1}, {0});
  absl::StatusOr<Tensor> out = f.Call({yes, F32({1, -2})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(-1, 2));
  out = f.Call({no, F32({1, -2})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(2, -4));
  EXPECT_THAT(f.GraphNames(), ElementsAre("g (after 'cond', true branch)",
                                          "g (after 'cond', false branch)"));
}

TEST(GraphSegmentsTest, PredicateWithMoreThanOneElementIsAnError) {
  Fixture f(InputCondGraph());
  ASSERT_NE(f.segments, nullptr);
  bool hit;
  absl::StatusOr<Tensor> out =
      f.Call({MakeTensor(DType::kBool, {2}, {1, 0}), F32({1})}, hit);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(),
              HasSubstr("node 'cond' (cond): the predicate has 2 elements"));
  EXPECT_THAT(out.status().message(), HasSubstr("must have exactly one"));
  // No continuation was made for a call that could not pick a branch.
  EXPECT_TRUE(f.GraphNames().empty());
  EXPECT_TRUE(f.Breaks().empty());
}

TEST(GraphSegmentsTest, OutputSizeBreakRunsTheStepEagerly) {
  Fixture f(NonzeroBreakGraph());
  ASSERT_NE(f.segments, nullptr);
  bool hit;
  // nonzero(2x) of [0, 3, 0, 1] is [[1], [3]]; squared: [[1], [9]].
  absl::StatusOr<Tensor> out = f.Call({F32({0, 3, 0, 1})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->dtype(), DType::kInt64);
  EXPECT_THAT(out->sizes(), ElementsAre(2, 1));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(1, 9));
  // A different count of nonzeros: the continuation sees the real size.
  out = f.Call({F32({5, 0, 2, 1})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(out->sizes(), ElementsAre(3, 1));
  EXPECT_THAT(ToDoubles(*out), ElementsAre(0, 4, 9));
  // The step is never compiled: it runs on the fallback every call.
  EXPECT_EQ(f.compiler->log.Runs("h.nz"), 2);
  for (const std::string& g : f.compiler->log.CompiledGraphs()) {
    EXPECT_NE(g, "h.nz");
  }
  EXPECT_THAT(f.GraphNames(), ElementsAre("h (before 'nz')", "h (after 'nz')"));
  EXPECT_THAT(f.Breaks(),
              ElementsAre("data-dependent output size: 'nz' "
                          "(aten.nonzero.default) computes its size from "
                          "values"));
}

TEST(GraphSegmentsTest, CancelledCallStopsBeforeTheStep) {
  Fixture f(NonzeroBreakGraph());
  ASSERT_NE(f.segments, nullptr);
  const int32_t cancel = 1;
  RunContext ctx;
  ctx.cancel = &cancel;
  bool hit;
  absl::StatusOr<Tensor> out = f.Call({F32({1, 2})}, hit, ctx);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kCancelled) << out.status();
  // The head ran; the stop is checked before the eager step.
  EXPECT_EQ(f.compiler->log.Runs("h.head"), 1);
  EXPECT_EQ(f.compiler->log.Runs("h.nz"), 0);
  EXPECT_EQ(f.compiler->log.Runs("h.nz.rest"), 0);
}

TEST(GraphSegmentsTest, OnlyTheLastSegmentSeesTheDestinations) {
  Fixture f(CondGraph());
  ASSERT_NE(f.segments, nullptr);
  // The head's output (the predicate, bool[]) does not match the caller's
  // destination for the function's output: handing it to the head would
  // fail the head's destination check.
  Tensor dest = *Tensor::Zeros(DType::kFloat32, {2});
  const Tensor* dests[] = {&dest};
  RunContext ctx;
  ctx.destinations = dests;
  bool hit;
  absl::StatusOr<Tensor> out = f.Call({F32({1, 1}), F32({2, 3})}, hit, ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(6, 12));
  std::lock_guard<std::mutex> lock(f.compiler->log.mu);
  EXPECT_THAT(f.compiler->log.runs,
              ElementsAre(std::pair<std::string, bool>("f.head", false),
                          std::pair<std::string, bool>("f.cond.true", true)));
}

TEST(GraphSegmentsTest, WrongDestinationFailsInTheLastSegment) {
  Fixture f(CondGraph());
  ASSERT_NE(f.segments, nullptr);
  Tensor dest = *Tensor::Zeros(DType::kFloat32, {3});
  const Tensor* dests[] = {&dest};
  RunContext ctx;
  ctx.destinations = dests;
  bool hit;
  testing::ExpectError(f.Call({F32({1, 1}), F32({2, 3})}, hit, ctx),
                       absl::StatusCode::kInvalidArgument,
                       "output 0: expected float32[2], got float32[3]");
}

TEST(GraphSegmentsTest, PrecompileCompilesOnlyTheHead) {
  Fixture f(CondGraph());
  ASSERT_NE(f.segments, nullptr);
  const Tensor x = F32({1, 2, 3}), y = F32({1, 2, 3});
  const InputView views[] = {InputView::Of(x), InputView::Of(y)};
  ASSERT_TRUE(f.segments->Precompile({views, AmbientState()}).ok());
  EXPECT_THAT(f.compiler->log.CompiledGraphs(), ElementsAre("f.head"));
  EXPECT_EQ(f.compiler->log.Runs("f.head"), 0);
  // The call that follows hits the precompiled head.
  bool hit;
  ASSERT_TRUE(f.Call({x, y}, hit).ok());
  EXPECT_THAT(f.compiler->log.CompiledGraphs(),
              ElementsAre("f.head", "f.cond.true"));
}

// The number of symbols of each compile, in compile order.
std::vector<size_t> SymbolCounts(BackendLog& log) {
  std::lock_guard<std::mutex> lock(log.mu);
  std::vector<size_t> out;
  for (const auto& c : log.compiles) out.push_back(c.second);
  return out;
}

TEST(GraphSegmentsTest, MarkDynamicFollowsTheInputIntoTheHead) {
  // The head of f reads only x (graph input 0).
  FunctionOptions dynamic_x;
  dynamic_x.mark_dynamic = {{.input = 0, .dim = 0}};
  Fixture fx(CondGraph(), dynamic_x);
  ASSERT_NE(fx.segments, nullptr);
  bool hit;
  ASSERT_TRUE(fx.Call({F32({1, 2, 3}), F32({1, 2, 3})}, hit).ok());
  ASSERT_EQ(SymbolCounts(fx.compiler->log).size(), 2u);
  EXPECT_EQ(SymbolCounts(fx.compiler->log)[0], 1u);
  // y is no input of the head: marking it leaves the head static.
  FunctionOptions dynamic_y;
  dynamic_y.mark_dynamic = {{.input = 1, .dim = 0}};
  Fixture fy(CondGraph(), dynamic_y);
  ASSERT_NE(fy.segments, nullptr);
  ASSERT_TRUE(fy.Call({F32({1, 2, 3}), F32({1, 2, 3})}, hit).ok());
  ASSERT_EQ(SymbolCounts(fy.compiler->log).size(), 2u);
  EXPECT_EQ(SymbolCounts(fy.compiler->log)[0], 0u);
}

TEST(GraphSegmentsTest, MarkDynamicFollowsTheInputIntoTheContinuation) {
  // g's continuation takes x, graph input 1, as its input 0.
  FunctionOptions dynamic_x;
  dynamic_x.mark_dynamic = {{.input = 1, .dim = 0, .min = 2, .max = 16}};
  Fixture f(InputCondGraph(), dynamic_x);
  ASSERT_NE(f.segments, nullptr);
  const Tensor yes = MakeTensor(DType::kBool, {}, {1});
  bool hit;
  ASSERT_TRUE(f.Call({yes, F32({1, 2, 3})}, hit).ok());
  EXPECT_THAT(SymbolCounts(f.compiler->log), ElementsAre(1u));
  // Another size in the range hits the dynamic entry; one past it misses.
  absl::StatusOr<Tensor> out = f.Call({yes, F32({1, 2, 3, 4, 5})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(hit);
  EXPECT_THAT(ToDoubles(*out), ElementsAre(-1, -2, -3, -4, -5));
  ASSERT_TRUE(f.Call({yes, F32(std::vector<double>(17, 1.0))}, hit).ok());
  EXPECT_FALSE(hit);
  std::vector<const Function*> graphs;
  f.segments->CollectGraphs(graphs);
  ASSERT_EQ(graphs.size(), 1u);
  EXPECT_THAT(graphs[0]->DumpGuards(), HasSubstr("x.size()[0] <= 16"));
  // Marking pred, which no segment takes, makes nothing dynamic.
  FunctionOptions dynamic_pred;
  dynamic_pred.mark_dynamic = {{.input = 0, .dim = 0}};
  Fixture p(InputCondGraph(), dynamic_pred);
  ASSERT_NE(p.segments, nullptr);
  ASSERT_TRUE(p.Call({yes, F32({1, 2, 3})}, hit).ok());
  EXPECT_THAT(SymbolCounts(p.compiler->log), ElementsAre(0u));
}

TEST(GraphSegmentsTest, EverySegmentHasItsOwnRecompileLimit) {
  FunctionOptions options;
  options.dynamic = DynamicMode::kStatic;
  options.recompile_limit = 1;
  Fixture f(CondGraph(), options);
  ASSERT_NE(f.segments, nullptr);
  bool hit;
  // Two sizes: each segment compiles once, then runs eagerly.
  ASSERT_TRUE(f.Call({F32({1, 1}), F32({1, 1})}, hit).ok());
  absl::StatusOr<Tensor> out = f.Call({F32({1, 1, 1}), F32({1, 2, 3})}, hit);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(ToDoubles(*out), ElementsAre(2, 6, 12));
  EXPECT_EQ(f.compiler->log.CompiledGraphs().size(), 2u);
  std::vector<const Function*> graphs;
  f.segments->CollectGraphs(graphs);
  ASSERT_EQ(graphs.size(), 2u);
  for (const Function* g : graphs) {
    SCOPED_TRACE(g->name());
    EXPECT_EQ(g->stats().compiles, 1);
    EXPECT_EQ(g->stats().fallback_calls, 1);
  }
}

TEST(GraphSegmentsTest, CreateFailsWhenTheStepHasNoFallback) {
  const std::shared_ptr<const Graph> graph = NonzeroBreakGraph();
  auto compiler = std::make_shared<EvaluatingCompiler>();
  compiler->refuse_fallback = true;
  FunctionOptions options;
  options.name = "h";
  testing::ExpectError(
      GraphSegments::Create(graph, PlanOf(graph), compiler, options),
      absl::StatusCode::kUnavailable, "no reference kernels here");
}

}  // namespace
}  // namespace guardjit
