#include "core/onnx/onnx_sym_data.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// An input whose dims are numbers or dim_params ("batch", "seq").
void AddSymInput(ModelProto& m, const std::string& name,
                 const std::vector<std::string>& dims,
                 int elem_type = TensorProto::FLOAT) {
  auto* t = m.mutable_graph()->add_input();
  t->set_name(name);
  auto* type = t->mutable_type()->mutable_tensor_type();
  type->set_elem_type(elem_type);
  for (const std::string& d : dims) {
    auto* dim = type->mutable_shape()->add_dim();
    if (d[0] >= '0' && d[0] <= '9') {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

// seq = Shape(x)[1] as a 1-d value: [seq].
void AddSeqVector(ModelProto& m, const std::string& x, const std::string& out) {
  AddInt64Initializer(m, out + ".one", {}, {1});
  AddInt64Initializer(m, out + ".axes", {0});
  AddNode(m, "Shape", {x}, {out + ".shape"});
  AddNode(m, "Gather", {out + ".shape", out + ".one"}, {out + ".scalar"});
  AddNode(m, "Unsqueeze", {out + ".scalar", out + ".axes"}, {out});
}

std::vector<TensorMeta> Metas(const Graph& g,
                              const std::vector<Shape>& shapes) {
  std::vector<TensorMeta> inputs;
  for (const Shape& s : shapes)
    inputs.push_back(TensorMeta(DType::kFloat32, s));
  return OutputMetas(g, inputs);
}

TEST(OnnxSymDataTest, SlicesAMaskBySymbolicSequenceLength) {
  // A causal mask [1, 1, 16, 16] sliced to [1, 1, seq, seq] (GPT-2's
  // mask[:, :, :t, :t]): aten.slice.Tensor with the sequence length read at
  // run time.
  ModelProto m = Model(17);
  AddSymInput(m, "x", {"batch", "seq", "4"});
  AddInitializer(m, "mask", {1, 1, 16, 16}, Iota(256));
  AddInt64Initializer(m, "zero", {0});
  AddInt64Initializer(m, "two", {2});
  AddInt64Initializer(m, "three", {3});
  AddSeqVector(m, "x", "t");
  AddNode(m, "Slice", {"mask", "zero", "t", "two"}, {"rows"});
  AddNode(m, "Slice", {"rows", "zero", "t", "three"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.slice.Tensor"), 2);
  for (int64_t seq : {3, 5, 16}) {
    auto out = Metas(**g, {{2, seq, 4}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (Shape{1, 1, seq, seq}));
  }
}

TEST(OnnxSymDataTest, SlicesASymbolicTensorWithKnownBounds) {
  // BERT's chunk of qkv: x[:, :, 4:8] of [batch, seq, 12], and a negative
  // start counting from a symbolic dim's end.
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "seq", "12"});
  AddInt64Initializer(m, "s", {4});
  AddInt64Initializer(m, "e", {8});
  AddInt64Initializer(m, "ax", {-1});
  AddInt64Initializer(m, "neg", {-2});
  AddInt64Initializer(m, "big", {std::numeric_limits<int64_t>::max()});
  AddInt64Initializer(m, "one", {1});
  AddNode(m, "Slice", {"x", "s", "e", "ax"}, {"mid"});
  AddNode(m, "Slice", {"x", "neg", "big", "one"}, {"tail"});
  AddOutputs(m, {"mid", "tail"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  auto out = Metas(**g, {{3, 5, 12}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 5, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 2, 12}));
}

TEST(OnnxSymDataTest, StaticSliceStillFoldsItsBounds) {
  ModelProto m = Model(13);
  AddInput(m, "x", {2, 5, 12});
  AddInt64Initializer(m, "s", {4});
  AddInt64Initializer(m, "e", {8});
  AddInt64Initializer(m, "ax", {-1});
  AddNode(m, "Slice", {"x", "s", "e", "ax"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_FALSE(HasTarget(**g, "aten.sym_size.int"));
  EXPECT_EQ(OutputShapes(**g)[0], (Shape{2, 5, 4}));
}

TEST(OnnxSymDataTest, NegativeStepOnSymbolicSizesIsRefused) {
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "4"});
  AddInt64Initializer(m, "s", {-1});
  AddInt64Initializer(m, "e", {std::numeric_limits<int64_t>::min()});
  AddInt64Initializer(m, "ax", {0});
  AddInt64Initializer(m, "st", {-1});
  AddNode(m, "Slice", {"x", "s", "e", "ax", "st"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(g.status().message(), HasSubstr("'y' (Slice"));
  EXPECT_THAT(g.status().message(), HasSubstr("negative step"));
}

TEST(OnnxSymDataTest, SplitsQkvOfSymbolicBatchAndSequence) {
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "seq", "12"});
  AddInt64Initializer(m, "split", {4, 4, 4});
  SetInt(AddNode(m, "Split", {"x", "split"}, {"q", "k", "v"}), "axis", 2);
  AddOutputs(m, {"q", "k", "v"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.split_with_sizes.default"));
  auto out = Metas(**g, {{3, 7, 12}});
  ASSERT_EQ(out.size(), 3u);
  for (const TensorMeta& meta : out) EXPECT_EQ(meta.shape(), (Shape{3, 7, 4}));
}

TEST(OnnxSymDataTest, SplitsASymbolicDimIntoEqualParts) {
  // Equal parts of the batch itself (opset 13) and num_outputs (opset 18):
  // the part sizes are size arithmetic.
  for (int opset : {13, 18}) {
    ModelProto m = Model(opset);
    AddSymInput(m, "x", {"batch", "3"});
    NodeProto* n = AddNode(m, "Split", {"x"}, {"a", "b"});
    if (opset == 18) SetInt(n, "num_outputs", 2);
    AddOutputs(m, {"a", "b"});
    auto g = Load(m);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_TRUE(HasTarget(**g, "operator.floordiv"));
    auto out = Metas(**g, {{6, 3}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape(), (Shape{3, 3}));
    EXPECT_EQ(out[1].shape(), (Shape{3, 3}));
  }
}

TEST(OnnxSymDataTest, GathersFromSymbolicTensors) {
  // x[:, 0] (BERT's [CLS] token) is select.int; an embedding lookup of
  // ids [batch, seq] is index_select and a view of size expressions.
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "seq", "4"});
  AddSymInput(m, "ids", {"batch", "seq"}, TensorProto::INT64);
  AddInitializer(m, "emb", {10, 4}, Iota(40));
  AddInt64Initializer(m, "zero", {}, {0});
  SetInt(AddNode(m, "Gather", {"x", "zero"}, {"cls"}), "axis", 1);
  AddNode(m, "Gather", {"emb", "ids"}, {"e"});
  AddOutputs(m, {"cls", "e"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.select.int"));
  EXPECT_TRUE(HasTarget(**g, "aten.index_select.default"));
  std::vector<TensorMeta> inputs = {TensorMeta(DType::kFloat32, Shape{3, 5, 4}),
                                    TensorMeta(DType::kInt64, Shape{3, 5})};
  auto out = OutputMetas(**g, inputs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 5, 4}));
}

TEST(OnnxSymDataTest, GatherOfRunTimeIndicesIntoASymbolicDimIsRefused) {
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "4"});
  // Indices computed from a graph input (not the input itself, which would
  // be value-specialized).
  AddSymInput(m, "i", {"2"}, TensorProto::INT64);
  AddNode(m, "Add", {"i", "i"}, {"i2"});
  AddNode(m, "Gather", {"x", "i2"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("'y' (Gather"));
  EXPECT_THAT(g.status().message(), HasSubstr("whose size is symbolic"));
}

TEST(OnnxSymDataTest, UnsqueezesAndSqueezesSymbolicTensors) {
  // An attention mask [batch, seq] to [batch, 1, 1, seq], and back.
  ModelProto m = Model(13);
  AddSymInput(m, "mask", {"batch", "seq"});
  AddInt64Initializer(m, "axes", {1, 2});
  AddNode(m, "Unsqueeze", {"mask", "axes"}, {"u"});
  AddNode(m, "Squeeze", {"u", "axes"}, {"s"});
  AddOutputs(m, {"u", "s"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.unsqueeze.default"));
  EXPECT_TRUE(HasTarget(**g, "aten.squeeze.dims"));
  auto out = Metas(**g, {{3, 5}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 1, 1, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 5}));
}

TEST(OnnxSymDataTest, SqueezeOfASymbolicDimIsRefused) {
  // Named: the axis is symbolic; without axes: which dims are 1 is known
  // only at run time.
  for (bool with_axes : {true, false}) {
    ModelProto m = Model(13);
    AddSymInput(m, "x", {"batch", "1"});
    AddInt64Initializer(m, "axes", {0});
    AddNode(m, "Squeeze",
            with_axes ? std::vector<std::string>{"x", "axes"}
                      : std::vector<std::string>{"x"},
            {"y"});
    AddOutput(m, "y");
    auto g = Load(m);
    ASSERT_FALSE(g.ok());
    EXPECT_EQ(g.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(g.status().message(), HasSubstr("'y' (Squeeze"));
    EXPECT_THAT(g.status().message(),
                HasSubstr(with_axes ? "squeezes axis 0" : "without axes"));
  }
}

TEST(OnnxSymDataTest, BatchedMatMulOfSymbolicHeads) {
  // Attention scores: [batch, 2, seq, 4] x [batch, 2, 4, seq] (one bmm over
  // the flattened batch), a projection [batch, seq, 4] x [4, 6] (one mm),
  // a broadcast [batch, 1, seq, 4] x [2, 4, 3], and a vector times a batch.
  ModelProto m = Model(13);
  AddSymInput(m, "q", {"batch", "2", "seq", "4"});
  AddSymInput(m, "k", {"batch", "2", "4", "seq"});
  AddSymInput(m, "x", {"batch", "seq", "4"});
  AddSymInput(m, "h", {"batch", "1", "seq", "4"});
  AddInitializer(m, "w", {4, 6}, Iota(24));
  AddInitializer(m, "w3", {2, 4, 3}, Iota(24));
  AddInitializer(m, "v", {4}, Iota(4));
  AddNode(m, "MatMul", {"q", "k"}, {"scores"});
  AddNode(m, "MatMul", {"x", "w"}, {"proj"});
  AddNode(m, "MatMul", {"h", "w3"}, {"bcast"});
  AddNode(m, "MatMul", {"v", "k"}, {"vec"});
  AddOutputs(m, {"scores", "proj", "bcast", "vec"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.bmm.default"), 3);
  EXPECT_EQ(CountTarget(**g, "aten.mm.default"), 1);
  auto out = Metas(**g, {{3, 2, 5, 4}, {3, 2, 4, 5}, {3, 5, 4}, {3, 1, 5, 4}});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 2, 5, 5}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 5, 6}));
  EXPECT_EQ(out[2].shape(), (Shape{3, 2, 5, 3}));
  EXPECT_EQ(out[3].shape(), (Shape{3, 2, 5}));
}

TEST(OnnxSymDataTest, LayerNormOfSymbolicLeadingDims) {
  ModelProto m = Model(17);
  AddSymInput(m, "x", {"batch", "seq", "4"});
  AddInitializer(m, "scale", {4}, {1, 2, 3, 4});
  AddInitializer(m, "bias", {4}, {0, 0, 1, 1});
  AddNode(m, "LayerNormalization", {"x", "scale", "bias"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.native_layer_norm.default"));
  EXPECT_EQ(Metas(**g, {{3, 5, 4}})[0].shape(), (Shape{3, 5, 4}));
  // Normalizing over a symbolic dim reads its size at run time; a scale
  // of one element broadcasts.
  m = Model(17);
  AddSymInput(m, "x", {"batch", "seq"});
  AddInitializer(m, "scale", {1}, {2});
  AddNode(m, "LayerNormalization", {"x", "scale"}, {"y"});
  AddOutput(m, "y");
  g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.sym_size.int"));
  EXPECT_EQ(Metas(**g, {{3, 5}})[0].shape(), (Shape{3, 5}));
}

TEST(OnnxSymDataTest, PadsBySizesComputedFromASymbolicDim) {
  // Pad the sequence to 8: pads [0, 0, 0, 8 - seq].
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"2", "seq"});
  AddInt64Initializer(m, "eight", {8});
  AddInt64Initializer(m, "zeros", {0, 0, 0});
  AddSeqVector(m, "x", "t");
  AddNode(m, "Sub", {"eight", "t"}, {"rest"});
  AddNode(m, "Concat", {"zeros", "rest"}, {"pads"});
  SetInt(m.mutable_graph()->mutable_node(m.graph().node_size() - 1), "axis", 0);
  AddNode(m, "Pad", {"x", "pads"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_TRUE(HasTarget(**g, "aten.constant_pad_nd.default"));
  for (int64_t seq : {3, 6}) {
    EXPECT_EQ(Metas(**g, {{2, seq}})[0].shape(), (Shape{2, 8}));
  }
}

TEST(OnnxSymDataTest, AGuardOnTheSequenceKeepsOtherSizesStatic) {
  // Slicing a static mask by seq guards seq <= 16 at load. The shape of a
  // tensor computed from weights alone after it is still known at load
  // (folded, no aten.sym_size.int of it), where before any guard made every
  // size count as symbolic.
  ModelProto m = Model(13);
  AddSymInput(m, "x", {"batch", "seq", "4"});
  AddInitializer(m, "mask", {1, 1, 16, 16}, Iota(256));
  AddInitializer(m, "w", {2, 6}, Iota(12));
  AddInt64Initializer(m, "zero", {0});
  AddInt64Initializer(m, "two", {2});
  AddSeqVector(m, "x", "t");
  AddNode(m, "Slice", {"mask", "zero", "t", "two"}, {"rows"});
  AddNode(m, "Relu", {"w"}, {"wr"});
  AddNode(m, "Shape", {"wr"}, {"ws"});
  AddNode(m, "ConstantOfShape", {"ws"}, {"z"});
  AddNode(m, "Add", {"wr", "z"}, {"y"});
  AddOutputs(m, {"rows", "y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  for (const Node& n : (*g)->nodes()) {
    if (n.target != "aten.sym_size.int") continue;
    EXPECT_NE((*g)->node(n.args[0].as_value().node).name, "wr");
  }
  EXPECT_FALSE(HasTarget(**g, "aten.full.default"));
  auto out = Metas(**g, {{3, 5, 4}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 5, 16}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 6}));
}

}  // namespace
}  // namespace guardjit::testing
