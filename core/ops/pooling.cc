// Shape and dtype rules of the pooling ops over N = 2 or 3 spatial dims
// (max_pool{2,3}d_with_indices, avg_pool{2,3}d, _adaptive_avg_pool{2,3}d) of
// inputs with one or no batch dim before the channels, with ATen's
// pool2d_shape_check / pool3d_shape_check and its output sizes. The spatial
// dims are specialized (guards) where symbolic; N and C may stay symbolic.
// ATen's 1-D pools are composites over the 2-D ones (torch.export and the
// ONNX importer emit those).

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

// "max_pool2d", "avg_pool3d", ...
std::string OpName(absl::string_view op, int rank) {
  return absl::StrCat(op, rank, "d");
}

// Whether `self` has rank + 1 or rank + 2 dims whose last `nonzero` are
// nonzero.
bool PoolableInput(const TensorMeta& self, int rank, int nonzero) {
  bool ok = self.dim() == rank + 1 || self.dim() == rank + 2;
  for (int d = self.dim() - nonzero; ok && d < self.dim(); ++d) {
    ok = self.sizes[d] != 0;
  }
  return ok;
}

// A (C, spatial...) or (N, C, spatial...) input whose non-batch dims are
// nonzero, in ATen's words for the rank.
absl::Status CheckPoolInput(const TensorMeta& self, int rank,
                            absl::string_view op) {
  if (PoolableInput(self, rank, rank + 1)) return absl::OkStatus();
  if (rank == 2) {
    return ArgError(
        "self",
        absl::StrCat(op,
                     ": Expected 3D or 4D (batch mode) tensor with optional 0 "
                     "dim batch size for input, but got: ",
                     ShapeToString(self.sizes)));
  }
  return ArgError("self",
                  absl::StrCat("non-empty ", rank + 1, "D or ", rank + 2,
                               "D (batch mode) tensor expected for "
                               "input, got ",
                               ShapeToString(self.sizes)));
}

// The input's sizes with the spatial dims replaced by the pooled ones.
MetaResult PooledShape(const TensorMeta& self, const PoolWindow& w,
                       int num_outputs) {
  const int first = self.dim() - w.rank;
  SymShape sizes = self.sizes;
  std::string in_text = self.sizes[first - 1].ToString();
  std::string out_text = in_text;
  bool small = false;
  for (int d = 0; d < w.rank; ++d) {
    const int64_t in = self.sizes[first + d];
    const int64_t out = PoolOutputSize(in, w, d);
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

// Values and indices; NaN propagates (ATen's CPU kernel), so every dtype
// but bool has a kernel.
MetaResult MaxPoolWithIndicesMeta(const MetaArgs& args, int rank) {
  const std::string op = OpName("max_pool", rank);
  const TensorMeta self = args.tensor(0);
  if (self.dtype == DType::kBool) {
    return ArgError("self", absl::StrCat(op,
                                         " is not implemented for bool "
                                         "tensors"));
  }
  ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(args, rank, op, 4, 5));
  RETURN_IF_ERROR(CheckPoolInput(self, rank, op));
  return PooledShape(self, w, 2);
}

// ATen's CPU avg_pool{2,3}d has floating and int64 kernels.
MetaResult AvgPoolMeta(const MetaArgs& args, int rank) {
  const std::string op = OpName("avg_pool", rank);
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype) && self.dtype != DType::kInt64) {
    return ArgError("self", absl::StrCat(op, " is not implemented for ",
                                         DTypeName(self.dtype)));
  }
  ASSIGN_OR_RETURN(PoolWindow w, ReadPoolWindow(args, rank, op, -1, 4));
  if (std::optional<int64_t> divisor = args.optional_int(6);
      divisor.has_value() && *divisor == 0) {
    return ArgError("divisor_override", "divisor must be not zero");
  }
  RETURN_IF_ERROR(CheckPoolInput(self, rank, op));
  return PooledShape(self, w, 1);
}

MetaResult AdaptiveAvgPoolMeta(const MetaArgs& args, int rank) {
  const std::string op = OpName("adaptive_avg_pool", rank);
  const TensorMeta self = args.tensor(0);
  if (!IsFloating(self.dtype)) {
    return ArgError("self", absl::StrCat(op, " is not implemented for ",
                                         DTypeName(self.dtype)));
  }
  const std::vector<SymInt> output_size = args.sym_int_list(1);
  if (output_size.size() != static_cast<size_t>(rank)) {
    return ArgError("output_size",
                    absl::StrCat(op, ": output_size must be ", rank));
  }
  for (const SymInt& s : output_size) {
    if (s < 0) {
      return ArgError("output_size",
                      absl::StrCat(op,
                                   ": elements of output_size must be greater "
                                   "than or equal to 0 but received ",
                                   ShapeToString(output_size)));
    }
  }
  if (!PoolableInput(self, rank, self.dim() - 1)) {
    return ArgError(
        "self", absl::StrCat(op, "(): Expected ", rank + 1, "D or ", rank + 2,
                             "D tensor with nonzero sizes for non-batch "
                             "dimensions, but got ",
                             ShapeToString(self.sizes)));
  }
  SymShape sizes = self.sizes;
  for (int d = 0; d < rank; ++d) sizes[self.dim() - rank + d] = output_size[d];
  return std::vector<TensorMeta>{{self.dtype, sizes, self.device}};
}

}  // namespace

absl::Status RegisterPoolingOps(OpRegistry& registry) {
  for (const int rank : {2, 3}) {
    const std::string n = absl::StrCat(rank);
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("max_pool", n, "d_with_indices(Tensor self, int[", n,
                     "] kernel_size, int[", n, "] stride=[], int[", n,
                     "] padding=0, int[", n,
                     "] dilation=1, bool "
                     "ceil_mode=False) -> (Tensor, Tensor)"),
        [rank](const MetaArgs& args) {
          return MaxPoolWithIndicesMeta(args, rank);
        }));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("avg_pool", n, "d(Tensor self, int[", n,
                     "] kernel_size, int[", n, "] stride=[], int[", n,
                     "] padding=0, bool ceil_mode=False, bool "
                     "count_include_pad=True, int? divisor_override=None) -> "
                     "Tensor"),
        [rank](const MetaArgs& args) { return AvgPoolMeta(args, rank); }));
    RETURN_IF_ERROR(registry.Register(
        absl::StrCat("_adaptive_avg_pool", n, "d(Tensor self, SymInt[", n,
                     "] output_size) -> Tensor"),
        [rank](const MetaArgs& args) {
          return AdaptiveAvgPoolMeta(args, rank);
        }));
    RETURN_IF_ERROR(registry.ExpandOneValueLists(
        absl::StrCat("aten.max_pool", n, "d_with_indices.default")));
    RETURN_IF_ERROR(registry.ExpandOneValueLists(
        absl::StrCat("aten.avg_pool", n, "d.default")));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
