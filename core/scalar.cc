#include "core/scalar.h"

#include "absl/strings/str_cat.h"

namespace guardjit {

std::string Scalar::ToString() const {
  if (is_bool()) return std::get<bool>(value_) ? "True" : "False";
  if (is_int()) return absl::StrCat(std::get<int64_t>(value_));
  return absl::StrCat(std::get<double>(value_));
}

}  // namespace guardjit
