#include "core/onnx/onnx_import.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/graph_loader.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace guardjit {
namespace {

using onnx::AttributeProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

ModelProto Model(int opset = 13) {
  ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// dims: -1 is a dim_param "batch".
void AddInput(ModelProto& m, const std::string& name, std::vector<int64_t> dims,
              int elem_type = TensorProto::FLOAT) {
  auto* t = m.mutable_graph()->add_input();
  t->set_name(name);
  auto* type = t->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  auto* shape = type->mutable_shape();
  for (int64_t d : dims) {
    if (d < 0) {
      shape->add_dim()->set_dim_param("batch");
    } else {
      shape->add_dim()->set_dim_value(d);
    }
  }
}

NodeProto* AddNode(ModelProto& m, const std::string& op,
                   std::vector<std::string> inputs,
                   std::vector<std::string> outputs) {
  NodeProto* n = m.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(outputs.empty() ? op : outputs[0]);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

void AddOutput(ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

void SetInt(NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}
void SetFloat(NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::FLOAT);
  a->set_f(v);
}

void AddInitializer(ModelProto& m, const std::string& name,
                    std::vector<int64_t> dims, std::vector<float> values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

absl::StatusOr<std::unique_ptr<Graph>> Load(const ModelProto& m,
                                            GraphLoadOptions options = {}) {
  return LoadGraphFromBinary(m.SerializeAsString(), options);
}

// Output metadata of a loaded graph for its declared static inputs.
std::vector<TensorMeta> OutputMetas(const Graph& g,
                                    const std::vector<TensorMeta>& inputs) {
  auto metas = InferShapes(g, inputs);
  EXPECT_TRUE(metas.ok()) << metas.status();
  std::vector<TensorMeta> out;
  if (!metas.ok()) return out;
  for (const Arg& a : g.output_node().args) {
    out.push_back((*metas)[a.as_value().node][a.as_value().index]);
  }
  return out;
}

std::vector<std::string> Targets(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) {
    if (n.kind == NodeKind::kCallFunction) out.push_back(n.target);
  }
  return out;
}

void ExpectError(const absl::StatusOr<std::unique_ptr<Graph>>& g,
                 absl::StatusCode code, const std::string& fragment) {
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), code) << g.status();
  EXPECT_TRUE(absl::StrContains(g.status().message(), fragment))
      << g.status() << "\n  wanted: " << fragment;
}

TEST(OnnxImportTest, AddBroadcastsLikeNumpy) {
  ModelProto m = Model();
  AddInput(m, "a", {2, 1, 3});
  AddInput(m, "b", {4, 1});
  AddNode(m, "Add", {"a", "b"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.add.Tensor"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 1, 3}),
                               TensorMeta(DType::kFloat32, Shape{4, 1})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 3}));
}

TEST(OnnxImportTest, GemmAttributesBecomeAddmmOnTransposedOperands) {
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

TEST(OnnxImportTest, StaticInputsCarryTheirMetadata) {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3}, TensorProto::INT64);
  AddNode(m, "Neg", {"x"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& x = (*g)->node((*g)->inputs()[0]);
  ASSERT_TRUE(x.meta.has_value());
  EXPECT_EQ(x.meta->dtype, DType::kInt64);
  EXPECT_EQ(x.meta->shape(), (Shape{2, 3}));
}

TEST(OnnxImportTest, ShapeArithmeticOnStaticSizesFolds) {
  // Reshape(x, Concat(Gather(Shape(x), 0), [-1])): the shape is known at
  // load, so the graph holds only the reshape.
  ModelProto m = Model();
  AddInput(m, "x", {2, 3, 4});
  AddNode(m, "Shape", {"x"}, {"s"});
  TensorProto* zero = m.mutable_graph()->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(TensorProto::INT64);
  zero->add_int64_data(0);
  zero->add_dims(1);
  TensorProto* minus = m.mutable_graph()->add_initializer();
  minus->set_name("minus");
  minus->set_data_type(TensorProto::INT64);
  minus->add_int64_data(-1);
  minus->add_dims(1);
  AddNode(m, "Gather", {"s", "zero"}, {"batch"});
  NodeProto* cat = AddNode(m, "Concat", {"batch", "minus"}, {"shape"});
  SetInt(cat, "axis", 0);
  AddNode(m, "Reshape", {"x", "shape"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), (std::vector<std::string>{"aten.clone.default",
                                                    "aten.view.default"}));
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 12}));
}

TEST(OnnxImportTest, DimParamInputsLoadWhereNoSizeIsNeeded) {
  ModelProto m = Model();
  AddInput(m, "x", {-1, 3});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE((*g)->node((*g)->inputs()[0]).meta.has_value());
}

// The value infos of the graph's inputs and outputs are its declared specs
// (what gj_graph_input_* and a server's model description read).
TEST(OnnxImportTest, ValueInfosDeclareTheInputAndOutputSpecs) {
  ModelProto m = Model();
  AddInput(m, "x", {-1, 3});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  auto* type = m.mutable_graph()->mutable_output(0)->mutable_type();
  type->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  auto* shape = type->mutable_tensor_type()->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(3);
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const std::vector<IoDim> dims = {IoDim::Dynamic("batch"), IoDim::Static(3)};
  EXPECT_EQ((*g)->input_spec(0).dtype, DType::kFloat32);
  EXPECT_EQ((*g)->input_spec(0).dims, dims);
  EXPECT_EQ((*g)->output_spec(0).dtype, DType::kFloat32);
  EXPECT_EQ((*g)->output_spec(0).dims, dims);
}

// A mapping adds several nodes named after the ONNX output; the one that
// computes a graph output gets its exact name (gj_graph_output_name).
TEST(OnnxImportTest, GraphOutputsKeepTheirOnnxNames) {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3});
  AddInitializer(m, "w", {4, 3}, std::vector<float>(12, 0.5f));
  NodeProto* gemm = AddNode(m, "Gemm", {"x", "w"}, {"logits"});
  SetInt(gemm, "transB", 1);
  AddNode(m, "Relu", {"logits"}, {"relu"});
  AddOutput(m, "relu");
  AddOutput(m, "logits");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node& out = (*g)->output_node();
  ASSERT_EQ(out.args.size(), 2u);
  EXPECT_EQ((*g)->node(out.args[0].as_value().node).name, "relu");
  EXPECT_EQ((*g)->node(out.args[1].as_value().node).name, "logits");
}

TEST(OnnxImportTest, OutputValueInfoThatContradictsTheGraphIsInvalid) {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  auto* type = m.mutable_graph()->mutable_output(0)->mutable_type();
  type->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  type->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(6);
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "output 0 ('y') is declared float32[6] but the graph computes");
}

TEST(OnnxImportTest, DimParamSizeNeededAtLoadIsRefused) {
  ModelProto m = Model();
  AddInput(m, "x", {-1, 3});
  NodeProto* n = AddNode(m, "Flatten", {"x"}, {"y"});
  SetInt(n, "axis", 1);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Flatten, domain 'ai.onnx', opset 13): needs "
              "the sizes of input 0 ('x') at load");
}

TEST(OnnxImportTest, UnknownOpNamesNodeOpDomainAndOpset) {
  ModelProto m = Model(11);
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"r"});
  AddNode(m, "FancyOp", {"r"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 1 'y' (FancyOp, domain 'ai.onnx', opset 11): "
              "operator FancyOp is not supported");
}

TEST(OnnxImportTest, UnknownAttributeIsRefused) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  SetInt(AddNode(m, "Relu", {"x"}, {"y"}), "fancy", 1);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Relu, domain 'ai.onnx', opset 13): attribute "
              "'fancy' is not supported");
}

TEST(OnnxImportTest, UnsupportedAttributeValueIsRefused) {
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

TEST(OnnxImportTest, BatchNormTrainingModeUpdatesTheRunningStatistics) {
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

TEST(OnnxImportTest, AttributeOfTheWrongTypeIsInvalid) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  SetInt(AddNode(m, "LeakyRelu", {"x"}, {"y"}), "alpha", 1);
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "attribute 'alpha' is INT, expected FLOAT");
}

TEST(OnnxImportTest, OtherDomainIsRefused) {
  ModelProto m = Model();
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  AddInput(m, "x", {2});
  AddNode(m, "Gelu", {"x"}, {"y"})->set_domain("com.microsoft");
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "(Gelu, domain 'com.microsoft', opset 13): operators of domain "
              "'com.microsoft' are not supported");
}

TEST(OnnxImportTest, MissingInitializerNamesTheValue) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  AddNode(m, "Add", {"x", "w"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "ONNX node 0 'y' (Add, domain 'ai.onnx', opset 13): value 'w' is "
              "not defined before its use");
}

TEST(OnnxImportTest, InitializerOfTheWrongSizeIsInvalid) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  AddInitializer(m, "w", {3}, {1, 2});
  AddNode(m, "Add", {"x", "w"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
              "initializer 'w': float_data holds 2 values, expected 3");
}

TEST(OnnxImportTest, TruncatedBytesAreMalformed) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  const std::string bytes = m.SerializeAsString();
  GraphLoadOptions options;
  options.format = GraphFormat::kOnnx;
  auto g = LoadGraphFromBinary(bytes.substr(0, bytes.size() - 3), options);
  ExpectError(g, absl::StatusCode::kInvalidArgument, "malformed ONNX model");
}

TEST(OnnxImportTest, OpsetOutsideTheSupportedRangeIsRefused) {
  ModelProto m = Model(21);
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "opset 21 of the default domain; supported: 7 to 20");
  m.mutable_opset_import(0)->set_version(0);
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "opset 0 of the default domain; supported: 7 to 20");
}

// Below opset 7, operators whose definition did not change since are read
// (Relu-6 only dropped Relu-1's consumed_inputs); others are refused per
// node: Add-6's `broadcast` is not ONNX 7's broadcasting.
TEST(OnnxImportTest, OlderOpsetsOfUnchangedOperators) {
  ModelProto m = Model(6);
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.relu.default"});
  m.mutable_opset_import(0)->set_version(5);
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "(Relu, domain 'ai.onnx', opset 5): opset 5 of the default "
              "domain: the importer reads Relu from opset 6");
  m = Model(6);
  AddInput(m, "a", {2});
  AddInput(m, "b", {2});
  AddNode(m, "Add", {"a", "b"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "the importer reads Add from opset 7");
  m = Model(1);
  AddInput(m, "x", {2}, TensorProto::BOOL);
  AddNode(m, "Not", {"x"}, {"y"});
  AddOutput(m, "y");
  EXPECT_TRUE(Load(m).ok());
}

void AddInt64Initializer(ModelProto& m, const std::string& name,
                         std::vector<int64_t> values) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

// What torch.onnx.export writes by default (opset 20): reductions take their
// axes as an input from opset 18.
TEST(OnnxImportTest, Opset18ReductionsReadTheAxesInput) {
  ModelProto m = Model(20);
  AddInput(m, "x", {2, 3, 4});
  AddInt64Initializer(m, "axes", {1});
  SetInt(AddNode(m, "ReduceMean", {"x", "axes"}, {"y"}), "keepdims", 0);
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.mean.dim"});
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{2, 3, 4})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 4}));
  // An axes attribute is opset 17's: at 18 nothing reads it.
  ModelProto old = Model(18);
  AddInput(old, "x", {2, 3});
  NodeProto* n = AddNode(old, "ReduceMax", {"x"}, {"y"});
  auto* axes = n->add_attribute();
  axes->set_name("axes");
  axes->set_type(AttributeProto::INTS);
  axes->add_ints(0);
  AddOutput(old, "y");
  ExpectError(Load(old), absl::StatusCode::kUnimplemented,
              "(ReduceMax, domain 'ai.onnx', opset 18): attribute 'axes' is "
              "not supported");
}

TEST(OnnxImportTest, Opset18SplitNumOutputsMakesTheLastChunkSmaller) {
  ModelProto m = Model(18);
  AddInput(m, "x", {5, 2});
  SetInt(AddNode(m, "Split", {"x"}, {"a", "b"}), "num_outputs", 2);
  AddOutput(m, "a");
  AddOutput(m, "b");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  auto out = OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{5, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 2}));

  ModelProto wrong = Model(18);
  AddInput(wrong, "x", {5, 2});
  SetInt(AddNode(wrong, "Split", {"x"}, {"a", "b"}), "num_outputs", 3);
  AddOutput(wrong, "a");
  ExpectError(Load(wrong), absl::StatusCode::kInvalidArgument,
              "(Split, domain 'ai.onnx', opset 18): num_outputs 3 but the "
              "node has 2 outputs");
}

TEST(OnnxImportTest, Opset20GeluMapsToAtenGelu) {
  ModelProto m = Model(20);
  AddInput(m, "x", {4});
  NodeProto* n = AddNode(m, "Gelu", {"x"}, {"y"});
  auto* a = n->add_attribute();
  a->set_name("approximate");
  a->set_type(AttributeProto::STRING);
  a->set_s("tanh");
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_EQ(Targets(**g), std::vector<std::string>{"aten.gelu.default"});
  for (const Node& node : (*g)->nodes()) {
    if (node.target != "aten.gelu.default") continue;
    ASSERT_EQ(node.args.size(), 2u);  // gelu(self, *, approximate)
    ASSERT_TRUE(node.args[1].is_string());
    EXPECT_EQ(node.args[1].as_string(), "tanh");
  }
  m.mutable_opset_import(0)->set_version(17);
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Gelu, domain 'ai.onnx', opset 17): Gelu is an "
              "operator of opset 20 and later");
}

TEST(OnnxImportTest, Opset18PadAxesInputIsRefused) {
  ModelProto m = Model(18);
  AddInput(m, "x", {2, 3});
  AddInt64Initializer(m, "pads", {1, 1});
  AddInitializer(m, "value", {}, {0.0f});
  AddInt64Initializer(m, "axes", {1});
  AddNode(m, "Pad", {"x", "pads", "value", "axes"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "(Pad, domain 'ai.onnx', opset 18): the axes input (opset 18)");
}

TEST(OnnxImportTest, UnsupportedInputTypeIsRefused) {
  ModelProto m = Model();
  AddInput(m, "x", {2}, TensorProto::UINT16);
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "graph input 'x': element type UINT16 has no guardjit dtype");
}

TEST(OnnxImportTest, ExternalDataInitializersLoadRelativeToTheModel) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "onnx_external";
  std::filesystem::create_directories(dir);
  const float values[] = {1, 2, 3};
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    f.write("pad!", 4);
    f.write(reinterpret_cast<const char*>(values), sizeof values);
  }
  ModelProto m = Model();
  AddInput(m, "x", {3});
  TensorProto* w = m.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(TensorProto::EXTERNAL);
  auto add = [&](const char* k, const char* v) {
    auto* e = w->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", "weights.bin");
  add("offset", "4");
  add("length", "12");
  AddNode(m, "Mul", {"x", "w"}, {"y"});
  AddOutput(m, "y");
  {
    std::ofstream f(dir / "model.data", std::ios::binary);  // not .onnx
    f << m.SerializeAsString();
  }
  auto g = LoadGraphFromFile((dir / "model.data").string());
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* constant = nullptr;
  for (const Node& n : (*g)->nodes()) {
    if (n.kind == NodeKind::kConstant) constant = &n;
  }
  ASSERT_NE(constant, nullptr);
  EXPECT_EQ(constant->constant.data_as<float>()[2], 3.0f);

  std::filesystem::remove(dir / "weights.bin");
  ExpectError(LoadGraphFromFile((dir / "model.data").string()),
              absl::StatusCode::kNotFound,
              "initializer 'w': cannot open external data");
}

TEST(OnnxImportTest, OnnxBytesLoadWhateverTheFileIsCalled) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  const std::string path = ::testing::TempDir() + "/relu_model.pbtxt";
  {
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
  }
  auto g = LoadGraphFromFile(path);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Targets(**g), std::vector<std::string>{"aten.relu.default"});
}

TEST(OnnxImportTest, GuardjitFormatOptionSkipsDetection) {
  ModelProto m = Model();
  AddInput(m, "x", {2});
  AddNode(m, "Relu", {"x"}, {"y"});
  AddOutput(m, "y");
  GraphLoadOptions options;
  options.format = GraphFormat::kGuardjit;
  auto g = LoadGraphFromBinary(m.SerializeAsString(), options);
  EXPECT_FALSE(g.ok());
}

}  // namespace
}  // namespace guardjit
