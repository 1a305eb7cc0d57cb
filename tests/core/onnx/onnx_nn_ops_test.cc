// ONNX's neural-network operators (core/onnx/onnx_nn_ops.cc): Gemm's
// attributes, convolutions' output shapes, batch normalization.

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

TEST(OnnxNnOpsTest, GemmAttributesBecomeAddmmOnTransposedOperands) {
  ModelProto m = Model();
  AddInput(m, "a", {3, 4});
  AddInput(m, "b", {5, 3});
  AddInitializer(m, "c", {5}, {1, 2, 3, 4, 5});
  NodeProto* n = AddNode(m, "Gemm", {"a", "b", "c"}, {"y"});
  SetInt(n, "transA", 1);
  SetInt(n, "transB", 1);
  SetFloat(n, "alpha", 0.5f);
  SetFloat(n, "beta", 2.0f);
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), (std::vector<std::string>{"aten.permute.default",
                                                    "aten.permute.default",
                                                    "aten.addmm.default"}));
  const Node& addmm = (*g)->node((*g)->output_node().args[0].as_value().node);
  ASSERT_EQ(addmm.target, "aten.addmm.default");
  // addmm(self=c, mat1, mat2, beta, alpha).
  EXPECT_DOUBLE_EQ(addmm.args[3].as_scalar().to_double(), 2.0);
  EXPECT_DOUBLE_EQ(addmm.args[4].as_scalar().to_double(), 0.5);
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{3, 4}),
                               TensorMeta(DType::kFloat32, Shape{5, 3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{4, 5}));
}

TEST(OnnxNnOpsTest, UnsupportedAttributeValueIsRefused) {
  ModelProto m = Model(15);
  for (const char* name : {"x", "s", "b", "mean", "var"}) {
    AddInput(m, name, {name[0] == 'x' ? int64_t{2} : int64_t{3}});
  }
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(3);
  NodeProto* n =
      AddNode(m, "BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y"});
  SetInt(n, "spatial", 0);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "(BatchNormalization, domain 'ai.onnx', opset 15): only "
              "inference");
}

TEST(OnnxNnOpsTest, BatchNormTrainingModeUpdatesTheRunningStatistics) {
  ModelProto m = Model(15);
  AddInput(m, "x", {2, 3, 4});
  for (const char* name : {"s", "b", "mean", "var"}) AddInput(m, name, {3});
  NodeProto* n =
      AddNode(m, "BatchNormalization", {"x", "s", "b", "mean", "var"},
              {"y", "running_mean", "running_var"});
  SetInt(n, "training_mode", 1);
  for (const char* name : {"y", "running_mean", "running_var"}) {
    AddOutput(m, name);
  }
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<TensorMeta> outs =
      OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 3, 4}),
                        TensorMeta(DType::kFloat32, Shape{3}),
                        TensorMeta(DType::kFloat32, Shape{3}),
                        TensorMeta(DType::kFloat32, Shape{3}),
                        TensorMeta(DType::kFloat32, Shape{3})});
  ASSERT_EQ(outs.size(), 3u);
  EXPECT_EQ(outs[0].shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(outs[1].shape(), (Shape{3}));
  EXPECT_EQ(outs[2].shape(), (Shape{3}));
  // Batch statistics, not the running ones: no inference batch norm.
  for (const std::string& t : Targets(**g)) {
    EXPECT_EQ(t.find("batch_norm"), std::string::npos) << t;
  }
}

TEST(OnnxNnOpsTest, ConvTransposeOutputShapeAttribute) {
  ModelProto m = Model();
  AddInput(m, "x", {1, 1, 3, 3});
  AddInput(m, "w", {1, 2, 3, 3});
  NodeProto* n = AddNode(m, "ConvTranspose", {"x", "w"}, {"y"});
  auto* strides = n->add_attribute();
  strides->set_name("strides");
  strides->set_type(AttributeProto::INTS);
  strides->add_ints(3);
  strides->add_ints(2);
  auto* shape = n->add_attribute();
  shape->set_name("output_shape");
  shape->set_type(AttributeProto::INTS);
  shape->add_ints(10);
  shape->add_ints(8);
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 2, 10, 8}}));
}

}  // namespace
}  // namespace guardjit::testing
