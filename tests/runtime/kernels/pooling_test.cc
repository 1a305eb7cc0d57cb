// The 2-D and 3-D pools (max_pool{2,3}d_with_indices, avg_pool{2,3}d,
// _adaptive_avg_pool{2,3}d: one N-d shape rule and kernel) through the
// graph builder and the eager interpreter: hand-computed windows (padding,
// stride, dilation, ceil_mode), NaN and -inf, flat per-plane indices, and
// ATen's shape errors naming the node and the argument.

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr char kMaxPool[] = "aten.max_pool2d_with_indices.default";

// 0, 1, ..., n - 1.
std::vector<double> Iota(int n) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(MaxPool2dTest, TwoByTwoStrideTwoGivesValuesAndFlatIndices) {
  // One plane of 4x4: 0..15.
  const Tensor x = MakeTensor(DType::kFloat32, {1, 1, 4, 4}, Iota(16));
  auto out = RunOp(kMaxPool, {x, OpArg({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat32, {1, 1, 2, 2}, {5, 7, 13, 15}, 0, 0);
  ExpectTensor((*out)[1], DType::kInt64, {1, 1, 2, 2}, {5, 7, 13, 15}, 0, 0);
}

TEST(MaxPool2dTest, PaddingIsMinusInfinityAndIndicesArePerPlane) {
  // (C=2, 3, 3): plane 1 is plane 0 negated; kernel 3, stride 2, padding 1.
  std::vector<double> v = Iota(9);
  for (int i = 0; i < 9; ++i) v.push_back(-i);
  const Tensor x = MakeTensor(DType::kFloat64, {2, 3, 3}, v);
  auto out = RunOp(kMaxPool, {x, OpArg({3, 3}), OpArg({2, 2}), OpArg({1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  // Windows: rows [-1, 1] / [1, 3], cols alike, clipped to the input.
  ExpectTensor((*out)[0], DType::kFloat64, {2, 2, 2},
               {4, 5, 7, 8, 0, -1, -3, -4}, 0, 0);
  ExpectTensor((*out)[1], DType::kInt64, {2, 2, 2}, {4, 5, 7, 8, 0, 1, 3, 4}, 0,
               0);
}

TEST(MaxPool2dTest, DilationAndCeilMode) {
  // 5x5, kernel 2, stride 2, dilation 2: taps (r, r+2) x (c, c+2).
  const Tensor x = MakeTensor(DType::kFloat32, {1, 5, 5}, Iota(25));
  auto floor_mode = RunOp(kMaxPool, {x, OpArg({2, 2}), OpArg({2, 2}),
                                     OpArg({0, 0}), OpArg({2, 2})});
  ASSERT_TRUE(floor_mode.ok()) << floor_mode.status();
  ExpectTensor((*floor_mode)[0], DType::kFloat32, {1, 2, 2}, {12, 14, 22, 24},
               0, 0);
  // 5x5, kernel 2, stride 2, ceil_mode: a third, partial window per dim.
  auto ceil_mode = RunOp(kMaxPool, {x, OpArg({2, 2}), OpArg({2, 2}),
                                    OpArg({0, 0}), OpArg({1, 1}), true});
  ASSERT_TRUE(ceil_mode.ok()) << ceil_mode.status();
  ExpectTensor((*ceil_mode)[0], DType::kFloat32, {1, 3, 3},
               {6, 8, 9, 16, 18, 19, 21, 23, 24}, 0, 0);
  ExpectTensor((*ceil_mode)[1], DType::kInt64, {1, 3, 3},
               {6, 8, 9, 16, 18, 19, 21, 23, 24}, 0, 0);
  // ceil_mode never starts a window in the right padding: 4 + 2 * 1 with
  // kernel 2, stride 2 gives 3 windows, not 4.
  const Tensor y = MakeTensor(DType::kFloat32, {1, 4, 4}, Iota(16));
  auto padded = RunOp(kMaxPool, {y, OpArg({2, 2}), OpArg({2, 2}), OpArg({1, 1}),
                                 OpArg({1, 1}), true});
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ((*padded)[0].sizes()[1], 3);
}

TEST(MaxPool2dTest, NaNWinsAndAllMinusInfKeepsFirstIndex) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 2, 4},
                              {1, kNaN, -kInf, -kInf,  //
                               kNaN, 2, -kInf, -kInf});
  auto out = RunOp(kMaxPool, {x, OpArg({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat32, {1, 1, 2}, {kNaN, -kInf}, 0, 0);
  // The last NaN of the window wins; an all -inf window keeps its first tap.
  ExpectTensor((*out)[1], DType::kInt64, {1, 1, 2}, {4, 2}, 0, 0);
}

TEST(MaxPool2dTest, IntegersAndNonContiguousInputs) {
  const Tensor x = NonContiguousCopy(
      MakeTensor(DType::kInt32, {1, 1, 2, 4}, {3, -1, 7, 2, 0, 9, -5, 4}));
  auto out = RunOp(kMaxPool, {x, OpArg({2, 2})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kInt32, {1, 1, 1, 2}, {9, 7}, 0, 0);
  ExpectTensor((*out)[1], DType::kInt64, {1, 1, 1, 2}, {5, 2}, 0, 0);
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& result,
                 const std::string& argument, const std::string& detail) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(result.status().message());
  EXPECT_NE(message.find("node '"), std::string::npos) << message;
  EXPECT_NE(message.find("argument '" + argument + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find(detail), std::string::npos) << message;
}

TEST(MaxPool2dTest, ShapeErrors) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 1, 4, 4}, Iota(16));
  ExpectError(RunOp(kMaxPool, {x, OpArg({2, 2}), OpArg({2, 2}), OpArg({2, 2})}),
              "padding", "pad should be smaller than or equal to half");
  ExpectError(RunOp(kMaxPool, {x, OpArg({0, 2})}), "kernel_size",
              "greater than zero");
  ExpectError(RunOp(kMaxPool, {x, OpArg({2, 2, 2})}), "kernel_size",
              "expected 2 values, got 3");
  ExpectError(RunOp(kMaxPool, {x, OpArg({5, 5})}), "self",
              "Output size is too small");
  ExpectError(RunOp(kMaxPool, {MakeTensor(DType::kFloat32, {4, 4}, Iota(16)),
                               OpArg({2, 2})}),
              "self", "Expected 3D or 4D");
  ExpectError(
      RunOp(kMaxPool,
            {MakeTensor(DType::kBool, {1, 2, 2}, {1, 0, 1, 0}), OpArg({2, 2})}),
      "self", "bool");
}

constexpr char kAvgPool[] = "aten.avg_pool2d.default";

TEST(AvgPool2dTest, CountIncludePadAndDivisorOverride) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 3, 3}, Iota(9));
  // Kernel 2, stride 2, padding 1: windows [-1, 0] and [1, 2] per dim.
  const OpArg k({2, 2}), s({2, 2}), p({1, 1});
  ExpectTensor(RunOp1(kAvgPool, {x, k, s, p}), DType::kFloat32, {1, 2, 2},
               {0 / 4.0, (1 + 2) / 4.0, (3 + 6) / 4.0, (4 + 5 + 7 + 8) / 4.0},
               1e-6, 1e-6);
  ExpectTensor(RunOp1(kAvgPool, {x, k, s, p, false, false}), DType::kFloat32,
               {1, 2, 2}, {0, 1.5, 4.5, 6}, 1e-6, 1e-6);
  ExpectTensor(RunOp1(kAvgPool, {x, k, s, p, false, true, 1}), DType::kFloat32,
               {1, 2, 2}, {0, 3, 9, 24}, 0, 0);
}

TEST(AvgPool2dTest, CeilModeClipsTheLastWindowToThePaddedInput) {
  // 1x3 row, kernel 2, stride 2, ceil_mode: windows [0, 1] and [2, 3) -> [2].
  const Tensor x = MakeTensor(DType::kFloat64, {1, 1, 3}, {1, 2, 4});
  ExpectTensor(
      RunOp1(kAvgPool, {x, OpArg({1, 2}), OpArg({1, 2}), OpArg({0, 0}), true}),
      DType::kFloat64, {1, 1, 2}, {1.5, 4}, 0, 0);
}

TEST(AvgPool2dTest, Int64DividesWithTruncationAndOthersAreErrors) {
  const Tensor x = MakeTensor(DType::kInt64, {1, 2, 2}, {1, 2, 3, 5});
  ExpectTensor(RunOp1(kAvgPool, {x, OpArg({2, 2})}), DType::kInt64, {1, 1, 1},
               {2}, 0, 0);
  ExpectError(
      RunOp(kAvgPool, {MakeTensor(DType::kInt32, {1, 2, 2}, {1, 2, 3, 4}),
                       OpArg({2, 2})}),
      "self", "int32");
  ExpectError(
      RunOp(kAvgPool,
            {MakeTensor(DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4}),
             OpArg({2, 2}), OpArg({2, 2}), OpArg({0, 0}), false, true, 0}),
      "divisor_override", "divisor must be not zero");
}

constexpr char kAdaptive[] = "aten._adaptive_avg_pool2d.default";

TEST(AdaptiveAvgPool2dTest, OverlappingWindowsAndGlobalPooling) {
  // 1x5 -> 1x3: windows [0, 2), [1, 4), [3, 5).
  const Tensor x = MakeTensor(DType::kFloat32, {1, 1, 5}, {1, 2, 3, 4, 5});
  ExpectTensor(RunOp1(kAdaptive, {x, OpArg({1, 3})}), DType::kFloat32,
               {1, 1, 3}, {1.5, 3, 4.5}, 0, 0);
  // Global average pooling over (2, 3, 2, 2), as resnet's head does.
  const Tensor y = MakeTensor(DType::kFloat64, {2, 3, 2, 2}, Iota(24));
  std::vector<double> expected;
  for (int plane = 0; plane < 6; ++plane) expected.push_back(plane * 4 + 1.5);
  ExpectTensor(RunOp1(kAdaptive, {y, OpArg({1, 1})}), DType::kFloat64,
               {2, 3, 1, 1}, expected, 0, 0);
}

TEST(AdaptiveAvgPool2dTest, Errors) {
  ExpectError(RunOp(kAdaptive, {MakeTensor(DType::kFloat32, {1, 0, 2}, {}),
                                OpArg({1, 1})}),
              "self", "Expected 3D or 4D");
  ExpectError(
      RunOp(kAdaptive,
            {MakeTensor(DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4}), OpArg({1})}),
      "output_size", "expected 2 values, got 1");
  ExpectError(
      RunOp(kAdaptive, {MakeTensor(DType::kInt64, {1, 2, 2}, {1, 2, 3, 4}),
                        OpArg({1, 1})}),
      "self", "int64");
}

// 3-D pooling: x = arange(120) as (1, 2, 3, 4, 5); expected values from
// torch 2.15 on CPU.
Tensor Arange5d(DType dtype = DType::kFloat32) {
  std::vector<double> v(120);
  for (int i = 0; i < 120; ++i) v[i] = i;
  return MakeTensor(dtype, {1, 2, 3, 4, 5}, v);
}

TEST(Pool3dTest, MaxPoolPaddingStrideCeilMode) {
  auto out =
      RunOp("aten.max_pool3d_with_indices.default",
            {NonContiguousCopy(Arange5d()), std::vector<int64_t>{2, 2, 2},
             std::vector<int64_t>{1, 2, 2}, std::vector<int64_t>{1, 1, 0},
             int64_t{1}, true});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> channel0 = {
      1,  3,  4,  11, 13, 14, 16, 18, 19, 21, 23, 24, 31, 33, 34, 36, 38, 39,
      41, 43, 44, 51, 53, 54, 56, 58, 59, 41, 43, 44, 51, 53, 54, 56, 58, 59};
  std::vector<double> values = channel0;
  for (double v : channel0) values.push_back(v + 60);
  std::vector<double> indices = channel0;
  indices.insert(indices.end(), channel0.begin(), channel0.end());
  ExpectTensor((*out)[0], DType::kFloat32, {1, 2, 4, 3, 3}, values);
  ExpectTensor((*out)[1], DType::kInt64, {1, 2, 4, 3, 3}, indices);
}

// Dilated windows: each (1, 2, 2) window's maximum is its last tap, two
// rows and two columns on; indices are flat in the (D, H, W) volume.
TEST(Pool3dTest, MaxPoolDilationIndexesTheVolume) {
  auto out = RunOp("aten.max_pool3d_with_indices.default",
                   {Arange5d(), std::vector<int64_t>{1, 2, 2}, int64_t{1},
                    int64_t{0}, std::vector<int64_t>{1, 2, 2}, false});
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<double> channel0;
  for (int d = 0; d < 3; ++d) {
    for (int h = 0; h < 2; ++h) {
      for (int w = 0; w < 3; ++w) channel0.push_back(20 * d + 5 * h + w + 12);
    }
  }
  std::vector<double> values = channel0;
  for (double v : channel0) values.push_back(v + 60);
  std::vector<double> indices = channel0;
  indices.insert(indices.end(), channel0.begin(), channel0.end());
  ExpectTensor((*out)[0], DType::kFloat32, {1, 2, 3, 2, 3}, values);
  ExpectTensor((*out)[1], DType::kInt64, {1, 2, 3, 2, 3}, indices);
}

TEST(Pool3dTest, AvgPoolModes) {
  ExpectTensor(RunOp1("aten.avg_pool3d.default",
                      {Arange5d(), std::vector<int64_t>{2, 2, 2},
                       std::vector<int64_t>{1, 2, 2},
                       std::vector<int64_t>{1, 1, 0}, true, false}),
               DType::kFloat32, {1, 2, 4, 3, 3},
               {0.5,   2.5,   4.0,   8.0,   10.0,  11.5,  15.5,  17.5,  19.0,
                10.5,  12.5,  14.0,  18.0,  20.0,  21.5,  25.5,  27.5,  29.0,
                30.5,  32.5,  34.0,  38.0,  40.0,  41.5,  45.5,  47.5,  49.0,
                40.5,  42.5,  44.0,  48.0,  50.0,  51.5,  55.5,  57.5,  59.0,
                60.5,  62.5,  64.0,  68.0,  70.0,  71.5,  75.5,  77.5,  79.0,
                70.5,  72.5,  74.0,  78.0,  80.0,  81.5,  85.5,  87.5,  89.0,
                90.5,  92.5,  94.0,  98.0,  100.0, 101.5, 105.5, 107.5, 109.0,
                100.5, 102.5, 104.0, 108.0, 110.0, 111.5, 115.5, 117.5, 119.0});
  // A 4-D (C, D, H, W) input; int64 truncates; divisor_override.
  Tensor c = Arange5d(DType::kInt64).AsStrided({2, 3, 4, 5}, {60, 20, 5, 1});
  ExpectTensor(
      RunOp1("aten.avg_pool3d.default", {c, int64_t{2}, std::vector<int64_t>{},
                                         std::vector<int64_t>{0, 1, 1}}),
      DType::kInt64, {2, 1, 3, 3},
      {2, 5, 6, 8, 19, 21, 6, 13, 14, 17, 35, 36, 38, 79, 81, 21, 43, 44}, 0,
      0);
  Tensor f = Arange5d().AsStrided({2, 3, 4, 5}, {60, 20, 5, 1});
  Tensor with_divisor =
      RunOp1("aten.avg_pool3d.default",
             {f, int64_t{2}, std::vector<int64_t>{},
              std::vector<int64_t>{0, 1, 1}, false, true, int64_t{3}});
  std::vector<double> got = ToDoubles(with_divisor);
  const std::vector<double> first = {6.6666665, 15.333333, 18.0,
                                     23.333334, 50.666668, 56.0,
                                     16.666666, 35.333332, 38.0};
  for (size_t i = 0; i < first.size(); ++i) EXPECT_NEAR(got[i], first[i], 1e-5);
}

TEST(Pool3dTest, AdaptiveAvgPool) {
  Tensor x = Arange5d().AsStrided({2, 3, 4, 5}, {60, 20, 5, 1});
  Tensor out = RunOp1("aten._adaptive_avg_pool3d.default",
                      {x, std::vector<int64_t>{2, 3, 2}});
  std::vector<double> got = ToDoubles(out);
  const std::vector<double> first = {13.5, 15.5, 18.5, 20.5, 23.5, 25.5,
                                     33.5, 35.5, 38.5, 40.5, 43.5, 45.5};
  ASSERT_EQ(got.size(), 24u);
  for (size_t i = 0; i < first.size(); ++i) {
    EXPECT_DOUBLE_EQ(got[i], first[i]);
    EXPECT_DOUBLE_EQ(got[i + 12], first[i] + 60);
  }
}

TEST(Pool3dTest, Errors) {
  Tensor x = Arange5d();
  ExpectError(RunOp("aten.max_pool3d_with_indices.default",
                    {x, std::vector<int64_t>{2, 2}}),
              "kernel_size", "expected 3 values, got 2");
  ExpectError(RunOp("aten.max_pool3d_with_indices.default",
                    {x.AsStrided({3, 4, 5}, {20, 5, 1}), int64_t{2}}),
              "self", "4D or 5D");
  ExpectError(RunOp("aten.max_pool3d_with_indices.default", {x, int64_t{5}}),
              "self", "Output size is too small");
  ExpectError(RunOp("aten.max_pool3d_with_indices.default",
                    {x, int64_t{2}, std::vector<int64_t>{},
                     std::vector<int64_t>{2, 0, 0}}),
              "padding", "pad should be at most half of effective kernel");
  ExpectError(
      RunOp("aten.avg_pool3d.default", {Arange5d(DType::kInt32), int64_t{2}}),
      "self", "not implemented for int32");
  ExpectError(RunOp("aten.max_pool3d_with_indices.default",
                    {x, std::vector<int64_t>{2, 0, 2}}),
              "kernel_size",
              "kernel size should be greater than zero, but got kT: 2 kH: 0 "
              "kW: 2");
  ExpectError(RunOp("aten.avg_pool3d.default",
                    {x, int64_t{2}, std::vector<int64_t>{1, 1, -1}}),
              "stride", "dT: 1 dH: 1 dW: -1");
  ExpectError(RunOp("aten._adaptive_avg_pool3d.default",
                    {x, std::vector<int64_t>{2, 2}}),
              "output_size", "expected 3 values, got 2");
}

}  // namespace
}  // namespace guardjit
