#ifndef GUARDJIT_JIT_LOWERING_LOWERING_H_
#define GUARDJIT_JIT_LOWERING_LOWERING_H_

// Lowering: a graph specialized to its inputs' metadata and layouts becomes a
// graph of lowered values, each a function from an index to a ValueExpr
// (pointwise ops, views as index remaps, reductions) or memory (inputs,
// weights, results of ops the JIT leaves to the eager kernels). Fusion
// (fusion.h) then decides which values get their own memory and which kernel
// computes them.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/ops/view_geometry.h"
#include "core/shape_inference.h"
#include "core/tensor_meta.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"
#include "runtime/program/program.h"

namespace guardjit {

// The size of `meta`'s dim `dim` as an index expression: the one place jit/
// reads sizes from metadata, so symbolic sizes change only this function.
IndexExpr SizeExpr(const TensorMeta& meta, int dim);

// Concrete sizes, when every size is a constant.
std::optional<Shape> ConcreteShape(const std::vector<IndexExpr>& sizes);

// Row-major linear offset of `index` in a tensor of `sizes`.
IndexExpr Linearize(const std::vector<IndexExpr>& index,
                    const std::vector<IndexExpr>& sizes);

// Slot (memory a program reads or writes at run time):
// runtime/program/program.h.

struct LValue {
  enum class Kind { kBuffer, kPointwise, kView, kReduction, kSelect, kGather };
  Kind kind = Kind::kPointwise;
  DType dtype = DType::kFloat32;
  std::vector<IndexExpr> sizes;
  bool wrapped_number = false;
  std::string label;  // the node it came from, for plans and errors

  // kBuffer: element idx at slot + offset + sum(idx[d] * strides[d]).
  int slot = -1;
  IndexExpr offset;
  std::vector<IndexExpr> strides;

  // kPointwise: compute(operands' values), operands broadcast to `sizes`.
  // kView and kReduction: operands[0] is the source.
  std::vector<int> operands;
  std::function<ValueExpr(const std::vector<ValueExpr>&)> compute;

  // kView: the source's index for an index of this value.
  std::function<std::vector<IndexExpr>(const std::vector<IndexExpr>&)> remap;
  // kView: the view's geometry once its source is in memory laid out as
  // (sizes, strides), or an error when no view expresses it there.
  std::function<absl::StatusOr<ViewGeometry>(IntSpan sizes, IntSpan strides)>
      geometry;
  // kView: a reshape (view, _unsafe_view): where its source is in
  // contiguous memory, it is that memory laid out contiguously, whatever
  // the sizes (the scheduler views it in place where `geometry`, which takes
  // concrete sizes, cannot: a dynamic entry's symbolic ones).
  bool reshape = false;

  // kSelect: select(idx, operands' values), operand k read at
  // operand_index(idx)[k] (cat, constant_pad_nd: the index picks which
  // operand, or a fill value, the element comes from). Every operand index
  // stays in its operand's bounds, also where `select` discards the value.
  std::function<std::vector<std::vector<IndexExpr>>(
      const std::vector<IndexExpr>&)>
      operand_index;
  std::function<ValueExpr(const std::vector<IndexExpr>&,
                          const std::vector<ValueExpr>&)>
      select;

  // kGather: operands {source, index}; the element at idx is the source's
  // at gather_at(idx).second with its dim `gather_dim` replaced by the
  // index's value at gather_at(idx).first (gather_dim -1: a 0-dim source,
  // read as one element). An index outside [0, size of that dim) is an
  // error: "<gather_what>: index out of range for dimension ...". The
  // source is read from memory (fusion gives it some).
  int gather_dim = -1;
  std::function<std::pair<std::vector<IndexExpr>, std::vector<IndexExpr>>(
      const std::vector<IndexExpr>&)>
      gather_at;
  std::string gather_what;

  // kReduction over the source's dims flagged in `mask`, accumulated in the
  // source's dtype (lowering casts first).
  std::vector<bool> mask;
  bool keepdim = false;
  CombineOp combine = CombineOp::kSum;

  int rank() const { return static_cast<int>(sizes.size()); }
};

// A node the JIT leaves to its eager reference kernel.
struct ExternNode {
  int node = -1;
  int position = 0;          // number of lowered values created before it
  std::vector<int> outputs;  // lowered values (kBuffer, slot kExtern)
};

struct LoweredGraph {
  std::vector<LValue> values;
  std::vector<Slot> slots;
  std::vector<ExternNode> externs;
  // Graph value (node, output) -> lowered value.
  absl::flat_hash_map<int64_t, int> of_graph_value;
  std::vector<int> outputs;  // lowered values of the graph's outputs
  // Each extern's tensor arguments: (node << 16 | output) of the graph value
  // and its lowered value.
  absl::flat_hash_map<int, std::vector<std::pair<int64_t, int>>> extern_inputs;

  int ValueOf(ValueRef v) const;
};

// Lowers `graph` for inputs described by `metas` (InferShapes, or the
// symbolic metas of a dynamic entry: symbol i is size parameter i) laid out
// with `input_strides` (elements, expressions over the size parameters;
// storage offsets are already in the data pointers). A node the JIT cannot
// compile (unsupported op or dtype) becomes an ExternNode; `fallback_reasons`
// (if set) collects why, one line each. `device`: where the kernels run; a
// node whose outputs are on another device than it or the CPU stays an
// ExternNode, as does every node in `library_steps` (nodes a host program
// runs as steps of the library's own: jit/steps/layer_norm_step.h).
absl::StatusOr<LoweredGraph> Lower(
    const Graph& graph, const GraphMeta& metas,
    const std::vector<std::vector<IndexExpr>>& input_strides,
    std::vector<std::string>* fallback_reasons = nullptr,
    Device device = Device::Cpu(),
    const absl::flat_hash_set<int>& library_steps = {});

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LOWERING_LOWERING_H_
