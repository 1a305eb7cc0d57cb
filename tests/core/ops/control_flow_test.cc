// The control-flow nodes (core/ops/control_flow.h, control_flow.cc):
// higher_order.cond's schema and argument positions, its shape inference
// (the taken branch's outputs; a predicate over sizes decided and guarded;
// one over tensor values a graph break) and the value-specialized node that
// only a function can run. Inlining conds is tested in specializer_test.cc,
// running them eagerly and at graph breaks in graph_segments_test.cc.

#include "core/ops/control_flow.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph_builder.h"
#include "core/op_registry.h"
#include "core/shape_env.h"
#include "core/shape_inference.h"
#include "core/status_macros.h"
#include "core/value_inputs.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// A branch `name`(a, b) whose one node `r` is `target` on `args`.
absl::Status AddBranch(GraphBuilder& b, const std::string& name,
                       const std::string& target, std::vector<Arg> args) {
  GraphBuilder branch(name);
  RETURN_IF_ERROR(branch.AddPlaceholder("a").status());
  RETURN_IF_ERROR(branch.AddPlaceholder("b").status());
  RETURN_IF_ERROR(branch.AddNode("r", target, std::move(args)).status());
  RETURN_IF_ERROR(branch.SetOutputs({Arg::Ref("r")}));
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, branch.Finish());
  return b.AddSubgraph(name, std::move(graph));
}

// A node computing the predicate.
struct PredNode {
  std::string name, target;
  std::vector<Arg> args;
};

// g(x, y) = cond(pred, a + b, false_target(false_args), [x, y]), by default
// unsqueeze(a, 0) in the false branch, after the `pred_nodes` that compute
// `pred`.
absl::StatusOr<std::unique_ptr<Graph>> CondGraph(
    Arg pred, std::vector<PredNode> pred_nodes = {},
    const std::string& false_target = "aten.unsqueeze.default",
    std::vector<Arg> false_args = {Arg::Ref("a"), Arg::Int(0)}) {
  GraphBuilder b("g");
  RETURN_IF_ERROR(b.AddPlaceholder("x").status());
  RETURN_IF_ERROR(b.AddPlaceholder("y").status());
  RETURN_IF_ERROR(AddBranch(b, "true_graph_0", "aten.add.Tensor",
                            {Arg::Ref("a"), Arg::Ref("b")}));
  RETURN_IF_ERROR(
      AddBranch(b, "false_graph_0", false_target, std::move(false_args)));
  for (PredNode& n : pred_nodes) {
    RETURN_IF_ERROR(b.AddNode(n.name, n.target, std::move(n.args)).status());
  }
  RETURN_IF_ERROR(b.AddNode("cond", kCondTarget,
                            {std::move(pred), Arg::Subgraph("true_graph_0"),
                             Arg::Subgraph("false_graph_0"),
                             Arg::OfList({Arg::Ref("x"), Arg::Ref("y")})})
                      .status());
  RETURN_IF_ERROR(
      b.AddNode("r", "getitem", {Arg::Ref("cond"), Arg::Int(0)}).status());
  RETURN_IF_ERROR(b.SetOutputs({Arg::Ref("r")}));
  return b.Finish();
}

// The cond node's outputs for inputs `x` and `y`.
absl::StatusOr<std::vector<TensorMeta>> CondMetas(const Graph& graph,
                                                  const TensorMeta& x,
                                                  const TensorMeta& y,
                                                  int* failed_node = nullptr) {
  ASSIGN_OR_RETURN(GraphMeta metas, InferShapes(graph, {x, y}, failed_node));
  return metas[graph.FindNode("cond")];
}

std::vector<std::string> GuardStrings(const ShapeEnv& env) {
  std::vector<std::string> out;
  for (const ShapeGuard& g : env.guards()) out.push_back(env.ToString(g));
  return out;
}

TEST(ControlFlowTest, CondIsRegisteredWithItsArgumentPositions) {
  const OpDef* def = OpRegistry::Global().Find(kCondTarget);
  ASSERT_NE(def, nullptr);
  const OpSchema& schema = def->schema;
  ASSERT_EQ(schema.args.size(), 4u);
  EXPECT_EQ(schema.args[kCondPred].name, "pred");
  EXPECT_EQ(schema.args[kCondPred].type, ArgType::kAny);
  EXPECT_EQ(schema.args[kCondTrue].name, "true_fn");
  EXPECT_EQ(schema.args[kCondTrue].type, ArgType::kGraph);
  EXPECT_EQ(schema.args[kCondFalse].name, "false_fn");
  EXPECT_EQ(schema.args[kCondFalse].type, ArgType::kGraph);
  EXPECT_EQ(schema.args[kCondOperands].name, "operands");
  EXPECT_EQ(schema.args[kCondOperands].type, ArgType::kTensorList);
  EXPECT_TRUE(schema.returns_list);
  EXPECT_FALSE(def->data_dependent_output);
}

TEST(ControlFlowTest, NodeRulesOfCondAndValueSpecializedAreNeverAnswers) {
  Node node;
  node.name = "n";
  MetaArgs args(
      node, [](ValueRef) { return TensorMeta(); },
      [](const Scalar&) { return TensorMeta(); });
  const OpDef* cond = OpRegistry::Global().Find(kCondTarget);
  ASSERT_NE(cond, nullptr);
  ExpectError(cond->meta(args), absl::StatusCode::kInternal,
              "cond is inferred by graph shape inference, not by a node rule");

  const OpDef* value = OpRegistry::Global().Find(kValueSpecializedTarget);
  ASSERT_NE(value, nullptr);
  ASSERT_EQ(value->schema.args.size(), 1u);
  EXPECT_EQ(value->schema.args[0].type, ArgType::kTensorList);
  EXPECT_TRUE(value->schema.returns_list);
  ExpectError(value->meta(args), absl::StatusCode::kFailedPrecondition,
              "the graph runs only specialized to the values of its "
              "value-specialized inputs, which rebuild it: call it through a "
              "function");
}

TEST(ControlFlowTest, ShapeInferenceOfAValueSpecializedNodeNamesIt) {
  GraphBuilder b("imported");
  ASSERT_TRUE(b.AddPlaceholder("shape").ok());
  ASSERT_TRUE(b.AddNode("vs", kValueSpecializedTarget,
                        {Arg::OfList({Arg::Ref("shape")})})
                  .ok());
  ASSERT_TRUE(b.AddNode("out", "getitem", {Arg::Ref("vs"), Arg::Int(0)}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  int failed_node = -1;
  ExpectError(
      InferShapes(**graph, {TensorMeta(DType::kInt64, Shape{2})}, &failed_node),
      absl::StatusCode::kFailedPrecondition,
      "node 'vs' (higher_order.value_specialized): the graph runs "
      "only specialized");
  EXPECT_EQ(failed_node, (*graph)->FindNode("vs"));
}

TEST(ControlFlowTest, ALiteralPredicateInfersOnlyTheTakenBranch) {
  const TensorMeta x(DType::kFloat32, Shape{2, 3});
  const TensorMeta y(DType::kFloat32, Shape{1, 3});
  struct Case {
    Arg pred;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{{Arg::Bool(true), {2, 3}},
                                         {Arg::Bool(false), {1, 2, 3}},
                                         {Arg::Int(7), {2, 3}},
                                         {Arg::Int(0), {1, 2, 3}}}) {
    SCOPED_TRACE(c.pred.kind_name());
    auto graph = CondGraph(c.pred);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto out = CondMetas(**graph, x, y);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ((*out)[0].shape(), c.out);
    EXPECT_EQ((*out)[0].dtype, DType::kFloat32);
  }
}

TEST(ControlFlowTest, AnErrorInTheTakenBranchNamesTheCondAndTheBranch) {
  // mm of two [2, 3] matrices fails; a + b does not.
  const TensorMeta x(DType::kFloat32, Shape{2, 3});
  auto taken = CondGraph(Arg::Bool(false), {}, "aten.mm.default",
                         {Arg::Ref("a"), Arg::Ref("b")});
  ASSERT_TRUE(taken.ok()) << taken.status();
  int failed_node = -1;
  auto out = CondMetas(**taken, x, x, &failed_node);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message().rfind(
                "node 'cond' (cond), branch 'false_graph_0': node 'r' "
                "(aten.mm.default): ",
                0),
            0u)
      << out.status();
  EXPECT_EQ(failed_node, (*taken)->FindNode("cond"));

  auto untaken = CondGraph(Arg::Bool(true), {}, "aten.mm.default",
                           {Arg::Ref("a"), Arg::Ref("b")});
  ASSERT_TRUE(untaken.ok()) << untaken.status();
  auto ok = CondMetas(**untaken, x, x);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].shape(), (Shape{2, 3}));
}

// cond(x.size(0) > 4, ...) for an x of `rows` rows, as a symbol.
absl::StatusOr<std::vector<TensorMeta>> SizePredicate(ShapeEnv& env,
                                                      int64_t rows) {
  const SymInt n(SymExpr::Symbol(env.NewSymbol(rows, "x.size()[0]", 0, 0)),
                 rows);
  ASSIGN_OR_RETURN(
      std::unique_ptr<Graph> graph,
      CondGraph(Arg::Ref("gt"),
                {{"n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}},
                 {"gt", "operator.gt", {Arg::Ref("n"), Arg::Int(4)}}}));
  return CondMetas(*graph, TensorMeta(DType::kFloat32, SymShape{n, 3}),
                   TensorMeta(DType::kFloat32, Shape{1, 3}));
}

TEST(ControlFlowTest, APredicateOverSizesIsDecidedOnTheHintAndGuarded) {
  ShapeEnv big;
  {
    ShapeEnv::Scope scope(&big);
    auto out = SizePredicate(big, 6);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ(SymShapeToString((*out)[0].sizes), "[s0, 3]");  // x + y
  }
  EXPECT_EQ(GuardStrings(big), (std::vector<std::string>{"4 < x.size()[0]"}));

  ShapeEnv small;
  {
    ShapeEnv::Scope scope(&small);
    auto out = SizePredicate(small, 3);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(SymShapeToString((*out)[0].sizes), "[1, s0, 3]");  // unsqueeze
  }
  EXPECT_EQ(GuardStrings(small),
            (std::vector<std::string>{"x.size()[0] <= 4"}));
}

TEST(ControlFlowTest, APredicateFromTensorValuesIsAGraphBreak) {
  auto graph = CondGraph(Arg::Ref("y"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  int failed_node = -1;
  ExpectError(CondMetas(**graph, TensorMeta(DType::kFloat32, Shape{2, 3}),
                        TensorMeta(DType::kBool, Shape{}), &failed_node),
              absl::StatusCode::kUnimplemented,
              "node 'cond' (cond): the predicate is computed from tensor "
              "values (data-dependent control flow, a graph break); only "
              "predicates over sizes can be specialized");
  EXPECT_EQ(failed_node, (*graph)->FindNode("cond"));
}

TEST(ControlFlowTest, APredicateOfAnotherKindIsRefused) {
  auto graph = CondGraph(Arg::Float(1.0));
  ASSERT_TRUE(graph.ok()) << graph.status();
  ExpectError(CondMetas(**graph, TensorMeta(DType::kFloat32, Shape{2, 3}),
                        TensorMeta(DType::kFloat32, Shape{2, 3})),
              absl::StatusCode::kInvalidArgument,
              "node 'cond' (cond): the predicate must be a bool or a size "
              "comparison, got float");
}

}  // namespace
}  // namespace guardjit::testing
