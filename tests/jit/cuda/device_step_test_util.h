#ifndef GUARDJIT_TESTS_JIT_CUDA_DEVICE_STEP_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_CUDA_DEVICE_STEP_TEST_UTIL_H_

// Shared by the device GEMM and convolution step tests: hand-made operand
// references and reading a device result back.

#include <cstdint>
#include <utility>
#include <vector>

#include "core/tensor.h"
#include "jit/steps/extern_epilogue.h"
#include "runtime/cuda/cuda_transfer.h"

namespace guardjit::testing {

// Slot `slot` viewed at `sizes`/`strides` from element `offset`.
inline FixedRef Ref(int slot, Shape sizes, Shape strides, int64_t offset = 0) {
  FixedRef r;
  r.slot = slot;
  r.sizes = std::move(sizes);
  r.strides = std::move(strides);
  r.offset = offset;
  return r;
}

// A float32 device tensor's elements, copied to the host in storage order.
inline std::vector<float> HostValues(const Tensor& device_tensor) {
  const Tensor host = CudaToHost(device_tensor, nullptr).value();
  const float* p = host.data_as<float>();
  return std::vector<float>(p, p + host.numel());
}

}  // namespace guardjit::testing

#endif  // GUARDJIT_TESTS_JIT_CUDA_DEVICE_STEP_TEST_UTIL_H_
