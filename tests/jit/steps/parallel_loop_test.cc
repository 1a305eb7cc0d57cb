#include "jit/steps/parallel_loop.h"

#include <vector>

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::PlanOf;
using testing::RandomTensor;

Kernel WithOuter(const std::vector<IndexExpr>& extents) {
  Kernel k;
  for (size_t i = 0; i < extents.size(); ++i) {
    k.outer.push_back({static_cast<int>(i), extents[i]});
  }
  return k;
}

std::vector<int> Vars(const Kernel& k) {
  std::vector<int> vars;
  for (const LoopRange& l : k.outer) vars.push_back(l.var);
  return vars;
}

TEST(ParallelLoopTest, LeadingUnitLoopsGoBehindTheFirstOther) {
  const IndexExpr one = IndexExpr::Const(1);
  Kernel k =
      WithOuter({one, one, IndexExpr::Const(64), IndexExpr::Const(2048)});
  LeadWithParallelLoop(k);
  EXPECT_EQ(Vars(k), (std::vector<int>{2, 0, 1, 3}));
  EXPECT_TRUE(k.outer[0].extent.is_const(64));
}

TEST(ParallelLoopTest, LeavesKernelsThatNeedNoChange) {
  const IndexExpr one = IndexExpr::Const(1);
  // Already leading with a real loop; unit loops further in stay put.
  Kernel lead = WithOuter({IndexExpr::Const(8), one, IndexExpr::Const(4)});
  LeadWithParallelLoop(lead);
  EXPECT_EQ(Vars(lead), (std::vector<int>{0, 1, 2}));
  // Too little work for the runner to split: a rotation would gain no
  // thread.
  Kernel small = WithOuter({one, IndexExpr::Const(8), IndexExpr::Const(64)});
  LeadWithParallelLoop(small);
  EXPECT_EQ(Vars(small), (std::vector<int>{0, 1, 2}));
  // All unit, or none.
  Kernel units = WithOuter({one, one});
  LeadWithParallelLoop(units);
  EXPECT_EQ(Vars(units), (std::vector<int>{0, 1}));
  Kernel none;
  LeadWithParallelLoop(none);
  EXPECT_TRUE(none.outer.empty());
  // A symbolic first real loop (may be 1 at run time).
  Kernel symbolic =
      WithOuter({one, IndexExpr::Size(0), IndexExpr::Const(1 << 20)});
  LeadWithParallelLoop(symbolic);
  EXPECT_EQ(Vars(symbolic), (std::vector<int>{0, 1, 2}));
}

// GELU over a batch of one: the host plan's kernel leads with the 64-row
// loop the runner splits across threads, and matches eager.
TEST(ParallelLoopTest, BatchOfOneKernelLeadsWithItsRows) {
  GraphBuilder b("gelu1");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "g", "aten.gelu.default", {Arg::Ref("x")},
                   {{"approximate", Arg::String("tanh")}});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("g")}).ok());
  std::shared_ptr<const Graph> graph = testing::Finish(b);
  const Plan plan = PlanOf(*graph, {{1, 64, 1024}});
  ASSERT_EQ(plan.num_kernels(), 1);
  const Kernel& k = plan.steps[0].kernel.kernel;
  ASSERT_FALSE(k.outer.empty());
  EXPECT_TRUE(k.outer[0].extent.is_const(64)) << k.ToString();
  ExpectJitMatchesEager(graph,
                        {RandomTensor(DType::kFloat32, {1, 64, 1024}, 3)});
}

}  // namespace
}  // namespace guardjit
