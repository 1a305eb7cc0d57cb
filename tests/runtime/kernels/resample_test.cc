// upsample_nearest2d.vec and upsample_bilinear2d.vec's reference kernels
// (runtime/kernels/resample.cc): values by hand (the index formulas worked
// through), the scale_factors cases as torch 2.15 computes them, and the
// argument errors ATen raises.

#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/arg_value.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectError;
using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::Iota;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;

Arg Floats(std::vector<double> v) {
  Arg::List list;
  for (double x : v) list.push_back(Arg::Float(x));
  return Arg::OfList(std::move(list));
}

TEST(ResampleTest, NearestIndexFormulas) {
  const Tensor x = Iota({1, 1, 2, 3});
  // H: floor(i * 2/3) = 0 0 1; W: floor(i * 0.6) = 0 0 1 1 2.
  ExpectTensor(RunOp1("aten.upsample_nearest2d.vec", {x, {3, 5}, Arg::None()}),
               DType::kFloat32, {1, 1, 3, 5},
               {0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5});
  // Factor 2 shifts (i >> 1); factor 1.5 scales by float(1/1.5):
  // floor(3 * 0.6666667f) = 2.
  ExpectTensor(RunOp1("aten.upsample_nearest2d.vec",
                      {NonContiguousCopy(x), Arg::None(), Floats({2.0, 1.5})}),
               DType::kFloat32, {1, 1, 4, 4},
               {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5});
  ExpectTensor(RunOp1("aten.upsample_nearest2d.vec",
                      {Iota({1, 1, 2, 3}, DType::kUInt8), {2, 3}, Arg::None()}),
               DType::kUInt8, {1, 1, 2, 3}, {0, 1, 2, 3, 4, 5});
}

TEST(ResampleTest, BilinearAlignCornersBothWays) {
  const Tensor y = Iota({1, 1, 2, 2});
  // align_corners: ratio 1/2, positions 0, 0.5, 1 on both axes.
  ExpectTensor(
      RunOp1("aten.upsample_bilinear2d.vec", {y, {3, 3}, true, Arg::None()}),
      DType::kFloat32, {1, 1, 3, 3}, {0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3});
  // Half-pixel: 0.5 * (i + 0.5) - 0.5 = -0.25 (clamped to 0), 0.25, 0.75,
  // 1.25 (index 1, both taps at the edge).
  ExpectTensor(RunOp1("aten.upsample_bilinear2d.vec",
                      {NonContiguousCopy(y), {4, 4}, false, Arg::None()}),
               DType::kFloat32, {1, 1, 4, 4},
               {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2,
                2.25, 2.75, 3});
  const Tensor z =
      MakeTensor(DType::kFloat32, {1, 1, 2, 3}, {1, 5, 2, 0, -3, 4});
  // scale_factors: sizes floor(2 * 1.5) = 3 and floor(3 * 1.7) = 5, the
  // source scale 1/factor (values from torch 2.15).
  ExpectTensor(
      RunOp1("aten.upsample_bilinear2d.vec",
             {z, Arg::None(), false, Floats({1.5, 1.7})}),
      DType::kFloat32, {1, 1, 3, 5},
      {1.0, 2.529411792755127, 4.88235330581665, 3.3235292434692383, 2.0, 0.5,
       0.6911764144897461, 0.9852941632270813, 2.117647171020508, 3.0, 0.0,
       -1.1470588445663452, -2.9117648601531982, 0.9117651581764221, 4.0},
      1e-6, 1e-6);
  ExpectTensor(
      RunOp1("aten.upsample_bilinear2d.vec",
             {MakeTensor(DType::kFloat64, {1, 1, 2, 3}, {1, 5, 2, 0, -3, 4}),
              {3, 2},
              false,
              Arg::None()}),
      DType::kFloat64, {1, 1, 3, 2}, {2.0, 2.75, 0.625, 2.5, -0.75, 2.25});
}

TEST(ResampleTest, Errors) {
  const Tensor x = Iota({1, 2, 3, 4});
  ExpectError(
      RunOp("aten.upsample_nearest2d.vec", {x, {5, 7}, Floats({1.5, 2.0})}),
      absl::StatusCode::kInvalidArgument, "exactly one of");
  ExpectError(
      RunOp("aten.upsample_nearest2d.vec", {x, Arg::None(), Arg::None()}),
      absl::StatusCode::kInvalidArgument, "exactly one of");
  ExpectError(RunOp("aten.upsample_nearest2d.vec", {x, {5}, Arg::None()}),
              absl::StatusCode::kInvalidArgument, "expected 2 entries");
  ExpectError(RunOp("aten.upsample_nearest2d.vec", {x, {0, 5}, Arg::None()}),
              absl::StatusCode::kInvalidArgument, "greater than 0");
  ExpectError(RunOp("aten.upsample_nearest2d.vec",
                    {x, Arg::None(), Floats({0.1, 1.0})}),
              absl::StatusCode::kInvalidArgument, "greater than 0");
  ExpectError(RunOp("aten.upsample_nearest2d.vec",
                    {Iota({2, 3, 4}), {5, 7}, Arg::None()}),
              absl::StatusCode::kInvalidArgument, "Non-empty 4D");
  ExpectError(RunOp("aten.upsample_nearest2d.vec",
                    {Iota({1, 0, 2, 2}), {5, 7}, Arg::None()}),
              absl::StatusCode::kInvalidArgument, "Non-empty 4D");
  ExpectError(RunOp("aten.upsample_nearest2d.vec",
                    {Iota({1, 1, 2, 2}, DType::kInt64), {5, 7}, Arg::None()}),
              absl::StatusCode::kUnimplemented, "int64");
  ExpectError(
      RunOp("aten.upsample_bilinear2d.vec",
            {Iota({1, 1, 2, 2}, DType::kUInt8), {5, 7}, false, Arg::None()}),
      absl::StatusCode::kUnimplemented, "uint8");
}

}  // namespace
}  // namespace guardjit
