#ifndef GUARDJIT_TESTS_RUNTIME_CUDA_EMULATED_PROCESS_TEST_UTIL_H_
#define GUARDJIT_TESTS_RUNTIME_CUDA_EMULATED_PROCESS_TEST_UTIL_H_

// Runs part of a test on the emulated CUDA device (testing/cuda/
// emulated_driver.h, emulated_cublaslt.h) in a process of its own. The
// driver table is process-wide and devices keep the driver they were first
// read with, so a test binary that also holds tests against the real driver
// (runtime_tests, jit_tests: tests/CMakeLists.txt does not install the
// emulated driver in them, and scripts/gpu_check.sh runs runtime_tests on a
// GPU) must not install it in its own process. GJ_EXPECT_ON_EMULATED_DEVICE
// runs a function in a child process (gtest's "threadsafe" death-test
// style: this binary re-executed for this test alone) that installs the
// emulated driver and cuBLASLt first; the child's failed assertions are
// printed on its stderr, which the parent shows, and fail the test through
// the child's exit status.

#include <cstdio>
#include <cstdlib>

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cuda_driver.h"
#include "test_paths.h"  // GJ_HOST_CXX, GJ_SIMT_CACHE_DIR_DEFAULT
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"

namespace guardjit::testing {

// In the child: the emulated device (modules compiled by the build's host
// compiler, through the build tree's SIMT module cache unless
// $GJ_SIMT_CACHE_DIR says otherwise), then `body` with its assertions (on
// any thread) collected, each failure printed on stderr (gtest forwards no
// events in a death test's child), and the exit status.
[[noreturn]] inline void RunOnEmulatedDevice(void (*body)()) {
  setenv("GJ_HOST_CXX", GJ_HOST_CXX, /*overwrite=*/0);
  setenv("GJ_SIMT_CACHE_DIR", GJ_SIMT_CACHE_DIR_DEFAULT, /*overwrite=*/0);
  CudaDriver::InstallForTesting(EmulatedCudaDriver::Get());
  CublasLtApi::InstallForTesting(EmulatedCublasLt::Get());
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS,
        &results);
    body();
  }
  int failures = 0;
  for (int i = 0; i < results.size(); ++i) {
    const ::testing::TestPartResult& r = results.GetTestPartResult(i);
    if (!r.failed()) continue;
    ++failures;
    std::fprintf(stderr, "%s:%d: failure on the emulated device:\n%s\n",
                 r.file_name() != nullptr ? r.file_name() : "?",
                 r.line_number(), r.message());
  }
  std::fflush(nullptr);
  std::_Exit(failures > 0 ? 1 : 0);
}

}  // namespace guardjit::testing

// Runs `body` (a void() function using gtest assertions) on the emulated
// device in a child process; the test fails if any assertion there does.
#define GJ_EXPECT_ON_EMULATED_DEVICE(body)                         \
  do {                                                             \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                \
    EXPECT_EXIT(::guardjit::testing::RunOnEmulatedDevice(&(body)), \
                ::testing::ExitedWithCode(0), "");                 \
  } while (0)

#endif  // GUARDJIT_TESTS_RUNTIME_CUDA_EMULATED_PROCESS_TEST_UTIL_H_
