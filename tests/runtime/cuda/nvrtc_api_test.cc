// NVRTC needs no GPU: where the toolkit is installed (these machines, CI) the
// table must load. A machine without it skips.

#include "runtime/cuda/nvrtc_api.h"

#include <algorithm>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(NvrtcApiTest, LoadsWithVersionAndArchs) {
  absl::StatusOr<const NvrtcApi*> api = NvrtcApi::Get();
  ASSERT_TRUE(api.ok()) << api.status();
  EXPECT_EQ((*api)->major, 13) << "built against CUDA 13 headers";
  EXPECT_EQ((*api)->version(), (*api)->major * 1000 + (*api)->minor * 10);
  EXPECT_THAT((*api)->library_path, HasSubstr("libnvrtc"));
  const std::vector<int>& archs = (*api)->supported_archs;
  ASSERT_FALSE(archs.empty());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_EQ(*NvrtcApi::Get(), *api) << "loaded once";
}

TEST(NvrtcApiTest, StatusCarriesTheErrorName) {
  ASSERT_TRUE(NvrtcApi::Get().ok());
  EXPECT_TRUE(NvrtcStatus(NVRTC_SUCCESS, "x").ok());
  const absl::Status option =
      NvrtcStatus(NVRTC_ERROR_INVALID_OPTION, "nvrtcCompileProgram");
  EXPECT_EQ(option.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(option.message(), HasSubstr("nvrtcCompileProgram"));
  EXPECT_THAT(option.message(), HasSubstr("NVRTC_ERROR_INVALID_OPTION"));
  EXPECT_EQ(NvrtcStatus(NVRTC_ERROR_OUT_OF_MEMORY, "x").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(NvrtcStatus(NVRTC_ERROR_COMPILATION, "x").code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace guardjit
