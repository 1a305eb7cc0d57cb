// Lowerings of the view ops: a view of memory stays memory with new strides
// (what the eager kernel returns), a view of a computed value remaps its
// index. Never a copy.

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/view_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {
namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Bin;
using lowering_internal::C;
using lowering_internal::Outputs;
using lowering_internal::Unsupported;
using lowering_internal::Values;

const absl::flat_hash_map<std::string, ViewOp>& ViewTargets() {
  static const auto* targets = [] {
    auto* map = new absl::flat_hash_map<std::string, ViewOp>();
    for (const ViewOpDef& def : kViewOps) {
      (*map)[ParseOpSchema(def.schema)->QualifiedName()] = def.op;
    }
    return map;
  }();
  return *targets;
}

// Where a slice or select along a dim of symbolic `size` starts, clamped as
// SliceGeometry and SelectGeometry clamp it: exact for every size, where
// shape inference decided the clamps for the sizes its guards accept.
absl::StatusOr<IndexExpr> SymbolicStart(ViewOp op, const MetaArgs& args,
                                        const IndexExpr& size) {
  if (op == ViewOp::kSelect) {
    const SymInt index = args.sym_int(2);
    if (index.is_symbolic()) return Unsupported("symbolic select index");
    return index.hint() < 0 ? IndexExpr::Const(index.hint()) + size
                            : IndexExpr::Const(index.hint());
  }
  const std::optional<SymInt> start = args.optional_sym_int(2);
  if (start.has_value() && start->is_symbolic()) {
    return Unsupported("symbolic slice start");
  }
  int64_t value = start.has_value() ? start->hint() : 0;
  // INT64_MAX is how a traced `x[sys.maxsize:]` spells "no start".
  if (value == std::numeric_limits<int64_t>::max()) value = 0;
  if (value < 0) {
    return IndexExpr::Max(IndexExpr::Const(value) + size, IndexExpr::Const(0));
  }
  return IndexExpr::Min(IndexExpr::Const(value), size);
}

// The index remap of `op` for a source that is not memory (a computed
// value): the source's index for an index of the view.
absl::StatusOr<RemapFn> LogicalRemap(ViewOp op, const MetaArgs& args,
                                     const LValue& src,
                                     const std::vector<IndexExpr>& out_sizes) {
  const int in_rank = src.rank();
  const int out_rank = static_cast<int>(out_sizes.size());
  const std::vector<IndexExpr> in_sizes = src.sizes;
  switch (op) {
    case ViewOp::kAlias:
      return RemapFn([](const std::vector<IndexExpr>& idx) { return idx; });
    case ViewOp::kView:
      return RemapFn([in_sizes, out_sizes](const std::vector<IndexExpr>& idx) {
        const IndexExpr linear = Linearize(idx, out_sizes);
        std::vector<IndexExpr> in(in_sizes.size());
        IndexExpr stride = IndexExpr::Const(1);
        for (int d = static_cast<int>(in_sizes.size()) - 1; d >= 0; --d) {
          // The outermost dim needs no modulo (the linear index is below
          // the element count): a dynamic entry's symbolic batch would
          // cost a division per element.
          const IndexExpr div = IndexExpr::FloorDiv(linear, stride);
          in[d] = in_sizes[d].is_const(1) ? IndexExpr::Const(0)
                  : d == 0                ? div
                                          : IndexExpr::Mod(div, in_sizes[d]);
          stride = stride * in_sizes[d];
        }
        return in;
      });
    case ViewOp::kPermute: {
      std::vector<int> dims;
      for (int64_t d : args.int_list(1)) {
        ASSIGN_OR_RETURN(int nd, NormalizeDim(d, in_rank));
        dims.push_back(nd);
      }
      return RemapFn([dims](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in(dims.size());
        for (size_t i = 0; i < dims.size(); ++i) in[dims[i]] = idx[i];
        return in;
      });
    }
    case ViewOp::kExpand:
      return RemapFn([in_sizes, out_rank](const std::vector<IndexExpr>& idx) {
        const int in_rank = static_cast<int>(in_sizes.size());
        std::vector<IndexExpr> in(in_rank);
        for (int d = 0; d < in_rank; ++d) {
          in[d] = in_sizes[d].is_const(1) ? IndexExpr::Const(0)
                                          : idx[d + out_rank - in_rank];
        }
        return in;
      });
    case ViewOp::kUnsqueeze: {
      ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), out_rank));
      return RemapFn([dim](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in = idx;
        in.erase(in.begin() + dim);
        return in;
      });
    }
    case ViewOp::kSqueeze:
    case ViewOp::kSqueezeDim:
    case ViewOp::kSqueezeDims: {
      std::vector<bool> squeezed(in_rank, false);
      std::vector<int64_t> dims;
      if (op == ViewOp::kSqueezeDim) dims = {args.int_arg(1)};
      if (op == ViewOp::kSqueezeDims) dims = args.int_list(1);
      for (int d = 0; d < in_rank; ++d) {
        squeezed[d] = op == ViewOp::kSqueeze && in_sizes[d].is_const(1);
      }
      for (int64_t d : dims) {
        ASSIGN_OR_RETURN(int nd, NormalizeDim(d, std::max(in_rank, 1)));
        if (nd < in_rank && in_sizes[nd].is_const(1)) squeezed[nd] = true;
      }
      return RemapFn([squeezed](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in;
        size_t next = 0;
        for (bool s : squeezed) {
          in.push_back(s ? IndexExpr::Const(0) : idx[next++]);
        }
        return in;
      });
    }
    case ViewOp::kSlice:
    case ViewOp::kSelect: {
      ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), in_rank));
      IndexExpr start;
      if (std::optional<Shape> sizes = ConcreteShape(in_sizes)) {
        const Shape unit = ContiguousStrides(*sizes);
        ASSIGN_OR_RETURN(ViewGeometry g, (ViewOpGeometry<TensorMeta, int64_t>(
                                             op, args, *sizes, unit)));
        start = IndexExpr::Const(unit[dim] == 0 ? 0 : g.offset / unit[dim]);
      } else {
        ASSIGN_OR_RETURN(start, SymbolicStart(op, args, in_sizes[dim]));
      }
      if (op == ViewOp::kSelect) {
        return RemapFn([dim, start](const std::vector<IndexExpr>& idx) {
          std::vector<IndexExpr> in = idx;
          in.insert(in.begin() + dim, start);
          return in;
        });
      }
      const int64_t step = args.int_arg(4);
      return RemapFn([dim, start, step](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in = idx;
        in[dim] = start + idx[dim] * IndexExpr::Const(step);
        return in;
      });
    }
    case ViewOp::kDiagonal: {
      // Element k of the diagonal is (k, k + offset) along (dim1, dim2)
      // for offset >= 0, (k - offset, k) below; the other dims keep their
      // order before the new last dim.
      ASSIGN_OR_RETURN(int d1, NormalizeDim(args.int_arg(2), in_rank));
      ASSIGN_OR_RETURN(int d2, NormalizeDim(args.int_arg(3), in_rank));
      const int64_t offset = args.int_arg(1);
      return RemapFn(
          [in_rank, d1, d2, offset](const std::vector<IndexExpr>& idx) {
            std::vector<IndexExpr> in(in_rank);
            size_t next = 0;
            for (int d = 0; d < in_rank; ++d) {
              if (d != d1 && d != d2) in[d] = idx[next++];
            }
            const IndexExpr& k = idx.back();
            in[d1] = offset >= 0 ? k : k + IndexExpr::Const(-offset);
            in[d2] = offset >= 0 ? k + IndexExpr::Const(offset) : k;
            return in;
          });
    }
  }
  return Unsupported("view");
}

// Whether `strides` lay out `sizes` contiguously (dims of size 1 may have
// any stride).
bool IsContiguous(const std::vector<IndexExpr>& sizes,
                  const std::vector<IndexExpr>& strides) {
  const std::vector<IndexExpr> contiguous = ContiguousStrideExprs(sizes);
  if (strides.size() != sizes.size()) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!sizes[d].is_const(1) && strides[d] != contiguous[d]) return false;
  }
  return true;
}

// Views of memory stay memory with new strides (what the eager kernel
// returns); views of computed values remap the index. Never a copy.
Outputs ViewLowering(LoweringContext& ctx, const Node& node,
                     const std::vector<TensorMeta>& out, bool unsafe_view) {
  const int source = ctx.Operand(node.args[0]);
  const LValue& src = ctx.value(source);
  const MetaArgs args = ArgsOf(ctx, node);
  const std::vector<IndexExpr> out_sizes = LoweringContext::Sizes(out[0]);
  const ViewOp op = unsafe_view ? ViewOp::kView : ViewTargets().at(node.target);
  // Memory of symbolic sizes or strides is viewed by remapping the index
  // (the strided geometry would take guards this compile cannot add).
  std::optional<Shape> in_sizes = ConcreteShape(src.sizes);
  std::optional<Shape> in_strides = ConcreteShape(src.strides);
  if (src.kind == LValue::Kind::kBuffer && in_sizes.has_value() &&
      in_strides.has_value() && src.offset.is_const()) {
    std::optional<ViewGeometry> geometry;
    if (unsafe_view) {
      std::optional<Shape> sizes = ConcreteShape(out_sizes);
      std::optional<Shape> strides =
          sizes ? ComputeViewStrides<int64_t>(*in_sizes, *in_strides, *sizes)
                : std::nullopt;
      if (strides.has_value()) geometry = ViewGeometry{*sizes, *strides, 0};
    } else {
      ASSIGN_OR_RETURN(geometry, (ViewOpGeometry<TensorMeta, int64_t>(
                                     op, args, *in_sizes, *in_strides)));
    }
    if (geometry.has_value()) {
      LValue v = src;
      v.sizes = out_sizes;
      v.strides = ConstExprs(geometry->strides);
      v.offset = src.offset + IndexExpr::Const(geometry->offset);
      return std::vector<int>{ctx.Add(std::move(v))};
    }
  }
  // A reshape of contiguous memory is contiguous memory, whatever the
  // sizes: no index remap (whose divisions by symbolic sizes a dynamic
  // entry's kernels would pay per element).
  if (src.kind == LValue::Kind::kBuffer && op == ViewOp::kView &&
      IsContiguous(src.sizes, src.strides)) {
    LValue v = src;
    v.sizes = out_sizes;
    v.strides = ContiguousStrideExprs(out_sizes);
    return std::vector<int>{ctx.Add(std::move(v))};
  }
  ASSIGN_OR_RETURN(RemapFn remap, LogicalRemap(op, args, src, out_sizes));
  const int view = ctx.View(source, out_sizes, std::move(remap));
  if (op == ViewOp::kView) ctx.MarkReshape(view);
  std::optional<Shape> sizes = ConcreteShape(out_sizes);
  if (sizes.has_value()) {
    ctx.SetViewGeometry(
        view,
        [op, unsafe_view, node_copy = node, out = *sizes](
            IntSpan in_sizes,
            IntSpan in_strides) -> absl::StatusOr<ViewGeometry> {
          if (unsafe_view) {
            std::optional<Shape> strides =
                ComputeViewStrides<int64_t>(in_sizes, in_strides, out);
            if (!strides.has_value()) {
              return absl::FailedPreconditionError("not viewable");
            }
            return ViewGeometry{out, *strides, 0};
          }
          // View ops read only literal arguments.
          const MetaArgs args(
              node_copy, [](ValueRef) { return TensorMeta(); },
              [](const Scalar&) { return TensorMeta(); });
          return ViewOpGeometry<TensorMeta, int64_t>(op, args, in_sizes,
                                                     in_strides);
        });
  }
  return std::vector<int>{view};
}

// split_with_sizes: piece k is the slice [start_k, start_k + size_k) along
// `dim`, start_k the sum of the sizes before it (symbolic sizes included, so
// a dynamic entry's pieces stay exact). Memory of concrete layout is viewed
// with a new offset (pieces alias their input, as in eager mode); anything
// else remaps the index.
Outputs SplitLowering(LoweringContext& ctx, const Node& node,
                      const std::vector<TensorMeta>& out) {
  const int source = ctx.Operand(node.args[0]);
  // A copy: adding the pieces may move the context's values.
  const LValue src = ctx.value(source);
  const MetaArgs args = ArgsOf(ctx, node);
  ASSIGN_OR_RETURN(const int dim, NormalizeDim(args.int_arg(2), src.rank()));
  const std::optional<Shape> in_sizes = ConcreteShape(src.sizes);
  const std::optional<Shape> in_strides = ConcreteShape(src.strides);
  const bool memory = src.kind == LValue::Kind::kBuffer &&
                      in_sizes.has_value() && in_strides.has_value() &&
                      src.offset.is_const();
  std::vector<int> pieces;
  IndexExpr start = IndexExpr::Const(0);
  for (const TensorMeta& piece : out) {
    const std::vector<IndexExpr> sizes = LoweringContext::Sizes(piece);
    if (memory) {
      LValue v = src;
      v.sizes = sizes;
      v.offset = src.offset + start * src.strides[dim];
      pieces.push_back(ctx.Add(std::move(v)));
    } else {
      const int view = ctx.View(
          source, sizes, [dim, start](const std::vector<IndexExpr>& idx) {
            std::vector<IndexExpr> in = idx;
            in[dim] = in[dim] + start;
            return in;
          });
      if (std::optional<Shape> concrete = ConcreteShape(sizes);
          concrete.has_value() && start.is_const()) {
        ctx.SetViewGeometry(
            view,
            [dim, offset = start.value(), out_sizes = *concrete](
                IntSpan, IntSpan strides) -> absl::StatusOr<ViewGeometry> {
              return ViewGeometry{out_sizes,
                                  Shape(strides.begin(), strides.end()),
                                  offset * strides[dim]};
            });
      }
      pieces.push_back(view);
    }
    start = start + sizes[dim];
  }
  return pieces;
}

// as_strided over memory the lowering knows whole: a contiguous buffer at
// offset 0 (a graph input, which the eager interpreter takes as its own
// storage, or a materialized value, whose storage it is) becomes memory
// with the given strides; a computed value (what eager mode would hold in
// a fresh contiguous tensor) remaps the view's index through the storage's
// linear index. Sizes, strides and offset must be concrete and the view
// inside the input's elements; anything else (a view of a view, whose
// storage the eager kernel sees but the lowering does not) runs eagerly.
Outputs AsStridedLowering(LoweringContext& ctx, const Node& node,
                          const std::vector<TensorMeta>& out) {
  const int source = ctx.Operand(node.args[0]);
  const LValue src = ctx.value(source);
  const MetaArgs args = ArgsOf(ctx, node);
  std::vector<int64_t> sizes, strides;
  for (const SymInt& s : args.sym_int_list(1)) {
    if (s.is_symbolic()) return Unsupported("symbolic as_strided size");
    sizes.push_back(s.hint());
  }
  for (const SymInt& s : args.sym_int_list(2)) {
    if (s.is_symbolic()) return Unsupported("symbolic as_strided stride");
    strides.push_back(s.hint());
  }
  const std::optional<SymInt> start = args.optional_sym_int(3);
  if (start.has_value() && start->is_symbolic()) {
    return Unsupported("symbolic as_strided storage offset");
  }
  const int64_t offset = start.has_value() ? start->hint() : 0;
  const std::optional<Shape> in_sizes = ConcreteShape(src.sizes);
  if (!in_sizes.has_value()) return Unsupported("as_strided of symbolic sizes");
  int64_t numel = 1;
  for (int64_t s : *in_sizes) numel *= s;
  int64_t need = offset + 1;
  bool empty = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    empty = empty || sizes[d] == 0;
    int64_t reach;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &reach) ||
        __builtin_add_overflow(need, reach, &need)) {
      return Unsupported("as_strided out of bounds");
    }
  }
  if (!empty && need > numel) return Unsupported("as_strided out of bounds");
  const std::vector<IndexExpr> out_sizes = LoweringContext::Sizes(out[0]);
  if (src.kind == LValue::Kind::kBuffer) {
    if (!src.offset.is_const(0) || !IsContiguous(src.sizes, src.strides)) {
      return Unsupported("as_strided of a strided view");
    }
    LValue v = src;
    v.sizes = out_sizes;
    v.strides = ConstExprs(Shape(strides.begin(), strides.end()));
    v.offset = IndexExpr::Const(offset);
    return std::vector<int>{ctx.Add(std::move(v))};
  }
  // A view of a computed value is, in eager mode, a view of some other
  // layout of its storage.
  if (src.kind == LValue::Kind::kView) {
    return Unsupported("as_strided of a view");
  }
  const Shape in = *in_sizes;
  return std::vector<int>{ctx.View(
      source, out_sizes,
      [in, strides, offset](const std::vector<IndexExpr>& idx) {
        IndexExpr linear = IndexExpr::Const(offset);
        for (size_t d = 0; d < idx.size(); ++d) {
          linear = linear + idx[d] * IndexExpr::Const(strides[d]);
        }
        std::vector<IndexExpr> at(in.size());
        int64_t stride = 1;
        for (int d = static_cast<int>(in.size()) - 1; d >= 0; --d) {
          const IndexExpr div =
              IndexExpr::FloorDiv(linear, IndexExpr::Const(stride));
          at[d] = in[d] == 1 ? IndexExpr::Const(0)
                  : d == 0   ? div
                             : IndexExpr::Mod(div, IndexExpr::Const(in[d]));
          stride *= in[d];
        }
        return at;
      })};
}

}  // namespace

void AddViewLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  for (const auto& [target, op] : ViewTargets()) {
    t[target] = [](LoweringContext& c, const Node& n,
                   const std::vector<TensorMeta>& o) {
      return ViewLowering(c, n, o, false);
    };
  }
  t["aten.split_with_sizes.default"] = SplitLowering;
  t["aten.as_strided.default"] = AsStridedLowering;
  t["aten._unsafe_view.default"] = [](LoweringContext& c, const Node& n,
                                      const std::vector<TensorMeta>& o) {
    return ViewLowering(c, n, o, true);
  };
}

}  // namespace guardjit
