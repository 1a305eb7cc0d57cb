// Checks runtime/program/step_runner.h: StepRunner's defaults (no module
// kernel, no packed bytes, no index checks) and StepCall::CheckStop, which
// names the step a cancelled or timed-out call stopped before.

#include "runtime/program/step_runner.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/run_context.h"
#include "gtest/gtest.h"
#include "runtime/program/program.h"

namespace guardjit {
namespace {

// A runner that overrides only Run.
class MinimalRunner : public StepRunner {
 public:
  absl::Status Run(StepCall& call) const override {
    (void)call;
    return absl::OkStatus();
  }
};

// A program of three steps with labels (no runners: CheckStop reads only
// the labels).
Program ThreeSteps() {
  Program program;
  for (const char* label :
       {"kernel computing add, relu", "node 'mm'", "kernel computing sum"}) {
    ProgramStep step;
    step.label = label;
    program.steps.push_back(std::move(step));
  }
  return program;
}

const Tensor* NoDestination(int) { return nullptr; }

TEST(StepRunnerTest, DefaultsHaveNoKernelNoPackedBytesAndNoChecks) {
  const MinimalRunner runner;
  EXPECT_EQ(runner.module_kernel(), -1);
  EXPECT_EQ(runner.packed_bytes(), 0);
  const int64_t symbols[] = {4, 5};
  const absl::Status error = runner.CheckError(0, symbols);
  EXPECT_EQ(error.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(error.message(), "the step has no index checks");
}

TEST(StepRunnerTest, CheckStopIsOkForARunThatMayGoOn) {
  const Program program = ThreeSteps();
  RunContext ctx;
  const std::shared_ptr<Allocator> allocator;
  StepCall call{.ctx = ctx,
                .program = program,
                .step = 1,
                .allocator = allocator,
                .destination = NoDestination};
  EXPECT_TRUE(call.CheckStop().ok());
  // A cancel flag that is clear and a deadline ahead do not stop it.
  const int32_t cancel = 0;
  ctx.cancel = &cancel;
  ctx.deadline = absl::Now() + absl::Hours(1);
  EXPECT_TRUE(call.CheckStop().ok());
}

TEST(StepRunnerTest, CancelledCallNamesTheStepItStoppedBefore) {
  const Program program = ThreeSteps();
  const int32_t cancel = 1;
  RunContext ctx;
  ctx.cancel = &cancel;
  const std::shared_ptr<Allocator> allocator;
  StepCall call{.ctx = ctx,
                .program = program,
                .step = 0,
                .allocator = allocator,
                .destination = NoDestination};
  absl::Status stop = call.CheckStop();
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(stop.message(),
            "cancelled by the host before step 1 of 3 (kernel computing add, "
            "relu)");
  call.step = 2;
  stop = call.CheckStop();
  EXPECT_EQ(stop.message(),
            "cancelled by the host before step 3 of 3 (kernel computing sum)");
}

TEST(StepRunnerTest, TimedOutCallIsDeadlineExceededAndCancelWins) {
  const Program program = ThreeSteps();
  RunContext ctx;
  ctx.deadline = absl::Now() - absl::Seconds(1);
  const std::shared_ptr<Allocator> allocator;
  StepCall call{.ctx = ctx,
                .program = program,
                .step = 1,
                .allocator = allocator,
                .destination = NoDestination};
  absl::Status stop = call.CheckStop();
  EXPECT_EQ(stop.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stop.message(),
            "the call's timeout passed before step 2 of 3 (node 'mm')");
  // Both at once: the host's cancel is reported.
  const int32_t cancel = 1;
  ctx.cancel = &cancel;
  stop = call.CheckStop();
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace guardjit
