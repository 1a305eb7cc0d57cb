// Reference kernels of hardtanh, leaky_relu and elu, computing in OpMath of
// the input dtype (float for float16/bfloat16) as ATen's CPU kernels do.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/pointwise_util.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

using Outputs = absl::StatusOr<std::vector<Tensor>>;

template <typename MakeOp>
Outputs MapSelf(const KernelArgs& args, const TensorMeta& out,
                MakeOp&& make_op) {
  ASSIGN_OR_RETURN(Tensor result,
                   MapPointwise<1>({args.tensor(0)}, out.dtype, out, make_op,
                                   args.destination(0)));
  return std::vector<Tensor>{result};
}

// clamp(self, min_val, max_val) with the bounds converted to the dtype (as
// int64 first for integral inputs); NaN in the input or a bound gives NaN.
Outputs HardtanhKernel(const KernelArgs& args,
                       absl::Span<const TensorMeta> out) {
  Scalar lo = args.scalar(1), hi = args.scalar(2);
  if (!IsFloating(out[0].dtype)) {
    lo = Scalar(lo.to_int());
    hi = Scalar(hi.to_int());
  }
  return MapSelf(
      args, out[0], [&]<typename T>(TypeTag<T>) requires NumericElement<T> {
        const T l = ScalarAs<T>(lo), h = ScalarAs<T>(hi);
        if constexpr (kIsFloat<T>) {
          using M = OpMath<T>;
          return [l, h](T x) -> T {
            const M a = static_cast<M>(x), ml = static_cast<M>(l),
                    mh = static_cast<M>(h);
            if (std::isnan(a) || std::isnan(ml) || std::isnan(mh)) {
              return T(std::numeric_limits<M>::quiet_NaN());
            }
            return T(std::min(std::max(a, ml), mh));
          };
        } else {
          return [l, h](T x) -> T { return std::min(std::max(x, l), h); };
        }
      });
}

// x > 0 ? x : x * negative_slope (NaN stays NaN).
Outputs LeakyReluKernel(const KernelArgs& args,
                        absl::Span<const TensorMeta> out) {
  const double slope = args.scalar(1).to_double();
  return MapSelf(
      args, out[0], [&]<typename T>(TypeTag<T>) requires FloatElement<T> {
        using M = OpMath<T>;
        const M s = static_cast<M>(slope);
        return [s](T x) -> T {
          const M a = static_cast<M>(x);
          return T(a > M(0) ? a : a * s);
        };
      });
}

// x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale, as ATen's
// vectorized elu kernel computes it (NaN takes the positive branch).
Outputs EluKernel(const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const double alpha = args.scalar(1).to_double();
  const double scale = args.scalar(2).to_double();
  const double input_scale = args.scalar(3).to_double();
  return MapSelf(
      args, out[0], [&]<typename T>(TypeTag<T>) requires FloatElement<T> {
        using M = OpMath<T>;
        const M neg_coef = static_cast<M>(alpha * scale);
        const M pos_coef = static_cast<M>(scale);
        const M in_coef = static_cast<M>(input_scale);
        return [=](T x) -> T {
          const M a = static_cast<M>(x);
          return T(a <= M(0) ? std::expm1(a * in_coef) * neg_coef
                             : a * pos_coef);
        };
      });
}

}  // namespace

absl::Status RegisterActivationKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.hardtanh.default", HardtanhKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.leaky_relu.default", LeakyReluKernel));
  RETURN_IF_ERROR(registry.Register("aten.elu.default", EluKernel));
  return registry.AllowDestinations(
      {"aten.hardtanh.default", "aten.leaky_relu.default", "aten.elu.default"});
}

}  // namespace guardjit
