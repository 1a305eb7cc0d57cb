#include "runtime/cuda/cuda_arch.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(CudaArchTest, ParsesEveryAcceptedForm) {
  for (const char* text : {"cuda:sm_90", "sm_90", "cuda:90", "90"}) {
    absl::StatusOr<CudaArch> arch = ParseCudaTarget(text);
    ASSERT_TRUE(arch.ok()) << text << ": " << arch.status();
    EXPECT_EQ(*arch, (CudaArch{9, 0})) << text;
    EXPECT_EQ(arch->ToString(), "sm_90");
    EXPECT_EQ(arch->number(), 90);
  }
  EXPECT_EQ(*ParseCudaTarget("cuda:sm_80"), (CudaArch{8, 0}));
  EXPECT_EQ(*ParseCudaTarget("sm_75"), (CudaArch{7, 5}));
  EXPECT_EQ(*ParseCudaTarget("cuda:sm_120"), (CudaArch{12, 0}));
  EXPECT_EQ(*ParseCudaTarget("121"), (CudaArch{12, 1}));
}

TEST(CudaArchTest, ParsesVariants) {
  const CudaArch arch = *ParseCudaTarget("cuda:sm_90a");
  EXPECT_EQ(arch, (CudaArch{9, 0, 'a'}));
  EXPECT_EQ(arch.ToString(), "sm_90a");
  EXPECT_NE(arch, (CudaArch{9, 0}));
  EXPECT_EQ(ParseCudaTarget("sm_100f")->ToString(), "sm_100f");
}

TEST(CudaArchTest, RefusesOtherText) {
  for (const char* text :
       {"", "cuda:", "cuda:sm_", "sm_9", "sm_090", "sm_-90", "sm_90b",
        "sm_1000", "cpu", "cuda:sm_90 ", "compute_90", "cuda:sm_a"}) {
    absl::StatusOr<CudaArch> arch = ParseCudaTarget(text);
    ASSERT_FALSE(arch.ok()) << "'" << text << "' parsed";
    EXPECT_EQ(arch.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(arch.status().message(), HasSubstr("cuda:sm_XY"));
    EXPECT_THAT(arch.status().message(),
                HasSubstr(absl::StrCat("'", text, "'")));
  }
}

}  // namespace
}  // namespace guardjit
