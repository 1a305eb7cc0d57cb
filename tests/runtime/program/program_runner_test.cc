// ProgramRunner over hand-built programs: the step interface, memory given
// to each step's slots, OutputPlacement's decisions, stops naming the step,
// and the eager step's destinations. The same contract through the JIT's
// programs is tests/jit/program_builder_test.cc.

#include "runtime/program/program_runner.h"

#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/program/eager_step.h"
#include "runtime/program/step_runner.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::RandomTensor;
using testing::ToDoubles;

// slots[out] = slots[in] * factor (float32, contiguous); counts its runs and
// records whether slot `watch` was released when it ran.
class ScaleStep : public StepRunner {
 public:
  ScaleStep(int in, int out, float factor, int watch = -1)
      : in_(in), out_(out), factor_(factor), watch_(watch) {}
  absl::Status Run(StepCall& call) const override {
    ++runs;
    if (watch_ >= 0) watch_was_empty = call.slots[watch_].data() == nullptr;
    const Tensor& in = call.slots[in_];
    const Tensor& out = call.slots[out_];
    if (out.data() == nullptr) return absl::InternalError("no memory");
    for (int64_t i = 0; i < in.numel(); ++i) {
      out.data_as<float>()[i] = in.data_as<float>()[i] * factor_;
    }
    return absl::OkStatus();
  }
  mutable int runs = 0;
  mutable bool watch_was_empty = false;

 private:
  int in_, out_;
  float factor_;
  int watch_;
};

// Fails every call.
class FailingStep : public StepRunner {
 public:
  absl::Status Run(StepCall&) const override {
    return absl::InvalidArgumentError("index 9 is out of range");
  }
};

std::shared_ptr<const Graph> TwoOutputGraph() {
  GraphBuilder b("g");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddNode("a", "aten.relu.default", {Arg::Ref("x")}).ok());
  EXPECT_TRUE(b.AddNode("b", "aten.relu.default", {Arg::Ref("a")}).ok());
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("a"), Arg::Ref("b")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

Slot KernelSlot(std::vector<IndexExpr> sizes) {
  Slot s;
  s.source = Slot::Source::kKernel;
  s.dtype = DType::kFloat32;
  s.sizes = std::move(sizes);
  return s;
}

TensorRef WholeSlot(int slot, const std::vector<IndexExpr>& sizes) {
  return {slot, sizes, ContiguousStrideExprs(sizes), IndexExpr::Const(0)};
}

// x -> a = 2x (slot 1) -> b = 3a (slot 2), outputs (a, b).
// `second_can_fail`: the second step can fail (an index check) after a is
// written; `fail`: it does.
struct Chain {
  std::unique_ptr<ProgramRunner> runner;
  const ScaleStep* first = nullptr;
  const ScaleStep* second = nullptr;
};

Chain MakeChain(bool second_can_fail, std::vector<IndexExpr> sizes,
                int num_symbols = 0, bool fail = false) {
  auto program = std::make_unique<Program>();
  program->graph = TwoOutputGraph();
  program->num_symbols = num_symbols;
  Slot x;
  x.source = Slot::Source::kInput;
  x.input = 0;
  x.dtype = DType::kFloat32;
  x.sizes = sizes;
  program->slots = {x, KernelSlot(sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, -1, -1};
  program->constants.resize(3);
  program->outputs = {WholeSlot(1, sizes), WholeSlot(2, sizes)};
  Chain chain;
  ProgramStep first;
  auto scale = std::make_unique<ScaleStep>(0, 1, 2.0f);
  chain.first = scale.get();
  first.runner = std::move(scale);
  first.allocate = {1};
  first.label = "kernel computing a";
  ProgramStep second;
  if (fail) {
    second.runner = std::make_unique<FailingStep>();
  } else {
    auto scale2 = std::make_unique<ScaleStep>(1, 2, 3.0f);
    chain.second = scale2.get();
    second.runner = std::move(scale2);
  }
  second.allocate = {2};
  second.can_fail = second_can_fail;
  second.label = "kernel computing b";
  program->steps.push_back(std::move(first));
  program->steps.push_back(std::move(second));
  chain.runner = *ProgramRunner::Create(std::move(program));
  return chain;
}

TEST(ProgramRunnerTest, StepsRunInOrderIntoMemoryTheRunnerGives) {
  Chain chain = MakeChain(false, ConstExprs({5}));
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 1);
  std::vector<Tensor> out(2);
  ASSERT_TRUE(chain.runner->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
  std::vector<double> a = ToDoubles(x), b = ToDoubles(x);
  for (double& v : a) v = static_cast<float>(v * 2);
  for (double& v : b) v = static_cast<float>(static_cast<float>(v * 2) * 3);
  EXPECT_EQ(ToDoubles(out[0]), a);
  EXPECT_EQ(ToDoubles(out[1]), b);
  EXPECT_EQ(chain.first->runs, 1);
  EXPECT_EQ(chain.runner->placement().num_direct_outputs(), 2);
  EXPECT_EQ(chain.runner->placement().DescribeCopies(), "");
}

TEST(ProgramRunnerTest, OutputsAreWrittenIntoDestinationsWhereNothingCanFail) {
  Chain chain = MakeChain(false, ConstExprs({5}));
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 1);
  Tensor a = *Tensor::Zeros(DType::kFloat32, {5});
  Tensor b = *Tensor::Zeros(DType::kFloat32, {5});
  const Tensor* destinations[] = {&a, &b};
  RunContext ctx;
  ctx.destinations = destinations;
  std::vector<Tensor> out(2);
  ASSERT_TRUE(chain.runner->Run(ctx, {x}, {}, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0].data(), a.data());
  EXPECT_EQ(out[1].data(), b.data());
  EXPECT_NE(ToDoubles(a), std::vector<double>(5, 0.0));
}

TEST(ProgramRunnerTest, AnOutputWrittenBeforeAStepThatCanFailIsCopied) {
  Chain chain = MakeChain(true, ConstExprs({5}), 0, /*fail=*/true);
  // A kernel reports its index checks after its writes: its own output is
  // not written in place either.
  EXPECT_EQ(chain.runner->placement().DescribeCopies(),
            "outputs copied: 0 'a' (step 2 can still fail after it is written "
            "(a kernel with index checks)), 1 'b' (step 2 can still fail "
            "after it is written (a kernel with index checks))");
  EXPECT_EQ(chain.runner->placement().num_direct_outputs(), 0);
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 1);
  Tensor a = *Tensor::Zeros(DType::kFloat32, {5});
  Tensor b = *Tensor::Zeros(DType::kFloat32, {5});
  const Tensor* destinations[] = {&a, &b};
  RunContext ctx;
  ctx.destinations = destinations;
  std::vector<Tensor> out(2);
  const absl::Status status =
      chain.runner->Run(ctx, {x}, {}, absl::MakeSpan(out));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  // The failure found both destinations unwritten.
  EXPECT_EQ(ToDoubles(a), std::vector<double>(5, 0.0));
  EXPECT_EQ(ToDoubles(b), std::vector<double>(5, 0.0));
}

TEST(ProgramRunnerTest, AStopNamesTheStepItCameBefore) {
  Chain chain = MakeChain(false, ConstExprs({5}));
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 1);
  Tensor a = *Tensor::Zeros(DType::kFloat32, {5});
  const Tensor* destinations[] = {&a, nullptr};
  const int32_t cancel = 1;
  RunContext ctx;
  ctx.destinations = destinations;
  ctx.cancel = &cancel;
  std::vector<Tensor> out(2);
  const absl::Status status =
      chain.runner->Run(ctx, {x}, {}, absl::MakeSpan(out));
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled);
  EXPECT_THAT(status.message(),
              HasSubstr("before step 1 of 2 (kernel computing a)"));
  EXPECT_EQ(chain.first->runs, 0);
  EXPECT_EQ(ToDoubles(a), std::vector<double>(5, 0.0));
}

TEST(ProgramRunnerTest, ReleasedSlotsAreLetGoBeforeLaterSteps) {
  auto program = std::make_unique<Program>();
  program->graph = TwoOutputGraph();
  const std::vector<IndexExpr> sizes = ConstExprs({3});
  Slot x;
  x.source = Slot::Source::kInput;
  x.input = 0;
  x.sizes = sizes;
  // x -> t (slot 1, released after step 2) -> a (slot 2) -> b (slot 3).
  program->slots = {x, KernelSlot(sizes), KernelSlot(sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, -1, -1, -1};
  program->constants.resize(4);
  program->outputs = {WholeSlot(2, sizes), WholeSlot(3, sizes)};
  auto third = std::make_unique<ScaleStep>(2, 3, 1.0f, /*watch=*/1);
  const ScaleStep* watcher = third.get();
  ProgramStep s1, s2, s3;
  s1.runner = std::make_unique<ScaleStep>(0, 1, 1.0f);
  s1.allocate = {1};
  s2.runner = std::make_unique<ScaleStep>(1, 2, 1.0f);
  s2.allocate = {2};
  s2.release = {1};
  s3.runner = std::move(third);
  s3.allocate = {3};
  program->steps.push_back(std::move(s1));
  program->steps.push_back(std::move(s2));
  program->steps.push_back(std::move(s3));
  auto runner = *ProgramRunner::Create(std::move(program));
  const Tensor input = RandomTensor(DType::kFloat32, {3}, 2);
  std::vector<Tensor> out(2);
  ASSERT_TRUE(runner->Run({}, {input}, {}, absl::MakeSpan(out)).ok());
  EXPECT_TRUE(watcher->watch_was_empty);
  EXPECT_EQ(ToDoubles(out[1]), ToDoubles(input));
}

TEST(ProgramRunnerTest, DynamicProgramsEvaluateTheirSizesPerCall) {
  const std::vector<IndexExpr> sizes = {IndexExpr::Size(0)};
  Chain chain = MakeChain(false, sizes, /*num_symbols=*/1);
  for (int64_t n : {3, 7, 1}) {
    const Tensor x = RandomTensor(DType::kFloat32, {n}, 3);
    std::vector<Tensor> out(2);
    ASSERT_TRUE(chain.runner->Run({}, {x}, {n}, absl::MakeSpan(out)).ok());
    EXPECT_EQ(out[1].numel(), n);
  }
  std::vector<Tensor> out(2);
  const Tensor x = RandomTensor(DType::kFloat32, {3}, 3);
  EXPECT_EQ(chain.runner->Run({}, {x}, {}, absl::MakeSpan(out)).code(),
            absl::StatusCode::kInvalidArgument);  // no symbol values
  EXPECT_EQ(chain.runner->static_arena_bytes(), -1);
}

// A dynamic program's sizes multiply symbols that each fit: a call whose
// product passes int64 is OUT_OF_RANGE naming the step, before any step.
TEST(ProgramRunnerTest, SizesPastInt64AtTheCallsSymbolsAreOutOfRange) {
  auto program = std::make_unique<Program>();
  program->graph = TwoOutputGraph();
  program->num_symbols = 1;
  const IndexExpr s0 = IndexExpr::Size(0);
  Slot x;
  x.source = Slot::Source::kInput;
  x.input = 0;
  x.sizes = {s0};
  program->slots = {x, KernelSlot({s0, s0}), KernelSlot({s0, s0})};
  program->slot_buffer = {-1, -1, -1};
  program->constants.resize(3);
  program->outputs = {WholeSlot(1, {s0, s0}), WholeSlot(2, {s0, s0})};
  auto scale = std::make_unique<ScaleStep>(0, 1, 1.0f);
  const ScaleStep* step = scale.get();
  ProgramStep first;
  first.runner = std::move(scale);
  first.allocate = {1, 2};
  first.label = "kernel computing a, b";
  first.computes = {"a", "b"};
  program->steps.push_back(std::move(first));
  auto runner = *ProgramRunner::Create(std::move(program));
  float one = 1.0f;
  const int64_t n = int64_t{1} << 32;
  const Tensor x_big =
      Tensor::Borrow(&one, DType::kFloat32, {n}, {0}, Device::Cpu());
  std::vector<Tensor> out(2);
  const absl::Status status =
      runner->Run({}, {x_big}, {n}, absl::MakeSpan(out));
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange) << status;
  EXPECT_THAT(status.message(),
              HasSubstr("step 1 (kernel computing 'a', 'b'): its sizes at the "
                        "call's symbol values [4294967296] overflow int64"));
  EXPECT_EQ(step->runs, 0);
  // 2^31 x 2^31 elements fit in int64; their float32 bytes do not.
  const absl::Status bytes =
      runner->Run({}, {x_big}, {int64_t{1} << 31}, absl::MakeSpan(out));
  EXPECT_EQ(bytes.code(), absl::StatusCode::kOutOfRange) << bytes;
}

TEST(ProgramRunnerTest, DestinationsAreCheckedBeforeAnyStep) {
  Chain chain = MakeChain(false, ConstExprs({5}));
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 1);
  Tensor wrong = *Tensor::Zeros(DType::kFloat32, {4});
  const Tensor* destinations[] = {nullptr, &wrong};
  RunContext ctx;
  ctx.destinations = destinations;
  std::vector<Tensor> out(2);
  const absl::Status status =
      chain.runner->Run(ctx, {x}, {}, absl::MakeSpan(out));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("output 1"));
  EXPECT_EQ(chain.first->runs, 0);
}

// An eager matrix product that is the program's output writes the caller's
// destination itself (its reference kernel writes destinations).
TEST(ProgramRunnerTest, EagerStepsWriteTheDestinationsTheyAreGiven) {
  GraphBuilder b("mm");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("m", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("m")}).ok());
  auto graph = std::shared_ptr<const Graph>(*b.Finish());
  const Tensor x = RandomTensor(DType::kFloat32, {4, 4}, 5);
  auto program = std::make_unique<Program>();
  program->graph = graph;
  const TensorMeta x_meta = TensorMeta::Of(x);
  program->metas = *InferShapes(*graph, {&x_meta, 1});
  const std::vector<IndexExpr> sizes = ConstExprs({4, 4});
  Slot in;
  in.source = Slot::Source::kInput;
  in.input = 0;
  in.sizes = sizes;
  Slot m;
  m.source = Slot::Source::kExtern;
  m.node = graph->FindNode("m");
  m.sizes = sizes;
  program->slots = {in, m};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {WholeSlot(1, sizes)};
  const int64_t x_key = int64_t{graph->inputs()[0]} << 16;
  absl::StatusOr<ProgramStep> step =
      MakeEagerStep(*program, m.node, {{x_key, WholeSlot(0, sizes)}});
  ASSERT_TRUE(step.ok()) << step.status();
  EXPECT_TRUE(step->writes_destinations);
  EXPECT_EQ(step->label, "node 'm'");
  program->steps.push_back(*std::move(step));
  auto runner = *ProgramRunner::Create(std::move(program));
  EXPECT_EQ(runner->placement().DescribeCopies(), "");
  Tensor dest = *Tensor::Zeros(DType::kFloat32, {4, 4});
  const Tensor* destinations[] = {&dest};
  RunContext ctx;
  ctx.destinations = destinations;
  std::vector<Tensor> out(1);
  ASSERT_TRUE(runner->Run(ctx, {x}, {}, absl::MakeSpan(out)).ok());
  EXPECT_EQ(out[0].data(), dest.data());
  // The same product without a destination, for the values.
  std::vector<Tensor> fresh(1);
  ASSERT_TRUE(runner->Run({}, {x}, {}, absl::MakeSpan(fresh)).ok());
  EXPECT_EQ(ToDoubles(dest), ToDoubles(fresh[0]));
}

}  // namespace
}  // namespace guardjit
