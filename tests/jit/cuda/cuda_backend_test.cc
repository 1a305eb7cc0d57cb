// CudaKernelBackend (jit/cuda/cuda_backend.h) on the emulated device, in a
// process of its own (tests/runtime/cuda/emulated_process_test_util.h):
// creation and naming from the device, kernels rendered, compiled by NVRTC,
// loaded and launched on the call's stream with results read back through
// its DeviceTransfer, the module cache keyed by source (a bounded compile
// is another module), launch descriptions, and failed index checks landing
// in the caller's fault words. The conformance suites run whole graphs
// through it (jit_cuda_device_tests).

#include "jit/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cuda/cuda_graph.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

// out[i0] = in[i0] * 2 + s0 over [s1] (sizes: a scale and the length).
Kernel ScaleShift() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 2;
  k.outer = {{0, IndexExpr::Size(1)}};
  Stage s;
  s.value = ValueExpr::Binary(
      BinaryOp::kAdd,
      ValueExpr::Binary(BinaryOp::kMul,
                        ValueExpr::Load(0, DType::kFloat32, IndexExpr::Var(0)),
                        ValueExpr::Const(DType::kFloat32, 2.0)),
      ValueExpr::Cast(ValueExpr::Index(IndexExpr::Size(0)), DType::kFloat32));
  s.buffer = 1;
  s.index = IndexExpr::Var(0);
  k.stages = {s};
  return k;
}

// out[i0] = table[idx[i0]], idx checked against [0, 8), [4].
Kernel Gather() {
  Kernel k;
  k.buffers = {{"in0", DType::kInt64, false},
               {"in1", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(4)}};
  k.num_checks = 1;
  Stage s;
  s.value =
      ValueExpr::Gather(1, DType::kFloat32, IndexExpr::Const(0),
                        ValueExpr::Load(0, DType::kInt64, IndexExpr::Var(0)),
                        IndexExpr::Const(1), IndexExpr::Const(8), 0);
  s.buffer = 2;
  s.index = IndexExpr::Var(0);
  k.stages = {s};
  return k;
}

std::shared_ptr<CudaKernelBackend> MakeBackend() {
  CudaKernelBackend::Options options;
  options.block_threads = 32;
  options.max_blocks = 2;
  absl::StatusOr<std::shared_ptr<CudaKernelBackend>> backend =
      CudaKernelBackend::Create(options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *backend : nullptr;
}

Tensor Floats(const std::vector<float>& v) {
  Tensor t =
      Tensor::Empty(DType::kFloat32, {static_cast<int64_t>(v.size())}).value();
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}

void CreatesForTheDeviceAndRefusesOthers() {
  std::shared_ptr<CudaKernelBackend> backend = MakeBackend();
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "cuda:sm_90");
  EXPECT_EQ(backend->device(), (Device{DeviceType::kCUDA, 0}));
  EXPECT_EQ(backend->transfer(), backend.get());
  EXPECT_EQ(backend->compiled(), 0);
  CudaKernelBackend::Options absent;
  absent.device = 1;
  absl::StatusOr<std::shared_ptr<CudaKernelBackend>> none =
      CudaKernelBackend::Create(absent);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CudaBackendTest, CreatesForTheDeviceAndRefusesOthers) {
  GJ_EXPECT_ON_EMULATED_DEVICE(CreatesForTheDeviceAndRefusesOthers);
}

void CompilesLaunchesAndCachesModules() {
  std::shared_ptr<CudaKernelBackend> backend = MakeBackend();
  ASSERT_NE(backend, nullptr);
  const Kernel scale = ScaleShift();
  const Kernel* kernels[] = {&scale};
  const std::string labels[] = {"scale"};
  absl::StatusOr<std::shared_ptr<const KernelModule>> module =
      backend->Compile(kernels, labels);
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(backend->compiled(), 1);
  EXPECT_EQ(EmulatedCudaDriver::counters().module_loads, 1);

  CUstream stream = nullptr;
  ASSERT_EQ(EmulatedCudaDriver::Get()->cuStreamCreate(&stream, 0),
            CUDA_SUCCESS);
  RunContext ctx;
  ctx.stream = stream;
  const int64_t n = 70;  // more than 2 blocks of 32 threads: grid-strided
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = 0.5f * i - 3;
  absl::StatusOr<Tensor> in = backend->ToDevice(Floats(values), ctx);
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->device(), backend->device());
  absl::StatusOr<std::shared_ptr<Allocator>> allocator =
      backend->DefaultAllocator(ctx);
  ASSERT_TRUE(allocator.ok()) << allocator.status();
  absl::StatusOr<Tensor> out =
      Tensor::Empty(DType::kFloat32, {n}, *allocator, backend->device());
  ASSERT_TRUE(out.ok()) << out.status();
  void* buffers[] = {in->data(), out->data()};
  const int64_t sizes[] = {5, n};
  absl::StatusOr<int64_t> failed =
      (*module)->Launch(0, buffers, sizes, nullptr, ctx);
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(*failed, 0);
  EXPECT_EQ(EmulatedCudaDriver::counters().last_launch_stream, stream);
  ASSERT_TRUE(backend->Synchronize(ctx).ok());
  absl::StatusOr<Tensor> back = backend->ToHost(*out, ctx);
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(back->data_as<float>()[i], values[i] * 2 + 5) << i;
  }

  // The launch as a graph node would hold it: buffers, sizes, dimensions.
  CudaKernelLaunch launch;
  ASSERT_TRUE(
      (*module)->DescribeLaunch(0, buffers, sizes, nullptr, &launch).ok());
  EXPECT_NE(launch.function, nullptr);
  EXPECT_EQ(launch.params.size(), 4u);
  EXPECT_EQ(launch.params[0], reinterpret_cast<uintptr_t>(in->data()));
  EXPECT_EQ(launch.params[1], reinterpret_cast<uintptr_t>(out->data()));
  EXPECT_EQ(launch.params[2], 5u);
  EXPECT_EQ(launch.params[3], static_cast<uint64_t>(n));
  EXPECT_EQ(launch.block_x, 32u);
  EXPECT_EQ(launch.grid_x, 2u) << "capped at max_blocks";
  // Wrong size count and kernel index are errors, not launches.
  EXPECT_FALSE((*module)->Launch(0, buffers, {sizes, 1}, nullptr, ctx).ok());
  EXPECT_FALSE((*module)->Launch(1, buffers, sizes, nullptr, ctx).ok());

  // The same source again: the cached module, nothing compiled or loaded.
  absl::StatusOr<std::shared_ptr<const KernelModule>> again =
      backend->Compile(kernels, labels);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), module->get());
  EXPECT_EQ(backend->compiled(), 1);
  EXPECT_EQ(backend->cache_hits(), 1);
  EXPECT_EQ(EmulatedCudaDriver::counters().module_loads, 1);
  // Bounded sizes render 32-bit index math: another source, another module.
  const int64_t bounds[] = {100, 1000};
  absl::StatusOr<std::shared_ptr<const KernelModule>> bounded =
      backend->CompileBounded(kernels, labels, bounds);
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  EXPECT_NE(bounded->get(), module->get());
  EXPECT_EQ(backend->compiled(), 2);
  EXPECT_EQ(EmulatedCudaDriver::counters().module_loads, 2);
  EXPECT_EQ(EmulatedCudaDriver::Get()->cuStreamDestroy(stream), CUDA_SUCCESS);
}

TEST(CudaBackendTest, CompilesLaunchesAndCachesModules) {
  GJ_EXPECT_ON_EMULATED_DEVICE(CompilesLaunchesAndCachesModules);
}

void FailedChecksLandInTheCallersFaultWords() {
  std::shared_ptr<CudaKernelBackend> backend = MakeBackend();
  ASSERT_NE(backend, nullptr);
  const Kernel scale = ScaleShift();
  const Kernel gather = Gather();
  const Kernel* kernels[] = {&scale, &gather};
  const std::string labels[] = {"scale", "gather"};
  absl::StatusOr<std::shared_ptr<const KernelModule>> module =
      backend->Compile(kernels, labels);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<DeviceFaultWords>> words =
      (*module)->NewFaultWords();
  ASSERT_TRUE(words.ok()) << words.status();
  ASSERT_NE(*words, nullptr);
  EXPECT_EQ((*words)->size(), 2);
  EXPECT_EQ((*words)->Take(), std::make_pair(-1, int64_t{0}));

  RunContext ctx;
  Tensor idx = Tensor::Empty(DType::kInt64, {4}).value();
  const int64_t indices[] = {1, 8, 7, -2};
  std::copy(indices, indices + 4, idx.data_as<int64_t>());
  std::vector<float> table_values(8);
  for (int i = 0; i < 8; ++i) table_values[i] = 100.0f + i;
  const Tensor didx = backend->ToDevice(idx, ctx).value();
  const Tensor dtable = backend->ToDevice(Floats(table_values), ctx).value();
  const Tensor dout = backend->ToDevice(Floats({0, 0, 0, 0}), ctx).value();
  void* buffers[] = {didx.data(), dtable.data(), dout.data()};

  // A kernel with checks needs the words.
  EXPECT_FALSE((*module)->Launch(1, buffers, {}, nullptr, ctx).ok());
  CudaKernelLaunch launch;
  ASSERT_TRUE(
      (*module)->DescribeLaunch(1, buffers, {}, words->get(), &launch).ok());
  ASSERT_EQ(launch.params.size(), 4u);
  EXPECT_EQ(launch.params[3], (*words)->device_address(1))
      << "the last parameter is the kernel's own word";

  absl::StatusOr<int64_t> launched =
      (*module)->Launch(1, buffers, {}, words->get(), ctx);
  ASSERT_TRUE(launched.ok()) << launched.status();
  EXPECT_EQ(*launched, 0) << "device checks come back through the words";
  ASSERT_TRUE((*words)->Wait(ctx).ok());
  EXPECT_EQ((*words)->Take(), std::make_pair(1, int64_t{1}));
  EXPECT_EQ((*words)->Take(), std::make_pair(-1, int64_t{0})) << "cleared";
  const Tensor out = backend->ToHost(dout, ctx).value();
  EXPECT_EQ(out.data_as<float>()[0], 101.0f);
  EXPECT_EQ(out.data_as<float>()[2], 107.0f);
}

TEST(CudaBackendTest, FailedChecksLandInTheCallersFaultWords) {
  GJ_EXPECT_ON_EMULATED_DEVICE(FailedChecksLandInTheCallersFaultWords);
}

// Without a driver (here, no libcuda), Create is the driver's error.
TEST(CudaBackendTest, NoDriverNoBackend) {
  if (CudaDriver::Get().ok()) GTEST_SKIP() << "a CUDA driver is loaded here";
  absl::StatusOr<std::shared_ptr<CudaKernelBackend>> backend =
      CudaKernelBackend::Create({});
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace guardjit
