#include "bindings/cli/dtype.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace guardjit_cli {
namespace {

const DTypeInfo kDTypes[] = {
    {"float32", {kDLFloat, 32, 1}, true, false},
    {"float64", {kDLFloat, 64, 1}, true, false},
    {"float16", {kDLFloat, 16, 1}, true, false},
    {"bfloat16", {kDLBfloat, 16, 1}, true, false},
    {"int8", {kDLInt, 8, 1}, false, false},
    {"int16", {kDLInt, 16, 1}, false, false},
    {"int32", {kDLInt, 32, 1}, false, false},
    {"int64", {kDLInt, 64, 1}, false, false},
    {"uint8", {kDLUInt, 8, 1}, false, false},
    {"bool", {GJ_DL_BOOL, 8, 1}, false, true},
};

struct Alias {
  const char* name;
  const char* canonical;
};
const Alias kAliases[] = {{"float", "float32"}, {"double", "float64"},
                          {"half", "float16"},  {"long", "int64"},
                          {"int", "int32"},     {"short", "int16"}};

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const int exponent = (h >> 10) & 0x1f;
  const uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) return BitsFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return BitsFloat(sign | static_cast<uint32_t>(exponent + 112) << 23 |
                   mantissa << 13);
}

// Round to nearest even, as a cast in PyTorch does.
uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const float magnitude = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (magnitude >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (magnitude < 6.103515625e-05f) {               // subnormal half
    return sign |
           static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  uint32_t bits = FloatBits(magnitude);
  bits += 0xfff + ((bits >> 13) & 1);
  return sign | static_cast<uint16_t>((bits >> 13) - (112 << 10));
}

float BFloat16ToFloat(uint16_t b) {
  return BitsFloat(static_cast<uint32_t>(b) << 16);
}

uint16_t FloatToBFloat16(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((FloatBits(f) >> 16) | 0x40);
  uint32_t bits = FloatBits(f);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

template <typename T>
T Load(const void* data, int64_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + index * sizeof(T),
              sizeof(T));
  return v;
}

template <typename T>
void Store(void* data, int64_t index, T v) {
  std::memcpy(static_cast<char*>(data) + index * sizeof(T), &v, sizeof(T));
}

bool Same(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

}  // namespace

const DTypeInfo* FindDType(const std::string& name) {
  std::string key = name.rfind("torch.", 0) == 0 ? name.substr(6) : name;
  for (const Alias& alias : kAliases) {
    if (key == alias.name) key = alias.canonical;
  }
  for (const DTypeInfo& info : kDTypes) {
    if (key == info.name) return &info;
  }
  return nullptr;
}

const DTypeInfo* DTypeOf(DLDataType type) {
  for (const DTypeInfo& info : kDTypes) {
    if (Same(info.dl, type)) return &info;
  }
  return nullptr;
}

std::string DTypeNames() {
  std::string names;
  for (const DTypeInfo& info : kDTypes) {
    if (!names.empty()) names += ", ";
    names += info.name;
  }
  return names;
}

int ItemBytes(DLDataType type) { return (type.bits * type.lanes + 7) / 8; }

double LoadElement(const void* data, int64_t index, DLDataType type) {
  switch (type.code) {
    case kDLFloat:
      if (type.bits == 16) return HalfToFloat(Load<uint16_t>(data, index));
      if (type.bits == 32) return Load<float>(data, index);
      return Load<double>(data, index);
    case kDLBfloat:
      return BFloat16ToFloat(Load<uint16_t>(data, index));
    case kDLInt:
      if (type.bits == 8) return Load<int8_t>(data, index);
      if (type.bits == 16) return Load<int16_t>(data, index);
      if (type.bits == 32) return Load<int32_t>(data, index);
      return static_cast<double>(Load<int64_t>(data, index));
    case kDLUInt:
    case GJ_DL_BOOL:
      return Load<uint8_t>(data, index);
    default:
      return 0;
  }
}

void StoreElement(void* data, int64_t index, DLDataType type, double value) {
  switch (type.code) {
    case kDLFloat:
      if (type.bits == 16)
        return Store(data, index, FloatToHalf(static_cast<float>(value)));
      if (type.bits == 32) return Store(data, index, static_cast<float>(value));
      return Store(data, index, value);
    case kDLBfloat:
      return Store(data, index, FloatToBFloat16(static_cast<float>(value)));
    case kDLInt:
      if (type.bits == 8) return Store(data, index, static_cast<int8_t>(value));
      if (type.bits == 16)
        return Store(data, index, static_cast<int16_t>(value));
      if (type.bits == 32)
        return Store(data, index, static_cast<int32_t>(value));
      return Store(data, index, static_cast<int64_t>(value));
    case kDLUInt:
      return Store(data, index, static_cast<uint8_t>(value));
    case GJ_DL_BOOL:
      return Store(data, index, static_cast<uint8_t>(value != 0));
    default:
      return;
  }
}

}  // namespace guardjit_cli
