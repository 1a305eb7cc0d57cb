#ifndef GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_
#define GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/onnx_node_context.h"

namespace guardjit {

// Helpers the op families share.

// An int[] argument.
Arg IntList(const std::vector<int64_t>& values);
// `x` with `sizes` (-1 allowed once): a contiguous copy viewed, since ONNX
// reshapes any layout and aten.view needs a viewable one.
absl::StatusOr<Arg> ReshapeTo(OnnxNodeContext& ctx, const Arg& x,
                              const std::vector<int64_t>& sizes);
// `x` converted to `dtype` (itself when it has it).
absl::StatusOr<Arg> CastTo(OnnxNodeContext& ctx, const Arg& x, DType dtype);
// A 0-dim constant of `dtype` holding `value`, in the graph.
absl::StatusOr<Arg> ScalarConstant(OnnxNodeContext& ctx, double value,
                                   DType dtype);
// The reduction/squeeze axes of the node: from attribute "axes" before
// `input_since` (or always when input_since is 0), else from input
// `input_index` when given. nullopt when neither is given.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(OnnxNodeContext& ctx,
                                                           int input_since,
                                                           int input_index);
// Axes normalized against `rank`, checked for duplicates.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(
    const std::vector<int64_t>& axes, int64_t rank);
// UNIMPLEMENTED unless `dtype` is one of the floating ones.
absl::Status RequireFloat(const TensorMeta& meta, absl::string_view what);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_
