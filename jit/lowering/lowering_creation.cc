// Lowerings of the factory ops (full, scalar_tensor, arange): kernels that
// compute their values in place, so a factory feeding pointwise ops fuses
// into them. Each value is the one the eager kernel writes
// (runtime/kernels/creation.cc); the shape rules have checked the dtype,
// sizes and that the values convert without overflow.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/scalar.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering_context.h"
#include "runtime/convert.h"

namespace guardjit {
namespace {

using lowering_internal::ArgsOf;
using lowering_internal::Bin;
using lowering_internal::Outputs;
using lowering_internal::Values;

Outputs Filled(LoweringContext& ctx, const TensorMeta& out,
               const Scalar& value) {
  const DType d = out.dtype;
  return std::vector<int>{ctx.Pointwise(
      out, {}, [value, d](const Values&) { return ScalarConst(value, d); })};
}

// The eager kernel's ScalarTo<int64_t>.
int64_t ToInt64(const Scalar& s) {
  if (s.is_bool()) return Convert<int64_t>(s.to_bool());
  if (s.is_int()) return s.to_int();
  return Convert<int64_t>(s.to_double());
}

// out[i] = start + i * step in ATen's accumulation type: double for float32
// and float64, float for float16/bfloat16 (rounded when stored), int64 with
// wrapping for integers (truncated when stored).
LowerFn ArangeLowering(int start_at, int step_at) {
  return [=](LoweringContext& ctx, const Node& node,
             const std::vector<TensorMeta>& out) -> Outputs {
    const MetaArgs args = ArgsOf(ctx, node);
    const Scalar start =
        start_at >= 0 ? args.scalar(start_at) : Scalar(int64_t{0});
    const Scalar step =
        step_at >= 0 ? args.scalar(step_at) : Scalar(int64_t{1});
    const DType d = out[0].dtype;
    DType acc = DType::kInt64;
    if (IsFloating(d)) {
      acc = ComputeDType(d) != d ? DType::kFloat32 : DType::kFloat64;
    }
    ValueExpr first, stride;
    if (acc == DType::kInt64) {
      first = ValueExpr::IntConst(acc, ToInt64(start));
      stride = ValueExpr::IntConst(acc, ToInt64(step));
    } else {
      first = ValueExpr::Const(acc, start.to_double());
      stride = ValueExpr::Const(acc, step.to_double());
    }
    return std::vector<int>{ctx.Select(
        out[0], {},
        [](const std::vector<IndexExpr>&) {
          return std::vector<std::vector<IndexExpr>>{};
        },
        [=](const std::vector<IndexExpr>& idx, const Values&) {
          const ValueExpr i = ValueExpr::Cast(ValueExpr::Index(idx[0]), acc);
          return ValueExpr::Cast(
              Bin(BinaryOp::kAdd, first, Bin(BinaryOp::kMul, stride, i)),
              ComputeDType(d));
        })};
  };
}

// copy: src broadcast to self's shape, converted to self's dtype.
Outputs CopyLowering(LoweringContext& ctx, const Node& node,
                     const std::vector<TensorMeta>& out) {
  const int src = ctx.Operand(node.args[1]);
  const DType d = ComputeDType(out[0].dtype);
  return std::vector<int>{ctx.Pointwise(out[0], {src}, [d](const Values& v) {
    return ValueExpr::Cast(v[0], d);
  })};
}

// native_dropout without random numbers (the shape rule refused the rest):
// the input and an all-true mask, or for p == 1 in training the eager
// kernel's input * 0 * 0 (in the compute dtype) and an all-false mask.
Outputs NativeDropoutLowering(LoweringContext& ctx, const Node& node,
                              const std::vector<TensorMeta>& out) {
  const MetaArgs args = ArgsOf(ctx, node);
  const bool train = args.optional_bool(2).value_or(true);
  const bool drop_all = train && args.float_arg(1) == 1.0;
  const int self = ctx.Operand(node.args[0]);
  const DType d = ComputeDType(out[0].dtype);
  const int result =
      ctx.Pointwise(out[0], {self}, [d, drop_all](const Values& v) {
        const ValueExpr x = ValueExpr::Cast(v[0], d);
        if (!drop_all) return x;
        if (d == DType::kBool) return ValueExpr::IntConst(d, 0);
        const ValueExpr zero = IsFloating(d) ? ValueExpr::Const(d, 0.0)
                                             : ValueExpr::IntConst(d, 0);
        return Bin(BinaryOp::kMul, Bin(BinaryOp::kMul, x, zero), zero);
      });
  ASSIGN_OR_RETURN(std::vector<int> mask,
                   Filled(ctx, out[1], Scalar(!drop_all)));
  return std::vector<int>{result, mask[0]};
}

}  // namespace

void AddCreationLowerings(absl::flat_hash_map<std::string, LowerFn>& t) {
  t["aten.full.default"] = [](LoweringContext& c, const Node& n,
                              const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], ArgsOf(c, n).scalar(1));
  };
  t["aten.full_like.default"] = [](LoweringContext& c, const Node& n,
                                   const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], ArgsOf(c, n).scalar(1));
  };
  t["aten.scalar_tensor.default"] = [](LoweringContext& c, const Node& n,
                                       const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], ArgsOf(c, n).scalar(0));
  };
  t["aten.arange.default"] = ArangeLowering(-1, -1);
  t["aten.arange.start"] = ArangeLowering(0, -1);
  t["aten.arange.start_step"] = ArangeLowering(0, 2);
  t["aten.fill.Scalar"] = [](LoweringContext& c, const Node& n,
                             const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], ArgsOf(c, n).scalar(1));
  };
  // ATen leaves empty's values unspecified; guardjit writes zeros, as the
  // eager kernels do. empty_strided's strides do not change the values.
  t["aten.empty.memory_format"] = [](LoweringContext& c, const Node&,
                                     const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], Scalar(int64_t{0}));
  };
  t["aten.empty_strided.default"] = [](LoweringContext& c, const Node&,
                                       const std::vector<TensorMeta>& o) {
    return Filled(c, o[0], Scalar(int64_t{0}));
  };
  t["aten.copy.default"] = CopyLowering;
  t["aten.native_dropout.default"] = NativeDropoutLowering;
}

}  // namespace guardjit
