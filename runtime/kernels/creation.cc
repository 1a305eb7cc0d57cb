// Reference kernels of the factory ops (full, arange, scalar_tensor). The
// shape rules in core/ops/creation.cc have inferred dtype and size and
// checked that every value converts to the dtype without overflow.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

template <typename T>
T ScalarTo(const Scalar& s) {
  if (s.is_bool()) return Convert<T>(s.to_bool());
  if (s.is_int()) return Convert<T>(s.to_int());
  return Convert<T>(s.to_double());
}

// The eager interpreter runs on cpu; a graph may still ask for another
// device, which the shape rule accepts for the compiled backends.
absl::Status CheckCpu(const KernelArgs& args, int device_index) {
  const Arg& device = args.raw(device_index);
  if (!device.is_device() || device.as_device().is_cpu()) {
    return absl::OkStatus();
  }
  return absl::UnimplementedError(
      absl::StrCat("argument 'device': the eager interpreter creates tensors "
                   "on cpu only, got ",
                   device.as_device().ToString()));
}

absl::StatusOr<std::vector<Tensor>> Filled(const TensorMeta& meta,
                                           const Scalar& value) {
  ASSIGN_OR_RETURN(Tensor result, Tensor::Empty(meta.dtype, meta.shape()));
  VisitDType(meta.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(result.data_as<T>(), result.numel(), ScalarTo<T>(value));
  });
  return std::vector<Tensor>{result};
}

absl::StatusOr<std::vector<Tensor>> FullKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  RETURN_IF_ERROR(CheckCpu(args, 4));
  return Filled(out[0], args.scalar(1));
}

absl::StatusOr<std::vector<Tensor>> FullLikeKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  RETURN_IF_ERROR(CheckCpu(args, 4));
  return Filled(out[0], args.scalar(1));
}

absl::StatusOr<std::vector<Tensor>> ScalarTensorKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  RETURN_IF_ERROR(CheckCpu(args, 3));
  return Filled(out[0], args.scalar(0));
}

// Narrows to float with overflow to +-inf, which a plain cast leaves
// undefined.
float SaturatingFloat(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (v > kMax) return std::numeric_limits<float>::infinity();
  if (v < -kMax) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

// out[i] = start + i * step in ATen's accumulation type: int64 (wrapping)
// for integral dtypes, double for float32/float64, float for half types.
template <typename T>
void FillRange(const Tensor& out, const Scalar& start, const Scalar& step) {
  T* p = out.data_as<T>();
  const int64_t n = out.numel();
  if constexpr (kIsReducedFloat<T> || std::is_same_v<T, float>) {
    using Acc = std::conditional_t<kIsReducedFloat<T>, float, double>;
    const Acc s = static_cast<Acc>(start.to_double());
    const Acc st = static_cast<Acc>(step.to_double());
    for (int64_t i = 0; i < n; ++i) {
      const Acc v = s + st * static_cast<Acc>(i);
      if constexpr (kIsReducedFloat<T>) {
        p[i] = T(v);
      } else {
        p[i] = SaturatingFloat(v);
      }
    }
  } else if constexpr (std::is_same_v<T, double>) {
    const double s = start.to_double(), st = step.to_double();
    for (int64_t i = 0; i < n; ++i) p[i] = s + st * static_cast<double>(i);
  } else {
    const auto s = static_cast<uint64_t>(ScalarTo<int64_t>(start));
    const auto st = static_cast<uint64_t>(ScalarTo<int64_t>(step));
    for (int64_t i = 0; i < n; ++i) {
      p[i] = static_cast<T>(s + st * static_cast<uint64_t>(i));
    }
  }
}

// Positions of start, step and device in an arange overload; -1 if absent.
struct ArangeLayout {
  int start, step, device;
};

KernelFn ArangeKernel(ArangeLayout at) {
  return [at](const KernelArgs& args, absl::Span<const TensorMeta> out)
             -> absl::StatusOr<std::vector<Tensor>> {
    RETURN_IF_ERROR(CheckCpu(args, at.device));
    const Scalar start =
        at.start >= 0 ? args.scalar(at.start) : Scalar(int64_t{0});
    const Scalar step =
        at.step >= 0 ? args.scalar(at.step) : Scalar(int64_t{1});
    ASSIGN_OR_RETURN(Tensor result,
                     Tensor::Empty(out[0].dtype, out[0].shape()));
    VisitDType(out[0].dtype, [&](auto tag) {
      FillRange<typename decltype(tag)::type>(result, start, step);
    });
    return std::vector<Tensor>{result};
  };
}

// empty.memory_format / empty_strided: ATen leaves the values unspecified;
// guardjit gives zeros (as its lowering does), so a graph that reads them
// is deterministic. empty_strided's result has the requested strides, over
// memory holding the largest element they reach.
absl::StatusOr<std::vector<Tensor>> EmptyKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  RETURN_IF_ERROR(CheckCpu(args, 3));
  ASSIGN_OR_RETURN(Tensor result, Tensor::Zeros(out[0].dtype, out[0].shape()));
  return std::vector<Tensor>{result};
}

absl::StatusOr<std::vector<Tensor>> EmptyStridedKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  RETURN_IF_ERROR(CheckCpu(args, 4));
  const Shape sizes = out[0].shape();
  const std::vector<int64_t> strides = args.int_list(1);
  int64_t extent = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) {
      extent = 0;
      break;
    }
    int64_t reach;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_add_overflow(extent, reach, &extent)) {
      return absl::OutOfRangeError(absl::StrCat(
          "argument 'stride': storage size calculation overflowed with "
          "sizes=",
          ShapeToString(sizes), " and strides=", ShapeToString(strides)));
    }
  }
  ASSIGN_OR_RETURN(Tensor memory, Tensor::Zeros(out[0].dtype, {extent}));
  return std::vector<Tensor>{memory.AsStrided(sizes, strides)};
}

}  // namespace

absl::Status RegisterCreationKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.full.default", FullKernel));
  RETURN_IF_ERROR(registry.Register("aten.full_like.default", FullLikeKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.scalar_tensor.default", ScalarTensorKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.arange.default", ArangeKernel({-1, -1, 3})));
  RETURN_IF_ERROR(
      registry.Register("aten.arange.start", ArangeKernel({0, -1, 4})));
  RETURN_IF_ERROR(
      registry.Register("aten.arange.start_step", ArangeKernel({0, 2, 5})));
  RETURN_IF_ERROR(registry.Register("aten.empty.memory_format", EmptyKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.empty_strided.default", EmptyStridedKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
