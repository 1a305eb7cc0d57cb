// OutputPlacement (runtime/program/output_placement.h) on hand-built
// programs: which outputs a call with destinations writes in place, the
// reason explain() gives for each one it copies, and the per-call checks of
// a destination (contiguous, not overlapping an input, no stop conditions).
// Running programs with destinations: program_runner_test.cc.

#include "runtime/program/output_placement.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "runtime/program/step_runner.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

const std::vector<IndexExpr> kSizes = {IndexExpr::Const(2),
                                       IndexExpr::Const(3)};

// x (input 0), w (a constant), a = relu(x), m = mm(x, x); outputs as named.
std::shared_ptr<const Graph> GraphWithOutputs(
    const std::vector<std::string>& outputs) {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddConstant("w", testing::Iota({2, 3})).ok());
  EXPECT_TRUE(b.AddNode("a", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  std::vector<Arg> refs;
  for (const std::string& name : outputs) refs.push_back(Arg::Ref(name));
  EXPECT_TRUE(b.SetOutputs(refs).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TensorRef WholeSlot(int slot) {
  return {slot, kSizes, ContiguousStrideExprs(kSizes), IndexExpr::Const(0)};
}

// Slots: 0 input x, 1 constant w, 2 kernel result (a), 3 eager result (m).
// Step 0 is a kernel allocating slot 2, step 1 the eager step of m.
Program MakeProgram(const std::vector<std::string>& graph_outputs,
                    std::vector<TensorRef> outputs) {
  Program p;
  p.graph = GraphWithOutputs(graph_outputs);
  const Graph& g = *p.graph;
  Slot x, w, a, m;
  x.source = Slot::Source::kInput;
  x.input = 0;
  w.source = Slot::Source::kConstant;
  w.node = g.FindNode("w");
  a.source = Slot::Source::kKernel;
  m.source = Slot::Source::kExtern;
  m.node = g.FindNode("m");
  for (Slot* s : {&x, &w, &a, &m}) s->sizes = kSizes;
  p.slots = {x, w, a, m};
  p.slot_buffer = {-1, -1, -1, -1};
  ProgramStep kernel;
  kernel.kind = StepKind::kKernel;
  kernel.allocate = {2};
  ProgramStep eager;
  eager.kind = StepKind::kEager;
  eager.node = g.FindNode("m");
  eager.can_fail = true;
  eager.writes_destinations = true;
  p.steps.push_back(std::move(kernel));
  p.steps.push_back(std::move(eager));
  p.outputs = std::move(outputs);
  return p;
}

TEST(OutputPlacementTest, WholeResultsOfStepsThatCannotLeaveThemHalfDone) {
  // The kernel's result comes before the eager step that can fail, but that
  // step fails only before its first write, so its own result is in place;
  // the kernel's is not.
  const Program p = MakeProgram({"m", "a"}, {WholeSlot(3), WholeSlot(2)});
  const OutputPlacement placement(p);
  EXPECT_EQ(placement.direct_output(3), 0);
  EXPECT_EQ(placement.direct_output(2), -1);
  EXPECT_EQ(placement.num_direct_outputs(), 1);
  EXPECT_EQ(placement.DescribeCopies(),
            "outputs copied: 1 'a' (step 2 can still fail after it is written "
            "(eager node 'm'))");
}

TEST(OutputPlacementTest, KernelResultsGoInPlaceWhenNothingCanFailAfter) {
  Program p = MakeProgram({"a", "m"}, {WholeSlot(2), WholeSlot(3)});
  p.steps[1].can_fail = false;
  const OutputPlacement placement(p);
  EXPECT_EQ(placement.direct_output(2), 0);
  EXPECT_EQ(placement.direct_output(3), 1);
  EXPECT_EQ(placement.num_direct_outputs(), 2);
  EXPECT_EQ(placement.DescribeCopies(), "");
}

TEST(OutputPlacementTest, EachCopyHasItsReason) {
  TensorRef row = WholeSlot(3);  // a row of m: a view, not the whole slot
  row.sizes = {IndexExpr::Const(3)};
  row.strides = {IndexExpr::Const(1)};
  row.offset = IndexExpr::Const(3);
  Program p = MakeProgram(
      {"x", "w", "a", "a", "m"},
      {WholeSlot(0), WholeSlot(1), WholeSlot(2), WholeSlot(2), row});
  p.steps[1].can_fail = false;
  const OutputPlacement placement(p);
  EXPECT_EQ(placement.num_direct_outputs(), 0);
  EXPECT_EQ(placement.DescribeCopies(),
            "outputs copied: 0 'x' (a view of input 0 ('x')), 1 'w' (a view "
            "of constant 'w'), 2 'a' (the same memory as output 3), 3 'a' "
            "(the same memory as output 2), 4 'm' (a view of a kernel's "
            "result)");
}

TEST(OutputPlacementTest, EagerStepsThatAllocateOrRunOnTheHost) {
  Program p = MakeProgram({"m"}, {WholeSlot(3)});
  p.steps[1].writes_destinations = false;
  EXPECT_EQ(OutputPlacement(p).DescribeCopies(),
            "outputs copied: 0 'm' (computed by eager node 'm' "
            "(aten.mm.default), whose reference kernel allocates its "
            "results)");
  // A slot no step writes (a program bug) is never given a destination.
  Program orphan = MakeProgram({"a"}, {WholeSlot(2)});
  orphan.steps[0].allocate.clear();
  EXPECT_EQ(OutputPlacement(orphan).DescribeCopies(),
            "outputs copied: 0 'a' (computed by no step of the program)");
}

TEST(OutputPlacementTest, DestinationsAreCheckedPerCall) {
  const Program p = MakeProgram({"m"}, {WholeSlot(3)});
  const OutputPlacement placement(p);
  Tensor x = testing::Iota({2, 3});
  Tensor dest = testing::Iota({2, 3});
  const Tensor* dests[] = {&dest};
  RunContext ctx;
  ctx.destinations = dests;
  const std::vector<Tensor> inputs = {x};
  EXPECT_EQ(placement.Destination(ctx, inputs, 3), &dest);
  EXPECT_EQ(placement.Destination(ctx, inputs, 2), nullptr) << "not direct";
  // The destination overlaps an input: the call copies.
  EXPECT_EQ(placement.Destination(ctx, {dest}, 3), nullptr);
  // Non-contiguous destinations, and calls that can stop between steps.
  Tensor transposed = dest.AsStrided({2, 3}, {1, 2});
  const Tensor* strided[] = {&transposed};
  RunContext strided_ctx;
  strided_ctx.destinations = strided;
  EXPECT_EQ(placement.Destination(strided_ctx, inputs, 3), nullptr);
  const int32_t cancel = 0;
  ctx.cancel = &cancel;
  EXPECT_EQ(placement.Destination(ctx, inputs, 3), nullptr);
  // No destination given.
  RunContext none;
  EXPECT_EQ(placement.Destination(none, inputs, 3), nullptr);
}

}  // namespace
}  // namespace guardjit
