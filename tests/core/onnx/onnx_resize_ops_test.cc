// The Resize mapping: which ATen ops a Resize loads to, its output shapes,
// and its refusals (ONNX's node tests check the numbers: ONNX.md).

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/core/onnx/onnx_test_models.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// Resize(x [1, 1, 2, 4], roi, scales) with the given mode attributes.
ModelProto ResizeModel(const std::string& mode, const std::string& coordinates,
                       std::vector<float> scales) {
  ModelProto m = Model(13);
  AddInput(m, "x", {1, 1, 2, 4});
  AddInitializer(m, "scales", {static_cast<int64_t>(scales.size())}, scales);
  NodeProto* n = AddNode(m, "Resize", {"x", "", "scales"}, {"y"});
  SetString(n, "mode", mode);
  SetString(n, "coordinate_transformation_mode", coordinates);
  AddOutputs(m, {"y"});
  return m;
}

TEST(OnnxResizeOpsTest, AtenUpsamplingWhereTheRulesAgree) {
  // asymmetric coordinates with floor rounding are ATen's nearest rule.
  ModelProto m = ResizeModel("nearest", "asymmetric", {1, 1, 2, 2});
  SetString(m.mutable_graph()->mutable_node(0), "nearest_mode", "floor");
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_nearest2d.vec"), 1);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 4, 8}}));
  g = Load(ResizeModel("linear", "half_pixel", {1, 1, 2, 2}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_bilinear2d.vec"), 1);
}

TEST(OnnxResizeOpsTest, OtherRulesGatherAndWeighAxisByAxis) {
  // Cubic: four weighted gathers on each resized axis, none on the others.
  auto g = Load(ResizeModel("cubic", "half_pixel", {1, 1, 2, 0.5}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.upsample_bilinear2d.vec"), 0);
  EXPECT_EQ(CountTarget(**g, "aten.index_select.default"), 8);
  EXPECT_EQ(CountTarget(**g, "aten.mul.Tensor"), 8);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 4, 2}}));
  // Nearest downsampling: one gather per resized axis, no weights.
  g = Load(ResizeModel("nearest", "half_pixel", {1, 1, 0.6f, 0.6f}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CountTarget(**g, "aten.index_select.default"), 2);
  EXPECT_EQ(CountTarget(**g, "aten.mul.Tensor"), 0);
  // The reference truncates scale * size: 2 * 0.6 -> 1, 4 * 0.6 -> 2.
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 1, 2}}));
}

TEST(OnnxResizeOpsTest, CropAndResizeFillsTheExtrapolationValue) {
  ModelProto m = Model(13);
  AddInput(m, "x", {1, 1, 4, 4});
  AddInitializer(m, "roi", {8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.5f, 1.7f});
  AddInt64Initializer(m, "sizes", {4}, {1, 1, 3, 3});
  NodeProto* n = AddNode(m, "Resize", {"x", "roi", "", "sizes"}, {"y"});
  SetString(n, "mode", "linear");
  SetString(n, "coordinate_transformation_mode", "tf_crop_and_resize");
  SetFloat(n, "extrapolation_value", 10);
  AddOutputs(m, {"y"});
  auto g = Load(m);
  ASSERT_TRUE(g.ok()) << g.status();
  // Rows 1.65 * x + 1.2 and columns 1.65 * x + 1.8: the last of each is
  // past the input.
  EXPECT_EQ(CountTarget(**g, "aten.where.self"), 2);
  EXPECT_EQ(OutputShapes(**g), (std::vector<Shape>{{1, 1, 3, 3}}));
}

TEST(OnnxResizeOpsTest, RefusalsNameWhatIsWrong) {
  auto g = Load(ResizeModel("area", "half_pixel", {1, 1, 2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("mode 'area'"));
  g = Load(ResizeModel("linear", "half_pixel", {1, 2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("3 scales for a rank-4 input"));
  g = Load(ResizeModel("linear", "half_pixel", {1, 1, -2, 2}));
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("is not positive"));
  // Weighted resizing of integers is refused (nearest gathers them).
  ModelProto m = ResizeModel("cubic", "half_pixel", {1, 1, 2, 2});
  m.mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(TensorProto::INT32);
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.status().message(), HasSubstr("of a int32 input"));
}

}  // namespace
}  // namespace guardjit::testing
