#include "core/dtype.h"

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(DTypeTest, NamesRoundTripAndAliases) {
  for (int i = 0; i < kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    EXPECT_EQ(DTypeFromName(DTypeName(d)), d);
  }
  EXPECT_EQ(DTypeFromName("torch.float16"), DType::kFloat16);
  EXPECT_EQ(DTypeFromName("half"), DType::kFloat16);
  EXPECT_EQ(DTypeFromName("long"), DType::kInt64);
  EXPECT_EQ(DTypeFromName("bf16"), DType::kBFloat16);
  EXPECT_FALSE(DTypeFromName("float8").has_value());
  EXPECT_EQ(ItemSize(DType::kBFloat16), 2);
  EXPECT_EQ(ItemSize(DType::kInt64), 8);
  EXPECT_EQ(ItemSize(DType::kBool), 1);
}

TEST(DTypeTest, PromotionMatchesTorch) {
  // Spot checks of torch.promote_types.
  EXPECT_EQ(PromoteTypes(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(PromoteTypes(DType::kBool, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(PromoteTypes(DType::kInt32, DType::kInt64), DType::kInt64);
  EXPECT_EQ(PromoteTypes(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(PromoteTypes(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(PromoteTypes(DType::kBFloat16, DType::kFloat64), DType::kFloat64);
  // Symmetric, idempotent, and never loses the category.
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      DType a = static_cast<DType>(i), b = static_cast<DType>(j);
      DType p = PromoteTypes(a, b);
      EXPECT_EQ(p, PromoteTypes(b, a));
      EXPECT_EQ(PromoteTypes(p, a), p);
      if (IsFloating(a) || IsFloating(b)) EXPECT_TRUE(IsFloating(p));
    }
  }
}

}  // namespace
}  // namespace guardjit
