// The RNN, GRU and LSTM mappings: what they unroll to, their output shapes
// and refusals (ONNX's node tests check the numbers: ONNX.md).

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

int CountTarget(const Graph& g, const std::string& target) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.target == target;
  return n;
}

// `op` over X [seq 3, batch 2, input 4] with hidden size 5, outputs Y and
// Y_h (and Y_c for LSTM).
ModelProto Recurrent(const std::string& op, int gates, int layout = 0) {
  ModelProto m = Model(14);
  AddInput(m, "X",
           layout == 0 ? std::vector<int64_t>{3, 2, 4}
                       : std::vector<int64_t>{2, 3, 4});
  AddInput(m, "W", {1, gates * 5, 4});
  AddInput(m, "R", {1, gates * 5, 5});
  AddInput(m, "B", {1, 2 * gates * 5});
  std::vector<std::string> outputs = {"Y", "Y_h"};
  if (op == "LSTM") outputs.push_back("Y_c");
  NodeProto* n = AddNode(m, op, {"X", "W", "R", "B"}, outputs);
  SetInt(n, "hidden_size", 5);
  if (layout != 0) SetInt(n, "layout", layout);
  AddOutputs(m, outputs);
  return m;
}

TEST(OnnxRnnOpsTest, UnrollsOneRecurrentProductPerStep) {
  for (auto [op, gates] :
       {std::pair<const char*, int>{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
    auto g = Load(Recurrent(op, gates));
    ASSERT_TRUE(g.ok()) << op << ": " << g.status();
    // The input projection of all steps, then one per step (GRU's hidden
    // gate has its own product after the reset).
    EXPECT_EQ(CountTarget(**g, "aten.addmm.default"),
              1 + 3 * (std::string(op) == "GRU" ? 2 : 1))
        << op;
    std::vector<Shape> want = {{3, 1, 2, 5}, {1, 2, 5}};
    if (std::string(op) == "LSTM") want.push_back({1, 2, 5});
    EXPECT_EQ(OutputShapes(**g), want) << op;
  }
}

TEST(OnnxRnnOpsTest, BatchwiseLayout) {
  auto g = Load(Recurrent("GRU", 3, /*layout=*/1));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 3, 1, 5}, {2, 1, 5}}));
}

TEST(OnnxRnnOpsTest, RefusesWhatItDoesNotUnroll) {
  ModelProto m = Recurrent("LSTM", 4);
  SetString(m.mutable_graph()->mutable_node(0), "direction", "bidirectional");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("direction 'bidirectional'"));

  m = Recurrent("RNN", 1);
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("activations");
  a->set_type(AttributeProto::STRINGS);
  a->add_strings("Relu");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("activations [Relu]"));

  // Attributes the mapping does not read (clip) are refused by name.
  m = Recurrent("GRU", 3);
  auto* clip = m.mutable_graph()->mutable_node(0)->add_attribute();
  clip->set_name("clip");
  clip->set_type(AttributeProto::FLOAT);
  clip->set_f(1);
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'clip'"));

  // sequence_lens shorter than the sequence would need masking.
  m = Recurrent("RNN", 1);
  AddInt64Initializer(m, "lens", {2}, {3, 2});
  m.mutable_graph()->mutable_node(0)->add_input("lens");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("sequence_lens [3, 2]"));
}

}  // namespace
}  // namespace guardjit
