#ifndef GUARDJIT_CORE_ONNX_ONNX_SYM_DATA_H_
#define GUARDJIT_CORE_ONNX_ONNX_SYM_DATA_H_

// Data operators on tensors with symbolic sizes. A model exported with
// dynamic batch and sequence dims (torch.onnx's dynamic_axes) moves and
// multiplies tensors whose sizes are symbols: a transformer block splits
// its qkv projection, multiplies batched heads, slices a causal mask by the
// sequence length. Where the table's mapping needs static sizes, these map
// the node onto ATen ops taking SymInt arguments, as torch.export writes
// them: sizes are numbers where static (OnnxImportState::IsStaticDim) and
// aten.sym_size.int / operator.* nodes where not, so one graph serves every
// size of the symbols and a dynamic entry compiles once.

#include "absl/status/statusor.h"
#include "core/onnx/onnx_node_context.h"

namespace guardjit {

// Maps the node when an input it moves or multiplies has symbolic sizes,
// or a Slice's bounds or a Pad's pads are size expressions:
// - Slice (positive steps) onto aten.slice.Tensor with SymInt bounds;
// - Split onto split_with_sizes (equal parts of a symbolic dim as size
//   arithmetic);
// - Gather onto select.int (a scalar index) or index_select and a view;
// - Squeeze and Unsqueeze onto squeeze.dims and unsqueeze (the squeezed
//   dims must be static 1s);
// - MatMul onto mm / bmm with the batch flattened by views of size
//   expressions (numpy broadcasting through expand);
// - Pad with pads of size expressions onto constant_pad_nd.
// Returns false, having added nothing, for any other node or when every
// size it needs is static: the table's mapping maps it (and refuses what
// neither can map, naming the value).
absl::StatusOr<bool> MapSymbolicData(OnnxNodeContext& ctx);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_ONNX_ONNX_SYM_DATA_H_
