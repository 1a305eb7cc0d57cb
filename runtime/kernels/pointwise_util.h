#ifndef GUARDJIT_RUNTIME_KERNELS_POINTWISE_UTIL_H_
#define GUARDJIT_RUNTIME_KERNELS_POINTWISE_UTIL_H_

// Plumbing shared by the pointwise reference kernels: convert operands to the
// computation dtype, broadcast them to the output shape and run an element
// function over them, instantiated only for the dtypes it accepts.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/half.h"
#include "core/scalar.h"
#include "core/status_macros.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {

// The dtype whose storage type is T.
template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return DType::kBool;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return DType::kUInt8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return DType::kInt8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return DType::kInt16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return DType::kInt64;
  else if constexpr (std::is_same_v<T, Half>)
    return DType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, float>)
    return DType::kFloat32;
  else {
    static_assert(std::is_same_v<T, double>, "not a storage type");
    return DType::kFloat64;
  }
}

// Element-type categories for the requires-clauses of element functions.
template <typename T>
concept IntegralElement = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
concept IntegralOrBoolElement = std::is_integral_v<T>;
template <typename T>
concept FloatElement = kIsFloat<T>;
template <typename T>
concept NumericElement = !std::is_same_v<T, bool>;

// `value` converted to T as PyTorch converts a Scalar (already range-checked
// by the meta function where PyTorch checks).
template <typename T>
T ScalarAs(const Scalar& value) {
  if (value.is_float()) return Convert<T>(value.to_double());
  if (value.is_int()) return Convert<T>(value.to_int());
  return Convert<T>(value.to_bool());
}

// `t` converted to `dtype` and viewed with `shape` (which it broadcasts to).
inline absl::StatusOr<Tensor> CastAndExpand(const Tensor& t, DType dtype,
                                            IntSpan shape) {
  ASSIGN_OR_RETURN(Tensor cast, CastIfNeeded(t, dtype));
  return ExpandTo(cast, shape);
}

namespace pointwise_internal {
template <typename T, size_t>
struct RepeatType {
  using type = T;
};
template <typename T, size_t I>
using Repeat = typename RepeatType<T, I>::type;
}  // namespace pointwise_internal

// `*dest` when it can hold `out` (KernelArgs::destination: same dtype and
// sizes, any strides), else a new contiguous tensor.
inline absl::StatusOr<Tensor> OutputFor(const Tensor* dest,
                                        const TensorMeta& out) {
  if (dest != nullptr && dest->dtype() == out.dtype &&
      std::equal(dest->sizes().begin(), dest->sizes().end(), out.sizes.begin(),
                 out.sizes.end(),
                 [](int64_t d, const SymInt& o) { return d == o.hint(); })) {
    return *dest;
  }
  return Tensor::Empty(out.dtype, out.shape());
}

// A tensor shaped like `out` holding op(in_0[i], ..., in_N-1[i]) for every
// index i, each input converted to `compute` and broadcast first: `*dest`
// when given one that fits (OutputFor), written only once the inputs are
// converted (nothing fails after the first write), else a new tensor.
// `make_op(TypeTag<T>{})` returns the element function for storage type T of
// `compute`; its result type must be the storage type of `out.dtype`. A
// make_op whose requires-clause rejects T gives INTERNAL for that dtype: the
// op's meta function must have rejected it already.
template <size_t N, typename MakeOp>
absl::StatusOr<Tensor> MapPointwise(const Tensor (&inputs)[N], DType compute,
                                    const TensorMeta& out, MakeOp&& make_op,
                                    const Tensor* dest = nullptr) {
  Tensor operands[N];
  for (size_t i = 0; i < N; ++i) {
    ASSIGN_OR_RETURN(operands[i],
                     CastAndExpand(inputs[i], compute, out.shape()));
  }
  ASSIGN_OR_RETURN(Tensor result, OutputFor(dest, out));
  absl::Status status = VisitDType(compute, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_invocable_v<MakeOp&, TypeTag<T>>) {
      auto op = make_op(tag);
      return [&]<size_t... I>(std::index_sequence<I...>)->absl::Status {
        using R = std::invoke_result_t<decltype(op)&,
                                       pointwise_internal::Repeat<T, I>...>;
        if (DTypeOf<R>() != out.dtype) {
          return absl::InternalError(
              absl::StrCat("element function returns ", DTypeName(DTypeOf<R>()),
                           ", output is ", DTypeName(out.dtype)));
        }
        MapElements<R, pointwise_internal::Repeat<T, I>...>(result, op,
                                                            operands[I]...);
        return absl::OkStatus();
      }
      (std::make_index_sequence<N>{});
    } else {
      return absl::InternalError(
          absl::StrCat("no element function for ", DTypeName(compute)));
    }
  });
  RETURN_IF_ERROR(status);
  return result;
}

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_KERNELS_POINTWISE_UTIL_H_
