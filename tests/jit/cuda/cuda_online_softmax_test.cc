// Finding softmax's max-then-sum-of-exponentials stages for the CUDA C
// generator's online pass (jit/cuda/cuda_online_softmax.h), and dropping
// the stores of reduced values that fusion added for a later stage to read
// back.

#include "jit/cuda/cuda_online_softmax.h"

#include <vector>

#include "gtest/gtest.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit {
namespace {

constexpr DType kF32 = DType::kFloat32;

IndexExpr Row() {
  return IndexExpr::Var(0) * IndexExpr::Const(8) + IndexExpr::Var(1);
}
std::vector<LoopRange> Cols() { return {{1, IndexExpr::Const(8)}}; }
ValueExpr X() { return ValueExpr::Load(0, kF32, Row()); }
ValueExpr ExpShifted(const ValueExpr& w) {
  return ValueExpr::Unary(
      UnaryOp::kExp,
      ValueExpr::Binary(BinaryOp::kSub, w, ValueExpr::Local(0, kF32)));
}

Stage Reduce(CombineOp combine, ValueExpr value, int local) {
  Stage s;
  s.kind = Stage::Kind::kReduce;
  s.loops = Cols();
  s.value = std::move(value);
  s.local = local;
  s.combine = combine;
  return s;
}

Stage Store(ValueExpr value, int buffer) {
  Stage s;
  s.kind = Stage::Kind::kStore;
  s.loops = Cols();
  s.value = std::move(value);
  s.buffer = buffer;
  s.index = Row();
  return s;
}

// softmax over rows of 8: max, sum of exp(x - max), store exp(x - max) / sum.
Kernel Softmax() {
  Kernel k;
  k.buffers = {{"in0", kF32, false}, {"out0", kF32, true}};
  k.num_size_params = 1;
  k.outer = {{0, IndexExpr::Size(0)}};
  k.num_locals = 2;
  k.stages = {Reduce(CombineOp::kMax, X(), 0),
              Reduce(CombineOp::kSum, ExpShifted(X()), 1),
              Store(ValueExpr::Binary(BinaryOp::kDiv, ExpShifted(X()),
                                      ValueExpr::Local(1, kF32)),
                    1)};
  return k;
}

TEST(SameValueTest, EqualTreesBuiltApartAreTheSame) {
  EXPECT_TRUE(SameValue(ExpShifted(X()), ExpShifted(X())));
  const ValueExpr x = X();
  EXPECT_TRUE(SameValue(x, x));
}

TEST(SameValueTest, AnyDifferenceMakesThemDiffer) {
  EXPECT_FALSE(SameValue(X(), ValueExpr::Load(1, kF32, Row())));
  EXPECT_FALSE(SameValue(X(), ValueExpr::Load(0, kF32, IndexExpr::Var(1))));
  EXPECT_FALSE(SameValue(X(), ValueExpr::Load(0, DType::kFloat64, Row())));
  EXPECT_FALSE(SameValue(ValueExpr::Unary(UnaryOp::kExp, X()),
                         ValueExpr::Unary(UnaryOp::kLog, X())));
  EXPECT_FALSE(SameValue(ValueExpr::Local(0, kF32), ValueExpr::Local(1, kF32)));
  // Constants compare by bits: 0.0 is not -0.0.
  EXPECT_TRUE(
      SameValue(ValueExpr::Const(kF32, 0.5), ValueExpr::Const(kF32, 0.5)));
  EXPECT_FALSE(
      SameValue(ValueExpr::Const(kF32, 0.0), ValueExpr::Const(kF32, -0.0)));
  EXPECT_FALSE(SameValue(ValueExpr::IntConst(DType::kInt64, 1),
                         ValueExpr::IntConst(DType::kInt64, 2)));
}

TEST(PlanOnlineSoftmaxTest, MaxThenSumOfExponentialsFuses) {
  const Kernel k = Softmax();
  const OnlineSoftmaxPlan plan = PlanOnlineSoftmax(k);
  EXPECT_EQ(plan.fused, std::vector<bool>({true, false, false}));
  ASSERT_EQ(plan.stages.size(), 3u);
  EXPECT_EQ(plan.stages[2].buffer, 1);
}

TEST(PlanOnlineSoftmaxTest, SumOfAnotherValueDoesNot) {
  Kernel k = Softmax();
  k.buffers.push_back({"in1", kF32, false});
  k.stages[1].value = ExpShifted(ValueExpr::Load(2, kF32, Row()));
  EXPECT_EQ(PlanOnlineSoftmax(k).fused, std::vector<bool>(3, false));
}

TEST(PlanOnlineSoftmaxTest, ShiftByAnotherLocalDoesNot) {
  Kernel k = Softmax();
  k.stages[1].value = ValueExpr::Unary(
      UnaryOp::kExp,
      ValueExpr::Binary(BinaryOp::kSub, X(), ValueExpr::Local(1, kF32)));
  EXPECT_EQ(PlanOnlineSoftmax(k).fused, std::vector<bool>(3, false));
}

TEST(PlanOnlineSoftmaxTest, DifferentLoopsOrIntegersDoNot) {
  Kernel loops = Softmax();
  loops.stages[1].loops = {{1, IndexExpr::Const(4)}};
  EXPECT_EQ(PlanOnlineSoftmax(loops).fused, std::vector<bool>(3, false));
  Kernel ints = Softmax();
  const ValueExpr xi = ValueExpr::Load(0, DType::kInt32, Row());
  ints.stages[0].value = xi;
  ints.stages[1].value = ValueExpr::Unary(
      UnaryOp::kExp, ValueExpr::Binary(BinaryOp::kSub, xi,
                                       ValueExpr::Local(0, DType::kInt32)));
  EXPECT_EQ(PlanOnlineSoftmax(ints).fused, std::vector<bool>(3, false));
}

TEST(PlanOnlineSoftmaxTest, StoredExponentialsAreRecomputed) {
  // Fusion's softmax: the sum stage stores exp(x - max) into out0 and the
  // output stage reads it back and overwrites it with the quotient.
  Kernel k = Softmax();
  k.stages[1].buffer = 1;
  k.stages[1].index = Row();
  k.stages[2].value =
      ValueExpr::Binary(BinaryOp::kDiv, ValueExpr::Load(1, kF32, Row()),
                        ValueExpr::Local(1, kF32));
  const OnlineSoftmaxPlan plan = PlanOnlineSoftmax(k);
  EXPECT_EQ(plan.fused, std::vector<bool>({true, false, false}));
  EXPECT_EQ(plan.stages[1].buffer, -1);
  // The output recomputes exp(x - max) instead of loading out0.
  EXPECT_TRUE(SameValue(plan.stages[2].value.operand(0), ExpShifted(X())));
}

TEST(PlanOnlineSoftmaxTest, ReadBackElsewhereKeepsTheStages) {
  Kernel k = Softmax();
  k.stages[1].buffer = 1;
  k.stages[1].index = Row();
  // A read at another index than the store's: not recomputable in place.
  k.stages[2].value = ValueExpr::Binary(
      BinaryOp::kDiv, ValueExpr::Load(1, kF32, IndexExpr::Var(1)),
      ValueExpr::Local(1, kF32));
  const OnlineSoftmaxPlan plan = PlanOnlineSoftmax(k);
  EXPECT_EQ(plan.fused, std::vector<bool>(3, false));
  EXPECT_EQ(plan.stages[1].buffer, 1);
}

TEST(PlanOnlineSoftmaxTest, StoreNeverOverwrittenKeepsTheStages) {
  // The stored exponentials are an output of their own (nothing overwrites
  // them): dropping the store would lose them.
  Kernel k = Softmax();
  k.buffers.push_back({"out1", kF32, true});
  k.stages[1].buffer = 2;
  k.stages[1].index = Row();
  EXPECT_EQ(PlanOnlineSoftmax(k).fused, std::vector<bool>(3, false));
}

}  // namespace
}  // namespace guardjit
