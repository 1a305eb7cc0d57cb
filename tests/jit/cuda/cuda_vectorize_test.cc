#include "jit/cuda/cuda_vectorize.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "jit/lowering/loop_ir.h"
#include "runtime/index_expr.h"

namespace guardjit {
namespace {

IndexExpr S(int i) { return IndexExpr::Size(i); }
IndexExpr V(int i) { return IndexExpr::Var(i); }
IndexExpr C(int64_t v) { return IndexExpr::Const(v); }

TEST(IndependentOfTest, LooksThroughEveryOperation) {
  EXPECT_TRUE(IndependentOf(V(0) + S(1) * C(3), 1));
  EXPECT_FALSE(IndependentOf(V(0) + S(1) * C(3), 0));
  EXPECT_FALSE(IndependentOf(IndexExpr::FloorDiv(V(1), C(2)), 1));
  EXPECT_FALSE(
      IndependentOf(IndexExpr::Min(S(0), IndexExpr::Mod(V(1), S(0))), 1));
  EXPECT_TRUE(IndependentOf(IndexExpr::Max(S(0), V(2)), 1));
  EXPECT_TRUE(IndependentOf(C(7), 0));
}

TEST(IsVectorIndexTest, UnitStrideWithAlignedBase) {
  EXPECT_TRUE(IsVectorIndex(V(1), 1, 4));
  EXPECT_TRUE(IsVectorIndex(V(0) * C(8) + V(1), 1, 4));
  EXPECT_TRUE(IsVectorIndex(V(1) + C(4), 1, 4));
  // A row stride of 6 misaligns every other row for vectors of 4, not of 2.
  EXPECT_FALSE(IsVectorIndex(V(0) * C(6) + V(1), 1, 4));
  EXPECT_TRUE(IsVectorIndex(V(0) * C(6) + V(1), 1, 2));
  EXPECT_FALSE(IsVectorIndex(V(1) + C(2), 1, 4));
  // A size-dependent base may be anything.
  EXPECT_FALSE(IsVectorIndex(V(0) * S(0) + V(1), 1, 4));
  EXPECT_TRUE(IsVectorIndex(V(0) * S(0) * C(4) + V(1), 1, 4));
}

TEST(IsVectorIndexTest, StrideMustBeOne) {
  EXPECT_FALSE(IsVectorIndex(V(1) * C(2), 1, 4));
  EXPECT_FALSE(IsVectorIndex(V(0), 1, 4));  // independent: not a vector
  EXPECT_FALSE(IsVectorIndex(V(1) * V(0), 1, 4));
  EXPECT_FALSE(IsVectorIndex(V(1) * S(0), 1, 4));
  EXPECT_FALSE(IsVectorIndex(IndexExpr::FloorDiv(V(1), C(2)), 1, 4));
}

TEST(IsVectorIndexTest, OtherOperationsWithoutTheVariableKeepTheBase) {
  // (i0 % 3) * 4 + i1: the base is a multiple of 4.
  EXPECT_TRUE(IsVectorIndex(IndexExpr::Mod(V(0), C(3)) * C(4) + V(1), 1, 4));
  EXPECT_FALSE(IsVectorIndex(IndexExpr::Mod(V(0), C(3)) + V(1), 1, 4));
}

// out[i0 * 64 + i1] = f(in[load_index]) with the last outer loop i1 < 64.
Kernel Pointwise(DType in, DType out, IndexExpr load_index,
                 IndexExpr last_extent = C(64)) {
  Kernel k;
  k.buffers = {{"in0", in, false}, {"out0", out, true}};
  k.num_size_params = 1;
  k.outer = {{0, S(0)}, {1, last_extent}};
  Stage s;
  s.kind = Stage::Kind::kStore;
  s.value = ValueExpr::Cast(ValueExpr::Load(0, in, load_index), out);
  s.buffer = 1;
  s.index = V(0) * C(64) + V(1);
  k.stages.push_back(std::move(s));
  return k;
}

void ExpectNoVectors(const CudaVectorPlan& plan) {
  EXPECT_EQ(plan.width, 1);
  EXPECT_EQ(plan.var, -1);
  EXPECT_TRUE(plan.buffers.empty());
}

TEST(PlanVectorAccessTest, SixteenBytesOfTheWidestBuffer) {
  const IndexExpr row = V(0) * C(64) + V(1);
  CudaVectorPlan f32 =
      PlanVectorAccess(Pointwise(DType::kFloat32, DType::kFloat32, row));
  EXPECT_EQ(f32.width, 4);
  EXPECT_EQ(f32.var, 1);
  EXPECT_EQ(f32.buffers, std::vector<int>({0, 1}));
  EXPECT_EQ(
      PlanVectorAccess(Pointwise(DType::kFloat64, DType::kFloat64, row)).width,
      2);
  EXPECT_EQ(
      PlanVectorAccess(Pointwise(DType::kFloat16, DType::kFloat16, row)).width,
      8);
  // float16 in, float32 out: the float32 store sets 4.
  EXPECT_EQ(
      PlanVectorAccess(Pointwise(DType::kFloat16, DType::kFloat32, row)).width,
      4);
}

TEST(PlanVectorAccessTest, BroadcastLoadsStayScalar) {
  // in[i0] is the same for every i1: read once, not as a vector.
  const CudaVectorPlan plan =
      PlanVectorAccess(Pointwise(DType::kFloat32, DType::kFloat32, V(0)));
  EXPECT_EQ(plan.width, 4);
  EXPECT_EQ(plan.buffers, std::vector<int>({1}));
}

TEST(PlanVectorAccessTest, ExtentMustBeStaticAndDivisible) {
  const IndexExpr row = V(0) * C(64) + V(1);
  ExpectNoVectors(PlanVectorAccess(
      Pointwise(DType::kFloat32, DType::kFloat32, row, C(66))));
  EXPECT_EQ(
      PlanVectorAccess(Pointwise(DType::kFloat64, DType::kFloat64, row, C(66)))
          .width,
      2);
  ExpectNoVectors(
      PlanVectorAccess(Pointwise(DType::kFloat32, DType::kFloat32, row, S(0))));
}

TEST(PlanVectorAccessTest, NonUnitOrMisalignedAccessesRefuse) {
  // A transposed read.
  ExpectNoVectors(PlanVectorAccess(
      Pointwise(DType::kFloat32, DType::kFloat32, V(1) * C(64) + V(0))));
  // A read shifted by 1.
  ExpectNoVectors(PlanVectorAccess(
      Pointwise(DType::kFloat32, DType::kFloat32, V(0) * C(64) + V(1) + C(1))));
  // A store at a stride of 2.
  Kernel k = Pointwise(DType::kFloat32, DType::kFloat32, V(0));
  k.stages[0].index = V(0) * C(128) + V(1) * C(2);
  ExpectNoVectors(PlanVectorAccess(k));
}

TEST(PlanVectorAccessTest, OnlySingleStoresWithoutInnerLoops) {
  const IndexExpr row = V(0) * C(64) + V(1);
  Kernel inner = Pointwise(DType::kFloat32, DType::kFloat32, row);
  inner.stages[0].loops = {{2, C(4)}};
  ExpectNoVectors(PlanVectorAccess(inner));
  Kernel reduce = Pointwise(DType::kFloat32, DType::kFloat32, row);
  reduce.stages[0].kind = Stage::Kind::kReduce;
  reduce.stages[0].local = 0;
  reduce.num_locals = 1;
  ExpectNoVectors(PlanVectorAccess(reduce));
  Kernel none;
  ExpectNoVectors(PlanVectorAccess(none));
}

TEST(PlanVectorAccessTest, ReadingAnOutputRefuses) {
  // A stage reading what an earlier stage stored: stores cannot move.
  Kernel k = Pointwise(DType::kFloat32, DType::kFloat32, V(0) * C(64) + V(1));
  Stage again = k.stages[0];
  again.value = ValueExpr::Load(1, DType::kFloat32, V(0) * C(64) + V(1));
  k.stages.push_back(again);
  ExpectNoVectors(PlanVectorAccess(k));
}

TEST(PlanVectorAccessTest, GathersStayScalarLoads) {
  Kernel k;
  k.buffers = {{"table", DType::kFloat32, false},
               {"idx", DType::kInt64, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 1;
  k.num_checks = 1;
  k.outer = {{0, S(0)}, {1, C(64)}};
  Stage s;
  s.kind = Stage::Kind::kStore;
  const IndexExpr row = V(0) * C(64) + V(1);
  // table[idx[i0] * 64 + i1]: the index values are loaded as a vector of
  // int64 (2 per 16 bytes), the table is gathered.
  s.value =
      ValueExpr::Gather(0, DType::kFloat32, V(1),
                        ValueExpr::Load(1, DType::kInt64, row), C(64), S(0), 0);
  s.buffer = 2;
  s.index = row;
  k.stages.push_back(std::move(s));
  const CudaVectorPlan plan = PlanVectorAccess(k);
  EXPECT_EQ(plan.width, 2);
  EXPECT_EQ(plan.var, 1);
  EXPECT_EQ(plan.buffers, std::vector<int>({1, 2}));
}

}  // namespace
}  // namespace guardjit
