#include "core/tensor.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(TensorTest, EmptyIsContiguousAndAligned) {
  auto t = Tensor::Empty(DType::kFloat32, {2, 3, 4});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 24);
  EXPECT_EQ(Shape(t->strides().begin(), t->strides().end()), (Shape{12, 4, 1}));
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  auto empty = Tensor::Empty(DType::kInt64, {0, 5});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
  auto scalar = Tensor::Empty(DType::kBool, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->numel(), 1);
}

TEST(TensorTest, RejectsBadShapes) {
  EXPECT_EQ(Tensor::Empty(DType::kFloat32, {-1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Tensor::Empty(DType::kFloat32, {1LL << 40, 1LL << 40}).status().code(),
      absl::StatusCode::kOutOfRange);
  // numel fits int64 but bytes do not.
  EXPECT_EQ(Tensor::Empty(DType::kFloat64, {1LL << 61}).status().code(),
            absl::StatusCode::kOutOfRange);
  EXPECT_EQ(Tensor::Empty(DType::kFloat32, {2}, Device{DeviceType::kCUDA, 0})
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

TEST(TensorTest, ViewsShareMemory) {
  Tensor t = *Tensor::Empty(DType::kInt32, {3, 4});
  for (int i = 0; i < 12; ++i) t.data_as<int32_t>()[i] = i;
  Tensor col = t.AsStrided({3}, {4}, 1);  // column 1
  EXPECT_FALSE(col.is_contiguous() && col.numel() > 1 && col.stride(0) != 1);
  EXPECT_EQ(col.data_as<int32_t>()[0], 1);
  EXPECT_EQ(col.data_as<int32_t>()[col.stride(0) * 2], 9);
  EXPECT_EQ(col.storage(), t.storage());
  Tensor tr = t.AsStrided({4, 3}, {1, 4});
  EXPECT_FALSE(tr.is_contiguous());
  EXPECT_EQ(tr.DebugString(), "int32[4, 3] strides [1, 4]");
}

TEST(TensorTest, ScalarsAndItem) {
  Tensor f = Tensor::FromScalar(Scalar(2.5), DType::kFloat16);
  EXPECT_EQ(f.Item().to_double(), 2.5);
  Tensor i = Tensor::FromScalar(Scalar(-3.9), DType::kInt8);
  EXPECT_EQ(i.Item().to_int(), -3);
  Tensor b = Tensor::FromScalar(Scalar(int64_t{7}), DType::kBool);
  EXPECT_TRUE(b.Item().to_bool());
  // A float past int64 saturates (Scalar::to_int) before narrowing.
  EXPECT_EQ(Tensor::FromScalar(Scalar(1e300), DType::kInt64).Item().to_int(),
            INT64_MAX);
  EXPECT_EQ(Tensor::FromScalar(Scalar(-1e300), DType::kInt32).Item().to_int(),
            0);
  Tensor w = Tensor::WrappedNumber(Scalar(int64_t{4}));
  EXPECT_TRUE(w.is_wrapped_number());
  EXPECT_EQ(w.dtype(), DType::kInt64);
  EXPECT_EQ(Tensor::WrappedNumber(Scalar(1.0)).dtype(), DType::kFloat64);
}

}  // namespace
}  // namespace guardjit
