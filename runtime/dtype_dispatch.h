#ifndef GUARDJIT_RUNTIME_DTYPE_DISPATCH_H_
#define GUARDJIT_RUNTIME_DTYPE_DISPATCH_H_

#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/half.h"

namespace guardjit {

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls `f(TypeTag<T>{})` with the C++ type of `dtype`:
//   VisitDType(t.dtype(), [&](auto tag) { using T = typename
//   decltype(tag)::type; ... });
template <typename F>
decltype(auto) VisitDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool:
      return f(TypeTag<bool>{});
    case DType::kUInt8:
      return f(TypeTag<uint8_t>{});
    case DType::kInt8:
      return f(TypeTag<int8_t>{});
    case DType::kInt16:
      return f(TypeTag<int16_t>{});
    case DType::kInt32:
      return f(TypeTag<int32_t>{});
    case DType::kInt64:
      return f(TypeTag<int64_t>{});
    case DType::kFloat16:
      return f(TypeTag<Half>{});
    case DType::kBFloat16:
      return f(TypeTag<BFloat16>{});
    case DType::kFloat32:
      return f(TypeTag<float>{});
    case DType::kFloat64:
      return f(TypeTag<double>{});
  }
  return f(TypeTag<float>{});
}

template <typename T>
inline constexpr bool kIsReducedFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool kIsFloat =
    kIsReducedFloat<T> || std::is_floating_point_v<T>;

// The type arithmetic on T happens in: float for half types (PyTorch's
// opmath), T otherwise.
template <typename T>
using OpMath = std::conditional_t<kIsReducedFloat<T>, float, T>;

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_DTYPE_DISPATCH_H_
