// Reference kernels of the comparison, logical and bitwise ops, where and
// clamp.

#include "runtime/kernels/binary_compare.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/pointwise_util.h"

namespace guardjit {
namespace {

using Tensors = std::vector<Tensor>;
using Metas = absl::Span<const TensorMeta>;

// eq, ne, lt, le, gt, ge: compare in the promoted type (so an int tensor
// compares with 2.5 in float), output bool.
template <typename Compare>
KernelFn CompareKernel(Compare compare) {
  return [compare](const KernelArgs& args,
                   Metas out) -> absl::StatusOr<Tensors> {
    const Tensor self = args.tensor(0);
    const Tensor other = args.tensor(1);
    DType compute = ResultType({TensorMeta::Of(self), TensorMeta::Of(other)});
    ASSIGN_OR_RETURN(Tensor result, MapPointwise<2>(
                                        {self, other}, compute, out[0],
                                        [&]<typename T>(TypeTag<T>) {
                                          using M = OpMath<T>;
                                          return [compare](T x, T y) -> bool {
                                            return compare(static_cast<M>(x),
                                                           static_cast<M>(y));
                                          };
                                        },
                                        args.destination(0)));
    return Tensors{result};
  };
}

// logical_and/or/xor: each operand is truthy when nonzero (NaN included).
template <typename Op>
KernelFn LogicalKernel(Op op) {
  return [op](const KernelArgs& args, Metas out) -> absl::StatusOr<Tensors> {
    ASSIGN_OR_RETURN(
        Tensor result,
        MapPointwise<2>(
            {args.tensor(0), args.tensor(1)}, DType::kBool, out[0],
            [&]<typename T>(TypeTag<T>) requires std::is_same_v<T, bool> {
              return [op](bool x, bool y) -> bool { return op(x, y); };
            },
            args.destination(0)));
    return Tensors{result};
  };
}

// bitwise_and/or/xor on integral types; on bool they are the logical ops.
template <typename Op>
KernelFn BitwiseKernel(Op op) {
  return [op](const KernelArgs& args, Metas out) -> absl::StatusOr<Tensors> {
    ASSIGN_OR_RETURN(
        Tensor result,
        MapPointwise<2>(
            {args.tensor(0), args.tensor(1)}, out[0].dtype, out[0],
            [&]<typename T>(TypeTag<T>) requires IntegralOrBoolElement<T> {
              return [op](T x, T y) -> T { return static_cast<T>(op(x, y)); };
            },
            args.destination(0)));
    return Tensors{result};
  };
}

absl::StatusOr<Tensors> WhereKernel(const KernelArgs& args, Metas out) {
  const TensorMeta& meta = out[0];
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(meta.dtype, meta.shape()));
  ASSIGN_OR_RETURN(Tensor condition,
                   CastAndExpand(args.tensor(0), DType::kBool, meta.shape()));
  ASSIGN_OR_RETURN(Tensor self,
                   CastAndExpand(args.tensor(1), meta.dtype, meta.shape()));
  ASSIGN_OR_RETURN(Tensor other,
                   CastAndExpand(args.tensor(2), meta.dtype, meta.shape()));
  VisitDType(meta.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapElements<T, bool, T, T>(
        result, [](bool c, T x, T y) { return c ? x : y; }, condition, self,
        other);
  });
  return Tensors{result};
}

// The bound that leaves every value alone, for a missing min (lowest) or max
// (highest). Floating types use infinities so that only real NaNs give NaN.
Tensor ClampIdentity(DType dtype, bool highest) {
  return VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsFloat<T>) {
      double inf = std::numeric_limits<double>::infinity();
      return Tensor::FromScalar(Scalar(highest ? inf : -inf), dtype);
    } else if constexpr (std::is_same_v<T, bool>) {
      return Tensor::FromScalar(Scalar(highest), dtype);
    } else {
      return Tensor::FromScalar(
          Scalar(static_cast<int64_t>(highest
                                          ? std::numeric_limits<T>::max()
                                          : std::numeric_limits<T>::lowest())),
          dtype);
    }
  });
}

// min(max(x, lo), hi); a NaN in any of the three gives NaN, as PyTorch's
// vectorized clamp, maximum and minimum do.
absl::StatusOr<Tensors> Clamp(const Tensor& self, const Tensor& lo,
                              const Tensor& hi, const TensorMeta& out,
                              const Tensor* dest) {
  ASSIGN_OR_RETURN(
      Tensor result,
      MapPointwise<3>(
          {self, lo, hi}, out.dtype, out,
          []<typename T>(TypeTag<T>) {
            if constexpr (kIsFloat<T>) {
              using M = OpMath<T>;
              return [](T x, T lo, T hi) -> T {
                M a = static_cast<M>(x);
                M l = static_cast<M>(lo);
                M h = static_cast<M>(hi);
                if (std::isnan(a) || std::isnan(l) || std::isnan(h)) {
                  return T(std::numeric_limits<M>::quiet_NaN());
                }
                return T(std::min(std::max(a, l), h));
              };
            } else {
              return [](T x, T lo, T hi) -> T {
                return std::min(std::max(x, lo), hi);
              };
            }
          },
          dest));
  return Tensors{result};
}

// clamp: the Scalar bounds are converted to the result type first, as
// PyTorch's Scalar::to<scalar_t>() does.
absl::StatusOr<Tensors> ClampScalarKernel(const KernelArgs& args, Metas out) {
  const DType dtype = out[0].dtype;
  auto bound = [&](int i, bool highest) {
    std::optional<Scalar> value = args.optional_scalar(i);
    return value.has_value() ? Tensor::FromScalar(*value, dtype)
                             : ClampIdentity(dtype, highest);
  };
  return Clamp(args.tensor(0), bound(1, false), bound(2, true), out[0],
               args.destination(0));
}

absl::StatusOr<Tensors> ClampTensorKernel(const KernelArgs& args, Metas out) {
  const DType dtype = out[0].dtype;
  auto bound = [&](int i, bool highest) {
    std::optional<Tensor> value = args.optional_tensor(i);
    return value.has_value() ? *value : ClampIdentity(dtype, highest);
  };
  return Clamp(args.tensor(0), bound(1, false), bound(2, true), out[0],
               args.destination(0));
}

}  // namespace

absl::Status RegisterBinaryCompareKernels(KernelRegistry& registry) {
  struct Named {
    const char* name;
    KernelFn kernel;
  };
  const Named compares[] = {
      {"eq", CompareKernel(std::equal_to<>())},
      {"ne", CompareKernel(std::not_equal_to<>())},
      {"lt", CompareKernel(std::less<>())},
      {"le", CompareKernel(std::less_equal<>())},
      {"gt", CompareKernel(std::greater<>())},
      {"ge", CompareKernel(std::greater_equal<>())},
  };
  for (const Named& c : compares) {
    RETURN_IF_ERROR(
        registry.Register(absl::StrCat("aten.", c.name, ".Tensor"), c.kernel));
    RETURN_IF_ERROR(
        registry.Register(absl::StrCat("aten.", c.name, ".Scalar"), c.kernel));
    const std::string targets[] = {absl::StrCat("aten.", c.name, ".Tensor"),
                                   absl::StrCat("aten.", c.name, ".Scalar")};
    RETURN_IF_ERROR(registry.AllowDestinations({targets[0], targets[1]}));
  }
  RETURN_IF_ERROR(registry.Register("aten.logical_and.default",
                                    LogicalKernel(std::logical_and<>())));
  RETURN_IF_ERROR(registry.Register("aten.logical_or.default",
                                    LogicalKernel(std::logical_or<>())));
  RETURN_IF_ERROR(registry.Register("aten.logical_xor.default",
                                    LogicalKernel(std::not_equal_to<>())));
  const Named bitwise[] = {
      {"bitwise_and", BitwiseKernel(std::bit_and<>())},
      {"bitwise_or", BitwiseKernel(std::bit_or<>())},
      {"bitwise_xor", BitwiseKernel(std::bit_xor<>())},
  };
  for (const Named& b : bitwise) {
    RETURN_IF_ERROR(
        registry.Register(absl::StrCat("aten.", b.name, ".Tensor"), b.kernel));
    RETURN_IF_ERROR(
        registry.Register(absl::StrCat("aten.", b.name, ".Scalar"), b.kernel));
    const std::string targets[] = {absl::StrCat("aten.", b.name, ".Tensor"),
                                   absl::StrCat("aten.", b.name, ".Scalar")};
    RETURN_IF_ERROR(registry.AllowDestinations({targets[0], targets[1]}));
  }
  RETURN_IF_ERROR(registry.Register("aten.where.self", WhereKernel));
  RETURN_IF_ERROR(registry.Register("aten.clamp.default", ClampScalarKernel));
  RETURN_IF_ERROR(registry.Register("aten.clamp.Tensor", ClampTensorKernel));
  return registry.AllowDestinations(
      {"aten.logical_and.default", "aten.logical_or.default",
       "aten.logical_xor.default", "aten.clamp.default", "aten.clamp.Tensor"});
}

}  // namespace guardjit
