#include "jit/lowering/loop_ir.h"

#include "gtest/gtest.h"
#include "runtime/index_expr.h"

namespace guardjit {
namespace {

using E = IndexExpr;

// A kernel written by hand: a row sum with an epilogue, one size parameter.
Kernel RowNormalize() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 1;
  const E n = E::Size(0);
  k.outer = {{0, E::Const(4)}};
  const ValueExpr x1 =
      ValueExpr::Load(0, DType::kFloat32, E::Var(0) * n + E::Var(1));
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.loops = {{1, n}};
  sum.value = x1;
  sum.local = 0;
  sum.combine = CombineOp::kSum;
  const ValueExpr x2 =
      ValueExpr::Load(0, DType::kFloat32, E::Var(0) * n + E::Var(2));
  const ValueExpr shared = ValueExpr::Unary(UnaryOp::kExp, x2);
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.loops = {{2, n}};
  store.buffer = 1;
  store.index = E::Var(0) * n + E::Var(2);
  store.value = ValueExpr::Binary(
      BinaryOp::kDiv, ValueExpr::Binary(BinaryOp::kMul, shared, shared),
      ValueExpr::Cast(ValueExpr::Local(0, DType::kFloat32), DType::kFloat32));
  k.stages = {sum, store};
  k.num_locals = 1;
  return k;
}

TEST(LoopIrTest, PrinterShowsLoopsStagesAndSharedValuesOnce) {
  EXPECT_EQ(RowNormalize().ToString(),
            "kernel(in0: float32*, out0: out float32*, s0: int64)\n"
            "  for i0 < 4:\n"
            "    local0 = sum<float32> for i1 < s0\n"
            "        of in0[(i0*s0 + i1)]\n"
            "    t0 = exp(in0[(i0*s0 + i2)])\n"
            "    for i2 < s0: out0[(i0*s0 + i2)] = div(mul(t0, t0), local0)\n");
}

TEST(LoopIrTest, ValueDTypes) {
  const ValueExpr x = ValueExpr::Load(0, DType::kInt32, E::Var(0));
  EXPECT_EQ(ValueExpr::Binary(BinaryOp::kLt, x, x).dtype(), DType::kBool);
  EXPECT_EQ(ValueExpr::Unary(UnaryOp::kIsNan, x).dtype(), DType::kBool);
  EXPECT_EQ(ValueExpr::Cast(x, DType::kFloat64).dtype(), DType::kFloat64);
  // A cast to the same dtype is the value itself.
  EXPECT_EQ(ValueExpr::Cast(x, DType::kInt32).id(), x.id());
  EXPECT_EQ(ValueExpr::Const(DType::kInt64, 2.9).int_value(), 2);
  EXPECT_TRUE(ValueExpr::IntConst(DType::kBool, 5).int_value() == 1);
}

}  // namespace
}  // namespace guardjit
