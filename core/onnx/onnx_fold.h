#ifndef GUARDJIT_CORE_ONNX_ONNX_FOLD_H_
#define GUARDJIT_CORE_ONNX_ONNX_FOLD_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tensor.h"

namespace guardjit {

// Shape arithmetic at load: `op` (Add, Sub, Mul, Div) of two small int64
// tensors known at load, with numpy broadcasting, as ONNX computes it
// (Div truncates). nullopt when the operands are not such tensors (the op
// then runs in the graph); INVALID_ARGUMENT for a division by zero.
absl::StatusOr<std::optional<Tensor>> FoldIntBinary(absl::string_view op,
                                                    const Tensor& a,
                                                    const Tensor& b);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_FOLD_H_
