#include "core/value_inputs.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"

namespace guardjit {
namespace {

// Element offset of row-major element `k`.
int64_t OffsetOf(const InputView& view, int64_t k) {
  int64_t offset = 0;
  for (int d = view.rank - 1; d >= 0; --d) {
    const int64_t size = view.sizes[d];
    offset += (k % size) * view.strides[d];
    k /= size;
  }
  return offset;
}

bool IsContiguous(const InputView& view) {
  int64_t expected = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    if (view.sizes[d] != 1 && view.strides[d] != expected) return false;
    expected *= view.sizes[d];
  }
  return true;
}

template <typename Bits, typename Float>
int64_t FloatBits(Float f) {
  Bits bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return static_cast<int64_t>(bits);
}

template <typename Float, typename Bits>
Float BitsFloat(int64_t value) {
  const Bits bits = static_cast<Bits>(value);
  Float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

}  // namespace

bool IsValueInputDType(DType dtype) {
  return IsIntegral(dtype, /*include_bool=*/true) || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

double ValueAsDouble(DType dtype, int64_t value) {
  switch (dtype) {
    case DType::kFloat32:
      return BitsFloat<float, uint32_t>(value);
    case DType::kFloat64:
      return BitsFloat<double, uint64_t>(value);
    default:
      return static_cast<double>(value);
  }
}

int64_t NumValues(const InputView& view) {
  int64_t n = 1;
  for (int d = 0; d < view.rank; ++d) n *= view.sizes[d];
  return n;
}

absl::Status CheckValueInput(const InputView& view, const std::string& label) {
  const std::string why = absl::StrCat(
      label, " is value-specialized (its values are compiled in and guarded)");
  if (!view.device.is_cpu()) {
    return absl::InvalidArgumentError(
        absl::StrCat(why, ": it must be a host tensor, got one on ",
                     view.device.ToString()));
  }
  if (!IsValueInputDType(view.dtype)) {
    return absl::InvalidArgumentError(absl::StrCat(
        why, ": it must be an integer, bool, float32 or float64 tensor, got ",
        DTypeName(view.dtype)));
  }
  int64_t n = 1;
  for (int d = 0; d < view.rank; ++d) {
    n *= view.sizes[d];
    if (n > kMaxSpecializedValues) {
      return absl::InvalidArgumentError(
          absl::StrCat(why, ": it may have at most ", kMaxSpecializedValues,
                       " elements, got sizes [",
                       absl::StrJoin(view.size_span(), ", "), "]"));
    }
  }
  if (n > 0 && view.data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(why, ": its data is needed, and the call has none"));
  }
  return absl::OkStatus();
}

int64_t ValueAt(const InputView& view, int64_t k) {
  const int64_t offset = OffsetOf(view, k);
  switch (view.dtype) {
    case DType::kBool:
      // Read as a byte: a host's bool tensor may hold any byte value.
      return static_cast<const uint8_t*>(view.data)[offset] != 0 ? 1 : 0;
    case DType::kUInt8:
      return static_cast<const uint8_t*>(view.data)[offset];
    case DType::kInt8:
      return static_cast<const int8_t*>(view.data)[offset];
    case DType::kInt16:
      return static_cast<const int16_t*>(view.data)[offset];
    case DType::kInt32:
      return static_cast<const int32_t*>(view.data)[offset];
    case DType::kInt64:
      return static_cast<const int64_t*>(view.data)[offset];
    case DType::kFloat32:
      return FloatBits<uint32_t>(static_cast<const float*>(view.data)[offset]);
    case DType::kFloat64:
      return FloatBits<uint64_t>(static_cast<const double*>(view.data)[offset]);
    default:
      return 0;  // CheckValueInput refused it
  }
}

bool ValuesMatch(const InputView& view, absl::Span<const int64_t> values) {
  if (view.data == nullptr) return values.empty();  // a precompile
  if (view.dtype == DType::kInt64 && IsContiguous(view)) {
    // The common case (ONNX's int64 shapes and axes): one memcmp.
    return values.empty() || std::memcmp(view.data, values.data(),
                                         values.size() * sizeof(int64_t)) == 0;
  }
  for (size_t k = 0; k < values.size(); ++k) {
    if (ValueAt(view, static_cast<int64_t>(k)) != values[k]) return false;
  }
  return true;
}

std::vector<int64_t> ReadValues(const InputView& view) {
  std::vector<int64_t> out(static_cast<size_t>(NumValues(view)));
  for (size_t k = 0; k < out.size(); ++k) {
    out[k] = ValueAt(view, static_cast<int64_t>(k));
  }
  return out;
}

InputValues ReadInputValues(int input, const InputView& view) {
  InputValues out;
  out.input = input;
  out.dtype = view.dtype;
  out.sizes.assign(view.sizes, view.sizes + view.rank);
  out.values = ReadValues(view);
  return out;
}

absl::StatusOr<Tensor> ValuesTensor(const InputValues& v) {
  auto t = Tensor::Empty(v.dtype, v.sizes);
  if (!t.ok()) return t.status();
  for (size_t k = 0; k < v.values.size(); ++k) {
    const int64_t x = v.values[k];
    switch (v.dtype) {
      case DType::kBool:
        t->data_as<bool>()[k] = x != 0;
        break;
      case DType::kUInt8:
        t->data_as<uint8_t>()[k] = static_cast<uint8_t>(x);
        break;
      case DType::kInt8:
        t->data_as<int8_t>()[k] = static_cast<int8_t>(x);
        break;
      case DType::kInt16:
        t->data_as<int16_t>()[k] = static_cast<int16_t>(x);
        break;
      case DType::kInt32:
        t->data_as<int32_t>()[k] = static_cast<int32_t>(x);
        break;
      case DType::kInt64:
        t->data_as<int64_t>()[k] = x;
        break;
      case DType::kFloat32:
        t->data_as<float>()[k] = BitsFloat<float, uint32_t>(x);
        break;
      case DType::kFloat64:
        t->data_as<double>()[k] = BitsFloat<double, uint64_t>(x);
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "a value-specialized input of dtype ", DTypeName(v.dtype)));
    }
  }
  return *std::move(t);
}

std::string FormatValues(absl::Span<const int64_t> values) {
  return absl::StrCat("[", absl::StrJoin(values, ", "), "]");
}

std::string FormatValues(DType dtype, absl::Span<const int64_t> values) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) {
    return FormatValues(values);
  }
  return absl::StrCat(
      "[",
      absl::StrJoin(values, ", ",
                    [dtype](std::string* out, int64_t v) {
                      // Enough digits to tell any two apart (the format
                      // is a literal each way: absl checks it at compile
                      // time).
                      const double x = ValueAsDouble(dtype, v);
                      absl::StrAppend(out, dtype == DType::kFloat32
                                               ? absl::StrFormat("%.9g", x)
                                               : absl::StrFormat("%.17g", x));
                    }),
      "]");
}

}  // namespace guardjit
