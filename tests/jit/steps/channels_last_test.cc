// Channels-last layouts around oneDNN convolutions (jit/steps/channels_last.h)
// on hand-built plans: which results laid out channels last were left to a
// reference kernel (the planner then plans again with them contiguous). The
// layouts chosen for real graphs, and their results against the eager
// interpreter, are tested in onednn_conv_test.cc.
#include "jit/steps/channels_last.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/index_expr.h"

namespace guardjit {
namespace {

using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

Slot ExternSlot(int node, bool channels_last) {
  Slot slot;
  slot.source = Slot::Source::kExtern;
  slot.node = node;
  slot.sizes = {IndexExpr::Const(2), IndexExpr::Const(8), IndexExpr::Const(4),
                IndexExpr::Const(4)};
  if (channels_last) slot.strides = ChannelsLastStrideExprs(slot.sizes);
  return slot;
}

PlanStep EagerStep(int node) {
  PlanStep step;
  step.is_kernel = false;
  step.node = node;
  return step;
}

TEST(ChannelsLastTest, StridedResultsLeftEagerNamesTheirNodes) {
  Plan plan;
  plan.slots = {ExternSlot(3, true), ExternSlot(5, true), ExternSlot(7, false)};
  // Node 3's result has a conv step (a kernel step) writing it; 5 and 7 are
  // eager, but only 5's result was laid out channels last.
  PlanStep conv;
  conv.node = 3;
  plan.steps = {conv, EagerStep(5), EagerStep(7)};
  EXPECT_THAT(StridedResultsLeftEager(plan), UnorderedElementsAre(5));
  plan.steps = {conv, EagerStep(7)};
  EXPECT_THAT(StridedResultsLeftEager(plan), IsEmpty());
}

}  // namespace
}  // namespace guardjit
