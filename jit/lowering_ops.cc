// Per-op lowerings: pointwise ops with PyTorch's type promotion (the compute
// dtype is the one the eager kernels compute in), views as index remaps,
// reductions, and softmax/log_softmax/layer_norm as reductions plus
// pointwise ops.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/reduction_args.h"
#include "core/ops/view_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "jit/lowering_context.h"

namespace guardjit {
namespace {

using Values = std::vector<ValueExpr>;
using Outputs = absl::StatusOr<std::vector<int>>;

absl::Status Unsupported(absl::string_view why) {
  return absl::UnimplementedError(why);
}

MetaArgs ArgsOf(const LoweringContext& ctx, const Node& node) {
  return MetaArgs(
      node, [&ctx](ValueRef v) { return ctx.metas()[v.node][v.index]; },
      [](const Scalar& s) {
        return TensorMeta{s.dtype(), {}, Device::Cpu(), true};
      });
}

ValueExpr C(const ValueExpr& x, DType d) { return ValueExpr::Cast(x, d); }
ValueExpr Bin(BinaryOp op, const ValueExpr& a, const ValueExpr& b) {
  return ValueExpr::Binary(op, a, b);
}

// A unary op computing in the output dtype (integral inputs of floating ops
// are converted first, as the eager kernels do).
LowerFn UnaryLowering(UnaryOp op) {
  return [op](LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = out[0].dtype;
    return std::vector<int>{ctx.Pointwise(
        out[0], {ctx.Operand(node.args[0])},
        [op, d](const Values& v) { return ValueExpr::Unary(op, C(v[0], d)); })};
  };
}

Outputs Gelu(LoweringContext& ctx, const Node& node,
             const std::vector<TensorMeta>& out) {
  const bool tanh =
      ArgsOf(ctx, node).optional_string(1).value_or("none") == "tanh";
  const UnaryOp op = tanh ? UnaryOp::kGeluTanh : UnaryOp::kGeluErf;
  return std::vector<int>{ctx.Pointwise(
      out[0], {ctx.Operand(node.args[0])},
      [op](const Values& v) { return ValueExpr::Unary(op, v[0]); })};
}

// Predicates: any input dtype, bool result.
LowerFn PredicateLowering(UnaryOp op, bool cast_to_bool) {
  return [op, cast_to_bool](LoweringContext& ctx, const Node& node,
                            const std::vector<TensorMeta>& out) -> Outputs {
    return std::vector<int>{
        ctx.Pointwise(out[0], {ctx.Operand(node.args[0])},
                      [op, cast_to_bool](const Values& v) {
                        return ValueExpr::Unary(
                            op, cast_to_bool ? C(v[0], DType::kBool) : v[0]);
                      })};
  };
}

// self + alpha * other (alpha negated for sub), in the result dtype.
LowerFn AddSubLowering(bool subtract) {
  return [subtract](LoweringContext& ctx, const Node& node,
                    const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = out[0].dtype;
    const Scalar alpha = ArgsOf(ctx, node).scalar(2);
    const int a = ctx.Operand(node.args[0]);
    const int b = ctx.Operand(node.args[1]);
    return std::vector<int>{ctx.Pointwise(out[0], {a, b}, [=](const Values& v) {
      ValueExpr x = C(v[0], d);
      ValueExpr y = C(v[1], d);
      if (d == DType::kBool) {
        return alpha.to_bool() ? Bin(BinaryOp::kOr, x, y) : x;
      }
      const bool unit =
          alpha.is_float() ? alpha.to_double() == 1.0 : alpha.to_int() == 1;
      if (!unit) y = Bin(BinaryOp::kMul, ScalarConst(alpha, d), y);
      return Bin(subtract ? BinaryOp::kSub : BinaryOp::kAdd, x, y);
    })};
  };
}

// Both operands converted to the result dtype, then `op`; bool maps to the
// logical op where arithmetic has no bool kernel of its own.
LowerFn BinaryLowering(BinaryOp op) {
  return [op](LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = out[0].dtype;
    BinaryOp actual = op;
    if (d == DType::kBool) {
      if (op == BinaryOp::kMul || op == BinaryOp::kMinimum) {
        actual = BinaryOp::kAnd;
      } else if (op == BinaryOp::kMaximum) {
        actual = BinaryOp::kOr;
      } else if (op != BinaryOp::kAnd && op != BinaryOp::kOr &&
                 op != BinaryOp::kXor) {
        return Unsupported("bool arithmetic");
      }
    }
    if ((op == BinaryOp::kDiv || op == BinaryOp::kPow) && !IsFloating(d)) {
      return Unsupported("integral division and power run eagerly");
    }
    const int a = ctx.Operand(node.args[0]);
    const int b = ctx.Operand(node.args[1]);
    return std::vector<int>{
        ctx.Pointwise(out[0], {a, b}, [actual, d](const Values& v) {
          return Bin(actual, C(v[0], d), C(v[1], d));
        })};
  };
}

// div.*_mode with rounding_mode=None is true division; the rounding modes
// run eagerly.
Outputs DivMode(LoweringContext& ctx, const Node& node,
                const std::vector<TensorMeta>& out) {
  if (ArgsOf(ctx, node).optional_string(2).has_value()) {
    return Unsupported("rounding division runs eagerly");
  }
  return BinaryLowering(BinaryOp::kDiv)(ctx, node, out);
}

// pow.Tensor_Scalar: 0.5 and -0.5 are sqrt and rsqrt (as PyTorch's kernel
// special-cases them), 1 and 2 exact.
Outputs PowTensorScalar(LoweringContext& ctx, const Node& node,
                        const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  if (!IsFloating(d)) return Unsupported("integral power runs eagerly");
  const double e = ArgsOf(ctx, node).scalar(1).to_double();
  const int x = ctx.Operand(node.args[0]);
  const int exponent = ctx.Operand(node.args[1]);
  return std::vector<int>{
      ctx.Pointwise(out[0], {x, exponent}, [d, e](const Values& v) {
        ValueExpr base = C(v[0], d);
        if (e == 0.5) return ValueExpr::Unary(UnaryOp::kSqrt, base);
        if (e == -0.5) {
          return Bin(BinaryOp::kDiv, ValueExpr::Const(d, 1.0),
                     ValueExpr::Unary(UnaryOp::kSqrt, base));
        }
        if (e == 1.0) return base;
        if (e == 2.0) return Bin(BinaryOp::kMul, base, base);
        return Bin(BinaryOp::kPow, base, C(v[1], d));
      })};
}

// Comparisons compute in the promoted type of their operands.
LowerFn CompareLowering(BinaryOp op) {
  return [op](LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) -> Outputs {
    const int a = ctx.Operand(node.args[0]);
    const int b = ctx.Operand(node.args[1]);
    const DType compute = ResultType({ctx.MetaOf(a), ctx.MetaOf(b)});
    return std::vector<int>{
        ctx.Pointwise(out[0], {a, b}, [op, compute](const Values& v) {
          return Bin(op, C(v[0], compute), C(v[1], compute));
        })};
  };
}

LowerFn LogicalLowering(BinaryOp op) {
  return [op](LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) -> Outputs {
    const int a = ctx.Operand(node.args[0]);
    const int b = ctx.Operand(node.args[1]);
    return std::vector<int>{
        ctx.Pointwise(out[0], {a, b}, [op](const Values& v) {
          return Bin(op, C(v[0], DType::kBool), C(v[1], DType::kBool));
        })};
  };
}

Outputs Where(LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  std::vector<int> operands;
  for (int i = 0; i < 3; ++i) operands.push_back(ctx.Operand(node.args[i]));
  return std::vector<int>{ctx.Pointwise(out[0], operands, [d](const Values& v) {
    return ValueExpr::Where(C(v[0], DType::kBool), C(v[1], d), C(v[2], d));
  })};
}

// min(max(x, lo), hi) with NaN propagating from any operand; a missing bound
// is left out (the eager kernel's infinities change nothing).
Outputs Clamp(LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out, bool tensor_bounds) {
  const DType d = out[0].dtype;
  if (d == DType::kBool) return Unsupported("bool clamp");
  std::vector<int> operands = {ctx.Operand(node.args[0])};
  const bool has_min = !node.args[1].is_none();
  const bool has_max = !node.args[2].is_none();
  std::optional<Scalar> lo, hi;
  if (tensor_bounds) {
    if (has_min) operands.push_back(ctx.Operand(node.args[1]));
    if (has_max) operands.push_back(ctx.Operand(node.args[2]));
  } else {
    if (has_min) lo = node.args[1].as_scalar();
    if (has_max) hi = node.args[2].as_scalar();
  }
  return std::vector<int>{ctx.Pointwise(out[0], operands, [=](const Values& v) {
    ValueExpr x = C(v[0], d);
    int next = 1;
    if (has_min) {
      ValueExpr bound = tensor_bounds ? C(v[next++], d) : ScalarConst(*lo, d);
      x = Bin(BinaryOp::kMaximum, x, bound);
    }
    if (has_max) {
      ValueExpr bound = tensor_bounds ? C(v[next++], d) : ScalarConst(*hi, d);
      x = Bin(BinaryOp::kMinimum, x, bound);
    }
    return x;
  })};
}

// _to_copy (a dtype change) and clone: a new value, never the input itself.
Outputs CopyAs(LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  return std::vector<int>{
      ctx.Pointwise(out[0], {ctx.Operand(node.args[0])},
                    [d](const Values& v) { return C(v[0], d); })};
}

// ---- views ----

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

// The index remap of `op` for a source that is not memory (a computed
// value): the source's index for an index of the view.
absl::StatusOr<RemapFn> LogicalRemap(ViewOp op, const MetaArgs& args,
                                     const LValue& src,
                                     const std::vector<IndexExpr>& out_sizes) {
  const int in_rank = src.rank();
  const int out_rank = static_cast<int>(out_sizes.size());
  const std::vector<IndexExpr> in_sizes = src.sizes;
  switch (op) {
    case ViewOp::kView:
      return RemapFn([in_sizes, out_sizes](const std::vector<IndexExpr>& idx) {
        const IndexExpr linear = Linearize(idx, out_sizes);
        std::vector<IndexExpr> in(in_sizes.size());
        IndexExpr stride = IndexExpr::Const(1);
        for (int d = static_cast<int>(in_sizes.size()) - 1; d >= 0; --d) {
          in[d] = in_sizes[d].is_const(1)
                      ? IndexExpr::Const(0)
                      : IndexExpr::Mod(IndexExpr::FloorDiv(linear, stride),
                                       in_sizes[d]);
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
      std::optional<Shape> sizes = ConcreteShape(in_sizes);
      if (!sizes.has_value()) return Unsupported("symbolic slice");
      const Shape unit = ContiguousStrides(*sizes);
      ASSIGN_OR_RETURN(ViewGeometry g, ViewOpGeometry(op, args, *sizes, unit));
      ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), in_rank));
      const int64_t start = unit[dim] == 0 ? 0 : g.offset / unit[dim];
      if (op == ViewOp::kSelect) {
        return RemapFn([dim, start](const std::vector<IndexExpr>& idx) {
          std::vector<IndexExpr> in = idx;
          in.insert(in.begin() + dim, IndexExpr::Const(start));
          return in;
        });
      }
      const int64_t step = args.int_arg(4);
      return RemapFn([dim, start, step](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> in = idx;
        in[dim] = IndexExpr::Const(start) + idx[dim] * IndexExpr::Const(step);
        return in;
      });
    }
  }
  return Unsupported("view");
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
  std::optional<Shape> in_sizes = ConcreteShape(src.sizes);
  if (src.kind == LValue::Kind::kBuffer && in_sizes.has_value()) {
    std::optional<ViewGeometry> geometry;
    if (unsafe_view) {
      std::optional<Shape> sizes = ConcreteShape(out_sizes);
      std::optional<Shape> strides =
          sizes ? ComputeViewStrides(*in_sizes, src.strides, *sizes)
                : std::nullopt;
      if (strides.has_value()) geometry = ViewGeometry{*sizes, *strides, 0};
    } else {
      ASSIGN_OR_RETURN(geometry,
                       ViewOpGeometry(op, args, *in_sizes, src.strides));
    }
    if (geometry.has_value()) {
      LValue v = src;
      v.sizes = out_sizes;
      v.strides = geometry->strides;
      v.offset = src.offset + geometry->offset;
      return std::vector<int>{ctx.Add(std::move(v))};
    }
  }
  ASSIGN_OR_RETURN(RemapFn remap, LogicalRemap(op, args, src, out_sizes));
  const int view = ctx.View(source, out_sizes, std::move(remap));
  std::optional<Shape> sizes = ConcreteShape(out_sizes);
  if (sizes.has_value()) {
    ctx.SetViewGeometry(
        view,
        [op, unsafe_view, node_copy = node, out = *sizes](
            IntSpan in_sizes,
            IntSpan in_strides) -> absl::StatusOr<ViewGeometry> {
          if (unsafe_view) {
            std::optional<Shape> strides =
                ComputeViewStrides(in_sizes, in_strides, out);
            if (!strides.has_value()) {
              return absl::FailedPreconditionError("not viewable");
            }
            return ViewGeometry{out, *strides, 0};
          }
          // View ops read only literal arguments.
          const MetaArgs args(
              node_copy, [](ValueRef) { return TensorMeta(); },
              [](const Scalar&) { return TensorMeta(); });
          return ViewOpGeometry(op, args, in_sizes, in_strides);
        });
  }
  return std::vector<int>{view};
}

// ---- reductions ----

enum class ReductionKind { kSum, kMean, kProd, kMax, kMin };

LowerFn ReductionLowering(ReductionKind kind) {
  return [kind](LoweringContext& ctx, const Node& node,
                const std::vector<TensorMeta>& out) -> Outputs {
    const MetaArgs args = ArgsOf(ctx, node);
    const int self = ctx.Operand(node.args[0]);
    const int rank = ctx.value(self).rank();
    ASSIGN_OR_RETURN(std::vector<bool> mask,
                     ReadReductionMask(args, rank, EmptyDims::kReduceAll));
    const int keepdim_index = node.op->schema.ArgIndex("keepdim");
    const bool keepdim = keepdim_index >= 0 && args.bool_arg(keepdim_index);
    const DType d = out[0].dtype;
    const int body = ctx.Pointwise(d, ctx.value(self).sizes, {self},
                                   [d](const Values& v) { return C(v[0], d); });
    CombineOp combine = CombineOp::kSum;
    if (kind == ReductionKind::kProd) combine = CombineOp::kProd;
    if (kind == ReductionKind::kMax) combine = CombineOp::kMax;
    if (kind == ReductionKind::kMin) combine = CombineOp::kMin;
    const int reduced = ctx.Reduce(body, mask, keepdim, combine);
    if (kind != ReductionKind::kMean) return std::vector<int>{reduced};
    int64_t n = 1;
    for (int dim = 0; dim < rank; ++dim) {
      if (!mask[dim]) continue;
      const IndexExpr& size = ctx.value(self).sizes[dim];
      if (!size.is_const()) return Unsupported("mean over a symbolic dim");
      n *= size.value();
    }
    return std::vector<int>{
        ctx.Pointwise(out[0], {reduced}, [d, n](const Values& v) {
          return Bin(BinaryOp::kDiv, v[0],
                     ValueExpr::Const(d, static_cast<double>(n)));
        })};
  };
}

// Elements of `self` a reduction over `mask` combines, if the sizes are
// constants.
std::optional<int64_t> ReducedCount(const LValue& self,
                                    const std::vector<bool>& mask) {
  int64_t n = 1;
  for (int dim = 0; dim < self.rank(); ++dim) {
    if (!mask[dim]) continue;
    if (!self.sizes[dim].is_const()) return std::nullopt;
    n *= self.sizes[dim].value();
  }
  return n;
}

// any/all: every value read as bool (NaN is true), or/and over the dims,
// stored as the result dtype (bool, or uint8 for uint8 input).
LowerFn AnyAllLowering(bool all, EmptyDims empty_dims) {
  return [all, empty_dims](LoweringContext& ctx, const Node& node,
                           const std::vector<TensorMeta>& out) -> Outputs {
    const MetaArgs args = ArgsOf(ctx, node);
    const int self = ctx.Operand(node.args[0]);
    ASSIGN_OR_RETURN(
        std::vector<bool> mask,
        ReadReductionMask(args, ctx.value(self).rank(), empty_dims));
    const int keepdim_index = node.op->schema.ArgIndex("keepdim");
    const bool keepdim = keepdim_index >= 0 && args.bool_arg(keepdim_index);
    const int truth =
        ctx.Pointwise(DType::kBool, ctx.value(self).sizes, {self},
                      [](const Values& v) { return C(v[0], DType::kBool); });
    const int reduced = ctx.Reduce(truth, mask, keepdim,
                                   all ? CombineOp::kMin : CombineOp::kMax);
    const DType d = out[0].dtype;
    return std::vector<int>{ctx.Pointwise(
        out[0], {reduced}, [d](const Values& v) { return C(v[0], d); })};
  };
}

// argmax/argmin over one dim, or over the flattened tensor when dim is None.
LowerFn ArgLowering(CombineOp combine) {
  return [combine](LoweringContext& ctx, const Node& node,
                   const std::vector<TensorMeta>& out) -> Outputs {
    const MetaArgs args = ArgsOf(ctx, node);
    const int self = ctx.Operand(node.args[0]);
    ASSIGN_OR_RETURN(
        std::vector<bool> mask,
        ReadReductionMask(args, ctx.value(self).rank(), EmptyDims::kReduceAll));
    return std::vector<int>{ctx.Reduce(self, mask, args.bool_arg(2), combine)};
  };
}

// var.correction: two-pass, sum((x - mean)^2) / max(0, N - correction), as
// the eager kernel computes it (a zero divisor gives inf or NaN).
Outputs Var(LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  const DType d = out[0].dtype;
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> sizes = ctx.value(self).sizes;
  ASSIGN_OR_RETURN(
      std::vector<bool> mask,
      ReadReductionMask(args, ctx.value(self).rank(), EmptyDims::kReduceAll));
  std::optional<int64_t> n = ReducedCount(ctx.value(self), mask);
  if (!n.has_value()) return Unsupported("var over a symbolic dim");
  const double correction =
      args.optional_scalar(2).value_or(Scalar(int64_t{1})).to_double();
  const double divisor = std::max(0.0, static_cast<double>(*n) - correction);
  const bool keepdim = args.bool_arg(3);
  const int x = ctx.Pointwise(d, sizes, {self},
                              [d](const Values& v) { return C(v[0], d); });
  const int sum = ctx.Reduce(x, mask, true, CombineOp::kSum);
  const double count = static_cast<double>(*n);
  const int square =
      ctx.Pointwise(d, sizes, {x, sum}, [d, count](const Values& v) {
        ValueExpr diff =
            Bin(BinaryOp::kSub, v[0],
                Bin(BinaryOp::kDiv, v[1], ValueExpr::Const(d, count)));
        return Bin(BinaryOp::kMul, diff, diff);
      });
  const int m2 = ctx.Reduce(square, mask, keepdim, CombineOp::kSum);
  return std::vector<int>{
      ctx.Pointwise(out[0], {m2}, [d, divisor](const Values& v) {
        return Bin(BinaryOp::kDiv, v[0], ValueExpr::Const(d, divisor));
      })};
}

// softmax = exp(x - max) / sum(exp(x - max)); log_softmax = x - max -
// log(sum(exp(x - max))), reduced over `dim`, in the output dtype.
LowerFn SoftmaxLowering(bool log) {
  return [log](LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = out[0].dtype;
    const int self = ctx.Operand(node.args[0]);
    const std::vector<IndexExpr> sizes = ctx.value(self).sizes;
    const int rank = static_cast<int>(sizes.size());
    std::vector<bool> mask(rank, false);
    ASSIGN_OR_RETURN(int dim, NormalizeDim(node.args[1].as_int(), rank));
    if (rank > 0) mask[dim] = true;
    const int x = ctx.Pointwise(d, sizes, {self},
                                [d](const Values& v) { return C(v[0], d); });
    const int max = ctx.Reduce(x, mask, true, CombineOp::kMax);
    const int e = ctx.Pointwise(d, sizes, {x, max}, [](const Values& v) {
      return ValueExpr::Unary(UnaryOp::kExp, Bin(BinaryOp::kSub, v[0], v[1]));
    });
    const int sum = ctx.Reduce(e, mask, true, CombineOp::kSum);
    if (log) {
      return std::vector<int>{
          ctx.Pointwise(out[0], {x, max, sum}, [](const Values& v) {
            return Bin(BinaryOp::kSub, Bin(BinaryOp::kSub, v[0], v[1]),
                       ValueExpr::Unary(UnaryOp::kLog, v[2]));
          })};
    }
    return std::vector<int>{ctx.Pointwise(
        out[0], {e, sum},
        [](const Values& v) { return Bin(BinaryOp::kDiv, v[0], v[1]); })};
  };
}

// native_layer_norm -> (y, mean, rstd): two-pass mean and biased variance
// over the trailing normalized dims, rstd = 1 / sqrt(var + eps).
Outputs LayerNorm(LoweringContext& ctx, const Node& node,
                  const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  const MetaArgs args = ArgsOf(ctx, node);
  const int input = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> sizes = ctx.value(input).sizes;
  const int rank = static_cast<int>(sizes.size());
  const int axis = rank - static_cast<int>(args.int_list(1).size());
  std::vector<bool> mask(rank, false);
  int64_t n = 1;
  for (int dim = axis; dim < rank; ++dim) {
    mask[dim] = true;
    if (!sizes[dim].is_const()) return Unsupported("symbolic layer_norm");
    n *= sizes[dim].value();
  }
  const double eps = args.float_arg(4);
  const ValueExpr count = ValueExpr::Const(d, static_cast<double>(n));
  const int x = ctx.Pointwise(d, sizes, {input},
                              [d](const Values& v) { return C(v[0], d); });
  const int sum = ctx.Reduce(x, mask, true, CombineOp::kSum);
  const int mean = ctx.Pointwise(out[1], {sum}, [count](const Values& v) {
    return Bin(BinaryOp::kDiv, v[0], count);
  });
  const int square = ctx.Pointwise(d, sizes, {x, mean}, [](const Values& v) {
    ValueExpr diff = Bin(BinaryOp::kSub, v[0], v[1]);
    return Bin(BinaryOp::kMul, diff, diff);
  });
  const int m2 = ctx.Reduce(square, mask, true, CombineOp::kSum);
  const int rstd =
      ctx.Pointwise(out[2], {m2}, [count, d, eps](const Values& v) {
        ValueExpr var = Bin(BinaryOp::kDiv, v[0], count);
        return Bin(
            BinaryOp::kDiv, ValueExpr::Const(d, 1.0),
            ValueExpr::Unary(UnaryOp::kSqrt, Bin(BinaryOp::kAdd, var,
                                                 ValueExpr::Const(d, eps))));
      });
  std::vector<int> operands = {x, mean, rstd};
  const bool has_weight = !node.args[2].is_none();
  const bool has_bias = !node.args[3].is_none();
  if (has_weight) operands.push_back(ctx.Operand(node.args[2]));
  if (has_bias) operands.push_back(ctx.Operand(node.args[3]));
  const int y = ctx.Pointwise(out[0], operands, [=](const Values& v) {
    ValueExpr r = Bin(BinaryOp::kMul, Bin(BinaryOp::kSub, v[0], v[1]), v[2]);
    int next = 3;
    if (has_weight) r = Bin(BinaryOp::kMul, r, C(v[next++], d));
    if (has_bias) r = Bin(BinaryOp::kAdd, r, C(v[next++], d));
    return r;
  });
  return std::vector<int>{y, mean, rstd};
}

absl::flat_hash_map<std::string, LowerFn> BuildTable() {
  absl::flat_hash_map<std::string, LowerFn> t;
  const std::pair<const char*, UnaryOp> unary[] = {
      {"abs", UnaryOp::kAbs},
      {"neg", UnaryOp::kNeg},
      {"exp", UnaryOp::kExp},
      {"log", UnaryOp::kLog},
      {"log1p", UnaryOp::kLog1p},
      {"sqrt", UnaryOp::kSqrt},
      {"rsqrt", UnaryOp::kRsqrt},
      {"sin", UnaryOp::kSin},
      {"cos", UnaryOp::kCos},
      {"tanh", UnaryOp::kTanh},
      {"sigmoid", UnaryOp::kSigmoid},
      {"erf", UnaryOp::kErf},
      {"reciprocal", UnaryOp::kReciprocal},
      {"relu", UnaryOp::kRelu},
      {"silu", UnaryOp::kSilu},
      {"floor", UnaryOp::kFloor},
      {"ceil", UnaryOp::kCeil},
      {"round", UnaryOp::kRound},
      {"sign", UnaryOp::kSign},
      {"bitwise_not", UnaryOp::kBitwiseNot},
  };
  for (const auto& [name, op] : unary) {
    t[absl::StrCat("aten.", name, ".default")] = UnaryLowering(op);
  }
  t["aten.gelu.default"] = Gelu;
  t["aten.logical_not.default"] = PredicateLowering(UnaryOp::kLogicalNot, true);
  t["aten.isnan.default"] = PredicateLowering(UnaryOp::kIsNan, false);
  for (const char* overload : {"Tensor", "Scalar"}) {
    auto name = [&](const char* op) {
      return absl::StrCat("aten.", op, ".", overload);
    };
    t[name("add")] = AddSubLowering(false);
    t[name("sub")] = AddSubLowering(true);
    t[name("mul")] = BinaryLowering(BinaryOp::kMul);
    t[name("div")] = BinaryLowering(BinaryOp::kDiv);
    t[name("eq")] = CompareLowering(BinaryOp::kEq);
    t[name("ne")] = CompareLowering(BinaryOp::kNe);
    t[name("lt")] = CompareLowering(BinaryOp::kLt);
    t[name("le")] = CompareLowering(BinaryOp::kLe);
    t[name("gt")] = CompareLowering(BinaryOp::kGt);
    t[name("ge")] = CompareLowering(BinaryOp::kGe);
    t[name("bitwise_and")] = BinaryLowering(BinaryOp::kAnd);
    t[name("bitwise_or")] = BinaryLowering(BinaryOp::kOr);
    t[name("bitwise_xor")] = BinaryLowering(BinaryOp::kXor);
  }
  t["aten.div.Tensor_mode"] = DivMode;
  t["aten.div.Scalar_mode"] = DivMode;
  t["aten.pow.Tensor_Tensor"] = BinaryLowering(BinaryOp::kPow);
  t["aten.pow.Scalar"] = BinaryLowering(BinaryOp::kPow);
  t["aten.pow.Tensor_Scalar"] = PowTensorScalar;
  t["aten.maximum.default"] = BinaryLowering(BinaryOp::kMaximum);
  t["aten.minimum.default"] = BinaryLowering(BinaryOp::kMinimum);
  t["aten.logical_and.default"] = LogicalLowering(BinaryOp::kAnd);
  t["aten.logical_or.default"] = LogicalLowering(BinaryOp::kOr);
  t["aten.logical_xor.default"] = LogicalLowering(BinaryOp::kXor);
  t["aten.where.self"] = Where;
  t["aten.clamp.default"] = [](LoweringContext& c, const Node& n,
                               const std::vector<TensorMeta>& o) {
    return Clamp(c, n, o, false);
  };
  t["aten.clamp.Tensor"] = [](LoweringContext& c, const Node& n,
                              const std::vector<TensorMeta>& o) {
    return Clamp(c, n, o, true);
  };
  t["aten._to_copy.default"] = CopyAs;
  t["aten.clone.default"] = CopyAs;
  for (const auto& [target, op] : ViewTargets()) {
    t[target] = [](LoweringContext& c, const Node& n,
                   const std::vector<TensorMeta>& o) {
      return ViewLowering(c, n, o, false);
    };
  }
  t["aten._unsafe_view.default"] = [](LoweringContext& c, const Node& n,
                                      const std::vector<TensorMeta>& o) {
    return ViewLowering(c, n, o, true);
  };
  const std::pair<const char*, ReductionKind> reductions[] = {
      {"aten.sum.default", ReductionKind::kSum},
      {"aten.sum.dim_IntList", ReductionKind::kSum},
      {"aten.mean.default", ReductionKind::kMean},
      {"aten.mean.dim", ReductionKind::kMean},
      {"aten.prod.default", ReductionKind::kProd},
      {"aten.prod.dim_int", ReductionKind::kProd},
      {"aten.amax.default", ReductionKind::kMax},
      {"aten.amin.default", ReductionKind::kMin},
  };
  for (const auto& [target, kind] : reductions) {
    t[target] = ReductionLowering(kind);
  }
  t["aten.var.correction"] = Var;
  t["aten.argmax.default"] = ArgLowering(CombineOp::kArgMax);
  t["aten.argmin.default"] = ArgLowering(CombineOp::kArgMin);
  t["aten.any.default"] = AnyAllLowering(false, EmptyDims::kReduceAll);
  t["aten.any.dim"] = AnyAllLowering(false, EmptyDims::kReduceAll);
  t["aten.any.dims"] = AnyAllLowering(false, EmptyDims::kReduceNone);
  t["aten.all.default"] = AnyAllLowering(true, EmptyDims::kReduceAll);
  t["aten.all.dim"] = AnyAllLowering(true, EmptyDims::kReduceAll);
  t["aten.all.dims"] = AnyAllLowering(true, EmptyDims::kReduceNone);
  t["aten._softmax.default"] = SoftmaxLowering(false);
  t["aten._log_softmax.default"] = SoftmaxLowering(true);
  t["aten.native_layer_norm.default"] = LayerNorm;
  return t;
}

}  // namespace

const LowerFn* FindLowering(absl::string_view target) {
  static const auto* table =
      new absl::flat_hash_map<std::string, LowerFn>(BuildTable());
  auto it = table->find(target);
  return it == table->end() ? nullptr : &it->second;
}

}  // namespace guardjit
