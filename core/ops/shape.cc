// Shape rules of the ops that build a new tensor from the layout of others:
// cat, clone, _to_copy, split_with_sizes (views) and constant_pad_nd.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/half.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/ops/view_geometry.h"
#include "core/shape_env.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

// PyTorch keeps accepting 1-D empty tensors in cat whatever the other
// inputs' shapes, from before tensors of other empty shapes existed.
bool IsLegacyEmpty(const TensorMeta& t) {
  return t.dim() == 1 && t.sizes[0] == 0;
}

absl::StatusOr<std::vector<TensorMeta>> CatMeta(const MetaArgs& args) {
  std::vector<TensorMeta> tensors = args.tensor_list(0);
  if (tensors.empty()) {
    return ArgError("tensors", "expected a non-empty list of Tensors");
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].dim() == 0) {
      return ArgError("tensors",
                      absl::StrCat("zero-dimensional tensor (at position ", i,
                                   ") cannot be concatenated"));
    }
    if (!(tensors[i].device == tensors[0].device)) {
      return ArgError(
          "tensors", absl::StrCat("expected all tensors on ",
                                  tensors[0].device.ToString(), ", but tensor ",
                                  i, " is on ", tensors[i].device.ToString()));
    }
  }
  const DType dtype = ResultType(tensors);
  const TensorMeta* first = nullptr;
  for (const TensorMeta& t : tensors) {
    if (!IsLegacyEmpty(t)) {
      first = &t;
      break;
    }
  }
  // Only legacy empty tensors: PyTorch returns one more and ignores `dim`.
  if (first == nullptr) {
    return std::vector<TensorMeta>{TensorMeta{dtype, {0}, tensors[0].device}};
  }
  auto wrapped = NormalizeDim(args.int_arg(1), first->dim());
  if (!wrapped.ok()) return ArgError("dim", wrapped.status().message());
  const int dim = *wrapped;
  SymShape sizes = first->sizes;
  sizes[dim] = 0;
  int summed = 0;  // sizes added into sizes[dim] so far
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorMeta& t = tensors[i];
    if (IsLegacyEmpty(t)) continue;
    if (t.dim() != first->dim()) {
      return ArgError("tensors",
                      absl::StrCat("tensors must have the same number of "
                                   "dimensions: got ",
                                   first->dim(), " and ", t.dim(),
                                   " for tensor ", i, " in the list"));
    }
    for (int d = 0; d < t.dim(); ++d) {
      if (d != dim && t.sizes[d] != first->sizes[d]) {
        return ArgError(
            "tensors",
            absl::StrCat("sizes of tensors must match except in dimension ",
                         dim, ". Expected size ", first->sizes[d].ToString(),
                         " but got size ", t.sizes[d].ToString(),
                         " for tensor number ", i, " in the list"));
      }
    }
    // On the hints, symbolic sizes included: a dynamic entry's sizes are
    // this call's too, and their sum must not wrap into a negative size.
    int64_t sum = 0;
    if (__builtin_add_overflow(sizes[dim].hint(), t.sizes[dim].hint(), &sum)) {
      return absl::OutOfRangeError(
          absl::StrCat("argument 'tensors': sizes along dimension ", dim,
                       " add up past 2^63 (", sizes[dim].hint(), " + ",
                       t.sizes[dim].hint(), ")"));
    }
    sizes[dim] += t.sizes[dim];
    ++summed;
    // A dynamic entry's hits compute this sum without this rule: its guard
    // sends a call whose sizes add up past 2^63 back here, to the check
    // above, instead of into a wrapped, negative size.
    if (summed >= 2 && sizes[dim].is_symbolic()) {
      if (ShapeEnv* env = ShapeEnv::Current()) {
        env->GuardNoWrap(sizes[dim].expr());
      }
    }
  }
  return std::vector<TensorMeta>{TensorMeta{dtype, sizes, first->device}};
}

absl::StatusOr<std::vector<TensorMeta>> CloneMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> ToCopyMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  constexpr int kDType = 1, kDevice = 3;
  Device device =
      args.is_none(kDevice) ? self.device : args.raw(kDevice).as_device();
  return std::vector<TensorMeta>{TensorMeta{
      args.optional_dtype(kDType).value_or(self.dtype), self.sizes, device}};
}

absl::StatusOr<std::vector<TensorMeta>> SplitWithSizesMeta(
    const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const SymShape strides = ContiguousStridesOf<SymInt>(self.sizes);
  const std::vector<SymInt> split_sizes = args.sym_int_list(1);
  ASSIGN_OR_RETURN(std::vector<SymViewGeometry> splits,
                   SplitWithSizesGeometry<SymInt>(
                       self.sizes, strides, split_sizes, args.int_arg(2)));
  std::vector<TensorMeta> out;
  for (SymViewGeometry& g : splits) {
    out.push_back(TensorMeta{self.dtype, std::move(g.sizes), self.device});
  }
  return out;
}

// Whether `T`'s range holds `v`, the check c10::checked_convert makes when
// fill_ converts a Scalar: integers and floats out of range fail, negative
// integers may wrap into unsigned types, and floating types take inf and NaN.
template <typename T>
bool InRange(double lowest, double max, const Scalar& v) {
  if (v.is_bool()) return true;
  if (v.is_int()) {
    const int64_t i = v.to_int();
    if constexpr (std::is_integral_v<T> && !std::is_signed_v<T>) {
      if (i < 0) return -static_cast<uint64_t>(i) <= static_cast<uint64_t>(max);
    }
    return static_cast<double>(i) >= lowest && static_cast<double>(i) <= max;
  }
  const double d = v.to_double();
  if (std::isnan(d)) return !std::is_integral_v<T>;
  if (std::isinf(d) && !std::is_integral_v<T>) return true;
  return d >= lowest && d <= max;
}

bool ScalarFits(const Scalar& v, DType dtype) {
  // Integer limits compare exactly with int64 values below 2^53 and with the
  // double bounds PyTorch uses above; int64 takes every int64.
  switch (dtype) {
    case DType::kBool:
      return InRange<bool>(0, 1, v);
    case DType::kUInt8:
      return InRange<uint8_t>(0, 255, v);
    case DType::kInt8:
      return InRange<int8_t>(-128, 127, v);
    case DType::kInt16:
      return InRange<int16_t>(-32768, 32767, v);
    case DType::kInt32:
      return InRange<int32_t>(-2147483648.0, 2147483647.0, v);
    case DType::kInt64:
      return v.is_float() ? InRange<int64_t>(-9.2233720368547758e18,
                                             9.2233720368547758e18, v)
                          : true;
    case DType::kFloat16:
      return InRange<Half>(-65504.0, 65504.0, v);
    case DType::kBFloat16:
      return InRange<BFloat16>(-3.3895313892515355e38, 3.3895313892515355e38,
                               v);
    case DType::kFloat32:
      return InRange<float>(-std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::max(), v);
    case DType::kFloat64:
      return true;
  }
  return true;
}

absl::StatusOr<std::vector<TensorMeta>> ConstantPadMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  std::vector<int64_t> pad = args.int_list(1);
  if (pad.size() % 2 != 0) {
    return ArgError(
        "pad", absl::StrCat("length of pad must be even, got ", pad.size()));
  }
  const int rank = self.dim();
  const int padded_dims = static_cast<int>(pad.size() / 2);
  if (padded_dims > rank) {
    return ArgError("pad", absl::StrCat("pad of length ", pad.size(),
                                        " is longer than twice the input's "
                                        "rank ",
                                        rank));
  }
  // Pads pair up from the last dim backwards: (last_lo, last_hi, ...).
  // Negative pads crop first, as in PyTorch, so cropping past a dim's size
  // fails even where a positive pad on the other side would make up for it.
  bool any_positive = false;
  // Padded dims specialize; the others keep their symbols.
  Shape sizes(rank, 0);
  for (int d = rank - padded_dims; d < rank; ++d) sizes[d] = self.sizes[d];
  for (int d = rank - padded_dims; d < rank; ++d) {
    const int64_t lo = pad[2 * (rank - d - 1)],
                  hi = pad[2 * (rank - d - 1) + 1];
    int64_t cropped = sizes[d];
    for (int64_t p : {lo, hi}) {
      any_positive = any_positive || p > 0;
      if (p < 0 &&
          (__builtin_add_overflow(cropped, p, &cropped) || cropped < 0)) {
        return ArgError("pad", absl::StrCat("pads (", lo, ", ", hi,
                                            ") crop more than the size ",
                                            sizes[d], " of dimension ", d));
      }
    }
    if (__builtin_add_overflow(sizes[d], lo, &sizes[d]) ||
        __builtin_add_overflow(sizes[d], hi, &sizes[d])) {
      return ArgError("pad", absl::StrCat("pads (", lo, ", ", hi,
                                          ") overflow dimension ", d));
    }
  }
  // A padded dim may end up empty (torch 2.15 returns [3, 0] for a [2, 3]
  // input padded by (-3, 0, 1, 0)); crops past the size failed above.
  if (any_positive) {
    const Scalar value = args.scalar(2);
    // Any value converts to bool (nonzero is true), as in torch.
    if (self.dtype != DType::kBool && !ScalarFits(value, self.dtype)) {
      return ArgError("value",
                      absl::StrCat("value ", value.ToString(),
                                   " cannot be converted to type ",
                                   DTypeName(self.dtype), " without overflow"));
    }
  }
  SymShape out_sizes = self.sizes;
  for (int d = rank - padded_dims; d < rank; ++d)
    out_sizes[d] = SymInt(sizes[d]);
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, std::move(out_sizes), self.device}};
}

// flip: dims wrap (a 0-dim tensor takes dim 0 or -1) and may not repeat.
absl::StatusOr<std::vector<TensorMeta>> FlipMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  std::vector<bool> seen(std::max(self.dim(), 1), false);
  for (int64_t d : args.int_list(1)) {
    auto nd = NormalizeDim(d, std::max(self.dim(), 1));
    if (!nd.ok()) return ArgError("dims", nd.status().message());
    if (seen[*nd]) {
      return ArgError("dims", absl::StrCat("dim ", *nd,
                                           " appears multiple times in the "
                                           "list of dims"));
    }
    seen[*nd] = true;
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

// repeat: self's sizes padded with leading 1s to len(repeats), times
// repeats.
absl::StatusOr<std::vector<TensorMeta>> RepeatMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const std::vector<SymInt> repeats = args.sym_int_list(1);
  const int rank = static_cast<int>(repeats.size());
  if (rank < self.dim()) {
    return ArgError("repeats",
                    "Number of dimensions of repeat dims can not be smaller "
                    "than number of dimensions of tensor");
  }
  SymShape sizes(rank, SymInt(1));
  for (int d = 0; d < self.dim(); ++d) {
    sizes[rank - self.dim() + d] = self.sizes[d];
  }
  bool negative = false;
  for (int d = 0; d < rank; ++d) {
    negative = negative || repeats[d] < 0;
    sizes[d] = sizes[d] * repeats[d];
  }
  if (negative) {
    return ArgError("repeats",
                    absl::StrCat("Trying to create tensor with negative "
                                 "dimension: ",
                                 SymShapeToString(sizes)));
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, std::move(sizes), self.device}};
}

// copy: self's dtype and shape with src's values broadcast to it.
absl::StatusOr<std::vector<TensorMeta>> CopyMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const TensorMeta src = args.tensor(1);
  auto b = BroadcastShapes(self.sizes, src.sizes);
  if (!b.ok() || b->size() != self.sizes.size() || !(*b == self.sizes)) {
    return ArgError(
        "src", absl::StrCat("a tensor of shape ", SymShapeToString(src.sizes),
                            " does not broadcast to self's shape ",
                            SymShapeToString(self.sizes)));
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

// fill.Scalar: self's metadata; the value must convert to self's dtype
// (any value converts to bool).
absl::StatusOr<std::vector<TensorMeta>> FillMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const Scalar value = args.scalar(1);
  if (self.dtype != DType::kBool && !ScalarFits(value, self.dtype)) {
    return ArgError("value",
                    absl::StrCat("value ", value.ToString(),
                                 " cannot be converted to type ",
                                 DTypeName(self.dtype), " without overflow"));
  }
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

// native_dropout: (output, bool mask). Inference (train=False) is the
// identity with an all-true mask; training needs random numbers, which only
// p == 0 (keep all) and p == 1 (drop all) do without. The p range is
// checked only when training, as ATen's bernoulli_ checks it.
absl::StatusOr<std::vector<TensorMeta>> NativeDropoutMeta(
    const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const double p = args.float_arg(1);
  const bool train = args.optional_bool(2).value_or(true);
  if (train && !(p >= 0 && p <= 1)) {
    return ArgError("p", absl::StrCat("dropout probability must be in [0, 1], "
                                      "got ",
                                      p));
  }
  if (train && p != 0 && p != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "argument 'train': native_dropout in training mode with p=", p,
        " needs a random number stream, which guardjit does not have; export "
        "the model in eval mode (train=False is the identity)"));
  }
  // ATen returns an empty input with a mask of its dtype.
  const DType mask = self.numel() == 0 ? self.dtype : DType::kBool;
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device},
      TensorMeta{mask, self.sizes, self.device}};
}

// select_scatter / slice_scatter: self's metadata; src must have exactly
// the shape of the selected/sliced part of self (no broadcasting), any
// dtype (converted to self's).
absl::Status CheckScatterSrc(const SymShape& part, const TensorMeta& src) {
  if (part.size() == src.sizes.size() && part == src.sizes) {
    return absl::OkStatus();
  }
  return ArgError("src",
                  absl::StrCat("expected src to have a size equal to "
                               "the slice of self. src size = ",
                               SymShapeToString(src.sizes),
                               ", slice size = ", SymShapeToString(part)));
}

absl::StatusOr<std::vector<TensorMeta>> SelectScatterMeta(
    const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const SymShape strides = ContiguousStridesOf<SymInt>(self.sizes);
  ASSIGN_OR_RETURN(SymViewGeometry g,
                   SelectGeometry<SymInt>(self.sizes, strides, args.int_arg(2),
                                          args.sym_int(3)));
  RETURN_IF_ERROR(CheckScatterSrc(g.sizes, args.tensor(1)));
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

absl::StatusOr<std::vector<TensorMeta>> SliceScatterMeta(const MetaArgs& args) {
  TensorMeta self = args.tensor(0);
  const SymShape strides = ContiguousStridesOf<SymInt>(self.sizes);
  ASSIGN_OR_RETURN(
      SymViewGeometry g,
      SliceGeometry<SymInt>(self.sizes, strides, args.int_arg(2),
                            args.optional_sym_int(3), args.optional_sym_int(4),
                            args.int_arg(5)));
  RETURN_IF_ERROR(CheckScatterSrc(g.sizes, args.tensor(1)));
  return std::vector<TensorMeta>{
      TensorMeta{self.dtype, self.sizes, self.device}};
}

}  // namespace

absl::Status RegisterShapeOps(OpRegistry& registry) {
  RETURN_IF_ERROR(
      registry.Register("cat(Tensor[] tensors, int dim=0) -> Tensor", CatMeta));
  RETURN_IF_ERROR(registry.Register(
      "clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
      CloneMeta));
  RETURN_IF_ERROR(registry.Register(
      "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, bool non_blocking=False, "
      "MemoryFormat? memory_format=None) -> Tensor",
      ToCopyMeta));
  RETURN_IF_ERROR(registry.Register(
      "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) "
      "-> Tensor(a)[]",
      SplitWithSizesMeta));
  RETURN_IF_ERROR(registry.Register(
      "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor",
      ConstantPadMeta));
  RETURN_IF_ERROR(
      registry.Register("flip(Tensor self, int[] dims) -> Tensor", FlipMeta));
  RETURN_IF_ERROR(registry.Register(
      "repeat(Tensor self, SymInt[] repeats) -> Tensor", RepeatMeta));
  RETURN_IF_ERROR(registry.Register(
      "copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor",
      CopyMeta));
  RETURN_IF_ERROR(registry.Register(
      "fill.Scalar(Tensor self, Scalar value) -> Tensor", FillMeta));
  RETURN_IF_ERROR(registry.Register(
      "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
      NativeDropoutMeta));
  RETURN_IF_ERROR(registry.Register(
      "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> "
      "Tensor",
      SelectScatterMeta));
  RETURN_IF_ERROR(registry.Register(
      "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, "
      "SymInt? end=None, SymInt step=1) -> Tensor",
      SliceScatterMeta));
  return absl::OkStatus();
}

}  // namespace guardjit
