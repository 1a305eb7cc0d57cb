// Shape and dtype rules of the factory ops (full, full_like, arange,
// scalar_tensor). Shape and dtype come from literal arguments (full_like:
// from its input's metadata, never its values).
// Like ATen, they reject fill values that overflow the requested dtype and
// ranges whose size is negative or overflows.

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/half.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using MetaResult = absl::StatusOr<std::vector<TensorMeta>>;

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

// The `device` argument (None means cpu). Shape inference is device-agnostic;
// the eager kernels reject devices other than cpu.
Device DeviceArg(const MetaArgs& args, int index) {
  return args.raw(index).is_device() ? args.raw(index).as_device()
                                     : Device::Cpu();
}

// c10's overflows<To>(value): whether `value` lies outside `dtype`'s range.
// Conversion to bool never overflows; infinities fit floating dtypes; NaN
// fits floating dtypes only; negative integers wrap into unsigned dtypes.
bool Overflows(const Scalar& value, DType dtype) {
  if (dtype == DType::kBool || value.is_bool()) return false;
  double lowest, max;
  switch (dtype) {
    case DType::kUInt8:
      lowest = 0, max = 255;
      break;
    case DType::kInt8:
      lowest = -128, max = 127;
      break;
    case DType::kInt16:
      lowest = -32768, max = 32767;
      break;
    case DType::kInt32:
      lowest = -2147483648.0, max = 2147483647.0;
      break;
    // 2^63 is the first double past int64 (compared with >= below).
    case DType::kInt64:
      lowest = -9223372036854775808.0, max = 0x1p63;
      break;
    case DType::kFloat16:
      max = 65504.0, lowest = -max;
      break;
    case DType::kBFloat16:
      max = BFloat16::FromBits(0x7f7f), lowest = -max;
      break;
    case DType::kFloat32:
      max = std::numeric_limits<float>::max(), lowest = -max;
      break;
    default:
      return false;  // float64 holds every Scalar
  }
  if (value.is_int()) {
    const int64_t v = value.to_int();
    // ATen lets negative integers wrap into unsigned types (-1 is 255).
    if (dtype == DType::kUInt8) return v > 255 || v < -255;
    return static_cast<double>(v) < lowest || static_cast<double>(v) > max;
  }
  const double v = value.to_double();
  if (IsFloating(dtype)) return std::isfinite(v) && (v < lowest || v > max);
  if (std::isnan(v)) return true;
  return v < lowest || (dtype == DType::kInt64 ? v >= max : v > max);
}

absl::Status CheckFits(const Scalar& value, DType dtype,
                       absl::string_view arg) {
  if (!Overflows(value, dtype)) return absl::OkStatus();
  return ArgError(arg, absl::StrCat("value ", value.ToString(),
                                    " cannot be converted to type ",
                                    DTypeName(dtype), " without overflow"));
}

// The element count and byte size of `sizes` must fit int64, so that the
// kernel's allocation fails cleanly instead of wrapping around.
absl::Status CheckSize(IntSpan sizes, DType dtype, absl::string_view arg) {
  for (int64_t s : sizes) {
    if (s < 0) {
      return ArgError(arg, absl::StrCat("negative dimension ", s, " in ",
                                        ShapeToString(sizes)));
    }
  }
  int64_t numel = 1, nbytes = 0;
  bool overflow = false;
  for (int64_t s : sizes) overflow |= __builtin_mul_overflow(numel, s, &numel);
  overflow |= __builtin_mul_overflow(numel, int64_t{ItemSize(dtype)}, &nbytes);
  if (overflow) {
    return absl::OutOfRangeError(absl::StrCat(
        "argument '", arg, "': a ", DTypeName(dtype), " tensor of shape ",
        ShapeToString(sizes), " needs more than 2^63 bytes"));
  }
  return absl::OkStatus();
}

MetaResult FullMeta(const MetaArgs& args) {
  const std::vector<int64_t> size = args.int_list(0);
  const Scalar fill = args.scalar(1);
  // torch.full infers bool, int64 or the default float from the fill value.
  const DType dtype = args.optional_dtype(2).value_or(
      fill.is_float() ? kDefaultFloat : fill.dtype());
  RETURN_IF_ERROR(CheckSize(size, dtype, "size"));
  RETURN_IF_ERROR(CheckFits(fill, dtype, "fill_value"));
  return std::vector<TensorMeta>{
      {dtype, Shape(size.begin(), size.end()), DeviceArg(args, 4)}};
}

// full_like: self's shape, and its dtype and device unless given. The
// result is contiguous whatever memory_format asks (values are the same).
MetaResult FullLikeMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  const Scalar fill = args.scalar(1);
  const DType dtype = args.optional_dtype(2).value_or(self.dtype);
  RETURN_IF_ERROR(CheckFits(fill, dtype, "fill_value"));
  const Device device =
      args.raw(4).is_device() ? args.raw(4).as_device() : self.device;
  return std::vector<TensorMeta>{{dtype, self.sizes, device}};
}

MetaResult ScalarTensorMeta(const MetaArgs& args) {
  const Scalar s = args.scalar(0);
  const DType dtype = args.optional_dtype(1).value_or(kDefaultFloat);
  RETURN_IF_ERROR(CheckFits(s, dtype, "s"));
  return std::vector<TensorMeta>{{dtype, {}, DeviceArg(args, 3)}};
}

// Which schema positions an arange overload uses; -1 when absent.
struct ArangeLayout {
  int start, end, step, dtype, device;
};

MetaResult ArangeMeta(const MetaArgs& args, const ArangeLayout& at) {
  const Scalar zero(int64_t{0}), one(int64_t{1});
  const Scalar start = at.start >= 0 ? args.scalar(at.start) : zero;
  const Scalar end = args.scalar(at.end);
  const Scalar step = at.step >= 0 ? args.scalar(at.step) : one;
  const bool any_float = start.is_float() || end.is_float() || step.is_float();
  const DType dtype = args.optional_dtype(at.dtype).value_or(
      any_float ? kDefaultFloat : DType::kInt64);
  // Where a bad range is reported: at step, or at end when there is no step.
  const absl::string_view range_arg = at.step >= 0 ? "step" : "end";
  if (dtype == DType::kBool) {
    return ArgError("dtype", "arange is not defined for bool");
  }
  // ATen reads the bounds in the accumulation type: int64 for integral
  // dtypes (so arange(0.5, 3, dtype=int32) starts at 0), float or double for
  // floating ones.
  const bool integral = IsIntegral(dtype, /*include_bool=*/false);
  DType acc = DType::kInt64;
  if (dtype == DType::kFloat32 || dtype == DType::kFloat64) {
    acc = DType::kFloat64;
  } else if (!integral) {
    acc = DType::kFloat32;
  }
  struct Bound {
    const Scalar& value;
    const char* name;
    int index;
  };
  for (const Bound& b :
       {Bound{start, "start", at.start}, Bound{end, "end", at.end},
        Bound{step, "step", at.step}}) {
    if (b.index >= 0) RETURN_IF_ERROR(CheckFits(b.value, acc, b.name));
  }
  double size_d;
  if (integral) {
    const int64_t s = start.is_float() ? static_cast<int64_t>(start.to_double())
                                       : start.to_int();
    const int64_t e =
        end.is_float() ? static_cast<int64_t>(end.to_double()) : end.to_int();
    const int64_t st = step.is_float() ? static_cast<int64_t>(step.to_double())
                                       : step.to_int();
    if (st == 0) return ArgError(range_arg, "step must be nonzero");
    if ((st > 0 && e < s) || (st < 0 && e > s)) {
      return ArgError(range_arg,
                      absl::StrCat("upper bound and larger bound "
                                   "inconsistent with step sign "
                                   "(start ",
                                   s, ", end ", e, ", step ", st, ")"));
    }
    if (dtype == DType::kInt64) {
      // Exact integer ceil((e - s) / st); 128-bit so extreme bounds cannot
      // overflow.
      const __int128 sgn = st > 0 ? 1 : -1;
      size_d = static_cast<double>((__int128{e} - s + st - sgn) / st);
    } else {
      size_d =
          std::ceil((end.to_double() - start.to_double()) / step.to_double());
    }
  } else {
    // Bounds as the accumulation type sees them (float for half dtypes).
    auto as_acc = [&](const Scalar& v) {
      return acc == DType::kFloat32
                 ? static_cast<double>(static_cast<float>(v.to_double()))
                 : v.to_double();
    };
    const double s = as_acc(start), e = as_acc(end), st = as_acc(step);
    if (!(st > 0 || st < 0)) return ArgError(range_arg, "step must be nonzero");
    if (!std::isfinite(s) || !std::isfinite(e)) {
      return ArgError(std::isfinite(s) ? "end" : "start",
                      absl::StrCat("unsupported range: ", s, " -> ", e));
    }
    if ((st > 0 && e < s) || (st < 0 && e > s)) {
      return ArgError(range_arg,
                      absl::StrCat("upper bound and larger bound "
                                   "inconsistent with step sign "
                                   "(start ",
                                   s, ", end ", e, ", step ", st, ")"));
    }
    size_d =
        std::ceil((end.to_double() - start.to_double()) / step.to_double());
  }
  // 2^63 as a double: the first size that does not fit int64.
  if (!(size_d >= 0 && size_d < 0x1p63)) {
    return absl::OutOfRangeError(
        absl::StrCat("argument '", range_arg, "': invalid size ", size_d,
                     ", possible overflow? (start ", start.ToString(), ", end ",
                     end.ToString(), ", step ", step.ToString(), ")"));
  }
  const Shape sizes = {static_cast<int64_t>(size_d)};
  RETURN_IF_ERROR(CheckSize(sizes, dtype, range_arg));
  return std::vector<TensorMeta>{{dtype, sizes, DeviceArg(args, at.device)}};
}

constexpr char kFactoryKwargs[] =
    "ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None) -> Tensor";

// empty.memory_format / empty_strided: a tensor of `size` whose values
// ATen leaves unspecified; guardjit fills it with zeros in every backend
// (so a graph reading them is still deterministic). Sizes may be symbolic.
// The memory format is accepted and ignored (TensorMeta is contiguous);
// empty_strided's kernel returns the requested strides.
MetaResult EmptyMeta(const MetaArgs& args, int dtype_index, int device_index,
                     std::optional<int> stride_index) {
  const std::vector<SymInt> size = args.sym_int_list(0);
  const DType dtype = args.optional_dtype(dtype_index).value_or(kDefaultFloat);
  for (const SymInt& s : size) {
    if (s < 0) {
      return ArgError("size",
                      absl::StrCat("Trying to create tensor with "
                                   "negative dimension ",
                                   s.ToString(), ": ", SymShapeToString(size)));
    }
  }
  if (stride_index.has_value()) {
    const std::vector<SymInt> stride = args.sym_int_list(*stride_index);
    if (stride.size() != size.size()) {
      return ArgError("stride",
                      absl::StrCat("dimensionality of sizes (", size.size(),
                                   ") must match dimensionality of strides (",
                                   stride.size(), ")"));
    }
    for (const SymInt& s : stride) {
      if (s < 0) {
        return ArgError("stride",
                        absl::StrCat("negative stride ", s.ToString(), " in ",
                                     SymShapeToString(stride)));
      }
    }
  }
  if (!IsSymbolic(size)) {
    const Shape concrete = ConcreteShape(size);
    RETURN_IF_ERROR(CheckSize(concrete, dtype, "size"));
  }
  return std::vector<TensorMeta>{{dtype, SymShape(size.begin(), size.end()),
                                  DeviceArg(args, device_index)}};
}

}  // namespace

absl::Status RegisterCreationOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      absl::StrCat("full(SymInt[] size, Scalar fill_value, *, ",
                   kFactoryKwargs),
      FullMeta));
  RETURN_IF_ERROR(registry.Register(
      "full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, "
      "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor",
      FullLikeMeta));
  RETURN_IF_ERROR(registry.Register(
      absl::StrCat("scalar_tensor(Scalar s, *, ", kFactoryKwargs),
      ScalarTensorMeta));
  RETURN_IF_ERROR(
      registry.Register(absl::StrCat("arange(Scalar end, *, ", kFactoryKwargs),
                        [](const MetaArgs& args) {
                          return ArangeMeta(args, {-1, 0, -1, 1, 3});
                        }));
  RETURN_IF_ERROR(registry.Register(
      absl::StrCat("arange.start(Scalar start, Scalar end, *, ",
                   kFactoryKwargs),
      [](const MetaArgs& args) {
        return ArangeMeta(args, {0, 1, -1, 2, 4});
      }));
  RETURN_IF_ERROR(registry.Register(
      absl::StrCat("arange.start_step(Scalar start, Scalar end, Scalar step=1, "
                   "*, ",
                   kFactoryKwargs),
      [](const MetaArgs& args) {
        return ArangeMeta(args, {0, 1, 2, 3, 5});
      }));
  RETURN_IF_ERROR(registry.Register(
      "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None, "
      "MemoryFormat? memory_format=None) -> Tensor",
      [](const MetaArgs& args) {
        return EmptyMeta(args, 1, 3, std::nullopt);
      }));
  RETURN_IF_ERROR(registry.Register(
      absl::StrCat("empty_strided(SymInt[] size, SymInt[] stride, *, ",
                   kFactoryKwargs),
      [](const MetaArgs& args) { return EmptyMeta(args, 2, 4, 1); }));
  return absl::OkStatus();
}

}  // namespace guardjit
