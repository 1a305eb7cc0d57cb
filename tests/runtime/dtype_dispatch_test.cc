#include "runtime/dtype_dispatch.h"

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/dtype.h"
#include "core/half.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

// The C++ type VisitDType picks, named.
template <typename T>
std::string TypeName() {
  if (std::is_same_v<T, bool>) return "bool";
  if (std::is_same_v<T, uint8_t>) return "uint8";
  if (std::is_same_v<T, int8_t>) return "int8";
  if (std::is_same_v<T, int16_t>) return "int16";
  if (std::is_same_v<T, int32_t>) return "int32";
  if (std::is_same_v<T, int64_t>) return "int64";
  if (std::is_same_v<T, Half>) return "float16";
  if (std::is_same_v<T, BFloat16>) return "bfloat16";
  if (std::is_same_v<T, float>) return "float32";
  if (std::is_same_v<T, double>) return "float64";
  return "?";
}

TEST(VisitDTypeTest, EachDTypeGetsItsOwnCppType) {
  for (DType dtype : testing::kAllDTypes) {
    const std::string name = VisitDType(dtype, [](auto tag) {
      return TypeName<typename decltype(tag)::type>();
    });
    EXPECT_EQ(name, DTypeName(dtype));
    const size_t size = VisitDType(
        dtype, [](auto tag) { return sizeof(typename decltype(tag)::type); });
    EXPECT_EQ(static_cast<int>(size), ItemSize(dtype)) << DTypeName(dtype);
  }
}

TEST(VisitDTypeTest, ReturnsReferencesUnchanged) {
  int calls = 0;
  int& counted = VisitDType(DType::kInt32, [&](auto) -> int& {
    ++calls;
    return calls;
  });
  EXPECT_EQ(&counted, &calls);
  EXPECT_EQ(calls, 1);
}

TEST(DTypeTraitsTest, FloatCategoriesAndOpMath) {
  static_assert(kIsReducedFloat<Half> && kIsReducedFloat<BFloat16>);
  static_assert(!kIsReducedFloat<float> && !kIsReducedFloat<int8_t>);
  static_assert(kIsFloat<Half> && kIsFloat<float> && kIsFloat<double>);
  static_assert(!kIsFloat<int32_t> && !kIsFloat<bool>);
  static_assert(std::is_same_v<OpMath<Half>, float>);
  static_assert(std::is_same_v<OpMath<BFloat16>, float>);
  static_assert(std::is_same_v<OpMath<double>, double>);
  static_assert(std::is_same_v<OpMath<int64_t>, int64_t>);
  SUCCEED();
}

}  // namespace
}  // namespace guardjit
