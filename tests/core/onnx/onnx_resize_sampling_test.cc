// ONNX Resize's per-axis sampling against values worked from ONNX's
// reference (onnx/backend/test/case/node/resize.py); the node tests check
// whole resizes (ONNX.md).

#include "core/onnx/onnx_resize_sampling.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ResizeAxisSpec Spec(const char* mode, const char* coordinates, int64_t in,
                    int64_t out) {
  ResizeAxisSpec s;
  s.mode = mode;
  s.coordinates = coordinates;
  s.in = in;
  s.out = out;
  s.scale = static_cast<double>(out) / static_cast<double>(in);
  s.output_width = static_cast<double>(out);
  return s;
}

TEST(OnnxResizeSamplingTest, NearestModesRoundTiesTheirWay) {
  // 2 -> 4, asymmetric: x / 2 = 0, 0.5, 1, 1.5.
  ResizeAxisSpec s = Spec("nearest", "asymmetric", 2, 4);
  s.nearest_mode = "round_prefer_floor";
  auto floor_ties = SampleResizeAxis(s);
  ASSERT_TRUE(floor_ties.ok()) << floor_ties.status();
  ASSERT_TRUE(floor_ties->IsGather());
  EXPECT_THAT(floor_ties->index, ElementsAre(0, 0, 1, 1));
  s.nearest_mode = "round_prefer_ceil";
  // 1.5 rounds to 2, clamped to the edge.
  EXPECT_THAT(SampleResizeAxis(s)->index, ElementsAre(0, 1, 1, 1));
  s.nearest_mode = "ceil";
  EXPECT_THAT(SampleResizeAxis(s)->index, ElementsAre(0, 1, 1, 1));
  s.nearest_mode = "floor";
  EXPECT_THAT(SampleResizeAxis(s)->index, ElementsAre(0, 0, 1, 1));
  s.nearest_mode = "nearest_even";
  EXPECT_THAT(SampleResizeAxis(s).status().message(),
              HasSubstr("unknown nearest_mode 'nearest_even'"));
}

TEST(OnnxResizeSamplingTest, CoordinateModes) {
  // 4 -> 2 nearest (round_prefer_floor).
  auto half = SampleResizeAxis(Spec("nearest", "half_pixel", 4, 2));
  // (x + 0.5) * 2 - 0.5 = 0.5, 2.5: ties go down.
  EXPECT_THAT(half->index, ElementsAre(0, 2));
  auto nn = SampleResizeAxis(Spec("nearest", "tf_half_pixel_for_nn", 4, 2));
  // (x + 0.5) * 2 = 1, 3.
  EXPECT_THAT(nn->index, ElementsAre(1, 3));
  auto corners = SampleResizeAxis(Spec("nearest", "align_corners", 4, 2));
  // x * 3 / 1 = 0, 3.
  EXPECT_THAT(corners->index, ElementsAre(0, 3));
  // pytorch_half_pixel maps a single output to -0.5: the first input.
  auto one = SampleResizeAxis(Spec("linear", "pytorch_half_pixel", 4, 1));
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->IsGather());
  EXPECT_THAT(one->index, ElementsAre(0));
  EXPECT_FALSE(one->IsIdentity());  // 4 -> 1
  EXPECT_THAT(
      SampleResizeAxis(Spec("nearest", "tf_crop", 4, 2)).status().message(),
      HasSubstr("unknown coordinate_transformation_mode"));
}

TEST(OnnxResizeSamplingTest, LinearWeights) {
  // 2 -> 4 half_pixel: x_ori = -0.25, 0.25, 0.75, 1.25.
  auto s = SampleResizeAxis(Spec("linear", "half_pixel", 2, 4));
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->taps, 2);
  EXPECT_FALSE(s->IsGather());
  // Output 1 (0.25): 0.75 of input 0, 0.25 of input 1.
  EXPECT_EQ(s->index[0 * 4 + 1], 0);
  EXPECT_EQ(s->index[1 * 4 + 1], 1);
  EXPECT_THAT(s->weight[0 * 4 + 1], DoubleNear(0.75, 1e-12));
  EXPECT_THAT(s->weight[1 * 4 + 1], DoubleNear(0.25, 1e-12));
  // Output 0 (-0.25) reads the edge-padded input: both taps are input 0.
  EXPECT_EQ(s->index[0], 0);
  EXPECT_EQ(s->index[4], 0);
  EXPECT_THAT(s->weight[0] + s->weight[4], DoubleNear(1, 1e-12));
  // The same size is the identity.
  EXPECT_TRUE(
      SampleResizeAxis(Spec("linear", "half_pixel", 3, 3))->IsIdentity());
}

TEST(OnnxResizeSamplingTest, CubicAndExcludeOutside) {
  ResizeAxisSpec s = Spec("cubic", "asymmetric", 4, 8);
  s.cubic_a = -0.5;
  // Output 1: x_ori 0.5, neighbours -1..2 (input -1 is the edge, 0).
  auto plain = SampleResizeAxis(s);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->taps, 4);
  std::vector<double> w;
  for (int t = 0; t < 4; ++t) w.push_back(plain->weight[t * 8 + 1]);
  // A = -0.5 at ratio 0.5: -0.0625, 0.5625, 0.5625, -0.0625.
  EXPECT_THAT(
      w, ElementsAre(DoubleNear(-0.0625, 1e-12), DoubleNear(0.5625, 1e-12),
                     DoubleNear(0.5625, 1e-12), DoubleNear(-0.0625, 1e-12)));
  EXPECT_EQ(plain->index[0 * 8 + 1], 0);  // -1 clamped
  s.exclude_outside = true;
  auto excluded = SampleResizeAxis(s);
  ASSERT_TRUE(excluded.ok());
  // Input -1 gets no weight; the others are renormalized by 1.0625.
  EXPECT_EQ(excluded->weight[0 * 8 + 1], 0);
  EXPECT_THAT(excluded->weight[1 * 8 + 1], DoubleNear(0.5625 / 1.0625, 1e-12));
}

TEST(OnnxResizeSamplingTest, CropAndResizeMarksExtrapolatedOutputs) {
  ResizeAxisSpec s = Spec("linear", "tf_crop_and_resize", 5, 3);
  s.roi_start = 0.5;
  s.roi_end = 1.5;
  // x_ori = 2, 4, 6: the last is past the input (extrapolated).
  auto c = SampleResizeAxis(s);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->valid, ElementsAre(true, true, false));
  EXPECT_FALSE(c->IsGather());
  for (int t = 0; t < c->taps; ++t) EXPECT_EQ(c->weight[t * 3 + 2], 0);
  double sum = 0;
  for (int t = 0; t < c->taps; ++t) {
    if (c->index[t * 3 + 1] == 4) sum += c->weight[t * 3 + 1];
  }
  EXPECT_THAT(sum, DoubleNear(1, 1e-12));
}

TEST(OnnxResizeSamplingTest, BadSizesAreRefused) {
  EXPECT_FALSE(SampleResizeAxis(Spec("linear", "half_pixel", 0, 2)).ok());
  EXPECT_THAT(
      SampleResizeAxis(Spec("area", "half_pixel", 2, 4)).status().message(),
      HasSubstr("unknown mode 'area'"));
}

}  // namespace
}  // namespace guardjit
