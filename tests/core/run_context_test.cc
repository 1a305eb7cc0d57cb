// What a call hands an executable (core/run_context.h): the stop checks
// (the host's cancel flag, the deadline) and the destinations' contract.

#include "core/run_context.h"

#include <cstdint>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(RunContextTest, DefaultRunNeverStops) {
  const RunContext ctx;
  EXPECT_FALSE(ctx.stoppable());
  EXPECT_TRUE(ctx.CheckStop().ok());
  EXPECT_EQ(ctx.destination(0), nullptr);
  EXPECT_TRUE(ctx.symbols.empty());
  EXPECT_EQ(ctx.stream, nullptr);
  EXPECT_FALSE(ctx.synchronize);
}

TEST(RunContextTest, CancelFlagIsReadOnEachCheck) {
  int32_t cancel = 0;
  RunContext ctx;
  ctx.cancel = &cancel;
  EXPECT_TRUE(ctx.stoppable());
  EXPECT_TRUE(ctx.CheckStop().ok());
  // The host sets the flag after the run began.
  cancel = 1;
  absl::Status stop = ctx.CheckStop();
  EXPECT_EQ(stop.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(stop.message(), "cancelled by the host");
  // Any nonzero value asks to stop.
  cancel = -5;
  EXPECT_EQ(ctx.CheckStop().code(), absl::StatusCode::kCancelled);
  cancel = 0;
  EXPECT_TRUE(ctx.CheckStop().ok());
}

TEST(RunContextTest, DeadlineInThePastStopsTheRun) {
  RunContext ctx;
  ctx.deadline = absl::Now() - absl::Milliseconds(1);
  EXPECT_TRUE(ctx.stoppable());
  const absl::Status stop = ctx.CheckStop();
  EXPECT_EQ(stop.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(stop.message(), "the call's timeout passed");
  ctx.deadline = absl::Now() + absl::Hours(1);
  EXPECT_TRUE(ctx.CheckStop().ok());
}

TEST(RunContextTest, CancellationIsReportedBeforeTheDeadline) {
  const int32_t cancel = 1;
  RunContext ctx;
  ctx.cancel = &cancel;
  ctx.deadline = absl::Now() - absl::Seconds(1);
  EXPECT_EQ(ctx.CheckStop().code(), absl::StatusCode::kCancelled);
}

TEST(RunContextTest, DestinationsByOutputIndex) {
  const Tensor a = *Tensor::Zeros(DType::kFloat32, {2});
  const Tensor* dests[] = {nullptr, &a};
  RunContext ctx;
  ctx.destinations = dests;
  EXPECT_EQ(ctx.destination(0), nullptr);
  EXPECT_EQ(ctx.destination(1), &a);
  // Past the end: the executable allocates.
  EXPECT_EQ(ctx.destination(2), nullptr);
}

TEST(CheckDestinationTest, OutputsWithoutDestinationPass) {
  const RunContext none;
  EXPECT_TRUE(CheckDestination(none, 0, DType::kFloat32, {2, 3}).ok());
  const Tensor a = *Tensor::Zeros(DType::kInt64, {4});
  const Tensor* dests[] = {nullptr, &a};
  RunContext ctx;
  ctx.destinations = dests;
  EXPECT_TRUE(CheckDestination(ctx, 0, DType::kFloat32, {2, 3}).ok());
  EXPECT_TRUE(CheckDestination(ctx, 7, DType::kFloat32, {2, 3}).ok());
}

TEST(CheckDestinationTest, MatchingDestinationPassesWhateverItsStrides) {
  const Tensor t = *Tensor::Zeros(DType::kFloat32, {3, 2});
  const Tensor transposed = t.AsStrided({2, 3}, {1, 2});
  const Tensor* dests[] = {&transposed};
  RunContext ctx;
  ctx.destinations = dests;
  EXPECT_TRUE(CheckDestination(ctx, 0, DType::kFloat32, {2, 3}).ok());
}

TEST(CheckDestinationTest, WrongSizesOrDTypeNameTheOutput) {
  const Tensor wrong_sizes = *Tensor::Zeros(DType::kFloat32, {3, 2});
  const Tensor wrong_dtype = *Tensor::Zeros(DType::kFloat16, {2, 3});
  const Tensor wrong_rank = *Tensor::Zeros(DType::kFloat32, {6});
  const Tensor scalar = *Tensor::Zeros(DType::kFloat32, {});
  const Tensor* dests[] = {nullptr, &wrong_sizes, &wrong_dtype, &wrong_rank,
                           &scalar};
  RunContext ctx;
  ctx.destinations = dests;
  auto message = [&](size_t output, DType dtype, IntSpan sizes) {
    const absl::Status s = CheckDestination(ctx, output, dtype, sizes);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    return std::string(s.message());
  };
  EXPECT_EQ(message(1, DType::kFloat32, {2, 3}),
            "output 1: expected float32[2, 3], got float32[3, 2]");
  EXPECT_EQ(message(2, DType::kFloat32, {2, 3}),
            "output 2: expected float32[2, 3], got float16[2, 3]");
  EXPECT_EQ(message(3, DType::kFloat32, {2, 3}),
            "output 3: expected float32[2, 3], got float32[6]");
  // A prefix of the destination's sizes is not a match either.
  EXPECT_EQ(message(3, DType::kFloat32, {}),
            "output 3: expected float32[], got float32[6]");
  EXPECT_EQ(message(4, DType::kFloat32, {1}),
            "output 4: expected float32[1], got float32[]");
  EXPECT_TRUE(CheckDestination(ctx, 4, DType::kFloat32, {}).ok());
}

}  // namespace
}  // namespace guardjit
