#ifndef GUARDJIT_CORE_ONNX_ONNX_IO_SPEC_H_
#define GUARDJIT_CORE_ONNX_ONNX_IO_SPEC_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/io_spec.h"
#include "onnx/onnx_pb.h"

namespace guardjit {

// What an ONNX graph input's or output's ValueInfoProto declares, as the
// graph's IoSpec (Graph::input_spec/output_spec, gj_graph_input_*): the
// element type's dtype (unknown for element type 0 or one the library
// lacks), and, with a shape, its dims: dim_value a static size, dim_param a
// dynamic dim named by it when it is an identifier (IsValidSymbolName),
// unnamed otherwise (an expression such as "batch + 1", or neither field).
// No shape, or a type that is not a tensor: nothing declared there.
// INVALID_ARGUMENT naming `what` for a negative dim_value or a rank past
// kMaxIoRank.
absl::StatusOr<IoSpec> IoSpecFromOnnx(const onnx::ValueInfoProto& info,
                                      absl::string_view what);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_IO_SPEC_H_
