// The mappings of ONNX operators by index patterns and the ones added with
// them: shapes and ATen targets of what each loads to (ONNX's node tests
// check the numbers: ONNX.md).

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/graph_loader.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/core/onnx/onnx_test_models.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;
TEST(OnnxStructureOpsTest, GatherNDWithBatchDims) {
  ModelProto m = Model();
  AddInput(m, "data", {2, 3, 4});
  AddInput(m, "indices", {2, 5, 1}, TensorProto::INT64);
  SetInt(AddNode(m, "GatherND", {"data", "indices"}, {"y"}), "batch_dims", 1);
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.index.Tensor"));
  // indices.shape[:-1] + data.shape[batch_dims + m:].
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 5, 4}}));
}

TEST(OnnxStructureOpsTest, ScatterNDAddsOrRefusesOtherReductions) {
  ModelProto m = Model(16);
  AddInput(m, "data", {4, 4});
  AddInput(m, "indices", {2, 1}, TensorProto::INT64);
  AddInput(m, "updates", {2, 4});
  NodeProto* n = AddNode(m, "ScatterND", {"data", "indices", "updates"}, {"y"});
  SetString(n, "reduction", "add");
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.index_put.default"));
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{4, 4}}));
  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_s("mul");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("reduction 'mul'"));
}

TEST(OnnxStructureOpsTest, CompressOfAKnownConditionSelects) {
  ModelProto m = Model();
  AddInput(m, "x", {3, 2});
  TensorProto* c = m.mutable_graph()->add_initializer();
  c->set_name("cond");
  c->set_data_type(TensorProto::BOOL);
  c->add_dims(3);
  for (int v : {1, 0, 1}) c->add_int32_data(v);
  SetInt(AddNode(m, "Compress", {"x", "cond"}, {"y"}), "axis", 0);
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 2}}));
}

TEST(OnnxStructureOpsTest, ConditionAndLengthInputsAreValueSpecialized) {
  ModelProto m = Model();
  AddInput(m, "x", {3, 2});
  AddInput(m, "cond", {3}, TensorProto::BOOL);
  AddNode(m, "Compress", {"x", "cond"}, {"y"});
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});

  m = Model();
  AddInput(m, "x", {4, 2, 3});
  AddInput(m, "lens", {2}, TensorProto::INT64);
  AddNode(m, "ReverseSequence", {"x", "lens"}, {"y"});
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});

  m = Model();
  AddInput(m, "x", {3, 4});
  AddInput(m, "k", {1}, TensorProto::INT64);
  AddNode(m, "TopK", {"x", "k"}, {"values", "indices"});
  AddOutputs(m, {"values", "indices"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});
}

}  // namespace
}  // namespace guardjit::testing
