// Lowerings of the gathering ops (embedding, index_select, gather, and
// index.Tensor with one index tensor): each
// element is one indirect read of the source at a position taken from the
// index tensor, checked against the source's size in the kernel (an index out
// of range fails the call with an error naming the node and argument, as the
// eager kernels of runtime/kernels/indexing.cc do). The index tensor may be
// computed in the same kernel; the source is read from memory.

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/shape_util.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {
namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Outputs;
using lowering_internal::Unsupported;
using lowering_internal::Values;
using Index = std::vector<IndexExpr>;

std::string What(const Node& node, const char* arg) {
  return absl::StrCat("node '", node.name, "' (", node.target, "): argument '",
                      arg, "'");
}

// The eager kernels check every index before writing anything; a kernel
// checks the indices it reads. They differ when the output is empty but the
// index is not (a dim of size 0 beside the gathered one): leave that to the
// eager kernel.
bool EmptyBesideIndex(const std::vector<IndexExpr>& sizes, int skip_from,
                      int skip_to) {
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    if ((d < skip_from || d >= skip_to) && sizes[d].is_const(0)) return true;
  }
  return false;
}

// out[i..., j] = weight[indices[i...], j].
Outputs LowerEmbedding(LoweringContext& ctx, const Node& node,
                       const std::vector<TensorMeta>& out) {
  const int weight = ctx.Operand(node.args[0]);
  const int indices = ctx.Operand(node.args[1]);
  const int rank = ctx.value(indices).rank();
  if (EmptyBesideIndex(LoweringContext::Sizes(out[0]), 0, rank)) {
    return Unsupported("empty embedding rows");
  }
  return std::vector<int>{ctx.Gather(
      out[0], weight, indices, /*gather_dim=*/0,
      [rank](const Index& idx) {
        return std::pair<Index, Index>{Index(idx.begin(), idx.begin() + rank),
                                       {IndexExpr::Const(0), idx[rank]}};
      },
      What(node, "indices"))};
}

// out[..., k, ...] = self[..., index[k], ...] along `dim`.
Outputs LowerIndexSelect(LoweringContext& ctx, const Node& node,
                         const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  const int self = ctx.Operand(node.args[0]);
  const int index = ctx.Operand(node.args[2]);
  const bool index_scalar = ctx.value(index).rank() == 0;
  const int rank = ctx.value(self).rank();
  if (rank == 0) {
    // A 0-dim tensor is indexed like a 1-element vector.
    return std::vector<int>{ctx.Gather(
        out[0], self, index, /*gather_dim=*/-1,
        [index_scalar](const Index&) {
          return std::pair<Index, Index>{
              index_scalar ? Index{} : Index{IndexExpr::Const(0)}, Index{}};
        },
        What(node, "index"))};
  }
  absl::StatusOr<int> dim = NormalizeDim(args.int_arg(1), rank);
  if (!dim.ok()) return dim.status();
  if (EmptyBesideIndex(LoweringContext::Sizes(out[0]), *dim, *dim + 1)) {
    return Unsupported("empty slices beside the index");
  }
  const int d = *dim;
  return std::vector<int>{ctx.Gather(
      out[0], self, index, d,
      [index_scalar, d](const Index& idx) {
        return std::pair<Index, Index>{index_scalar ? Index{} : Index{idx[d]},
                                       idx};
      },
      What(node, "index"))};
}

// out[p] = self[p with p[dim] replaced by index[p]]; 0-dim operands take
// part as 1-element vectors.
Outputs LowerGather(LoweringContext& ctx, const Node& node,
                    const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  const int self = ctx.Operand(node.args[0]);
  const int index = ctx.Operand(node.args[2]);
  const int self_rank = ctx.value(self).rank();
  const int index_rank = ctx.value(index).rank();
  for (const IndexExpr& size : LoweringContext::Sizes(out[0])) {
    // The shape rule checks nothing else for an empty index.
    if (size.is_const(0)) return Unsupported("empty index");
  }
  if (self_rank == 0) {
    return std::vector<int>{ctx.Gather(
        out[0], self, index, /*gather_dim=*/-1,
        [](const Index& idx) {
          return std::pair<Index, Index>{idx, Index{}};
        },
        What(node, "index"))};
  }
  absl::StatusOr<int> dim = NormalizeDim(args.int_arg(1), self_rank);
  if (!dim.ok()) return dim.status();
  if (index_rank == 0) {
    // self is 1-D here (the shape rule matched the ranks).
    return std::vector<int>{ctx.Gather(
        out[0], self, index, /*gather_dim=*/0,
        [](const Index&) {
          return std::pair<Index, Index>{Index{}, Index{IndexExpr::Const(0)}};
        },
        What(node, "index"))};
  }
  return std::vector<int>{ctx.Gather(
      out[0], self, index, *dim,
      [](const Index& idx) {
        return std::pair<Index, Index>{idx, idx};
      },
      What(node, "index"))};
}

// index.Tensor with exactly one index tensor (any None entries before it):
// out[pre..., b..., post...] = self[pre..., wrap(index[b...]), post...],
// negative indices counting from the end as in the eager kernel. Several
// index tensors (broadcast together) run eagerly.
Outputs LowerIndexTensor(LoweringContext& ctx, const Node& node,
                         const std::vector<TensorMeta>& out) {
  const std::vector<Arg>& entries = node.args[1].as_list();
  int dim = -1;
  for (int k = 0; k < static_cast<int>(entries.size()); ++k) {
    if (entries[k].is_none()) continue;
    if (dim >= 0) return Unsupported("several index tensors run eagerly");
    dim = k;
  }
  if (dim < 0) return Unsupported("no index tensor");
  const int self = ctx.Operand(node.args[0]);
  const int raw_index = ctx.Operand(entries[dim]);
  const DType index_dtype = ctx.value(raw_index).dtype;
  if (index_dtype != DType::kInt64 && index_dtype != DType::kInt32) {
    return Unsupported("index dtype");  // the shape rule rejected it
  }
  const int index_rank = ctx.value(raw_index).rank();
  if (EmptyBesideIndex(LoweringContext::Sizes(out[0]), dim, dim + index_rank)) {
    return Unsupported("empty slices beside the index");
  }
  const IndexExpr size = ctx.value(self).sizes[dim];
  const int index = ctx.Pointwise(
      DType::kInt64, ctx.value(raw_index).sizes, {raw_index},
      [size](const Values& v) {
        const ValueExpr i = ValueExpr::Cast(v[0], DType::kInt64);
        const ValueExpr zero = ValueExpr::IntConst(DType::kInt64, 0);
        return ValueExpr::Where(
            ValueExpr::Binary(BinaryOp::kLt, i, zero),
            ValueExpr::Binary(BinaryOp::kAdd, i, ValueExpr::Index(size)), i);
      });
  const int self_rank = ctx.value(self).rank();
  return std::vector<int>{ctx.Gather(
      out[0], self, index, dim,
      [dim, index_rank, self_rank](const Index& idx) {
        Index source(self_rank, IndexExpr::Const(0));
        for (int d = 0; d < dim; ++d) source[d] = idx[d];
        for (int d = dim + 1; d < self_rank; ++d) {
          source[d] = idx[d - 1 + index_rank];
        }
        return std::pair<Index, Index>{
            Index(idx.begin() + dim, idx.begin() + dim + index_rank), source};
      },
      What(node, "indices"))};
}

}  // namespace

void AddIndexingLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  t["aten.embedding.default"] = LowerEmbedding;
  t["aten.index_select.default"] = LowerIndexSelect;
  t["aten.gather.default"] = LowerGather;
  t["aten.index.Tensor"] = LowerIndexTensor;
}

}  // namespace guardjit
