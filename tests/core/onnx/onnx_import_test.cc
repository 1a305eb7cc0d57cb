#include "core/onnx/onnx_import.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "core/graph_breaks.h"
#include "core/graph_loader.h"
#include "core/ops/control_flow.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

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

// Adds If node `n`'s attribute `attr` (then_branch or else_branch): a graph
// of one `op` node over `inputs` computing `output`, the branch's output.
NodeProto* AddBranch(NodeProto* n, const std::string& attr,
                     const std::string& op,
                     const std::vector<std::string>& inputs,
                     const std::string& output) {
  onnx::GraphProto* branch =
      AddAttribute(n, attr, AttributeProto::GRAPH)->mutable_g();
  branch->set_name(attr);
  NodeProto* node = branch->add_node();
  node->set_op_type(op);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  branch->add_output()->set_name(output);
  return node;
}

// y = If(cond) then Relu(x) else Neg(x); `cond` is made by `add_cond`.
ModelProto IfModel(void (*add_cond)(ModelProto&)) {
  ModelProto m = Model();
  AddInput(m, "x", {2, 3});
  add_cond(m);
  NodeProto* n = AddNode(m, "If", {"cond"}, {"y"});
  AddBranch(n, "then_branch", "Relu", {"x"}, "then_y");
  AddBranch(n, "else_branch", "Neg", {"x"}, "else_y");
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

// cond = ReduceMax(x) > 0: computed from tensor values.
void ValueCondition(ModelProto& m) {
  AddNode(m, "ReduceMax", {"x"}, {"top"});
  SetInt(m.mutable_graph()->mutable_node(0), "keepdims", 0);
  AddInitializer(m, "zero", {}, {0});
  AddNode(m, "Greater", {"top", "zero"}, {"cond"});
}

const Node* CondNode(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.target == kCondTarget) return &n;
  }
  return nullptr;
}

// A condition computed from tensor values becomes a cond whose predicate
// breaks the graph there (the host reads it and runs the branch it picks).
TEST(OnnxImportTest, IfOnTensorValuesIsACondThatBreaksTheGraph) {
  auto g = Load(IfModel(ValueCondition));
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* cond = CondNode(**g);
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->name, "y.if");
  const Graph* then_graph = (*g)->subgraph(cond->args[kCondTrue].as_subgraph());
  const Graph* else_graph =
      (*g)->subgraph(cond->args[kCondFalse].as_subgraph());
  ASSERT_NE(then_graph, nullptr);
  ASSERT_NE(else_graph, nullptr);
  EXPECT_TRUE(HasTarget(*then_graph, "aten.relu.default"));
  EXPECT_TRUE(HasTarget(*else_graph, "aten.neg.default"));
  // x, the one value the branches read, is the cond's operand.
  ASSERT_EQ(cond->args[kCondOperands].as_list().size(), 1u);
  std::optional<GraphBreak> at = FindGraphBreak(**g);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(at->kind, GraphBreak::Kind::kPredicate);
  EXPECT_THAT(at->reason,
              HasSubstr("data-dependent predicate: cond 'y.if' reads the "
                        "value of 'cond'"));
}

TEST(OnnxImportTest, IfConditionsOfOtherThanOneBoolAreInvalid) {
  ExpectError(Load(IfModel([](ModelProto& m) {
                AddNode(m, "ReduceMax", {"x"}, {"top"});
                SetInt(m.mutable_graph()->mutable_node(0), "keepdims", 0);
                AddNode(m, "Cast", {"top"}, {"cond"});
                SetInt(m.mutable_graph()->mutable_node(1), "to",
                       TensorProto::INT64);
              })),
              absl::StatusCode::kInvalidArgument,
              "the condition 'cond' is int64, not bool");
  ExpectError(Load(IfModel([](ModelProto& m) {
                AddInitializer(m, "zero", {}, {0});
                AddNode(m, "Greater", {"x", "zero"}, {"cond"});
              })),
              absl::StatusCode::kInvalidArgument,
              "the condition 'cond' has 6 elements, not 1");
}

// A branch's node that fails is named inside the If, whether the If is
// decided at load or becomes a cond.
TEST(OnnxImportTest, BranchNodesThatFailAreNamedInsideTheIf) {
  for (auto add_cond : {ConstantFalse, ValueCondition}) {
    ModelProto m = IfModel(add_cond);
    onnx::GraphProto* graph = m.mutable_graph();
    NodeProto* if_node = graph->mutable_node(graph->node_size() - 1);
    if_node->mutable_attribute(1)->mutable_g()->mutable_node(0)->set_op_type(
        "NoSuchOp");
    ExpectError(Load(m), absl::StatusCode::kUnimplemented,
                "else_branch node 0 'else_y' (NoSuchOp): operator NoSuchOp");
  }
}

// x [batch, 3]; y = If(Shape(x)[0] > 4) then Relu(x) else Concat(x, x, 1):
// a predicate over sizes, and branches whose shapes differ.
ModelProto SizeIfModel() {
  ModelProto m = Model();
  AddInput(m, "x", {-1, 3});
  AddInt64Initializer(m, "zero", {}, {0});
  AddInt64Initializer(m, "four", {}, {4});
  AddNode(m, "Shape", {"x"}, {"shape"});
  AddNode(m, "Gather", {"shape", "zero"}, {"batch"});
  AddNode(m, "Greater", {"batch", "four"}, {"cond"});
  NodeProto* n = AddNode(m, "If", {"cond"}, {"y"});
  AddBranch(n, "then_branch", "Relu", {"x"}, "then_y");
  SetInt(AddBranch(n, "else_branch", "Concat", {"x", "x"}, "else_y"), "axis",
         1);
  AddOutput(m, "y");
  return m;
}

// A condition over sizes becomes a cond over a size predicate: no graph
// break, and the branch each input's sizes take decides the result's.
TEST(OnnxImportTest, IfOnSizesIsACondOverASizePredicate) {
  auto g = Load(SizeIfModel());
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* cond = CondNode(**g);
  ASSERT_NE(cond, nullptr);
  const Arg& pred = cond->args[kCondPred];
  ASSERT_TRUE(pred.is_value());
  EXPECT_EQ((*g)->node(pred.as_value().node).target, "operator.gt");
  EXPECT_FALSE(FindGraphBreak(**g).has_value());
  EXPECT_EQ(OutputMetas(**g, {TensorMeta(DType::kFloat32, {6, 3})})[0].shape(),
            (Shape{6, 3}));
  EXPECT_EQ(OutputMetas(**g, {TensorMeta(DType::kFloat32, {2, 3})})[0].shape(),
            (Shape{2, 6}));
}

// Comparisons and logic on sizes stay size expressions (bool), and fold to
// a bool value known at load where the sizes are static.
TEST(OnnxImportTest, ComparisonsOfSizesAreSizeExpressions) {
  ModelProto m = SizeIfModel();
  m.mutable_graph()->mutable_node(2)->set_op_type("LessOrEqual");
  AddNode(m, "Not", {"cond"}, {"not_cond"});
  m.mutable_graph()->mutable_node(3)->set_input(0, "not_cond");
  // Not moved before the If.
  m.mutable_graph()->mutable_node()->SwapElements(3, 4);
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "operator.le"));
  EXPECT_TRUE(HasTarget(**g, "operator.eq"));
  // not (6 <= 4): then_branch.
  EXPECT_EQ(OutputMetas(**g, {TensorMeta(DType::kFloat32, {6, 3})})[0].shape(),
            (Shape{6, 3}));
  // Static sizes: the condition is known at load, the branch imported.
  ModelProto fixed = SizeIfModel();
  fixed.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(2);
  auto h = Load(fixed);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(CondNode(**h), nullptr);
  EXPECT_TRUE(HasTarget(**h, "aten.cat.default"));
}

// Branches read values of the If's scope by name: computed ones become the
// cond's operands, values known at load stay constants in the branch; an If
// nested in a branch reads through both scopes.
TEST(OnnxImportTest, BranchesReadTheIfsScopeAndNest) {
  ModelProto m = SizeIfModel();
  AddInitializer(m, "half", {}, {0.5f});
  NodeProto* sq = m.mutable_graph()->add_node();
  sq->set_op_type("Mul");
  sq->add_input("x");
  sq->add_input("x");
  sq->add_output("sq");
  // sq computed before the If.
  for (int k = m.graph().node_size() - 1; k > 3; --k) {
    m.mutable_graph()->mutable_node()->SwapElements(k, k - 1);
  }
  onnx::GraphProto* then_branch =
      m.mutable_graph()->mutable_node(4)->mutable_attribute(0)->mutable_g();
  NodeProto* relu = then_branch->mutable_node(0);
  relu->set_input(0, "scaled");
  NodeProto* mul = then_branch->add_node();
  mul->set_op_type("Mul");
  mul->add_input("sq");
  mul->add_input("half");
  mul->add_output("scaled");
  then_branch->mutable_node()->SwapElements(0, 1);
  // else: If(Shape(sq)[0] > 2) then Neg(sq) else Relu(x), inside the else
  // branch (its condition computed there: sizes computed before the If are
  // refused, below).
  onnx::GraphProto* else_branch =
      m.mutable_graph()->mutable_node(4)->mutable_attribute(1)->mutable_g();
  else_branch->clear_node();
  for (const auto& [op, inputs, output] : std::vector<
           std::tuple<std::string, std::vector<std::string>, std::string>>{
           {"Shape", {"sq"}, "inner_shape"},
           {"Gather", {"inner_shape", "zero"}, "inner_batch"},
           {"Greater", {"inner_batch", "two"}, "inner_cond"}}) {
    NodeProto* n = else_branch->add_node();
    n->set_op_type(op);
    for (const std::string& i : inputs) n->add_input(i);
    n->add_output(output);
  }
  AddInt64Initializer(m, "two", {}, {2});
  NodeProto* inner = else_branch->add_node();
  inner->set_op_type("If");
  inner->add_input("inner_cond");
  inner->add_output("else_y");
  AddBranch(inner, "then_branch", "Neg", {"sq"}, "inner_then_y");
  AddBranch(inner, "else_branch", "Relu", {"x"}, "inner_else_y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* cond = CondNode(**g);
  ASSERT_NE(cond, nullptr);
  // sq, x (in order of first use); cond (a size expression) and half (a
  // constant) are no operands.
  std::vector<std::string> operands;
  for (const Arg& a : cond->args[kCondOperands].as_list()) {
    operands.push_back((*g)->node(a.as_value().node).name);
  }
  EXPECT_EQ(operands, (std::vector<std::string>{"sq", "x"}));
  const Graph* then_graph = (*g)->subgraph(cond->args[kCondTrue].as_subgraph());
  ASSERT_NE(then_graph, nullptr);
  bool has_constant = false;
  for (const Node& n : then_graph->nodes()) {
    has_constant = has_constant || n.kind == NodeKind::kConstant;
  }
  EXPECT_TRUE(has_constant);
  const Graph* else_graph =
      (*g)->subgraph(cond->args[kCondFalse].as_subgraph());
  ASSERT_NE(else_graph, nullptr);
  EXPECT_NE(CondNode(*else_graph), nullptr);
  EXPECT_EQ(OutputMetas(**g, {TensorMeta(DType::kFloat32, {6, 3})})[0].shape(),
            (Shape{6, 3}));
  EXPECT_EQ(OutputMetas(**g, {TensorMeta(DType::kFloat32, {3, 3})})[0].shape(),
            (Shape{3, 3}));
  // The nested If reading the outer condition, sizes computed before it.
  else_branch->mutable_node(3)->set_input(0, "cond");
  ExpectError(
      Load(m), absl::StatusCode::kUnimplemented,
      "a branch reads 'cond', sizes computed at run time before the If");
}

TEST(OnnxImportTest, RuntimeIfBranchesMustAgreeAndReadDefinedValues) {
  ModelProto m = SizeIfModel();
  NodeProto* cat = m.mutable_graph()
                       ->mutable_node(3)
                       ->mutable_attribute(1)
                       ->mutable_g()
                       ->mutable_node(0);
  cat->set_op_type("ReduceSum");
  cat->clear_attribute();
  cat->mutable_input()->RemoveLast();
  SetInt(cat, "keepdims", 0);
  ExpectError(Load(m), absl::StatusCode::kUnimplemented,
              "output 0: then_branch computes float32 of rank 2 and "
              "else_branch float32 of rank 0");
  ModelProto undefined = SizeIfModel();
  undefined.mutable_graph()
      ->mutable_node(3)
      ->mutable_attribute(0)
      ->mutable_g()
      ->mutable_node(0)
      ->set_input(0, "nowhere");
  ExpectError(Load(undefined), absl::StatusCode::kInvalidArgument,
              "a branch reads 'nowhere', which no value before the If names");
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
