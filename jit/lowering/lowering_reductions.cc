// Lowerings of the reductions (sum, mean, prod, amax/amin, argmax/argmin,
// max.dim/min.dim, var, any/all) and of softmax, log_softmax, layer_norm and
// group_norm as reductions plus pointwise ops; inference batch norm (no
// reduction: running stats) is pointwise.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/reduction_args.h"
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

enum class ReductionKind { kSum, kMean, kProd, kMax, kMin };

// Elements of `self` a reduction over `mask` combines.
IndexExpr ReducedCount(const LValue& self, const std::vector<bool>& mask) {
  IndexExpr n = IndexExpr::Const(1);
  for (int dim = 0; dim < self.rank(); ++dim) {
    if (mask[dim]) n = n * self.sizes[dim];
  }
  return n;
}

// `n` as a value of floating dtype `d`: a constant where it is one, else
// computed from the kernel's size parameters.
ValueExpr CountValue(const IndexExpr& n, DType d) {
  if (n.is_const()) return ValueExpr::Const(d, static_cast<double>(n.value()));
  return C(ValueExpr::Index(n), d);
}

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
    const DType d = ComputeDType(out[0].dtype);
    const int body = ctx.Pointwise(d, ctx.value(self).sizes, {self},
                                   [d](const Values& v) { return C(v[0], d); });
    CombineOp combine = CombineOp::kSum;
    if (kind == ReductionKind::kProd) combine = CombineOp::kProd;
    if (kind == ReductionKind::kMax) combine = CombineOp::kMax;
    if (kind == ReductionKind::kMin) combine = CombineOp::kMin;
    const int reduced = ctx.Reduce(body, mask, keepdim, combine);
    if (kind != ReductionKind::kMean) {
      if (out[0].dtype == d) return std::vector<int>{reduced};
      // float16/bfloat16: accumulated in float32, rounded when stored.
      return std::vector<int>{ctx.Pointwise(
          out[0], {reduced}, [](const Values& v) { return v[0]; })};
    }
    const ValueExpr n = CountValue(ReducedCount(ctx.value(self), mask), d);
    return std::vector<int>{ctx.Pointwise(
        out[0], {reduced},
        [n](const Values& v) { return Bin(BinaryOp::kDiv, v[0], n); })};
  };
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
    const DType d = ComputeDType(out[0].dtype);
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

// var.correction and var.dim: two-pass, sum((x - mean)^2) / max(0, N -
// correction), as the eager kernel computes it (a zero divisor gives inf or
// NaN).
Outputs VarWith(LoweringContext& ctx, const Node& node,
                const std::vector<TensorMeta>& out, double correction,
                bool keepdim) {
  const MetaArgs args = ArgsOf(ctx, node);
  const DType d = ComputeDType(out[0].dtype);
  const int self = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> sizes = ctx.value(self).sizes;
  ASSIGN_OR_RETURN(
      std::vector<bool> mask,
      ReadReductionMask(args, ctx.value(self).rank(), EmptyDims::kReduceAll));
  const IndexExpr n = ReducedCount(ctx.value(self), mask);
  const ValueExpr count = CountValue(n, d);
  const ValueExpr divisor =
      n.is_const()
          ? ValueExpr::Const(
                d, std::max(0.0, static_cast<double>(n.value()) - correction))
          : Bin(BinaryOp::kMaximum, ValueExpr::Const(d, 0.0),
                Bin(BinaryOp::kSub, count, ValueExpr::Const(d, correction)));
  const int x = ctx.Pointwise(d, sizes, {self},
                              [d](const Values& v) { return C(v[0], d); });
  const int sum = ctx.Reduce(x, mask, true, CombineOp::kSum);
  const int square =
      ctx.Pointwise(d, sizes, {x, sum}, [count](const Values& v) {
        ValueExpr diff =
            Bin(BinaryOp::kSub, v[0], Bin(BinaryOp::kDiv, v[1], count));
        return Bin(BinaryOp::kMul, diff, diff);
      });
  const int m2 = ctx.Reduce(square, mask, keepdim, CombineOp::kSum);
  return std::vector<int>{
      ctx.Pointwise(out[0], {m2}, [divisor](const Values& v) {
        return Bin(BinaryOp::kDiv, v[0], divisor);
      })};
}

Outputs Var(LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  return VarWith(
      ctx, node, out,
      args.optional_scalar(2).value_or(Scalar(int64_t{1})).to_double(),
      args.bool_arg(3));
}

// var.dim(self, dim, unbiased, keepdim): unbiased is correction 1.
Outputs VarDim(LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  return VarWith(ctx, node, out, args.bool_arg(2) ? 1.0 : 0.0,
                 args.bool_arg(3));
}

// max.dim/min.dim -> (values, indices): an amax/amin and an argmax/argmin
// over the one dim (NaN propagates to the values; the index is the first
// NaN's, else the first extreme's, as the eager kernel picks).
LowerFn MinMaxDimLowering(bool max) {
  return [max](LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) -> Outputs {
    if (out[0].dtype == DType::kBool) {
      return Unsupported("max/min.dim of bool runs eagerly");
    }
    const MetaArgs args = ArgsOf(ctx, node);
    const int self = ctx.Operand(node.args[0]);
    ASSIGN_OR_RETURN(
        std::vector<bool> mask,
        ReadReductionMask(args, ctx.value(self).rank(), EmptyDims::kReduceAll));
    const bool keepdim = args.bool_arg(2);
    const DType d = ComputeDType(out[0].dtype);
    const int body = ctx.Pointwise(d, ctx.value(self).sizes, {self},
                                   [d](const Values& v) { return C(v[0], d); });
    int values = ctx.Reduce(body, mask, keepdim,
                            max ? CombineOp::kMax : CombineOp::kMin);
    if (out[0].dtype != d) {
      values =
          ctx.Pointwise(out[0], {values}, [](const Values& v) { return v[0]; });
    }
    const int indices = ctx.Reduce(
        self, mask, keepdim, max ? CombineOp::kArgMax : CombineOp::kArgMin);
    return std::vector<int>{values, indices};
  };
}

// softmax = exp(x - max) * (1 / sum(exp(x - max))); log_softmax = x - max -
// log(sum(exp(x - max))), reduced over `dim`, in the output dtype.
LowerFn SoftmaxLowering(bool log) {
  return [log](LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = ComputeDType(out[0].dtype);
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
    // Times the reciprocal, as ATen's vectorized softmax does: the division
    // is loop-invariant and hoisted, leaving one multiply per element.
    return std::vector<int>{
        ctx.Pointwise(out[0], {e, sum}, [d](const Values& v) {
          return Bin(BinaryOp::kMul, v[0],
                     Bin(BinaryOp::kDiv, ValueExpr::Const(d, 1.0), v[1]));
        })};
  };
}

// native_layer_norm -> (y, mean, rstd): two-pass mean and biased variance
// over the trailing normalized dims, rstd = 1 / sqrt(var + eps).
Outputs LayerNorm(LoweringContext& ctx, const Node& node,
                  const std::vector<TensorMeta>& out) {
  const DType d = ComputeDType(out[0].dtype);
  const MetaArgs args = ArgsOf(ctx, node);
  const int input = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> sizes = ctx.value(input).sizes;
  const int rank = static_cast<int>(sizes.size());
  const int axis = rank - static_cast<int>(args.int_list(1).size());
  std::vector<bool> mask(rank, false);
  for (int dim = axis; dim < rank; ++dim) mask[dim] = true;
  const double eps = args.float_arg(4);
  const ValueExpr count = CountValue(ReducedCount(ctx.value(input), mask), d);
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

// Batch norm in evaluation mode: per channel alpha = weight / sqrt(var +
// eps) and beta = bias - mean * alpha, out = x * alpha + beta (the eager
// kernel's folding), the per-channel tensors viewed as (C, 1, ..., 1);
// save_mean and save_invstd are empty. Training (batch statistics) runs
// eagerly.
LowerFn BatchNormLowering(int running_mean, int training_at, int eps_at) {
  return [=](LoweringContext& ctx, const Node& node,
             const std::vector<TensorMeta>& out) -> Outputs {
    const MetaArgs args = ArgsOf(ctx, node);
    if (training_at >= 0 && args.bool_arg(training_at)) {
      return Unsupported("batch norm in training mode runs eagerly");
    }
    const DType d = ComputeDType(out[0].dtype);
    const double eps = args.float_arg(eps_at);
    const int input = ctx.Operand(node.args[0]);
    const std::vector<IndexExpr> sizes = ctx.value(input).sizes;
    const int rank = static_cast<int>(sizes.size());
    auto per_channel = [&](const Arg& arg) {
      const int value = ctx.Operand(arg);
      if (rank == 2) return value;
      std::vector<IndexExpr> channel(rank - 1, IndexExpr::Const(1));
      channel[0] = sizes[1];
      return ctx.View(value, channel, [](const std::vector<IndexExpr>& idx) {
        return std::vector<IndexExpr>{idx[0]};
      });
    };
    const bool has_weight = !node.args[1].is_none();
    const bool has_bias = !node.args[2].is_none();
    std::vector<int> operands = {input, per_channel(node.args[running_mean]),
                                 per_channel(node.args[running_mean + 1])};
    if (has_weight) operands.push_back(per_channel(node.args[1]));
    if (has_bias) operands.push_back(per_channel(node.args[2]));
    const int y = ctx.Pointwise(out[0], operands, [=](const Values& v) {
      ValueExpr alpha =
          Bin(BinaryOp::kDiv, ValueExpr::Const(d, 1.0),
              ValueExpr::Unary(UnaryOp::kSqrt, Bin(BinaryOp::kAdd, C(v[2], d),
                                                   ValueExpr::Const(d, eps))));
      int next = 3;
      if (has_weight) alpha = Bin(BinaryOp::kMul, alpha, C(v[next++], d));
      ValueExpr beta = Bin(BinaryOp::kMul, C(v[1], d), alpha);
      beta = has_bias ? Bin(BinaryOp::kSub, C(v[next], d), beta)
                      : ValueExpr::Unary(UnaryOp::kNeg, beta);
      return Bin(BinaryOp::kAdd, Bin(BinaryOp::kMul, C(v[0], d), alpha), beta);
    });
    std::vector<int> results = {y};
    for (int k = 1; k < 3; ++k) {
      const DType stats = out[k].dtype;
      results.push_back(ctx.Pointwise(out[k], {}, [stats](const Values&) {
        return ValueExpr::Const(ComputeDType(stats), 0.0);
      }));
    }
    return results;
  };
}

// native_group_norm -> (y, mean, rstd) for float32/float64: the input
// (N, C, *) viewed as (N, G, C / G, *), two-pass mean and biased variance
// over all but the first two dims, rstd = 1 / sqrt(var + eps); y in the
// input's shape reads its group's mean and rstd (channel / (C / G)) and the
// per-channel weight and bias. Reduced floats (float32 stats) and empty
// groups run eagerly.
Outputs GroupNorm(LoweringContext& ctx, const Node& node,
                  const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  if ((d != DType::kFloat32 && d != DType::kFloat64) || out[1].dtype != d) {
    return Unsupported("group norm of a reduced float runs eagerly");
  }
  const MetaArgs args = ArgsOf(ctx, node);
  const int64_t group = args.int_arg(6);
  const double eps = args.float_arg(7);
  const int input = ctx.Operand(node.args[0]);
  const std::vector<IndexExpr> sizes = ctx.value(input).sizes;
  const int rank = static_cast<int>(sizes.size());
  for (const IndexExpr& size : sizes) {
    if (size.is_const(0)) return Unsupported("empty group norm");
  }
  const IndexExpr per_group =
      IndexExpr::FloorDiv(sizes[1], IndexExpr::Const(group));
  // x viewed as (N, G, C / G, *).
  std::vector<IndexExpr> split = {sizes[0], IndexExpr::Const(group), per_group};
  split.insert(split.end(), sizes.begin() + 2, sizes.end());
  const int x = ctx.Pointwise(d, sizes, {input},
                              [d](const Values& v) { return C(v[0], d); });
  const int grouped =
      ctx.View(x, split, [per_group](const std::vector<IndexExpr>& idx) {
        std::vector<IndexExpr> at = {idx[0], idx[1] * per_group + idx[2]};
        at.insert(at.end(), idx.begin() + 3, idx.end());
        return at;
      });
  std::vector<bool> mask(rank + 1, true);
  mask[0] = mask[1] = false;
  IndexExpr n = per_group;
  for (int dim = 2; dim < rank; ++dim) n = n * sizes[dim];
  const ValueExpr count = CountValue(n, d);
  const int sum = ctx.Reduce(grouped, mask, false, CombineOp::kSum);
  const int mean = ctx.Pointwise(out[1], {sum}, [count](const Values& v) {
    return Bin(BinaryOp::kDiv, v[0], count);
  });
  // A (N, G) statistic broadcast over the grouped view or the input.
  std::vector<IndexExpr> grouped_stat(rank + 1, IndexExpr::Const(1));
  grouped_stat[0] = sizes[0];
  grouped_stat[1] = IndexExpr::Const(group);
  const int mean_grouped =
      ctx.View(mean, grouped_stat, [](const std::vector<IndexExpr>& idx) {
        return std::vector<IndexExpr>{idx[0], idx[1]};
      });
  const int square =
      ctx.Pointwise(d, split, {grouped, mean_grouped}, [](const Values& v) {
        ValueExpr diff = Bin(BinaryOp::kSub, v[0], v[1]);
        return Bin(BinaryOp::kMul, diff, diff);
      });
  const int m2 = ctx.Reduce(square, mask, false, CombineOp::kSum);
  const int rstd =
      ctx.Pointwise(out[2], {m2}, [count, d, eps](const Values& v) {
        ValueExpr var = Bin(BinaryOp::kDiv, v[0], count);
        return Bin(
            BinaryOp::kDiv, ValueExpr::Const(d, 1.0),
            ValueExpr::Unary(UnaryOp::kSqrt, Bin(BinaryOp::kAdd, var,
                                                 ValueExpr::Const(d, eps))));
      });
  std::vector<IndexExpr> channel_stat(rank, IndexExpr::Const(1));
  channel_stat[0] = sizes[0];
  channel_stat[1] = sizes[1];
  auto per_group_of_channel = [&](int stat) {
    return ctx.View(stat, channel_stat,
                    [per_group](const std::vector<IndexExpr>& idx) {
                      return std::vector<IndexExpr>{
                          idx[0], IndexExpr::FloorDiv(idx[1], per_group)};
                    });
  };
  // weight/bias (C) as (C, 1, ..., 1), aligned with dim 1 of the input.
  auto per_channel = [&](const Arg& arg) {
    const int value = ctx.Operand(arg);
    if (rank == 2) return value;
    std::vector<IndexExpr> channel(rank - 1, IndexExpr::Const(1));
    channel[0] = sizes[1];
    return ctx.View(value, channel, [](const std::vector<IndexExpr>& idx) {
      return std::vector<IndexExpr>{idx[0]};
    });
  };
  std::vector<int> operands = {x, per_group_of_channel(mean),
                               per_group_of_channel(rstd)};
  const bool has_weight = !node.args[1].is_none();
  const bool has_bias = !node.args[2].is_none();
  if (has_weight) operands.push_back(per_channel(node.args[1]));
  if (has_bias) operands.push_back(per_channel(node.args[2]));
  const int y = ctx.Pointwise(out[0], operands, [=](const Values& v) {
    ValueExpr r = Bin(BinaryOp::kMul, Bin(BinaryOp::kSub, v[0], v[1]), v[2]);
    int next = 3;
    if (has_weight) r = Bin(BinaryOp::kMul, r, C(v[next++], d));
    if (has_bias) r = Bin(BinaryOp::kAdd, r, C(v[next++], d));
    return r;
  });
  return std::vector<int>{y, mean, rstd};
}

}  // namespace

void AddReductionLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
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
  t["aten.var.dim"] = VarDim;
  t["aten.max.dim"] = MinMaxDimLowering(true);
  t["aten.min.dim"] = MinMaxDimLowering(false);
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
  t["aten.native_group_norm.default"] = GroupNorm;
  t["aten._native_batch_norm_legit_no_training.default"] =
      BatchNormLowering(3, -1, 6);
  t["aten._native_batch_norm_legit.default"] = BatchNormLowering(3, 5, 7);
}

}  // namespace guardjit
