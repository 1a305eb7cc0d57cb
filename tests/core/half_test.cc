#include "core/half.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(HalfTest, KnownEncodings) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);               // max finite
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);               // rounds to inf
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -26)).bits, 0x0000);  // underflows to 0
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(Half(1.0f + std::ldexp(1.0f, -11))),
            1.0f);  // tie to even
  EXPECT_EQ(static_cast<float>(Half(1.0f + 3 * std::ldexp(1.0f, -11))),
            1.0f + std::ldexp(1.0f, -9));
}

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Half h = Half::FromBits(static_cast<uint16_t>(b));
    float f = h;
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).bits, b) << std::hex << b;
  }
}

TEST(BFloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
  EXPECT_EQ(
      static_cast<float>(BFloat16(std::numeric_limits<float>::infinity())),
      std::numeric_limits<float>::infinity());
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = BFloat16::FromBits(static_cast<uint16_t>(b));
    if (std::isnan(f)) continue;
    EXPECT_EQ(BFloat16(f).bits, b);
  }
}

}  // namespace
}  // namespace guardjit
