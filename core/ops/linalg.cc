// Shape and dtype rules of the matrix products and convolution. The rules
// follow PyTorch's checks (ATen's LinearAlgebra.cpp and ConvUtils.h) with
// messages that name the offending argument.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// "2x3", as PyTorch prints matrix shapes.
std::string Dims(absl::Span<const SymInt> sizes) {
  std::vector<std::string> parts;
  for (const SymInt& s : sizes) parts.push_back(s.ToString());
  return absl::StrJoin(parts, "x");
}

absl::Status CheckRank(const TensorMeta& t, absl::string_view arg, int rank) {
  if (t.dim() == rank) return absl::OkStatus();
  return ArgError(arg, absl::StrCat("expected a ", rank, "-D tensor, got a ",
                                    t.dim(), "-D tensor"));
}

// PyTorch multiplies matrices of one dtype only, and never bool.
absl::Status CheckSameDType(const TensorMeta& first,
                            absl::string_view first_arg,
                            const TensorMeta& second,
                            absl::string_view second_arg) {
  if (first.dtype == DType::kBool) {
    return ArgError(first_arg, "matrix products are not defined for bool");
  }
  if (first.dtype != second.dtype) {
    return ArgError(
        second_arg,
        absl::StrCat("expected ", first_arg, " and ", second_arg,
                     " to have the same dtype, but got: ",
                     DTypeName(first.dtype), " != ", DTypeName(second.dtype)));
  }
  return absl::OkStatus();
}

// The (m x k) @ (k x n) check on the last two dims of a and b.
absl::Status CheckInnerDims(const TensorMeta& a, absl::string_view a_arg,
                            const TensorMeta& b, absl::string_view b_arg) {
  if (a.sizes[a.dim() - 1] == b.sizes[b.dim() - 2]) return absl::OkStatus();
  return ArgError(
      b_arg,
      absl::StrCat(a_arg, " and ", b_arg, " shapes cannot be multiplied (",
                   Dims(a.sizes), " and ", Dims(b.sizes), ")"));
}

MetaResult MmMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0), mat2 = args.tensor(1);
  RETURN_IF_ERROR(CheckRank(self, "self", 2));
  RETURN_IF_ERROR(CheckRank(mat2, "mat2", 2));
  RETURN_IF_ERROR(CheckSameDType(self, "self", mat2, "mat2"));
  RETURN_IF_ERROR(CheckInnerDims(self, "self", mat2, "mat2"));
  return std::vector<TensorMeta>{
      {self.dtype, {self.sizes[0], mat2.sizes[1]}, self.device}};
}

MetaResult BmmMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0), mat2 = args.tensor(1);
  RETURN_IF_ERROR(CheckRank(self, "self", 3));
  RETURN_IF_ERROR(CheckRank(mat2, "mat2", 3));
  RETURN_IF_ERROR(CheckSameDType(self, "self", mat2, "mat2"));
  if (self.sizes[0] != mat2.sizes[0]) {
    return ArgError("mat2",
                    absl::StrCat("batch size ", mat2.sizes[0].ToString(),
                                 " does not match self's batch size ",
                                 self.sizes[0].ToString()));
  }
  RETURN_IF_ERROR(CheckInnerDims(self, "self", mat2, "mat2"));
  return std::vector<TensorMeta>{
      {self.dtype, {self.sizes[0], self.sizes[1], mat2.sizes[2]}, self.device}};
}

MetaResult AddmmMeta(const MetaArgs& args) {
  const TensorMeta self = args.tensor(0), mat1 = args.tensor(1),
                   mat2 = args.tensor(2);
  RETURN_IF_ERROR(CheckRank(mat1, "mat1", 2));
  RETURN_IF_ERROR(CheckRank(mat2, "mat2", 2));
  RETURN_IF_ERROR(CheckSameDType(mat1, "mat1", mat2, "mat2"));
  RETURN_IF_ERROR(CheckSameDType(mat1, "mat1", self, "self"));
  RETURN_IF_ERROR(CheckInnerDims(mat1, "mat1", mat2, "mat2"));
  const SymShape result = {mat1.sizes[0], mat2.sizes[1]};
  // self broadcasts to the result, never the other way round.
  bool expandable = self.dim() <= 2;
  for (int i = 0; expandable && i < self.dim(); ++i) {
    const SymInt s = self.sizes[self.dim() - 1 - i];
    expandable = s == 1 || s == result[1 - i];
  }
  if (!expandable) {
    return ArgError("self", absl::StrCat("shape ", ShapeToString(self.sizes),
                                         " cannot be broadcast to the result "
                                         "shape ",
                                         ShapeToString(result)));
  }
  return std::vector<TensorMeta>{{mat1.dtype, result, mat1.device}};
}

// A stride/padding/dilation list: one value for every spatial dim, or one
// value for all of them.
absl::StatusOr<std::vector<int64_t>> SpatialList(const MetaArgs& args,
                                                 int index,
                                                 absl::string_view arg,
                                                 int spatial) {
  std::vector<int64_t> values = args.int_list(index);
  if (values.size() == 1) values.assign(spatial, values[0]);
  if (static_cast<int>(values.size()) != spatial) {
    return ArgError(
        arg, absl::StrCat("expected a single value or a list of ", spatial,
                          " values to match the convolution "
                          "dimensions, got [",
                          absl::StrJoin(values, ", "), "]"));
  }
  return values;
}

absl::Status CheckEach(const std::vector<int64_t>& values,
                       absl::string_view arg, bool (*ok)(int64_t),
                       absl::string_view what) {
  for (int64_t v : values) {
    if (!ok(v)) {
      return ArgError(
          arg, absl::StrCat(what, ", got [", absl::StrJoin(values, ", "), "]"));
    }
  }
  return absl::OkStatus();
}

std::string Int128ToString(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX) {
    return absl::StrCat(static_cast<int64_t>(v));
  }
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v)
                                 : static_cast<unsigned __int128>(v);
  std::string digits;
  for (; u != 0; u /= 10) digits.insert(digits.begin(), '0' + u % 10);
  return negative ? "-" + digits : digits;
}

// "(2 x 3)"-style sizes of PyTorch's convolution messages.
std::string PerChannel(const std::vector<__int128>& sizes) {
  std::vector<std::string> parts;
  for (__int128 s : sizes) parts.push_back(Int128ToString(s));
  return absl::StrJoin(parts, " x ");
}

MetaResult ConvolutionMeta(const MetaArgs& args) {
  const TensorMeta input = args.tensor(0), weight = args.tensor(1);
  const std::optional<TensorMeta> bias = args.optional_tensor(2);
  const bool transposed = args.bool_arg(6);
  const int64_t groups = args.int_arg(8);

  if (!IsFloating(input.dtype)) {
    return ArgError("input", absl::StrCat("convolution is defined for floating "
                                          "dtypes only, got ",
                                          DTypeName(input.dtype)));
  }
  for (const auto& [t, arg] : {std::pair{&weight, "weight"},
                               std::pair{bias ? &*bias : nullptr, "bias"}}) {
    if (t != nullptr && t->dtype != input.dtype) {
      return ArgError(
          arg, absl::StrCat("expected dtype ", DTypeName(input.dtype),
                            " (the input's), got ", DTypeName(t->dtype)));
    }
  }
  if (weight.dim() < 3 || weight.dim() > 5) {
    return ArgError("weight",
                    absl::StrCat("expected a 3-D, 4-D or 5-D weight (channels, "
                                 "channels, 1 to 3 kernel dims), got ",
                                 ShapeToString(weight.sizes)));
  }
  const int spatial = weight.dim() - 2;
  if (input.dim() != weight.dim()) {
    return ArgError(
        "input",
        absl::StrCat("expected a ", weight.dim(), "-D input (batch, channels, ",
                     spatial, " spatial dims) for a ", weight.dim(),
                     "-D weight, got ", ShapeToString(input.sizes)));
  }
  ASSIGN_OR_RETURN(auto stride, SpatialList(args, 3, "stride", spatial));
  ASSIGN_OR_RETURN(auto padding, SpatialList(args, 4, "padding", spatial));
  ASSIGN_OR_RETURN(auto dilation, SpatialList(args, 5, "dilation", spatial));
  ASSIGN_OR_RETURN(auto output_padding,
                   SpatialList(args, 7, "output_padding", spatial));
  RETURN_IF_ERROR(CheckEach(
      stride, "stride", [](int64_t v) { return v > 0; },
      "non-positive stride is not supported"));
  RETURN_IF_ERROR(CheckEach(
      padding, "padding", [](int64_t v) { return v >= 0; },
      "negative padding is not supported"));
  RETURN_IF_ERROR(CheckEach(
      dilation, "dilation", [](int64_t v) { return v > 0; },
      "dilation should be greater than zero"));
  RETURN_IF_ERROR(CheckEach(
      output_padding, "output_padding", [](int64_t v) { return v >= 0; },
      "negative output_padding is not supported"));
  if (groups <= 0) {
    return ArgError("groups", absl::StrCat("non-positive groups is not "
                                           "supported, got ",
                                           groups));
  }
  for (int i = 0; i < spatial; ++i) {
    if (weight.sizes[2 + i] < 1) {
      return ArgError("weight", absl::StrCat("kernel sizes must be positive, "
                                             "got weight of size ",
                                             ShapeToString(weight.sizes)));
    }
  }
  if (weight.sizes[0] % groups != 0) {
    return ArgError("weight", absl::StrCat("given groups=", groups,
                                           ", expected weight to be divisible "
                                           "by ",
                                           groups,
                                           " at dimension 0, but got weight of "
                                           "size ",
                                           ShapeToString(weight.sizes)));
  }
  // A transposed weight is [in, out / groups, kernel...], a plain one
  // [out, in / groups, kernel...].
  const int64_t in_channels =
      transposed ? weight.sizes[0] : weight.sizes[1] * groups;
  const int64_t out_channels =
      transposed ? weight.sizes[1] * groups : weight.sizes[0];
  if (input.sizes[1] != in_channels) {
    return ArgError(
        "input",
        absl::StrCat("given groups=", groups, transposed ? ", transposed" : "",
                     ", weight of size ", ShapeToString(weight.sizes),
                     ", expected input", ShapeToString(input.sizes),
                     " to have ", in_channels, " channels, but got ",
                     input.sizes[1].ToString(), " channels instead"));
  }
  if (bias.has_value() &&
      (bias->dim() != 1 || bias->sizes[0] != out_channels)) {
    return ArgError(
        "bias", absl::StrCat("expected a 1-D tensor with ", out_channels,
                             " elements, got ", ShapeToString(bias->sizes)));
  }

  // 128-bit so that absurd sizes, paddings or dilations cannot overflow.
  std::vector<__int128> padded(spatial), dilated_kernel(spatial),
      out_spatial(spatial);
  for (int i = 0; i < spatial; ++i) {
    // Spatial sizes specialize (only batch and channels stay symbolic).
    const int64_t in_size = input.sizes[2 + i];
    const int64_t kernel_size = weight.sizes[2 + i];
    padded[i] = in_size + 2 * __int128{padding[i]};
    dilated_kernel[i] = __int128{dilation[i]} * (kernel_size - 1) + 1;
    if (transposed) {
      out_spatial[i] = (__int128{input.sizes[2 + i]} - 1) * stride[i] -
                       2 * __int128{padding[i]} + dilated_kernel[i] +
                       output_padding[i];
    } else {
      out_spatial[i] = (padded[i] - dilated_kernel[i]) / stride[i] + 1;
    }
  }
  for (int i = 0; i < spatial; ++i) {
    if (transposed && output_padding[i] >= stride[i] &&
        output_padding[i] >= dilation[i]) {
      return ArgError(
          "output_padding",
          absl::StrCat("output padding must be smaller than either "
                       "stride or dilation, got output_padding=[",
                       absl::StrJoin(output_padding, ", "), "], stride=[",
                       absl::StrJoin(stride, ", "), "], dilation=[",
                       absl::StrJoin(dilation, ", "), "]"));
    }
    if (!transposed && padded[i] < dilated_kernel[i]) {
      return ArgError("input",
                      absl::StrCat("calculated padded input size per "
                                   "channel: (",
                                   PerChannel(padded), "). Kernel size: (",
                                   PerChannel(dilated_kernel),
                                   "). Kernel size can't be greater "
                                   "than actual input size"));
    }
  }
  SymShape out = {input.sizes[0], out_channels};
  for (int i = 0; i < spatial; ++i) {
    // The kernels index with int64 arithmetic; bounding every extent by
    // 2^62 keeps input position + kernel offset from overflowing.
    constexpr __int128 kMaxExtent = __int128{1} << 62;
    const __int128 reach =
        transposed ? (__int128{input.sizes[2 + i]} - 1) * stride[i] +
                         dilated_kernel[i] + output_padding[i]
                   : padded[i];
    if (reach > kMaxExtent || dilated_kernel[i] > kMaxExtent) {
      return absl::OutOfRangeError(
          absl::StrCat("argument 'padding': padded input sizes (",
                       PerChannel(padded), ") or dilated kernel sizes (",
                       PerChannel(dilated_kernel), ") exceed 2^62"));
    }
    if (out_spatial[i] < 1) {
      return ArgError(
          "input",
          absl::StrCat("given input of size ", ShapeToString(input.sizes),
                       ", the calculated output size per "
                       "channel (",
                       PerChannel(out_spatial), ") is too small"));
    }
    out.push_back(static_cast<int64_t>(out_spatial[i]));
  }
  return std::vector<TensorMeta>{{input.dtype, out, input.device}};
}

}  // namespace

absl::Status RegisterLinalgOps(OpRegistry& registry) {
  RETURN_IF_ERROR(
      registry.Register("mm(Tensor self, Tensor mat2) -> Tensor", MmMeta));
  RETURN_IF_ERROR(
      registry.Register("bmm(Tensor self, Tensor mat2) -> Tensor", BmmMeta));
  RETURN_IF_ERROR(registry.Register(
      "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, "
      "Scalar alpha=1) -> Tensor",
      AddmmMeta));
  RETURN_IF_ERROR(registry.Register(
      "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
      "SymInt[] padding, SymInt[] dilation, bool transposed, "
      "SymInt[] output_padding, SymInt groups) -> Tensor",
      ConvolutionMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
