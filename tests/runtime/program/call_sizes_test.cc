// A program's sizes evaluated for one call's symbol values
// (runtime/program/call_sizes.h): slot shapes, the arena's cache-line
// aligned buffers, the outputs' views, int64 overflow naming what computes
// the slot, and views of a slot's tensor.

#include "runtime/program/call_sizes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/index_expr.h"
#include "runtime/program/program.h"
#include "runtime/program/step_runner.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

IndexExpr S0() { return IndexExpr::Size(0); }
IndexExpr C(int64_t v) { return IndexExpr::Const(v); }

std::shared_ptr<const Graph> ReluGraph() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddNode("a", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("a")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

// Over one symbol s0: slot 0 is [s0, 3] float32 and slot 1 is [2 * s0]
// int64, each in its own plan buffer, written by a kernel step computing
// 'a'; output 0 is all of slot 1, output 1 column 2 of slot 0.
Program DynamicProgram() {
  Program p;
  p.graph = ReluGraph();
  p.num_symbols = 1;
  Slot wide;
  wide.dtype = DType::kFloat32;
  wide.sizes = {S0(), C(3)};
  Slot flat;
  flat.dtype = DType::kInt64;
  flat.sizes = {S0() * C(2)};
  p.slots = {wide, flat};
  ProgramStep step;
  step.allocate = {0, 1};
  step.computes = {"a"};
  p.steps.push_back(std::move(step));
  p.slot_buffer = {0, 1};
  p.buffer_bytes = {S0() * C(12), S0() * C(16)};
  p.outputs.push_back({1, flat.sizes, ContiguousStrideExprs(flat.sizes), C(0)});
  p.outputs.push_back({0, {S0()}, {C(3)}, C(2)});
  return p;
}

TEST(CallSizesTest, EvaluatesSlotsBuffersAndOutputsForTheSymbols) {
  const Program p = DynamicProgram();
  CallSizes sizes;
  ASSERT_TRUE(EvaluateSizes(p, {5}, sizes).ok());
  ASSERT_EQ(sizes.slots.size(), 2u);
  EXPECT_THAT(sizes.slots[0], ElementsAre(5, 3));
  EXPECT_THAT(sizes.slots[1], ElementsAre(10));
  // 60 bytes, then 80 at the next multiple of kArenaAlign; each buffer
  // takes whole multiples of it.
  EXPECT_THAT(sizes.buffer_bytes, ElementsAre(60, 80));
  EXPECT_THAT(sizes.buffer_offset, ElementsAre(0, kArenaAlign));
  EXPECT_EQ(sizes.arena_bytes, 3 * kArenaAlign);
  ASSERT_EQ(sizes.outputs.size(), 2u);
  EXPECT_EQ(sizes.outputs[0].slot, 1);
  EXPECT_THAT(sizes.outputs[0].sizes, ElementsAre(10));
  EXPECT_THAT(sizes.outputs[0].strides, ElementsAre(1));
  EXPECT_EQ(sizes.outputs[1].slot, 0);
  EXPECT_THAT(sizes.outputs[1].sizes, ElementsAre(5));
  EXPECT_THAT(sizes.outputs[1].strides, ElementsAre(3));
  EXPECT_EQ(sizes.outputs[1].offset, 2);

  // Another call's values into the same workspace: new sizes, no stale
  // entries; an empty buffer still takes no arena space.
  ASSERT_TRUE(EvaluateSizes(p, {0}, sizes).ok());
  EXPECT_THAT(sizes.slots[0], ElementsAre(0, 3));
  EXPECT_THAT(sizes.buffer_bytes, ElementsAre(0, 0));
  EXPECT_THAT(sizes.buffer_offset, ElementsAre(0, 0));
  EXPECT_EQ(sizes.arena_bytes, 0);
  EXPECT_THAT(sizes.outputs[1].sizes, ElementsAre(0));
}

TEST(CallSizesTest, OverflowIsOutOfRangeNamingTheStepAndTheSymbols) {
  const Program p = DynamicProgram();
  CallSizes sizes;
  // 2^61 rows of 3 float32s: more than 2^63 bytes.
  const int64_t rows = int64_t{1} << 61;
  const absl::Status status = EvaluateSizes(p, {rows}, sizes);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), HasSubstr("step 1 (kernel computing 'a')"));
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("[", rows, "]")));
  EXPECT_THAT(status.message(), HasSubstr("overflow int64"));
}

TEST(CallSizesTest, OverflowOfAnInputSlotNamesTheInput) {
  Program p = DynamicProgram();
  p.slots[0].source = Slot::Source::kInput;
  p.slots[0].input = 0;
  CallSizes sizes;
  const absl::Status status = EvaluateSizes(p, {int64_t{1} << 62}, sizes);
  ASSERT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(), HasSubstr("input 0 ('x')"));
}

TEST(CallSizesTest, EvaluateRefAndViewOf) {
  const TensorRef ref = {0, {S0(), C(2)}, {C(1), S0()}, S0() * C(0) + C(1)};
  ConcreteRef concrete;
  EvaluateRef(ref, {4}, concrete);
  EXPECT_EQ(concrete.slot, 0);
  EXPECT_THAT(concrete.sizes, ElementsAre(4, 2));
  EXPECT_THAT(concrete.strides, ElementsAre(1, 4));
  EXPECT_EQ(concrete.offset, 1);

  const Tensor base = *Tensor::Empty(DType::kFloat32, {3, 4});
  const std::vector<Tensor> slots = {base};
  // All of the slot: the slot's tensor itself.
  const ConcreteRef whole = {0, {3, 4}, {4, 1}, 0};
  EXPECT_EQ(ViewOf(slots, whole).data(), base.data());
  EXPECT_THAT(ViewOf(slots, whole).strides(), ElementsAre(4, 1));
  // Its transpose from element 1: a strided view of the same memory.
  const ConcreteRef view = {0, {4, 2}, {1, 4}, 1};
  const Tensor v = ViewOf(slots, view);
  EXPECT_THAT(v.sizes(), ElementsAre(4, 2));
  EXPECT_THAT(v.strides(), ElementsAre(1, 4));
  EXPECT_EQ(v.data_as<float>(), base.data_as<float>() + 1);
}

}  // namespace
}  // namespace guardjit
