// ONNX's tensor operators (core/onnx/onnx_tensor_ops.cc): what folds to a
// constant at load (Shape, Size, Range, EyeLike, ConstantOfShape, integer
// Cast), what becomes graph ops (Cast, Gather), and the refusals with the
// node named.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// Graph output `k`, which must be a constant folded at load.
const Tensor* OutputConstant(const Graph& g, int k) {
  const Node& n = g.node(g.output_node().args[k].as_value().node);
  EXPECT_EQ(n.kind, NodeKind::kConstant) << n.name << " is not a constant";
  return n.kind == NodeKind::kConstant ? &n.constant : nullptr;
}

TEST(OnnxTensorOpsTest, ShapeAndSizeFoldToConstants) {
  ModelProto m = Model(15);
  AddInput(m, "x", {2, 3, 4, 5});
  AddNode(m, "Shape", {"x"}, {"all"});
  NodeProto* part = AddNode(m, "Shape", {"x"}, {"part"});
  SetInt(part, "start", 1);
  SetInt(part, "end", -1);
  AddNode(m, "Size", {"x"}, {"n"});
  AddOutputs(m, {"all", "part", "n"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensor(*OutputConstant(**g, 0), DType::kInt64, {4}, {2, 3, 4, 5});
  ExpectTensor(*OutputConstant(**g, 1), DType::kInt64, {2}, {3, 4});
  ExpectTensor(*OutputConstant(**g, 2), DType::kInt64, {}, {120});
}

TEST(OnnxTensorOpsTest, RangeEyeLikeAndConstantOfShape) {
  ModelProto m = Model();
  AddInt64Initializer(m, "start", {}, {10});
  AddInt64Initializer(m, "limit", {}, {1});
  AddInt64Initializer(m, "delta", {}, {-4});
  AddNode(m, "Range", {"start", "limit", "delta"}, {"r"});
  AddInput(m, "sq", {3, 4});
  SetInt(AddNode(m, "EyeLike", {"sq"}, {"eye"}), "k", 1);
  AddInt64Initializer(m, "shape", {2, 2});
  AddNode(m, "ConstantOfShape", {"shape"}, {"zeros"});
  AddOutputs(m, {"r", "eye", "zeros"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ExpectTensor(*OutputConstant(**g, 0), DType::kInt64, {3}, {10, 6, 2});
  ExpectTensor(*OutputConstant(**g, 1), DType::kFloat32, {3, 4},
               {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  // Without a value attribute: float32 zeros.
  ExpectTensor(*OutputConstant(**g, 2), DType::kFloat32, {2, 2}, {0, 0, 0, 0});

  ModelProto zero = Model();
  AddInt64Initializer(zero, "start", {}, {0});
  AddInt64Initializer(zero, "limit", {}, {5});
  AddInt64Initializer(zero, "delta", {}, {0});
  AddNode(zero, "Range", {"start", "limit", "delta"}, {"r"});
  AddOutput(zero, "r");
  ExpectError(
      Load(zero), absl::StatusCode::kInvalidArgument,
      "ONNX node 0 'r' (Range, domain 'ai.onnx', opset 13): delta is 0");
}

TEST(OnnxTensorOpsTest, CastFoldsKnownIntegersAndCopiesTheRest) {
  ModelProto m = Model();
  AddInt64Initializer(m, "k", {300, -1});
  SetInt(AddNode(m, "Cast", {"k"}, {"k8"}), "to", TensorProto::INT8);
  AddInput(m, "x", {2});
  SetInt(AddNode(m, "Cast", {"x"}, {"xi"}), "to", TensorProto::INT32);
  AddOutputs(m, {"k8", "xi"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  // Narrowing wraps, as a C cast of int64 does: 300 -> 44.
  ExpectTensor(*OutputConstant(**g, 0), DType::kInt8, {2}, {44, -1});
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten._to_copy.default"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].dtype, DType::kInt32);

  ModelProto no_to = Model();
  AddInput(no_to, "x", {2});
  AddNode(no_to, "Cast", {"x"}, {"y"});
  AddOutput(no_to, "y");
  ExpectError(Load(no_to), absl::StatusCode::kInvalidArgument, "'to' missing");
}

TEST(OnnxTensorOpsTest, GatherIndicesAreCheckedAtLoad) {
  ModelProto m = Model();
  AddInput(m, "x", {3, 4});
  AddInt64Initializer(m, "i", {2, -1});
  SetInt(AddNode(m, "Gather", {"x", "i"}, {"y"}), "axis", 0);
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 4}}));

  m.mutable_graph()->mutable_initializer(0)->set_int64_data(1, 3);
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "index 3 is out of range for a dim of size 3");
}

}  // namespace
}  // namespace guardjit::testing
