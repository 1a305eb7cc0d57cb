#include "core/ops/view_geometry.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

absl::StatusOr<int> WrapDim(absl::string_view arg, int64_t dim, int rank) {
  auto wrapped = NormalizeDim(dim, rank);
  if (!wrapped.ok()) return ArgError(arg, wrapped.status().message());
  return *wrapped;
}

// The few operations that differ between int64_t and SymInt.
std::string Str(int64_t v) { return absl::StrCat(v); }
std::string Str(const SymInt& v) { return v.ToString(); }
int64_t HintOf(int64_t v) { return v; }
int64_t HintOf(const SymInt& v) { return v.hint(); }
int64_t Div(int64_t a, int64_t b) { return a / b; }
SymInt Div(const SymInt& a, const SymInt& b) { return SymFloorDiv(a, b); }
int64_t Rem(int64_t a, int64_t b) { return a % b; }
SymInt Rem(const SymInt& a, const SymInt& b) { return SymMod(a, b); }
// acc *= v; true if the (hint) product overflows int64.
bool MulOverflows(int64_t& acc, int64_t v) {
  return __builtin_mul_overflow(acc, v, &acc);
}
bool MulOverflows(SymInt& acc, const SymInt& v) {
  int64_t hint;
  const bool overflow = __builtin_mul_overflow(acc.hint(), v.hint(), &hint);
  acc = acc * v;
  return overflow;
}

}  // namespace

template <typename I>
absl::InlinedVector<I, 6> ContiguousStridesOf(IntsOf<I> sizes) {
  absl::InlinedVector<I, 6> strides(sizes.size());
  I s = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    if (sizes[i] > 1) s = s * sizes[i];
  }
  return strides;
}

template <typename I>
absl::StatusOr<absl::InlinedVector<I, 6>> InferViewSize(IntsOf<I> size,
                                                        I numel) {
  std::optional<size_t> infer_dim;
  bool has_zero = false;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] == -1) {
      if (infer_dim.has_value()) {
        return ArgError("size", "only one dimension can be inferred");
      }
      infer_dim = d;
    } else if (size[d] < 0) {
      return ArgError("size",
                      absl::StrCat("invalid shape dimension ", Str(size[d])));
    }
    has_zero = has_zero || size[d] == 0;
  }
  // A product that overflows int64 cannot equal any real numel; a zero makes
  // the product zero whatever the other sizes are.
  I known = 1;
  bool overflow = false;
  for (const I& s : size) {
    if (s != -1 && !has_zero) overflow = MulOverflows(known, s) || overflow;
  }
  if (has_zero) known = 0;
  absl::InlinedVector<I, 6> out(size.begin(), size.end());
  const bool fits =
      !overflow && (numel == known || (infer_dim.has_value() && known > 0 &&
                                       Rem(numel, known) == 0));
  if (!fits) {
    return ArgError(
        "size", absl::StrCat("shape '", ShapeToString(size),
                             "' is invalid for input of size ", Str(numel)));
  }
  if (infer_dim.has_value()) {
    if (known == 0) {
      return ArgError(
          "size",
          absl::StrCat("cannot reshape a tensor of 0 elements into shape ",
                       ShapeToString(size),
                       " because the unspecified dimension size -1 can be "
                       "any value and is ambiguous"));
    }
    out[*infer_dim] = Div(numel, known);
  }
  return out;
}

template <typename I>
std::optional<absl::InlinedVector<I, 6>> ComputeViewStrides(
    IntsOf<I> old_sizes, IntsOf<I> old_strides, IntsOf<I> new_sizes) {
  using Sizes = absl::InlinedVector<I, 6>;
  if (old_sizes.empty()) return Sizes(new_sizes.size(), I(1));
  I numel = 1;
  for (const I& s : old_sizes) numel = numel * s;
  // With no elements strides are arbitrary; NumPy (and PyTorch) keep the old
  // ones when the shape is unchanged and use contiguous ones otherwise.
  if (numel == 0) {
    if (std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(),
                   new_sizes.end())) {
      return Sizes(old_strides.begin(), old_strides.end());
    }
    return ContiguousStridesOf<I>(new_sizes);
  }
  // Walk the old dims from the innermost, grouping them into chunks that are
  // contiguous with one another; each chunk must be covered exactly by a run
  // of new dims, which then step through it with the chunk's base stride.
  Sizes new_strides(new_sizes.size());
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  I chunk_base_stride = old_strides.back();
  I tensor_numel = 1;
  I view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1;
       tensor_d >= 0; --tensor_d) {
    tensor_numel = tensor_numel * old_sizes[tensor_d];
    const bool chunk_ends =
        tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 &&
         old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 &&
           (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel = view_numel * new_sizes[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (tensor_d > 0) {
      chunk_base_stride = old_strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> ViewAsGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides,
                                                IntsOf<I> size) {
  I numel = 1;
  for (const I& s : sizes) numel = numel * s;
  ASSIGN_OR_RETURN(auto new_sizes, InferViewSize<I>(size, numel));
  auto new_strides = ComputeViewStrides<I>(sizes, strides, new_sizes);
  if (!new_strides.has_value()) {
    return ArgError(
        "size",
        absl::StrCat("view size ", ShapeToString(new_sizes),
                     " is not compatible with the input's size ",
                     ShapeToString(sizes), " and stride ",
                     ShapeToString(strides),
                     " (at least one dimension spans across two contiguous "
                     "subspaces); use reshape instead"));
  }
  return ViewGeometryT<I>{std::move(new_sizes), *std::move(new_strides), 0};
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> PermuteGeometry(IntsOf<I> sizes,
                                                 IntsOf<I> strides,
                                                 IntSpan dims) {
  const int rank = static_cast<int>(sizes.size());
  if (static_cast<int>(dims.size()) != rank) {
    return ArgError("dims", absl::StrCat("got ", dims.size(),
                                         " dims for a tensor of rank ", rank));
  }
  Shape order(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    ASSIGN_OR_RETURN(order[i], WrapDim("dims", dims[i], rank));
    if (seen[order[i]]) {
      return ArgError("dims", absl::StrCat("dim ", order[i], " is repeated in ",
                                           ShapeToString(dims)));
    }
    seen[order[i]] = true;
  }
  ViewGeometryT<I> g;
  for (int64_t d : order) {
    g.sizes.push_back(sizes[d]);
    g.strides.push_back(strides[d]);
  }
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> ExpandGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides,
                                                IntsOf<I> target) {
  const int64_t ndim = static_cast<int64_t>(target.size());
  const int64_t tensor_dim = static_cast<int64_t>(sizes.size());
  if (ndim < tensor_dim) {
    return ArgError("size",
                    absl::StrCat("the number of sizes provided (", ndim,
                                 ") must be greater or equal to the number of "
                                 "dimensions in the tensor (",
                                 tensor_dim, ")"));
  }
  ViewGeometryT<I> g;
  g.sizes.resize(ndim);
  g.strides.resize(ndim);
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t dim = tensor_dim - (ndim - i);
    I size = dim >= 0 ? sizes[dim] : I(1);
    // A new leading dim of size 1 steps over everything inside it, as in
    // PyTorch; its stride is never used to address memory.
    I stride = dim >= 0       ? strides[dim]
               : i + 1 < ndim ? g.sizes[i + 1] * g.strides[i + 1]
                              : I(1);
    I target_size = target[i];
    if (target_size < -1) {
      return ArgError("size", absl::StrCat("invalid size ", Str(target_size),
                                           " at dimension ", i));
    }
    if (target_size == -1) {
      if (dim < 0) {
        return ArgError(
            "size",
            absl::StrCat("the expanded size -1 is not allowed in a leading, "
                         "non-existing dimension ",
                         i));
      }
      target_size = size;
    }
    if (size != target_size) {
      if (size != 1) {
        return ArgError(
            "size",
            absl::StrCat("the expanded size of the tensor (", Str(target_size),
                         ") must match the existing size (", Str(size),
                         ") at non-singleton dimension ", i,
                         ". Target sizes: ", ShapeToString(target),
                         ". Tensor sizes: ", ShapeToString(sizes)));
      }
      size = target_size;
      stride = 0;
    }
    g.sizes[i] = size;
    g.strides[i] = tensor_dim == 0 ? I(0) : stride;
  }
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> UnsqueezeGeometry(IntsOf<I> sizes,
                                                   IntsOf<I> strides,
                                                   int64_t dim) {
  const int rank = static_cast<int>(sizes.size());
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank + 1));
  ViewGeometryT<I> g{
      {sizes.begin(), sizes.end()}, {strides.begin(), strides.end()}, 0};
  const I stride = d >= rank ? I(1) : sizes[d] * strides[d];
  g.sizes.insert(g.sizes.begin() + d, I(1));
  g.strides.insert(g.strides.begin() + d, stride);
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> SqueezeGeometry(
    IntsOf<I> sizes, IntsOf<I> strides,
    const std::optional<std::vector<int64_t>>& dims) {
  const int rank = static_cast<int>(sizes.size());
  std::vector<bool> mask(rank, !dims.has_value());
  if (dims.has_value()) {
    for (int64_t d : *dims) {
      ASSIGN_OR_RETURN(int dim, WrapDim("dim", d, rank));
      if (rank == 0) continue;  // a 0-dim tensor accepts dim 0 and -1
      if (mask[dim]) {
        return ArgError("dim", absl::StrCat("dim ", dim,
                                            " appears multiple times in the "
                                            "list of dims"));
      }
      mask[dim] = true;
    }
  }
  ViewGeometryT<I> g;
  for (int d = 0; d < rank; ++d) {
    if (mask[d] && sizes[d] == 1) continue;
    g.sizes.push_back(sizes[d]);
    g.strides.push_back(strides[d]);
  }
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> SliceGeometry(IntsOf<I> sizes,
                                               IntsOf<I> strides, int64_t dim,
                                               std::optional<I> start,
                                               std::optional<I> end,
                                               int64_t step) {
  const int rank = static_cast<int>(sizes.size());
  if (rank == 0) {
    return ArgError("self", "slice() cannot be applied to a 0-dim tensor");
  }
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank));
  if (step <= 0) {
    return ArgError("step",
                    absl::StrCat("slice step must be positive, got ", step));
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const I size = sizes[d];
  I start_val = start.value_or(I(0));
  I end_val = end.value_or(I(kMax));
  // INT64_MAX is how a traced `x[sys.maxsize:]` spells "no start".
  if (HintOf(start_val) == kMax) start_val = 0;
  // Clamp like Python slices; with symbolic sizes each decision is a guard.
  if (start_val < 0) start_val = start_val + size;
  if (end_val < 0) end_val = end_val + size;
  if (start_val < 0) start_val = 0;
  if (start_val > size) start_val = size;
  if (HintOf(end_val) == kMax || end_val > size) end_val = size;
  if (end_val < start_val) end_val = start_val;
  const I len = end_val - start_val;
  ViewGeometryT<I> g{{sizes.begin(), sizes.end()},
                     {strides.begin(), strides.end()},
                     start_val * strides[d]};
  g.sizes[d] = step == 1 ? len : len == 0 ? I(0) : 1 + Div(len - 1, I(step));
  g.strides[d] = strides[d] * step;
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> DiagonalGeometry(IntsOf<I> sizes,
                                                  IntsOf<I> strides,
                                                  int64_t offset, int64_t dim1,
                                                  int64_t dim2) {
  const int rank = static_cast<int>(sizes.size());
  ASSIGN_OR_RETURN(int d1, WrapDim("dim1", dim1, rank));
  ASSIGN_OR_RETURN(int d2, WrapDim("dim2", dim2, rank));
  if (d1 == d2) {
    return ArgError("dim2", absl::StrCat("diagonal dimensions cannot be "
                                         "identical ",
                                         dim1, ", ", dim2));
  }
  // ATen's diag_size = max(min(size1, size2 - offset), 0) for offset >= 0,
  // max(min(size1 + offset, size2), 0) below; each comparison of symbolic
  // sizes is a guard.
  I size = 0;
  I start = 0;
  if (offset >= 0) {
    size = sizes[d2] - I(offset);
    if (sizes[d1] < size) size = sizes[d1];
    start = I(offset) * strides[d2];
  } else {
    size = sizes[d1] + I(offset);
    if (sizes[d2] < size) size = sizes[d2];
    start = I(-offset) * strides[d1];
  }
  if (size <= 0) {
    size = 0;
    start = 0;
  }
  ViewGeometryT<I> g;
  for (int d = 0; d < rank; ++d) {
    if (d == d1 || d == d2) continue;
    g.sizes.push_back(sizes[d]);
    g.strides.push_back(strides[d]);
  }
  g.sizes.push_back(size);
  g.strides.push_back(strides[d1] + strides[d2]);
  g.offset = start;
  return g;
}

template <typename I>
absl::StatusOr<ViewGeometryT<I>> SelectGeometry(IntsOf<I> sizes,
                                                IntsOf<I> strides, int64_t dim,
                                                I index) {
  const int rank = static_cast<int>(sizes.size());
  if (rank == 0) {
    return ArgError("self", "select() cannot be applied to a 0-dim tensor");
  }
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank));
  const I size = sizes[d];
  if (index < -size || index >= size) {
    return ArgError("index", absl::StrCat("index ", Str(index),
                                          " is out of range for dimension ", d,
                                          " with size ", Str(size)));
  }
  if (index < 0) index = index + size;
  ViewGeometryT<I> g{{sizes.begin(), sizes.end()},
                     {strides.begin(), strides.end()},
                     index * strides[d]};
  g.sizes.erase(g.sizes.begin() + d);
  g.strides.erase(g.strides.begin() + d);
  return g;
}

template <typename I>
absl::StatusOr<std::vector<ViewGeometryT<I>>> SplitWithSizesGeometry(
    IntsOf<I> sizes, IntsOf<I> strides, IntsOf<I> split_sizes, int64_t dim) {
  const int rank = static_cast<int>(sizes.size());
  if (rank == 0) {
    return ArgError("self", "split expects at least a 1-dimensional tensor");
  }
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank));
  I total = 0;
  int64_t hint_total = 0;
  bool overflow = false;
  for (const I& length : split_sizes) {
    if (length < 0) {
      return ArgError("split_sizes",
                      absl::StrCat("expected non-negative sizes, got ",
                                   ShapeToString(split_sizes)));
    }
    overflow = overflow ||
               __builtin_add_overflow(hint_total, HintOf(length), &hint_total);
    total = total + length;
  }
  if (overflow || total != sizes[d]) {
    return ArgError(
        "split_sizes",
        absl::StrCat("expected sizes that sum exactly to ", Str(sizes[d]),
                     " (the input's size at dimension ", d, "), got ",
                     ShapeToString(split_sizes)));
  }
  std::vector<ViewGeometryT<I>> splits;
  I start = 0;
  for (const I& length : split_sizes) {
    ASSIGN_OR_RETURN(
        ViewGeometryT<I> g,
        SliceGeometry<I>(sizes, strides, d, start, start + length, 1));
    splits.push_back(std::move(g));
    start = start + length;
  }
  return splits;
}

#define GJ_INSTANTIATE_VIEW_GEOMETRY(I)                                    \
  template absl::InlinedVector<I, 6> ContiguousStridesOf<I>(IntsOf<I>);    \
  template absl::StatusOr<absl::InlinedVector<I, 6>> InferViewSize<I>(     \
      IntsOf<I>, I);                                                       \
  template std::optional<absl::InlinedVector<I, 6>> ComputeViewStrides<I>( \
      IntsOf<I>, IntsOf<I>, IntsOf<I>);                                    \
  template absl::StatusOr<ViewGeometryT<I>> ViewAsGeometry<I>(             \
      IntsOf<I>, IntsOf<I>, IntsOf<I>);                                    \
  template absl::StatusOr<ViewGeometryT<I>> PermuteGeometry<I>(            \
      IntsOf<I>, IntsOf<I>, IntSpan);                                      \
  template absl::StatusOr<ViewGeometryT<I>> ExpandGeometry<I>(             \
      IntsOf<I>, IntsOf<I>, IntsOf<I>);                                    \
  template absl::StatusOr<ViewGeometryT<I>> UnsqueezeGeometry<I>(          \
      IntsOf<I>, IntsOf<I>, int64_t);                                      \
  template absl::StatusOr<ViewGeometryT<I>> SqueezeGeometry<I>(            \
      IntsOf<I>, IntsOf<I>, const std::optional<std::vector<int64_t>>&);   \
  template absl::StatusOr<ViewGeometryT<I>> SliceGeometry<I>(              \
      IntsOf<I>, IntsOf<I>, int64_t, std::optional<I>, std::optional<I>,   \
      int64_t);                                                            \
  template absl::StatusOr<ViewGeometryT<I>> DiagonalGeometry<I>(           \
      IntsOf<I>, IntsOf<I>, int64_t, int64_t, int64_t);                    \
  template absl::StatusOr<ViewGeometryT<I>> SelectGeometry<I>(             \
      IntsOf<I>, IntsOf<I>, int64_t, I);                                   \
  template absl::StatusOr<std::vector<ViewGeometryT<I>>>                   \
      SplitWithSizesGeometry<I>(IntsOf<I>, IntsOf<I>, IntsOf<I>, int64_t);

GJ_INSTANTIATE_VIEW_GEOMETRY(int64_t)
GJ_INSTANTIATE_VIEW_GEOMETRY(SymInt)
#undef GJ_INSTANTIATE_VIEW_GEOMETRY

}  // namespace guardjit
