#include "core/scalar.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"

namespace guardjit {

int64_t Scalar::to_int() const {
  if (is_int()) return std::get<int64_t>(value_);
  if (is_bool()) return std::get<bool>(value_) ? 1 : 0;
  const double d = std::get<double>(value_);
  if (std::isnan(d)) return 0;
  if (d >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (d < -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

std::string Scalar::ToString() const {
  if (is_bool()) return std::get<bool>(value_) ? "True" : "False";
  if (is_int()) return absl::StrCat(std::get<int64_t>(value_));
  return absl::StrCat(std::get<double>(value_));
}

}  // namespace guardjit
