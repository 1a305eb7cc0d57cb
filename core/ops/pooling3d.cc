// Shape and dtype rules of the 3-D pooling ops (max_pool3d_with_indices,
// avg_pool3d, _adaptive_avg_pool3d) over (C, D, H, W) or (N, C, D, H, W)
// inputs, with ATen's pool3d_shape_check and its output sizes. D, H and W
// are specialized (guards) where symbolic; N and C may stay symbolic.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/pool_args.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using MetaResult = absl::StatusOr<std::vector<TensorMeta>>;

absl::Status ArgError(absl::string_view arg, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", message));
}

// A 4-D or 5-D input whose non-batch dims are nonzero.
absl::Status CheckPool3dInput(const TensorMeta& self) {
  bool ok = self.dim() == 4 || self.dim() == 5;
  for (int d = self.dim() - 4; ok && d < self.dim(); ++d) {
    ok = self.sizes[d] != 0;
  }
  if (ok) return absl::OkStatus();
  return ArgError("self", absl::StrCat("non-empty 4D or 5D (batch mode) tensor "
                                       "expected for input, got ",
                                       ShapeToString(self.sizes)));
}

MetaResult Pooled3dShape(const TensorMeta& self, const Pool3dWindow& w,
                         int num_outputs) {
  const int first = self.dim() - 3;
  SymShape sizes = self.sizes;
  std::string in_text = self.sizes[first - 1].ToString();
  std::string out_text = in_text;
  bool small = false;
  for (int d = 0; d < 3; ++d) {
    const int64_t in = self.sizes[first + d];
    const int64_t out = PoolOutputSize3d(in, w, d);
    absl::StrAppend(&in_text, "x", in);
    absl::StrAppend(&out_text, "x", out);
    small = small || out < 1;
    sizes[first + d] = out;
  }
  if (small) {
    return ArgError("self",
                    absl::StrCat("Given input size: (", in_text,
                                 "). Calculated output size: (", out_text,
                                 "). Output size is too small"));
  }
  std::vector<TensorMeta> out = {{self.dtype, sizes, self.device}};
  if (num_outputs == 2) out.push_back({DType::kInt64, sizes, self.device});
  return out;
}

MetaResult MaxPool3dWithIndicesMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (self.dtype == DType::kBool) {
    return ArgError("self", "max_pool3d is not implemented for bool tensors");
  }
  ASSIGN_OR_RETURN(Pool3dWindow w, ReadPool3dWindow(args, "max_pool3d", 4, 5));
  RETURN_IF_ERROR(CheckPool3dInput(self));
  return Pooled3dShape(self, w, 2);
}

// ATen's CPU avg_pool3d has floating and int64 kernels.
MetaResult AvgPool3dMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype) && self.dtype != DType::kInt64) {
    return ArgError("self", absl::StrCat("avg_pool3d is not implemented for ",
                                         DTypeName(self.dtype)));
  }
  ASSIGN_OR_RETURN(Pool3dWindow w, ReadPool3dWindow(args, "avg_pool3d", -1, 4));
  if (std::optional<int64_t> divisor = args.optional_int(6);
      divisor.has_value() && *divisor == 0) {
    return ArgError("divisor_override", "divisor must be not zero");
  }
  RETURN_IF_ERROR(CheckPool3dInput(self));
  return Pooled3dShape(self, w, 1);
}

MetaResult AdaptiveAvgPool3dMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype)) {
    return ArgError("self",
                    absl::StrCat("adaptive_avg_pool3d is not implemented for ",
                                 DTypeName(self.dtype)));
  }
  const std::vector<SymInt> output_size = args.sym_int_list(1);
  if (output_size.size() != 3) {
    return ArgError("output_size",
                    "adaptive_avg_pool3d: output_size must be 3");
  }
  for (const SymInt& s : output_size) {
    if (s < 0) {
      return ArgError("output_size",
                      absl::StrCat("adaptive_avg_pool3d: elements of "
                                   "output_size must be greater than or "
                                   "equal to 0 but received ",
                                   ShapeToString(output_size)));
    }
  }
  bool ok = self.dim() == 4 || self.dim() == 5;
  for (int d = 1; ok && d < self.dim(); ++d) ok = self.sizes[d] != 0;
  if (!ok) {
    return ArgError(
        "self",
        absl::StrCat("adaptive_avg_pool3d(): Expected 4D or 5D tensor with "
                     "nonzero sizes for non-batch dimensions, but got ",
                     ShapeToString(self.sizes)));
  }
  SymShape sizes = self.sizes;
  for (int d = 0; d < 3; ++d) sizes[self.dim() - 3 + d] = output_size[d];
  return std::vector<TensorMeta>{{self.dtype, sizes, self.device}};
}

}  // namespace

absl::Status RegisterPooling3dOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] "
      "stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) "
      "-> (Tensor, Tensor)",
      MaxPool3dWithIndicesMeta));
  RETURN_IF_ERROR(registry.Register(
      "avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] "
      "padding=0, bool ceil_mode=False, bool count_include_pad=True, int? "
      "divisor_override=None) -> Tensor",
      AvgPool3dMeta));
  RETURN_IF_ERROR(registry.Register(
      "_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
      AdaptiveAvgPool3dMeta));
  RETURN_IF_ERROR(
      registry.ExpandOneValueLists("aten.max_pool3d_with_indices.default"));
  RETURN_IF_ERROR(registry.ExpandOneValueLists("aten.avg_pool3d.default"));
  return absl::OkStatus();
}

}  // namespace guardjit
