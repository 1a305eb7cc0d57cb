#ifndef GUARDJIT_CORE_SCALAR_H_
#define GUARDJIT_CORE_SCALAR_H_

#include <cstdint>
#include <string>
#include <variant>

#include "core/dtype.h"

namespace guardjit {

// An ATen `Scalar`: a Python bool, int or float literal. Its dtype is the one
// PyTorch gives a wrapped number (bool, int64, float64); type promotion treats
// it with the lowest priority.
class Scalar {
 public:
  Scalar() : value_(int64_t{0}) {}
  explicit Scalar(bool v) : value_(v) {}
  explicit Scalar(int64_t v) : value_(v) {}
  explicit Scalar(double v) : value_(v) {}

  bool is_bool() const { return std::holds_alternative<bool>(value_); }
  bool is_int() const { return std::holds_alternative<int64_t>(value_); }
  bool is_float() const { return std::holds_alternative<double>(value_); }

  DType dtype() const {
    return is_bool()  ? DType::kBool
           : is_int() ? DType::kInt64
                      : DType::kFloat64;
  }

  double to_double() const {
    if (is_float()) return std::get<double>(value_);
    if (is_int()) return static_cast<double>(std::get<int64_t>(value_));
    return std::get<bool>(value_) ? 1.0 : 0.0;
  }
  // A float truncates toward zero, as ATen's Scalar does; past int64's range
  // it saturates to INT64_MIN or INT64_MAX, and NaN gives 0 (a bare cast of
  // those is undefined behaviour).
  int64_t to_int() const;
  bool to_bool() const {
    if (is_bool()) return std::get<bool>(value_);
    if (is_int()) return std::get<int64_t>(value_) != 0;
    return std::get<double>(value_) != 0.0;
  }

  std::string ToString() const;

  friend bool operator==(const Scalar& a, const Scalar& b) {
    return a.value_ == b.value_;
  }

 private:
  std::variant<bool, int64_t, double> value_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SCALAR_H_
