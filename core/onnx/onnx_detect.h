#ifndef GUARDJIT_CORE_ONNX_ONNX_DETECT_H_
#define GUARDJIT_CORE_ONNX_ONNX_DETECT_H_

#include "absl/strings/string_view.h"

namespace guardjit {

// Whether `bytes` are a serialized ONNX ModelProto rather than a guardjit
// graph: a top-level field 1 encoded as a varint (ModelProto.ir_version,
// which ONNX requires). guardjit's Graph has field 1 as a string (its name)
// and no varint field at the top level, so no graph a guardjit writer made
// is ever taken for ONNX. Bytes that are not protobuf wire format at all
// answer false (the graph parser reports them).
bool IsOnnxModel(absl::string_view bytes);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_DETECT_H_
