#include "core/onnx/onnx_tensor.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using onnx::TensorProto;

absl::Status WrongSize(absl::string_view what, absl::string_view field,
                       int64_t have, int64_t want) {
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": ", field, " holds ", have, " values, expected ", want));
}

// Bytes of an external data file: `location` (relative to `dir`), from
// `offset`, `length` of them (-1: to the end). Bounded by the file's size, so
// a declared length never allocates more than the file holds.
absl::StatusOr<std::string> ReadExternalData(const TensorProto& proto,
                                             const std::string& dir,
                                             absl::string_view what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      int64_t value;
      if (!absl::SimpleAtoi(entry.value(), &value) || value < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": external data ", entry.key(), " '",
                         entry.value(), "' is not a non-negative integer"));
      }
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": external data without a location"));
  }
  std::filesystem::path path(location);
  if (path.is_relative() && !dir.empty())
    path = std::filesystem::path(dir) / path;
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  std::ifstream file(path, std::ios::binary);
  if (ec || !file) {
    return absl::NotFoundError(absl::StrCat(
        what, ": cannot open external data '", path.string(), "'"));
  }
  const int64_t available =
      static_cast<uintmax_t>(offset) < size
          ? static_cast<int64_t>(std::min<uintmax_t>(
                size - offset, std::numeric_limits<int64_t>::max()))
          : 0;
  if (length < 0) length = available;
  if (available < length) {
    return absl::DataLossError(absl::StrCat(
        what, ": external data '", path.string(), "' has ", available,
        " bytes at offset ", offset, ", expected ", length));
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  file.seekg(offset);
  file.read(bytes.data(), length);
  if (file.gcount() != length) {
    return absl::DataLossError(absl::StrCat(what, ": reading external data '",
                                            path.string(), "' stopped after ",
                                            file.gcount(), " bytes"));
  }
  return bytes;
}

// Copies a typed repeated field into `out`, converting each value.
template <typename Field, typename T>
void CopyValues(const Field& field, T* out) {
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

}  // namespace

std::string OnnxTypeName(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(elem_type));
  }
  return absl::StrCat("type ", elem_type);
}

absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kFloat32;
    case TensorProto::DOUBLE:
      return DType::kFloat64;
    case TensorProto::FLOAT16:
      return DType::kFloat16;
    case TensorProto::BFLOAT16:
      return DType::kBFloat16;
    case TensorProto::INT8:
      return DType::kInt8;
    case TensorProto::UINT8:
      return DType::kUInt8;
    case TensorProto::INT16:
      return DType::kInt16;
    case TensorProto::INT32:
      return DType::kInt32;
    case TensorProto::INT64:
      return DType::kInt64;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return absl::UnimplementedError(absl::StrCat(
          "element type ", OnnxTypeName(elem_type), " has no guardjit dtype"));
  }
}

absl::StatusOr<Tensor> TensorFromOnnx(const TensorProto& proto,
                                      const std::string& external_data_dir,
                                      absl::string_view what) {
  auto dtype = DTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) {
    return absl::Status(dtype.status().code(),
                        absl::StrCat(what, ": ", dtype.status().message()));
  }
  if (proto.has_segment()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": segmented tensors are not supported"));
  }
  Shape sizes(proto.dims().begin(), proto.dims().end());
  auto numel = CheckedNumel(sizes);
  if (!numel.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", numel.status().message()));
  }
  const int64_t item = ItemSize(*dtype);
  int64_t nbytes;
  if (__builtin_mul_overflow(*numel, item, &nbytes)) {
    return absl::OutOfRangeError(
        absl::StrCat(what, ": byte size overflows int64"));
  }
  std::string external;
  const std::string* raw = nullptr;
  if (proto.data_location() == TensorProto::EXTERNAL) {
    ASSIGN_OR_RETURN(external,
                     ReadExternalData(proto, external_data_dir, what));
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  if (raw != nullptr && static_cast<int64_t>(raw->size()) != nbytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", raw->size(), " bytes of data, expected ", nbytes, " for ",
        DTypeName(*dtype), "[", absl::StrJoin(sizes, ", "), "]"));
  }
  // Typed fields: which one holds the values depends on the element type.
  int64_t typed = 0;
  absl::string_view field;
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      typed = proto.float_data_size(), field = "float_data";
      break;
    case TensorProto::DOUBLE:
      typed = proto.double_data_size(), field = "double_data";
      break;
    case TensorProto::INT64:
      typed = proto.int64_data_size(), field = "int64_data";
      break;
    default:
      typed = proto.int32_data_size(), field = "int32_data";
      break;
  }
  if (raw == nullptr && typed != *numel) {
    return WrongSize(what, field, typed, *numel);
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::Empty(*dtype, sizes));
  if (raw != nullptr) {
    if (nbytes > 0) std::memcpy(tensor.data(), raw->data(), raw->size());
    if (*dtype == DType::kBool) {
      // Any nonzero byte is true; the library's bools are 0 or 1.
      auto* b = tensor.data_as<uint8_t>();
      for (int64_t i = 0; i < *numel; ++i) b[i] = b[i] != 0;
    }
    return tensor;
  }
  switch (*dtype) {
    case DType::kFloat32:
      CopyValues(proto.float_data(), tensor.data_as<float>());
      break;
    case DType::kFloat64:
      CopyValues(proto.double_data(), tensor.data_as<double>());
      break;
    case DType::kInt64:
      CopyValues(proto.int64_data(), tensor.data_as<int64_t>());
      break;
    case DType::kInt32:
      CopyValues(proto.int32_data(), tensor.data_as<int32_t>());
      break;
    case DType::kInt16:
      CopyValues(proto.int32_data(), tensor.data_as<int16_t>());
      break;
    case DType::kInt8:
      CopyValues(proto.int32_data(), tensor.data_as<int8_t>());
      break;
    case DType::kUInt8:
      CopyValues(proto.int32_data(), tensor.data_as<uint8_t>());
      break;
    case DType::kBool: {
      auto* b = tensor.data_as<uint8_t>();
      for (int64_t i = 0; i < *numel; ++i) b[i] = proto.int32_data(i) != 0;
      break;
    }
    case DType::kFloat16:
    case DType::kBFloat16:
      // The 16 bits of each value, in the low half of an int32.
      CopyValues(proto.int32_data(), tensor.data_as<uint16_t>());
      break;
  }
  return tensor;
}

}  // namespace guardjit
