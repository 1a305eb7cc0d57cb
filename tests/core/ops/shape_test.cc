// Shape rules of the ops that build a tensor from the layout of others
// (core/ops/shape.cc), cat and constant_pad_nd here: result dtype and sizes,
// PyTorch's legacy 1-D empty inputs, and each check with the argument it
// names. The reference kernels' values: tests/runtime/kernels/shape_test.cc.

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

// cat([x0, x1, ...], dim).
absl::StatusOr<std::vector<TensorMeta>> Cat(
    const std::vector<TensorMeta>& inputs, int64_t dim) {
  std::vector<Arg> tensors;
  for (size_t i = 0; i < inputs.size(); ++i) {
    tensors.push_back(Arg::Ref("x" + std::to_string(i)));
  }
  return OpMetas("aten.cat.default", inputs,
                 {Arg::OfList(std::move(tensors)), Arg::Int(dim)});
}

// constant_pad_nd(x0, pad, value).
absl::StatusOr<std::vector<TensorMeta>> Pad(const TensorMeta& input,
                                            const std::vector<int64_t>& pad,
                                            Arg value = Arg::Int(0)) {
  return OpMetas("aten.constant_pad_nd.default", {input},
                 {Arg::Ref("x0"), Ints(pad), std::move(value)});
}

TEST(ShapeMetaTest, CatSumsTheDimAndPromotes) {
  auto out = Cat({TensorMeta(DType::kInt32, Shape{2, 3}),
                  TensorMeta(DType::kFloat16, Shape{2, 5}),
                  TensorMeta(DType::kInt64, Shape{2, 1})},
                 -1);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 9}));
  EXPECT_EQ((*out)[0].dtype, DType::kFloat16);

  // 1-D empty tensors are skipped whatever their rank, as PyTorch does.
  out = Cat({TensorMeta(DType::kFloat32, Shape{0}),
             TensorMeta(DType::kFloat32, Shape{4, 2}),
             TensorMeta(DType::kFloat32, Shape{1, 2})},
            0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{5, 2}));
  // Only those: one more, whatever `dim` says.
  out = Cat({TensorMeta(DType::kFloat32, Shape{0}),
             TensorMeta(DType::kFloat64, Shape{0})},
            5);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{0}));
  EXPECT_EQ((*out)[0].dtype, DType::kFloat64);
}

TEST(ShapeMetaTest, CatChecksNameTheTensor) {
  ExpectError(Cat({TensorMeta(DType::kFloat32, Shape{2, 3}),
                   TensorMeta(DType::kFloat32, Shape{4, 3})},
                  1),
              absl::StatusCode::kInvalidArgument,
              "node 'op' (aten.cat.default): argument 'tensors': sizes of "
              "tensors must match except in dimension 1. Expected size 2 but "
              "got size 4 for tensor number 1 in the list");
  ExpectError(Cat({TensorMeta(DType::kFloat32, Shape{2, 3}),
                   TensorMeta(DType::kFloat32, Shape{2, 3, 1})},
                  0),
              absl::StatusCode::kInvalidArgument,
              "tensors must have the same number of dimensions: got 2 and 3 "
              "for tensor 1 in the list");
  ExpectError(Cat({TensorMeta(DType::kFloat32, Shape{2}),
                   TensorMeta(DType::kFloat32, Shape{})},
                  0),
              absl::StatusCode::kInvalidArgument,
              "zero-dimensional tensor (at position 1) cannot be "
              "concatenated");
  ExpectError(Cat({TensorMeta(DType::kFloat32, Shape{2, 3})}, 2),
              absl::StatusCode::kInvalidArgument, "argument 'dim'");
  // Sizes whose sum passes 2^63 are out of range, not a wrapped size.
  const int64_t big = int64_t{1} << 62;
  ExpectError(Cat({TensorMeta(DType::kUInt8, Shape{big}),
                   TensorMeta(DType::kUInt8, Shape{big - 1}),
                   TensorMeta(DType::kUInt8, Shape{7})},
                  0),
              absl::StatusCode::kOutOfRange,
              "argument 'tensors': sizes along dimension 0 add up past 2^63 "
              "(9223372036854775807 + 7)");
}

TEST(ShapeMetaTest, ConstantPadPadsFromTheLastDimAndCropsWithNegatives) {
  const TensorMeta x(DType::kInt8, Shape{2, 3, 4});
  // (last_lo, last_hi, next_lo, next_hi): W 4 + 1 + 2, H 3 - 1 + 0.
  auto out = Pad(x, {1, 2, -1, 0});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2, 7}));
  EXPECT_EQ((*out)[0].dtype, DType::kInt8);
  // A dim cropped to nothing is empty; only crops past the size fail.
  out = Pad(x, {-4, 0});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 3, 0}));
  ExpectError(Pad(x, {-5, 3}), absl::StatusCode::kInvalidArgument,
              "argument 'pad': pads (-5, 3) crop more than the size 4 of "
              "dimension 2");
  ExpectError(Pad(x, {1, 2, 3}), absl::StatusCode::kInvalidArgument,
              "argument 'pad': length of pad must be even, got 3");
  ExpectError(Pad(x, {0, 0, 0, 0, 0, 0, 1, 1}),
              absl::StatusCode::kInvalidArgument,
              "pad of length 8 is longer than twice the input's rank 3");
  ExpectError(Pad(x, {1, 1}, Arg::Int(300)), absl::StatusCode::kInvalidArgument,
              "argument 'value': value 300 cannot be converted to type int8 "
              "without overflow");
  // Without a positive pad the value is never written, so never checked.
  EXPECT_TRUE(Pad(x, {-1, 0}, Arg::Int(300)).ok());
}

}  // namespace
}  // namespace guardjit::testing
