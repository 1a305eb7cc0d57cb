// Lowerings of max_pool{2,3}d_with_indices and avg_pool{2,3}d (N = 2 or 3
// spatial dims) as reductions over a window value: a select of rank + N
// (the output's dims, then the window's kernel dims) reading the input at
// out * stride - padding + k * dilation, out-of-input taps filled with the
// lowest value (-inf for floats). As the eager kernel
// (runtime/kernels/pooling.cc) computes it:
//   - values: the window's maximum (NaN-propagating), in the compute dtype;
//   - indices: the flat index in the plane or volume (ih * W + iw,
//     (id * H + ih) * W + iw) of the window's last NaN when it has one, else
//     of its first in-input tap holding the maximum (a window whose taps are
//     all the lowest value keeps its first in-input tap). Both are
//     reductions over taps' flat indices, so no division is needed; a graph
//     that never selects the indices (no getitem 1) never computes them.
// The input's spatial dims are fixed (the shape rules specialize them);
// leading dims may be symbolic.

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ops/pool_args.h"
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

// The window's geometry over the input's last w.rank dims.
struct Window {
  PoolWindow w;
  int h = 0;  // the input's first spatial dim (rank - w.rank)
  int64_t in[PoolWindow::kMaxRank] = {0, 0, 0};  // the spatial sizes
  // Per spatial dim: every tap of every output position is in the input
  // (no padding, no window past the end), so taps need no bounds.
  bool inside[PoolWindow::kMaxRank] = {false, false, false};

  int n() const { return w.rank; }
  bool all_inside() const {
    for (int d = 0; d < n(); ++d) {
      if (!inside[d]) return false;
    }
    return true;
  }
  // Input index along spatial dim `d` of output position `o`, tap `k`.
  IndexExpr Input(int d, const IndexExpr& o, const IndexExpr& k) const {
    return o * IndexExpr::Const(w.stride[d]) + IndexExpr::Const(-w.padding[d]) +
           k * IndexExpr::Const(w.dilation[d]);
  }
  // The first tap of output position `o` at or past input row (column) 0.
  IndexExpr FirstTap(int d, const IndexExpr& o) const {
    const IndexExpr start = Input(d, o, IndexExpr::Const(0));
    const IndexExpr dil = IndexExpr::Const(w.dilation[d]);
    const IndexExpr before =
        IndexExpr::Max(IndexExpr::Const(0),
                       IndexExpr::Const(0) + start * IndexExpr::Const(-1));
    return start + IndexExpr::FloorDiv(
                       before + IndexExpr::Const(w.dilation[d] - 1), dil) *
                       dil;
  }
  // Whether the tap at window index `idx` (rank + n dims) is in the input.
  ValueExpr InInput(const std::vector<IndexExpr>& idx) const {
    const int rank = h + n();
    ValueExpr result = ValueExpr::Const(DType::kBool, 1);
    for (int d = 0; d < n(); ++d) {
      if (inside[d]) continue;
      const IndexExpr i = Input(d, idx[h + d], idx[rank + d]);
      result = Bin(BinaryOp::kAnd, result,
                   Bin(BinaryOp::kGe, ValueExpr::Index(i),
                       ValueExpr::Index(IndexExpr::Const(0))));
      result = Bin(BinaryOp::kAnd, result,
                   Bin(BinaryOp::kLt, ValueExpr::Index(i),
                       ValueExpr::Index(IndexExpr::Const(in[d]))));
    }
    return result;
  }
  // The input element a window index reads (clamped into the input: a tap
  // outside it is discarded by InInput).
  std::vector<IndexExpr> Source(const std::vector<IndexExpr>& idx) const {
    const int rank = h + n();
    std::vector<IndexExpr> source(idx.begin(), idx.begin() + rank);
    for (int d = 0; d < n(); ++d) {
      if (inside[d]) {
        source[h + d] = Input(d, idx[h + d], idx[rank + d]);
        continue;
      }
      source[h + d] =
          IndexExpr::Min(IndexExpr::Max(Input(d, idx[h + d], idx[rank + d]),
                                        IndexExpr::Const(0)),
                         IndexExpr::Const(in[d] - 1));
    }
    return source;
  }
  // The flat index in the plane (volume) of per-dim input indices.
  IndexExpr FlatOf(const std::vector<IndexExpr>& at) const {
    IndexExpr flat = at[0];
    for (int d = 1; d < n(); ++d) {
      flat = flat * IndexExpr::Const(in[d]) + at[d];
    }
    return flat;
  }
  // The flat index in the plane (volume) of the tap at a window index.
  ValueExpr Flat(const std::vector<IndexExpr>& idx) const {
    const int rank = h + n();
    std::vector<IndexExpr> at;
    for (int d = 0; d < n(); ++d) {
      at.push_back(Input(d, idx[h + d], idx[rank + d]));
    }
    return ValueExpr::Index(FlatOf(at));
  }
  // The number of elements of the plane (volume).
  int64_t Elements() const {
    int64_t count = 1;
    for (int d = 0; d < n(); ++d) count *= in[d];
    return count;
  }
};

// The lowest value of `d` (-inf for floats), in its compute dtype.
ValueExpr Lowest(DType d) {
  const DType c = ComputeDType(d);
  if (IsFloating(d)) {
    return ValueExpr::Const(c, -std::numeric_limits<double>::infinity());
  }
  return ScalarConst(
      Scalar(d == DType::kUInt8   ? int64_t{0}
             : d == DType::kInt8  ? int64_t{-128}
             : d == DType::kInt16 ? int64_t{-32768}
             : d == DType::kInt32 ? int64_t{std::numeric_limits<int32_t>::min()}
                                  : std::numeric_limits<int64_t>::min()),
      d);
}

// A pool's window over input `self` (rank n + 1 or n + 2, spatial dims
// fixed) and its taps: the output's dims, then the kernel's dims, in the
// compute dtype, reduced over the last n.
struct Taps {
  Window win;
  int rank = 0;
  TensorMeta meta;
  std::vector<bool> mask;

  // The input element each tap reads (Window::Source).
  std::function<
      std::vector<std::vector<IndexExpr>>(const std::vector<IndexExpr>&)>
  Source() const {
    return [win = win](const std::vector<IndexExpr>& idx) {
      return std::vector<std::vector<IndexExpr>>{win.Source(idx)};
    };
  }
};

absl::StatusOr<Taps> TapsOf(const LoweringContext& ctx, int self,
                            const PoolWindow& w, const TensorMeta& out,
                            absl::string_view op) {
  const std::vector<IndexExpr>& in_sizes = ctx.value(self).sizes;
  Taps taps;
  taps.rank = static_cast<int>(in_sizes.size());
  if (taps.rank != w.rank + 1 && taps.rank != w.rank + 2) {
    return Unsupported(absl::StrCat(op, " rank"));
  }
  taps.win.w = w;
  taps.win.h = taps.rank - w.rank;
  Window& win = taps.win;
  for (int d = 0; d < w.rank; ++d) {
    if (!in_sizes[win.h + d].is_const()) {
      return Unsupported(absl::StrCat(op, " over symbolic spatial dims"));
    }
    win.in[d] = in_sizes[win.h + d].value();
  }
  for (int d = 0; d < w.rank; ++d) {
    const SymInt& out_size = out.sizes[win.h + d];
    const int64_t last =
        (out_size.hint() - 1) * w.stride[d] + (w.kernel[d] - 1) * w.dilation[d];
    win.inside[d] =
        !out_size.is_symbolic() && w.padding[d] == 0 && last <= win.in[d] - 1;
  }
  taps.meta = out;
  taps.meta.dtype = ComputeDType(out.dtype);
  for (int d = 0; d < w.rank; ++d) {
    taps.meta.sizes.push_back(SymInt(w.kernel[d]));
  }
  taps.mask.assign(taps.rank + w.rank, false);
  for (int d = 0; d < w.rank; ++d) taps.mask[taps.rank + d] = true;
  return taps;
}

Outputs MaxPoolWithIndices(LoweringContext& ctx, const Node& node,
                           const std::vector<TensorMeta>& out, int n) {
  const MetaArgs args = ArgsOf(ctx, node);
  const std::string op = absl::StrCat("max_pool", n, "d");
  absl::StatusOr<PoolWindow> w = ReadPoolWindow(args, n, op, 4, 5);
  if (!w.ok()) return w.status();
  const DType dtype = out[0].dtype;
  if (dtype == DType::kBool) return Unsupported(absl::StrCat(op, " of bool"));
  const int self = ctx.Operand(node.args[0]);
  ASSIGN_OR_RETURN(const Taps t, TapsOf(ctx, self, *w, out[0], op));
  const Window& win = t.win;
  const int rank = t.rank;
  const std::vector<bool>& mask = t.mask;
  const TensorMeta& taps = t.meta;
  const auto source = t.Source();
  const DType d = taps.dtype;
  const ValueExpr lowest = Lowest(dtype);
  const int window = ctx.Select(
      taps, {self}, source,
      [win, d, lowest](const std::vector<IndexExpr>& idx, const Values& v) {
        if (win.all_inside()) return C(v[0], d);
        return ValueExpr::Where(win.InInput(idx), C(v[0], d), lowest);
      });
  int values = ctx.Reduce(window, mask, false, CombineOp::kMax);
  const int maximum = values;
  if (dtype != d) {
    values =
        ctx.Pointwise(out[0], {values}, [](const Values& v) { return v[0]; });
  }

  if (!ctx.ReadsOutput(node, 1)) {
    // Nothing reads the indices (torch.export's F.max_pool2d): a value no
    // kernel computes stands in for them.
    return std::vector<int>{values,
                            ctx.Pointwise(out[1], {}, [](const Values&) {
                              return ValueExpr::Const(DType::kInt64, -1);
                            })};
  }
  // Flat index of the first in-input tap holding the maximum.
  TensorMeta flat = taps;
  flat.dtype = DType::kInt64;
  // Past every flat index of the plane (a constant exactly representable).
  const ValueExpr none_low =
      ValueExpr::Const(DType::kInt64, static_cast<double>(win.Elements()));
  const int first_max = ctx.Reduce(
      ctx.Select(
          flat, {self, maximum},
          [win, rank](const std::vector<IndexExpr>& idx) {
            return std::vector<std::vector<IndexExpr>>{
                win.Source(idx),
                std::vector<IndexExpr>(idx.begin(), idx.begin() + rank)};
          },
          [win, d, none_low](const std::vector<IndexExpr>& idx,
                             const Values& v) {
            const ValueExpr hit = Bin(BinaryOp::kAnd, win.InInput(idx),
                                      Bin(BinaryOp::kEq, C(v[0], d), v[1]));
            return ValueExpr::Where(hit, win.Flat(idx), none_low);
          }),
      mask, false, CombineOp::kMin);
  // Flat index of the last NaN tap, or -1 (floating dtypes).
  std::vector<int> found = {first_max};
  if (IsFloating(dtype)) {
    found.insert(
        found.begin(),
        ctx.Reduce(
            ctx.Select(
                flat, {self}, source,
                [win, d](const std::vector<IndexExpr>& idx, const Values& v) {
                  const ValueExpr x = C(v[0], d);
                  const ValueExpr nan = Bin(BinaryOp::kAnd, win.InInput(idx),
                                            Bin(BinaryOp::kNe, x, x));
                  return ValueExpr::Where(nan, win.Flat(idx),
                                          ValueExpr::Const(DType::kInt64, -1));
                }),
            mask, false, CombineOp::kMax));
  }
  // The last NaN's, else the first maximum's, else (no tap in the input)
  // the window's first tap at or past index 0 in every spatial dim, as the
  // eager kernel starts its scan there.
  const int indices = ctx.Select(
      out[1], found,
      [n = found.size()](const std::vector<IndexExpr>& idx) {
        return std::vector<std::vector<IndexExpr>>(n, idx);
      },
      [win, none_low](const std::vector<IndexExpr>& idx, const Values& v) {
        const ValueExpr& max_flat = v.back();
        std::vector<IndexExpr> first;
        for (int dim = 0; dim < win.n(); ++dim) {
          first.push_back(win.FirstTap(dim, idx[win.h + dim]));
        }
        ValueExpr result =
            ValueExpr::Where(Bin(BinaryOp::kLt, max_flat, none_low), max_flat,
                             ValueExpr::Index(win.FlatOf(first)));
        if (v.size() == 2) {
          result = ValueExpr::Where(
              Bin(BinaryOp::kGe, v[0], ValueExpr::Const(DType::kInt64, 0)),
              v[0], result);
        }
        return result;
      });
  return std::vector<int>{values, indices};
}

// avg_pool{2,3}d: the sum of the window's in-input taps over the divisor the
// eager kernel uses: divisor_override, else with count_include_pad the
// window clipped to the padded input, else its in-input taps; a window with
// no in-input tap gives 0. Floating dtypes only (the eager kernel divides
// int64 sums as integers, which the loop IR does not).
Outputs AvgPool(LoweringContext& ctx, const Node& node,
                const std::vector<TensorMeta>& out, int n) {
  const MetaArgs args = ArgsOf(ctx, node);
  const std::string op = absl::StrCat("avg_pool", n, "d");
  absl::StatusOr<PoolWindow> w = ReadPoolWindow(args, n, op, -1, 4);
  if (!w.ok()) return w.status();
  const DType dtype = out[0].dtype;
  if (!IsFloating(dtype)) {
    return Unsupported(absl::StrCat(op, " of integers"));
  }
  const bool count_include_pad = args.bool_arg(5);
  const std::optional<int64_t> divisor_override = args.optional_int(6);
  const int self = ctx.Operand(node.args[0]);
  ASSIGN_OR_RETURN(const Taps t, TapsOf(ctx, self, *w, out[0], op));
  const Window& win = t.win;
  const DType d = t.meta.dtype;
  const int sum = ctx.Reduce(
      ctx.Select(t.meta, {self}, t.Source(),
                 [win, d](const std::vector<IndexExpr>& idx, const Values& v) {
                   return ValueExpr::Where(win.InInput(idx), C(v[0], d),
                                           ValueExpr::Const(d, 0.0));
                 }),
      t.mask, false, CombineOp::kSum);
  return std::vector<int>{ctx.Select(
      out[0], {sum},
      [](const std::vector<IndexExpr>& idx) {
        return std::vector<std::vector<IndexExpr>>{idx};
      },
      [win, d, count_include_pad, divisor_override](
          const std::vector<IndexExpr>& idx, const Values& v) {
        // Per dim: the window's start, its end clipped to the padded input,
        // and the in-input part [first, last).
        IndexExpr padded = IndexExpr::Const(1), inside = IndexExpr::Const(1);
        for (int dim = 0; dim < win.n(); ++dim) {
          const IndexExpr start =
              win.Input(dim, idx[win.h + dim], IndexExpr::Const(0));
          const int64_t size = win.in[dim];
          const IndexExpr end =
              IndexExpr::Min(start + IndexExpr::Const(win.w.kernel[dim]),
                             IndexExpr::Const(size + win.w.padding[dim]));
          const IndexExpr first = IndexExpr::Max(start, IndexExpr::Const(0));
          const IndexExpr last = IndexExpr::Min(end, IndexExpr::Const(size));
          padded = padded * (end + start * IndexExpr::Const(-1));
          inside = inside * IndexExpr::Max(IndexExpr::Const(0),
                                           last + first * IndexExpr::Const(-1));
        }
        const IndexExpr divisor = divisor_override.has_value()
                                      ? IndexExpr::Const(*divisor_override)
                                      : (count_include_pad ? padded : inside);
        const ValueExpr mean =
            Bin(BinaryOp::kDiv, v[0],
                ValueExpr::Cast(ValueExpr::Index(divisor), d));
        return ValueExpr::Where(Bin(BinaryOp::kGt, ValueExpr::Index(inside),
                                    ValueExpr::Index(IndexExpr::Const(0))),
                                mean, ValueExpr::Const(d, 0.0));
      })};
}

}  // namespace

void AddPoolingLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  for (const int n : {2, 3}) {
    t[absl::StrCat("aten.max_pool", n, "d_with_indices.default")] =
        [n](LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
          return MaxPoolWithIndices(ctx, node, out, n);
        };
    t[absl::StrCat("aten.avg_pool", n, "d.default")] =
        [n](LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
          return AvgPool(ctx, node, out, n);
        };
  }
}

}  // namespace guardjit
