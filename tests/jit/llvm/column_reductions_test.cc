#include "jit/llvm/column_reductions.h"

#include "gtest/gtest.h"

namespace guardjit {
namespace {

using E = IndexExpr;

// out[b, d] = combine_t in[b, t, d] over [B, T, D] (T = 9, D = `dim`), or
// over the last dim when `rows`.
Kernel Reduction(int64_t dim, CombineOp combine = CombineOp::kSum,
                 bool rows = false, DType dtype = DType::kFloat32) {
  Kernel k;
  k.buffers = {{"in0", dtype, false}, {"out0", dtype, true}};
  k.outer = {{0, E::Const(4)}, {1, E::Const(dim)}};
  Stage reduce;
  reduce.kind = Stage::Kind::kReduce;
  reduce.combine = combine;
  reduce.loops = {{2, E::Const(9)}};
  reduce.value = ValueExpr::Load(
      0, dtype,
      rows ? E::Var(0) * E::Const(9 * dim) + E::Var(1) * E::Const(9) + E::Var(2)
           : E::Var(0) * E::Const(9 * dim) + E::Var(2) * E::Const(dim) +
                 E::Var(1));
  reduce.local = 0;
  Stage store;
  store.buffer = 1;
  store.index = E::Var(0) * E::Const(dim) + E::Var(1);
  store.value = ValueExpr::Local(0, dtype);
  k.stages = {reduce, store};
  k.num_locals = 1;
  return k;
}

TEST(ColumnReductionsTest, ReductionsOverAMiddleDim) {
  EXPECT_TRUE(ColumnReductions(Reduction(64)));
  EXPECT_TRUE(ColumnReductions(Reduction(64, CombineOp::kMax)));
  EXPECT_TRUE(ColumnReductions(Reduction(2, CombineOp::kMin)));
  EXPECT_TRUE(
      ColumnReductions(Reduction(64, CombineOp::kSum, false, DType::kInt64)));
  // mobilenet_v2's global average pool: 1280 channels last.
  EXPECT_TRUE(ColumnReductions(Reduction(1280)));
}

TEST(ColumnReductionsTest, NotRowReductionsOrWhatItCannotKeepExact) {
  // Contiguous along the reduction already.
  EXPECT_FALSE(ColumnReductions(Reduction(64, CombineOp::kSum, true)));
  // Positions, products, reduced dtypes, side stores: not in column mode.
  EXPECT_FALSE(ColumnReductions(Reduction(64, CombineOp::kArgMax)));
  EXPECT_FALSE(ColumnReductions(Reduction(64, CombineOp::kProd)));
  EXPECT_FALSE(
      ColumnReductions(Reduction(64, CombineOp::kSum, false, DType::kFloat16)));
  Kernel side = Reduction(64);
  side.stages[0].buffer = 1;
  EXPECT_FALSE(ColumnReductions(side));
  // Too many columns for the per-column arrays (columns x locals past 8192),
  // or a single column.
  EXPECT_FALSE(ColumnReductions(Reduction(8193)));
  Kernel two_locals = Reduction(4097);
  two_locals.num_locals = 2;
  EXPECT_FALSE(ColumnReductions(two_locals));
  EXPECT_FALSE(ColumnReductions(Reduction(1)));
  // A symbolic last extent.
  Kernel symbolic = Reduction(64);
  symbolic.outer[1].extent = E::Size(0);
  EXPECT_FALSE(ColumnReductions(symbolic));
  // One outer loop: it is the runner's range.
  Kernel one = Reduction(64);
  one.outer.erase(one.outer.begin());
  EXPECT_FALSE(ColumnReductions(one));
  // A store with its own loops (softmax's normalization).
  Kernel full = Reduction(64);
  full.stages[1].loops = {{3, E::Const(2)}};
  EXPECT_FALSE(ColumnReductions(full));
}

// sum_e emb[ids[b], e] + x[b, e] over a row of [B, E]: the gathered rows
// and x run along the reduction (a layer norm of an embedding): rows.
TEST(ColumnReductionsTest, EmbeddingRowsReducedAlongTheirLengthStayRows) {
  Kernel k;
  k.buffers = {{"in0", DType::kInt64, false},
               {"in1", DType::kFloat32, false},
               {"in2", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, E::Const(1)}, {1, E::Const(64)}};
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.loops = {{2, E::Const(256)}};
  sum.value = ValueExpr::Binary(
      BinaryOp::kAdd,
      ValueExpr::Gather(1, DType::kFloat32, E::Var(2),
                        ValueExpr::Load(0, DType::kInt64, E::Var(1)),
                        E::Const(256), E::Const(1000), 0),
      ValueExpr::Load(2, DType::kFloat32,
                      E::Var(1) * E::Const(256) + E::Var(2)));
  sum.local = 0;
  Stage store;
  store.buffer = 3;
  store.index = E::Var(1);
  store.value = ValueExpr::Local(0, DType::kFloat32);
  k.stages = {sum, store};
  k.num_locals = 1;
  k.num_checks = 1;
  EXPECT_FALSE(ColumnReductions(k));
  // The bag (rows gathered along the last outer loop, indices along the
  // reduction) is columns, though its indices are read contiguously.
  Kernel bag = k;
  bag.stages[0].value = ValueExpr::Gather(
      1, DType::kFloat32, E::Var(1),
      ValueExpr::Load(0, DType::kInt64, E::Var(0) * E::Const(256) + E::Var(2)),
      E::Const(64), E::Const(1000), 0);
  EXPECT_TRUE(ColumnReductions(bag));
}

}  // namespace
}  // namespace guardjit
