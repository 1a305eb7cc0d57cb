// CudaDevice (runtime/cuda/cuda_device.h) on the emulated device, in a
// process of its own (emulated_process_test_util.h): the properties read
// from the driver's attributes (the emulated device's are known: an sm_90
// with 132 SMs), one object per ordinal, ordinals out of range refused, and
// the primary context retained once and made current per scope.
// tests/runtime/cuda/cuda_driver_test.cc runs the same calls on a real GPU
// where there is one.

#include "runtime/cuda/cuda_device.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_driver.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

void PropertiesComeFromTheDriversAttributes() {
  absl::StatusOr<int> count = CudaDevice::Count();
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(*count, 1);
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->ordinal(), 0);
  EXPECT_EQ((*device)->handle(), 0);
  EXPECT_EQ(&(*device)->driver(), EmulatedCudaDriver::Get());
  const CudaDeviceProperties& p = (*device)->properties();
  EXPECT_EQ(p.name, "guardjit emulated sm_90");
  EXPECT_EQ(p.arch.major, 9);
  EXPECT_EQ(p.arch.minor, 0);
  EXPECT_EQ(p.multiprocessor_count, 132);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  EXPECT_EQ(p.max_threads_per_multiprocessor, 2048);
  EXPECT_EQ(p.max_registers_per_block, 65536);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(p.max_shared_memory_per_block, 48 * 1024);
  EXPECT_EQ(p.max_shared_memory_per_block_optin, 227 * 1024);
  EXPECT_EQ(p.max_shared_memory_per_multiprocessor, 228 * 1024);
  EXPECT_EQ(p.max_grid_dim_x, 2147483647);
  EXPECT_EQ(p.max_grid_dim_y, 65535);
  EXPECT_EQ(p.max_grid_dim_z, 65535);
  EXPECT_EQ(p.l2_cache_bytes, 50 * 1024 * 1024);
  EXPECT_EQ(p.total_memory_bytes, size_t{16} << 30);
}

TEST(CudaDeviceEmulatedTest, PropertiesComeFromTheDriversAttributes) {
  GJ_EXPECT_ON_EMULATED_DEVICE(PropertiesComeFromTheDriversAttributes);
}

void OneObjectPerOrdinalAndRangeChecked() {
  // Several threads asking at once get the same device.
  std::vector<const CudaDevice*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&seen, i] {
      absl::StatusOr<const CudaDevice*> d = CudaDevice::Get(0);
      if (d.ok()) seen[i] = *d;
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr);
  for (const CudaDevice* d : seen) EXPECT_EQ(d, seen[0]);
  EXPECT_EQ(*CudaDevice::Get(0), seen[0]);

  for (const int ordinal : {-1, 1, 64, 1000}) {
    absl::StatusOr<const CudaDevice*> absent = CudaDevice::Get(ordinal);
    ASSERT_FALSE(absent.ok()) << ordinal;
    EXPECT_EQ(absent.status().code(), absl::StatusCode::kInvalidArgument)
        << ordinal;
    EXPECT_THAT(absent.status().message(), HasSubstr("1 device")) << ordinal;
  }
}

TEST(CudaDeviceEmulatedTest, OneObjectPerOrdinalAndRangeChecked) {
  GJ_EXPECT_ON_EMULATED_DEVICE(OneObjectPerOrdinalAndRangeChecked);
}

// The emulated driver with primary-context retains counted.
std::atomic<int> g_retains{0};
const CudaDriver* g_emulated = nullptr;

void PrimaryContextIsRetainedOnceAndMadeCurrentPerScope() {
  g_emulated = EmulatedCudaDriver::Get();
  auto* counting = new CudaDriver(*g_emulated);
  counting->cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice d) {
    ++g_retains;
    return g_emulated->cuDevicePrimaryCtxRetain(c, d);
  };
  CudaDriver::InstallForTesting(counting);

  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(g_retains.load(), 0) << "retained on first use, not on Get";
  absl::StatusOr<CUcontext> primary = (*device)->PrimaryContext();
  ASSERT_TRUE(primary.ok()) << primary.status();
  ASSERT_NE(*primary, nullptr);
  EXPECT_EQ(*(*device)->PrimaryContext(), *primary);
  EXPECT_EQ(g_retains.load(), 1);

  CUcontext current = nullptr;
  {
    absl::StatusOr<CudaContextScope> scope = (*device)->MakeCurrent();
    ASSERT_TRUE(scope.ok()) << scope.status();
    EXPECT_TRUE(scope->pushed());
    ASSERT_EQ(counting->cuCtxGetCurrent(&current), CUDA_SUCCESS);
    EXPECT_EQ(current, *primary);
    absl::StatusOr<CudaContextScope> nested = (*device)->MakeCurrent();
    ASSERT_TRUE(nested.ok());
    EXPECT_FALSE(nested->pushed()) << "already current";
  }
  ASSERT_EQ(counting->cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT_EQ(current, nullptr) << "the scope restored what was current";
  // Another thread gets the same retained context (no second retain).
  std::thread other([&] {
    absl::StatusOr<CudaContextScope> scope = (*device)->MakeCurrent();
    EXPECT_TRUE(scope.ok());
    EXPECT_TRUE(scope.ok() && scope->pushed());
  });
  other.join();
  EXPECT_EQ(g_retains.load(), 1);
}

TEST(CudaDeviceEmulatedTest, PrimaryContextIsRetainedOnceAndMadeCurrent) {
  GJ_EXPECT_ON_EMULATED_DEVICE(
      PrimaryContextIsRetainedOnceAndMadeCurrentPerScope);
}

// Without a usable driver, Count and Get say UNAVAILABLE (the driver's
// own error), in this process when libcuda is absent.
TEST(CudaDeviceEmulatedTest, NoDriverIsUnavailable) {
  if (CudaDriver::Get().ok()) GTEST_SKIP() << "a CUDA driver is loaded here";
  EXPECT_EQ(CudaDevice::Count().status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaDevice::Get(0).status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace guardjit
