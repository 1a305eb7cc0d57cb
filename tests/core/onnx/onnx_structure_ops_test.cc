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

void SetInt(NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
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

bool HasTarget(const Graph& g, const std::string& target) {
  for (const Node& n : g.nodes()) {
    if (n.target == target) return true;
  }
  return false;
}

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

TEST(OnnxStructureOpsTest, TopKOfAKnownK) {
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

TEST(OnnxStructureOpsTest, EinsumForms) {
  struct Case {
    std::string equation;
    std::vector<std::vector<int64_t>> inputs;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{
           {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5}},
           {"ij,jk", {{3, 4}, {4, 5}}, {3, 5}},
           {"ij->ji", {{3, 4}}, {4, 3}},
           {"...ii->...i", {{2, 3, 3}}, {2, 3}},
           {"i,i", {{5}, {5}}, {}},
       }) {
    ModelProto m = Model(12);
    std::vector<std::string> names;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      names.push_back("x" + std::to_string(i));
      AddInput(m, names.back(), c.inputs[i]);
    }
    SetString(AddNode(m, "Einsum", names, {"y"}), "equation", c.equation);
    AddOutputs(m, {"y"});
    auto g = Load(m);
    ASSERT_TRUE(g.ok()) << c.equation << ": " << g.status();
    EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{c.out})) << c.equation;
  }
  ModelProto m = Model(12);
  AddInput(m, "x", {3, 4});
  SetString(AddNode(m, "Einsum", {"x"}, {"y"}), "equation", "i1->i");
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("malformed term"));
}

TEST(OnnxStructureOpsTest, ConvTransposeOutputShapeAndAveragePoolPads) {
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

  m = Model();
  AddInput(m, "x", {1, 1, 5, 5});
  n = AddNode(m, "AveragePool", {"x"}, {"y"});
  for (auto [name, values] :
       std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"kernel_shape", {3, 3}}, {"pads", {0, 0, 2, 2}}}) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.div.Tensor"));  // by the counted elements
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 5, 5}}));
}

TEST(OnnxStructureOpsTest, MaxPoolIndicesLrnAndWindows) {
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

  // A window's size as a graph input is value-specialized.
  m = Model(17);
  AddInput(m, "size", {}, TensorProto::INT64);
  AddNode(m, "HannWindow", {"size"}, {"y"});
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{0});
  // Of a known size it is a constant.
  m = Model(17);
  AddInt64Initializer(m, "size", {}, {8});
  SetInt(AddNode(m, "BlackmanWindow", {"size"}, {"y"}), "periodic", 0);
  AddOutputs(m, {"y"});
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{8}}));
}

}  // namespace
}  // namespace guardjit
