#include "core/graph_rewriter.h"

#include <memory>
#include <string>

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

// x (value-specialized int64 [2]) and w (a constant) -> relu(w) ->
// getitem(max.dim(relu)) -> output; the rewrite replaces relu by neg.
std::unique_ptr<Graph> Source() {
  GraphBuilder b("g");
  EXPECT_TRUE(
      b.AddPlaceholder("x", TensorMeta(DType::kInt64, {SymInt(2)})).ok());
  EXPECT_TRUE(b.MarkValueSpecialized("x").ok());
  EXPECT_TRUE(
      b.AddConstant("w", testing::RandomTensor(DType::kFloat32, {3, 4}, 1))
          .ok());
  EXPECT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("w")}).ok());
  EXPECT_TRUE(b.AddNode("m", "aten.max.dim", {Arg::Ref("r"), Arg::Int(1)},
                        {{"keepdim", Arg::Bool(true)}})
                  .ok());
  EXPECT_TRUE(b.AddNode("v", "getitem", {Arg::Ref("m"), Arg::Int(0)}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("v"), Arg::Ref("x")}).ok());
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  EXPECT_TRUE(g.ok()) << g.status();
  return *std::move(g);
}

TEST(GraphRewriterTest, CopiesWhatItDoesNotReplace) {
  const std::unique_ptr<Graph> source = Source();
  GraphRewriter rw(*source);
  int replaced = -1;
  for (int i = 0; i < static_cast<int>(source->nodes().size()); ++i) {
    const Node& node = source->node(i);
    if (node.name != "r") {
      ASSERT_TRUE(rw.Copy(i).ok()) << node.name;
      continue;
    }
    // A new name: "r" is taken by the source.
    const std::string name = rw.UniqueName("r");
    EXPECT_EQ(name, "r_");
    absl::StatusOr<ValueRef> neg = rw.builder().AddNode(
        name, "aten.neg.default", {rw.Remap(node.args[0])});
    ASSERT_TRUE(neg.ok()) << neg.status();
    replaced = neg->node;
    rw.Map(i, {Arg::Value(*neg)});
  }
  absl::StatusOr<std::unique_ptr<Graph>> out = rw.Finish();
  ASSERT_TRUE(out.ok()) << out.status();
  const Graph& g = **out;
  ASSERT_EQ(g.nodes().size(), source->nodes().size());
  // The placeholder keeps its metadata and its value specialization.
  EXPECT_TRUE(g.node(0).specialize_value);
  ASSERT_TRUE(g.node(0).meta.has_value());
  EXPECT_EQ(g.node(0).meta->dtype, DType::kInt64);
  // Kwargs stay bound; the max reads the replacement.
  const Node& max = g.node(3);
  EXPECT_EQ(max.target, "aten.max.dim");
  EXPECT_EQ(max.args[0].as_value().node, replaced);
  EXPECT_TRUE(max.args[2].as_bool());
  // Copies map back to their source nodes; the replacement to none.
  const std::vector<int>& from = rw.source_node();
  EXPECT_EQ(from[0], 0);
  EXPECT_EQ(from[1], 1);
  EXPECT_EQ(from[replaced], -1);
  EXPECT_EQ(from.back(), static_cast<int>(source->nodes().size()) - 1);
}

}  // namespace
}  // namespace guardjit
