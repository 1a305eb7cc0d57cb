#include "core/ops/pool_args.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/op_registry.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;
using testing::Ints;

// A call node of `target` on a tensor input, its arguments bound as given
// (the window readers take what the graph builder stored, unchecked).
class PoolNode {
 public:
  PoolNode(const std::string& target, std::vector<Arg> args) {
    node_.name = "op";
    node_.target = target;
    node_.op = OpRegistry::Global().Find(target);
    EXPECT_NE(node_.op, nullptr) << target;
    args.insert(args.begin(), Arg::Value(ValueRef{0, 0}));
    node_.args = std::move(args);
  }

  MetaArgs Args() const {
    return MetaArgs(
        node_,
        [](ValueRef) {
          return TensorMeta(DType::kFloat32, Shape{1, 1, 8, 8});
        },
        [](const Scalar& s) { return TensorMeta(s.dtype(), Shape{}); });
  }

 private:
  Node node_;
};

constexpr char kMax2d[] = "aten.max_pool2d_with_indices.default";
constexpr char kMax3d[] = "aten.max_pool3d_with_indices.default";
constexpr char kAvg2d[] = "aten.avg_pool2d.default";

absl::StatusOr<PoolWindow> MaxWindow(const char* target, int rank,
                                     std::vector<Arg> args) {
  PoolNode node(target, std::move(args));
  return ReadPoolWindow(node.Args(), rank, "max_pool", 4, 5);
}

TEST(ReadPoolWindowTest, SingleIntsRepeatAndEmptyStrideIsTheKernel) {
  absl::StatusOr<PoolWindow> w = MaxWindow(
      kMax2d, 2, {Ints({3}), Ints({}), Ints({1}), Ints({2}), Arg::Bool(true)});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->rank, 2);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(w->kernel[d], 3);
    EXPECT_EQ(w->stride[d], 3);
    EXPECT_EQ(w->padding[d], 1);
    EXPECT_EQ(w->dilation[d], 2);
  }
  EXPECT_TRUE(w->ceil_mode);
}

TEST(ReadPoolWindowTest, PerDimValuesKeepTheirOrder) {
  absl::StatusOr<PoolWindow> w =
      MaxWindow(kMax3d, 3,
                {Ints({2, 3, 4}), Ints({1, 2, 3}), Ints({1, 0, 2}),
                 Ints({1, 1, 2}), Arg::Bool(false)});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->rank, 3);
  EXPECT_EQ(std::vector<int64_t>(w->kernel, w->kernel + 3),
            std::vector<int64_t>({2, 3, 4}));
  EXPECT_EQ(std::vector<int64_t>(w->stride, w->stride + 3),
            std::vector<int64_t>({1, 2, 3}));
  EXPECT_EQ(std::vector<int64_t>(w->padding, w->padding + 3),
            std::vector<int64_t>({1, 0, 2}));
  EXPECT_EQ(std::vector<int64_t>(w->dilation, w->dilation + 3),
            std::vector<int64_t>({1, 1, 2}));
  EXPECT_FALSE(w->ceil_mode);
}

TEST(ReadPoolWindowTest, WithoutDilationArgumentDilationIsOne) {
  PoolNode node(kAvg2d,
                {Ints({2, 2}), Ints({1, 1}), Ints({0, 1}), Arg::Bool(true)});
  absl::StatusOr<PoolWindow> w =
      ReadPoolWindow(node.Args(), 2, "avg_pool2d", -1, 4);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->dilation[0], 1);
  EXPECT_EQ(w->dilation[1], 1);
  EXPECT_EQ(w->padding[1], 1);
  EXPECT_TRUE(w->ceil_mode);
}

TEST(ReadPoolWindowTest, WrongListLengthNamesTheArgument) {
  ExpectError(MaxWindow(kMax2d, 2,
                        {Ints({2, 2, 2}), Ints({}), Ints({0}), Ints({1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'kernel_size': max_pool: kernel_size must either be a "
              "single int, or a tuple of two ints");
  ExpectError(MaxWindow(kMax3d, 3,
                        {Ints({2}), Ints({1, 1}), Ints({0}), Ints({1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'stride': max_pool: stride must either be a single "
              "int, or a tuple of three ints");
  ExpectError(MaxWindow(kMax2d, 2,
                        {Ints({2}), Ints({}), Ints({0}), Ints({1, 1, 1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument, "argument 'dilation'");
}

TEST(ReadPoolWindowTest, NonPositiveValuesAreRefusedAsATenWordsThem) {
  ExpectError(MaxWindow(kMax2d, 2,
                        {Ints({2, 0}), Ints({}), Ints({0}), Ints({1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'kernel_size': kernel size should be greater than "
              "zero, but got kH: 2 kW: 0");
  ExpectError(MaxWindow(kMax3d, 3,
                        {Ints({2}), Ints({1, -1, 1}), Ints({0}), Ints({1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'stride': stride should be greater than zero, but got "
              "dT: 1 dH: -1 dW: 1");
  ExpectError(MaxWindow(kMax2d, 2,
                        {Ints({2}), Ints({}), Ints({0}), Ints({0, 1}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'dilation': dilation should be greater than zero, but "
              "got dilationH: 0 dilationW: 1");
}

TEST(ReadPoolWindowTest, TwoDimPaddingIsBoundByHalfTheKernel) {
  // kernel 4: pad 2 allowed, 3 not; negative pads never.
  EXPECT_TRUE(
      MaxWindow(kMax2d, 2,
                {Ints({4}), Ints({}), Ints({2}), Ints({3}), Arg::Bool(false)})
          .ok());
  ExpectError(MaxWindow(kMax2d, 2,
                        {Ints({4, 2}), Ints({}), Ints({0, 3}), Ints({3}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'padding': pad should be smaller than or equal to "
              "half of kernel size, but got padW = 3, padH = 0, kW = 2, kH = "
              "4");
  ExpectError(
      MaxWindow(kMax2d, 2,
                {Ints({4}), Ints({}), Ints({-1}), Ints({1}), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument, "argument 'padding'");
}

TEST(ReadPoolWindowTest, ThreeDimPaddingIsBoundByHalfTheDilatedKernel) {
  // kernel 2 dilation 3: effective size 4, so pad 2 is allowed in 3-D
  // (2-D would refuse it: 2 > 2 / 2).
  EXPECT_TRUE(
      MaxWindow(kMax3d, 3,
                {Ints({2}), Ints({}), Ints({2}), Ints({3}), Arg::Bool(false)})
          .ok());
  ExpectError(MaxWindow(kMax3d, 3,
                        {Ints({2}), Ints({}), Ints({0, 0, 3}), Ints({3}),
                         Arg::Bool(false)}),
              absl::StatusCode::kInvalidArgument,
              "argument 'padding': pad should be at most half of effective "
              "kernel size, but got pad=3, kernel_size=2 and dilation=3");
  ExpectError(
      MaxWindow(kMax2d, 2,
                {Ints({2}), Ints({}), Ints({2}), Ints({3}), Arg::Bool(false)}),
      absl::StatusCode::kInvalidArgument, "argument 'padding'");
}

PoolWindow Window1d(int64_t kernel, int64_t stride, int64_t padding,
                    int64_t dilation, bool ceil_mode) {
  PoolWindow w;
  w.rank = 2;
  w.kernel[1] = kernel;
  w.stride[1] = stride;
  w.padding[1] = padding;
  w.dilation[1] = dilation;
  w.ceil_mode = ceil_mode;
  return w;
}

TEST(PoolOutputSizeTest, FloorMode) {
  EXPECT_EQ(PoolOutputSize(8, Window1d(2, 2, 0, 1, false), 1), 4);
  EXPECT_EQ(PoolOutputSize(7, Window1d(2, 2, 0, 1, false), 1), 3);
  EXPECT_EQ(PoolOutputSize(7, Window1d(3, 2, 1, 1, false), 1), 4);
  // Dilation 2 makes a 3-wide kernel span 5.
  EXPECT_EQ(PoolOutputSize(9, Window1d(3, 1, 0, 2, false), 1), 5);
}

TEST(PoolOutputSizeTest, CeilModeAddsAPartialWindow) {
  EXPECT_EQ(PoolOutputSize(7, Window1d(2, 2, 0, 1, true), 1), 4);
  EXPECT_EQ(PoolOutputSize(8, Window1d(2, 2, 0, 1, true), 1), 4);
}

TEST(PoolOutputSizeTest, CeilModeDropsAWindowStartingInTheRightPadding) {
  // input 5, kernel 2, stride 2, pad 1: ceil gives 4 windows, but the
  // fourth would start at 6 >= 5 + 1, inside the right padding only.
  EXPECT_EQ(PoolOutputSize(5, Window1d(2, 2, 1, 1, true), 1), 3);
  EXPECT_EQ(PoolOutputSize(5, Window1d(2, 2, 1, 1, false), 1), 3);
}

TEST(PoolOutputSizeTest, WindowLargerThanInputFloorsBelowZero) {
  // The numerator 1 - 3 - 1 = -3 is floored, not truncated: -3 / 2 gives
  // -2 + 1 = -1 windows (ATen's shape check then refuses the size), and
  // -3 / 3 gives 0.
  EXPECT_EQ(PoolOutputSize(1, Window1d(4, 2, 0, 1, false), 1), -1);
  EXPECT_EQ(PoolOutputSize(1, Window1d(4, 3, 0, 1, false), 1), 0);
}

TEST(PoolWindowTest, FullPutsUnitDimsInFront) {
  PoolWindow w;
  w.rank = 2;
  w.kernel[0] = 2;
  w.kernel[1] = 3;
  w.stride[0] = 4;
  w.stride[1] = 5;
  w.padding[0] = 1;
  w.padding[1] = 0;
  w.dilation[0] = 2;
  w.dilation[1] = 1;
  w.ceil_mode = true;
  const PoolWindow full = w.Full();
  EXPECT_EQ(full.rank, 3);
  EXPECT_TRUE(full.ceil_mode);
  EXPECT_EQ(std::vector<int64_t>(full.kernel, full.kernel + 3),
            std::vector<int64_t>({1, 2, 3}));
  EXPECT_EQ(std::vector<int64_t>(full.stride, full.stride + 3),
            std::vector<int64_t>({1, 4, 5}));
  EXPECT_EQ(std::vector<int64_t>(full.padding, full.padding + 3),
            std::vector<int64_t>({0, 1, 0}));
  EXPECT_EQ(std::vector<int64_t>(full.dilation, full.dilation + 3),
            std::vector<int64_t>({1, 2, 1}));
  // The leading unit dim pools a size-1 dim to size 1.
  EXPECT_EQ(PoolOutputSize(1, full, 0), 1);
  // A full window is its own Full().
  const PoolWindow again = full.Full();
  EXPECT_EQ(std::vector<int64_t>(again.kernel, again.kernel + 3),
            std::vector<int64_t>({1, 2, 3}));
}

}  // namespace
}  // namespace guardjit
