// ATen Scalars (core/scalar.h): the dtype PyTorch gives a wrapped number,
// conversions between bool, int and float (saturating past int64), Python's
// spelling, and equality that keeps the kinds apart.

#include "core/scalar.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(ScalarTest, KindAndDType) {
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_EQ(Scalar(true).dtype(), DType::kBool);
  EXPECT_TRUE(Scalar(int64_t{3}).is_int());
  EXPECT_EQ(Scalar(int64_t{3}).dtype(), DType::kInt64);
  EXPECT_TRUE(Scalar(2.5).is_float());
  EXPECT_EQ(Scalar(2.5).dtype(), DType::kFloat64);
  // The default is the int 0.
  EXPECT_TRUE(Scalar().is_int());
  EXPECT_EQ(Scalar().to_int(), 0);
}

TEST(ScalarTest, Conversions) {
  EXPECT_EQ(Scalar(true).to_int(), 1);
  EXPECT_EQ(Scalar(false).to_double(), 0.0);
  EXPECT_EQ(Scalar(int64_t{-7}).to_double(), -7.0);
  EXPECT_TRUE(Scalar(int64_t{-7}).to_bool());
  EXPECT_FALSE(Scalar(int64_t{0}).to_bool());
  // Float to int truncates toward zero, as C++ and ATen's Scalar do.
  EXPECT_EQ(Scalar(-2.75).to_int(), -2);
  EXPECT_EQ(Scalar(2.75).to_int(), 2);
  EXPECT_TRUE(Scalar(0.5).to_bool());
  EXPECT_FALSE(Scalar(0.0).to_bool());
  EXPECT_FALSE(Scalar(-0.0).to_bool());
}

// Past int64's range a float saturates, and NaN is 0: defined results where
// a bare cast is undefined (the UBSan build aborts on one).
TEST(ScalarTest, FloatsPastInt64Saturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Scalar(1e300).to_int(), kMax);
  EXPECT_EQ(Scalar(inf).to_int(), kMax);
  EXPECT_EQ(Scalar(0x1p63).to_int(), kMax);
  EXPECT_EQ(Scalar(-1e300).to_int(), kMin);
  EXPECT_EQ(Scalar(-inf).to_int(), kMin);
  EXPECT_EQ(Scalar(std::nan("")).to_int(), 0);
  // The ends of the range convert exactly.
  EXPECT_EQ(Scalar(-0x1p63).to_int(), kMin);
  EXPECT_EQ(Scalar(std::nextafter(0x1p63, 0.0)).to_int(),
            int64_t{9223372036854774784});
}

TEST(ScalarTest, PythonSpelling) {
  EXPECT_EQ(Scalar(true).ToString(), "True");
  EXPECT_EQ(Scalar(false).ToString(), "False");
  EXPECT_EQ(Scalar(int64_t{-42}).ToString(), "-42");
  EXPECT_EQ(Scalar(2.5).ToString(), "2.5");
}

TEST(ScalarTest, EqualityKeepsKindsApart) {
  EXPECT_EQ(Scalar(int64_t{1}), Scalar(int64_t{1}));
  EXPECT_EQ(Scalar(1.5), Scalar(1.5));
  EXPECT_FALSE(Scalar(int64_t{1}) == Scalar(1.0));
  EXPECT_FALSE(Scalar(true) == Scalar(int64_t{1}));
  EXPECT_FALSE(Scalar(int64_t{1}) == Scalar(int64_t{2}));
}

}  // namespace
}  // namespace guardjit
