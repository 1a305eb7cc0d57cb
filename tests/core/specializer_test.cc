#include "core/specializer.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/ops/control_flow.h"
#include "core/shape_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/test_graphs.h"

namespace guardjit {
namespace {

// x + y if x.shape[0] > 2 else x - y, then view(r, [x.shape[0] * 2, -1]).
std::shared_ptr<const Graph> BranchAndView() {
  GraphBuilder b("branch_view");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  AddAddSubBranches(b);
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

// SpecializeCall: the symbols a call's dynamic dims become, with the retry
// that drops a symbol the guards pin.
struct CallOn {
  explicit CallOn(std::vector<std::vector<int64_t>> shapes)
      : sizes(std::move(shapes)) {
    for (auto& s : sizes) {
      strides.push_back(std::vector<int64_t>(s.size(), 0));
      for (int d = static_cast<int>(s.size()) - 1, st = 1; d >= 0; --d) {
        strides.back()[d] = st;
        st *= static_cast<int>(s[d]);
      }
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      InputView v;
      v.rank = static_cast<int>(sizes[i].size());
      v.sizes = sizes[i].data();
      v.strides = strides[i].data();
      views.push_back(v);
    }
  }
  CallSignature signature() const { return {views, AmbientState()}; }
  std::vector<std::vector<int64_t>> sizes, strides;
  std::vector<InputView> views;
};

TEST(SpecializerTest, SpecializeCallKeepsAFreeSymbol) {
  const CallOn call({{4, 6}, {4, 6}});
  auto out = SpecializeCall(BranchAndView(), {"x", "y"}, call.signature(),
                            {{0, 0}, {1, 0}});
  ASSERT_TRUE(out.ok()) << out.status();
  // Duck sizing: x and y's dim 0 share one symbol, guarded 2 < s0.
  ASSERT_EQ(out->env.symbols().size(), 1u);
  EXPECT_EQ(out->env.symbols()[0].source, "x.size()[0]");
  EXPECT_EQ(out->graph.inlined_conds, 1);
}

TEST(SpecializerTest, SpecializeCallDropsAPinnedSymbolAndRetries) {
  // x + y with y static [4]: broadcasting pins x's dim 0 to 4, so the entry
  // is static in it, as torch specializes such a dim.
  GraphBuilder b("pinned");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(
      b.AddNode("r", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  const CallOn call({{4}, {4}});
  auto out = SpecializeCall(graph, {"x", "y"}, call.signature(), {{0, 0}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->env.symbols().empty());
  EXPECT_TRUE(out->symbolic.symbolic.dims.empty());
  ASSERT_EQ(out->symbolic.metas.size(), 2u);
  EXPECT_FALSE(out->symbolic.metas[0].sizes[0].is_symbolic());
}

TEST(SpecializerTest, SpecializeCallErrorsNameTheSymbolsSource) {
  // x + y with x [s0] and y [3]: s0 = 5 cannot broadcast with 3.
  GraphBuilder b("mismatch");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(
      b.AddNode("r", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  const CallOn call({{5}, {3}});
  auto out = SpecializeCall(graph, {"x", "y"}, call.signature(), {{0, 0}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::HasSubstr("node 'r'"));
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::HasSubstr("s0 = x.size()[0], 5 in this call"));
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
