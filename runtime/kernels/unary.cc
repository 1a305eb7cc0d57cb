// Reference kernels of the unary pointwise ops. Each op is a generic lambda
// over the compute type (OpMath of the result dtype: float for Half and
// BFloat16), mirroring PyTorch's scalar CPU kernels, so rounding matches
// PyTorch's non-vectorized path.

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/pointwise_util.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

// Element categories a kernel is instantiated for. The meta function has
// already rejected the others, so they are never reached at run time.
enum Category : int { kFloats = 1, kInts = 2, kBools = 4 };
constexpr int kAllTypes = kFloats | kInts | kBools;
constexpr int kNumbers = kFloats | kInts;

template <typename T>
constexpr int CategoryOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return kBools;
  } else if constexpr (kIsFloat<T>) {
    return kFloats;
  } else {
    return kInts;
  }
}

absl::Status Unreachable(DType dtype) {
  return absl::InternalError(
      absl::StrCat("unary kernel called with unsupported dtype ",
                   DTypeName(dtype), "; the shape rule should reject it"));
}

// -x without signed overflow: the most negative value maps to itself, as in
// two's complement hardware (and PyTorch).
template <typename T>
T WrappingNeg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
}

// result[i] = fn(self[i]) with self first converted to the result dtype:
// PyTorch computes an integral input of a floating op in the promoted type.
template <int kTypes, typename Fn>
absl::StatusOr<Tensor> MapSameDType(const Tensor& self, const TensorMeta& out,
                                    const Tensor* dest, const Fn& fn) {
  ASSIGN_OR_RETURN(Tensor in, CastIfNeeded(self, out.dtype));
  ASSIGN_OR_RETURN(Tensor result, OutputFor(dest, out));
  const bool supported = VisitDType(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((CategoryOf<T>() & kTypes) != 0) {
      MapElements<T, T>(
          result,
          [&](T x) { return static_cast<T>(fn(static_cast<OpMath<T>>(x))); },
          in);
      return true;
    } else {
      return false;
    }
  });
  if (!supported) return Unreachable(out.dtype);
  return result;
}

// result[i] = fn(self[i]) for predicates: bool result, any input dtype.
template <typename Fn>
absl::StatusOr<Tensor> MapToBool(const Tensor& self, const TensorMeta& out,
                                 const Tensor* dest, const Fn& fn) {
  ASSIGN_OR_RETURN(Tensor result, OutputFor(dest, out));
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    MapElements<bool, T>(
        result, [&](T x) -> bool { return fn(static_cast<OpMath<T>>(x)); },
        self);
  });
  return result;
}

absl::StatusOr<std::vector<Tensor>> One(absl::StatusOr<Tensor> t) {
  if (!t.ok()) return t.status();
  return std::vector<Tensor>{*std::move(t)};
}

template <int kTypes, typename Fn>
KernelFn SameDTypeKernel(Fn fn) {
  return [fn](const KernelArgs& args, absl::Span<const TensorMeta> out) {
    return One(
        MapSameDType<kTypes>(args.tensor(0), out[0], args.destination(0), fn));
  };
}

template <typename Fn>
KernelFn PredicateKernel(Fn fn) {
  return [fn](const KernelArgs& args, absl::Span<const TensorMeta> out) {
    return One(MapToBool(args.tensor(0), out[0], args.destination(0), fn));
  };
}

// Floating ops: the shape rule has promoted or rejected non-floating inputs.
template <typename Fn>
KernelFn FloatKernel(Fn fn) {
  return SameDTypeKernel<kFloats>(fn);
}

template <typename M>
M Abs(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::fabs(x);
  } else if constexpr (std::is_unsigned_v<M>) {
    return x;
  } else {
    return x < 0 ? WrappingNeg(x) : x;
  }
}

template <typename M>
M Neg(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return -x;
  } else {
    return WrappingNeg(x);
  }
}

template <typename M>
M Sign(M x) {
  if constexpr (std::is_same_v<M, bool>) {
    return x;
  } else if constexpr (std::is_unsigned_v<M>) {
    return static_cast<M>(x > 0);
  } else {
    // NaN gives 0, like PyTorch's (0 < x) - (x < 0).
    return static_cast<M>(static_cast<int>(M(0) < x) -
                          static_cast<int>(x < M(0)));
  }
}

template <typename M>
M Relu(M x) {
  if constexpr (std::is_unsigned_v<M>) {
    return x;
  } else {
    // std::max(x, 0) as in PyTorch's clamp_min: NaN and -0.0 pass through.
    return x < M(0) ? M(0) : x;
  }
}

// Rounding ops are the identity on integers (PyTorch copies the input).
template <typename M>
M Floor(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::floor(x);
  } else {
    return x;
  }
}

template <typename M>
M Ceil(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::ceil(x);
  } else {
    return x;
  }
}

template <typename M>
M RoundHalfEven(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::nearbyint(x);
  } else {
    return x;
  }
}

template <typename M>
M Trunc(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::trunc(x);
  } else {
    return x;
  }
}

template <typename M>
M BitwiseNot(M x) {
  if constexpr (std::is_same_v<M, bool>) {
    return !x;
  } else {
    return static_cast<M>(~x);
  }
}

template <typename M>
bool IsNan(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <typename M>
bool IsInf(M x) {
  if constexpr (std::is_floating_point_v<M>) {
    return std::isinf(x);
  } else {
    return false;
  }
}

template <typename M>
M Sigmoid(M x) {
  return M(1) / (M(1) + std::exp(-x));
}

template <typename M>
M Silu(M x) {
  return x / (M(1) + std::exp(-x));
}

template <typename M>
M GeluErf(M x) {
  constexpr M kSqrtHalf = static_cast<M>(M_SQRT1_2);
  return x * M(0.5) * (M(1) + std::erf(x * kSqrtHalf));
}

template <typename M>
M GeluTanh(M x) {
  // sqrt(2 / pi), spelled as PyTorch spells it so the constant rounds alike.
  constexpr M kBeta = static_cast<M>(M_SQRT2 * M_2_SQRTPI * 0.5);
  constexpr M kKappa = static_cast<M>(0.044715);
  const M inner = kBeta * (x + kKappa * (x * x * x));
  return M(0.5) * x * (M(1) + std::tanh(inner));
}

absl::StatusOr<std::vector<Tensor>> GeluKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const bool tanh = args.optional_string(1).value_or("none") == "tanh";
  if (tanh) {
    return One(MapSameDType<kFloats>(args.tensor(0), out[0],
                                     args.destination(0),
                                     [](auto x) { return GeluTanh(x); }));
  }
  return One(MapSameDType<kFloats>(args.tensor(0), out[0], args.destination(0),
                                   [](auto x) { return GeluErf(x); }));
}

// PyTorch scales by 10^|decimals| in the compute type, rounds half to even
// and scales back; the binary scaling decides ties (2.675 * 100 == 267.5).
absl::StatusOr<std::vector<Tensor>> RoundDecimalsKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const int64_t decimals = args.int_arg(1);
  const bool negative = decimals < 0;
  // |decimals| in double: negating INT64_MIN would overflow.
  const double scale = std::pow(10.0, std::fabs(static_cast<double>(decimals)));
  return One(MapSameDType<kFloats>(
      args.tensor(0), out[0], args.destination(0), [negative, scale](auto x) {
        using M = decltype(x);
        const M ten_pow = static_cast<M>(scale);
        return negative ? std::nearbyint(x / ten_pow) * ten_pow
                        : std::nearbyint(x * ten_pow) / ten_pow;
      }));
}

}  // namespace

absl::Status RegisterUnaryKernels(KernelRegistry& registry) {
  struct Entry {
    const char* target;
    KernelFn fn;
  };
  const Entry entries[] = {
      {"aten.abs.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Abs(x); })},
      {"aten.neg.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Neg(x); })},
      {"aten.exp.default", FloatKernel([](auto x) { return std::exp(x); })},
      {"aten.log.default", FloatKernel([](auto x) { return std::log(x); })},
      {"aten.log1p.default", FloatKernel([](auto x) { return std::log1p(x); })},
      {"aten.log2.default", FloatKernel([](auto x) { return std::log2(x); })},
      {"aten.log10.default", FloatKernel([](auto x) { return std::log10(x); })},
      {"aten.expm1.default", FloatKernel([](auto x) { return std::expm1(x); })},
      {"aten.sqrt.default", FloatKernel([](auto x) { return std::sqrt(x); })},
      {"aten.rsqrt.default",
       FloatKernel([](auto x) { return decltype(x)(1) / std::sqrt(x); })},
      {"aten.sin.default", FloatKernel([](auto x) { return std::sin(x); })},
      {"aten.cos.default", FloatKernel([](auto x) { return std::cos(x); })},
      {"aten.tan.default", FloatKernel([](auto x) { return std::tan(x); })},
      {"aten.asin.default", FloatKernel([](auto x) { return std::asin(x); })},
      {"aten.acos.default", FloatKernel([](auto x) { return std::acos(x); })},
      {"aten.atan.default", FloatKernel([](auto x) { return std::atan(x); })},
      {"aten.sinh.default", FloatKernel([](auto x) { return std::sinh(x); })},
      {"aten.cosh.default", FloatKernel([](auto x) { return std::cosh(x); })},
      {"aten.tanh.default", FloatKernel([](auto x) { return std::tanh(x); })},
      {"aten.asinh.default", FloatKernel([](auto x) { return std::asinh(x); })},
      {"aten.acosh.default", FloatKernel([](auto x) { return std::acosh(x); })},
      {"aten.atanh.default", FloatKernel([](auto x) { return std::atanh(x); })},
      {"aten.sigmoid.default", FloatKernel([](auto x) { return Sigmoid(x); })},
      {"aten.erf.default", FloatKernel([](auto x) { return std::erf(x); })},
      {"aten.reciprocal.default",
       FloatKernel([](auto x) { return decltype(x)(1) / x; })},
      {"aten.relu.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Relu(x); })},
      {"aten.gelu.default", GeluKernel},
      {"aten.silu.default", FloatKernel([](auto x) { return Silu(x); })},
      {"aten.floor.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Floor(x); })},
      {"aten.ceil.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Ceil(x); })},
      {"aten.round.default",
       SameDTypeKernel<kNumbers>([](auto x) { return RoundHalfEven(x); })},
      {"aten.trunc.default",
       SameDTypeKernel<kNumbers>([](auto x) { return Trunc(x); })},
      {"aten.round.decimals", RoundDecimalsKernel},
      {"aten.sign.default",
       SameDTypeKernel<kAllTypes>([](auto x) { return Sign(x); })},
      {"aten.logical_not.default",
       PredicateKernel([](auto x) { return !static_cast<bool>(x); })},
      {"aten.isnan.default", PredicateKernel([](auto x) { return IsNan(x); })},
      {"aten.isinf.default", PredicateKernel([](auto x) { return IsInf(x); })},
      {"aten.bitwise_not.default",
       SameDTypeKernel<kInts | kBools>([](auto x) { return BitwiseNot(x); })},
  };
  for (const Entry& e : entries) {
    RETURN_IF_ERROR(registry.Register(e.target, e.fn));
    // Each writes only after converting its input.
    RETURN_IF_ERROR(registry.AllowDestinations({e.target}));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
