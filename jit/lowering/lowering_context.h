#ifndef GUARDJIT_JIT_LOWERING_LOWERING_CONTEXT_H_
#define GUARDJIT_JIT_LOWERING_LOWERING_CONTEXT_H_

// What the per-op lowerings (lowering_ops.cc) build lowered values with.
// Internal to lowering.

#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph.h"
#include "core/op_registry.h"
#include "core/shape_inference.h"
#include "jit/lowering/lowering.h"

namespace guardjit {

using PointwiseFn = std::function<ValueExpr(const std::vector<ValueExpr>&)>;
using RemapFn =
    std::function<std::vector<IndexExpr>(const std::vector<IndexExpr>&)>;

class LoweringContext {
 public:
  LoweringContext(const GraphMeta& metas, LoweredGraph* out,
                  const Graph* graph = nullptr);

  const LValue& value(int id) const { return out_->values[id]; }
  const GraphMeta& metas() const { return metas_; }

  // The lowered value of a tensor argument; a number literal becomes a
  // wrapped-number constant, as PyTorch wraps it.
  int Operand(const Arg& arg);
  // dtype, rank and wrapped-number flag of a value, for ResultType.
  TensorMeta MetaOf(int id) const;
  static std::vector<IndexExpr> Sizes(const TensorMeta& meta);

  int AddBuffer(int slot, const TensorMeta& meta,
                std::vector<IndexExpr> strides, std::string label);
  // compute(operands at the broadcast index).
  int Pointwise(DType dtype, std::vector<IndexExpr> sizes,
                std::vector<int> operands, PointwiseFn compute,
                std::string label = "");
  int Pointwise(const TensorMeta& out, std::vector<int> operands,
                PointwiseFn compute, std::string label = "");
  // The result has the source's dtype, int64 for argmax/argmin.
  int Reduce(int source, std::vector<bool> mask, bool keepdim,
             CombineOp combine, std::string label = "");
  int View(int source, std::vector<IndexExpr> sizes, RemapFn remap,
           std::string label = "");
  int Select(const TensorMeta& out, std::vector<int> operands,
             decltype(LValue::operand_index) operand_index,
             decltype(LValue::select) select);
  // A gathering op's result (LValue::Kind::kGather).
  int Gather(const TensorMeta& out, int source, int index, int gather_dim,
             decltype(LValue::gather_at) gather_at, std::string what);
  void SetViewGeometry(int view, decltype(LValue::geometry) geometry) {
    out_->values[view].geometry = std::move(geometry);
  }
  void MarkReshape(int view) { out_->values[view].reshape = true; }
  int Add(LValue value);

  // Whether some node of the graph selects output `output` of multi-output
  // node `node` (a getitem of it): a lowering may skip work for an output
  // nothing reads. True when the context has no graph.
  bool ReadsOutput(const Node& node, int output) const;

 private:
  const GraphMeta& metas_;
  LoweredGraph* out_;
  const Graph* graph_;
};

// Lowers one call node to the lowered values of its outputs, or
// UNIMPLEMENTED (with the reason) to leave it to the eager kernel.
using LowerFn = std::function<absl::StatusOr<std::vector<int>>(
    LoweringContext& ctx, const Node& node,
    const std::vector<TensorMeta>& out)>;

// The lowering of `target`, or null.
const LowerFn* FindLowering(absl::string_view target);

// Parts of the table FindLowering reads, one per file.
void AddViewLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddReductionLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddCatPadLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddCreationLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddIndexingLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddActivationLowerings(absl::flat_hash_map<std::string, LowerFn>& table);
void AddPoolingLowerings(absl::flat_hash_map<std::string, LowerFn>& table);

// Shorthands of the per-op lowerings.
namespace lowering_internal {

using Values = std::vector<ValueExpr>;
using Outputs = absl::StatusOr<std::vector<int>>;

// Leaves the node to its eager kernel, saying why.
inline absl::Status Unsupported(absl::string_view why) {
  return absl::UnimplementedError(why);
}

// The node's arguments, tensors read as their metadata (literals only, in
// practice: lowerings take tensors through LoweringContext::Operand).
inline MetaArgs ArgsOf(const LoweringContext& ctx, const Node& node) {
  return MetaArgs(
      node, [&ctx](ValueRef v) { return ctx.metas()[v.node][v.index]; },
      [](const Scalar& s) {
        return TensorMeta{s.dtype(), {}, Device::Cpu(), true};
      });
}

// `x` as a value of dtype `d`, computed in ComputeDType(d).
inline ValueExpr C(const ValueExpr& x, DType d) {
  return ValueExpr::Cast(x, ComputeDType(d));
}
inline ValueExpr Bin(BinaryOp op, const ValueExpr& a, const ValueExpr& b) {
  return ValueExpr::Binary(op, a, b);
}

}  // namespace lowering_internal

// `s` converted to `dtype` as PyTorch's Scalar::to<T>() converts it, as a
// value of ComputeDType(dtype).
ValueExpr ScalarConst(const Scalar& s, DType dtype);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LOWERING_LOWERING_CONTEXT_H_
