#ifndef GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_
#define GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/onnx_node_context.h"
#include "core/ops/sym_ops.h"

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

// A Slice node's arguments as given (attributes before opset 10, inputs
// from it; those must be known at load): axes and steps empty when absent.
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};
absl::StatusOr<SliceArgs> SliceArgsOf(OnnxNodeContext& ctx);

// A Split node's 'num_outputs' attribute (opset 18 on; 0 when absent or
// before), checked against the node: INVALID_ARGUMENT when it is given with
// split sizes (`has_sizes`) or differs from the node's outputs.
absl::StatusOr<int64_t> SplitNumOutputs(OnnxNodeContext& ctx, bool has_sizes);

// ConstantOfShape's fill value: its 'value' attribute (one element), or a
// float32 zero.
absl::StatusOr<Tensor> ConstantOfShapeFill(OnnxNodeContext& ctx);
// `value` as the Scalar argument of an ATen op (a float, bool or int).
Arg ScalarArg(const Scalar& value);

// Sizes as torch.export spells them: each an Arg::Int or a graph node
// computing an integer (aten.sym_size.int, operator.mul, ...).

// A value's elements as size expressions, and whether it is 0-d.
struct SizeElements {
  std::vector<Arg> sizes;
  bool scalar = false;
};
// Input i as size expressions: a value of them (OnnxValue::sizes), or a
// small integer value known at load. nullopt for anything else (a tensor
// computed at run time).
std::optional<SizeElements> SizeElementsOf(OnnxNodeContext& ctx, int i);
// Size d of graph value x: a number when static (IsStaticDim), else
// aten.sym_size.int.
absl::StatusOr<Arg> SymSizeOf(OnnxNodeContext& ctx, const Arg& x, int64_t d);
// Every size of graph value x, as SymSizeOf.
absl::StatusOr<std::vector<Arg>> SymSizesOf(OnnxNodeContext& ctx, const Arg& x);
// a op b on size expressions: computed when both are numbers.
absl::StatusOr<Arg> SymArith(OnnxNodeContext& ctx, SymOp op, const Arg& a,
                             const Arg& b);
// A SymInt[] argument.
inline Arg SizeList(std::vector<Arg> sizes) {
  return Arg::OfList(std::move(sizes));
}
// `x` viewed with size expressions `sizes` (-1 allowed once): a contiguous
// copy viewed, or a view of x itself when `contiguous` (a fresh mm/bmm
// result).
absl::StatusOr<Arg> ViewAs(OnnxNodeContext& ctx, const Arg& x,
                           std::vector<Arg> sizes, bool contiguous = false);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_OP_UTIL_H_
