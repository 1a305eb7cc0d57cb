#include "runtime/program/step_profile.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/program/step_runner.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Program ThreeSteps() {
  Program p;
  const std::pair<StepKind, const char*> steps[] = {
      {StepKind::kConv, "kernel computing relu"},
      {StepKind::kKernel, "kernel computing add"},
      {StepKind::kGemm, "kernel computing mm"}};
  for (const auto& [kind, label] : steps) {
    ProgramStep& step = p.steps.emplace_back();
    step.kind = kind;
    step.label = label;
  }
  return p;
}

TEST(StepProfileTest, EmptyBeforeTheFirstCall) {
  const Program p = ThreeSteps();
  EXPECT_EQ(StepProfile(3).Describe(p), "");
}

TEST(StepProfileTest, MeansPerCallSharesAndTheSlowestStepsFirst) {
  const Program p = ThreeSteps();
  StepProfile profile(3);
  const int64_t call1[] = {3'000'000, 500'000, 1'500'000};
  const int64_t call2[] = {1'000'000, 500'000, 500'000};
  profile.AddCall(call1, 5'200'000);
  profile.AddCall(call2, 2'200'000);
  // Means: conv 2 ms, kernel 0.5 ms, gemm 1 ms; calls 3.7 ms.
  EXPECT_EQ(profile.Describe(p),
            "2 calls, 3.700 ms per call: steps 3.500 ms (94.6%), between "
            "steps 200.0 us\n"
            "  1 kernel steps: 500.0 us\n"
            "  1 gemm steps: 1.000 ms\n"
            "  1 conv steps: 2.000 ms\n"
            "  step 1 (conv): 2.000 ms (57.1%) kernel computing relu\n"
            "  step 3 (gemm): 1.000 ms (28.6%) kernel computing mm\n"
            "  step 2 (kernel): 500.0 us (14.3%) kernel computing add");
  // The slowest `top` only.
  EXPECT_THAT(profile.Describe(p, 1), HasSubstr("step 1 (conv)"));
  EXPECT_THAT(profile.Describe(p, 1), Not(HasSubstr("step 3")));
}

TEST(StepProfileTest, ConcurrentCallsAddUp) {
  const Program p = ThreeSteps();
  StepProfile profile(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      const int64_t ns[] = {1000, 2000, 3000};
      for (int i = 0; i < 1000; ++i) profile.AddCall(ns, 7000);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_THAT(profile.Describe(p),
              HasSubstr("4000 calls, 7.0 us per call: steps 6.0 us"));
}

TEST(StepProfileTest, AProgramOfAnotherStepCountDescribesNothing) {
  StepProfile profile(2);
  const int64_t ns[] = {1, 2};
  profile.AddCall(ns, 3);
  EXPECT_EQ(profile.Describe(ThreeSteps()), "");
}

}  // namespace
}  // namespace guardjit
