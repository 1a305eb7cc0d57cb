#include "runtime/program/live_programs.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/program/step_runner.h"

namespace guardjit {
namespace {

// A runner that holds `bytes` packed and never runs.
class Holding : public StepRunner {
 public:
  explicit Holding(int64_t bytes) : bytes_(bytes) {}
  absl::Status Run(StepCall&) const override {
    return absl::InternalError("not run");
  }
  int64_t packed_bytes() const override { return bytes_; }

 private:
  const int64_t bytes_;
};

// A program whose steps hold `bytes` each (0: a runner without packing;
// -1: a step without a runner).
std::unique_ptr<Program> ProgramHolding(std::vector<int64_t> bytes) {
  auto program = std::make_unique<Program>();
  for (int64_t b : bytes) {
    ProgramStep step;
    if (b >= 0) step.runner = std::make_unique<Holding>(b);
    program->steps.push_back(std::move(step));
  }
  return program;
}

TEST(LiveProgramsTest, PackedBytesSumsEveryStepOfAProgram) {
  EXPECT_EQ(PackedBytes(*ProgramHolding({})), 0);
  EXPECT_EQ(PackedBytes(*ProgramHolding({100, 0, -1, 28})), 128);
}

TEST(LiveProgramsTest, ProgramsCountWhileRegistered) {
  std::shared_ptr<LivePrograms> live = LivePrograms::Create();
  EXPECT_EQ(live->size(), 0);
  EXPECT_EQ(live->PackedBytes(), 0);
  auto a = ProgramHolding({4096, 0});
  auto b = ProgramHolding({-1, 512});
  auto ra = live->Add(*a);
  EXPECT_EQ(live->size(), 1);
  EXPECT_EQ(live->PackedBytes(), 4096);
  {
    auto rb = live->Add(*b);
    EXPECT_EQ(live->size(), 2);
    EXPECT_EQ(live->PackedBytes(), 4608);
  }
  EXPECT_EQ(live->size(), 1);
  EXPECT_EQ(live->PackedBytes(), 4096);
  ra.reset();
  EXPECT_EQ(live->size(), 0);
  EXPECT_EQ(live->PackedBytes(), 0);
}

TEST(LiveProgramsTest, ARegistrationKeepsItsRegistryAlive) {
  auto program = ProgramHolding({64});
  std::unique_ptr<LivePrograms::Registration> registration;
  {
    std::shared_ptr<LivePrograms> live = LivePrograms::Create();
    registration = live->Add(*program);
  }
  registration.reset();  // leaves a registry only it still holds
}

TEST(LiveProgramsTest, ThreadsRegisterAndReadConcurrently) {
  std::shared_ptr<LivePrograms> live = LivePrograms::Create();
  constexpr int kThreads = 4, kRounds = 200;
  std::vector<std::unique_ptr<Program>> programs;
  for (int t = 0; t < kThreads; ++t) programs.push_back(ProgramHolding({8}));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        auto registration = live->Add(*programs[t]);
        const int64_t bytes = live->PackedBytes();
        EXPECT_GE(bytes, 8);
        EXPECT_LE(bytes, 8 * kThreads);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(live->size(), 0);
}

}  // namespace
}  // namespace guardjit
