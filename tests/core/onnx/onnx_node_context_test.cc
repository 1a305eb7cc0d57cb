// The ONNX import's value table and per-node view
// (core/onnx/onnx_node_context.h), driven directly on a GraphBuilder: inputs,
// known values and their constants, SSA definitions, node naming, ConstInts,
// StaticShape, SetOutputSizes and NormalizeAxis.

#include "core/onnx/onnx_node_context.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

NodeProto MakeNode(const std::string& op, const std::vector<std::string>& in,
                   const std::vector<std::string>& out) {
  NodeProto n;
  n.set_op_type(op);
  for (const auto& i : in) n.add_input(i);
  for (const auto& o : out) n.add_output(o);
  return n;
}

class OnnxNodeContextTest : public ::testing::Test {
 protected:
  GraphBuilder builder_{"g"};
  OnnxImportState state_{builder_, ""};
};

TEST_F(OnnxNodeContextTest, ValuesAreDefinedOnceAndUsedAfterDefinition) {
  ASSERT_TRUE(
      state_.AddInput("x", TensorMeta(DType::kFloat32, Shape{2}), true).ok());
  absl::Status twice = state_.AddKnownValue("x", Iota({1}));
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.message()),
              HasSubstr("value 'x' is defined twice"));
  ExpectError(state_.GraphValue("nope"), absl::StatusCode::kInvalidArgument,
              "value 'nope' is not defined before its use");
  EXPECT_EQ(state_.Find("nope"), nullptr);
  ASSERT_NE(state_.Find("x"), nullptr);
  EXPECT_FALSE(state_.Find("x")->constant.has_value());
}

TEST_F(OnnxNodeContextTest, KnownValueBecomesOneConstantOnFirstUse) {
  ASSERT_TRUE(state_.AddKnownValue("k", Iota({3})).ok());
  const size_t before = builder_.partial_graph().nodes().size();
  auto a = state_.GraphValue("k");
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = state_.GraphValue("k");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->as_value().node, b->as_value().node);
  EXPECT_EQ(builder_.partial_graph().nodes().size(), before + 1);
  EXPECT_EQ(state_.MetaOf(*a).shape(), (Shape{3}));
  EXPECT_EQ(state_.MetaOf(*a).dtype, DType::kFloat32);
}

TEST_F(OnnxNodeContextTest, EmitNamesNodesAfterTheOutputAndRecordsMeta) {
  ASSERT_TRUE(
      state_.AddInput("x", TensorMeta(DType::kFloat32, Shape{2, 3}), true)
          .ok());
  NodeProto node = MakeNode("Relu", {"x"}, {"y"});
  auto attrs = OnnxAttributes::Create(node);
  ASSERT_TRUE(attrs.ok());
  OnnxNodeContext ctx(state_, node, 13, *attrs);
  EXPECT_EQ(ctx.InternalName("mask"), "#y.mask");
  auto x = ctx.Input(0);
  ASSERT_TRUE(x.ok()) << x.status();
  auto r1 = ctx.Emit("aten.relu.default", {*x});
  auto r2 = ctx.Emit("aten.relu.default", {*r1});
  ASSERT_TRUE(r1.ok() && r2.ok());
  const Graph& g = builder_.partial_graph();
  EXPECT_EQ(g.node(r1->as_value().node).name, "y");
  EXPECT_EQ(g.node(r2->as_value().node).name, "y.1");
  EXPECT_EQ(ctx.Meta(*r2).shape(), (Shape{2, 3}));
  ASSERT_TRUE(ctx.SetOutput(0, *r2).ok());
  ASSERT_NE(state_.Find("y"), nullptr);
  EXPECT_EQ(state_.Find("y")->meta.shape(), (Shape{2, 3}));
  // Output 1 is absent: setting it does nothing.
  EXPECT_TRUE(ctx.SetOutput(1, *r2).ok());
  ExpectError(ctx.Input(1), absl::StatusCode::kInvalidArgument,
              "input 1 is missing");
}

TEST_F(OnnxNodeContextTest, ConstIntsReadsKnownIntegersOnly) {
  ASSERT_TRUE(
      state_.AddKnownValue("axes", MakeTensor(DType::kInt32, {2}, {-1, 4}))
          .ok());
  ASSERT_TRUE(state_.AddKnownValue("f", Iota({2})).ok());
  ASSERT_TRUE(
      state_.AddInput("dyn", TensorMeta(DType::kInt64, Shape{2}), true).ok());
  NodeProto node = MakeNode("Op", {"axes", "f", "dyn"}, {"y"});
  auto attrs = OnnxAttributes::Create(node);
  ASSERT_TRUE(attrs.ok());
  OnnxNodeContext ctx(state_, node, 13, *attrs);
  auto axes = ctx.ConstInts(0, "axes");
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_EQ(*axes, (std::vector<int64_t>{-1, 4}));
  ExpectError(ctx.ConstInts(1, "pads"), absl::StatusCode::kInvalidArgument,
              "pads (input 1) is float32, not int64");
  state_.ClearWanted();
  ExpectError(ctx.ConstInts(2, "shape"), absl::StatusCode::kUnimplemented,
              "shape (input 2, 'dyn') is computed at run time");
  // Asking for a graph input's values marks it wanted and needed.
  EXPECT_TRUE(state_.wanted().contains("dyn"));
  EXPECT_TRUE(state_.needed().contains("dyn"));
}

TEST_F(OnnxNodeContextTest, SetOutputSizesOfNumbersIsAKnownValue) {
  NodeProto node = MakeNode("Shape", {}, {"s", "t"});
  auto attrs = OnnxAttributes::Create(node);
  ASSERT_TRUE(attrs.ok());
  OnnxNodeContext ctx(state_, node, 13, *attrs);
  ASSERT_TRUE(ctx.SetOutputSizes(0, {Arg::Int(2), Arg::Int(7)}, false).ok());
  const OnnxValue* s = state_.Find("s");
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->constant.has_value());
  ExpectTensor(*s->constant, DType::kInt64, {2}, {2, 7});
  ASSERT_TRUE(ctx.SetOutputSizes(1, {Arg::Int(5)}, true, DType::kInt32).ok());
  ASSERT_NE(state_.Find("t"), nullptr);
  ExpectTensor(*state_.Find("t")->constant, DType::kInt32, {}, {5});
  auto bad = ctx.SetOutputSizes(1, {Arg::Int(1), Arg::Int(2)}, true);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(bad.message()),
              HasSubstr("a 0-d size value of more than one element"));
}

TEST_F(OnnxNodeContextTest, StaticShapeOfStaticAndSymbolicInputs) {
  ASSERT_TRUE(
      state_.AddInput("a", TensorMeta(DType::kFloat32, Shape{4, 5}), true)
          .ok());
  const SymExpr n =
      SymExpr::Symbol(state_.shape_env().NewSymbol(3, "b.size()[0]", 1, 0));
  TensorMeta sym(DType::kFloat32, SymShape{SymInt(n, 3), SymInt(2)});
  ASSERT_TRUE(state_.AddInput("b", sym, false).ok());
  NodeProto node = MakeNode("Op", {"a", "b"}, {"y"});
  auto attrs = OnnxAttributes::Create(node);
  ASSERT_TRUE(attrs.ok());
  OnnxNodeContext ctx(state_, node, 13, *attrs);
  auto a = ctx.StaticShape(0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(*a, (Shape{4, 5}));
  EXPECT_TRUE(ctx.IsStaticInput(0));
  EXPECT_FALSE(ctx.IsStaticInput(1));
  ExpectError(ctx.StaticShape(1), absl::StatusCode::kUnimplemented,
              "needs the sizes of input 1 ('b') at load, and they are "
              "symbolic");
}

TEST(OnnxNodeContextNormalizeAxisTest, WrapsNegativeAndRefusesOutOfRange) {
  EXPECT_EQ(*NormalizeAxis(-1, 3, "axis"), 2);
  EXPECT_EQ(*NormalizeAxis(0, 3, "axis"), 0);
  EXPECT_EQ(*NormalizeAxis(-3, 3, "axis"), 0);
  ExpectError(NormalizeAxis(3, 3, "axis"), absl::StatusCode::kInvalidArgument,
              "axis 3 is out of range for rank 3");
  ExpectError(NormalizeAxis(-4, 3, "split axis"),
              absl::StatusCode::kInvalidArgument,
              "split axis -4 is out of range for rank 3");
  ExpectError(NormalizeAxis(0, 0, "axis"), absl::StatusCode::kInvalidArgument,
              "axis 0 is out of range for rank 0");
}

}  // namespace
}  // namespace guardjit::testing
