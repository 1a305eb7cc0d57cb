// Host/device copies of tensors (runtime/cuda/cuda_transfer.h) on the
// emulated device, in a process of its own (emulated_process_test_util.h):
// round trips keep strides and views' offsets, only the element span moves,
// device-to-device copies take one cuMemcpyDtoDAsync when both sides are
// contiguous and a host round trip otherwise (leaving the bytes between a
// strided destination's elements alone).

#include "runtime/cuda/cuda_transfer.h"

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/runtime/cuda/emulated_process_test_util.h"

namespace guardjit {
namespace {

const Device kGpu{DeviceType::kCUDA, 0};

std::shared_ptr<Allocator> DeviceAllocator() {
  absl::StatusOr<CudaCachingAllocator*> pool =
      CudaCachingAllocator::ForDevice(0);
  EXPECT_TRUE(pool.ok()) << pool.status();
  return pool.ok() ? (*pool)->OnStream(nullptr) : nullptr;
}

// A host float tensor [rows, cols] holding 0, 1, 2, ...
Tensor Iota(int64_t rows, int64_t cols) {
  Tensor t = Tensor::Empty(DType::kFloat32, {rows, cols}).value();
  std::iota(t.data_as<float>(), t.data_as<float>() + rows * cols, 0.0f);
  return t;
}

// Element (i, j) of 2-d float tensor `t` (host memory).
float At(const Tensor& t, int64_t i, int64_t j) {
  return t.data_as<float>()[i * t.stride(0) + j * t.stride(1)];
}

void RoundTripKeepsValuesAndStrides() {
  std::shared_ptr<Allocator> allocator = DeviceAllocator();
  ASSERT_NE(allocator, nullptr);
  const Tensor host = Iota(3, 4);
  // A transposed view starting at element 1: [2, 3] with strides (1, 4)
  // (columns 1 and 2 of the [3, 4] matrix, transposed).
  const Tensor view = host.AsStrided({2, 3}, {1, 4}, 1);
  for (const Tensor& t : {host, view}) {
    SCOPED_TRACE(t.DebugString());
    const int64_t before = EmulatedCudaDriver::counters().memcpy_calls;
    absl::StatusOr<Tensor> dev = CudaToDevice(t, kGpu, allocator, nullptr);
    ASSERT_TRUE(dev.ok()) << dev.status();
    EXPECT_EQ(dev->device(), kGpu);
    EXPECT_EQ(dev->sizes(), t.sizes());
    EXPECT_EQ(dev->strides(), t.strides());
    EXPECT_NE(dev->data(), t.data());
    absl::StatusOr<Tensor> back = CudaToHost(*dev, nullptr);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->device(), Device::Cpu());
    EXPECT_EQ(back->sizes(), t.sizes());
    EXPECT_EQ(back->strides(), t.strides());
    for (int64_t i = 0; i < t.size(0); ++i) {
      for (int64_t j = 0; j < t.size(1); ++j) {
        EXPECT_EQ(At(*back, i, j), At(t, i, j)) << i << ", " << j;
      }
    }
    // One copy each way.
    EXPECT_EQ(EmulatedCudaDriver::counters().memcpy_calls, before + 2);
  }
}

TEST(CudaTransferTest, RoundTripKeepsValuesAndStrides) {
  GJ_EXPECT_ON_EMULATED_DEVICE(RoundTripKeepsValuesAndStrides);
}

void OnlyTheElementSpanMoves() {
  std::shared_ptr<Allocator> allocator = DeviceAllocator();
  ASSERT_NE(allocator, nullptr);
  // Column 2 of a [5, 8] matrix: 5 elements spanning 4 * 8 + 1 = 33.
  const Tensor host = Iota(5, 8);
  const Tensor column = host.AsStrided({5}, {8}, 2);
  absl::StatusOr<Tensor> dev = CudaToDevice(column, kGpu, allocator, nullptr);
  ASSERT_TRUE(dev.ok()) << dev.status();
  const ByteRange range = MemoryRange(*dev);
  EXPECT_EQ(range.end - range.begin, 33 * sizeof(float));
  // The device copy's span starts at the view's first element.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dev->data()), range.begin);
  absl::StatusOr<Tensor> back = CudaToHost(*dev, nullptr);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->numel(), 5);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(back->data_as<float>()[i * 8], 8.0f * i + 2) << i;
  }
  // Empty tensors move nothing.
  const int64_t before = EmulatedCudaDriver::counters().memcpy_calls;
  const Tensor empty = Tensor::Empty(DType::kFloat32, {0, 3}).value();
  absl::StatusOr<Tensor> dev_empty =
      CudaToDevice(empty, kGpu, allocator, nullptr);
  ASSERT_TRUE(dev_empty.ok()) << dev_empty.status();
  EXPECT_EQ(dev_empty->numel(), 0);
  EXPECT_EQ(dev_empty->device(), kGpu);
  EXPECT_EQ(dev_empty->sizes(), empty.sizes());
  // And back: an empty host tensor of the same sizes, on the host.
  absl::StatusOr<Tensor> host_empty = CudaToHost(*dev_empty, nullptr);
  ASSERT_TRUE(host_empty.ok()) << host_empty.status();
  EXPECT_EQ(host_empty->numel(), 0);
  EXPECT_EQ(host_empty->sizes(), empty.sizes());
  EXPECT_TRUE(host_empty->device().is_cpu());
  EXPECT_EQ(EmulatedCudaDriver::counters().memcpy_calls, before);
}

TEST(CudaTransferTest, OnlyTheElementSpanMoves) {
  GJ_EXPECT_ON_EMULATED_DEVICE(OnlyTheElementSpanMoves);
}

void CopyIntoContiguousIsOneDeviceCopy() {
  std::shared_ptr<Allocator> allocator = DeviceAllocator();
  ASSERT_NE(allocator, nullptr);
  const Tensor src = CudaToDevice(Iota(2, 3), kGpu, allocator, nullptr).value();
  const Tensor dst =
      Tensor::Empty(DType::kFloat32, {2, 3}, allocator, kGpu).value();
  const int64_t before = EmulatedCudaDriver::counters().memcpy_calls;
  ASSERT_TRUE(CudaCopyInto(dst, src, nullptr).ok());
  EXPECT_EQ(EmulatedCudaDriver::counters().memcpy_calls, before + 1);
  const Tensor back = CudaToHost(dst, nullptr).value();
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(back.data_as<float>()[i], static_cast<float>(i)) << i;
  }
  // Different dtypes are refused.
  const Tensor ints =
      Tensor::Empty(DType::kInt32, {2, 3}, allocator, kGpu).value();
  EXPECT_FALSE(CudaCopyInto(ints, src, nullptr).ok());
}

TEST(CudaTransferTest, CopyIntoContiguousIsOneDeviceCopy) {
  GJ_EXPECT_ON_EMULATED_DEVICE(CopyIntoContiguousIsOneDeviceCopy);
}

void CopyIntoStridedLeavesTheGapsAlone() {
  std::shared_ptr<Allocator> allocator = DeviceAllocator();
  ASSERT_NE(allocator, nullptr);
  // dst: the even columns of a [2, 6] device matrix filled with -1.
  Tensor fill = Tensor::Empty(DType::kFloat32, {2, 6}).value();
  for (int64_t i = 0; i < 12; ++i) fill.data_as<float>()[i] = -1;
  const Tensor base = CudaToDevice(fill, kGpu, allocator, nullptr).value();
  const Tensor dst = base.AsStrided({2, 3}, {6, 2});
  // src: a transposed device view (strides (1, 2)) of 0..5.
  const Tensor src_base =
      CudaToDevice(Iota(3, 2), kGpu, allocator, nullptr).value();
  const Tensor src = src_base.AsStrided({2, 3}, {1, 2});
  ASSERT_TRUE(CudaCopyInto(dst, src, nullptr).ok());
  const Tensor back = CudaToHost(base, nullptr).value();
  const float* v = back.data_as<float>();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 6; ++j) {
      const float expected =
          j % 2 == 0 ? static_cast<float>(i + 2 * (j / 2)) : -1.0f;
      EXPECT_EQ(v[i * 6 + j], expected) << i << ", " << j;
    }
  }
  // CudaContiguous: a fresh contiguous device copy of the strided view.
  absl::StatusOr<Tensor> packed = CudaContiguous(src, allocator, nullptr);
  ASSERT_TRUE(packed.ok()) << packed.status();
  EXPECT_TRUE(packed->is_contiguous());
  EXPECT_EQ(packed->device(), kGpu);
  EXPECT_NE(packed->data(), src.data());
  const Tensor packed_back = CudaToHost(*packed, nullptr).value();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(packed_back.data_as<float>()[i * 3 + j],
                static_cast<float>(i + 2 * j))
          << i << ", " << j;
    }
  }
}

TEST(CudaTransferTest, CopyIntoStridedLeavesTheGapsAlone) {
  GJ_EXPECT_ON_EMULATED_DEVICE(CopyIntoStridedLeavesTheGapsAlone);
}

// Without a CUDA driver every transfer is the driver's UNAVAILABLE error
// (here, where no libcuda is loaded).
TEST(CudaTransferTest, NoDriverIsAnError) {
  if (CudaDriver::Get().ok()) GTEST_SKIP() << "a CUDA driver is loaded here";
  const Tensor host = Iota(2, 2);
  EXPECT_EQ(CudaToHost(host, nullptr).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaToDevice(host, kGpu, nullptr, nullptr).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(CudaCopyInto(host, host, nullptr).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace guardjit
