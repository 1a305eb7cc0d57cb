#include "jit/cuda/cuda_index_range.h"

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

// out[index] = in[index] at every point of `outer`.
Kernel Copy(std::vector<LoopRange> outer, IndexExpr index,
            int num_size_params) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = num_size_params;
  k.outer = std::move(outer);
  Stage s;
  s.kind = Stage::Kind::kStore;
  s.value = ValueExpr::Load(0, DType::kFloat32, index);
  s.buffer = 1;
  s.index = index;
  k.stages.push_back(std::move(s));
  return k;
}

// A [s0, s1] row-major copy: index i0 * s1 + i1.
Kernel Copy2d() { return Copy({{0, S(0)}, {1, S(1)}}, V(0) * S(1) + V(1), 2); }

TEST(IndexMathFits32BitsTest, UnboundedSizeNeverFits) {
  const Kernel k = Copy({{0, S(0)}}, V(0), 1);
  EXPECT_FALSE(IndexMathFits32Bits(k, {}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {-1}));
  EXPECT_TRUE(IndexMathFits32Bits(k, {1000}));
}

TEST(IndexMathFits32BitsTest, BoundIsInclusiveAtTheLimit) {
  const Kernel k = Copy({{0, S(0)}}, V(0), 1);
  EXPECT_TRUE(IndexMathFits32Bits(k, {kIndex32Limit}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {kIndex32Limit + 1}));
  // The limit leaves a strided loop's last increment below 2^31.
  EXPECT_LT(kIndex32Limit + 1024, int64_t{1} << 31);
}

TEST(IndexMathFits32BitsTest, ProductsOfSizesAreBounded) {
  const Kernel k = Copy2d();
  // 40000 * 40000 = 1.6e9 fits; 50000 * 50000 = 2.5e9 does not.
  EXPECT_TRUE(IndexMathFits32Bits(k, {40000, 40000}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {50000, 50000}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {40000, -1}));
}

TEST(IndexMathFits32BitsTest, FlattenedLoopCountIsChecked) {
  // Each index fits, but the outer loops' flattened count (what a grid
  // stride loop counts to) is 3e9.
  const Kernel k = Copy({{0, C(60000)}, {1, C(50000)}}, V(1), 0);
  EXPECT_FALSE(IndexMathFits32Bits(k, {}));
  const Kernel small = Copy({{0, C(6000)}, {1, C(50000)}}, V(1), 0);
  EXPECT_TRUE(IndexMathFits32Bits(small, {}));
}

TEST(IndexMathFits32BitsTest, NegativeOffsetsAreBoundedToo) {
  // A flipped view reads at (s0 - 1) - i0 + c: its low end is negative.
  const Kernel k = Copy({{0, S(0)}}, C(-3000000000) + V(0), 1);
  EXPECT_FALSE(IndexMathFits32Bits(k, {10}));
  const Kernel near = Copy({{0, S(0)}}, C(-2000000000) + V(0), 1);
  EXPECT_TRUE(IndexMathFits32Bits(near, {10}));
}

TEST(IndexMathFits32BitsTest, DivisionNeedsAPositiveDivisor) {
  // A size divisor may be 0 ([0, bound]): that stays 64-bit.
  EXPECT_FALSE(IndexMathFits32Bits(
      Copy({{0, S(0)}}, IndexExpr::FloorDiv(V(0), S(1)), 2), {100, 100}));
  EXPECT_FALSE(IndexMathFits32Bits(
      Copy({{0, S(0)}}, IndexExpr::Mod(V(0), S(1)), 2), {100, 100}));
  EXPECT_TRUE(IndexMathFits32Bits(
      Copy({{0, S(0)}}, IndexExpr::FloorDiv(V(0), C(3)), 1), {100}));
  EXPECT_TRUE(IndexMathFits32Bits(
      Copy({{0, S(0)}}, IndexExpr::Mod(V(0), C(3)), 1), {100}));
}

TEST(IndexMathFits32BitsTest, EverySubexpressionMustFit) {
  // (i0 * 2^20) // 2^20 is small, but its dividend is not.
  const IndexExpr big = V(0) * C(int64_t{1} << 20);
  const Kernel k =
      Copy({{0, S(0)}}, IndexExpr::FloorDiv(big, C(int64_t{1} << 20)), 1);
  EXPECT_TRUE(IndexMathFits32Bits(k, {1000}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {5000}));
}

TEST(IndexMathFits32BitsTest, StageLoopsAndTheirCount) {
  // A row sum: outer i0 < s0, inner i1 < s1, reading i0 * s1 + i1.
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 2;
  k.outer = {{0, S(0)}};
  k.num_locals = 1;
  Stage reduce;
  reduce.kind = Stage::Kind::kReduce;
  reduce.loops = {{1, S(1)}};
  reduce.value = ValueExpr::Load(0, DType::kFloat32, V(0) * S(1) + V(1));
  reduce.local = 0;
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.value = ValueExpr::Local(0, DType::kFloat32);
  store.buffer = 1;
  store.index = V(0);
  k.stages = {reduce, store};
  EXPECT_TRUE(IndexMathFits32Bits(k, {1000, 1000000}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {1000, 10000000}));
  // The inner loop's extent alone past the limit.
  k.stages[0].loops = {{1, C(int64_t{3} << 30)}};
  k.stages[0].value = ValueExpr::Load(0, DType::kFloat32, V(1));
  EXPECT_FALSE(IndexMathFits32Bits(k, {1, 1}));
}

TEST(IndexMathFits32BitsTest, GatherOffsetCoversTheIndexRange) {
  // out[i0] = in[i0 + idx * s1], idx in [0, bound s2) checked at run time.
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"idx", DType::kInt64, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 3;
  k.outer = {{0, S(0)}};
  k.num_checks = 1;
  Stage s;
  s.kind = Stage::Kind::kStore;
  s.value =
      ValueExpr::Gather(0, DType::kFloat32, V(0),
                        ValueExpr::Load(1, DType::kInt64, V(0)), S(1), S(2), 0);
  s.buffer = 2;
  s.index = V(0);
  k.stages.push_back(std::move(s));
  // (bound - 1) * stride = 999 * 1000 fits; 99999 * 100000 does not.
  EXPECT_TRUE(IndexMathFits32Bits(k, {100, 1000, 1000}));
  EXPECT_FALSE(IndexMathFits32Bits(k, {100, 100000, 100000}));
  // An unbounded index range never fits.
  EXPECT_FALSE(IndexMathFits32Bits(k, {100, 1000, -1}));
}

TEST(ChooseIndexBoundsTest, WithoutHintsRendersWithTheKnownBounds) {
  const Kernel k = Copy2d();
  const Kernel* kernels[] = {&k};
  const IndexBounds b = ChooseIndexBounds(kernels, {100, -5}, {});
  EXPECT_EQ(b.size_bounds, std::vector<int64_t>({100, -1}));
  EXPECT_TRUE(b.chosen.empty());
  EXPECT_EQ(b.index32, std::vector<bool>({false}));
  const IndexBounds known = ChooseIndexBounds(kernels, {100, 200}, {});
  EXPECT_EQ(known.index32, std::vector<bool>({true}));
}

TEST(ChooseIndexBoundsTest, ChoosesPowersOfTwoAsLargeAsStillNarrow) {
  const Kernel k = Copy2d();
  const Kernel* kernels[] = {&k};
  const IndexBounds b = ChooseIndexBounds(kernels, {-1, -1}, {100, 300});
  EXPECT_EQ(b.chosen, std::vector<int>({0, 1}));
  ASSERT_EQ(b.size_bounds.size(), 2u);
  EXPECT_EQ(b.index32, std::vector<bool>({true}));
  for (int i = 0; i < 2; ++i) {
    const int64_t v = b.size_bounds[i];
    EXPECT_GE(v, i == 0 ? 100 : 300);
    EXPECT_EQ(v & (v - 1), 0) << "not a power of two: " << v;
    // Doubling any one bound more would leave 32 bits.
    std::vector<int64_t> more = b.size_bounds;
    more[i] *= 2;
    EXPECT_FALSE(IndexMathFits32Bits(k, more)) << i;
  }
  // 128 and 512 doubled together seven times: 2^14 * 2^16 = 2^30.
  EXPECT_EQ(b.size_bounds, std::vector<int64_t>({16384, 65536}));
}

TEST(ChooseIndexBoundsTest, KnownBoundsStayAndOnlyFreeSymbolsAreChosen) {
  const Kernel k = Copy2d();
  const Kernel* kernels[] = {&k};
  const IndexBounds b = ChooseIndexBounds(kernels, {1000, -1}, {100, 300});
  EXPECT_EQ(b.chosen, std::vector<int>({1}));
  EXPECT_EQ(b.size_bounds[0], 1000);
  EXPECT_GE(b.size_bounds[1], 300);
  EXPECT_TRUE(IndexMathFits32Bits(k, b.size_bounds));
  EXPECT_EQ(b.index32, std::vector<bool>({true}));
}

TEST(ChooseIndexBoundsTest, SymbolsNoKernelNeedsStayUnbounded) {
  // Symbol 2 appears in no index.
  const Kernel k = Copy({{0, S(0)}, {1, S(1)}}, V(0) * S(1) + V(1), 3);
  const Kernel* kernels[] = {&k};
  const IndexBounds b = ChooseIndexBounds(kernels, {}, {100, 300, 7});
  EXPECT_EQ(b.chosen, std::vector<int>({0, 1}));
  ASSERT_EQ(b.size_bounds.size(), 3u);
  EXPECT_EQ(b.size_bounds[2], -1);
}

TEST(ChooseIndexBoundsTest, NothingChosenWithoutAKernelThatGains) {
  const Kernel k = Copy2d();
  const Kernel* kernels[] = {&k};
  // Already 32-bit under the known bounds.
  const IndexBounds fits = ChooseIndexBounds(kernels, {10, 10}, {5, 5});
  EXPECT_TRUE(fits.chosen.empty());
  EXPECT_EQ(fits.size_bounds, std::vector<int64_t>({10, 10}));
  // Too large at the hints themselves: 60000 * 60000 > 2^31.
  const IndexBounds big = ChooseIndexBounds(kernels, {-1, -1}, {60000, 60000});
  EXPECT_TRUE(big.chosen.empty());
  EXPECT_EQ(big.size_bounds, std::vector<int64_t>({-1, -1}));
  EXPECT_EQ(big.index32, std::vector<bool>({false}));
}

TEST(ChooseIndexBoundsTest, KernelsThatNeverNarrowDoNotBlockTheChoice) {
  // `wide` reads past 2^31 whatever the sizes: it stays 64-bit and the 2-d
  // copy gets the bounds it gets alone.
  const Kernel two = Copy2d();
  const Kernel wide = Copy({{0, S(0)}}, V(0) + C(3000000000), 2);
  const Kernel* both[] = {&two, &wide};
  const Kernel* alone[] = {&two};
  const IndexBounds b = ChooseIndexBounds(both, {-1, -1}, {100, 300});
  EXPECT_EQ(b.chosen, std::vector<int>({0, 1}));
  EXPECT_EQ(b.index32, std::vector<bool>({true, false}));
  EXPECT_EQ(b.size_bounds,
            ChooseIndexBounds(alone, {-1, -1}, {100, 300}).size_bounds);
}

}  // namespace
}  // namespace guardjit
