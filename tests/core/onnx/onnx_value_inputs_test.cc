#include "core/onnx/onnx_value_inputs.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/function.h"
#include "core/graph_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/core/recording_compiler.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// y = Reshape(x, shape) then `then_op` (Relu), as ONNX's node tests write
// it: the shape is a graph input.
ModelProto ReshapeModel(std::vector<int64_t> shape_dims = {2},
                        int shape_type = TensorProto::INT64,
                        const std::string& then_op = "Relu") {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3});
  AddInput(m, "shape", shape_dims, shape_type);
  AddNode(m, "Reshape", {"x", "shape"}, {"r"});
  AddNode(m, then_op, {"r"}, {"y"});
  AddOutput(m, "y");
  return m;
}

// The size list of the graph's view/reshape node.
std::vector<int64_t> ViewSizes(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.kind != NodeKind::kCallFunction) continue;
    if (absl::StartsWith(n.target, "aten.view") ||
        absl::StartsWith(n.target, "aten.reshape") ||
        absl::StartsWith(n.target, "aten._unsafe_view")) {
      std::vector<int64_t> out;
      for (const Arg& a : n.args[1].as_list()) out.push_back(a.as_int());
      return out;
    }
  }
  return {};
}

TEST(OnnxValueInputsTest, ShapeInputIsValueSpecialized) {
  auto g = Load(ReshapeModel());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});
  EXPECT_NE((*g)->rebuilder(), nullptr);
  EXPECT_GE((*g)->FindNode("#value_specialized"), 0);
  EXPECT_EQ((*g)->num_outputs(), 1);
  EXPECT_EQ((*g)->node((*g)->output_node().args[0].as_value().node).name, "y");
}

TEST(OnnxValueInputsTest, EachEntryIsTheModelImportedWithItsValues) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(
      std::shared_ptr<const Graph>(*Load(ReshapeModel())), compiler, {});
  Tensor x = *Tensor::Zeros(DType::kFloat32, {2, 3});
  auto call = [&](std::vector<int64_t> values) {
    Tensor shape = *Tensor::Zeros(DType::kInt64, {2});
    shape.data_as<int64_t>()[0] = values[0];
    shape.data_as<int64_t>()[1] = values[1];
    std::vector<Tensor> tensors = {x, shape};
    std::vector<InputView> views = {InputView::Of(x), InputView::Of(shape)};
    return f->Call(tensors, CallSignature{views, {}});
  };
  ASSERT_TRUE(call({3, 2}).ok());
  ASSERT_TRUE(call({3, 2}).ok());
  ASSERT_TRUE(call({-1, 1}).ok());
  ASSERT_EQ(compiler->graphs.size(), 2u);
  EXPECT_EQ(ViewSizes(*compiler->graphs[0]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(ViewSizes(*compiler->graphs[1]), (std::vector<int64_t>{6, 1}));
  ASSERT_EQ(f->RecompileReasons().size(), 1u);
  EXPECT_THAT(f->RecompileReasons()[0],
              HasSubstr("tensor 'shape' value mismatch (value-specialized). "
                        "expected [3, 2], actual [-1, 1]"));
  // Values the model refuses are an error of the call naming them.
  auto bad = call({4, 4});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("Reshape"));
  EXPECT_THAT(bad.status().message(), HasSubstr("shape = [4, 4]"));
}

TEST(OnnxValueInputsTest, InputsThatCannotBeSpecializedKeepTheRefusal) {
  // A shape of symbolic length: its values cannot be guarded by count.
  auto g = Load(ReshapeModel({-1}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("computed at run time"));
  // A later op the importer lacks is refused at load.
  g = Load(ReshapeModel({2}, TensorProto::INT64, "NoSuchOp"));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("operator NoSuchOp"));
}

}  // namespace
}  // namespace guardjit::testing
