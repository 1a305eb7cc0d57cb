// Finding a graph's first break and splitting it there (core/graph_breaks.h),
// on output-size breaks (aten.nonzero): what the head returns, what the step
// and the continuation read, and the continuation's graph.
// (tests/capi/graph_breaks_test.cc runs split graphs end to end.)

#include "core/graph_breaks.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using Kind = SegmentSource::Kind;

struct Node3 {
  std::string name, target;
  std::vector<std::string> args;
};

// A graph of placeholders `inputs`, then `nodes` (every argument a value
// named by `args`), returning `outputs`.
std::shared_ptr<const Graph> MakeGraph(
    const std::vector<std::string>& inputs, const std::vector<Node3>& nodes,
    const std::vector<std::string>& outputs) {
  GraphBuilder b("g");
  for (const std::string& in : inputs) EXPECT_TRUE(b.AddPlaceholder(in).ok());
  for (const Node3& n : nodes) {
    std::vector<Arg> args;
    for (const std::string& a : n.args) args.push_back(Arg::Ref(a));
    absl::StatusOr<ValueRef> ref = b.AddNode(n.name, n.target, std::move(args));
    EXPECT_TRUE(ref.ok()) << ref.status();
  }
  std::vector<Arg> outs;
  for (const std::string& o : outputs) outs.push_back(Arg::Ref(o));
  EXPECT_TRUE(b.SetOutputs(std::move(outs)).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? std::shared_ptr<const Graph>(std::move(*g)) : nullptr;
}

constexpr char kAdd[] = "aten.add.Tensor";
constexpr char kMul[] = "aten.mul.Tensor";
constexpr char kNonzero[] = "aten.nonzero.default";

// x, y -> a = x + y; nz = nonzero(a); c = nz * nz; returns (c, a, y).
std::shared_ptr<const Graph> AddNonzeroMul() {
  return MakeGraph({"x", "y"},
                   {{"a", kAdd, {"x", "y"}},
                    {"nz", kNonzero, {"a"}},
                    {"c", kMul, {"nz", "nz"}}},
                   {"c", "a", "y"});
}

std::vector<std::string> CallTargets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) {
    if (n.kind == NodeKind::kCallFunction) out.push_back(n.target);
  }
  return out;
}

bool Same(const SegmentSource& s, Kind kind, int index) {
  return s.kind == kind && s.index == index;
}

TEST(FindGraphBreakTest, NoBreakInAStaticGraph) {
  const auto g = MakeGraph({"x"}, {{"a", kAdd, {"x", "x"}}}, {"a"});
  EXPECT_FALSE(FindGraphBreak(*g).has_value());
  absl::StatusOr<std::optional<SegmentPlan>> plan = PlanGraphBreak(g);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->has_value());
}

TEST(FindGraphBreakTest, DataDependentOutputSizeNamesTheNode) {
  const auto g = AddNonzeroMul();
  const std::optional<GraphBreak> at = FindGraphBreak(*g);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->kind, GraphBreak::Kind::kOutputSize);
  EXPECT_EQ(at->node, g->FindNode("nz"));
  EXPECT_EQ(at->reason,
            "data-dependent output size: 'nz' (aten.nonzero.default) "
            "computes its size from values");
}

TEST(FindGraphBreakTest, TheFirstBreakInNodeOrder) {
  const auto g = MakeGraph(
      {"x"}, {{"n1", kNonzero, {"x"}}, {"n2", kNonzero, {"n1"}}}, {"n2"});
  const std::optional<GraphBreak> at = FindGraphBreak(*g);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->node, g->FindNode("n1"));
}

TEST(PlanGraphBreakTest, HeadStepAndContinuationSources) {
  const auto g = AddNonzeroMul();
  absl::StatusOr<std::optional<SegmentPlan>> planned = PlanGraphBreak(g);
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_TRUE(planned->has_value());
  const SegmentPlan& plan = **planned;
  EXPECT_EQ(plan.at.node, g->FindNode("nz"));
  // The head computes a from both inputs and returns it once, though the
  // step and the continuation both read it.
  ASSERT_NE(plan.head, nullptr);
  EXPECT_EQ(plan.head_inputs, std::vector<int>({0, 1}));
  EXPECT_EQ(CallTargets(*plan.head), std::vector<std::string>({kAdd}));
  ASSERT_NE(plan.step, nullptr);
  EXPECT_EQ(CallTargets(*plan.step), std::vector<std::string>({kNonzero}));
  ASSERT_EQ(plan.step_inputs.size(), 1u);
  EXPECT_TRUE(Same(plan.step_inputs[0], Kind::kHead, 0));
  // The continuation reads a (from the head) and y (straight from the
  // inputs), then the step's output.
  ASSERT_EQ(plan.continuation_inputs.size(), 3u);
  EXPECT_TRUE(Same(plan.continuation_inputs[0], Kind::kHead, 0));
  EXPECT_TRUE(Same(plan.continuation_inputs[1], Kind::kInput, 1));
  EXPECT_TRUE(Same(plan.continuation_inputs[2], Kind::kStep, 0));
}

TEST(PlanGraphBreakTest, NoHeadWhenTheBreakReadsOnlyInputs) {
  const auto g = MakeGraph(
      {"x"}, {{"nz", kNonzero, {"x"}}, {"c", kMul, {"nz", "nz"}}}, {"c"});
  absl::StatusOr<std::optional<SegmentPlan>> planned = PlanGraphBreak(g);
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_TRUE(planned->has_value());
  const SegmentPlan& plan = **planned;
  EXPECT_EQ(plan.head, nullptr);
  EXPECT_TRUE(plan.head_inputs.empty());
  ASSERT_EQ(plan.step_inputs.size(), 1u);
  EXPECT_TRUE(Same(plan.step_inputs[0], Kind::kInput, 0));
  ASSERT_EQ(plan.continuation_inputs.size(), 1u);
  EXPECT_TRUE(Same(plan.continuation_inputs[0], Kind::kStep, 0));
}

TEST(ContinuationGraphTest, PlaceholdersInPlanOrderAndTheRestOfTheGraph) {
  const auto g = AddNonzeroMul();
  absl::StatusOr<std::optional<SegmentPlan>> planned = PlanGraphBreak(g);
  ASSERT_TRUE(planned.ok() && planned->has_value());
  absl::StatusOr<std::shared_ptr<const Graph>> rest =
      ContinuationGraph(*g, **planned, /*taken=*/true);
  ASSERT_TRUE(rest.ok()) << rest.status();
  const Graph& c = **rest;
  EXPECT_EQ(c.name(), "g.nz.rest");
  ASSERT_EQ(c.inputs().size(), 3u);
  EXPECT_EQ(c.node(c.inputs()[0]).name, "a");
  EXPECT_EQ(c.node(c.inputs()[1]).name, "y");
  EXPECT_EQ(c.node(c.inputs()[2]).name, "nz");
  // Nothing before the break is recomputed: only the multiply is left.
  EXPECT_EQ(CallTargets(c), std::vector<std::string>({kMul}));
  // The outputs are the graph's: c, then a and y as they crossed.
  const Node& out = c.output_node();
  ASSERT_EQ(out.args.size(), 3u);
  EXPECT_EQ(c.node(out.args[1].as_value().node).name, "a");
  EXPECT_EQ(c.node(out.args[2].as_value().node).name, "y");
}

}  // namespace
}  // namespace guardjit
