// jit/lowering/lowering_views.cc: the view ops, split_with_sizes,
// as_strided and _unsafe_view lowered without a copy: a view of memory stays
// memory with new strides and offset (checked on the lowered values), a view
// of a computed value remaps its index; every view against the eager
// kernels on contiguous, strided and computed sources, and the as_strided
// cases left to the eager kernel with their reasons.

#include <memory>
#include <string>
#include <vector>

#include "core/compiler.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/lowering/lowering_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::EagerSteps;
using testing::ExpectCompiledByJit;
using testing::ExpectJitMatchesEager;
using testing::ExpectLoweredMatchesEager;
using testing::ExpectTensor;
using testing::Ints;
using testing::LoweredFor;
using testing::LowerFor;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::RandomTensor;
using testing::RunJit;
using testing::RunOnSharedJit;
using testing::SharedJit;

Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

// `target`(x0, rest...).
std::shared_ptr<const Graph> Op1(const std::string& target,
                                 std::vector<Arg> rest, int num_outputs = 1) {
  rest.insert(rest.begin(), Arg::Ref("x0"));
  return OpGraph(target, rest, 1, {}, num_outputs);
}

// `target`(clone(x), rest...) * 2: a view of a computed value, read by a
// pointwise consumer.
std::shared_ptr<const Graph> OfComputed(const std::string& target,
                                        std::vector<Arg> rest) {
  GraphBuilder b("computed");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "n", "aten.clone.default", {Arg::Ref("x")});
  rest.insert(rest.begin(), Arg::Ref("n"));
  testing::AddNode(b, "op", target, rest);
  testing::AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("op"), Arg::Int(2)});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  return testing::Finish(b);
}

const LValue& ValueOfNode(const LoweredFor& l, const Graph& graph,
                          const std::string& name, int output = 0) {
  return l.lowered.values[l.lowered.ValueOf({graph.FindNode(name), output})];
}

TEST(LoweringViews, ViewsOfMemoryAreMemoryWithNewStrides) {
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {2, 3, 4}, 1)};
  struct Case {
    std::shared_ptr<const Graph> graph;
    std::vector<int64_t> strides;
    int64_t offset;
  };
  const std::vector<Case> cases = {
      {Op1("aten.permute.default", {Ints({2, 0, 1})}), {1, 12, 4}, 0},
      {Op1("aten.slice.Tensor",
           {Arg::Int(2), Arg::Int(1), Arg::Int(4), Arg::Int(2)}),
       {12, 4, 2},
       1},
      {Op1("aten.select.int", {Arg::Int(1), Arg::Int(-1)}), {12, 1}, 8},
      {Op1("aten.expand.default", {Ints({5, 2, 3, 4})}), {0, 12, 4, 1}, 0},
      {Op1("aten.diagonal.default", {Arg::Int(1), Arg::Int(1), Arg::Int(2)}),
       {12, 5},
       1},
      {Op1("aten.view.default", {Ints({6, 4})}), {4, 1}, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.graph->name());
    const LoweredFor l = LowerFor(*c.graph, x);
    EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
    const LValue& v = ValueOfNode(l, *c.graph, "op");
    ASSERT_EQ(v.kind, LValue::Kind::kBuffer);
    EXPECT_EQ(v.slot, ValueOfNode(l, *c.graph, "x0").slot);
    EXPECT_EQ(v.strides, ConstExprs(c.strides));
    EXPECT_EQ(v.offset, IndexExpr::Const(c.offset));
    ExpectLoweredMatchesEager(c.graph, x);
  }
}

TEST(LoweringViews, ViewsOfComputedValuesRemapTheIndex) {
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {2, 3, 4}, 2)};
  auto graph = OfComputed("aten.permute.default", {Ints({1, 2, 0})});
  const LoweredFor l = LowerFor(*graph, x);
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  const LValue& v = ValueOfNode(l, *graph, "op");
  ASSERT_EQ(v.kind, LValue::Kind::kView);
  EXPECT_FALSE(v.reshape);
  // out[i, j, k] = n[k, i, j].
  const std::vector<IndexExpr> at =
      v.remap({IndexExpr::Var(0), IndexExpr::Var(1), IndexExpr::Var(2)});
  EXPECT_EQ(at, (std::vector<IndexExpr>{IndexExpr::Var(2), IndexExpr::Var(0),
                                        IndexExpr::Var(1)}));
  // A reshape of a computed value is a remap marked as reshape.
  auto reshape = OfComputed("aten.view.default", {Ints({4, -1})});
  const LoweredFor r = LowerFor(*reshape, x);
  EXPECT_EQ(ValueOfNode(r, *reshape, "op").kind, LValue::Kind::kView);
  EXPECT_TRUE(ValueOfNode(r, *reshape, "op").reshape);
  ExpectLoweredMatchesEager(reshape, x);
}

TEST(LoweringViews, EveryViewMatchesEager) {
  struct Case {
    const char* target;
    std::vector<Arg> rest;
  };
  const std::vector<Case> cases = {
      {"aten.view.default", {Ints({5, -1, 3})}},
      {"aten.permute.default", {Ints({3, 1, 0, 2})}},
      {"aten.expand.default", {Ints({2, 3, 5, 4, -1})}},
      {"aten.unsqueeze.default", {Arg::Int(-2)}},
      {"aten.squeeze.default", {}},
      {"aten.squeeze.dim", {Arg::Int(2)}},
      {"aten.squeeze.dims", {Ints({0, 2})}},
      {"aten.slice.Tensor",
       {Arg::Int(1), Arg::Int(-4), Arg::None(), Arg::Int(3)}},
      {"aten.select.int", {Arg::Int(3), Arg::Int(2)}},
      {"aten.alias.default", {}},
      {"aten.diagonal.default", {Arg::Int(-1), Arg::Int(3), Arg::Int(1)}},
      {"aten._unsafe_view.default", {Ints({2, 5, 3})}},
  };
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kInt64, DType::kBool, DType::kFloat16}) {
    const Tensor x = RandomTensor(d, {1, 5, 1, 6}, ++seed);
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << c.target << " " << DTypeName(d));
      if (std::string(c.target) == "aten._unsafe_view.default" ||
          std::string(c.target) == "aten.view.default") {
        // Reshapes of strided memory need not be views: contiguous only.
        ExpectJitMatchesEager(Op1(c.target, c.rest), {x});
      } else {
        ExpectLoweredMatchesEager(Op1(c.target, c.rest), {x});
      }
      ExpectLoweredMatchesEager(OfComputed(c.target, c.rest), {x});
    }
  }
}

TEST(LoweringViews, SplitWithSizesByHand) {
  const Tensor x = MakeTensor(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto graph =
      Op1("aten.split_with_sizes.default", {Ints({1, 2}), Arg::Int(1)}, 2);
  // Pieces of memory: the input's slot at offsets 0 and 1.
  const LoweredFor l = LowerFor(*graph, {x});
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  const LValue& second = ValueOfNode(l, *graph, "op", 1);
  ASSERT_EQ(second.kind, LValue::Kind::kBuffer);
  EXPECT_EQ(second.offset, IndexExpr::Const(1));
  EXPECT_EQ(second.strides, ConstExprs({3, 1}));
  std::vector<Tensor> out = RunJit(graph, {x});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kInt32, {2, 1}, {1, 4}, 0, 0);
  ExpectTensor(out[1], DType::kInt32, {2, 2}, {2, 3, 5, 6}, 0, 0);
  // Pieces of a computed value, and of strided memory, against eager.
  GraphBuilder b("split_computed");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "n", "aten.clone.default", {Arg::Ref("x")});
  testing::AddNode(b, "op", "aten.split_with_sizes.default",
                   {Arg::Ref("n"), Ints({2, 0, 3}), Arg::Int(0)});
  testing::AddNode(b, "a", "getitem", {Arg::Ref("op"), Arg::Int(0)});
  testing::AddNode(b, "c", "getitem", {Arg::Ref("op"), Arg::Int(2)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("a"), Arg::Ref("c")}).ok());
  ExpectLoweredMatchesEager(testing::Finish(b),
                            {RandomTensor(DType::kFloat64, {5, 4}, 3)});
  ExpectLoweredMatchesEager(graph, {RandomTensor(DType::kFloat32, {4, 3}, 4)});
}

TEST(LoweringViews, AsStridedByHand) {
  // Elements at 1 + i + 2j of 0..5.
  auto graph =
      Op1("aten.as_strided.default", {Ints({2, 2}), Ints({1, 2}), Arg::Int(1)});
  const Tensor x = MakeTensor(DType::kFloat32, {6}, {0, 1, 2, 3, 4, 5});
  const LoweredFor l = LowerFor(*graph, {x});
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  EXPECT_EQ(ValueOfNode(l, *graph, "op").kind, LValue::Kind::kBuffer);
  ExpectTensor(RunJit1(graph, {x}), DType::kFloat32, {2, 2}, {1, 3, 2, 4}, 0,
               0);
  // Of a computed value: through the value's contiguous linear index.
  auto computed = OfComputed("aten.as_strided.default",
                             {Ints({2, 2}), Ints({1, 2}), Arg::Int(1)});
  const Tensor y = MakeTensor(DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(ValueOfNode(LowerFor(*computed, {y}), *computed, "op").kind,
            LValue::Kind::kView);
  ExpectTensor(RunJit1(computed, {y}), DType::kFloat32, {2, 2}, {2, 6, 4, 8}, 0,
               0);
}

TEST(LoweringViews, AsStridedCasesLeftToTheEagerKernel) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 5);
  // Past the input's elements.
  auto beyond =
      Op1("aten.as_strided.default", {Ints({2, 3}), Ints({3, 1}), Arg::Int(1)});
  LoweredFor l = LowerFor(*beyond, {x});
  EXPECT_EQ(l.reasons, std::vector<std::string>{
                           "op (aten.as_strided.default): as_strided out of "
                           "bounds"});
  // Of a permuted input (a strided view).
  GraphBuilder b("of_view");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "t", "aten.permute.default",
                   {Arg::Ref("x"), Ints({1, 0})});
  testing::AddNode(b, "op", "aten.as_strided.default",
                   {Arg::Ref("t"), Ints({3}), Ints({2})});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("op")}).ok());
  auto of_view = testing::Finish(b);
  l = LowerFor(*of_view, {x});
  EXPECT_EQ(l.reasons, std::vector<std::string>{
                           "op (aten.as_strided.default): as_strided of a "
                           "strided view"});
  EXPECT_EQ(EagerSteps(of_view, {x}), 1);
  ExpectJitMatchesEager(of_view, {x});
  // Of a view of a computed value.
  GraphBuilder c("of_computed_view");
  ASSERT_TRUE(c.AddPlaceholder("x").ok());
  testing::AddNode(c, "n", "aten.clone.default", {Arg::Ref("x")});
  testing::AddNode(c, "t", "aten.permute.default",
                   {Arg::Ref("n"), Ints({1, 0})});
  testing::AddNode(c, "op", "aten.as_strided.default",
                   {Arg::Ref("t"), Ints({3}), Ints({2})});
  ASSERT_TRUE(c.SetOutputs({Arg::Ref("op")}).ok());
  auto of_computed_view = testing::Finish(c);
  l = LowerFor(*of_computed_view, {x});
  EXPECT_EQ(l.reasons, std::vector<std::string>{
                           "op (aten.as_strided.default): as_strided of a "
                           "view"});
  ExpectJitMatchesEager(of_computed_view, {x});
}

}  // namespace
}  // namespace guardjit
