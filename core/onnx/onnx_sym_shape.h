#ifndef GUARDJIT_CORE_ONNX_ONNX_SYM_SHAPE_H_
#define GUARDJIT_CORE_ONNX_ONNX_SYM_SHAPE_H_

// Shape arithmetic on symbolic sizes. A model exported with a dynamic dim
// (a dim_param) computes shapes at run time: Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape. Where the sizes are static the table's mappings fold
// that chain to constants at load; where they are symbolic the values stay
// size expressions (OnnxValue::sizes: integers and aten.sym_size.int /
// operator.* nodes, as torch.export spells sizes), and the shape operators
// that consume them take them as SymInt[] arguments, so one graph serves
// every size of the dim and a dynamic entry compiles once.

#include "absl/status/statusor.h"
#include "core/onnx/onnx_node_context.h"

namespace guardjit {

// Maps the node when it computes on or from symbolic sizes:
// - Shape and Size of a tensor whose sizes are not static;
// - Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape, Identity, Cast
//   (to an integer type) and Add, Sub, Mul, Div on values of size
//   expressions (with any values known at load);
// - Reshape and Flatten of a tensor with symbolic sizes, or taking a shape
//   of size expressions; Expand, ConstantOfShape, Tile and Range taking
//   size expressions.
// Returns false, having added nothing, for any other node: its table
// mapping maps it (and a value of size expressions given to one as a tensor
// is refused there, naming the value).
absl::StatusOr<bool> MapOnSymbolicSizes(OnnxNodeContext& ctx);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_SYM_SHAPE_H_
