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
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

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
  ModelProto m = Model(14);
  AddInput(m, "x", {-1, 3});
  AddNode(m, "Trilu", {"x"}, {"y"});
  AddOutput(m, "y");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "ONNX node 0 'y' (Trilu, domain 'ai.onnx', opset 14): needs "
              "the sizes of input 0 ('x') at load");
}

// y = If(cond) then Relu(x) else Neg(x); `cond` is made by `add_cond`.
ModelProto IfModel(void (*add_cond)(ModelProto&)) {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3});
  add_cond(m);
  NodeProto* n = AddNode(m, "If", {"cond"}, {"y"});
  onnx::GraphProto* then_branch =
      AddAttribute(n, "then_branch", AttributeProto::GRAPH)->mutable_g();
  then_branch->set_name("then");
  NodeProto* relu = then_branch->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("then_y");
  then_branch->add_output()->set_name("then_y");
  onnx::GraphProto* else_branch =
      AddAttribute(n, "else_branch", AttributeProto::GRAPH)->mutable_g();
  else_branch->set_name("else");
  NodeProto* neg = else_branch->add_node();
  neg->set_op_type("Neg");
  neg->add_input("x");
  neg->add_output("else_y");
  else_branch->add_output()->set_name("else_y");
  AddOutput(m, "y");
  return m;
}

void ConstantFalse(ModelProto& m) {
  TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name("cond");
  t->set_data_type(TensorProto::BOOL);
  t->add_int32_data(0);
}

TEST(OnnxImportTest, IfWithAConditionKnownAtLoadImportsItsBranch) {
  auto g = Load(IfModel(ConstantFalse));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.neg.default"));
  EXPECT_FALSE(HasTarget(**g, "aten.relu.default"));
  EXPECT_EQ((*g)->node((*g)->output_node().args[0].as_value().node).name, "y");
}

TEST(OnnxImportTest, IfOnAGraphInputIsValueSpecialized) {
  auto g = Load(IfModel(
      [](ModelProto& m) { AddInput(m, "cond", {}, TensorProto::BOOL); }));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});
}

TEST(OnnxImportTest, IfOnTensorValuesIsRefusedNamingTheCondition) {
  auto g = Load(IfModel([](ModelProto& m) {
    AddNode(m, "ReduceMax", {"x"}, {"top"});
    SetInt(m.mutable_graph()->mutable_node(0), "keepdims", 0);
    AddInitializer(m, "zero", {}, {0});
    AddNode(m, "Greater", {"top", "zero"}, {"cond"});
  }));
  ExpectError(g, absl::StatusCode::kUnimplemented,
              "(If, domain 'ai.onnx', opset 13): the condition 'cond' is "
              "computed at run time from tensor values");
  // A branch's node that fails is named inside the If.
  ModelProto m = IfModel(ConstantFalse);
  m.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(1)
      ->mutable_g()
      ->mutable_node(0)
      ->set_op_type("NoSuchOp");
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "else_branch node 0 'else_y' (NoSuchOp): operator NoSuchOp");
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
}  // namespace guardjit::testing
