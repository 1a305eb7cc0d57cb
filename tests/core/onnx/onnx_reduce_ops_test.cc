// ONNX's reductions (core/onnx/onnx_reduce_ops.cc): axes as an attribute
// or an input (opset 18), keepdims, arg reductions and TopK.

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

// What torch.onnx.export writes by default (opset 20): reductions take their
// axes as an input from opset 18.
TEST(OnnxReduceOpsTest, Opset18ReductionsReadTheAxesInput) {
  ModelProto m = Model(20);
  AddInput(m, "x", {2, 3, 4});
  AddInt64Initializer(m, "axes", {1});
  SetInt(AddNode(m, "ReduceMean", {"x", "axes"}, {"y"}), "keepdims", 0);
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.mean.dim"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 4}));
  // An axes attribute is opset 17's: at 18 nothing reads it.
  ModelProto old = Model(18);
  AddInput(old, "x", {2, 3});
  NodeProto* n = AddNode(old, "ReduceMax", {"x"}, {"y"});
  auto* axes = n->add_attribute();
  axes->set_name("axes");
  axes->set_type(AttributeProto::INTS);
  axes->add_ints(0);
  AddOutput(old, "y");
  ExpectError(Load(old), absl::StatusCode::kUnimplemented,
              "(ReduceMax, domain 'ai.onnx', opset 18): attribute 'axes' is "
              "not supported");
}

TEST(OnnxReduceOpsTest, TopKOfAKnownK) {
  ModelProto m = Model();
  AddInput(m, "x", {3, 4});
  AddInt64Initializer(m, "k", {1}, {2});
  AddNode(m, "TopK", {"x", "k"}, {"values", "indices"});
  AddOutputs(m, {"values", "indices"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.topk.default"));
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{3, 2}, {3, 2}}));
  AddInt64Initializer(m, "k5", {1}, {5});
  m.mutable_graph()->mutable_node(0)->set_input(1, "k5");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("K 5 is out of range"));
}

}  // namespace
}  // namespace guardjit::testing
