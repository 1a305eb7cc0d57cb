// runtime/cuda/cuda_graph.h's own contract on the emulated device:
// LaunchKernel passes a launch's 8-byte parameters and dimensions to
// cuLaunchKernel on the given stream (through the emulated driver's table,
// in this process: nothing is installed), and CudaGraphSet (in a process of
// its own: emulated_process_test_util.h) records a key's device-to-device
// copies into a graph on the second call, replays it, patches a moved
// output's pointer instead of re-capturing, re-captures when a pool buffer
// moves, keeps a key's pool at one address, evicts past
// max_graphs_per_entry, and describes all of it. The reduce-overhead mode
// built on it is tested end to end by tests/cuda/cuda_graph_test.cc.

#include "runtime/cuda/cuda_graph.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_driver.h"
#include "test_paths.h"  // GJ_HOST_CXX
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

constexpr char kFillSource[] = R"(
extern "C" __global__ void fill(float* out, long long n, long long base) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = (float)(base + i * gridDim.x);
}
)";

TEST(CudaGraphLaunchKernelTest, PassesParamsAndDimensionsOnTheStream) {
  // The emulated driver compiles modules with $GJ_HOST_CXX (else $CXX, c++):
  // the build's compiler unless the environment names one. A machine that
  // runs the binary without building it (scripts/gpu_check.sh) may have
  // neither.
  if (std::getenv("GJ_HOST_CXX") == nullptr) {
    if (access(GJ_HOST_CXX, X_OK) != 0) {
      GTEST_SKIP() << "no host compiler for the emulated device's modules";
    }
    setenv("GJ_HOST_CXX", GJ_HOST_CXX, /*overwrite=*/0);
  }
  const CudaDriver& driver = *EmulatedCudaDriver::Get();
  CUmodule module = nullptr;
  ASSERT_EQ(driver.cuModuleLoadData(&module, kFillSource), CUDA_SUCCESS);
  CUfunction fill = nullptr;
  ASSERT_EQ(driver.cuModuleGetFunction(&fill, module, "fill"), CUDA_SUCCESS);
  CUstream stream = nullptr;
  ASSERT_EQ(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  const int64_t n = 10;
  CUdeviceptr out = 0;
  ASSERT_EQ(driver.cuMemAlloc(&out, 16 * sizeof(float)), CUDA_SUCCESS);
  std::vector<float> init(16, -1.0f);
  ASSERT_EQ(driver.cuMemcpyHtoD(out, init.data(), 16 * sizeof(float)),
            CUDA_SUCCESS);

  CudaKernelLaunch launch;
  launch.function = fill;
  launch.grid_x = 3;
  launch.block_x = 4;
  launch.params = {out, static_cast<uint64_t>(n), 100};
  launch.buffers.resize(3);
  const int64_t launches = EmulatedCudaDriver::counters().launches;
  ASSERT_TRUE(LaunchKernel(driver, launch, stream).ok());
  EXPECT_EQ(EmulatedCudaDriver::counters().launches, launches + 1);
  EXPECT_EQ(EmulatedCudaDriver::counters().last_launch_stream, stream);
  std::vector<float> back(16);
  ASSERT_EQ(driver.cuMemcpyDtoH(back.data(), out, 16 * sizeof(float)),
            CUDA_SUCCESS);
  for (int64_t i = 0; i < 16; ++i) {
    // 3 blocks of 4 threads cover 12 elements, the kernel guards at n.
    EXPECT_EQ(back[i], i < n ? 100.0f + 3 * i : -1.0f) << i;
  }

  // A launch the driver refuses (no function) is its error, naming the call.
  CudaKernelLaunch bad = launch;
  bad.function = nullptr;
  const absl::Status refused = LaunchKernel(driver, bad, stream);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("cuLaunchKernel"));

  EXPECT_EQ(driver.cuMemFree(out), CUDA_SUCCESS);
  EXPECT_EQ(driver.cuStreamDestroy(stream), CUDA_SUCCESS);
  EXPECT_EQ(driver.cuModuleUnload(module), CUDA_SUCCESS);
}

// Device floats through the installed (emulated) driver.
CUdeviceptr Upload(const std::vector<float>& v) {
  const CudaDriver& d = *CudaDriver::Get().value();
  CUdeviceptr p = 0;
  EXPECT_EQ(d.cuMemAlloc(&p, v.size() * sizeof(float)), CUDA_SUCCESS);
  EXPECT_EQ(d.cuMemcpyHtoD(p, v.data(), v.size() * sizeof(float)),
            CUDA_SUCCESS);
  return p;
}
std::vector<float> Download(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  EXPECT_EQ(
      CudaDriver::Get().value()->cuMemcpyDtoH(v.data(), p, n * sizeof(float)),
      CUDA_SUCCESS);
  return v;
}

CudaGraphOp Copy(CUdeviceptr dst, CudaGraphBuffer dst_buffer, CUdeviceptr src,
                 CudaGraphBuffer src_buffer, int64_t bytes) {
  CudaGraphOp op;
  op.kind = CudaGraphOp::Kind::kCopy;
  op.copy.dst = dst;
  op.copy.src = src;
  op.copy.bytes = bytes;
  op.copy.dst_buffer = dst_buffer;
  op.copy.src_buffer = src_buffer;
  return op;
}

const CudaGraphBuffer kInput0{CudaGraphBuffer::Kind::kInput, 0};
const CudaGraphBuffer kOutput0{CudaGraphBuffer::Kind::kOutput, 0};
const CudaGraphBuffer kPool0{CudaGraphBuffer::Kind::kPool, 0};

void RecordsReplaysAndPatchesCopies() {
  const CudaDevice* device = CudaDevice::Get(0).value();
  const CudaDriver& driver = device->driver();
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.counters = &counters;
  CudaGraphSet set(device);
  EXPECT_EQ(set.Describe(), "") << "nothing before the first call";
  CUstream stream = nullptr;
  ASSERT_EQ(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  const std::vector<int64_t> key = {4};
  const CUdeviceptr input = Upload({1, 2, 3, 4});
  const CUdeviceptr out_a = Upload({0, 0, 0, 0});
  const CUdeviceptr out_b = Upload({0, 0, 0, 0});
  const int64_t bytes = 4 * sizeof(float);

  {
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    EXPECT_TRUE(lease->FirstCall());
    EXPECT_FALSE(lease->FirstCall()) << "only once";
  }
  // Second call: a copy input -> pool, pool -> output, captured and run.
  CUdeviceptr pool = 0;
  {
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    EXPECT_FALSE(lease->FirstCall());
    absl::StatusOr<CUdeviceptr> p = lease->Pool(bytes);
    ASSERT_TRUE(p.ok()) << p.status();
    pool = *p;
    const std::vector<CudaGraphOp> ops = {
        Copy(pool, kPool0, input, kInput0, bytes),
        Copy(out_a, kOutput0, pool, kPool0, bytes)};
    const int64_t graph_launches =
        EmulatedCudaDriver::counters().graph_launches;
    absl::StatusOr<CudaGraphSet::Lease::Outcome> outcome =
        lease->Replay(ops, stream);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(*outcome, CudaGraphSet::Lease::Outcome::kReplayed);
    EXPECT_EQ(EmulatedCudaDriver::counters().graph_launches,
              graph_launches + 1);
    EXPECT_EQ(EmulatedCudaDriver::counters().last_launch_stream, stream);
  }
  EXPECT_EQ(Download(out_a, 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(counters.recorded.load(), 1);
  EXPECT_EQ(counters.replays.load(), 1);
  EXPECT_EQ(counters.pool_bytes.load(), bytes);

  // Third call: the output moved (patched, not re-captured), new input
  // values read through the graph.
  const std::vector<float> next = {5, 6, 7, 8};
  ASSERT_EQ(driver.cuMemcpyHtoD(input, next.data(), bytes), CUDA_SUCCESS);
  {
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    absl::StatusOr<CUdeviceptr> p = lease->Pool(bytes);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(*p, pool) << "the key's pool keeps its address";
    const int64_t patches = EmulatedCudaDriver::counters().node_param_updates;
    const std::vector<CudaGraphOp> ops = {
        Copy(pool, kPool0, input, kInput0, bytes),
        Copy(out_b, kOutput0, pool, kPool0, bytes)};
    absl::StatusOr<CudaGraphSet::Lease::Outcome> outcome =
        lease->Replay(ops, stream);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(*outcome, CudaGraphSet::Lease::Outcome::kReplayed);
    EXPECT_EQ(EmulatedCudaDriver::counters().node_param_updates, patches + 1);
  }
  EXPECT_EQ(Download(out_b, 4), next);
  EXPECT_EQ(Download(out_a, 4), (std::vector<float>{1, 2, 3, 4}))
      << "the old output is no longer written";
  EXPECT_EQ(counters.recorded.load(), 1);
  EXPECT_EQ(counters.pointer_updates.load(), 1);
  EXPECT_EQ(counters.recaptures.load(), 0);
  EXPECT_EQ(set.Describe(),
            "cuda graphs: 1 recorded (1 kept: size keys [4]), 2 replays, 1 "
            "node pointer updates, 0 re-captures, 0 evictions, private pool "
            "16 B");

  // A pool-side pointer that moves cannot be patched: re-captured.
  const CUdeviceptr other = Upload({0, 0, 0, 0});
  {
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    const std::vector<CudaGraphOp> ops = {
        Copy(other, kPool0, input, kInput0, bytes),
        Copy(out_b, kOutput0, other, kPool0, bytes)};
    absl::StatusOr<CudaGraphSet::Lease::Outcome> outcome =
        lease->Replay(ops, stream);
    ASSERT_TRUE(outcome.ok()) << outcome.status();
    EXPECT_EQ(*outcome, CudaGraphSet::Lease::Outcome::kReplayed);
  }
  EXPECT_EQ(counters.recorded.load(), 2);
  EXPECT_EQ(counters.recaptures.load(), 1);
  EXPECT_EQ(Download(other, 4), next);
  for (CUdeviceptr p : {input, out_a, out_b, other}) {
    EXPECT_EQ(driver.cuMemFree(p), CUDA_SUCCESS);
  }
  EXPECT_EQ(driver.cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST(CudaGraphSetTest, RecordsReplaysAndPatchesCopies) {
  GJ_EXPECT_ON_EMULATED_DEVICE(RecordsReplaysAndPatchesCopies);
}

void PoolCapEvictionAndRefusals() {
  const CudaDevice* device = CudaDevice::Get(0).value();
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.counters = &counters;
  policy.max_graphs_per_entry = 1;
  policy.max_pool_bytes = 1024;
  CUstream stream = nullptr;
  ASSERT_EQ(device->driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  const int64_t live_before = EmulatedCudaDriver::counters().live_device_bytes;
  {
    CudaGraphSet set(device);
    const CUdeviceptr input = Upload({1, 2});
    {
      std::optional<CudaGraphSet::Lease> lease = set.TryAcquire({1}, policy);
      ASSERT_TRUE(lease.has_value());
      // Over the cap: refused with the sizes named.
      absl::StatusOr<CUdeviceptr> big = lease->Pool(4096);
      ASSERT_FALSE(big.ok());
      EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
      EXPECT_THAT(big.status().message(), HasSubstr("[1]"));
      absl::StatusOr<CUdeviceptr> pool = lease->Pool(8);
      ASSERT_TRUE(pool.ok()) << pool.status();
      const std::vector<CudaGraphOp> ops = {
          Copy(*pool, kPool0, input, kInput0, 8)};
      ASSERT_TRUE(lease->Replay(ops, stream).ok());
      EXPECT_EQ(Download(*pool, 2), (std::vector<float>{1, 2}));

      // Another call holding the set meanwhile gets nothing (plain
      // launches), from another thread.
      bool other_got_one = true;
      std::thread([&] {
        other_got_one = set.TryAcquire({1}, policy).has_value();
      }).join();
      EXPECT_FALSE(other_got_one);
    }
    EXPECT_EQ(counters.pool_bytes.load(), 8);
    // A second key past max_graphs_per_entry = 1 evicts the first (its
    // graph and pool released).
    {
      std::optional<CudaGraphSet::Lease> lease = set.TryAcquire({2}, policy);
      ASSERT_TRUE(lease.has_value());
      EXPECT_TRUE(lease->FirstCall()) << "a new key starts cold";
    }
    EXPECT_EQ(counters.evictions.load(), 1);
    EXPECT_EQ(counters.pool_bytes.load(), 0);
    // Refusals are kept once each, after the statistics.
    set.Refuse("size key [3] could not be captured: x");
    set.Refuse("size key [3] could not be captured: x");
    const std::string text = set.Describe();
    EXPECT_THAT(text, HasSubstr("1 evictions"));
    EXPECT_THAT(text, HasSubstr("; cuda graphs refused: size key [3] could "
                                "not be captured: x"));
    EXPECT_EQ(text.find("could not be captured: x"),
              text.rfind("could not be captured: x"));
    EXPECT_EQ(device->driver().cuMemFree(input), CUDA_SUCCESS);
  }
  // The set's destructor freed everything it held.
  EXPECT_EQ(EmulatedCudaDriver::counters().live_device_bytes, live_before);
  EXPECT_EQ(device->driver().cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST(CudaGraphSetTest, PoolCapEvictionAndRefusals) {
  GJ_EXPECT_ON_EMULATED_DEVICE(PoolCapEvictionAndRefusals);
}

}  // namespace
}  // namespace guardjit
