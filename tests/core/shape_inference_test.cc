#include "core/shape_inference.h"

#include <vector>

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/core/toy_ops.h"

namespace guardjit {
namespace {

// InferShapes reports the failing node by index, for callers that must not
// parse its messages (GraphBuilder::Finish at a graph break).
TEST(ShapeInferenceTest, ReportsTheNodeThatFailed) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.AddNode("p' (", "aten.picky.default", {Arg::Ref("a")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("p' (")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  const std::vector<TensorMeta> inputs = {TensorMeta{DType::kFloat32, {2}}};

  int failed_node = 7;
  auto meta = InferShapes(**graph, inputs, &failed_node);
  ASSERT_FALSE(meta.ok());
  EXPECT_EQ(meta.status().message(),
            "node 'p' (' (aten.picky.default): argument 'self': too picky");
  EXPECT_EQ(failed_node, (*graph)->FindNode("p' ("));

  // No node failed: a wrong input count.
  failed_node = 7;
  EXPECT_FALSE(InferShapes(**graph, {}, &failed_node).ok());
  EXPECT_EQ(failed_node, -1);
}

TEST(ShapeInferenceTest, ReportsNoNodeOnSuccess) {
  GraphBuilder b("g", ToyOps());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("a")}).ok());
  auto graph = b.Finish();
  ASSERT_TRUE(graph.ok()) << graph.status();
  int failed_node = 7;
  auto meta =
      InferShapes(**graph, {TensorMeta{DType::kFloat32, {2}}}, &failed_node);
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(failed_node, -1);
}

}  // namespace
}  // namespace guardjit
