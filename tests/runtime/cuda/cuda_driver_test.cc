// The driver table loads wherever libcuda and a device are; elsewhere (the
// developers' machines and CI) it must fail cleanly, naming the library.
// Device tests GTEST_SKIP without a device and run on GPU machines.

#include "runtime/cuda/cuda_driver.h"

#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/cuda_device.h"

namespace guardjit {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// The loaded driver, or skips the test naming why there is none.
#define GJ_DRIVER_OR_SKIP(driver)                                    \
  absl::StatusOr<const CudaDriver*> driver##_or = CudaDriver::Get(); \
  if (!driver##_or.ok()) {                                           \
    GTEST_SKIP() << "no CUDA device: " << driver##_or.status();      \
  }                                                                  \
  const CudaDriver& driver = **driver##_or

TEST(CudaDriverTest, GetIsOkOrUnavailableNamingLibcuda) {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (driver.ok()) {
    EXPECT_GE((*driver)->driver_version, 12000);
    EXPECT_THAT((*driver)->library_path, HasSubstr("libcuda"));
    return;
  }
  EXPECT_EQ(driver.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(driver.status().message(), HasSubstr("libcuda"));
  // Either the library is missing (dlerror says why) or cuInit failed (its
  // CUresult name says why).
  EXPECT_THAT(driver.status().message(),
              AnyOf(HasSubstr("not found"), HasSubstr("CUDA_ERROR_")));
  // The same answer every time, without retrying the load.
  EXPECT_EQ(CudaDriver::Get().status(), driver.status());
}

TEST(CudaDriverTest, StatusCarriesCodeNameAndString) {
  EXPECT_TRUE(CudaStatus(CUDA_SUCCESS, "cuInit").ok());
  const absl::Status oom =
      CudaStatus(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(1 TiB)");
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(oom.message(), HasSubstr("cuMemAlloc(1 TiB)"));
  EXPECT_EQ(CudaStatus(CUDA_ERROR_NO_DEVICE, "cuInit").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaStatus(CUDA_ERROR_INVALID_VALUE, "x").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaStatus(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet(3)").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaStatus(CUDA_ERROR_LAUNCH_FAILED, "x").code(),
            absl::StatusCode::kInternal);
  if (CudaDriver::Get().ok()) {
    EXPECT_THAT(oom.message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
    EXPECT_THAT(oom.message(), HasSubstr("out of memory"));
  }
}

absl::Status FailingCall() {
  RETURN_IF_CUDA_ERROR(CUDA_ERROR_INVALID_HANDLE);
  return absl::OkStatus();
}

TEST(CudaDriverTest, ReturnIfCudaErrorNamesTheCall) {
  const absl::Status status = FailingCall();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("CUDA_ERROR_INVALID_HANDLE"));
}

TEST(CudaDeviceTest, CountAndProperties) {
  GJ_DRIVER_OR_SKIP(driver);
  absl::StatusOr<int> count = CudaDevice::Count();
  ASSERT_TRUE(count.ok()) << count.status();
  ASSERT_GT(*count, 0);
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(*CudaDevice::Get(0), *device) << "one object per device";
  const CudaDeviceProperties& p = (*device)->properties();
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.arch.major, 7);
  EXPECT_GT(p.multiprocessor_count, 0);
  EXPECT_GE(p.max_threads_per_block, 1024);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GE(p.max_shared_memory_per_block, 48 * 1024);
  EXPECT_GE(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block);
  EXPECT_GE(p.max_grid_dim_x, 65535);
  EXPECT_GT(p.l2_cache_bytes, 0);
  EXPECT_GT(p.total_memory_bytes, size_t{1} << 30);
  EXPECT_EQ((*device)->ordinal(), 0);
  std::cout << "device 0: " << p.name << ", " << p.arch.ToString() << ", "
            << p.multiprocessor_count << " SMs, "
            << p.total_memory_bytes / (1 << 20) << " MiB, driver "
            << driver.driver_version << "\n";

  absl::StatusOr<const CudaDevice*> absent = CudaDevice::Get(*count);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CudaDevice::Get(-1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CudaDeviceTest, PrimaryContextIsCurrentForTheScope) {
  GJ_DRIVER_OR_SKIP(driver);
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<CUcontext> primary = (*device)->PrimaryContext();
  ASSERT_TRUE(primary.ok()) << primary.status();
  ASSERT_NE(*primary, nullptr);
  EXPECT_EQ(*(*device)->PrimaryContext(), *primary);

  CUcontext before = nullptr;
  ASSERT_EQ(driver.cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
  {
    absl::StatusOr<CudaContextScope> scope = (*device)->MakeCurrent();
    ASSERT_TRUE(scope.ok()) << scope.status();
    EXPECT_TRUE(scope->pushed());
    CUcontext current = nullptr;
    ASSERT_EQ(driver.cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, *primary);
    {
      // Already current: nothing pushed, nothing popped.
      absl::StatusOr<CudaContextScope> nested = (*device)->MakeCurrent();
      ASSERT_TRUE(nested.ok()) << nested.status();
      EXPECT_FALSE(nested->pushed());
    }
    ASSERT_EQ(driver.cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, *primary);
    // The context works: allocate, copy, free.
    CUdeviceptr memory = 0;
    ASSERT_EQ(driver.cuMemAlloc(&memory, 256), CUDA_SUCCESS);
    const int value = 42;
    int back = 0;
    ASSERT_EQ(driver.cuMemcpyHtoD(memory, &value, sizeof(value)), CUDA_SUCCESS);
    ASSERT_EQ(driver.cuMemcpyDtoH(&back, memory, sizeof(back)), CUDA_SUCCESS);
    EXPECT_EQ(back, 42);
    ASSERT_EQ(driver.cuMemFree(memory), CUDA_SUCCESS);
  }
  ASSERT_EQ(driver.cuCtxGetCurrent(&before), CUDA_SUCCESS);
  EXPECT_EQ(before, nullptr) << "the scope restores what was current";
}

TEST(CudaDeviceTest, PrimaryContextRetainAndRelease) {
  GJ_DRIVER_OR_SKIP(driver);
  absl::StatusOr<CudaPrimaryContext> context = CudaPrimaryContext::Retain(0);
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_EQ(context->ordinal(), 0);
  // The primary context is one per device: the device's own is the same.
  EXPECT_EQ(context->get(), *(*CudaDevice::Get(0))->PrimaryContext());
  CudaPrimaryContext moved = std::move(*context);
  EXPECT_EQ(context->get(), nullptr);
  absl::StatusOr<CudaContextScope> scope = moved.MakeCurrent();
  ASSERT_TRUE(scope.ok()) << scope.status();
}

}  // namespace
}  // namespace guardjit
