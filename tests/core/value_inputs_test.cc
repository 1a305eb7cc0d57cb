#include "core/value_inputs.h"

#include <memory>
#include <string>
#include <vector>

#include "core/function.h"
#include "core/graph_builder.h"
#include "core/graph_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/recording_compiler.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

using testing::EntryOf;
using testing::RecordingCompiler;

// y = x + shape, `shape` (int64 [2]) value-specialized.
std::shared_ptr<const Graph> AddShapeGraph() {
  GraphBuilder b("f");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("shape").ok());
  EXPECT_TRUE(b.MarkValueSpecialized("shape").ok());
  EXPECT_TRUE(
      b.AddNode("add", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("shape")})
          .ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("add")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

struct Call {
  Call(std::vector<int64_t> shape_values, DType dtype = DType::kInt64)
      : x(*Tensor::Zeros(DType::kInt64, {2})),
        shape(*Tensor::Zeros(dtype,
                             {static_cast<int64_t>(shape_values.size())})) {
    for (size_t k = 0; k < shape_values.size(); ++k) {
      if (dtype == DType::kInt64) {
        shape.data_as<int64_t>()[k] = shape_values[k];
      } else if (dtype == DType::kInt32) {
        shape.data_as<int32_t>()[k] = static_cast<int32_t>(shape_values[k]);
      } else if (dtype == DType::kFloat32) {
        shape.data_as<float>()[k] = static_cast<float>(shape_values[k]);
      }
    }
    tensors = {x, shape};
    views = {InputView::Of(x), InputView::Of(shape)};
  }
  CallSignature sig() const { return {views, {}}; }
  Tensor x, shape;
  std::vector<Tensor> tensors;
  std::vector<InputView> views;
};

TEST(ValueInputsTest, GraphRecordsValueInputs) {
  EXPECT_EQ(AddShapeGraph()->value_inputs(), std::vector<int>{1});
  EXPECT_EQ(AddShapeGraph()->rebuilder(), nullptr);
}

TEST(ValueInputsTest, GuardHitsOnSameValuesAndMissesNamingTheValues) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(AddShapeGraph(), compiler, {});
  Call a({3, 4}), a2({3, 4}), b({4, 3});
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(a2.tensors, a2.sig())), 0);  // other buffer
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 1);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(f->stats().compiles, 2);
  EXPECT_EQ(f->stats().hits, 2);
  ASSERT_EQ(f->RecompileReasons().size(), 1u);
  EXPECT_EQ(f->RecompileReasons()[0],
            "0/0: tensor 'shape' value mismatch (value-specialized). "
            "expected [3, 4], actual [4, 3]");
  EXPECT_THAT(f->DumpGuards(),
              HasSubstr("VALUE_MATCH: shape.tolist() == [3, 4]"));
  EXPECT_THAT(f->Explain(), HasSubstr("VALUE_MATCH: shape.tolist() == [4, 3]"));
}

TEST(ValueInputsTest, EntryCompilesTheValuesAsConstants) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(AddShapeGraph(), compiler, {});
  Call a({3, 4});
  ASSERT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  ASSERT_EQ(compiler->graphs.size(), 1u);
  const Graph& g = *compiler->graphs[0];
  const int c = g.FindNode("#shape.value");
  ASSERT_GE(c, 0);
  ASSERT_EQ(g.node(c).kind, NodeKind::kConstant);
  const Tensor& t = g.node(c).constant;
  ASSERT_EQ(t.numel(), 2);
  EXPECT_EQ(t.data_as<int64_t>()[0], 3);
  EXPECT_EQ(t.data_as<int64_t>()[1], 4);
  // The add reads the constant; the placeholder stays, unused.
  const Node& add = g.node(g.FindNode("add"));
  EXPECT_EQ(add.args[1].as_value().node, c);
  EXPECT_EQ(g.inputs().size(), 2u);
}

TEST(ValueInputsTest, Int32ValuesAndRecompileLimit) {
  auto compiler = std::make_shared<RecordingCompiler>();
  FunctionOptions options;
  options.recompile_limit = 1;
  auto f = *Function::Create(AddShapeGraph(), compiler, options);
  Call a({1, 2}, DType::kInt32), b({2, 1}, DType::kInt32);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  // Past the limit a plain graph runs its fallback.
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), -1);
  EXPECT_EQ(f->stats().compiles, 1);
  EXPECT_EQ(f->stats().fallback_calls, 1);
}

TEST(ValueInputsTest, BadInputsAreRefusedNamingTheInput) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(AddShapeGraph(), compiler, {});
  Call halves({1, 2}, DType::kFloat16);
  auto out = f->Call(halves.tensors, halves.sig());
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("input 1 ('shape')"));
  EXPECT_THAT(out.status().message(),
              HasSubstr("integer, bool, float32 or float64"));

  Call large(std::vector<int64_t>(65, 1));
  out = f->Call(large.tensors, large.sig());
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("at most 64 elements"));

  Call on_device({1, 2});
  on_device.views[1].device = Device{DeviceType::kCUDA, 0};
  out = f->Call(on_device.tensors, on_device.sig());
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("host tensor"));

  // A precompile has no data to read.
  Call no_data({1, 2});
  no_data.views[1].data = nullptr;
  absl::Status s = f->Precompile(no_data.sig());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("its data is needed"));
  EXPECT_EQ(compiler->graphs.size(), 0u);
}

TEST(ValueInputsTest, FloatValuesAreGuardedBitForBit) {
  auto compiler = std::make_shared<RecordingCompiler>();
  auto f = *Function::Create(AddShapeGraph(), compiler, {});
  Call a({1, 2}, DType::kFloat32), b({1, 2}, DType::kFloat32);
  b.shape.data_as<float>()[1] = 2.5f;
  Call negative_zero({0, 2}, DType::kFloat32), zero({0, 2}, DType::kFloat32);
  negative_zero.shape.data_as<float>()[0] = -0.0f;
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(a.tensors, a.sig())), 0);
  EXPECT_EQ(EntryOf(f->Call(b.tensors, b.sig())), 1);
  EXPECT_EQ(EntryOf(f->Call(zero.tensors, zero.sig())), 2);
  EXPECT_EQ(EntryOf(f->Call(negative_zero.tensors, negative_zero.sig())), 3);
  ASSERT_EQ(f->RecompileReasons().size(), 3u);
  EXPECT_EQ(f->RecompileReasons()[0],
            "0/0: tensor 'shape' value mismatch (value-specialized). "
            "expected [1, 2], actual [1, 2.5]");
  EXPECT_THAT(f->DumpGuards(),
              HasSubstr("VALUE_MATCH: shape.tolist() == [-0, 2]"));
  // The entry's constant holds the call's floats.
  const Graph& g = *compiler->graphs[1];
  const Tensor& t = g.node(g.FindNode("#shape.value")).constant;
  ASSERT_EQ(t.dtype(), DType::kFloat32);
  EXPECT_EQ(t.data_as<float>()[0], 1.0f);
  EXPECT_EQ(t.data_as<float>()[1], 2.5f);
}

TEST(ValueInputsTest, FloatValuesReadBackAsDoubles) {
  double data[2] = {0.1, -3.0};
  int64_t sizes[1] = {2}, strides[1] = {1};
  InputView v;
  v.dtype = DType::kFloat64;
  v.rank = 1;
  v.sizes = sizes;
  v.strides = strides;
  v.data = data;
  ASSERT_TRUE(CheckValueInput(v, "input 0 ('v')").ok());
  InputValues values = ReadInputValues(0, v);
  EXPECT_EQ(ValueAsDouble(DType::kFloat64, values.values[0]), 0.1);
  EXPECT_EQ(FormatValues(DType::kFloat64, values.values),
            "[0.10000000000000001, -3]");
  auto t = ValuesTensor(values);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->data_as<double>()[0], 0.1);
  EXPECT_EQ(t->data_as<double>()[1], -3.0);
  EXPECT_TRUE(ValuesMatch(v, values.values));
  data[0] = 0.2;
  EXPECT_FALSE(ValuesMatch(v, values.values));
}

TEST(ValueInputsTest, BuilderRefusesHalfAndLargeInputs) {
  GraphBuilder b("g");
  ASSERT_TRUE(b.AddPlaceholder("f", TensorMeta(DType::kFloat16, {2})).ok());
  ASSERT_TRUE(b.AddPlaceholder("big", TensorMeta(DType::kInt64, {65})).ok());
  EXPECT_THAT(b.MarkValueSpecialized("f").message(),
              HasSubstr("value-specialized input 'f' must be an integer"));
  EXPECT_THAT(b.MarkValueSpecialized("big").message(),
              HasSubstr("at most 64 elements"));
  EXPECT_THAT(b.MarkValueSpecialized("none").message(),
              HasSubstr("no input named 'none'"));
}

TEST(ValueInputsTest, ProtoFieldMarksThePlaceholder) {
  auto g =
      LoadGraphFromText(R"pb(
                          name: "f"
                          placeholders { name: "x" }
                          placeholders { name: "shape" specialize_value: true }
                          nodes {
                            name: "add"
                            target: "aten.add.Tensor"
                            args { ref: "x" }
                            args { ref: "shape" }
                          }
                          outputs { ref: "add" }
                        )pb",
                        {});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->value_inputs(), std::vector<int>{1});
  EXPECT_TRUE((*g)->node((*g)->inputs()[1]).specialize_value);
}

TEST(ValueInputsTest, ValuesMatchReadsAnyLayout) {
  // int32 [2, 2] read transposed: strides {1, 2}.
  int32_t data[4] = {1, 2, 3, 4};
  int64_t sizes[2] = {2, 2}, strides[2] = {1, 2};
  InputView v;
  v.dtype = DType::kInt32;
  v.rank = 2;
  v.sizes = sizes;
  v.strides = strides;
  v.data = data;
  ASSERT_TRUE(CheckValueInput(v, "input 0 ('v')").ok());
  EXPECT_EQ(ReadValues(v), (std::vector<int64_t>{1, 3, 2, 4}));
  const std::vector<int64_t> want = {1, 3, 2, 4}, other = {1, 2, 3, 4};
  EXPECT_TRUE(ValuesMatch(v, want));
  EXPECT_FALSE(ValuesMatch(v, other));
  EXPECT_EQ(FormatValues(want), "[1, 3, 2, 4]");
  // A host's bool bytes other than 0 and 1 read as true.
  uint8_t bytes[2] = {2, 0};
  int64_t bool_sizes[1] = {2}, bool_strides[1] = {1};
  InputView b;
  b.dtype = DType::kBool;
  b.rank = 1;
  b.sizes = bool_sizes;
  b.strides = bool_strides;
  b.data = bytes;
  EXPECT_EQ(ReadValues(b), (std::vector<int64_t>{1, 0}));
}

}  // namespace
}  // namespace guardjit
