#ifndef GUARDJIT_CORE_HALF_H_
#define GUARDJIT_CORE_HALF_H_

// IEEE binary16 and bfloat16 storage types. Arithmetic happens in float (the
// "opmath" type, as in PyTorch); conversions round to nearest even.

#include <cmath>
#include <cstdint>
#include <cstring>

namespace guardjit {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

inline uint16_t FloatToHalfBits(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u)
    return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (abs < 0x38800000u) {                         // subnormal or zero in half
    // Scale so that the half subnormal unit becomes 1 and let float rounding
    // (round-to-nearest-even) do the work.
    float scaled = BitsToFloat(abs) * 16777216.0f;  // 2^24
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (abs >> 13));
}

inline float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsToFloat(sign | 0x7f800000u | (mant << 13));
  return BitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t FloatToBFloat16Bits(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding_bias) >> 16);
}

inline float BFloat16BitsToFloat(uint16_t b) {
  return BitsToFloat(static_cast<uint32_t>(b) << 16);
}

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f)
      : bits(FloatToHalfBits(f)) {}  // NOLINT: implicit like c10::Half
  operator float() const { return HalfBitsToFloat(bits); }  // NOLINT
  static Half FromBits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(FloatToBFloat16Bits(f)) {}           // NOLINT
  operator float() const { return BFloat16BitsToFloat(bits); }  // NOLINT
  static BFloat16 FromBits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_HALF_H_
