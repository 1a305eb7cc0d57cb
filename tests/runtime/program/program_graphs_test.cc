// reduce-overhead mode's interface (runtime/program/program_graphs.h) as
// ProgramRunner uses it: asked first on every call of a device program in
// reduce-overhead mode, with the call's inputs, symbols, evaluated sizes,
// allocator and output placement; a replay is the call (no step runs), a
// refusal runs the plain steps, an error fails the call; never asked on
// host programs, outside reduce-overhead mode, or before destinations are
// checked; its Describe is the runner's account.

#include "runtime/program/program_graphs.h"

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
using testing::CountingAllocator;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::InputSlot;
using testing::KernelSlot;
using testing::RandomTensor;
using testing::ScaleStep;
using testing::Step;
using testing::ToDoubles;
using testing::WholeSlot;

const Device kCuda{DeviceType::kCUDA, 0};

// Device memory that is host memory: the steps and the test read it.
class FakeTransfer : public DeviceTransfer {
 public:
  Device device() const override { return kCuda; }
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
    return std::shared_ptr<Allocator>(std::make_shared<CountingAllocator>());
  }
  absl::Status Synchronize(const RunContext&) const override {
    ++synchronizes;
    return absl::OkStatus();
  }
  mutable int synchronizes = 0;
};

// Replays when `replay` is set (writing `value` into a fresh output of the
// call's output sizes), else refuses; or fails with `error`. Records the
// call it was given.
class FakeGraphs : public ProgramGraphs {
 public:
  absl::StatusOr<bool> Replay(const GraphCall& call,
                              absl::Span<Tensor> outputs) const override {
    ++replays_asked;
    seen_inputs.assign(call.inputs.begin(), call.inputs.end());
    seen_symbols.assign(call.symbols.begin(), call.symbols.end());
    seen_output_sizes.clear();
    for (const ConcreteRef& ref : call.sizes.outputs) {
      seen_output_sizes.emplace_back(ref.sizes.begin(), ref.sizes.end());
    }
    seen_allocator = call.allocator.get();
    seen_placement = &call.placement;
    seen_faults = call.faults;
    seen_graph_policy = call.ctx.cuda_graphs;
    if (!error.ok()) return error;
    if (!replay) return false;
    for (size_t k = 0; k < outputs.size(); ++k) {
      const ConcreteRef& ref = call.sizes.outputs[k];
      absl::StatusOr<Tensor> t =
          Tensor::Empty(DType::kFloat32, ref.sizes, call.allocator, kCuda);
      if (!t.ok()) return t.status();
      for (int64_t i = 0; i < t->numel(); ++i) t->data_as<float>()[i] = value;
      outputs[k] = *t;
    }
    return true;
  }
  std::string Describe() const override { return "2 graphs, 5 replays"; }

  bool replay = true;
  float value = 42;
  absl::Status error;
  mutable int replays_asked = 0;
  mutable std::vector<Tensor> seen_inputs;
  mutable std::vector<int64_t> seen_symbols;
  mutable std::vector<std::vector<int64_t>> seen_output_sizes;
  mutable const Allocator* seen_allocator = nullptr;
  mutable const OutputPlacement* seen_placement = nullptr;
  mutable DeviceFaultPool* seen_faults = nullptr;
  mutable const CudaGraphPolicy* seen_graph_policy = nullptr;
};

// x [s0] -> a = 2x, as a device program (with `transfer`) or a host one.
struct Fixture {
  std::unique_ptr<ProgramRunner> runner;
  FakeGraphs* graphs = nullptr;
  const ScaleStep* step = nullptr;
};

Fixture Make(const DeviceTransfer* transfer, bool with_graphs = true) {
  auto program = std::make_unique<Program>();
  program->graph = ChainGraph(1);
  program->num_symbols = 1;
  const std::vector<IndexExpr> sizes = {IndexExpr::Size(0)};
  program->slots = {InputSlot(0, sizes), KernelSlot(sizes)};
  program->slot_buffer = {-1, -1};
  program->constants.resize(2);
  program->outputs = {WholeSlot(1, sizes)};
  program->transfer = transfer;
  Fixture f;
  auto step = std::make_unique<ScaleStep>(0, 1, 2.0f);
  f.step = step.get();
  program->steps.push_back(Step(std::move(step), {1}, "kernel computing a0"));
  std::unique_ptr<FakeGraphs> graphs;
  if (with_graphs) {
    graphs = std::make_unique<FakeGraphs>();
    f.graphs = graphs.get();
  }
  f.runner = *ProgramRunner::Create(std::move(program), std::move(graphs));
  return f;
}

struct Call {
  explicit Call(int64_t n)
      : x(RandomTensor(DType::kFloat32, {n}, 5)),
        allocator(std::make_shared<CountingAllocator>()) {
    ctx.allocator = allocator;
    ctx.cuda_graphs = &policy;
    symbols = {n};
  }
  absl::Status Run(const ProgramRunner& runner) {
    out.assign(1, Tensor());
    return runner.Run(ctx, {x}, symbols, absl::MakeSpan(out));
  }
  Tensor x;
  std::shared_ptr<CountingAllocator> allocator;
  CudaGraphPolicy policy;
  RunContext ctx;
  std::vector<int64_t> symbols;
  std::vector<Tensor> out;
};

TEST(ProgramGraphsTest, AReplayIsTheWholeCall) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  Call call(6);
  ASSERT_TRUE(call.Run(*f.runner).ok());
  EXPECT_EQ(f.graphs->replays_asked, 1);
  EXPECT_EQ(f.step->runs, 0);  // no plain launch
  EXPECT_EQ(ToDoubles(call.out[0]), std::vector<double>(6, 42.0));
  EXPECT_EQ(transfer.synchronizes, 0);  // not asked to wait
}

TEST(ProgramGraphsTest, TheReplayGetsTheCallsValuesAndSizes) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  Call call(7);
  ASSERT_TRUE(call.Run(*f.runner).ok());
  ASSERT_EQ(f.graphs->seen_inputs.size(), 1u);
  EXPECT_EQ(f.graphs->seen_inputs[0].data(), call.x.data());
  EXPECT_THAT(f.graphs->seen_symbols, ElementsAre(7));
  // The program's sizes evaluated at the call's symbols.
  ASSERT_EQ(f.graphs->seen_output_sizes.size(), 1u);
  EXPECT_THAT(f.graphs->seen_output_sizes[0], ElementsAre(7));
  EXPECT_EQ(f.graphs->seen_allocator, call.allocator.get());
  EXPECT_EQ(f.graphs->seen_placement, &f.runner->placement());
  EXPECT_EQ(f.graphs->seen_faults, nullptr);  // no device-side checks
  EXPECT_EQ(f.graphs->seen_graph_policy, &call.policy);
  Call other(3);
  ASSERT_TRUE(other.Run(*f.runner).ok());
  EXPECT_THAT(f.graphs->seen_output_sizes[0], ElementsAre(3));
}

TEST(ProgramGraphsTest, ARefusalRunsThePlainSteps) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  f.graphs->replay = false;
  Call call(5);
  ASSERT_TRUE(call.Run(*f.runner).ok());
  EXPECT_EQ(f.graphs->replays_asked, 1);
  EXPECT_EQ(f.step->runs, 1);
  EXPECT_TRUE(f.step->out_device == kCuda);  // the program's device memory
  std::vector<double> want = ToDoubles(call.x);
  for (double& v : want) v = static_cast<float>(v * 2);
  EXPECT_EQ(ToDoubles(call.out[0]), want);
}

TEST(ProgramGraphsTest, SynchronizingCallsWaitForTheStreamEitherWay) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  Call replayed(4);
  replayed.ctx.synchronize = true;
  ASSERT_TRUE(replayed.Run(*f.runner).ok());
  EXPECT_EQ(f.step->runs, 0);
  EXPECT_EQ(transfer.synchronizes, 1);
  f.graphs->replay = false;
  Call plain(4);
  plain.ctx.synchronize = true;
  ASSERT_TRUE(plain.Run(*f.runner).ok());
  EXPECT_EQ(f.step->runs, 1);
  EXPECT_EQ(transfer.synchronizes, 2);
}

TEST(ProgramGraphsTest, AReplayErrorFailsTheCall) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  f.graphs->error = absl::InternalError("cuGraphLaunch failed");
  Call call(4);
  const absl::Status status = call.Run(*f.runner);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("cuGraphLaunch failed"));
  EXPECT_EQ(f.step->runs, 0);
}

TEST(ProgramGraphsTest, OnlyAskedForDeviceCallsInReduceOverheadMode) {
  FakeTransfer transfer;
  Fixture device = Make(&transfer);
  Call plain_mode(4);
  plain_mode.ctx.cuda_graphs = nullptr;
  ASSERT_TRUE(plain_mode.Run(*device.runner).ok());
  EXPECT_EQ(device.graphs->replays_asked, 0);
  EXPECT_EQ(device.step->runs, 1);
  // A host program never replays, whatever the context says.
  Fixture host = Make(nullptr);
  Call call(4);
  ASSERT_TRUE(call.Run(*host.runner).ok());
  EXPECT_EQ(host.graphs->replays_asked, 0);
  EXPECT_EQ(host.step->runs, 1);
}

TEST(ProgramGraphsTest, DestinationsAreCheckedBeforeAReplay) {
  FakeTransfer transfer;
  Fixture f = Make(&transfer);
  Call call(4);
  Tensor wrong = *Tensor::Zeros(DType::kFloat32, {5});
  const Tensor* destinations[] = {&wrong};
  call.ctx.destinations = destinations;
  const absl::Status status = call.Run(*f.runner);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("output 0"));
  EXPECT_EQ(f.graphs->replays_asked, 0);
  EXPECT_EQ(f.step->runs, 0);
}

TEST(ProgramGraphsTest, DescribeIsTheRunnersCudaGraphAccount) {
  FakeTransfer transfer;
  Fixture with = Make(&transfer);
  EXPECT_EQ(with.runner->DescribeCudaGraphs(), "2 graphs, 5 replays");
  Fixture without = Make(&transfer, /*with_graphs=*/false);
  EXPECT_EQ(without.runner->DescribeCudaGraphs(), "");
  // Without graphs a reduce-overhead call runs its steps.
  Call call(3);
  ASSERT_TRUE(call.Run(*without.runner).ok());
  EXPECT_EQ(without.step->runs, 1);
}

}  // namespace
}  // namespace guardjit
