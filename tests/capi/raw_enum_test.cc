#include "capi/raw_enum.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {
namespace {

enum class Small : uint8_t { kA = 0, kB = 1 };

// What a C host may leave in an enum field: any int, stored bytewise.
template <typename E, typename I>
E Stored(I raw) {
  static_assert(sizeof(E) == sizeof(I));
  E value;
  std::memcpy(&value, &raw, sizeof(value));
  return value;
}

TEST(RawEnumTest, ReadsValidValues) {
  EXPECT_EQ(RawEnum(GJ_BACKEND_EAGER), static_cast<int>(GJ_BACKEND_EAGER));
  EXPECT_EQ(RawEnum(Small::kB), 1);
}

TEST(RawEnumTest, ReadsOutOfRangeValuesAsStored) {
  EXPECT_EQ(RawEnum(Stored<gj_backend>(12345)), 12345);
  EXPECT_EQ(RawEnum(Stored<gj_backend>(-1)), -1);
}

TEST(RawEnumTest, UnsignedUnderlyingTypesReadSigned) {
  // A host's -1 in a uint8_t-backed enum reads as -1, not 255.
  static_assert(std::is_same_v<decltype(RawEnum(Small::kA)), int8_t>);
  EXPECT_EQ(RawEnum(Stored<Small>(uint8_t{0xff})), -1);
  EXPECT_EQ(RawEnum(Stored<Small>(uint8_t{7})), 7);
}

}  // namespace
}  // namespace guardjit::capi
