#include "bindings/cli/output_print.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "bindings/cli/dtype.h"

namespace guardjit_cli {
namespace {

constexpr int64_t kSummaryValues = 8;

// Row-major values of a tensor of any strides.
std::vector<double> Values(const DLTensor& t) {
  int64_t numel = 1;
  for (int d = 0; d < t.ndim; ++d) numel *= t.shape[d];
  std::vector<double> values;
  values.reserve(numel);
  const char* base = static_cast<const char*>(t.data) + t.byte_offset;
  std::vector<int64_t> index(t.ndim, 0);
  for (int64_t i = 0; i < numel; ++i) {
    int64_t offset = 0;
    int64_t contiguous = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
      offset += index[d] * (t.strides != nullptr ? t.strides[d] : contiguous);
      contiguous *= t.shape[d];
    }
    values.push_back(LoadElement(base, offset, t.dtype));
    for (int d = t.ndim - 1; d >= 0 && ++index[d] == t.shape[d]; --d)
      index[d] = 0;
  }
  return values;
}

std::string Format(double v, const DLTensor& t) {
  const DTypeInfo* info = DTypeOf(t.dtype);
  char buffer[64];
  if (info != nullptr && info->is_bool) return v != 0 ? "True" : "False";
  if (info != nullptr && !info->is_float) {
    std::snprintf(buffer, sizeof(buffer), "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.6g", v);
  }
  return buffer;
}

}  // namespace

std::string Describe(const DLTensor& tensor) {
  const DTypeInfo* info = DTypeOf(tensor.dtype);
  std::string text = info != nullptr ? info->name : "unknown";
  text += "[";
  for (int d = 0; d < tensor.ndim; ++d) {
    if (d > 0) text += ", ";
    text += std::to_string(tensor.shape[d]);
  }
  return text + "]";
}

void PrintTensor(std::FILE* out, const std::string& label,
                 const DLTensor& tensor, bool all) {
  std::fprintf(out, "%s: %s\n", label.c_str(), Describe(tensor).c_str());
  const std::vector<double> values = Values(tensor);
  const int64_t n = static_cast<int64_t>(values.size());
  const int64_t shown = all ? n : std::min(n, kSummaryValues);
  std::string line = "  values: [";
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) line += ", ";
    line += Format(values[i], tensor);
  }
  if (shown < n) line += ", ... (" + std::to_string(n - shown) + " more)";
  std::fprintf(out, "%s]\n", line.c_str());
  if (all || n == 0) return;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (double v : values) {
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nans == n) {
    std::fprintf(out, "  all %lld values are nan\n", static_cast<long long>(n));
    return;
  }
  std::fprintf(out, "  min %.6g  max %.6g  mean %.6g", lo, hi,
               sum / static_cast<double>(n - nans));
  if (nans > 0) std::fprintf(out, "  (%lld nan)", static_cast<long long>(nans));
  std::fprintf(out, "\n");
}

}  // namespace guardjit_cli
