// Element conversion (runtime/convert.h) with PyTorch's x86-64 results and
// no undefined behaviour: float to int truncates toward zero, NaN and
// out-of-range floats give INT64_MIN cut to the target width, integer
// narrowing wraps, anything nonzero (NaN too) is true, and the reduced
// floats round through float.

#include "runtime/convert.h"

#include <cstdint>
#include <limits>

#include "core/half.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ConvertTest, FloatToIntTruncatesTowardZero) {
  EXPECT_EQ((Convert<int32_t, double>(2.9)), 2);
  EXPECT_EQ((Convert<int32_t, double>(-2.9)), -2);
  EXPECT_EQ((Convert<int64_t, float>(-0.5f)), 0);
  EXPECT_EQ((Convert<uint8_t, double>(200.7)), 200);
  // A negative float to uint8 wraps through int64, as PyTorch's CPU cast.
  EXPECT_EQ((Convert<uint8_t, double>(-1.0)), 255);
  EXPECT_EQ((Convert<int16_t, Half>(Half(-3.75f))), -3);
}

TEST(ConvertTest, NaNAndOutOfRangeFloatsGiveInt64MinCut) {
  EXPECT_EQ((Convert<int64_t, double>(kNaN)),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ((Convert<int64_t, double>(1e19)),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ((Convert<int64_t, double>(-kInf)),
            std::numeric_limits<int64_t>::min());
  // INT64_MIN's low 32, 8 bits are zero.
  EXPECT_EQ((Convert<int32_t, double>(kNaN)), 0);
  EXPECT_EQ((Convert<int8_t, float>(1e30f)), 0);
  // The largest double below 2^63 still converts.
  EXPECT_EQ((Convert<int64_t, double>(9.2233720368547748e18)),
            int64_t{9223372036854774784});
}

TEST(ConvertTest, IntegerNarrowingWraps) {
  EXPECT_EQ((Convert<int8_t, int64_t>(300)), 44);
  EXPECT_EQ((Convert<int8_t, int32_t>(-129)), 127);
  EXPECT_EQ((Convert<uint8_t, int32_t>(-1)), 255);
  EXPECT_EQ((Convert<int64_t, uint8_t>(255)), 255);
  EXPECT_EQ((Convert<int32_t, bool>(true)), 1);
}

TEST(ConvertTest, AnythingNonzeroIsTrue) {
  EXPECT_FALSE((Convert<bool, double>(0.0)));
  EXPECT_FALSE((Convert<bool, double>(-0.0)));
  EXPECT_TRUE((Convert<bool, double>(kNaN)));
  EXPECT_TRUE((Convert<bool, float>(1e-30f)));
  EXPECT_TRUE((Convert<bool, int64_t>(-2)));
  EXPECT_FALSE((Convert<bool, uint8_t>(0)));
  EXPECT_TRUE((Convert<bool, Half>(Half(0.5f))));
}

TEST(ConvertTest, ReducedFloatsRoundThroughFloat) {
  EXPECT_EQ(static_cast<float>(Convert<Half, double>(1.5)), 1.5f);
  // 2049 is not a half: round to nearest even, 2048.
  EXPECT_EQ(static_cast<float>(Convert<Half, int32_t>(2049)), 2048.0f);
  // bfloat16 keeps 8 bits of mantissa: 257 rounds to 256.
  EXPECT_EQ(static_cast<float>(Convert<BFloat16, int64_t>(257)), 256.0f);
  EXPECT_EQ((Convert<double, Half>(Half(0.25f))), 0.25);
  EXPECT_EQ((Convert<float, int64_t>(16777217)), 16777216.0f);
}

}  // namespace
}  // namespace guardjit
