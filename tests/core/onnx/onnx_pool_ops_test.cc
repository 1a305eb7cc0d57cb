// ONNX's pooling operators (core/onnx/onnx_pool_ops.cc): MaxPool's indices,
// AveragePool's padded windows, LRN.

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

TEST(OnnxPoolOpsTest, MaxPoolIndicesAndLrn) {
  ModelProto m = Model();
  AddInput(m, "x", {1, 2, 4, 4});
  NodeProto* n = AddNode(m, "MaxPool", {"x"}, {"y", "i"});
  auto* k = n->add_attribute();
  k->set_name("kernel_shape");
  k->set_type(AttributeProto::INTS);
  k->add_ints(2);
  k->add_ints(2);
  AddOutputs(m, {"y", "i"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g),
            (std::vector<Shape>{{1, 2, 3, 3}, {1, 2, 3, 3}}));
  // Column-major indices: the plane's row and column recomputed.
  SetInt(m.mutable_graph()->mutable_node(0), "storage_order", 1);
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.div.Tensor_mode"));
  EXPECT_EQ(OutputShapes(**g),
            (std::vector<Shape>{{1, 2, 3, 3}, {1, 2, 3, 3}}));
  // Not for a 3-D pool.
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(4);
  k->add_ints(2);
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(),
              HasSubstr("3-D pool in column-major storage_order"));

  m = Model();
  AddInput(m, "x", {1, 5, 2, 2});
  SetInt(AddNode(m, "LRN", {"x"}, {"y"}), "size", 3);
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 5, 2, 2}}));
}

TEST(OnnxPoolOpsTest, AveragePoolCountsThePaddedWindow) {
  ModelProto m = Model();
  AddInput(m, "x", {1, 1, 5, 5});
  NodeProto* n = AddNode(m, "AveragePool", {"x"}, {"y"});
  for (auto [name, values] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"kernel_shape", {3, 3}}, {"pads", {0, 0, 2, 2}}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.div.Tensor"));  // by the counted elements
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 5, 5}}));
}

}  // namespace
}  // namespace guardjit::testing
