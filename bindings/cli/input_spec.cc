#include "bindings/cli/input_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace guardjit_cli {
namespace {

// Splits on commas; "" gives no items.
std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

bool ParseDouble(const std::string& text, double* value) {
  if (text == "true" || text == "True") return *value = 1, true;
  if (text == "false" || text == "False") return *value = 0, true;
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return errno == 0 && end == text.c_str() + text.size();
}

bool ParseInt64(const std::string& text, int64_t* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  *value = v;
  return errno == 0 && end == text.c_str() + text.size();
}

// Integers must be exact and in range: a wrapped or truncated input would
// silently test something else.
bool Representable(double v, const DTypeInfo& dtype) {
  if (dtype.is_float || dtype.is_bool) return true;
  if (v != std::trunc(v)) return false;
  const int bits = dtype.dl.bits;
  if (dtype.dl.code == kDLUInt) return v >= 0 && v <= std::ldexp(1.0, bits) - 1;
  // int64 stops at 2^63 - 1, which a double rounds to 2^63: compare with <.
  return v >= -std::ldexp(1.0, bits - 1) && v < std::ldexp(1.0, bits - 1);
}

}  // namespace

bool ParseInputSpec(const std::string& text, InputSpec* spec,
                    std::string* error) {
  const size_t eq = text.find('=');
  const size_t open = text.find('[', eq == std::string::npos ? 0 : eq);
  const size_t close = text.find(']', open == std::string::npos ? 0 : open);
  if (eq == std::string::npos || eq == 0 || open == std::string::npos ||
      close == std::string::npos) {
    *error =
        "expected NAME=DTYPE[d0,d1,...][:random|zeros|ones|v0,v1,...], got '" +
        text + "'";
    return false;
  }
  spec->name = text.substr(0, eq);
  const std::string dtype = text.substr(eq + 1, open - eq - 1);
  spec->dtype = FindDType(dtype);
  if (spec->dtype == nullptr) {
    *error = "unknown dtype '" + dtype + "' for input '" + spec->name +
             "'; expected one of " + DTypeNames();
    return false;
  }
  spec->shape.clear();
  int64_t numel = 1;
  for (const std::string& dim :
       SplitCommas(text.substr(open + 1, close - open - 1))) {
    int64_t size = 0;
    if (!ParseInt64(dim, &size) || size < 0) {
      *error =
          "bad size '" + dim + "' in the shape of input '" + spec->name + "'";
      return false;
    }
    // 8 bytes per element at most: keep the byte count in range too.
    if (size > 0 && numel > std::numeric_limits<int64_t>::max() / 8 / size) {
      *error = "shape of input '" + spec->name + "' has too many elements";
      return false;
    }
    numel *= size;
    spec->shape.push_back(size);
  }
  std::string fill =
      close + 1 == text.size() ? "random" : text.substr(close + 1);
  if (close + 1 < text.size()) {
    if (fill[0] != ':') {
      *error = "expected ':' after the shape of input '" + spec->name + "'";
      return false;
    }
    fill = fill.substr(1);
  }
  spec->values.clear();
  if (fill == "random") {
    spec->fill = InputSpec::Fill::kRandom;
  } else if (fill == "zeros") {
    spec->fill = InputSpec::Fill::kZeros;
  } else if (fill == "ones") {
    spec->fill = InputSpec::Fill::kOnes;
  } else {
    spec->fill = InputSpec::Fill::kValues;
    for (const std::string& item : SplitCommas(fill)) {
      double v = 0;
      if (!ParseDouble(item, &v) || !Representable(v, *spec->dtype)) {
        *error = "bad value '" + item + "' for " + spec->dtype->name +
                 " input '" + spec->name + "'";
        return false;
      }
      spec->values.push_back(v);
    }
    if (spec->values.size() != 1 &&
        static_cast<int64_t>(spec->values.size()) != numel) {
      *error = "input '" + spec->name + "' has " + std::to_string(numel) +
               " elements but " + std::to_string(spec->values.size()) +
               " values were given (give one value to fill them all)";
      return false;
    }
  }
  return true;
}

HostTensor::HostTensor(const InputSpec& spec, std::mt19937_64& rng)
    : shape_(spec.shape) {
  int64_t numel = 1;
  for (int64_t size : shape_) numel *= size;
  const DLDataType type = spec.dtype->dl;
  storage_.resize((numel * ItemBytes(type) + 7) / 8 + 1);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  // Small integers keep sums and products readable and exact.
  const bool is_unsigned = type.code == kDLUInt;
  std::uniform_int_distribution<int> integer(is_unsigned ? 0 : -10, 10);
  std::uniform_int_distribution<int> coin(0, 1);
  for (int64_t i = 0; i < numel; ++i) {
    double v = 0;
    switch (spec.fill) {
      case InputSpec::Fill::kRandom:
        v = spec.dtype->is_float  ? real(rng)
            : spec.dtype->is_bool ? coin(rng)
                                  : integer(rng);
        break;
      case InputSpec::Fill::kZeros:
        v = 0;
        break;
      case InputSpec::Fill::kOnes:
        v = 1;
        break;
      case InputSpec::Fill::kValues:
        v = spec.values.size() == 1 ? spec.values[0] : spec.values[i];
        break;
    }
    StoreElement(storage_.data(), i, type, v);
  }
  dl_.data = storage_.data();
  dl_.device = {kDLCPU, 0};
  dl_.ndim = static_cast<int>(shape_.size());
  dl_.dtype = type;
  dl_.shape = shape_.data();
  dl_.strides = nullptr;
  dl_.byte_offset = 0;
}

}  // namespace guardjit_cli
