// Reference kernels of cat, clone, _to_copy, split_with_sizes and
// constant_pad_nd. Results are new contiguous tensors, except
// split_with_sizes, whose pieces are views of its input as in PyTorch.

#include <algorithm>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/view_geometry.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/convert.h"
#include "runtime/dtype_dispatch.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

absl::StatusOr<std::vector<Tensor>> CatKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  // 1-D empty inputs are skipped, as the shape rule did.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; };
  std::vector<Tensor> tensors = args.tensor_list(0);
  auto first = std::find_if_not(tensors.begin(), tensors.end(), skipped);
  if (first == tensors.end()) return std::vector<Tensor>{out};
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), first->dim()));
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    CopyInto(out.AsStrided(t.sizes(), out.strides(), offset * out.stride(dim)),
             t);
    offset += t.size(dim);
  }
  return std::vector<Tensor>{out};
}

// clone and _to_copy: a contiguous copy converted to the inferred dtype.
absl::StatusOr<std::vector<Tensor>> CopyKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  if (!out[0].device.is_cpu()) {
    return absl::UnimplementedError(
        absl::StrCat("argument 'device': copying to ", out[0].device.ToString(),
                     " is not supported; the reference kernels run on cpu"));
  }
  ASSIGN_OR_RETURN(Tensor copy, CopyAs(args.tensor(0), out[0].dtype));
  return std::vector<Tensor>{copy};
}

absl::StatusOr<std::vector<Tensor>> SplitWithSizesKernel(
    const KernelArgs& args, absl::Span<const TensorMeta>) {
  Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(
      std::vector<ViewGeometry> splits,
      SplitWithSizesGeometry<int64_t>(self.sizes(), self.strides(),
                                      args.int_list(1), args.int_arg(2)));
  std::vector<Tensor> out;
  for (const ViewGeometry& g : splits) {
    out.push_back(self.AsStrided(g.sizes, g.strides, g.offset));
  }
  return out;
}

void Fill(const Tensor& out, const Scalar& value) {
  VisitDType(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.is_float() ? Convert<T>(value.to_double())
                : value.is_int() ? Convert<T>(value.to_int())
                                 : Convert<T>(value.to_bool());
    MapElements<T>(out, [v] { return v; });
  });
}

absl::StatusOr<std::vector<Tensor>> ConstantPadKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  Tensor self = args.tensor(0);
  std::vector<int64_t> pad = args.int_list(1);
  const int rank = self.dim();
  const int padded_dims = static_cast<int>(pad.size() / 2);
  // The part of the input that survives negative pads, and where it lands.
  Shape kept(self.sizes().begin(), self.sizes().end());
  int64_t in_offset = 0;
  Shape out_start(rank, 0);
  bool any_positive = false;
  for (int d = rank - padded_dims; d < rank; ++d) {
    const int64_t lo = pad[2 * (rank - d - 1)],
                  hi = pad[2 * (rank - d - 1) + 1];
    in_offset += std::max<int64_t>(-lo, 0) * self.stride(d);
    kept[d] += std::min<int64_t>(lo, 0) + std::min<int64_t>(hi, 0);
    out_start[d] = std::max<int64_t>(lo, 0);
    any_positive = any_positive || lo > 0 || hi > 0;
  }
  Tensor cropped = self.AsStrided(kept, self.strides(), in_offset);
  if (!any_positive) {
    ASSIGN_OR_RETURN(Tensor copy, CopyAs(cropped, self.dtype()));
    return std::vector<Tensor>{copy};
  }
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  Fill(out, args.scalar(2));
  int64_t out_offset = 0;
  for (int d = 0; d < rank; ++d) out_offset += out_start[d] * out.stride(d);
  CopyInto(out.AsStrided(kept, out.strides(), out_offset), cropped);
  return std::vector<Tensor>{out};
}

// flip: a copy of self read through a view with the flipped dims' strides
// negated.
absl::StatusOr<std::vector<Tensor>> FlipKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  Shape strides(self.strides().begin(), self.strides().end());
  int64_t offset = 0;
  if (self.dim() > 0 && self.numel() > 0) {
    for (int64_t d : args.int_list(1)) {
      ASSIGN_OR_RETURN(int nd, NormalizeDim(d, self.dim()));
      offset += (self.size(nd) - 1) * strides[nd];
      strides[nd] = -strides[nd];
    }
  }
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (out.numel() > 0) {
    CopyInto(out, self.AsStrided(self.sizes(), strides, offset));
  }
  return std::vector<Tensor>{out};
}

// repeat: the output viewed as (repeat_d, size_d) pairs, written from self
// broadcast along every repeat dim.
absl::StatusOr<std::vector<Tensor>> RepeatKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  const std::vector<int64_t> repeats = args.int_list(1);
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (out.numel() == 0) return std::vector<Tensor>{out};
  const int rank = static_cast<int>(repeats.size());
  const int lead = rank - self.dim();
  Shape sizes, out_strides, in_strides;
  for (int d = 0; d < rank; ++d) {
    const int64_t size = d < lead ? 1 : self.size(d - lead);
    sizes.push_back(repeats[d]);
    sizes.push_back(size);
    out_strides.push_back(size * out.stride(d));
    out_strides.push_back(out.stride(d));
    in_strides.push_back(0);
    in_strides.push_back(d < lead ? 0 : self.stride(d - lead));
  }
  CopyInto(out.AsStrided(sizes, out_strides),
           self.AsStrided(sizes, in_strides));
  return std::vector<Tensor>{out};
}

// copy: src broadcast to self's shape, converted to self's dtype.
absl::StatusOr<std::vector<Tensor>> CopyOpKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  if (out.numel() > 0) CopyInto(out, args.tensor(1));
  return std::vector<Tensor>{out};
}

absl::StatusOr<std::vector<Tensor>> FillKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  Fill(out, args.scalar(1));
  return std::vector<Tensor>{out};
}

// native_dropout without random numbers (the shape rule refused the rest):
// eval and p == 0 keep everything (output = input, mask all true); p == 1
// in training drops everything as ATen computes it, input * 0 * 0 (NaN
// and inf stay NaN, -x gives -0). An empty input gives an empty mask of its
// dtype.
absl::StatusOr<std::vector<Tensor>> NativeDropoutKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  const bool train = args.optional_bool(2).value_or(true);
  const bool drop_all = train && args.float_arg(1) == 1.0;
  ASSIGN_OR_RETURN(Tensor out,
                   Tensor::Empty(out_meta[0].dtype, out_meta[0].shape()));
  ASSIGN_OR_RETURN(Tensor mask,
                   Tensor::Empty(out_meta[1].dtype, out_meta[1].shape()));
  if (self.numel() == 0) return std::vector<Tensor>{out, mask};
  if (!drop_all) {
    CopyInto(out, self);
    Fill(mask, Scalar(true));
    return std::vector<Tensor>{out, mask};
  }
  VisitDType(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      MapElements<T, T>(
          out, [](T) { return false; }, self);
    } else if constexpr (std::is_integral_v<T>) {
      MapElements<T, T>(
          out, [](T) { return T(0); }, self);
    } else {
      using A = OpMath<T>;
      MapElements<T, T>(
          out, [](T x) { return Convert<T>(static_cast<A>(x) * A(0) * A(0)); },
          self);
    }
  });
  Fill(mask, Scalar(false));
  return std::vector<Tensor>{out, mask};
}

// select_scatter / slice_scatter: a copy of self with the selected part
// overwritten by src (converted to self's dtype).
absl::StatusOr<std::vector<Tensor>> ScatterIntoCopy(
    const Tensor& self, const Tensor& src, DType dtype,
    const absl::StatusOr<ViewGeometry>& part) {
  if (!part.ok()) return part.status();
  ASSIGN_OR_RETURN(Tensor out, CopyAs(self, dtype));
  Tensor view = out.AsStrided(part->sizes, part->strides, part->offset);
  if (view.numel() > 0) CopyInto(view, src);
  return std::vector<Tensor>{out};
}

absl::StatusOr<std::vector<Tensor>> SelectScatterKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  const Shape strides = ContiguousStrides(self.sizes());
  return ScatterIntoCopy(
      self, args.tensor(1), out_meta[0].dtype,
      SelectGeometry<int64_t>(self.sizes(), strides, args.int_arg(2),
                              args.sym_int(3)));
}

absl::StatusOr<std::vector<Tensor>> SliceScatterKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out_meta) {
  const Tensor self = args.tensor(0);
  const Shape strides = ContiguousStrides(self.sizes());
  return ScatterIntoCopy(
      self, args.tensor(1), out_meta[0].dtype,
      SliceGeometry<int64_t>(self.sizes(), strides, args.int_arg(2),
                             args.optional_sym_int(3), args.optional_sym_int(4),
                             args.int_arg(5)));
}

}  // namespace

absl::Status RegisterShapeKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.cat.default", CatKernel));
  RETURN_IF_ERROR(registry.Register("aten.clone.default", CopyKernel));
  RETURN_IF_ERROR(registry.Register("aten._to_copy.default", CopyKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.split_with_sizes.default", SplitWithSizesKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.constant_pad_nd.default", ConstantPadKernel));
  RETURN_IF_ERROR(registry.Register("aten.flip.default", FlipKernel));
  RETURN_IF_ERROR(registry.Register("aten.repeat.default", RepeatKernel));
  RETURN_IF_ERROR(registry.Register("aten.copy.default", CopyOpKernel));
  RETURN_IF_ERROR(registry.Register("aten.fill.Scalar", FillKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.native_dropout.default", NativeDropoutKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.select_scatter.default", SelectScatterKernel));
  RETURN_IF_ERROR(
      registry.Register("aten.slice_scatter.default", SliceScatterKernel));
  return absl::OkStatus();
}

}  // namespace guardjit
