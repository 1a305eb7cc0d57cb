// Lowerings of cat and constant_pad_nd as select values (LValue::kSelect):
// the element's index picks the operand it comes from (a chain of
// comparisons against the cat offsets) or the fill value (the pad's in-range
// test), so both fuse with their producers and consumers instead of copying.
// Operand indices are clamped into the operand's bounds: the value a
// comparison discards is still computed, from an element that exists.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/op_registry.h"
#include "core/ops/pad_resample_args.h"
#include "core/ops/view_geometry.h"
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

std::optional<int64_t> OptionalInt(const std::optional<SymInt>& v) {
  if (!v.has_value()) return std::nullopt;
  return v->hint();
}

IndexExpr Minus(const IndexExpr& a, const IndexExpr& b) {
  return a + IndexExpr::Const(-1) * b;
}

// `i` < `bound`, as a bool value.
ValueExpr IndexLess(const IndexExpr& i, const IndexExpr& bound) {
  return Bin(BinaryOp::kLt, ValueExpr::Index(i), ValueExpr::Index(bound));
}

// An output of constant `value` (a pad of an input with no elements).
int Filled(LoweringContext& ctx, const TensorMeta& out, const Scalar& value) {
  const DType d = out.dtype;
  return ctx.Pointwise(
      out, {}, [value, d](const Values&) { return ScalarConst(value, d); });
}

// cat: operand k covers [offset_k, offset_k + size_k) along `dim`; an
// element takes the first operand whose range ends past its index. Operands
// of size 0 along `dim` and legacy 1-D empty tensors (which the shape rule
// ignores) take no part.
Outputs Cat(LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
  const DType d = ComputeDType(out[0].dtype);
  const int rank = out[0].dim();
  std::vector<int> parts;
  std::vector<IndexExpr> sizes;  // along `dim`
  int dim = -1;
  for (const Arg& item : node.args[0].as_list()) {
    const int operand = ctx.Operand(item);
    const LValue& v = ctx.value(operand);
    if (v.rank() == 1 && v.sizes[0].is_const(0)) continue;
    if (v.rank() != rank) return Unsupported("cat of mixed ranks");
    if (dim < 0) {
      ASSIGN_OR_RETURN(dim, NormalizeDim(ArgsOf(ctx, node).int_arg(1), rank));
    }
    if (v.sizes[dim].is_const(0)) continue;
    parts.push_back(operand);
    sizes.push_back(v.sizes[dim]);
  }
  if (parts.empty()) {
    return std::vector<int>{Filled(ctx, out[0], Scalar(int64_t{0}))};
  }
  std::vector<IndexExpr> ends;
  IndexExpr end = IndexExpr::Const(0);
  for (const IndexExpr& size : sizes) ends.push_back(end = end + size);
  auto operand_index = [dim, sizes, ends](const std::vector<IndexExpr>& idx) {
    std::vector<std::vector<IndexExpr>> per_operand;
    for (size_t k = 0; k < sizes.size(); ++k) {
      std::vector<IndexExpr> in = idx;
      IndexExpr i = k == 0 ? idx[dim] : Minus(idx[dim], ends[k - 1]);
      if (k > 0) i = IndexExpr::Max(i, IndexExpr::Const(0));
      if (k + 1 < sizes.size()) {
        i = IndexExpr::Min(i, sizes[k] + IndexExpr::Const(-1));
      }
      in[dim] = i;
      per_operand.push_back(std::move(in));
    }
    return per_operand;
  };
  auto select = [d, dim, ends](const std::vector<IndexExpr>& idx,
                               const Values& v) {
    ValueExpr result = C(v.back(), d);
    for (size_t k = v.size() - 1; k-- > 0;) {
      result =
          ValueExpr::Where(IndexLess(idx[dim], ends[k]), C(v[k], d), result);
    }
    return result;
  };
  return std::vector<int>{
      ctx.Select(out[0], std::move(parts), operand_index, select)};
}

// constant_pad_nd: pads pair up from the last dim backwards (lo, hi); an
// element is the input's at idx - lo where that is in range, else the fill
// value. Negative pads only crop (the shift by lo makes them slices).
Outputs ConstantPad(LoweringContext& ctx, const Node& node,
                    const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  for (const SymInt& p : args.sym_int_list(1)) {
    if (p.is_symbolic()) return Unsupported("symbolic pad");
  }
  const std::vector<int64_t> pad = args.int_list(1);
  const Scalar value = args.scalar(2);
  const DType storage = out[0].dtype;
  const DType d = ComputeDType(storage);
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
  const int rank = static_cast<int>(in_sizes.size());
  for (const IndexExpr& size : in_sizes) {
    if (size.is_const(0)) return std::vector<int>{Filled(ctx, out[0], value)};
  }
  std::vector<int64_t> lo(rank, 0), hi(rank, 0);
  for (size_t p = 0; p + 1 < pad.size(); p += 2) {
    const int dim = rank - 1 - static_cast<int>(p / 2);
    lo[dim] = pad[p];
    hi[dim] = pad[p + 1];
  }
  auto operand_index = [in_sizes, lo, hi](const std::vector<IndexExpr>& idx) {
    std::vector<IndexExpr> in = idx;
    for (size_t dim = 0; dim < in.size(); ++dim) {
      in[dim] = idx[dim] + IndexExpr::Const(-lo[dim]);
      if (lo[dim] > 0) in[dim] = IndexExpr::Max(in[dim], IndexExpr::Const(0));
      if (hi[dim] > 0) {
        in[dim] = IndexExpr::Min(in[dim], in_sizes[dim] + IndexExpr::Const(-1));
      }
    }
    return std::vector<std::vector<IndexExpr>>{in};
  };
  auto select = [d, storage, value, in_sizes, lo, hi](
                    const std::vector<IndexExpr>& idx, const Values& v) {
    // Only positive pads can put an index out of range.
    std::vector<ValueExpr> in_range;
    for (size_t dim = 0; dim < idx.size(); ++dim) {
      if (lo[dim] > 0) {
        in_range.push_back(Bin(BinaryOp::kGe, ValueExpr::Index(idx[dim]),
                               ValueExpr::Index(IndexExpr::Const(lo[dim]))));
      }
      if (hi[dim] > 0) {
        in_range.push_back(
            IndexLess(idx[dim], in_sizes[dim] + IndexExpr::Const(lo[dim])));
      }
    }
    if (in_range.empty()) return C(v[0], d);
    ValueExpr cond = in_range[0];
    for (size_t i = 1; i < in_range.size(); ++i) {
      cond = Bin(BinaryOp::kAnd, cond, in_range[i]);
    }
    return ValueExpr::Where(cond, C(v[0], d), ScalarConst(value, storage));
  };
  return std::vector<int>{ctx.Select(out[0], {self}, operand_index, select)};
}

// A select of one operand that only moves elements: out[idx] =
// self[remap(idx)].
int Moved(LoweringContext& ctx, const TensorMeta& out, int self,
          std::function<std::vector<IndexExpr>(const std::vector<IndexExpr>&)>
              remap) {
  const DType d = ComputeDType(out.dtype);
  return ctx.Select(
      out, {self},
      [remap](const std::vector<IndexExpr>& idx) {
        return std::vector<std::vector<IndexExpr>>{remap(idx)};
      },
      [d](const std::vector<IndexExpr>&, const Values& v) {
        return C(v[0], d);
      });
}

// reflection/replication pads: along each padded dim of size n the source
// of output index i is j = i - lo mirrored, (n-1) - |(n-1) - |j||, (pads
// are below n) or clamped into [0, n-1]. Sizes may be symbolic.
LowerFn PadLowering(const PadDef& def) {
  return [def](LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) -> Outputs {
    const std::vector<int64_t> pad = ArgsOf(ctx, node).int_list(1);
    const int self = ctx.Operand(node.args[0]);
    const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
    const int rank = static_cast<int>(in_sizes.size());
    std::vector<int64_t> lo(rank, 0);
    for (int k = 0; k < def.dims; ++k) lo[rank - 1 - k] = pad[2 * k];
    const int first = rank - def.dims;
    const bool reflect = def.reflect;
    return std::vector<int>{Moved(
        ctx, out[0], self,
        [in_sizes, lo, first, reflect](const std::vector<IndexExpr>& idx) {
          std::vector<IndexExpr> in = idx;
          const IndexExpr minus1 = IndexExpr::Const(-1);
          for (size_t d = first; d < in.size(); ++d) {
            const IndexExpr j = idx[d] + IndexExpr::Const(-lo[d]);
            const IndexExpr last = in_sizes[d] + minus1;
            if (reflect) {
              const IndexExpr a = IndexExpr::Max(j, minus1 * j);
              const IndexExpr b = last + minus1 * a;
              in[d] = last + minus1 * IndexExpr::Max(b, minus1 * b);
            } else {
              in[d] =
                  IndexExpr::Min(IndexExpr::Max(j, IndexExpr::Const(0)), last);
            }
          }
          return in;
        })};
  };
}

// flip: index n-1-i along each flipped dim.
Outputs Flip(LoweringContext& ctx, const Node& node,
             const std::vector<TensorMeta>& out) {
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
  const int rank = static_cast<int>(in_sizes.size());
  std::vector<bool> flipped(rank, false);
  if (rank > 0) {
    for (int64_t d : ArgsOf(ctx, node).int_list(1)) {
      ASSIGN_OR_RETURN(int nd, NormalizeDim(d, rank));
      flipped[nd] = true;
    }
  }
  return std::vector<int>{
      Moved(ctx, out[0], self,
            [in_sizes, flipped](const std::vector<IndexExpr>& idx) {
              std::vector<IndexExpr> in = idx;
              for (size_t d = 0; d < in.size(); ++d) {
                if (flipped[d]) {
                  in[d] = in_sizes[d] + IndexExpr::Const(-1) +
                          IndexExpr::Const(-1) * idx[d];
                }
              }
              return in;
            })};
}

// repeat: output dim d (of the leading-1-padded input) reads input index
// idx mod size.
Outputs Repeat(LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) {
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
  const int lead = out[0].dim() - static_cast<int>(in_sizes.size());
  for (const SymInt& s : out[0].sizes) {
    if (!s.is_symbolic() && s.hint() == 0) {
      return std::vector<int>{Filled(ctx, out[0], Scalar(int64_t{0}))};
    }
  }
  return std::vector<int>{Moved(
      ctx, out[0], self, [in_sizes, lead](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in(in_sizes.size());
        for (size_t d = 0; d < in.size(); ++d) {
          const IndexExpr& i = idx[d + lead];
          in[d] = in_sizes[d].is_const(1) ? IndexExpr::Const(0)
                                          : IndexExpr::Mod(i, in_sizes[d]);
        }
        return in;
      })};
}

// select_scatter / slice_scatter: out = src where the element lies in the
// selected part of self, else self. The src index of an element outside is
// clamped into src's bounds (its value is discarded).
Outputs Scatter(LoweringContext& ctx, const Node& node,
                const std::vector<TensorMeta>& out, bool slice) {
  const MetaArgs args = ArgsOf(ctx, node);
  const int self = ctx.Operand(node.args[0]);
  const int src = ctx.Operand(node.args[1]);
  const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
  const int rank = static_cast<int>(in_sizes.size());
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(2), rank));
  // The part's position depends only on the scattered dim's size.
  if (!in_sizes[dim].is_const()) {
    return Unsupported("scatter along a dim of symbolic size");
  }
  for (int i : slice ? std::vector<int>{3, 4} : std::vector<int>{3}) {
    if (args.is_none(i)) continue;
    if (args.sym_int(i).is_symbolic()) {
      return Unsupported("symbolic scatter position");
    }
  }
  const Shape sizes = {in_sizes[dim].value()};
  const Shape unit = {1};
  absl::StatusOr<ViewGeometry> g =
      slice ? SliceGeometry<int64_t>(
                  sizes, unit, 0, OptionalInt(args.optional_sym_int(3)),
                  OptionalInt(args.optional_sym_int(4)), args.int_arg(5))
            : SelectGeometry<int64_t>(sizes, unit, 0, args.sym_int(3).hint());
  if (!g.ok()) return g.status();
  const DType d = ComputeDType(out[0].dtype);
  const int64_t start = g->offset;
  const int64_t step = slice ? args.int_arg(5) : 1;
  const int64_t len = slice ? g->sizes[0] : 1;
  if (len == 0) {
    return std::vector<int>{
        Moved(ctx, out[0], self,
              [](const std::vector<IndexExpr>& idx) { return idx; })};
  }
  auto operand_index = [dim, start, step, len,
                        slice](const std::vector<IndexExpr>& idx) {
    std::vector<IndexExpr> at = idx;
    const IndexExpr rel = idx[dim] + IndexExpr::Const(-start);
    if (slice) {
      at[dim] = IndexExpr::Min(
          IndexExpr::Max(IndexExpr::FloorDiv(rel, IndexExpr::Const(step)),
                         IndexExpr::Const(0)),
          IndexExpr::Const(len - 1));
    } else {
      at.erase(at.begin() + dim);
    }
    return std::vector<std::vector<IndexExpr>>{idx, at};
  };
  auto select = [d, dim, start, step, len, slice](
                    const std::vector<IndexExpr>& idx, const Values& v) {
    const ValueExpr i = ValueExpr::Index(idx[dim]);
    auto at = [](int64_t c) { return ValueExpr::Index(IndexExpr::Const(c)); };
    ValueExpr in = Bin(BinaryOp::kEq, i, at(start));
    if (slice) {
      in = Bin(BinaryOp::kAnd, Bin(BinaryOp::kGe, i, at(start)),
               Bin(BinaryOp::kLe, i, at(start + (len - 1) * step)));
      if (step > 1) {
        const IndexExpr phase = IndexExpr::Mod(
            idx[dim] + IndexExpr::Const(-start), IndexExpr::Const(step));
        in = Bin(BinaryOp::kAnd, in,
                 Bin(BinaryOp::kEq, ValueExpr::Index(phase), at(0)));
      }
    }
    return ValueExpr::Where(in, C(v[1], d), C(v[0], d));
  };
  return std::vector<int>{
      ctx.Select(out[0], {self, src}, operand_index, select)};
}

}  // namespace

void AddCatPadLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  t["aten.cat.default"] = Cat;
  t["aten.constant_pad_nd.default"] = ConstantPad;
  for (const PadDef& def : kPadOps) {
    t[ParseOpSchema(def.schema)->QualifiedName()] = PadLowering(def);
  }
  t["aten.flip.default"] = Flip;
  t["aten.repeat.default"] = Repeat;
  t["aten.select_scatter.default"] = [](LoweringContext& c, const Node& n,
                                        const std::vector<TensorMeta>& o) {
    return Scatter(c, n, o, false);
  };
  t["aten.slice_scatter.default"] = [](LoweringContext& c, const Node& n,
                                       const std::vector<TensorMeta>& o) {
    return Scatter(c, n, o, true);
  };
}

}  // namespace guardjit
