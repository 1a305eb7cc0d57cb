// The pass that reads a reduced value back instead of recomputing it
// (jit/schedule/reuse_reduced_values.h), on hand-built kernels: softmax's
// exp is stored by the sum and read by the division; a bare load (layer
// norm's sum of x), another dtype, other loops, or a value the store does not
// contain are left as they are.

#include "jit/schedule/reuse_reduced_values.h"

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// x [rows, 16] in buffer 0, out in buffer 1: local0 = sum over i1 of
// `reduced`, then out[i0, i1] = `stored`.
Kernel RowKernel(const ValueExpr& reduced, const ValueExpr& stored,
                 int64_t store_extent = 16) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(8)}};
  Stage reduce;
  reduce.kind = Stage::Kind::kReduce;
  reduce.loops = {{1, IndexExpr::Const(16)}};
  reduce.value = reduced;
  reduce.local = k.num_locals++;
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.loops = {{1, IndexExpr::Const(store_extent)}};
  store.value = stored;
  store.buffer = 1;
  store.index = IndexExpr::Var(0) * IndexExpr::Const(16) + IndexExpr::Var(1);
  k.stages = {reduce, store};
  return k;
}

ValueExpr X() {
  return ValueExpr::Load(
      0, DType::kFloat32,
      IndexExpr::Var(0) * IndexExpr::Const(16) + IndexExpr::Var(1));
}

TEST(ReuseReducedValuesTest, SoftmaxReadsItsExpBack) {
  const ValueExpr e = ValueExpr::Unary(UnaryOp::kExp, X());
  Kernel k =
      RowKernel(e, ValueExpr::Binary(BinaryOp::kDiv, e,
                                     ValueExpr::Local(0, DType::kFloat32)));
  const std::string before = k.ToString();
  ReuseReducedValues(k);
  EXPECT_NE(k.ToString(), before);
  EXPECT_EQ(k.stages[0].buffer, 1);
  EXPECT_EQ(k.stages[0].index.ToString(), k.stages[1].index.ToString());
  // The division reads out0 where it recomputed exp(in0).
  const std::string text = k.ToString();
  EXPECT_NE(text.find("storing out0"), std::string::npos) << text;
  EXPECT_EQ(text.find("exp", text.find("out0[")), std::string::npos) << text;
}

TEST(ReuseReducedValuesTest, LeavesWhatItCannotReuse) {
  const ValueExpr e = ValueExpr::Unary(UnaryOp::kExp, X());
  const ValueExpr local = ValueExpr::Local(0, DType::kFloat32);
  // A bare load: reading x again costs what reading a copy back does.
  Kernel bare = RowKernel(X(), ValueExpr::Binary(BinaryOp::kSub, X(), local));
  // The stored value does not contain the reduced one.
  Kernel other = RowKernel(
      e, ValueExpr::Binary(BinaryOp::kSub,
                           ValueExpr::Unary(UnaryOp::kTanh, X()), local));
  // Other loops (extents differ).
  Kernel loops = RowKernel(e, ValueExpr::Binary(BinaryOp::kDiv, e, local),
                           /*store_extent=*/8);
  for (Kernel* k : {&bare, &other, &loops}) {
    const std::string before = k->ToString();
    ReuseReducedValues(*k);
    EXPECT_EQ(k->ToString(), before);
    EXPECT_EQ(k->stages[0].buffer, -1);
  }
}

}  // namespace
}  // namespace guardjit
