#include "core/onnx/onnx_sym_shape.h"

#include <memory>
#include <string>
#include <vector>

#include "core/function.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/core/recording_compiler.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// torch.onnx's flatten of a batch: y = Reshape(x, Concat(Unsqueeze(
// Gather(Shape(x), 0)), [-1])) then MatMul by w [12, 2]; x is
// [batch, 3, 4] (batch: -1 for the dim_param) or static.
ModelProto FlattenModel(int64_t batch = -1) {
  ModelProto m = Model(13);
  AddInput(m, "x", {batch, 3, 4});
  AddInt64Initializer(m, "zero", {}, {0});
  AddInt64Initializer(m, "axes", {0});
  AddInt64Initializer(m, "rest", {-1});
  std::vector<float> w(24);
  for (int i = 0; i < 24; ++i) w[i] = 0.25f * (i % 5) - 0.5f;
  AddInitializer(m, "w", {12, 2}, w);
  AddNode(m, "Shape", {"x"}, {"s"});
  AddNode(m, "Gather", {"s", "zero"}, {"b"});
  AddNode(m, "Unsqueeze", {"b", "axes"}, {"b1"});
  AddNode(m, "Concat", {"b1", "rest"}, {"shape"});
  SetInt(m.mutable_graph()->mutable_node(3), "axis", 0);
  AddNode(m, "Reshape", {"x", "shape"}, {"r"});
  AddNode(m, "MatMul", {"r", "w"}, {"y"});
  AddOutput(m, "y");
  return m;
}

// The size list of the graph's aten.view.default node.
const Arg::List* ViewSizes(const Graph& g) {
  for (const Node& n : g.nodes()) {
    if (n.target == "aten.view.default") return &n.args[1].as_list();
  }
  return nullptr;
}

TEST(OnnxSymShapeTest, ShapeArithmeticOnABatchStaysSymbolic) {
  auto g = Load(FlattenModel());
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.sym_size.int"), 1);
  const Arg::List* sizes = ViewSizes(**g);
  ASSERT_NE(sizes, nullptr);
  ASSERT_EQ(sizes->size(), 2u);
  // [sym_size(x, 0), -1]: the batch read at run time, not a number.
  ASSERT_TRUE((*sizes)[0].is_value());
  EXPECT_EQ((*g)->node((*sizes)[0].as_value().node).target,
            "aten.sym_size.int");
  EXPECT_EQ((*sizes)[1].as_int(), -1);
  // Each batch infers its own output shape from the one graph.
  for (int64_t batch : {2, 3, 5}) {
    std::vector<TensorMeta> out =
        OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{batch, 3, 4})});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (Shape{batch, 2}));
  }
}

TEST(OnnxSymShapeTest, StaticShapesStillFoldToConstants) {
  auto g = Load(FlattenModel(2));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(HasTarget(**g, "aten.sym_size.int"));
  const Arg::List* sizes = ViewSizes(**g);
  ASSERT_NE(sizes, nullptr);
  EXPECT_EQ((*sizes)[0].as_int(), 2);
  EXPECT_EQ((*sizes)[1].as_int(), 12);
}

TEST(OnnxSymShapeTest, OneDynamicEntryServesEveryBatch) {
  auto compiler = std::make_shared<RecordingCompiler>();
  FunctionOptions options;
  options.mark_dynamic = {DynamicDim{0, 0}};
  auto f = *Function::Create(
      std::shared_ptr<const Graph>(*Load(FlattenModel())), compiler, options);
  for (int64_t batch : {2, 3, 5}) {
    Tensor x = *Tensor::Zeros(DType::kFloat32, {batch, 3, 4});
    std::vector<Tensor> tensors = {x};
    std::vector<InputView> views = {InputView::Of(x)};
    EXPECT_EQ(EntryOf(f->Call(tensors, CallSignature{views, {}})), 0);
  }
  EXPECT_EQ(compiler->compiles.load(), 1);
  EXPECT_EQ(f->stats().cache_entries, 1);
  EXPECT_EQ(f->stats().fallback_calls, 0);
}

TEST(OnnxSymShapeTest, SizeArithmeticFeedsExpandConstantOfShapeAndRange) {
  // n = Size(x) / 4 (= batch * 3); e = Expand(c [1, 1], [Shape(x)[0], 3]);
  // z = ConstantOfShape(Shape(x)[1:]); r = Range(0, Shape(x)[0], 1).
  ModelProto m = Model(13);
  AddInput(m, "x", {-1, 3, 4});
  AddInitializer(m, "c", {1, 1}, {7});
  AddInt64Initializer(m, "four", {}, {4});
  AddInt64Initializer(m, "zero", {}, {0});
  AddInt64Initializer(m, "one", {}, {1});
  AddInt64Initializer(m, "three", {3});
  AddInt64Initializer(m, "s0", {0});
  AddInt64Initializer(m, "s1", {1});
  AddInt64Initializer(m, "end", {100});
  AddNode(m, "Size", {"x"}, {"numel"});
  AddNode(m, "Div", {"numel", "four"}, {"n"});
  AddNode(m, "Shape", {"x"}, {"s"});
  AddNode(m, "Slice", {"s", "s0", "s1"}, {"head"});
  AddNode(m, "Concat", {"head", "three"}, {"eshape"});
  SetInt(m.mutable_graph()->mutable_node(4), "axis", 0);
  AddNode(m, "Expand", {"c", "eshape"}, {"e"});
  AddNode(m, "Slice", {"s", "s1", "end"}, {"tail"});
  AddNode(m, "ConstantOfShape", {"tail"}, {"z"});
  AddNode(m, "Gather", {"s", "zero"}, {"b"});
  AddNode(m, "Range", {"zero", "b", "one"}, {"r"});
  AddNode(m, "Mul", {"b", "n"}, {"bn"});
  AddOutputs(m, {"e", "z", "r"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<TensorMeta> out =
      OutputMetas(**g, {TensorMeta(DType::kFloat32, Shape{5, 3, 4})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{5, 3}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 4}));
  EXPECT_EQ(out[1].dtype, DType::kFloat32);
  EXPECT_EQ(out[2].shape(), (Shape{5}));
  EXPECT_EQ(out[2].dtype, DType::kInt64);
  EXPECT_TRUE(HasTarget(**g, "aten.sym_numel.default"));
  EXPECT_TRUE(HasTarget(**g, "operator.floordiv"));
}

TEST(OnnxSymShapeTest, SizesUsedAsATensorAreRefusedNamingTheValue) {
  // Shape(x) cast to float and added to data: the sizes would have to be a
  // tensor.
  ModelProto m = Model(13);
  AddInput(m, "x", {-1, 3});
  AddNode(m, "Shape", {"x"}, {"s"});
  AddNode(m, "Neg", {"s"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("'y' (Neg"));
  EXPECT_THAT(g.status().message(),
              HasSubstr("value 's' holds sizes computed at run time"));
  // Cast to float: refused at the Cast.
  m = Model(13);
  AddInput(m, "x", {-1, 3});
  AddNode(m, "Shape", {"x"}, {"s"});
  SetInt(AddNode(m, "Cast", {"s"}, {"f"}), "to", TensorProto::FLOAT);
  AddOutput(m, "f");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("converts sizes"));
  // Indices computed at run time cannot pick sizes.
  m = Model(13);
  AddInput(m, "x", {-1, 3});
  AddInput(m, "i", {}, TensorProto::INT64);
  AddNode(m, "Shape", {"x"}, {"s"});
  AddNode(m, "Gather", {"s", "i"}, {"g"});
  AddOutput(m, "g");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("Gather"));
}

}  // namespace
}  // namespace guardjit::testing
