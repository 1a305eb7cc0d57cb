// Shape and dtype rules of the parameterized activations: hardtanh,
// leaky_relu and elu. The result has the input's shape and dtype (the Scalar
// parameters never promote), with the dtype checks of ATen's Activation.cpp.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using MetaResult = absl::StatusOr<std::vector<TensorMeta>>;

absl::Status ArgError(absl::string_view arg, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", message));
}

MetaResult SameAsSelf(const TensorMeta& self) {
  return std::vector<TensorMeta>{{self.dtype, self.sizes, self.device}};
}

// hardtanh is clamp(self, min_val, max_val) without promotion: integral
// inputs read the bounds as int64 (truncating), and uint8 takes no negative
// bound (ATen's hardtanh_out).
MetaResult HardtanhMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (self.dtype == DType::kBool) {
    return ArgError("self", "Bool inputs not supported for hardtanh");
  }
  if (self.dtype == DType::kUInt8 &&
      (args.scalar(1).to_int() < 0 || args.scalar(2).to_int() < 0)) {
    return ArgError("min_val",
                    "cannot do hardtanh on an unsigned type with negative "
                    "limits");
  }
  return SameAsSelf(self);
}

// leaky_relu and elu have floating kernels only.
MetaFn FloatingActivationMeta(std::string name) {
  return [name](const MetaArgs& args) -> MetaResult {
    const TensorMeta self = args.tensor(0);
    if (!IsFloating(self.dtype)) {
      return ArgError("self",
                      absl::StrCat(name, " needs a floating tensor, got ",
                                   DTypeName(self.dtype)));
    }
    return SameAsSelf(self);
  };
}

}  // namespace

absl::Status RegisterActivationOps(OpRegistry& registry) {
  RETURN_IF_ERROR(
      registry.Register("hardtanh(Tensor self, Scalar min_val=-1, Scalar "
                        "max_val=1) -> Tensor",
                        HardtanhMeta));
  RETURN_IF_ERROR(registry.Register(
      "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor",
      FloatingActivationMeta("leaky_relu")));
  RETURN_IF_ERROR(
      registry.Register("elu(Tensor self, Scalar alpha=1, Scalar scale=1, "
                        "Scalar input_scale=1) -> Tensor",
                        FloatingActivationMeta("elu")));
  return absl::OkStatus();
}

}  // namespace guardjit
