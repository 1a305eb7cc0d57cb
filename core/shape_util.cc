#include "core/shape_util.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

absl::StatusOr<Shape> BroadcastShapes(IntSpan a, IntSpan b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes ", ShapeToString(a), " and ", ShapeToString(b),
          " are not broadcastable: size ", da, " vs ", db, " at dim ", i));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<SymShape> BroadcastShapes(absl::Span<const SymInt> a,
                                         absl::Span<const SymInt> b) {
  size_t rank = std::max(a.size(), b.size());
  SymShape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    SymInt da = i < rank - a.size() ? SymInt(1) : a[i - (rank - a.size())];
    SymInt db = i < rank - b.size() ? SymInt(1) : b[i - (rank - b.size())];
    if (da == 1) {
      out[i] = db;
    } else if (db == 1 || da == db) {
      out[i] = da;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                       " are not broadcastable: size ", da.hint(), " vs ",
                       db.hint(), " at dim ", i));
    }
  }
  return out;
}

absl::StatusOr<Shape> BroadcastShapes(absl::Span<const Shape> shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    auto b = BroadcastShapes(out, s);
    if (!b.ok()) return b.status();
    out = *std::move(b);
  }
  return out;
}

absl::StatusOr<int> NormalizeDim(int64_t dim, int rank) {
  int64_t r = std::max(rank, 1);
  if (dim < -r || dim >= r) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dimension ", dim, " out of range [", -r, ", ", r - 1, "]"));
  }
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

absl::StatusOr<std::vector<bool>> ReductionMask(
    const std::optional<std::vector<int64_t>>& dims, int rank) {
  std::vector<bool> mask(rank, false);
  if (!dims.has_value() || dims->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dims) {
    auto n = NormalizeDim(d, rank);
    if (!n.ok()) return n.status();
    if (rank == 0) continue;
    if (mask[*n]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "dim ", *n, " appears multiple times in the list of dims"));
    }
    mask[*n] = true;
  }
  return mask;
}

SymShape ReducedShape(absl::Span<const SymInt> sizes,
                      const std::vector<bool>& mask, bool keepdim) {
  SymShape out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!mask[i]) {
      out.push_back(sizes[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

std::string ShapeToString(absl::Span<const SymInt> sizes) {
  return SymShapeToString(sizes);
}

std::string ShapeToString(IntSpan sizes) {
  return absl::StrCat("[", absl::StrJoin(sizes, ", "), "]");
}

namespace {

std::optional<DType> PromoteOpt(std::optional<DType> a, DType b) {
  return a.has_value() ? PromoteTypes(*a, b) : b;
}

int Category(DType d) { return d == DType::kBool ? 0 : IsFloating(d) ? 2 : 1; }

// c10's combine_categories: a higher-priority result keeps its dtype unless a
// lower-priority operand is of a higher category.
std::optional<DType> Combine(std::optional<DType> higher,
                             std::optional<DType> lower) {
  if (!higher.has_value()) return lower;
  if (!lower.has_value()) return higher;
  if (Category(*lower) > Category(*higher))
    return PromoteTypes(*higher, *lower);
  return higher;
}

}  // namespace

DType ResultType(absl::Span<const TensorMeta> operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const TensorMeta& t : operands) {
    if (t.wrapped_number) {
      DType d = IsFloating(t.dtype) ? kDefaultFloat : t.dtype;
      wrapped_result = PromoteOpt(wrapped_result, d);
    } else if (t.sizes.empty()) {
      zero_result = PromoteOpt(zero_result, t.dtype);
    } else {
      dim_result = PromoteOpt(dim_result, t.dtype);
    }
  }
  return Combine(dim_result, Combine(zero_result, wrapped_result))
      .value_or(kDefaultFloat);
}

}  // namespace guardjit
