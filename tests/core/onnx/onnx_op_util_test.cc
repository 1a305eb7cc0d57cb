// The helpers the ONNX op families share (core/onnx/onnx_op_util.h), on an
// import state with one graph input x: float32[2, 3], one known int64 value
// `axes` = [0, -1] and one graph input `dyn_axes` whose values are not
// known at load.

#include "core/onnx/onnx_op_util.h"

#include <optional>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/onnx/onnx_attributes.h"
#include "core/onnx/onnx_node_context.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

class OnnxOpUtilTest : public ::testing::Test {
 protected:
  OnnxOpUtilTest() : builder_("g"), state_(builder_, "") {}

  void SetUp() override {
    ASSERT_TRUE(
        state_.AddInput("x", TensorMeta(DType::kFloat32, Shape{2, 3}), true)
            .ok());
    ASSERT_TRUE(
        state_.AddInput("dyn_axes", TensorMeta(DType::kInt64, Shape{2}), true)
            .ok());
    ASSERT_TRUE(
        state_.AddKnownValue("axes", MakeTensor(DType::kInt64, {2}, {0, -1}))
            .ok());
  }

  // A context for `node` at `opset` (the node and its attributes must
  // outlive it: members of the test).
  OnnxNodeContext Context(int opset) {
    absl::StatusOr<OnnxAttributes> attrs = OnnxAttributes::Create(node_);
    EXPECT_TRUE(attrs.ok()) << attrs.status();
    attrs_.emplace(*std::move(attrs));
    return OnnxNodeContext(state_, node_, opset, *attrs_);
  }

  Arg X() {
    absl::StatusOr<Arg> x = state_.GraphValue("x");
    EXPECT_TRUE(x.ok()) << x.status();
    return *x;
  }

  size_t NumNodes() const { return builder_.partial_graph().nodes().size(); }
  const Node& LastNode() const {
    return builder_.partial_graph().nodes().back();
  }

  GraphBuilder builder_;
  OnnxImportState state_;
  NodeProto node_;
  std::optional<OnnxAttributes> attrs_;
};

TEST(IntListTest, IsAListOfInts) {
  const Arg list = IntList({3, -1, 0});
  ASSERT_TRUE(list.is_list());
  ASSERT_EQ(list.as_list().size(), 3u);
  EXPECT_EQ(list.as_list()[0].as_scalar().to_int(), 3);
  EXPECT_EQ(list.as_list()[1].as_scalar().to_int(), -1);
  EXPECT_EQ(list.as_list()[2].as_scalar().to_int(), 0);
  EXPECT_TRUE(IntList({}).as_list().empty());
}

TEST(NormalizeAxesTest, NegativeAxesCountFromTheEnd) {
  absl::StatusOr<std::vector<int64_t>> axes = NormalizeAxes({-1, 0, -3}, 4);
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_EQ(*axes, std::vector<int64_t>({3, 0, 1}));
  absl::StatusOr<std::vector<int64_t>> none = NormalizeAxes({}, 2);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(NormalizeAxesTest, OutOfRangeAndRepeatedAxesAreRefused) {
  ExpectError(NormalizeAxes({0, 4}, 4), absl::StatusCode::kInvalidArgument,
              "axis 4 is out of range for rank 4");
  ExpectError(NormalizeAxes({-5}, 4), absl::StatusCode::kInvalidArgument,
              "axis -5 is out of range for rank 4");
  // -1 and 3 are the same axis of a rank-4 tensor: named as written.
  ExpectError(NormalizeAxes({3, -1}, 4), absl::StatusCode::kInvalidArgument,
              "axis -1 is given twice");
}

TEST(RequireFloatTest, OnlyFloatingDTypes) {
  for (DType d :
       {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    EXPECT_TRUE(RequireFloat(TensorMeta(d, Shape{1}), "Erf input").ok());
  }
  const absl::Status s =
      RequireFloat(TensorMeta(DType::kInt32, Shape{1}), "Erf input");
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "Erf input of dtype int32 is not supported");
}

TEST_F(OnnxOpUtilTest, SplitNumOutputsIsCheckedAgainstTheNode) {
  node_.add_input("x");
  node_.add_output("a");
  node_.add_output("b");
  SetInt(&node_, "num_outputs", 2);
  {
    OnnxNodeContext ctx = Context(18);
    absl::StatusOr<int64_t> n = SplitNumOutputs(ctx, /*has_sizes=*/false);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 2);
    absl::StatusOr<int64_t> both = SplitNumOutputs(ctx, /*has_sizes=*/true);
    EXPECT_EQ(both.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(both.status().message(), "both split and num_outputs are given");
  }
  {
    // Before opset 18 the attribute is not Split's: ignored.
    OnnxNodeContext ctx = Context(13);
    absl::StatusOr<int64_t> n = SplitNumOutputs(ctx, /*has_sizes=*/true);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0);
  }
  node_.add_output("c");
  OnnxNodeContext ctx = Context(18);
  absl::StatusOr<int64_t> wrong = SplitNumOutputs(ctx, /*has_sizes=*/false);
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(),
            "num_outputs 2 but the node has 3 outputs");
}

TEST_F(OnnxOpUtilTest, AxesFromTheAttributeBeforeTheInputOpset) {
  node_.add_input("x");
  node_.add_input("axes");
  SetInts(&node_, "axes", {1});
  OnnxNodeContext ctx = Context(11);
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = AxesOf(ctx, 13, 1);
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_EQ(*axes, std::vector<int64_t>({1}));
}

TEST_F(OnnxOpUtilTest, AxesFromTheInputSinceItsOpset) {
  node_.add_input("x");
  node_.add_input("axes");
  OnnxNodeContext ctx = Context(13);
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = AxesOf(ctx, 13, 1);
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_EQ(*axes, std::vector<int64_t>({0, -1}));
}

TEST_F(OnnxOpUtilTest, AxesAbsentGiveNullopt) {
  node_.add_input("x");
  {
    OnnxNodeContext ctx = Context(13);
    absl::StatusOr<std::optional<std::vector<int64_t>>> axes =
        AxesOf(ctx, 13, 1);
    ASSERT_TRUE(axes.ok()) << axes.status();
    EXPECT_FALSE(axes->has_value());
  }
  // An empty input name is an omitted optional input.
  node_.add_input("");
  OnnxNodeContext ctx = Context(18);
  absl::StatusOr<std::optional<std::vector<int64_t>>> axes = AxesOf(ctx, 13, 1);
  ASSERT_TRUE(axes.ok()) << axes.status();
  EXPECT_FALSE(axes->has_value());
  // input_since 0: always the attribute, absent here.
  absl::StatusOr<std::optional<std::vector<int64_t>>> attr = AxesOf(ctx, 0, 1);
  ASSERT_TRUE(attr.ok()) << attr.status();
  EXPECT_FALSE(attr->has_value());
}

TEST_F(OnnxOpUtilTest, AxesComputedAtRunTimeAreRefused) {
  node_.add_input("x");
  node_.add_input("dyn_axes");
  OnnxNodeContext ctx = Context(13);
  ExpectError(AxesOf(ctx, 13, 1), absl::StatusCode::kUnimplemented,
              "axes (input 1, 'dyn_axes') is computed at run time");
}

TEST_F(OnnxOpUtilTest, CastToTheSameDTypeAddsNothing) {
  node_.add_input("x");
  OnnxNodeContext ctx = Context(13);
  const Arg x = X();
  const size_t before = NumNodes();
  absl::StatusOr<Arg> same = CastTo(ctx, x, DType::kFloat32);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(NumNodes(), before);
  EXPECT_EQ(same->as_value(), x.as_value());
  absl::StatusOr<Arg> half = CastTo(ctx, x, DType::kFloat16);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(NumNodes(), before + 1);
  EXPECT_EQ(LastNode().target, "aten._to_copy.default");
  EXPECT_EQ(ctx.Meta(*half).dtype, DType::kFloat16);
  EXPECT_EQ(ctx.Meta(*half).shape(), Shape({2, 3}));
}

TEST_F(OnnxOpUtilTest, ReshapeToItsOwnStaticShapeAddsNothing) {
  node_.add_input("x");
  OnnxNodeContext ctx = Context(13);
  const Arg x = X();
  const size_t before = NumNodes();
  absl::StatusOr<Arg> same = ReshapeTo(ctx, x, {2, 3});
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(NumNodes(), before);
  EXPECT_EQ(same->as_value(), x.as_value());
}

TEST_F(OnnxOpUtilTest, ReshapeCopiesThenViews) {
  node_.add_input("x");
  OnnxNodeContext ctx = Context(13);
  const size_t before = NumNodes();
  absl::StatusOr<Arg> flat = ReshapeTo(ctx, X(), {-1});
  ASSERT_TRUE(flat.ok()) << flat.status();
  ASSERT_EQ(NumNodes(), before + 2);
  EXPECT_EQ(builder_.partial_graph().node(before).target, "aten.clone.default");
  EXPECT_EQ(LastNode().target, "aten.view.default");
  EXPECT_EQ(ctx.Meta(*flat).shape(), Shape({6}));
  // A size that does not fit the elements fails in the view's shape rule.
  EXPECT_FALSE(ReshapeTo(ctx, X(), {4, 2}).ok());
}

TEST_F(OnnxOpUtilTest, ScalarConstantsOfEachKind) {
  node_.add_input("x");
  OnnxNodeContext ctx = Context(13);
  absl::StatusOr<Arg> f = ScalarConstant(ctx, 0.5, DType::kFloat64);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(LastNode().target, "aten.scalar_tensor.default");
  EXPECT_EQ(LastNode().args[0].as_scalar().to_double(), 0.5);
  EXPECT_EQ(ctx.Meta(*f).dtype, DType::kFloat64);
  EXPECT_EQ(ctx.Meta(*f).dim(), 0);
  // An integer dtype gets an integer literal, truncated.
  absl::StatusOr<Arg> i = ScalarConstant(ctx, 7.9, DType::kInt32);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(LastNode().args[0].as_scalar().to_int(), 7);
  EXPECT_TRUE(LastNode().args[0].as_scalar().is_int());
  EXPECT_EQ(ctx.Meta(*i).dtype, DType::kInt32);
}

}  // namespace
}  // namespace guardjit::testing
