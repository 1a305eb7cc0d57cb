// Tests of the Core ATen shape/view/creation ops of issue #16 part A: flip,
// repeat, diagonal, as_strided, copy, fill.Scalar, empty.memory_format,
// empty_strided, native_dropout, sym_stride.int, sym_storage_offset,
// select_scatter and slice_scatter. Expected values are computed by hand
// (checked against torch 2.15); errors name the argument.

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
using ::guardjit::testing::ToDoubles;

TEST(CoreAtenShapeTest, FlipAnyDimsAndStrides) {
  const Tensor x = Iota({2, 3});
  ExpectTensor(RunOp1("aten.flip.default", {x, {0}}), DType::kFloat32, {2, 3},
               {3, 4, 5, 0, 1, 2});
  ExpectTensor(RunOp1("aten.flip.default", {x, {-1}}), DType::kFloat32, {2, 3},
               {2, 1, 0, 5, 4, 3});
  ExpectTensor(RunOp1("aten.flip.default", {NonContiguousCopy(x), {0, 1}}),
               DType::kFloat32, {2, 3}, {5, 4, 3, 2, 1, 0});
  ExpectTensor(RunOp1("aten.flip.default", {x, std::vector<int64_t>{}}),
               DType::kFloat32, {2, 3}, {0, 1, 2, 3, 4, 5});
  ExpectTensor(
      RunOp1("aten.flip.default", {MakeTensor(DType::kInt64, {}, {7}), {0}}),
      DType::kInt64, {}, {7});
  ExpectError(RunOp("aten.flip.default", {x, {0, -2}}),
              absl::StatusCode::kInvalidArgument, "appears multiple times");
  ExpectError(RunOp("aten.flip.default", {x, {2}}),
              absl::StatusCode::kInvalidArgument, "argument 'dims'");
}

TEST(CoreAtenShapeTest, RepeatTilesAndAddsLeadingDims) {
  const Tensor x = MakeTensor(DType::kInt32, {2}, {1, 2});
  ExpectTensor(RunOp1("aten.repeat.default", {x, {3}}), DType::kInt32, {6},
               {1, 2, 1, 2, 1, 2});
  ExpectTensor(RunOp1("aten.repeat.default", {x, {2, 2}}), DType::kInt32,
               {2, 4}, {1, 2, 1, 2, 1, 2, 1, 2});
  const Tensor m = NonContiguousCopy(Iota({2, 2}));  // [[0, 1], [2, 3]]
  ExpectTensor(RunOp1("aten.repeat.default", {m, {2, 1}}), DType::kFloat32,
               {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3});
  ExpectTensor(RunOp1("aten.repeat.default", {m, {1, 0, 3}}), DType::kFloat32,
               {1, 0, 6}, {});
  ExpectError(RunOp("aten.repeat.default", {m, {2}}),
              absl::StatusCode::kInvalidArgument, "can not be smaller");
  ExpectError(RunOp("aten.repeat.default", {m, {2, -1}}),
              absl::StatusCode::kInvalidArgument, "negative dimension");
}

TEST(CoreAtenShapeTest, DiagonalIsAViewWithOffsets) {
  const Tensor x = Iota({3, 4});
  const Tensor d = RunOp1("aten.diagonal.default", {x});
  ExpectTensor(d, DType::kFloat32, {3}, {0, 5, 10});
  EXPECT_EQ(d.data(), x.data());  // a view
  ExpectTensor(RunOp1("aten.diagonal.default", {x, 1}), DType::kFloat32, {3},
               {1, 6, 11});
  ExpectTensor(RunOp1("aten.diagonal.default", {x, -1}), DType::kFloat32, {2},
               {4, 9});
  ExpectTensor(RunOp1("aten.diagonal.default", {x, 5}), DType::kFloat32, {0},
               {});
  ExpectTensor(RunOp1("aten.diagonal.default", {x, 0, 1, 0}), DType::kFloat32,
               {3}, {0, 5, 10});
  // dims 0 and 2 of a (2, 3, 2): the diagonal becomes the last dim.
  ExpectTensor(RunOp1("aten.diagonal.default", {Iota({2, 3, 2}), 0, 0, 2}),
               DType::kFloat32, {3, 2}, {0, 7, 2, 9, 4, 11});
  ExpectError(RunOp("aten.diagonal.default", {x, 0, 0, -2}),
              absl::StatusCode::kInvalidArgument, "cannot be identical");
  ExpectError(RunOp("aten.diagonal.default", {Iota({2}), 0, 0, 1}),
              absl::StatusCode::kInvalidArgument, "argument 'dim2'");
}

TEST(CoreAtenShapeTest, AsStridedViewsTheStorage) {
  const Tensor x = Iota({3, 4});
  const Tensor v = RunOp1("aten.as_strided.default", {x, {2, 2}, {1, 4}});
  ExpectTensor(v, DType::kFloat32, {2, 2}, {0, 4, 1, 5});
  EXPECT_EQ(v.data(), x.data());
  ExpectTensor(RunOp1("aten.as_strided.default", {x, {3}, {5}, 1}),
               DType::kFloat32, {3}, {1, 6, 11});
  ExpectError(RunOp("aten.as_strided.default", {x, {4, 4}, {4, 1}}),
              absl::StatusCode::kOutOfRange, "out of bounds");
  ExpectError(RunOp("aten.as_strided.default", {x, {2, 2}, {1, 2, 3}}),
              absl::StatusCode::kInvalidArgument, "mismatch in length");
  ExpectError(RunOp("aten.as_strided.default", {x, {2, 2}, {-1, 2}}),
              absl::StatusCode::kInvalidArgument, "Negative strides");
  ExpectError(RunOp("aten.as_strided.default", {x, {2, 2}, {1, 2}, -1}),
              absl::StatusCode::kInvalidArgument, "invalid storage offset");
}

TEST(CoreAtenShapeTest, CopyBroadcastsAndConverts) {
  const Tensor self = MakeTensor(DType::kInt32, {2, 3}, {9, 9, 9, 9, 9, 9});
  const Tensor src = MakeTensor(DType::kFloat32, {3}, {1.7, -2.5, 3});
  ExpectTensor(RunOp1("aten.copy.default", {self, src}), DType::kInt32, {2, 3},
               {1, -2, 3, 1, -2, 3});
  ExpectError(RunOp("aten.copy.default", {self, Iota({3, 3})}),
              absl::StatusCode::kInvalidArgument, "argument 'src'");
}

TEST(CoreAtenShapeTest, FillScalarChecksOverflow) {
  ExpectTensor(
      RunOp1("aten.fill.Scalar", {MakeTensor(DType::kInt8, {2}, {0, 0}), 2.7}),
      DType::kInt8, {2}, {2, 2});
  ExpectTensor(
      RunOp1("aten.fill.Scalar", {MakeTensor(DType::kBool, {2}, {0, 0}), 2.7}),
      DType::kBool, {2}, {1, 1});
  ExpectTensor(
      RunOp1("aten.fill.Scalar", {NonContiguousCopy(Iota({2, 2})), -0.5}),
      DType::kFloat32, {2, 2}, {-0.5, -0.5, -0.5, -0.5});
  ExpectError(
      RunOp("aten.fill.Scalar", {MakeTensor(DType::kInt8, {2}, {0, 0}), 300}),
      absl::StatusCode::kInvalidArgument, "without overflow");
}

TEST(CoreAtenShapeTest, EmptyIsZerosWithTheAskedStrides) {
  ExpectTensor(
      RunOp1("aten.empty.memory_format", {{2, 3}}, {{"dtype", DType::kInt64}}),
      DType::kInt64, {2, 3}, {0, 0, 0, 0, 0, 0});
  const Tensor s = RunOp1("aten.empty_strided.default", {{2, 3}, {1, 2}});
  ExpectTensor(s, DType::kFloat32, {2, 3}, {0, 0, 0, 0, 0, 0});
  EXPECT_EQ(s.stride(0), 1);
  EXPECT_EQ(s.stride(1), 2);
  ExpectError(RunOp("aten.empty.memory_format", {{2, -3}}),
              absl::StatusCode::kInvalidArgument, "negative dimension");
  ExpectError(RunOp("aten.empty_strided.default", {{2, 3}, {1}}),
              absl::StatusCode::kInvalidArgument, "dimensionality of sizes");
}

TEST(CoreAtenShapeTest, NativeDropoutWithoutRandomness) {
  const Tensor x = MakeTensor(DType::kFloat32, {3}, {1.5, -2, NAN});
  auto eval = RunOp("aten.native_dropout.default", {x, 0.5, false});
  ASSERT_TRUE(eval.ok()) << eval.status();
  ExpectTensor((*eval)[0], DType::kFloat32, {3}, {1.5, -2, NAN});
  ExpectTensor((*eval)[1], DType::kBool, {3}, {1, 1, 1});
  auto keep = RunOp("aten.native_dropout.default", {x, 0.0, true});
  ASSERT_TRUE(keep.ok()) << keep.status();
  ExpectTensor((*keep)[0], DType::kFloat32, {3}, {1.5, -2, NAN});
  auto drop = RunOp("aten.native_dropout.default", {x, 1.0, true});
  ASSERT_TRUE(drop.ok()) << drop.status();
  ExpectTensor((*drop)[0], DType::kFloat32, {3}, {0, 0, NAN});
  EXPECT_TRUE(std::signbit(ToDoubles((*drop)[0])[1]));  // -2 * 0 * 0 = -0
  ExpectTensor((*drop)[1], DType::kBool, {3}, {0, 0, 0});
  // Eval mode does not check p (ATen checks it in bernoulli_).
  EXPECT_TRUE(RunOp("aten.native_dropout.default", {x, 1.5, false}).ok());
  ExpectError(RunOp("aten.native_dropout.default", {x, 0.5, true}),
              absl::StatusCode::kUnimplemented, "random number");
  ExpectError(RunOp("aten.native_dropout.default", {x, -0.5, true}),
              absl::StatusCode::kInvalidArgument, "argument 'p'");
  auto empty = RunOp("aten.native_dropout.default", {Iota({0, 2}), 0.5, false});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[1].dtype(), DType::kFloat32);  // ATen's empty_like
}

TEST(CoreAtenShapeTest, SymStrideAndStorageOffsetReadTheTensor) {
  const Tensor base = Iota({4, 5});
  const Tensor view = base.AsStrided({2, 2}, {1, 5}, 6);
  auto stride = RunOp("aten.sym_stride.int", {view, -1});
  ASSERT_TRUE(stride.ok()) << stride.status();
  EXPECT_EQ((*stride)[0].ItemAsInt64(), 5);
  auto offset = RunOp("aten.sym_storage_offset.default", {view});
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ((*offset)[0].ItemAsInt64(), 6);
  ExpectError(RunOp("aten.sym_stride.int", {view, 2}),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  ExpectError(RunOp("aten.sym_stride.int", {Iota({}), 0}),
              absl::StatusCode::kInvalidArgument, "no strides");
}

TEST(CoreAtenShapeTest, SelectAndSliceScatter) {
  const Tensor self = Iota({3, 4});
  const Tensor row = MakeTensor(DType::kFloat64, {4}, {-1, -2, -3, -4});
  ExpectTensor(RunOp1("aten.select_scatter.default", {self, row, 0, -2}),
               DType::kFloat32, {3, 4},
               {0, 1, 2, 3, -1, -2, -3, -4, 8, 9, 10, 11});
  const Tensor cols = MakeTensor(DType::kInt64, {3, 2}, {7, 8, 7, 8, 7, 8});
  ExpectTensor(RunOp1("aten.slice_scatter.default",
                      {NonContiguousCopy(self), cols, 1, 0, 4, 2}),
               DType::kFloat32, {3, 4}, {7, 1, 8, 3, 7, 5, 8, 7, 7, 9, 8, 11});
  ExpectError(RunOp("aten.select_scatter.default",
                    {self, MakeTensor(DType::kFloat32, {3}, {0, 0, 0}), 0, 1}),
              absl::StatusCode::kInvalidArgument, "slice size = [4]");
  ExpectError(RunOp("aten.select_scatter.default", {self, row, 0, 5}),
              absl::StatusCode::kInvalidArgument, "argument 'index'");
  ExpectError(
      RunOp("aten.slice_scatter.default", {self, Iota({1, 2}), 1, 0, 4, 2}),
      absl::StatusCode::kInvalidArgument, "src size = [1, 2]");
}

}  // namespace
}  // namespace guardjit
