#include "runtime/cuda/dynamic_library.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(DynamicLibraryTest, MissingLibraryNamesEveryCandidate) {
  const std::vector<std::string> candidates = {"libgj_absent.so.1",
                                               "/nonexistent/libgj_absent.so"};
  absl::StatusOr<DynamicLibrary> library =
      DynamicLibrary::Open(candidates, "the absent library");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(library.status().message(), HasSubstr("the absent library"));
  EXPECT_THAT(library.status().message(), HasSubstr("libgj_absent.so.1"));
  EXPECT_THAT(library.status().message(),
              HasSubstr("/nonexistent/libgj_absent.so"));
}

TEST(DynamicLibraryTest, OpensAndResolves) {
  // libm is on every loader path this library runs on.
  const std::vector<std::string> candidates = {"libgj_absent.so", "libm.so.6"};
  absl::StatusOr<DynamicLibrary> library =
      DynamicLibrary::Open(candidates, "libm");
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_THAT(library->path(), HasSubstr("libm"));
  EXPECT_EQ(library->path()[0], '/');
  EXPECT_NE(library->Symbol("cos"), nullptr);
  EXPECT_EQ(library->Symbol("gj_no_such_symbol"), nullptr);
  absl::StatusOr<void*> missing = library->RequiredSymbol("gj_no_such_symbol");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(missing.status().message(), HasSubstr("gj_no_such_symbol"));
}

TEST(DynamicLibraryTest, ToolkitCandidatesSearchLoaderPathThenToolkit) {
  const char* old_home = std::getenv("CUDA_HOME");
  const std::string saved = old_home != nullptr ? old_home : "";
  setenv("CUDA_HOME", "/opt/cuda-x", 1);
  const absl::string_view sonames[] = {"libnvrtc.so.13", "libnvrtc.so"};
  const std::vector<std::string> candidates =
      CudaToolkitLibraryCandidates(sonames);
  if (old_home != nullptr) {
    setenv("CUDA_HOME", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_HOME");
  }
  ASSERT_GE(candidates.size(), 6u);
  EXPECT_EQ(candidates[0], "libnvrtc.so.13");
  EXPECT_EQ(candidates[1], "libnvrtc.so");
  EXPECT_EQ(candidates[2], "/opt/cuda-x/lib64/libnvrtc.so.13");
  EXPECT_EQ(candidates.back(), "/usr/local/cuda/lib64/libnvrtc.so");
}

}  // namespace
}  // namespace guardjit
