// max_pool2d_with_indices, avg_pool2d and _adaptive_avg_pool2d through the
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

}  // namespace
}  // namespace guardjit
