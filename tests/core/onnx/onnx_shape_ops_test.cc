// ONNX's shape operators (core/onnx/onnx_shape_ops.cc): Reshape's 0 and -1,
// Slice's clamping, Split, Pad, and shape arithmetic folded at load.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

TEST(OnnxShapeOpsTest, ShapeArithmeticOnStaticSizesFolds) {
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

TEST(OnnxShapeOpsTest, Opset18SplitNumOutputsMakesTheLastChunkSmaller) {
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

TEST(OnnxShapeOpsTest, Opset18PadAxesInputIsRefused) {
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

TEST(OnnxShapeOpsTest, ReshapeCopiesZerosAndInfersMinusOne) {
  struct Case {
    std::vector<int64_t> shape;
    Shape out;
  };
  for (const Case& c : std::vector<Case>{{{0, -1}, {2, 12}},
                                         {{-1, 4}, {6, 4}},
                                         {{0, 0, 2, 2}, {2, 3, 2, 2}}}) {
    ModelProto m = Model();
    AddInput(m, "x", {2, 3, 4});
    AddInt64Initializer(m, "shape", c.shape);
    AddNode(m, "Reshape", {"x", "shape"}, {"y"});
    AddOutput(m, "y");
    auto g = Load(m);
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(OutputShapes(**g), std::vector<Shape>{c.out});
  }
  struct Bad {
    std::vector<int64_t> shape;
    const char* message;
  };
  for (const Bad& c :
       std::vector<Bad>{{{-1, -1}, "two -1 in shape"},
                        {{5, -1}, "cannot infer the -1 dim"},
                        {{0, 0, 0, 0}, "shape copies a dim the input lacks"}}) {
    ModelProto m = Model();
    AddInput(m, "x", {2, 3, 4});
    AddInt64Initializer(m, "shape", c.shape);
    AddNode(m, "Reshape", {"x", "shape"}, {"y"});
    AddOutput(m, "y");
    ExpectError(Load(m), absl::StatusCode::kInvalidArgument,
                std::string("ONNX node 0 'y' (Reshape, domain 'ai.onnx', "
                            "opset 13): ") +
                    c.message);
  }
}

TEST(OnnxShapeOpsTest, SliceClampsLikeNumpyAndRefusesStepZero) {
  ModelProto m = Model();
  AddInput(m, "x", {10, 6});
  AddInt64Initializer(m, "starts", {-3, 100});
  AddInt64Initializer(m, "ends", {1000, -100});
  AddInt64Initializer(m, "axes", {0, 1});
  AddInt64Initializer(m, "steps", {1, -2});
  AddNode(m, "Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  // Rows 7..9; columns 5, 3, 1 (start clamped to the last, end past the
  // first).
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{3, 3}}));

  m.mutable_graph()->mutable_initializer(3)->set_int64_data(1, 0);
  ExpectError(Load(m), absl::StatusCode::kInvalidArgument, "step 0");
}

TEST(OnnxShapeOpsTest, ExpandBroadcastsBothWaysAndTileChecksItsRepeats) {
  ModelProto m = Model();
  AddInput(m, "x", {3, 1});
  AddInt64Initializer(m, "shape", {2, 1, 4});
  AddNode(m, "Expand", {"x", "shape"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{2, 3, 4}}));

  ModelProto tile = Model();
  AddInput(tile, "x", {3, 1});
  AddInt64Initializer(tile, "repeats", {2});
  AddNode(tile, "Tile", {"x", "repeats"}, {"y"});
  AddOutput(tile, "y");
  ExpectError(Load(tile), absl::StatusCode::kInvalidArgument,
              "repeats length differs from the rank");
}

}  // namespace
}  // namespace guardjit::testing
