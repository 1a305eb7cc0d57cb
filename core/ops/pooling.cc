// Shape and dtype rules of the 2-D pooling ops (max_pool2d_with_indices,
// avg_pool2d, _adaptive_avg_pool2d) over (C, H, W) or (N, C, H, W) inputs,
// with ATen's pool2d_shape_check and its output sizes. H and W are
// specialized (guards) where symbolic; N and C may stay symbolic.

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

// A 3-D or 4-D input whose non-batch dims are nonzero.
absl::Status CheckPoolInput(const TensorMeta& self, absl::string_view op) {
  bool ok = self.dim() == 3 || self.dim() == 4;
  for (int d = self.dim() - 3; ok && d < self.dim(); ++d) {
    ok = self.sizes[d] != 0;
  }
  if (ok) return absl::OkStatus();
  return ArgError(
      "self",
      absl::StrCat(op,
                   ": Expected 3D or 4D (batch mode) tensor with optional 0 "
                   "dim batch size for input, but got: ",
                   ShapeToString(self.sizes)));
}

// The input's sizes with H and W replaced by the pooled ones.
MetaResult PooledShape(const TensorMeta& self, const Pool2dWindow& w,
                       DType dtype, int num_outputs) {
  const int h = self.dim() - 2;
  const int64_t in_h = self.sizes[h], in_w = self.sizes[h + 1];
  const int64_t out_h = PoolOutputSize(in_h, w, 0);
  const int64_t out_w = PoolOutputSize(in_w, w, 1);
  if (out_h < 1 || out_w < 1) {
    return ArgError(
        "self",
        absl::StrCat("Given input size: (", self.sizes[h - 1].ToString(), "x",
                     in_h, "x", in_w, "). Calculated output size: (",
                     self.sizes[h - 1].ToString(), "x", out_h, "x", out_w,
                     "). Output size is too small"));
  }
  SymShape sizes = self.sizes;
  sizes[h] = out_h;
  sizes[h + 1] = out_w;
  std::vector<TensorMeta> out = {{dtype, sizes, self.device}};
  if (num_outputs == 2) out.push_back({DType::kInt64, sizes, self.device});
  return out;
}

// Values and indices; NaN propagates (ATen's CPU kernel), so every dtype
// but bool has a kernel.
MetaResult MaxPool2dWithIndicesMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (self.dtype == DType::kBool) {
    return ArgError("self", "max_pool2d is not implemented for bool tensors");
  }
  ASSIGN_OR_RETURN(Pool2dWindow w, ReadPool2dWindow(args, "max_pool2d", 4, 5));
  RETURN_IF_ERROR(CheckPoolInput(self, "max_pool2d"));
  return PooledShape(self, w, self.dtype, 2);
}

// ATen's CPU avg_pool2d has floating and int64 kernels.
MetaResult AvgPool2dMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype) && self.dtype != DType::kInt64) {
    return ArgError("self", absl::StrCat("avg_pool2d is not implemented for ",
                                         DTypeName(self.dtype)));
  }
  ASSIGN_OR_RETURN(Pool2dWindow w, ReadPool2dWindow(args, "avg_pool2d", -1, 4));
  if (std::optional<int64_t> divisor = args.optional_int(6);
      divisor.has_value() && *divisor == 0) {
    return ArgError("divisor_override", "divisor must be not zero");
  }
  RETURN_IF_ERROR(CheckPoolInput(self, "avg_pool2d"));
  return PooledShape(self, w, self.dtype, 1);
}

MetaResult AdaptiveAvgPool2dMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype)) {
    return ArgError("self",
                    absl::StrCat("adaptive_avg_pool2d is not implemented for ",
                                 DTypeName(self.dtype)));
  }
  const std::vector<SymInt> output_size = args.sym_int_list(1);
  if (output_size.size() != 2) {
    return ArgError("output_size",
                    "adaptive_avg_pool2d: output_size must be 2");
  }
  for (const SymInt& s : output_size) {
    if (s < 0) {
      return ArgError("output_size",
                      absl::StrCat("adaptive_avg_pool2d: elements of "
                                   "output_size must be greater than or "
                                   "equal to 0 but received ",
                                   ShapeToString(output_size)));
    }
  }
  bool ok = self.dim() == 3 || self.dim() == 4;
  for (int d = 1; ok && d < self.dim(); ++d) ok = self.sizes[d] != 0;
  if (!ok) {
    return ArgError(
        "self",
        absl::StrCat("adaptive_avg_pool2d(): Expected 3D or 4D tensor with "
                     "nonzero sizes for non-batch dimensions, but got ",
                     ShapeToString(self.sizes)));
  }
  SymShape sizes = self.sizes;
  sizes[self.dim() - 2] = output_size[0];
  sizes[self.dim() - 1] = output_size[1];
  return std::vector<TensorMeta>{{self.dtype, sizes, self.device}};
}

}  // namespace

absl::Status RegisterPoolingOps(OpRegistry& registry) {
  RETURN_IF_ERROR(registry.Register(
      "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] "
      "stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) "
      "-> (Tensor, Tensor)",
      MaxPool2dWithIndicesMeta));
  RETURN_IF_ERROR(registry.Register(
      "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
      "padding=0, bool ceil_mode=False, bool count_include_pad=True, int? "
      "divisor_override=None) -> Tensor",
      AvgPool2dMeta));
  RETURN_IF_ERROR(registry.Register(
      "_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
      AdaptiveAvgPool2dMeta));
  RETURN_IF_ERROR(
      registry.ExpandOneValueLists("aten.max_pool2d_with_indices.default"));
  RETURN_IF_ERROR(registry.ExpandOneValueLists("aten.avg_pool2d.default"));
  return absl::OkStatus();
}

}  // namespace guardjit
