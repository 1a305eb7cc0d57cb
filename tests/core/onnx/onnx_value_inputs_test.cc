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

ModelProto BareModel() {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  m.mutable_graph()->set_name("g");
  return m;
}

onnx::NodeProto* AddNode(ModelProto& m, const std::string& op,
                         std::vector<std::string> inputs,
                         const std::string& output) {
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

TEST(OnnxValueInputsTest, FloatInputsAreSpecializedWhenAskedFor) {
  // Resize(x, roi, scales) with tf_crop_and_resize: roi and scales are
  // floats the mapping asks for; x (as small) is data and stays an input.
  ModelProto m = BareModel();
  AddInput(m, "x", {1, 1, 2, 2}, TensorProto::FLOAT);
  AddInput(m, "roi", {8}, TensorProto::FLOAT);
  AddInput(m, "scales", {4}, TensorProto::FLOAT);
  auto* n = AddNode(m, "Resize", {"x", "roi", "scales"}, "y");
  auto* a = n->add_attribute();
  a->set_name("coordinate_transformation_mode");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("tf_crop_and_resize");
  m.mutable_graph()->add_output()->set_name("y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), (std::vector<int>{1, 2}));

  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(std::shared_ptr<const Graph>(*std::move(g)),
                             compiler, {});
  Tensor x = *Tensor::Zeros(DType::kFloat32, {1, 1, 2, 2});
  Tensor roi = *Tensor::Zeros(DType::kFloat32, {8});
  for (int k = 4; k < 8; ++k) roi.data_as<float>()[k] = 1;
  Tensor scales = *Tensor::Zeros(DType::kFloat32, {4});
  for (float& v : absl::MakeSpan(scales.data_as<float>(), 4)) v = 1;
  scales.data_as<float>()[3] = 1.5f;
  std::vector<Tensor> tensors = {x, roi, scales};
  std::vector<InputView> views;
  for (const Tensor& t : tensors) views.push_back(InputView::Of(t));
  ASSERT_TRUE(f->Call(tensors, CallSignature{views, {}}).ok());
  scales.data_as<float>()[3] = 2.5f;
  ASSERT_TRUE(f->Call(tensors, CallSignature{views, {}}).ok());
  ASSERT_EQ(f->RecompileReasons().size(), 1u);
  EXPECT_THAT(f->RecompileReasons()[0],
              HasSubstr("tensor 'scales' value mismatch (value-specialized). "
                        "expected [1, 1, 1, 1.5], actual [1, 1, 1, 2.5]"));
}

TEST(OnnxValueInputsTest, AnInputReachingANodeThroughACastIsSpecialized) {
  // Range(0, Cast(n), 1): the limit is a conversion of graph input n.
  ModelProto m = BareModel();
  AddInput(m, "n", {}, TensorProto::INT64);
  auto* cast = AddNode(m, "Cast", {"n"}, "limit");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(TensorProto::FLOAT);
  for (const char* name : {"zero", "one"}) {
    TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    t->add_float_data(name[0] == 'z' ? 0 : 1);
  }
  AddNode(m, "Range", {"zero", "limit", "one"}, "y");
  m.mutable_graph()->add_output()->set_name("y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{0});
}

TEST(OnnxValueInputsTest, TrainingDropoutIsTheIdentityOnlyAtRatioZero) {
  ModelProto m = BareModel();
  AddInput(m, "x", {2, 3}, TensorProto::FLOAT);
  AddInput(m, "ratio", {}, TensorProto::FLOAT);
  AddInput(m, "training", {}, TensorProto::BOOL);
  AddNode(m, "Dropout", {"x", "ratio", "training"}, "y");
  m.mutable_graph()->add_output()->set_name("y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), (std::vector<int>{1, 2}));
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(std::shared_ptr<const Graph>(*std::move(g)),
                             compiler, {});
  Tensor x = *Tensor::Zeros(DType::kFloat32, {2, 3});
  Tensor ratio = *Tensor::Zeros(DType::kFloat32, {});
  Tensor training = *Tensor::Zeros(DType::kBool, {});
  training.data_as<bool>()[0] = true;
  std::vector<Tensor> tensors = {x, ratio, training};
  std::vector<InputView> views;
  for (const Tensor& t : tensors) views.push_back(InputView::Of(t));
  EXPECT_TRUE(f->Call(tensors, CallSignature{views, {}}).ok());
  ratio.data_as<float>()[0] = 0.5f;
  auto random = f->Call(tensors, CallSignature{views, {}});
  ASSERT_FALSE(random.ok());
  EXPECT_THAT(random.status().message(),
              HasSubstr("training_mode true with ratio 0.5: the mask is "
                        "random"));
  training.data_as<bool>()[0] = false;
  EXPECT_TRUE(f->Call(tensors, CallSignature{views, {}}).ok());
}

}  // namespace
}  // namespace guardjit::testing
