// Lowerings of the parameterized activations (hardtanh, leaky_relu, elu),
// pointwise in the compute dtype with the constants the eager kernel uses
// (runtime/kernels/activation.cc).

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/scalar.h"
#include "jit/lowering/lowering_context.h"

namespace guardjit {
namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Bin;
using lowering_internal::C;
using lowering_internal::Outputs;
using lowering_internal::Values;

// A floating parameter as the eager kernels hold it: in the compute dtype,
// not rounded to float16/bfloat16 first.
ValueExpr Const(DType d, double value) {
  return ValueExpr::Const(ComputeDType(d), value);
}

// min(max(x, lo), hi), NaN-propagating; integral inputs read the bounds as
// int64 first.
Outputs Hardtanh(LoweringContext& ctx, const Node& node,
                 const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  const MetaArgs args = ArgsOf(ctx, node);
  Scalar lo = args.scalar(1), hi = args.scalar(2);
  if (!IsFloating(d)) {
    lo = Scalar(lo.to_int());
    hi = Scalar(hi.to_int());
  }
  return std::vector<int>{
      ctx.Pointwise(out[0], {ctx.Operand(node.args[0])}, [=](const Values& v) {
        const ValueExpr x = C(v[0], d);
        return Bin(BinaryOp::kMinimum,
                   Bin(BinaryOp::kMaximum, x, ScalarConst(lo, d)),
                   ScalarConst(hi, d));
      })};
}

Outputs LeakyRelu(LoweringContext& ctx, const Node& node,
                  const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  const double slope = ArgsOf(ctx, node).scalar(1).to_double();
  return std::vector<int>{
      ctx.Pointwise(out[0], {ctx.Operand(node.args[0])}, [=](const Values& v) {
        const ValueExpr x = C(v[0], d);
        const ValueExpr zero = ValueExpr::Const(ComputeDType(d), 0.0);
        return ValueExpr::Where(Bin(BinaryOp::kGt, x, zero), x,
                                Bin(BinaryOp::kMul, x, Const(d, slope)));
      })};
}

Outputs Elu(LoweringContext& ctx, const Node& node,
            const std::vector<TensorMeta>& out) {
  const DType d = out[0].dtype;
  const MetaArgs args = ArgsOf(ctx, node);
  const double alpha = args.scalar(1).to_double();
  const double scale = args.scalar(2).to_double();
  const double neg_coef = alpha * scale, pos_coef = scale,
               in_coef = args.scalar(3).to_double();
  return std::vector<int>{
      ctx.Pointwise(out[0], {ctx.Operand(node.args[0])}, [=](const Values& v) {
        const ValueExpr x = C(v[0], d);
        const ValueExpr zero = ValueExpr::Const(ComputeDType(d), 0.0);
        const ValueExpr negative =
            Bin(BinaryOp::kMul,
                ValueExpr::Unary(UnaryOp::kExpm1,
                                 Bin(BinaryOp::kMul, x, Const(d, in_coef))),
                Const(d, neg_coef));
        return ValueExpr::Where(Bin(BinaryOp::kLe, x, zero), negative,
                                Bin(BinaryOp::kMul, x, Const(d, pos_coef)));
      })};
}

}  // namespace

void AddActivationLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  t["aten.hardtanh.default"] = Hardtanh;
  t["aten.leaky_relu.default"] = LeakyRelu;
  t["aten.elu.default"] = Elu;
}

}  // namespace guardjit
