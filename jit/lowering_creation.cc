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
#include "jit/lowering_context.h"
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
}

}  // namespace guardjit
