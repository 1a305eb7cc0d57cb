#include "runtime/tensor_copy.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "runtime/convert.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::ToDoubles;

TEST(TensorCopyTest, ConvertsEveryDtypePair) {
  const std::vector<double> values = {0, 1, -2, 3.75, 100};
  for (int i = 0; i < kNumDTypes; ++i) {
    for (int j = 0; j < kNumDTypes; ++j) {
      DType from = static_cast<DType>(i), to = static_cast<DType>(j);
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " +
                   std::string(DTypeName(to)));
      Tensor src = MakeTensor(DType::kFloat64, {5}, values);
      Tensor typed = *CopyAs(src, from);
      Tensor out = *CopyAs(NonContiguousCopy(typed), to);
      std::vector<double> got = ToDoubles(out);
      for (size_t k = 0; k < values.size(); ++k) {
        double v = values[k];
        if (from == DType::kBool || to == DType::kBool) {
          EXPECT_EQ(got[k] != 0, v != 0);
        } else if (from == DType::kUInt8 || to == DType::kUInt8) {
          if (v >= 0) EXPECT_EQ(got[k], std::trunc(v));
        } else if (IsFloating(from) && IsFloating(to)) {
          EXPECT_EQ(got[k], v);
        } else {
          EXPECT_EQ(got[k], std::trunc(v));
        }
      }
    }
  }
}

TEST(TensorCopyTest, ConversionsHaveNoUndefinedBehaviour) {
  EXPECT_EQ(Convert<int32_t>(std::numeric_limits<double>::quiet_NaN()),
            0);  // low bits of INT64_MIN
  EXPECT_EQ(Convert<int64_t>(1e30), INT64_MIN);
  EXPECT_EQ(Convert<int8_t>(int64_t{300}), int8_t{44});  // wraps like PyTorch
  EXPECT_EQ(Convert<uint8_t>(-1.0), uint8_t{255});
  EXPECT_TRUE(Convert<bool>(0.1f));
  EXPECT_FALSE(Convert<bool>(Half(0.0f)));
  EXPECT_EQ(static_cast<float>(Convert<BFloat16>(int64_t{257})), 256.0f);
}

TEST(TensorCopyTest, CopyIntoBroadcastsAndHandlesStrides) {
  Tensor dst = *Tensor::Zeros(DType::kFloat32, {5, 3});
  Tensor view = dst.AsStrided({2, 3}, {6, 1}, 3);  // rows 1 and 3
  CopyInto(view, MakeTensor(DType::kInt64, {3}, {7, 8, 9}));
  EXPECT_EQ(ToDoubles(dst),
            (std::vector<double>{0, 0, 0, 7, 8, 9, 0, 0, 0, 7, 8, 9, 0, 0, 0}));
}

TEST(TensorCopyTest, CastAndContiguousAvoidNeedlessCopies) {
  Tensor t = MakeTensor(DType::kFloat32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(CastIfNeeded(t, DType::kFloat32)->data(), t.data());
  EXPECT_NE(CastIfNeeded(t, DType::kFloat64)->data(), t.data());
  EXPECT_EQ(Contiguous(t)->data(), t.data());
  Tensor tr = t.AsStrided({2, 2}, {1, 2});
  Tensor c = *Contiguous(tr);
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(ToDoubles(c), (std::vector<double>{1, 3, 2, 4}));
}

}  // namespace
}  // namespace guardjit
