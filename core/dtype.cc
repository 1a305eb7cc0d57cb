#include "core/dtype.h"

#include <array>

#include "absl/strings/string_view.h"

namespace guardjit {
namespace {

struct DTypeInfo {
  absl::string_view name;
  int item_size;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"bool", 1},
    {"uint8", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
}};

}  // namespace

int ItemSize(DType dtype) { return kInfo[static_cast<int>(dtype)].item_size; }

absl::string_view DTypeName(DType dtype) {
  return kInfo[static_cast<int>(dtype)].name;
}

std::optional<DType> DTypeFromName(absl::string_view name) {
  if (name.substr(0, 6) == "torch.") name.remove_prefix(6);
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kInfo[i].name == name) return static_cast<DType>(i);
  }
  struct Alias {
    absl::string_view name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float", DType::kFloat32}, {"double", DType::kFloat64},
      {"half", DType::kFloat16},  {"short", DType::kInt16},
      {"int", DType::kInt32},     {"long", DType::kInt64},
      {"f32", DType::kFloat32},   {"f64", DType::kFloat64},
      {"f16", DType::kFloat16},   {"bf16", DType::kBFloat16},
      {"i8", DType::kInt8},       {"u8", DType::kUInt8},
      {"i16", DType::kInt16},     {"i32", DType::kInt32},
      {"i64", DType::kInt64},
  };
  for (const Alias& a : kAliases) {
    if (a.name == name) return a.dtype;
  }
  return std::nullopt;
}

DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  // c10's promotion table restricted to our types.
  constexpr DType b1 = DType::kBool, u1 = DType::kUInt8, i1 = DType::kInt8,
                  i2 = DType::kInt16, i4 = DType::kInt32, i8 = DType::kInt64,
                  f2 = DType::kFloat16, bf = DType::kBFloat16,
                  f4 = DType::kFloat32, f8 = DType::kFloat64;
  static constexpr DType kTable[kNumDTypes][kNumDTypes] = {
      /*        b1  u1  i1  i2  i4  i8  f2  bf  f4  f8 */
      /* b1 */ {b1, u1, i1, i2, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i2, i1, i2, i4, i8, f2, bf, f4, f8},
      /* i2 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return kTable[static_cast<int>(a)][static_cast<int>(b)];
}

}  // namespace guardjit
