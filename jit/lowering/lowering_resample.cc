// Lowerings of upsample_nearest2d.vec and upsample_bilinear2d.vec as
// gathers: per output row (column) a small int64 value holds the source
// row (column) ATen's formulas pick (core/ops/pad_resample_args.h), a
// gather along H and then along W reads the input there, and bilinear
// blends its four taps with per-row and per-column weights in the eager
// kernel's order and opmath type. Concrete sizes fold the scales to
// constants computed exactly as the eager kernel computes them; symbolic
// sizes compute them in the kernel with the same float operations.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/pad_resample_args.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {
namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Bin;
using lowering_internal::Outputs;
using lowering_internal::Unsupported;
using lowering_internal::Values;
using Index = std::vector<IndexExpr>;

// A value of `dtype` and `sizes` computed from its index only.
int FromIndex(LoweringContext& ctx, DType dtype, SymShape sizes,
              std::function<ValueExpr(const Index&)> f) {
  const TensorMeta meta{dtype, std::move(sizes)};
  return ctx.Select(
      meta, {}, [](const Index&) { return std::vector<Index>{}; },
      [f](const Index& idx, const Values&) { return f(idx); });
}

ValueExpr I64(const IndexExpr& i) { return ValueExpr::Index(i); }
ValueExpr AsFloat(const ValueExpr& v, DType d) { return ValueExpr::Cast(v, d); }

// One spatial axis: input size `in`, output size `out` (either may be
// symbolic), the optional scale factor, and where the axis sits (2 or 3).
struct Axis {
  IndexExpr in, out;
  std::optional<double> scale;
  int dim;
};

// The source index of nearest for output index `i` (ATen's nearest_idx).
ValueExpr NearestIndex(const Axis& a, const IndexExpr& i) {
  const DType f = DType::kFloat32;
  if (a.in.is_const() && a.out.is_const()) {
    const int64_t in = a.in.value(), out = a.out.value();
    if (out == in) return I64(i);
    if (out == 2 * in) return I64(IndexExpr::FloorDiv(i, IndexExpr::Const(2)));
    const float s = ComputeScale<float>(a.scale, in, out);
    const ValueExpr src = ValueExpr::Cast(
        ValueExpr::Unary(
            UnaryOp::kFloor,
            Bin(BinaryOp::kMul, AsFloat(I64(i), f), ValueExpr::Const(f, s))),
        DType::kInt64);
    return Bin(BinaryOp::kMinimum, src,
               ValueExpr::IntConst(DType::kInt64, in - 1));
  }
  const ValueExpr in = I64(a.in), out = I64(a.out);
  const ValueExpr s =
      a.scale.has_value() && *a.scale > 0
          ? ValueExpr::Const(f, static_cast<float>(1.0 / *a.scale))
          : Bin(BinaryOp::kDiv, AsFloat(in, f), AsFloat(out, f));
  const ValueExpr general =
      Bin(BinaryOp::kMinimum,
          ValueExpr::Cast(
              ValueExpr::Unary(UnaryOp::kFloor,
                               Bin(BinaryOp::kMul, AsFloat(I64(i), f), s)),
              DType::kInt64),
          Bin(BinaryOp::kSub, in, ValueExpr::IntConst(DType::kInt64, 1)));
  const ValueExpr twice =
      Bin(BinaryOp::kMul, in, ValueExpr::IntConst(DType::kInt64, 2));
  return ValueExpr::Where(
      Bin(BinaryOp::kEq, out, in), I64(i),
      ValueExpr::Where(Bin(BinaryOp::kEq, out, twice),
                       I64(IndexExpr::FloorDiv(i, IndexExpr::Const(2))),
                       general));
}

// ATen's compute_source_index_and_lambda for output index `i`, in opmath
// dtype `a_dtype`: {i0, i1, w0, w1} as values.
struct Taps {
  ValueExpr i0, i1, w0, w1;
};
Taps LinearTaps(const Axis& a, const IndexExpr& i, bool align_corners,
                DType a_dtype) {
  const DType k64 = DType::kInt64;
  const ValueExpr in = I64(a.in), out = I64(a.out);
  auto fc = [a_dtype](double v) { return ValueExpr::Const(a_dtype, v); };
  ValueExpr ratio;
  if (a.in.is_const() && a.out.is_const()) {
    const double r = a_dtype == DType::kFloat64
                         ? LinearScale<double>(a.in.value(), a.out.value(),
                                               align_corners, a.scale)
                         : LinearScale<float>(a.in.value(), a.out.value(),
                                              align_corners, a.scale);
    ratio = fc(r);
  } else if (align_corners) {
    const ValueExpr one = ValueExpr::IntConst(k64, 1);
    ratio = ValueExpr::Where(
        Bin(BinaryOp::kGt, out, one),
        Bin(BinaryOp::kDiv, AsFloat(Bin(BinaryOp::kSub, in, one), a_dtype),
            AsFloat(Bin(BinaryOp::kSub, out, one), a_dtype)),
        fc(0));
  } else if (a.scale.has_value() && *a.scale > 0) {
    ratio = a_dtype == DType::kFloat64 ? fc(1.0 / *a.scale)
                                       : fc(static_cast<float>(1.0 / *a.scale));
  } else {
    ratio = Bin(BinaryOp::kDiv, AsFloat(in, a_dtype), AsFloat(out, a_dtype));
  }
  const ValueExpr fi = AsFloat(I64(i), a_dtype);
  ValueExpr real =
      align_corners
          ? Bin(BinaryOp::kMul, ratio, fi)
          : Bin(BinaryOp::kSub,
                Bin(BinaryOp::kMul, ratio, Bin(BinaryOp::kAdd, fi, fc(0.5))),
                fc(0.5));
  if (!align_corners) {
    real = ValueExpr::Where(Bin(BinaryOp::kLt, real, fc(0)), fc(0), real);
  }
  const ValueExpr last = Bin(BinaryOp::kSub, in, ValueExpr::IntConst(k64, 1));
  // ATen floors with floorf, whatever the opmath type.
  const ValueExpr floored = ValueExpr::Cast(
      ValueExpr::Unary(UnaryOp::kFloor, AsFloat(real, DType::kFloat32)), k64);
  const ValueExpr i0 = Bin(BinaryOp::kMinimum, floored, last);
  ValueExpr w1 = Bin(BinaryOp::kSub, real, AsFloat(i0, a_dtype));
  w1 = ValueExpr::Where(Bin(BinaryOp::kLt, w1, fc(0)), fc(0), w1);
  w1 = ValueExpr::Where(Bin(BinaryOp::kGt, w1, fc(1)), fc(1), w1);
  const ValueExpr i1 = Bin(BinaryOp::kAdd, i0,
                           ValueExpr::Cast(Bin(BinaryOp::kLt, i0, last), k64));
  const ValueExpr w0 = Bin(BinaryOp::kSub, fc(1), w1);
  // output size == input size: a copy.
  const ValueExpr same = Bin(BinaryOp::kEq, out, in);
  return {ValueExpr::Where(same, I64(i), i0),
          ValueExpr::Where(same, I64(i), i1), ValueExpr::Where(same, fc(1), w0),
          ValueExpr::Where(same, fc(0), w1)};
}

// source gathered along `dim` (2 or 3) at the int64 value `index` of sizes
// [out_size] (dim 3) or [out_size, 1] (dim 2).
int GatherAxis(LoweringContext& ctx, const Node& node, int source, int index,
               int dim, const TensorMeta& out) {
  return ctx.Gather(
      out, source, index, dim,
      [dim](const Index& idx) {
        return std::pair<Index, Index>{
            dim == 2 ? Index{idx[2], IndexExpr::Const(0)} : Index{idx[3]}, idx};
      },
      absl::StrCat("node '", node.name, "' (", node.target, ")"));
}

Outputs Upsample(LoweringContext& ctx, const Node& node,
                 const std::vector<TensorMeta>& out, bool bilinear) {
  const MetaArgs args = ArgsOf(ctx, node);
  ASSIGN_OR_RETURN(auto a, ReadUpsampleArgs(args, bilinear ? 3 : 2));
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> in_sizes = ctx.value(self).sizes;
  const std::vector<IndexExpr> out_sizes = LoweringContext::Sizes(out[0]);
  for (const IndexExpr& s : out_sizes) {
    if (s.is_const(0)) return Unsupported("empty upsample");
  }
  const Axis h{in_sizes[2], out_sizes[2], UpsampleScale(a.scale_factors, 0), 2};
  const Axis w{in_sizes[3], out_sizes[3], UpsampleScale(a.scale_factors, 1), 3};
  const TensorMeta& o = out[0];
  const DType dtype = o.dtype;
  // Metas of the per-row/per-column values and the half-gathered input.
  const SymShape rows = {o.sizes[2], SymInt(1)}, cols = {o.sizes[3]};
  TensorMeta mid = args.tensor(0);
  mid.sizes[2] = o.sizes[2];
  mid.dtype = dtype;
  if (!bilinear) {
    const int ih = FromIndex(ctx, DType::kInt64, rows, [h](const Index& idx) {
      return NearestIndex(h, idx[0]);
    });
    const int iw = FromIndex(ctx, DType::kInt64, cols, [w](const Index& idx) {
      return NearestIndex(w, idx[0]);
    });
    const int half = GatherAxis(ctx, node, self, ih, 2, mid);
    return std::vector<int>{GatherAxis(ctx, node, half, iw, 3, o)};
  }
  const bool align = args.bool_arg(2);
  const DType ad = dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  auto tap = [&](const Axis& axis, const SymShape& sizes, int which) {
    return FromIndex(ctx, which < 2 ? DType::kInt64 : ad, sizes,
                     [axis, align, ad, which](const Index& idx) {
                       const Taps t = LinearTaps(axis, idx[0], align, ad);
                       return which == 0   ? t.i0
                              : which == 1 ? t.i1
                              : which == 2 ? t.w0
                                           : t.w1;
                     });
  };
  const int h0 = tap(h, rows, 0), h1 = tap(h, rows, 1);
  const int wh0 = tap(h, rows, 2), wh1 = tap(h, rows, 3);
  const int w0 = tap(w, cols, 0), w1 = tap(w, cols, 1);
  const int ww0 = tap(w, cols, 2), ww1 = tap(w, cols, 3);
  const int r0 = GatherAxis(ctx, node, self, h0, 2, mid);
  const int r1 = GatherAxis(ctx, node, self, h1, 2, mid);
  const int x00 = GatherAxis(ctx, node, r0, w0, 3, o);
  const int x01 = GatherAxis(ctx, node, r0, w1, 3, o);
  const int x10 = GatherAxis(ctx, node, r1, w0, 3, o);
  const int x11 = GatherAxis(ctx, node, r1, w1, 3, o);
  const DType cd = ComputeDType(dtype);
  return std::vector<int>{ctx.Pointwise(
      o, {x00, x01, x10, x11, wh0, wh1, ww0, ww1}, [ad, cd](const Values& v) {
        auto x = [&](int k) { return ValueExpr::Cast(v[k], ad); };
        const ValueExpr t0 =
            Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, x(0), v[6]),
                Bin(BinaryOp::kMul, x(1), v[7]));
        const ValueExpr t1 =
            Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, x(2), v[6]),
                Bin(BinaryOp::kMul, x(3), v[7]));
        return ValueExpr::Cast(
            Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, t0, v[4]),
                Bin(BinaryOp::kMul, t1, v[5])),
            cd);
      })};
}

}  // namespace

void AddResampleLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  t["aten.upsample_nearest2d.vec"] = [](LoweringContext& c, const Node& n,
                                        const std::vector<TensorMeta>& o) {
    return Upsample(c, n, o, false);
  };
  t["aten.upsample_bilinear2d.vec"] = [](LoweringContext& c, const Node& n,
                                         const std::vector<TensorMeta>& o) {
    return Upsample(c, n, o, true);
  };
}

}  // namespace guardjit
