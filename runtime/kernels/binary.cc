// Reference kernels of the binary arithmetic ops: add, sub, mul, div (true,
// trunc, floor), pow, maximum, minimum, remainder and fmod. Each computes in
// the dtype the op's meta function promoted to (OpMath for Half/BFloat16,
// rounding once); integer arithmetic wraps like two's complement without
// undefined behaviour, and integer division by zero is an error.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/binary_compare.h"
#include "runtime/kernels/pointwise_util.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

using Tensors = std::vector<Tensor>;
using Metas = absl::Span<const TensorMeta>;

// Integer +, -, * and negation in uint64_t, truncated back to T: the two's
// complement wrap-around PyTorch gives, with no signed overflow.
template <typename T>
T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T WrapSub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename T>
T WrapNeg(T a) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
}

// C's a / b (truncating) for b != 0; MIN / -1 wraps to MIN.
template <IntegralElement T>
T TruncDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return WrapNeg(a);
  }
  return static_cast<T>(a / b);
}

// C's a % b for b != 0; MIN % -1 is 0.
template <IntegralElement T>
T TruncMod(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// c10::div_floor_integer for b != 0.
template <IntegralElement T>
T FloorDiv(T a, T b) {
  T quot = TruncDiv(a, b);
  if constexpr (std::is_signed_v<T>) {
    if ((a < 0) != (b < 0) && TruncMod(a, b) != 0)
      return static_cast<T>(quot - 1);
  }
  return quot;
}

// c10::div_floor_floating: Python's a // b, with IEEE results for b == 0.
template <typename M>
M FloorDivFloat(M a, M b) {
  if (b == 0) return a / b;
  M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= M(1);
  if (div == 0) return std::copysign(M(0), a / b);
  M floor_div = std::floor(div);
  if (div - floor_div > M(0.5)) floor_div += M(1);
  return floor_div;
}

// Python's a % b for b != 0: the result takes the sign of b.
template <IntegralElement T>
T PythonMod(T a, T b) {
  T r = TruncMod(a, b);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && (r < 0) != (b < 0)) r = static_cast<T>(r + b);
  }
  return r;
}

// ATen's powi: exponentiation by squaring modulo 2^bits; negative exponents
// truncate 1/a^|b| toward zero.
template <IntegralElement T>
T IntPow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return exp % 2 != 0 ? -1 : 1;
      return 0;
    }
  }
  uint64_t result = 1;
  uint64_t b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

absl::Status ZeroDivisionError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "argument 'other': integer ", what, " by zero (ZeroDivisionError)"));
}

bool IsReducedFloat(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16;
}

// PyTorch's CPU mul and div, computing in Half/BFloat16 with a one-element
// `other` of another dtype (a Python number, a 0-dim float tensor), read that
// value unrounded as a float (TensorIterator::original_scalar_value) instead
// of rounding it to the computation dtype first.
std::optional<float> UnroundedScalar(const Tensor& other, DType compute) {
  if (!IsReducedFloat(compute) || other.numel() != 1 ||
      other.dtype() == compute) {
    return std::nullopt;
  }
  return VisitDType(other.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Convert<float>(*other.data_as<T>());
  });
}

// self `float_op` b for a float scalar b, computed in float, rounded once.
template <typename FloatOp>
absl::StatusOr<Tensors> MapWithUnroundedScalar(const Tensor& self, float b,
                                               const TensorMeta& out,
                                               const Tensor* dest,
                                               FloatOp float_op) {
  ASSIGN_OR_RETURN(Tensor result,
                   MapPointwise<1>(
                       {self}, out.dtype, out,
                       [&]<typename T>(TypeTag<T>) requires kIsReducedFloat<T> {
                         return [b, float_op](T x) -> T {
                           return T(float_op(static_cast<float>(x), b));
                         };
                       },
                       dest));
  return Tensors{result};
}

// A binary kernel computing in out's dtype: make_op(TypeTag<T>) gives the
// element function. `dest`: where to write (MapPointwise), or null.
template <typename MakeOp>
absl::StatusOr<Tensors> MapBinary(const KernelArgs& args, const TensorMeta& out,
                                  const Tensor* dest, MakeOp&& make_op) {
  ASSIGN_OR_RETURN(Tensor result,
                   MapPointwise<2>({args.tensor(0), args.tensor(1)}, out.dtype,
                                   out, make_op, dest));
  return Tensors{result};
}

// Where a division writes: integer division finds a zero divisor only while
// writing (and then fails), so only a floating result uses a destination.
const Tensor* FloatDestination(const KernelArgs& args, const TensorMeta& out) {
  return IsFloating(out.dtype) ? args.destination(0) : nullptr;
}

// add and sub: self + alpha * other (alpha negated for sub).
absl::StatusOr<Tensors> AddKernel(const KernelArgs& args, Metas out,
                                  bool subtract) {
  const Scalar alpha = args.scalar(2);
  return MapBinary(
      args, out[0], args.destination(0), [&]<typename T>(TypeTag<T>) {
        if constexpr (std::is_same_v<T, bool>) {
          const bool a = alpha.to_bool();
          return [a](bool x, bool y) -> bool { return x || (a && y); };
        } else if constexpr (kIsFloat<T>) {
          using M = OpMath<T>;
          const M a = static_cast<M>(ScalarAs<T>(alpha)) * (subtract ? -1 : 1);
          return [a](T x, T y) -> T {
            return T(static_cast<M>(x) + a * static_cast<M>(y));
          };
        } else {
          const T a =
              subtract ? WrapNeg(ScalarAs<T>(alpha)) : ScalarAs<T>(alpha);
          return [a](T x, T y) -> T { return WrapAdd(x, WrapMul(a, y)); };
        }
      });
}

absl::StatusOr<Tensors> MulKernel(const KernelArgs& args, Metas out) {
  if (auto b = UnroundedScalar(args.tensor(1), out[0].dtype)) {
    return MapWithUnroundedScalar(args.tensor(0), *b, out[0],
                                  args.destination(0),
                                  [](float x, float y) { return x * y; });
  }
  return MapBinary(args, out[0], args.destination(0),
                   []<typename T>(TypeTag<T>) {
                     if constexpr (std::is_same_v<T, bool>) {
                       return [](bool x, bool y) -> bool { return x && y; };
                     } else if constexpr (kIsFloat<T>) {
                       using M = OpMath<T>;
                       return [](T x, T y) -> T {
                         return T(static_cast<M>(x) * static_cast<M>(y));
                       };
                     } else {
                       return [](T x, T y) -> T { return WrapMul(x, y); };
                     }
                   });
}

enum class Rounding { kNone, kTrunc, kFloor };

template <typename M>
M RoundedDiv(M x, M y, Rounding rounding) {
  switch (rounding) {
    case Rounding::kTrunc:
      return std::trunc(x / y);
    case Rounding::kFloor:
      return FloorDivFloat(x, y);
    case Rounding::kNone:
      break;
  }
  return x / y;
}

// div.Tensor/div.Scalar (mode_index < 0) and the *_mode overloads.
absl::StatusOr<Tensors> DivKernel(const KernelArgs& args, Metas out,
                                  int mode_index) {
  Rounding rounding = Rounding::kNone;
  if (mode_index >= 0) {
    std::optional<absl::string_view> mode = args.optional_string(mode_index);
    if (mode == "trunc") rounding = Rounding::kTrunc;
    if (mode == "floor") rounding = Rounding::kFloor;
  }
  if (auto b = UnroundedScalar(args.tensor(1), out[0].dtype)) {
    return MapWithUnroundedScalar(
        args.tensor(0), *b, out[0], args.destination(0),
        [rounding](float x, float y) { return RoundedDiv(x, y, rounding); });
  }
  bool zero_divisor = false;
  ASSIGN_OR_RETURN(Tensors result,
                   MapBinary(
                       args, out[0], FloatDestination(args, out[0]),
                       [&]<typename T>(TypeTag<T>) requires NumericElement<T> {
                         if constexpr (kIsFloat<T>) {
                           using M = OpMath<T>;
                           return [rounding](T x, T y) -> T {
                             return T(RoundedDiv(static_cast<M>(x),
                                                 static_cast<M>(y), rounding));
                           };
                         } else {
                           return [rounding, &zero_divisor](T x, T y) -> T {
                             if (y == 0) {
                               zero_divisor = true;
                               return 0;
                             }
                             return rounding == Rounding::kFloor
                                        ? FloorDiv(x, y)
                                        : TruncDiv(x, y);
                           };
                         }
                       }));
  if (zero_divisor) return ZeroDivisionError("division");
  return result;
}

// atan2(self, other) in OpMath of the (floating) result dtype.
absl::StatusOr<Tensors> Atan2Kernel(const KernelArgs& args, Metas out) {
  return MapBinary(
      args, out[0], args.destination(0),
      []<typename T>(TypeTag<T>) requires FloatElement<T> {
        using M = OpMath<T>;
        return [](T y, T x) -> T {
          return T(std::atan2(static_cast<M>(y), static_cast<M>(x)));
        };
      });
}

absl::StatusOr<Tensors> PowKernel(const KernelArgs& args, Metas out) {
  return MapBinary(
      args, out[0], args.destination(0), []<typename T>(TypeTag<T>) {
        if constexpr (std::is_same_v<T, bool>) {
          // Only pow.Tensor_Scalar with a bool exponent gets here.
          return [](bool x, bool e) -> bool { return x || !e; };
        } else if constexpr (kIsFloat<T>) {
          using M = OpMath<T>;
          return [](T x, T e) -> T {
            return T(std::pow(static_cast<M>(x), static_cast<M>(e)));
          };
        } else {
          return [](T x, T e) -> T { return IntPow(x, e); };
        }
      });
}

// pow.Tensor_Scalar: for exponents 0.5 and -0.5 PyTorch runs sqrt and rsqrt
// on float32, float64 and bfloat16, which differ from pow at -inf and -0.
absl::StatusOr<Tensors> PowTensorScalarKernel(const KernelArgs& args,
                                              Metas out) {
  const double exponent = args.scalar(1).to_double();
  const DType dtype = out[0].dtype;
  const bool has_sqrt_path = dtype == DType::kFloat32 ||
                             dtype == DType::kFloat64 ||
                             dtype == DType::kBFloat16;
  if (!has_sqrt_path || (exponent != 0.5 && exponent != -0.5)) {
    return PowKernel(args, out);
  }
  const bool reciprocal = exponent < 0;
  ASSIGN_OR_RETURN(Tensor result,
                   MapPointwise<1>(
                       {args.tensor(0)}, dtype, out[0],
                       [&]<typename T>(TypeTag<T>) requires FloatElement<T> {
                         using M = OpMath<T>;
                         return [reciprocal](T x) -> T {
                           M root = std::sqrt(static_cast<M>(x));
                           return T(reciprocal ? M(1) / root : root);
                         };
                       },
                       args.destination(0)));
  return Tensors{result};
}

// maximum (is_max) and minimum: NaN wins over any number.
absl::StatusOr<Tensors> MinMaxKernel(const KernelArgs& args, Metas out,
                                     bool is_max) {
  return MapBinary(args, out[0], args.destination(0),
                   [is_max]<typename T>(TypeTag<T>) {
                     if constexpr (kIsFloat<T>) {
                       using M = OpMath<T>;
                       return [is_max](T x, T y) -> T {
                         M a = static_cast<M>(x);
                         M b = static_cast<M>(y);
                         if (std::isnan(a)) return x;
                         if (std::isnan(b)) return y;
                         return T(is_max ? std::max(a, b) : std::min(a, b));
                       };
                     } else {
                       return [is_max](T x, T y) -> T {
                         return is_max ? std::max(x, y) : std::min(x, y);
                       };
                     }
                   });
}

// remainder (Python sign convention, python_mod) and fmod (C convention).
absl::StatusOr<Tensors> ModKernel(const KernelArgs& args, Metas out,
                                  bool python_mod) {
  bool zero_divisor = false;
  ASSIGN_OR_RETURN(Tensors result,
                   MapBinary(
                       args, out[0], FloatDestination(args, out[0]),
                       [&]<typename T>(TypeTag<T>) requires NumericElement<T> {
                         if constexpr (kIsFloat<T>) {
                           using M = OpMath<T>;
                           return [python_mod](T x, T y) -> T {
                             M b = static_cast<M>(y);
                             M mod = std::fmod(static_cast<M>(x), b);
                             if (python_mod && mod != 0 && (b < 0) != (mod < 0))
                               mod += b;
                             return T(mod);
                           };
                         } else {
                           return [python_mod, &zero_divisor](T x, T y) -> T {
                             if (y == 0) {
                               zero_divisor = true;
                               return 0;
                             }
                             return python_mod ? PythonMod(x, y)
                                               : TruncMod(x, y);
                           };
                         }
                       }));
  if (zero_divisor) return ZeroDivisionError("modulo");
  return result;
}

}  // namespace

absl::Status RegisterBinaryKernels(KernelRegistry& registry) {
  auto add = [](const KernelArgs& a, Metas o) {
    return AddKernel(a, o, false);
  };
  auto sub = [](const KernelArgs& a, Metas o) { return AddKernel(a, o, true); };
  RETURN_IF_ERROR(registry.Register("aten.add.Tensor", add));
  RETURN_IF_ERROR(registry.Register("aten.add.Scalar", add));
  RETURN_IF_ERROR(registry.Register("aten.sub.Tensor", sub));
  RETURN_IF_ERROR(registry.Register("aten.sub.Scalar", sub));
  RETURN_IF_ERROR(registry.Register("aten.mul.Tensor", MulKernel));
  RETURN_IF_ERROR(registry.Register("aten.mul.Scalar", MulKernel));

  auto div = [](const KernelArgs& a, Metas o) { return DivKernel(a, o, -1); };
  auto div_mode = [](const KernelArgs& a, Metas o) {
    return DivKernel(a, o, 2);
  };
  RETURN_IF_ERROR(registry.Register("aten.div.Tensor", div));
  RETURN_IF_ERROR(registry.Register("aten.div.Scalar", div));
  RETURN_IF_ERROR(registry.Register("aten.div.Tensor_mode", div_mode));
  RETURN_IF_ERROR(registry.Register("aten.div.Scalar_mode", div_mode));

  RETURN_IF_ERROR(registry.Register("aten.atan2.default", Atan2Kernel));
  RETURN_IF_ERROR(registry.Register("aten.pow.Tensor_Tensor", PowKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.pow.Tensor_Scalar", PowTensorScalarKernel));
  RETURN_IF_ERROR(registry.Register("aten.pow.Scalar", PowKernel));

  RETURN_IF_ERROR(registry.Register(
      "aten.maximum.default",
      [](const KernelArgs& a, Metas o) { return MinMaxKernel(a, o, true); }));
  RETURN_IF_ERROR(registry.Register(
      "aten.minimum.default",
      [](const KernelArgs& a, Metas o) { return MinMaxKernel(a, o, false); }));

  auto remainder = [](const KernelArgs& a, Metas o) {
    return ModKernel(a, o, true);
  };
  auto fmod = [](const KernelArgs& a, Metas o) {
    return ModKernel(a, o, false);
  };
  RETURN_IF_ERROR(registry.Register("aten.remainder.Tensor", remainder));
  RETURN_IF_ERROR(registry.Register("aten.remainder.Scalar", remainder));
  RETURN_IF_ERROR(registry.Register("aten.fmod.Tensor", fmod));
  RETURN_IF_ERROR(registry.Register("aten.fmod.Scalar", fmod));
  // Division and modulo write a destination only for a floating result
  // (FloatDestination).
  RETURN_IF_ERROR(registry.AllowDestinations(
      {"aten.add.Tensor",        "aten.add.Scalar",
       "aten.sub.Tensor",        "aten.sub.Scalar",
       "aten.mul.Tensor",        "aten.mul.Scalar",
       "aten.div.Tensor",        "aten.div.Scalar",
       "aten.div.Tensor_mode",   "aten.div.Scalar_mode",
       "aten.atan2.default",     "aten.pow.Tensor_Tensor",
       "aten.pow.Tensor_Scalar", "aten.pow.Scalar",
       "aten.maximum.default",   "aten.minimum.default",
       "aten.remainder.Tensor",  "aten.remainder.Scalar",
       "aten.fmod.Tensor",       "aten.fmod.Scalar"}));

  return RegisterBinaryCompareKernels(registry);
}

}  // namespace guardjit
