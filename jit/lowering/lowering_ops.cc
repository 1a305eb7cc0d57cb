// Per-op lowerings of the pointwise ops, with PyTorch's type promotion (the
// compute dtype is the one the eager kernels compute in), and the table of
// every lowering (views: lowering_views.cc, reductions and normalizations:
// lowering_reductions.cc, cat and constant_pad_nd: lowering_cat_pad.cc).

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {

// upsample_nearest2d/upsample_bilinear2d (lowering_resample.cc).
void AddResampleLowerings(absl::flat_hash_map<std::string, LowerFn>& table);

namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Bin;
using lowering_internal::C;
using lowering_internal::Outputs;
using lowering_internal::Unsupported;
using lowering_internal::Values;

// A unary op computing in the output dtype (integral inputs of floating ops
// are converted first, as the eager kernels do).
LowerFn UnaryLowering(UnaryOp op) {
  return [op](LoweringContext& ctx, const Node& node,
              const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = ComputeDType(out[0].dtype);
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
    const DType d = ComputeDType(out[0].dtype);
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
    const DType d = ComputeDType(out[0].dtype);
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
    if ((op == BinaryOp::kDiv || op == BinaryOp::kPow ||
         op == BinaryOp::kAtan2) &&
        !IsFloating(d)) {
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
  const DType d = ComputeDType(out[0].dtype);
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

// fmod (C: the sign of the dividend) and remainder (Python: the sign of the
// divisor, fmod moved by one divisor where the signs differ), computed as the
// eager kernel computes them. Integers run eagerly: a zero divisor is an
// error there, which a kernel cannot raise.
LowerFn ModLowering(bool python_mod) {
  return [python_mod](LoweringContext& ctx, const Node& node,
                      const std::vector<TensorMeta>& out) -> Outputs {
    const DType d = ComputeDType(out[0].dtype);
    if (!IsFloating(d)) {
      return Unsupported("integral modulo runs eagerly (zero divisors)");
    }
    const int a = ctx.Operand(node.args[0]);
    const int b = ctx.Operand(node.args[1]);
    return std::vector<int>{
        ctx.Pointwise(out[0], {a, b}, [python_mod, d](const Values& v) {
          const ValueExpr divisor = C(v[1], d);
          const ValueExpr mod = Bin(BinaryOp::kFmod, C(v[0], d), divisor);
          if (!python_mod) return mod;
          const ValueExpr zero = ValueExpr::Const(d, 0.0);
          const ValueExpr move =
              Bin(BinaryOp::kAnd, Bin(BinaryOp::kNe, mod, zero),
                  Bin(BinaryOp::kXor, Bin(BinaryOp::kLt, divisor, zero),
                      Bin(BinaryOp::kLt, mod, zero)));
          return ValueExpr::Where(move, Bin(BinaryOp::kAdd, mod, divisor), mod);
        })};
  };
}

// round(x, decimals): scaled by 10^|decimals| in the compute dtype, rounded
// half to even, scaled back (runtime/kernels/unary.cc). float16/bfloat16
// run eagerly: their eager kernel rounds after each step.
Outputs RoundDecimals(LoweringContext& ctx, const Node& node,
                      const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  if (d != DType::kFloat32 && d != DType::kFloat64) {
    return Unsupported("round with decimals of a reduced float runs eagerly");
  }
  const int64_t decimals = ArgsOf(ctx, node).int_arg(1);
  const double scale = std::pow(10.0, std::fabs(static_cast<double>(decimals)));
  return std::vector<int>{
      ctx.Pointwise(out[0], {ctx.Operand(node.args[0])}, [=](const Values& v) {
        const ValueExpr ten_pow = ValueExpr::Const(d, scale);
        const BinaryOp in = decimals < 0 ? BinaryOp::kDiv : BinaryOp::kMul;
        const BinaryOp back = decimals < 0 ? BinaryOp::kMul : BinaryOp::kDiv;
        return Bin(back,
                   ValueExpr::Unary(UnaryOp::kRound, Bin(in, v[0], ten_pow)),
                   ten_pow);
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
  const DType d = ComputeDType(out[0].dtype);
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
  const DType d = ComputeDType(out[0].dtype);
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
// A conversion to float16/bfloat16 rounds there, as the graph asks, even
// where the value is computed on in float32.
Outputs CopyAs(LoweringContext& ctx, const Node& node,
               const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  return std::vector<int>{ctx.Pointwise(
      out[0], {ctx.Operand(node.args[0])},
      [d](const Values& v) { return C(ValueExpr::Cast(v[0], d), d); })};
}

absl::flat_hash_map<std::string, LowerFn> BuildTable() {
  absl::flat_hash_map<std::string, LowerFn> t;
  const std::pair<const char*, UnaryOp> unary[] = {
      {"abs", UnaryOp::kAbs},
      {"neg", UnaryOp::kNeg},
      {"exp", UnaryOp::kExp},
      {"log", UnaryOp::kLog},
      {"log1p", UnaryOp::kLog1p},
      {"log2", UnaryOp::kLog2},
      {"log10", UnaryOp::kLog10},
      {"expm1", UnaryOp::kExpm1},
      {"sqrt", UnaryOp::kSqrt},
      {"rsqrt", UnaryOp::kRsqrt},
      {"sin", UnaryOp::kSin},
      {"cos", UnaryOp::kCos},
      {"tan", UnaryOp::kTan},
      {"asin", UnaryOp::kAsin},
      {"acos", UnaryOp::kAcos},
      {"atan", UnaryOp::kAtan},
      {"sinh", UnaryOp::kSinh},
      {"cosh", UnaryOp::kCosh},
      {"tanh", UnaryOp::kTanh},
      {"asinh", UnaryOp::kAsinh},
      {"acosh", UnaryOp::kAcosh},
      {"atanh", UnaryOp::kAtanh},
      {"sigmoid", UnaryOp::kSigmoid},
      {"erf", UnaryOp::kErf},
      {"reciprocal", UnaryOp::kReciprocal},
      {"relu", UnaryOp::kRelu},
      {"silu", UnaryOp::kSilu},
      {"floor", UnaryOp::kFloor},
      {"ceil", UnaryOp::kCeil},
      {"round", UnaryOp::kRound},
      {"trunc", UnaryOp::kTrunc},
      {"sign", UnaryOp::kSign},
      {"bitwise_not", UnaryOp::kBitwiseNot},
  };
  for (const auto& [name, op] : unary) {
    t[absl::StrCat("aten.", name, ".default")] = UnaryLowering(op);
  }
  t["aten.gelu.default"] = Gelu;
  t["aten.logical_not.default"] = PredicateLowering(UnaryOp::kLogicalNot, true);
  t["aten.isnan.default"] = PredicateLowering(UnaryOp::kIsNan, false);
  t["aten.isinf.default"] = PredicateLowering(UnaryOp::kIsInf, false);
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
    t[name("fmod")] = ModLowering(false);
    t[name("remainder")] = ModLowering(true);
  }
  t["aten.round.decimals"] = RoundDecimals;
  t["aten.div.Tensor_mode"] = DivMode;
  t["aten.div.Scalar_mode"] = DivMode;
  t["aten.pow.Tensor_Tensor"] = BinaryLowering(BinaryOp::kPow);
  t["aten.pow.Scalar"] = BinaryLowering(BinaryOp::kPow);
  t["aten.pow.Tensor_Scalar"] = PowTensorScalar;
  t["aten.atan2.default"] = BinaryLowering(BinaryOp::kAtan2);
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
  AddViewLowerings(t);
  AddReductionLowerings(t);
  AddCatPadLowerings(t);
  AddCreationLowerings(t);
  AddIndexingLowerings(t);
  AddActivationLowerings(t);
  AddPoolingLowerings(t);
  AddResampleLowerings(t);
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
