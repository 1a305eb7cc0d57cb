// The Resize mapping: which ATen ops a Resize loads to, its output shapes,
// and its refusals (ONNX's node tests check the numbers: ONNX.md).

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/graph_loader.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace guardjit {
namespace {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;
using ::testing::HasSubstr;

ModelProto Model(int opset = 13) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void AddInput(ModelProto& m, const std::string& name, std::vector<int64_t> dims,
              int elem_type = TensorProto::FLOAT) {
  auto* t = m.mutable_graph()->add_input();
  t->set_name(name);
  auto* type = t->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  auto* shape = type->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

NodeProto* AddNode(ModelProto& m, const std::string& op,
                   std::vector<std::string> inputs,
                   std::vector<std::string> outputs) {
  NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(outputs[0]);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

void AddOutputs(ModelProto& m, std::vector<std::string> names) {
  for (auto& name : names) m.mutable_graph()->add_output()->set_name(name);
}

void SetString(NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::STRING);
  a->set_s(v);
}

void AddInt64Initializer(ModelProto& m, const std::string& name,
                         std::vector<int64_t> dims,
                         std::vector<int64_t> values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

absl::StatusOr<std::unique_ptr<Graph>> Load(const ModelProto& m) {
  return LoadGraphFromBinary(m.SerializeAsString(), {});
}

// The outputs' shapes for the graph's declared inputs.
std::vector<Shape> OutputShapes(const Graph& g) {
  std::vector<TensorMeta> inputs;
  for (int i : g.inputs()) inputs.push_back(*g.node(i).meta);
  auto metas = InferShapes(g, inputs);
  EXPECT_TRUE(metas.ok()) << metas.status();
  std::vector<Shape> out;
  if (!metas.ok()) return out;
  for (const Arg& a : g.output_node().args) {
    out.push_back((*metas)[a.as_value().node][a.as_value().index].shape());
  }
  return out;
}

void SetFloat(NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::FLOAT);
  a->set_f(v);
}

void AddFloatInitializer(ModelProto& m, const std::string& name,
                         std::vector<float> values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

int CountTarget(const Graph& g, const std::string& target) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.target == target;
  return n;
}

// Resize(x [1, 1, 2, 4], roi, scales) with the given mode attributes.
ModelProto ResizeModel(const std::string& mode, const std::string& coordinates,
                       std::vector<float> scales) {
  ModelProto m = Model(13);
  AddInput(m, "x", {1, 1, 2, 4});
  AddFloatInitializer(m, "scales", scales);
  NodeProto* n = AddNode(m, "Resize", {"x", "", "scales"}, {"y"});
  SetString(n, "mode", mode);
  SetString(n, "coordinate_transformation_mode", coordinates);
  AddOutputs(m, {"y"});
  return m;
}

TEST(OnnxResizeOpsTest, AtenUpsamplingWhereTheRulesAgree) {
  // asymmetric coordinates with floor rounding are ATen's nearest rule.
  ModelProto m = ResizeModel("nearest", "asymmetric", {1, 1, 2, 2});
  SetString(m.mutable_graph()->mutable_node(0), "nearest_mode", "floor");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_nearest2d.vec"), 1);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 4, 8}}));
  g = Load(ResizeModel("linear", "half_pixel", {1, 1, 2, 2}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_bilinear2d.vec"), 1);
}

TEST(OnnxResizeOpsTest, OtherRulesGatherAndWeighAxisByAxis) {
  // Cubic: four weighted gathers on each resized axis, none on the others.
  auto g = Load(ResizeModel("cubic", "half_pixel", {1, 1, 2, 0.5}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_bilinear2d.vec"), 0);
  EXPECT_EQ(CountTarget(**g, "aten.index_select.default"), 8);
  EXPECT_EQ(CountTarget(**g, "aten.mul.Tensor"), 8);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 4, 2}}));
  // Nearest downsampling: one gather per resized axis, no weights.
  g = Load(ResizeModel("nearest", "half_pixel", {1, 1, 0.6f, 0.6f}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.index_select.default"), 2);
  EXPECT_EQ(CountTarget(**g, "aten.mul.Tensor"), 0);
  // The reference truncates scale * size: 2 * 0.6 -> 1, 4 * 0.6 -> 2.
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 1, 2}}));
}

TEST(OnnxResizeOpsTest, CropAndResizeFillsTheExtrapolationValue) {
  ModelProto m = Model(13);
  AddInput(m, "x", {1, 1, 4, 4});
  AddFloatInitializer(m, "roi", {0, 0, 0.4f, 0.6f, 1, 1, 1.5f, 1.7f});
  AddInt64Initializer(m, "sizes", {4}, {1, 1, 3, 3});
  NodeProto* n = AddNode(m, "Resize", {"x", "roi", "", "sizes"}, {"y"});
  SetString(n, "mode", "linear");
  SetString(n, "coordinate_transformation_mode", "tf_crop_and_resize");
  SetFloat(n, "extrapolation_value", 10);
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  // Rows 1.65 * x + 1.2 and columns 1.65 * x + 1.8: the last of each is
  // past the input.
  EXPECT_EQ(CountTarget(**g, "aten.where.self"), 2);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 3, 3}}));
}

TEST(OnnxResizeOpsTest, RefusalsNameWhatIsWrong) {
  auto g = Load(ResizeModel("area", "half_pixel", {1, 1, 2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("mode 'area'"));
  g = Load(ResizeModel("linear", "half_pixel", {1, 2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("3 scales for a rank-4 input"));
  g = Load(ResizeModel("linear", "half_pixel", {1, 1, -2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("is not positive"));
  // Weighted resizing of integers is refused (nearest gathers them).
  ModelProto m = ResizeModel("cubic", "half_pixel", {1, 1, 2, 2});
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::INT32);
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("of a int32 input"));
}

}  // namespace
}  // namespace guardjit
