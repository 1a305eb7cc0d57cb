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

}  // namespace

absl::StatusOr<Shape> InferViewSize(IntSpan size, int64_t numel) {
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
                      absl::StrCat("invalid shape dimension ", size[d]));
    }
    has_zero = has_zero || size[d] == 0;
  }
  // A product that overflows int64 cannot equal any real numel; a zero makes
  // the product zero whatever the other sizes are.
  int64_t known = 1;
  bool overflow = false;
  for (int64_t s : size) {
    if (s != -1 && !has_zero) {
      overflow = overflow || __builtin_mul_overflow(known, s, &known);
    }
  }
  if (has_zero) known = 0;
  Shape out(size.begin(), size.end());
  const bool fits =
      !overflow && (numel == known ||
                    (infer_dim.has_value() && known > 0 && numel % known == 0));
  if (!fits) {
    return ArgError("size",
                    absl::StrCat("shape '", ShapeToString(size),
                                 "' is invalid for input of size ", numel));
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
    out[*infer_dim] = numel / known;
  }
  return out;
}

std::optional<Shape> ComputeViewStrides(IntSpan old_sizes, IntSpan old_strides,
                                        IntSpan new_sizes) {
  if (old_sizes.empty()) return Shape(new_sizes.size(), 1);
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  // With no elements strides are arbitrary; NumPy (and PyTorch) keep the old
  // ones when the shape is unchanged and use contiguous ones otherwise.
  if (numel == 0) {
    if (std::equal(old_sizes.begin(), old_sizes.end(), new_sizes.begin(),
                   new_sizes.end())) {
      return Shape(old_strides.begin(), old_strides.end());
    }
    Shape strides(new_sizes.size());
    int64_t s = 1;
    for (int d = static_cast<int>(new_sizes.size()) - 1; d >= 0; --d) {
      strides[d] = s;
      s *= std::max<int64_t>(new_sizes[d], 1);
    }
    return strides;
  }
  // Walk the old dims from the innermost, grouping them into chunks that are
  // contiguous with one another; each chunk must be covered exactly by a run
  // of new dims, which then step through it with the chunk's base stride.
  Shape new_strides(new_sizes.size());
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1;
       tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_sizes[tensor_d];
    const bool chunk_ends =
        tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 &&
         old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 &&
           (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
      new_strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= new_sizes[view_d];
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

absl::StatusOr<ViewGeometry> ViewAsGeometry(IntSpan sizes, IntSpan strides,
                                            IntSpan size) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  ASSIGN_OR_RETURN(Shape new_sizes, InferViewSize(size, numel));
  std::optional<Shape> new_strides =
      ComputeViewStrides(sizes, strides, new_sizes);
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
  return ViewGeometry{std::move(new_sizes), *std::move(new_strides), 0};
}

absl::StatusOr<ViewGeometry> PermuteGeometry(IntSpan sizes, IntSpan strides,
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
  ViewGeometry g;
  for (int64_t d : order) {
    g.sizes.push_back(sizes[d]);
    g.strides.push_back(strides[d]);
  }
  return g;
}

absl::StatusOr<ViewGeometry> ExpandGeometry(IntSpan sizes, IntSpan strides,
                                            IntSpan target) {
  const int64_t ndim = static_cast<int64_t>(target.size());
  const int64_t tensor_dim = static_cast<int64_t>(sizes.size());
  if (ndim < tensor_dim) {
    return ArgError("size",
                    absl::StrCat("the number of sizes provided (", ndim,
                                 ") must be greater or equal to the number of "
                                 "dimensions in the tensor (",
                                 tensor_dim, ")"));
  }
  ViewGeometry g;
  g.sizes.resize(ndim);
  g.strides.resize(ndim);
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t dim = tensor_dim - (ndim - i);
    int64_t size = dim >= 0 ? sizes[dim] : 1;
    // A new leading dim of size 1 steps over everything inside it, as in
    // PyTorch; its stride is never used to address memory.
    int64_t stride = dim >= 0       ? strides[dim]
                     : i + 1 < ndim ? g.sizes[i + 1] * g.strides[i + 1]
                                    : 1;
    int64_t target_size = target[i];
    if (target_size < -1) {
      return ArgError("size", absl::StrCat("invalid size ", target_size,
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
            absl::StrCat("the expanded size of the tensor (", target_size,
                         ") must match the existing size (", size,
                         ") at non-singleton dimension ", i,
                         ". Target sizes: ", ShapeToString(target),
                         ". Tensor sizes: ", ShapeToString(sizes)));
      }
      size = target_size;
      stride = 0;
    }
    g.sizes[i] = size;
    g.strides[i] = tensor_dim == 0 ? 0 : stride;
  }
  return g;
}

absl::StatusOr<ViewGeometry> UnsqueezeGeometry(IntSpan sizes, IntSpan strides,
                                               int64_t dim) {
  const int rank = static_cast<int>(sizes.size());
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank + 1));
  ViewGeometry g{Shape(sizes.begin(), sizes.end()),
                 Shape(strides.begin(), strides.end()), 0};
  const int64_t stride = d >= rank ? 1 : sizes[d] * strides[d];
  g.sizes.insert(g.sizes.begin() + d, 1);
  g.strides.insert(g.strides.begin() + d, stride);
  return g;
}

absl::StatusOr<ViewGeometry> SqueezeGeometry(
    IntSpan sizes, IntSpan strides,
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
  ViewGeometry g;
  for (int d = 0; d < rank; ++d) {
    if (mask[d] && sizes[d] == 1) continue;
    g.sizes.push_back(sizes[d]);
    g.strides.push_back(strides[d]);
  }
  return g;
}

absl::StatusOr<ViewGeometry> SliceGeometry(IntSpan sizes, IntSpan strides,
                                           int64_t dim,
                                           std::optional<int64_t> start,
                                           std::optional<int64_t> end,
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
  const int64_t size = sizes[d];
  int64_t start_val = start.value_or(0);
  int64_t end_val = end.value_or(std::numeric_limits<int64_t>::max());
  // INT64_MAX is how a traced `x[sys.maxsize:]` spells "no start".
  if (start_val == std::numeric_limits<int64_t>::max()) start_val = 0;
  if (start_val < 0) start_val += size;
  if (end_val < 0) end_val += size;
  start_val = std::clamp<int64_t>(start_val, 0, size);
  end_val = std::clamp<int64_t>(end_val, start_val, size);
  const int64_t len = end_val - start_val;
  ViewGeometry g{Shape(sizes.begin(), sizes.end()),
                 Shape(strides.begin(), strides.end()), start_val * strides[d]};
  g.sizes[d] = len == 0 ? 0 : 1 + (len - 1) / step;
  g.strides[d] = strides[d] * step;
  return g;
}

absl::StatusOr<ViewGeometry> SelectGeometry(IntSpan sizes, IntSpan strides,
                                            int64_t dim, int64_t index) {
  const int rank = static_cast<int>(sizes.size());
  if (rank == 0) {
    return ArgError("self", "select() cannot be applied to a 0-dim tensor");
  }
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank));
  const int64_t size = sizes[d];
  if (index < -size || index >= size) {
    return ArgError("index", absl::StrCat("index ", index,
                                          " is out of range for dimension ", d,
                                          " with size ", size));
  }
  if (index < 0) index += size;
  ViewGeometry g{Shape(sizes.begin(), sizes.end()),
                 Shape(strides.begin(), strides.end()), index * strides[d]};
  g.sizes.erase(g.sizes.begin() + d);
  g.strides.erase(g.strides.begin() + d);
  return g;
}

absl::StatusOr<std::vector<ViewGeometry>> SplitWithSizesGeometry(
    IntSpan sizes, IntSpan strides, IntSpan split_sizes, int64_t dim) {
  const int rank = static_cast<int>(sizes.size());
  if (rank == 0) {
    return ArgError("self", "split expects at least a 1-dimensional tensor");
  }
  ASSIGN_OR_RETURN(int d, WrapDim("dim", dim, rank));
  int64_t total = 0;
  for (int64_t length : split_sizes) {
    if (length < 0) {
      return ArgError("split_sizes",
                      absl::StrCat("expected non-negative sizes, got ",
                                   ShapeToString(split_sizes)));
    }
    if (__builtin_add_overflow(total, length, &total)) break;
  }
  if (total != sizes[d]) {
    return ArgError("split_sizes",
                    absl::StrCat("expected sizes that sum exactly to ",
                                 sizes[d], " (the input's size at dimension ",
                                 d, "), got ", ShapeToString(split_sizes)));
  }
  std::vector<ViewGeometry> splits;
  int64_t start = 0;
  for (int64_t length : split_sizes) {
    ASSIGN_OR_RETURN(ViewGeometry g, SliceGeometry(sizes, strides, d, start,
                                                   start + length, 1));
    splits.push_back(std::move(g));
    start += length;
  }
  return splits;
}

}  // namespace guardjit
