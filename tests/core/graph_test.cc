// The validated graph (core/graph.h) as GraphBuilder leaves it: FX opcode
// names, nodes in topological order with the output node last, inputs and
// their specs, node lookup by name, the op count, subgraphs by name, call
// nodes bound to their op's schema and getitem nodes of multi-output ops.

#include "core/graph.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;

std::unique_ptr<Graph> FinishOrDie(GraphBuilder& b) {
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *std::move(g) : nullptr;
}

// f(x, y) = (max(x + y * w, dim 1).values, relu(x)): two inputs, a weight,
// a two-output op read through getitem, two outputs.
std::unique_ptr<Graph> MixedGraph() {
  GraphBuilder b("mixed");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(b.AddConstant("w", *Tensor::Zeros(DType::kFloat32, {2, 3})).ok());
  EXPECT_TRUE(
      b.AddNode("mul", "aten.mul.Tensor", {Arg::Ref("y"), Arg::Ref("w")}).ok());
  EXPECT_TRUE(
      b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("mul")})
          .ok());
  EXPECT_TRUE(
      b.AddNode("mx", "aten.max.dim", {Arg::Ref("add"), Arg::Int(1)}).ok());
  EXPECT_TRUE(b.AddNode("vals", "getitem", {Arg::Ref("mx"), Arg::Int(0)}).ok());
  EXPECT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("vals"), Arg::Ref("r")}).ok());
  return FinishOrDie(b);
}

TEST(NodeKindNameTest, UsesTheFxSpelling) {
  EXPECT_STREQ(NodeKindName(NodeKind::kPlaceholder), "placeholder");
  EXPECT_STREQ(NodeKindName(NodeKind::kConstant), "get_attr");
  EXPECT_STREQ(NodeKindName(NodeKind::kCallFunction), "call_function");
  // FX writes getitem as a call of operator.getitem.
  EXPECT_STREQ(NodeKindName(NodeKind::kGetItem), "call_function");
  EXPECT_STREQ(NodeKindName(NodeKind::kOutput), "output");
}

TEST(GraphTest, NodesAreInOrderWithTheOutputLast) {
  const std::unique_ptr<Graph> g = MixedGraph();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name(), "mixed");
  std::vector<std::string> names;
  std::vector<NodeKind> kinds;
  for (const Node& n : g->nodes()) {
    names.push_back(n.name);
    kinds.push_back(n.kind);
  }
  EXPECT_THAT(names, ElementsAre("x", "y", "w", "mul", "add", "mx", "vals", "r",
                                 "output"));
  EXPECT_THAT(kinds, ElementsAre(NodeKind::kPlaceholder, NodeKind::kPlaceholder,
                                 NodeKind::kConstant, NodeKind::kCallFunction,
                                 NodeKind::kCallFunction,
                                 NodeKind::kCallFunction, NodeKind::kGetItem,
                                 NodeKind::kCallFunction, NodeKind::kOutput));
  EXPECT_EQ(&g->output_node(), &g->nodes().back());
  EXPECT_EQ(g->output_node().target, "output");
  EXPECT_EQ(&g->node(3), &g->nodes()[3]);
  EXPECT_EQ(g->node(3).name, "mul");
  // Inputs are the placeholders' node indices, in input order.
  EXPECT_THAT(g->inputs(), ElementsAre(0, 1));
  // Every value reference points at an earlier node.
  for (size_t i = 0; i < g->nodes().size(); ++i) {
    for (const Arg& a : g->nodes()[i].args) {
      if (a.is_value()) {
        EXPECT_LT(a.as_value().node, static_cast<int>(i));
      }
    }
  }
}

TEST(GraphTest, OutputsAreTheOutputNodesValues) {
  const std::unique_ptr<Graph> g = MixedGraph();
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->num_outputs(), 2);
  const Node& out = g->output_node();
  ASSERT_EQ(out.args.size(), 2u);
  EXPECT_EQ(out.args[0].as_value().node, g->FindNode("vals"));
  EXPECT_EQ(out.args[1].as_value().node, g->FindNode("r"));
}

TEST(GraphTest, FindNodeMapsNamesToIndices) {
  const std::unique_ptr<Graph> g = MixedGraph();
  ASSERT_NE(g, nullptr);
  for (int i = 0; i + 1 < static_cast<int>(g->nodes().size()); ++i) {
    EXPECT_EQ(g->FindNode(g->node(i).name), i) << g->node(i).name;
  }
  EXPECT_EQ(g->FindNode("nope"), -1);
  EXPECT_EQ(g->FindNode(""), -1);
  EXPECT_EQ(g->FindNode("X"), -1);  // names are case-sensitive
}

TEST(GraphTest, NumOpsCountsOnlyAtenCalls) {
  const std::unique_ptr<Graph> g = MixedGraph();
  ASSERT_NE(g, nullptr);
  // mul, add, max.dim, relu: not the placeholders, the weight, the getitem
  // or the output node.
  EXPECT_EQ(g->num_ops(), 4);

  GraphBuilder b("identity");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  const std::unique_ptr<Graph> identity = FinishOrDie(b);
  ASSERT_NE(identity, nullptr);
  EXPECT_EQ(identity->num_ops(), 0);
  EXPECT_EQ(identity->num_outputs(), 1);
}

TEST(GraphTest, CallNodesAreBoundToTheirSchema) {
  const std::unique_ptr<Graph> g = MixedGraph();
  ASSERT_NE(g, nullptr);
  const Node& add = g->node(g->FindNode("add"));
  EXPECT_EQ(add.target, "aten.add.Tensor");
  ASSERT_NE(add.op, nullptr);
  EXPECT_EQ(add.op, OpRegistry::Global().Find("aten.add.Tensor"));
  EXPECT_EQ(add.num_outputs, 1);
  // Bound: self, other and the defaulted alpha; written: what the graph
  // said.
  ASSERT_EQ(add.args.size(), 3u);
  EXPECT_EQ(add.args[2], Arg::Int(1));
  EXPECT_EQ(add.written_args.size(), 2u);
  EXPECT_TRUE(add.written_kwargs.empty());

  const Node& mx = g->node(g->FindNode("mx"));
  EXPECT_EQ(mx.num_outputs, 2);
  const Node& vals = g->node(g->FindNode("vals"));
  EXPECT_EQ(vals.target, "getitem");
  EXPECT_EQ(vals.op, nullptr);
  ASSERT_EQ(vals.args.size(), 2u);
  EXPECT_EQ(vals.args[0].as_value().node, g->FindNode("mx"));
  EXPECT_EQ(vals.args[1], Arg::Int(0));
}

TEST(GraphTest, ConstantsOwnTheirWeight) {
  const Tensor w = *Tensor::Zeros(DType::kFloat64, {4});
  GraphBuilder b("c");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddConstant("w", w).ok());
  ASSERT_TRUE(
      b.AddNode("s", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("w")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s")}).ok());
  const std::unique_ptr<Graph> g = FinishOrDie(b);
  ASSERT_NE(g, nullptr);
  const Node& c = g->node(g->FindNode("w"));
  EXPECT_EQ(c.kind, NodeKind::kConstant);
  EXPECT_EQ(c.constant.data(), w.data());
  EXPECT_EQ(c.constant.dtype(), DType::kFloat64);
  EXPECT_THAT(g->inputs(), ElementsAre(0));  // a constant is no input
}

TEST(GraphTest, SubgraphsAreFoundByName) {
  GraphBuilder b("outer");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  for (const char* name : {"zeta", "alpha"}) {
    GraphBuilder inner(name);
    ASSERT_TRUE(inner.AddPlaceholder("a").ok());
    ASSERT_TRUE(inner.SetOutputs({Arg::Ref("a")}).ok());
    ASSERT_TRUE(b.AddSubgraph(name, FinishOrDie(inner)).ok());
  }
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("x")}).ok());
  const std::unique_ptr<Graph> g = FinishOrDie(b);
  ASSERT_NE(g, nullptr);
  ASSERT_NE(g->subgraph("zeta"), nullptr);
  EXPECT_EQ(g->subgraph("zeta")->name(), "zeta");
  EXPECT_EQ(g->subgraph("alpha")->name(), "alpha");
  EXPECT_EQ(g->subgraph("beta"), nullptr);
  std::vector<std::string> keys;
  for (const auto& [name, sub] : g->subgraphs()) keys.push_back(name);
  EXPECT_THAT(keys, ElementsAre("alpha", "zeta"));  // sorted by name
  EXPECT_EQ(g->subgraphs().at("alpha").get(), g->subgraph("alpha"));
}

TEST(GraphTest, SpecsAndValueInputsArePerInput) {
  GraphBuilder b("specs");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("n", TensorMeta(DType::kInt64, Shape{2})).ok());
  ASSERT_TRUE(b.AddPlaceholder("z").ok());
  ASSERT_TRUE(b.MarkValueSpecialized("n").ok());
  IoSpec spec;
  spec.dtype = DType::kFloat32;
  spec.dims = std::vector<IoDim>{IoDim::Dynamic("batch"), IoDim::Static(3)};
  ASSERT_TRUE(b.SetInputSpec("z", spec).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r"), Arg::Ref("z")}).ok());
  IoSpec out;
  out.dtype = DType::kFloat32;
  ASSERT_TRUE(b.SetOutputSpec(1, out).ok());
  const std::unique_ptr<Graph> g = FinishOrDie(b);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->input_spec(0), IoSpec());
  EXPECT_EQ(g->input_spec(1), IoSpec());
  EXPECT_EQ(g->input_spec(2), spec);
  EXPECT_EQ(g->input_spec(2).rank(), 2);
  EXPECT_EQ(g->output_spec(0), IoSpec());
  EXPECT_EQ(g->output_spec(1), out);
  // Positions in inputs(), not node indices.
  EXPECT_THAT(g->value_inputs(), ElementsAre(1));
  EXPECT_TRUE(g->node(g->inputs()[1]).specialize_value);
  EXPECT_FALSE(g->node(g->inputs()[0]).specialize_value);
  EXPECT_EQ(g->rebuilder(), nullptr);
}

}  // namespace
}  // namespace guardjit
