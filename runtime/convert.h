#ifndef GUARDJIT_RUNTIME_CONVERT_H_
#define GUARDJIT_RUNTIME_CONVERT_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/dtype_dispatch.h"

namespace guardjit {

// Element conversion with PyTorch's results on x86-64 and no undefined
// behaviour: float to int truncates toward zero; NaN and out-of-range values
// give INT64_MIN truncated to the target width (what cvttsd2si yields); any
// nonzero value is true.
template <typename To, typename From>
inline To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsFloat<From>) {
      return static_cast<double>(static_cast<OpMath<From>>(v)) != 0.0;
    } else {
      return v != 0;
    }
  } else if constexpr (kIsFloat<From> && !kIsFloat<To>) {
    double d = static_cast<double>(static_cast<OpMath<From>>(v));
    int64_t i = (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)
                    ? static_cast<int64_t>(d)
                    : INT64_MIN;
    return static_cast<To>(static_cast<uint64_t>(i));
  } else if constexpr (kIsReducedFloat<To>) {
    return To(static_cast<float>(static_cast<OpMath<From>>(v)));
  } else if constexpr (!kIsFloat<To> && !kIsFloat<From>) {
    // Integer narrowing wraps (two's complement), as in C and PyTorch.
    return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(v)));
  } else {
    return static_cast<To>(static_cast<OpMath<From>>(v));
  }
}

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CONVERT_H_
