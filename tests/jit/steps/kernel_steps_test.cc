// What the host kernel steps (jit/steps/kernel_steps.h) decide before any
// kernel runs: a kernel's extents, how its first outer loop is split across
// the pool by the work it does, and which index check a fault mask names.

#include "jit/steps/kernel_steps.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "jit/lowering/loop_ir.h"
#include "jit/schedule/fusion.h"
#include "runtime/index_expr.h"

namespace guardjit {
namespace {

IndexExpr C(int64_t v) { return IndexExpr::Const(v); }

// Outer loops of `outer` extents; one stage per entry of `stage_loops`,
// each with loops of those extents.
Kernel KernelOf(const std::vector<IndexExpr>& outer,
                const std::vector<std::vector<IndexExpr>>& stage_loops) {
  Kernel k;
  k.buffers = {{"out0", DType::kFloat32, true}};
  int var = 0;
  for (const IndexExpr& e : outer) k.outer.push_back({var++, e});
  for (const std::vector<IndexExpr>& loops : stage_loops) {
    Stage s;
    s.kind = Stage::Kind::kStore;
    for (const IndexExpr& e : loops) s.loops.push_back({var++, e});
    s.value = ValueExpr::Const(DType::kFloat32, 0);
    s.buffer = 0;
    s.index = IndexExpr::Const(0);
    k.stages.push_back(s);
  }
  return k;
}

TEST(KernelExtentsTest, OuterAndPerStageExtentsInOrder) {
  const Kernel k = KernelOf({C(4), IndexExpr::Size(0)}, {{}, {C(3), C(5)}});
  const KernelExtents e(k);
  ASSERT_EQ(e.outer.size(), 2u);
  EXPECT_EQ(e.outer[0], C(4));
  EXPECT_EQ(e.outer[1], IndexExpr::Size(0));
  ASSERT_EQ(e.stages.size(), 2u);
  EXPECT_TRUE(e.stages[0].empty());
  EXPECT_EQ(e.stages[1], std::vector<IndexExpr>({C(3), C(5)}));
}

TEST(StaticSplitOfTest, SmallKernelsRunOnTheCallingThread) {
  const KernelSplit s = StaticSplitOf(KernelOf({C(4), C(8)}, {{}}));
  EXPECT_EQ(s.extent, 4);
  EXPECT_EQ(s.work, 32);
  EXPECT_EQ(s.grain, 0);
}

TEST(StaticSplitOfTest, GrainGivesChunksOfAboutSixteenThousandOperations) {
  // 1024 rows of a 1024-long reduction: 2^20 operations, 1024 per row.
  const KernelSplit s = StaticSplitOf(KernelOf({C(1024)}, {{C(1024)}}));
  EXPECT_EQ(s.extent, 1024);
  EXPECT_EQ(s.work, 1 << 20);
  EXPECT_EQ(s.grain, 16);
  // Stages add their loops' work per outer point: 100 + 28 per row.
  const KernelSplit two =
      StaticSplitOf(KernelOf({C(1024)}, {{C(100)}, {C(28)}}));
  EXPECT_EQ(two.work, 1024 * 128);
  EXPECT_EQ(two.grain, 128);
}

TEST(StaticSplitOfTest, ParallelOnlyFromTheThresholdWithTwoIterations) {
  // 2^16 operations exactly: split; one fewer: not.
  EXPECT_GT(StaticSplitOf(KernelOf({C(64)}, {{C(1024)}})).grain, 0);
  EXPECT_EQ(StaticSplitOf(KernelOf({C(64)}, {{C(1023)}})).grain, 0);
  // A single outer iteration cannot be split, however long.
  const KernelSplit one = StaticSplitOf(KernelOf({C(1)}, {{C(1 << 24)}}));
  EXPECT_EQ(one.extent, 1);
  EXPECT_EQ(one.grain, 0);
}

TEST(StaticSplitOfTest, SymbolicOrMissingLoopsSplitNothing) {
  const KernelSplit dynamic =
      StaticSplitOf(KernelOf({C(1024)}, {{IndexExpr::Size(0)}}));
  EXPECT_EQ(dynamic.extent, 1);
  EXPECT_EQ(dynamic.grain, 0);
  EXPECT_EQ(dynamic.work, 0);
  const KernelSplit none = StaticSplitOf(KernelOf({}, {{}}));
  EXPECT_EQ(none.extent, 1);
  EXPECT_EQ(none.grain, 0);
}

TEST(StaticSplitOfTest, WorkSaturatesInsteadOfOverflowing) {
  const KernelSplit s =
      StaticSplitOf(KernelOf({C(int64_t{1} << 40)}, {{C(int64_t{1} << 40)}}));
  EXPECT_EQ(s.work, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(s.grain, 1);
}

TEST(FailedCheckTest, TheLowestFailedCheckIsReported) {
  std::vector<IndexCheck> checks(2);
  checks[0].what = "index 0 of 'gather'";
  checks[0].dim = 0;
  checks[0].bound = C(5);
  checks[1].what = "index 1 of 'gather'";
  checks[1].dim = 1;
  checks[1].bound = IndexExpr::Size(0);
  const int64_t symbols[] = {7};
  const absl::Status first = FailedCheck(checks, 0b11, symbols);
  EXPECT_EQ(first.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(first.message(),
            "index 0 of 'gather': an index is out of range for dimension 0 "
            "with size 5");
  const absl::Status second = FailedCheck(checks, 0b10, symbols);
  EXPECT_EQ(second.message(),
            "index 1 of 'gather': an index is out of range for dimension 1 "
            "with size s0 = 7");
}

TEST(FailedCheckTest, UnknownCheckIsAnInternalError) {
  const absl::Status s = FailedCheck({}, int64_t{1} << 5, {});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), "kernel reported unknown index check 5");
}

}  // namespace
}  // namespace guardjit
