#include "runtime/strided_loop.h"

#include <vector>

namespace guardjit {

void ForEachRun(
    IntSpan shape, absl::Span<char* const> bases,
    absl::Span<const IntSpan> byte_strides,
    absl::FunctionRef<void(char**, const int64_t*, int64_t)> inner) {
  const size_t n = bases.size();
  for (int64_t s : shape) {
    if (s == 0) return;
  }
  // Coalesce: drop size-1 dims and merge dim d into d+1 when every operand's
  // stride satisfies stride[d] == stride[d+1] * size[d+1].
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> strides(n);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!sizes.empty()) {
      bool mergeable = true;
      for (size_t k = 0; k < n && mergeable; ++k) {
        mergeable = strides[k].back() == byte_strides[k][d] * shape[d];
      }
      if (mergeable) {
        sizes.back() *= shape[d];
        for (size_t k = 0; k < n; ++k) strides[k].back() = byte_strides[k][d];
        continue;
      }
    }
    sizes.push_back(shape[d]);
    for (size_t k = 0; k < n; ++k) strides[k].push_back(byte_strides[k][d]);
  }
  std::vector<char*> ptrs(bases.begin(), bases.end());
  std::vector<int64_t> inner_strides(n, 0);
  if (sizes.empty()) {
    inner(ptrs.data(), inner_strides.data(), 1);
    return;
  }
  const int rank = static_cast<int>(sizes.size());
  for (size_t k = 0; k < n; ++k) inner_strides[k] = strides[k][rank - 1];
  const int64_t count = sizes[rank - 1];
  std::vector<int64_t> index(rank, 0);
  while (true) {
    inner(ptrs.data(), inner_strides.data(), count);
    int d = rank - 2;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < n; ++k) ptrs[k] += strides[k][d];
      if (++index[d] < sizes[d]) break;
      for (size_t k = 0; k < n; ++k) ptrs[k] -= strides[k][d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

Tensor ExpandTo(const Tensor& t, IntSpan shape) {
  Shape strides(shape.size(), 0);
  const int offset = static_cast<int>(shape.size()) - t.dim();
  for (int d = 0; d < t.dim(); ++d) {
    strides[offset + d] = t.size(d) == 1 ? 0 : t.stride(d);
  }
  return t.AsStrided(shape, strides);
}

Shape ByteStrides(const Tensor& t) {
  // A dim of size 0 or 1 is never stepped, and its stride is unchecked (a
  // host may pass any value there): it must not be multiplied.
  Shape s(t.dim());
  for (int d = 0; d < t.dim(); ++d)
    s[d] = t.size(d) > 1 && t.numel() > 0 ? t.stride(d) * t.item_size() : 0;
  return s;
}

}  // namespace guardjit
