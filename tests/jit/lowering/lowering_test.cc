// Lowering a specialized graph to lowered values (jit/lowering/lowering.h):
// inputs as buffers at their layouts, pointwise ops and reductions as
// functions of the index, nodes without a lowering as extern nodes with
// their reason, and the size helpers the rest of jit/ reads sizes through.
// Each op's lowering against eager: tests/conformance/.

#include "jit/lowering/lowering.h"

#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using E = IndexExpr;

// x [2, 3], y [3, 2]: a = relu(x), s = a.sum(1), m = mm(x, y); outputs s, m.
struct Lowered {
  std::shared_ptr<const Graph> graph;
  GraphMeta metas;
};

Lowered SumAndProduct() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  EXPECT_TRUE(b.AddNode("a", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode("s", "aten.sum.dim_IntList",
                {Arg::Ref("a"), Arg::OfList({Arg::Int(1)}), Arg::Bool(false)})
          .ok());
  EXPECT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("y")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("s"), Arg::Ref("m")}).ok());
  Lowered l;
  l.graph = std::shared_ptr<const Graph>(*b.Finish());
  const std::vector<TensorMeta> inputs = {
      TensorMeta(DType::kFloat32, Shape{2, 3}),
      TensorMeta(DType::kFloat32, Shape{3, 2})};
  l.metas = *InferShapes(*l.graph, inputs);
  return l;
}

TEST(LoweringTest, ValuesOfInputsPointwiseOpsReductionsAndExterns) {
  const Lowered l = SumAndProduct();
  const Graph& g = *l.graph;
  std::vector<std::string> reasons;
  auto lowered =
      Lower(g, l.metas, {ConstExprs({3, 1}), ConstExprs({1, 3})}, &reasons);
  ASSERT_TRUE(lowered.ok()) << lowered.status();

  // Inputs: buffers of their slots at the strides given (y transposed).
  const int x = lowered->ValueOf({g.FindNode("x"), 0});
  const int y = lowered->ValueOf({g.FindNode("y"), 0});
  ASSERT_GE(x, 0);
  ASSERT_GE(y, 0);
  const LValue& yv = lowered->values[y];
  EXPECT_EQ(yv.kind, LValue::Kind::kBuffer);
  EXPECT_EQ(lowered->slots[yv.slot].source, Slot::Source::kInput);
  EXPECT_EQ(lowered->slots[yv.slot].input, 1);
  EXPECT_EQ(yv.strides, ConstExprs({1, 3}));

  const LValue& a = lowered->values[lowered->ValueOf({g.FindNode("a"), 0})];
  EXPECT_EQ(a.kind, LValue::Kind::kPointwise);
  EXPECT_EQ(a.label, "a");
  EXPECT_EQ(a.operands, std::vector<int>{x});
  EXPECT_EQ(a.sizes, ConstExprs({2, 3}));

  const int s = lowered->ValueOf({g.FindNode("s"), 0});
  const LValue& sv = lowered->values[s];
  EXPECT_EQ(sv.kind, LValue::Kind::kReduction);
  EXPECT_EQ(sv.mask, (std::vector<bool>{false, true}));
  EXPECT_FALSE(sv.keepdim);
  EXPECT_EQ(sv.combine, CombineOp::kSum);
  EXPECT_EQ(sv.sizes, ConstExprs({2}));

  // mm has no lowering: an extern node whose output is an extern slot.
  ASSERT_EQ(lowered->externs.size(), 1u);
  const ExternNode& ext = lowered->externs[0];
  EXPECT_EQ(ext.node, g.FindNode("m"));
  ASSERT_EQ(ext.outputs.size(), 1u);
  const LValue& mv = lowered->values[ext.outputs[0]];
  EXPECT_EQ(mv.kind, LValue::Kind::kBuffer);
  EXPECT_EQ(lowered->slots[mv.slot].source, Slot::Source::kExtern);
  EXPECT_EQ(lowered->slots[mv.slot].node, g.FindNode("m"));
  EXPECT_EQ(lowered->slots[mv.slot].sizes, ConstExprs({2, 2}));
  EXPECT_EQ(reasons,
            std::vector<std::string>{"m (aten.mm.default): no JIT lowering"});
  // Its tensor arguments, by graph value.
  ASSERT_EQ(lowered->extern_inputs.at(ext.node).size(), 2u);
  EXPECT_EQ(lowered->extern_inputs.at(ext.node)[1].second, y);

  EXPECT_EQ(lowered->outputs, (std::vector<int>{s, ext.outputs[0]}));
}

TEST(LoweringTest, EveryInputNeedsALayout) {
  const Lowered l = SumAndProduct();
  auto lowered = Lower(*l.graph, l.metas, {ConstExprs({3, 1})});
  testing::ExpectError(lowered, absl::StatusCode::kInternal,
                       "no layout for input 'y'");
  lowered = Lower(*l.graph, l.metas, {ConstExprs({3, 1}), ConstExprs({1})});
  testing::ExpectError(lowered, absl::StatusCode::kInternal,
                       "no layout for input 'y'");
}

TEST(LoweringTest, SizeHelpers) {
  const TensorMeta meta(DType::kFloat32, Shape{4, 5});
  EXPECT_EQ(SizeExpr(meta, 1), E::Const(5));
  EXPECT_EQ(ConcreteShape({E::Const(4), E::Const(5)}), (Shape{4, 5}));
  EXPECT_EQ(ConcreteShape({E::Const(4), E::Size(0)}), std::nullopt);
  // Row-major: i * 5 + j over [4, 5]; (1, 2, 3) in a [2, 3, 4] tensor.
  const E offset = Linearize({E::Var(0), E::Var(1)}, ConstExprs({4, 5}));
  EXPECT_EQ(offset, E::Var(0) * E::Const(5) + E::Var(1));
  EXPECT_EQ(
      Linearize({E::Const(1), E::Const(2), E::Const(3)}, ConstExprs({2, 3, 4}))
          .value(),
      1 * 12 + 2 * 4 + 3);
}

}  // namespace
}  // namespace guardjit
