#include "capi/raw_enum.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {
namespace {

enum class Small : uint8_t { kA = 0, kB = 1 };

// What a C host may leave in an enum field: any int, stored bytewise. The
// field is only ever bound by reference, never loaded as E: loading an
// out-of-range value as the enum type is the very UB RawEnum avoids (UBSan's
// -fsanitize=enum reports it).
template <typename E>
struct Field {
  E value;
};

template <typename E, typename I>
Field<E> Stored(I raw) {
  static_assert(sizeof(E) == sizeof(I));
  Field<E> field;
  std::memcpy(&field, &raw, sizeof(field));
  return field;
}

TEST(RawEnumTest, ReadsValidValues) {
  EXPECT_EQ(RawEnum(GJ_BACKEND_EAGER), static_cast<int>(GJ_BACKEND_EAGER));
  EXPECT_EQ(RawEnum(Small::kB), 1);
}

TEST(RawEnumTest, ReadsOutOfRangeValuesAsStored) {
  EXPECT_EQ(RawEnum(Stored<gj_backend>(12345).value), 12345);
  EXPECT_EQ(RawEnum(Stored<gj_backend>(-1).value), -1);
}

TEST(RawEnumTest, UnsignedUnderlyingTypesReadSigned) {
  // A host's -1 in a uint8_t-backed enum reads as -1, not 255.
  static_assert(std::is_same_v<decltype(RawEnum(Small::kA)), int8_t>);
  EXPECT_EQ(RawEnum(Stored<Small>(uint8_t{0xff}).value), -1);
  EXPECT_EQ(RawEnum(Stored<Small>(uint8_t{7}).value), 7);
}

}  // namespace
}  // namespace guardjit::capi
