#include "core/specializer.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/ops/control_flow.h"
#include "core/shape_env.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

// x + y if x.shape[0] > 2 else x - y, then view(r, [x.shape[0] * 2, -1]).
std::shared_ptr<const Graph> BranchAndView() {
  GraphBuilder b("branch_view");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  for (auto [name, target] : {std::pair{"true_graph_0", "aten.add.Tensor"},
                              std::pair{"false_graph_0", "aten.sub.Tensor"}}) {
    GraphBuilder br(name);
    EXPECT_TRUE(br.AddPlaceholder("a").ok());
    EXPECT_TRUE(br.AddPlaceholder("b").ok());
    EXPECT_TRUE(br.AddNode("r", target, {Arg::Ref("a"), Arg::Ref("b")}).ok());
    EXPECT_TRUE(br.SetOutputs({Arg::Ref("r")}).ok());
    EXPECT_TRUE(b.AddSubgraph(name, *br.Finish()).ok());
  }
  EXPECT_TRUE(
      b.AddNode("n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}).ok());
  EXPECT_TRUE(
      b.AddNode("gt", "operator.gt", {Arg::Ref("n"), Arg::Int(2)}).ok());
  EXPECT_TRUE(b.AddNode("cond", kCondTarget,
                        {Arg::Ref("gt"), Arg::Subgraph("true_graph_0"),
                         Arg::Subgraph("false_graph_0"),
                         Arg::OfList({Arg::Ref("x"), Arg::Ref("y")})})
                  .ok());
  EXPECT_TRUE(b.AddNode("r", "getitem", {Arg::Ref("cond"), Arg::Int(0)}).ok());
  EXPECT_TRUE(
      b.AddNode("n2", "operator.mul", {Arg::Ref("n"), Arg::Int(2)}).ok());
  EXPECT_TRUE(
      b.AddNode("v", "aten.view.default",
                {Arg::Ref("r"), Arg::OfList({Arg::Ref("n2"), Arg::Int(-1)})})
          .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("v")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

int CountSizeNodes(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) {
    n += node.op != nullptr && node.op->schema.returns_int;
  }
  return n;
}

TEST(SpecializerTest, StaticSizesFoldIntoLiterals) {
  const std::vector<TensorMeta> inputs = {
      TensorMeta(DType::kFloat32, Shape{4, 6}),
      TensorMeta(DType::kFloat32, Shape{4, 6})};
  auto out = SpecializeGraph(BranchAndView(), inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->inlined_conds, 1);
  EXPECT_EQ(out->folded_sizes, 3);  // n, gt, n2
  EXPECT_EQ(CountSizeNodes(*out->graph), 0);
  bool found_add = false;
  for (const Node& node : out->graph->nodes()) {
    EXPECT_NE(node.target, kCondTarget);
    found_add |= node.target == "aten.add.Tensor";
    if (node.target == "aten.view.default") {
      // [n * 2, -1] became [8, -1].
      ASSERT_TRUE(node.args[1].is_list());
      EXPECT_EQ(node.args[1].as_list()[0].as_int(), 8);
    }
  }
  EXPECT_TRUE(found_add);  // 4 > 2: the true branch
  const int last = static_cast<int>(out->meta.size()) - 2;  // before output
  EXPECT_EQ(out->meta[last][0].shape(), (Shape{8, 3}));
}

TEST(SpecializerTest, SymbolicSizesStayNodes) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const int s0 = env.NewSymbol(4, "x.size()[0]", 0, 0);
  const SymShape sizes = {SymInt(SymExpr::Symbol(s0), 4), SymInt(6)};
  const std::vector<TensorMeta> inputs = {TensorMeta(DType::kFloat32, sizes),
                                          TensorMeta(DType::kFloat32, sizes)};
  auto out = SpecializeGraph(BranchAndView(), inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->inlined_conds, 1);
  // The predicate's value is fixed by its guard (2 < s0) and folds; the
  // sizes feeding the view are s0 and 2*s0 and stay nodes.
  EXPECT_EQ(out->folded_sizes, 1);
  EXPECT_EQ(CountSizeNodes(*out->graph), 2);
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.ToString(env.guards()[0]), "2 < x.size()[0]");
}

TEST(SpecializerTest, AGraphReturningASizeKeepsItsNode) {
  GraphBuilder b("numel");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("n", "aten.sym_numel.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("n")}).ok());
  auto out = SpecializeGraph(std::shared_ptr<const Graph>(*b.Finish()),
                             {TensorMeta(DType::kFloat32, Shape{3, 5})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->folded_sizes, 0);
  EXPECT_EQ(CountSizeNodes(*out->graph), 1);
}

}  // namespace
}  // namespace guardjit
