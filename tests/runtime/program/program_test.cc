// A compiled entry's program (runtime/program/program.h) as ProgramRunner
// reads it: which step kinds run a graph node, the defaults, the device a
// transfer gives it, what each slot source binds, plan buffers shared by
// liveness, outputs as strided views over their slots (in expressions of
// the program's symbols), and steps without a runner refused.

#include "runtime/program/program.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/program/program_runner.h"
#include "tests/runtime/program/program_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ChainGraph;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::InputSlot;
using testing::KernelSlot;
using testing::RandomTensor;
using testing::ScaleStep;
using testing::Step;
using testing::ToDoubles;
using testing::WholeSlot;

TEST(ProgramTest, OnlyEagerAndAttentionStepsRunAGraphNode) {
  EXPECT_TRUE(RunsGraphNode(StepKind::kEager));
  EXPECT_TRUE(RunsGraphNode(StepKind::kAttention));
  EXPECT_FALSE(RunsGraphNode(StepKind::kKernel));
  EXPECT_FALSE(RunsGraphNode(StepKind::kGemm));
  EXPECT_FALSE(RunsGraphNode(StepKind::kConv));
}

TEST(ProgramTest, Defaults) {
  const Slot slot;
  EXPECT_EQ(slot.source, Slot::Source::kKernel);
  EXPECT_EQ(slot.input, -1);
  EXPECT_EQ(slot.node, -1);
  EXPECT_EQ(slot.output, 0);
  EXPECT_EQ(slot.dtype, DType::kFloat32);
  EXPECT_TRUE(slot.strides.empty());
  const TensorRef ref;
  EXPECT_EQ(ref.slot, -1);
  const ProgramStep step;
  EXPECT_EQ(step.kind, StepKind::kKernel);
  EXPECT_EQ(step.node, -1);
  EXPECT_EQ(step.runner, nullptr);
  EXPECT_FALSE(step.can_fail);
  EXPECT_FALSE(step.writes_destinations);
  const Program program;
  EXPECT_EQ(program.num_symbols, 0);
  EXPECT_EQ(program.transfer, nullptr);
  EXPECT_FALSE(program.has_device_checks);
  EXPECT_TRUE(program.device() == Device::Cpu());
}

// A device backend's transfer that moves nothing.
class FakeTransfer : public DeviceTransfer {
 public:
  explicit FakeTransfer(Device device) : device_(device) {}
  Device device() const override { return device_; }
  absl::StatusOr<Tensor> ToHost(const Tensor& t,
                                const RunContext&) const override {
    return t;
  }
  absl::StatusOr<Tensor> ToDevice(const Tensor& t,
                                  const RunContext&) const override {
    return t;
  }
  absl::StatusOr<std::shared_ptr<Allocator>> DefaultAllocator(
      const RunContext&) const override {
    return absl::UnimplementedError("no allocator");
  }
  absl::Status Synchronize(const RunContext&) const override {
    return absl::OkStatus();
  }

 private:
  Device device_;
};

TEST(ProgramTest, ADeviceProgramIsOnItsTransfersDevice) {
  const FakeTransfer transfer(Device{DeviceType::kCUDA, 3});
  Program program;
  program.transfer = &transfer;
  EXPECT_EQ(program.device().type, DeviceType::kCUDA);
  EXPECT_EQ(program.device().index, 3);
  program.transfer = nullptr;
  EXPECT_TRUE(program.device() == Device::Cpu());
}

// x (input) and w (constant) -> a = 2x, b = 3w.
TEST(ProgramTest, InputAndConstantSlotsBindTheCallsInputAndTheWeight) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(2);
  const std::vector<IndexExpr> sizes = ConstExprs({4});
  const Tensor w = RandomTensor(DType::kFloat32, {4}, 7);
  Slot constant;
  constant.source = Slot::Source::kConstant;
  constant.node = 0;
  constant.sizes = sizes;
  program->slots = {InputSlot(0, sizes), constant, KernelSlot(sizes),
                    KernelSlot(sizes)};
  program->slot_buffer = {-1, -1, -1, -1};
  program->constants = {Tensor(), w, Tensor(), Tensor()};
  program->outputs = {WholeSlot(2, sizes), WholeSlot(3, sizes)};
  auto from_x = std::make_unique<ScaleStep>(0, 2, 2.0f);
  auto from_w = std::make_unique<ScaleStep>(1, 3, 3.0f);
  const ScaleStep* sx = from_x.get();
  const ScaleStep* sw = from_w.get();
  program->steps.push_back(Step(std::move(from_x), {2}, "kernel a"));
  program->steps.push_back(Step(std::move(from_w), {3}, "kernel b"));
  auto runner = ProgramRunner::Create(std::move(program));
  ASSERT_TRUE(runner.ok()) << runner.status();
  const Tensor x = RandomTensor(DType::kFloat32, {4}, 8);
  std::vector<Tensor> out(2);
  ASSERT_TRUE((*runner)->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
  EXPECT_EQ(sx->in_data, x.data());  // the input itself, not a copy
  EXPECT_EQ(sw->in_data, w.data());
  const std::vector<double> xs = ToDoubles(x), ws = ToDoubles(w);
  const std::vector<double> a = ToDoubles(out[0]), b = ToDoubles(out[1]);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a[i], static_cast<float>(xs[i] * 2));
    EXPECT_EQ(b[i], static_cast<float>(ws[i] * 3));
  }
}

// x -> t (slot 1) -> a (slot 2, output); x -> u (slot 3) -> b (slot 4,
// output), with t and u in plan buffers `t_buffer` and `u_buffer`.
struct Buffered {
  std::unique_ptr<ProgramRunner> runner;
  const ScaleStep* writes_t = nullptr;
  const ScaleStep* writes_u = nullptr;
};

Buffered MakeBuffered(int t_buffer, int u_buffer, int num_buffers) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(2);
  const std::vector<IndexExpr> sizes = ConstExprs({5});
  program->slots = {InputSlot(0, sizes), KernelSlot(sizes), KernelSlot(sizes),
                    KernelSlot(sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, t_buffer, -1, u_buffer, -1};
  program->buffer_bytes.assign(num_buffers, IndexExpr::Const(20));
  program->constants.resize(5);
  program->outputs = {WholeSlot(2, sizes), WholeSlot(4, sizes)};
  Buffered b;
  auto t = std::make_unique<ScaleStep>(0, 1, 2.0f);
  auto u = std::make_unique<ScaleStep>(0, 3, 5.0f);
  b.writes_t = t.get();
  b.writes_u = u.get();
  program->steps.push_back(Step(std::move(t), {1}, "t"));
  ProgramStep a = Step(std::make_unique<ScaleStep>(1, 2, 1.0f), {2}, "a");
  a.release = {1};
  program->steps.push_back(std::move(a));
  program->steps.push_back(Step(std::move(u), {3}, "u"));
  ProgramStep last = Step(std::make_unique<ScaleStep>(3, 4, 1.0f), {4}, "b");
  last.release = {3};
  program->steps.push_back(std::move(last));
  b.runner = *ProgramRunner::Create(std::move(program));
  return b;
}

TEST(ProgramTest, SlotsOfOnePlanBufferShareItsMemory) {
  const Tensor x = RandomTensor(DType::kFloat32, {5}, 3);
  std::vector<double> twice = ToDoubles(x), five = ToDoubles(x);
  for (double& v : twice) v = static_cast<float>(v * 2);
  for (double& v : five) v = static_cast<float>(v * 5);
  {
    Buffered shared = MakeBuffered(0, 0, 1);
    EXPECT_EQ(shared.runner->num_arena_buffers(), 1);
    // 20 bytes, aligned to 64 in the arena.
    EXPECT_EQ(shared.runner->static_arena_bytes(), 64);
    std::vector<Tensor> out(2);
    ASSERT_TRUE(shared.runner->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
    ASSERT_NE(shared.writes_t->out_data, nullptr);
    EXPECT_EQ(shared.writes_t->out_data, shared.writes_u->out_data);
    // t was read before u overwrote it.
    EXPECT_EQ(ToDoubles(out[0]), twice);
    EXPECT_EQ(ToDoubles(out[1]), five);
  }
  {
    Buffered apart = MakeBuffered(0, 1, 2);
    EXPECT_EQ(apart.runner->num_arena_buffers(), 2);
    EXPECT_EQ(apart.runner->static_arena_bytes(), 128);
    std::vector<Tensor> out(2);
    ASSERT_TRUE(apart.runner->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
    EXPECT_EQ(static_cast<const char*>(apart.writes_u->out_data) -
                  static_cast<const char*>(apart.writes_t->out_data),
              64);
    EXPECT_EQ(ToDoubles(out[0]), twice);
    EXPECT_EQ(ToDoubles(out[1]), five);
  }
}

// One [2, 3] kernel slot y = x; output 0 its transpose, output 1 its
// second row (offset 3).
TEST(ProgramTest, OutputsAreStridedViewsOfTheirSlots) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(2);
  const std::vector<IndexExpr> sizes = ConstExprs({2, 3});
  program->slots = {InputSlot(0, sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {
      {1, ConstExprs({3, 2}), ConstExprs({1, 3}), IndexExpr::Const(0)},
      {1, ConstExprs({3}), ConstExprs({1}), IndexExpr::Const(3)}};
  program->steps.push_back(
      Step(std::make_unique<ScaleStep>(0, 1, 1.0f), {1}, "copy"));
  auto runner = ProgramRunner::Create(std::move(program));
  ASSERT_TRUE(runner.ok()) << runner.status();
  const Tensor x = testing::Iota({2, 3});
  std::vector<Tensor> out(2);
  ASSERT_TRUE((*runner)->Run({}, {x}, {}, absl::MakeSpan(out)).ok());
  EXPECT_THAT(out[0].sizes(), ElementsAre(3, 2));
  EXPECT_THAT(out[0].strides(), ElementsAre(1, 3));
  EXPECT_EQ(ToDoubles(out[0]), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_THAT(out[1].sizes(), ElementsAre(3));
  EXPECT_EQ(ToDoubles(out[1]), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(out[1].data_as<float>(), out[0].data_as<float>() + 3);
}

// A dynamic program: x [s0] -> y [2 * s0] (x twice over), output every
// other element of y from 1: sizes, strides and offset are expressions.
class RepeatTwice : public StepRunner {
 public:
  absl::Status Run(StepCall& call) const override {
    const Tensor& x = call.slots[0];
    const Tensor& y = call.slots[1];
    if (y.numel() != 2 * x.numel()) return absl::InternalError("bad sizes");
    for (int64_t i = 0; i < x.numel(); ++i) {
      y.data_as<float>()[2 * i] = -1;
      y.data_as<float>()[2 * i + 1] = x.data_as<float>()[i];
    }
    return absl::OkStatus();
  }
};

TEST(ProgramTest, SizesAreExpressionsOverTheProgramsSymbols) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(1);
  program->num_symbols = 1;
  const IndexExpr s0 = IndexExpr::Size(0);
  program->slots = {InputSlot(0, {s0}), KernelSlot({s0 * IndexExpr::Const(2)})};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {{1, {s0}, {IndexExpr::Const(2)}, IndexExpr::Const(1)}};
  program->steps.push_back(Step(std::make_unique<RepeatTwice>(), {1}, "rep"));
  auto runner = ProgramRunner::Create(std::move(program));
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ((*runner)->static_arena_bytes(), -1);
  for (int64_t n : {1, 4, 9}) {
    const Tensor x = RandomTensor(DType::kFloat32, {n}, 10 + n);
    std::vector<Tensor> out(1);
    ASSERT_TRUE((*runner)->Run({}, {x}, {n}, absl::MakeSpan(out)).ok());
    EXPECT_THAT(out[0].sizes(), ElementsAre(n));
    EXPECT_THAT(out[0].strides(), ElementsAre(2));
    EXPECT_EQ(ToDoubles(out[0]), ToDoubles(x));
  }
}

TEST(ProgramTest, EveryStepNeedsARunner) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(1);
  const std::vector<IndexExpr> sizes = ConstExprs({2});
  program->slots = {InputSlot(0, sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {WholeSlot(1, sizes)};
  program->steps.push_back(Step(nullptr, {1}, "kernel computing a0"));
  auto runner = ProgramRunner::Create(std::move(program));
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(runner.status().message(),
              HasSubstr("'kernel computing a0' has no runner"));
}

}  // namespace
}  // namespace guardjit
