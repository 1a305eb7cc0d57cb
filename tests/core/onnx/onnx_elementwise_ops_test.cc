// ONNX's elementwise operators (core/onnx/onnx_elementwise_ops.cc): numpy
// broadcasting, the ATen op each maps to, and the dtypes of comparisons.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

TEST(OnnxElementwiseOpsTest, AddBroadcastsLikeNumpy) {
  ModelProto m = Model();
  AddInput(m, "a", {2, 1, 3});
  AddInput(m, "b", {4, 1});
  AddNode(m, "Add", {"a", "b"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.add.Tensor"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 1, 3}),
                               TensorMeta(DType::kFloat32, Shape{4, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 3}));
}

TEST(OnnxElementwiseOpsTest, ComparisonsAreBoolAndMixedDtypesAreRefused) {
  ModelProto m = Model();
  AddInput(m, "a", {2, 3});
  AddInput(m, "b", {3});
  AddNode(m, "Less", {"a", "b"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.lt.Tensor"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 3}),
                               TensorMeta(DType::kFloat32, Shape{3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DType::kBool);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));

  // ONNX requires one operand type; the importer does not promote.
  ModelProto mixed = Model();
  AddInput(mixed, "a", {2}, TensorProto::FLOAT);
  AddInput(mixed, "b", {2}, TensorProto::INT64);
  AddNode(mixed, "Mul", {"a", "b"}, {"y"});
  AddOutput(mixed, "y");
  ExpectError(Load(mixed), absl::StatusCode::kInvalidArgument,
              "ONNX node 0 'y' (Mul, domain 'ai.onnx', opset 13): operands "
              "are float32 and int64; ONNX requires one type");
}

TEST(OnnxElementwiseOpsTest, IntegerDivTruncatesAndModFollowsFmod) {
  ModelProto m = Model();
  AddInput(m, "a", {4}, TensorProto::INT64);
  AddInput(m, "b", {4}, TensorProto::INT64);
  AddNode(m, "Div", {"a", "b"}, {"q"});
  AddNode(m, "Mod", {"a", "b"}, {"r"});
  SetInt(AddNode(m, "Mod", {"a", "b"}, {"f"}), "fmod", 1);
  AddOutputs(m, {"q", "r", "f"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), (std::vector<std::string>{"aten.div.Tensor_mode",
                                                    "aten.remainder.Tensor",
                                                    "aten.fmod.Tensor"}));
  const Graph& graph = **g;
  const Node& div = graph.node(graph.FindNode("q"));
  // div.Tensor_mode(self, other, *, rounding_mode).
  ASSERT_EQ(div.args.size(), 3u);
  EXPECT_EQ(div.args[2].as_string(), "trunc");

  // Python's % of floats is not what ONNX's fmod=0 means.
  ModelProto floats = Model();
  AddInput(floats, "a", {4});
  AddInput(floats, "b", {4});
  AddNode(floats, "Mod", {"a", "b"}, {"r"});
  AddOutput(floats, "r");
  ExpectError(Load(floats), absl::StatusCode::kInvalidArgument,
              "fmod=0 on floating-point operands");
}

TEST(OnnxElementwiseOpsTest, VariadicOpsChainAndWhereNeedsABoolCondition) {
  ModelProto m = Model();
  for (const char* name : {"a", "b", "c"}) AddInput(m, name, {2});
  AddNode(m, "Mean", {"a", "b", "c"}, {"mean"});
  AddNode(m, "Max", {"a"}, {"max"});
  AddOutputs(m, {"mean", "max"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), (std::vector<std::string>{
                              "aten.add.Tensor", "aten.add.Tensor",
                              "aten.div.Scalar", "aten.clone.default"}));

  ModelProto where = Model();
  AddInput(where, "c", {2}, TensorProto::INT64);
  AddInput(where, "x", {2});
  AddInput(where, "y", {2});
  AddNode(where, "Where", {"c", "x", "y"}, {"w"});
  AddOutput(where, "w");
  ExpectError(Load(where), absl::StatusCode::kInvalidArgument,
              "condition is not bool");
}

}  // namespace
}  // namespace guardjit::testing
