#ifndef GUARDJIT_CORE_ONNX_ONNX_TENSOR_H_
#define GUARDJIT_CORE_ONNX_ONNX_TENSOR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// ONNX's TensorProto.DataType spelling ("FLOAT", "UINT16"), or "type N".
std::string OnnxTypeName(int32_t elem_type);

// The library's dtype for an ONNX element type; UNIMPLEMENTED naming the
// type for those it has none of (strings, unsigned 16 to 64 bits, complex).
absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type);

// A TensorProto's value as a contiguous host tensor: raw_data, the typed
// repeated fields, or external data (location/offset/length, relative paths
// against `external_data_dir`). Errors name `what`: INVALID_ARGUMENT for a
// payload of the wrong size, NOT_FOUND / DATA_LOSS for external data that is
// missing or short, UNIMPLEMENTED for element types the library lacks.
absl::StatusOr<Tensor> TensorFromOnnx(const onnx::TensorProto& proto,
                                      const std::string& external_data_dir,
                                      absl::string_view what);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_TENSOR_H_
