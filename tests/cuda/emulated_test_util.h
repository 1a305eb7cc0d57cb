#ifndef GUARDJIT_TESTS_CUDA_EMULATED_TEST_UTIL_H_
#define GUARDJIT_TESTS_CUDA_EMULATED_TEST_UTIL_H_

// Helpers for tests that call functions through the public C API on the
// emulated device (the binary's main installs EmulatedCudaDriver and the
// emulated cuBLASLt): errors, device tensors (host memory the emulated
// device owns), a fixture that loads functions from graph text, and the
// CPU results of a function to compare with.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace guardjit {

struct Err {
  gj_error* e;
  ~Err() { gj_error_destroy(e); }
  gj_error_code code() const { return gj_error_get_code(e); }
  std::string message() const {
    return e == nullptr ? "" : gj_error_message(e);
  }
};

#define ASSERT_GJ_OK(expr)                              \
  do {                                                  \
    Err gj_err_{(expr)};                                \
    ASSERT_EQ(gj_err_.e, nullptr) << gj_err_.message(); \
  } while (0)

// A float/int tensor whose memory the emulated device owns.
template <typename T>
struct DeviceTensor {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: contiguous
  void* data = nullptr;
  size_t count = 0;
  DLTensor dl{};

  DeviceTensor(std::vector<int64_t> s, DLDataType dtype, int device_type,
               std::vector<int64_t> st = {})
      : shape(std::move(s)), strides(std::move(st)) {
    count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    size_t span = count;
    if (!strides.empty()) {
      span = 1;
      for (size_t d = 0; d < shape.size(); ++d) {
        span += static_cast<size_t>((shape[d] - 1) * strides[d]);
      }
    }
    data = std::calloc(std::max<size_t>(span, 1), sizeof(T));
    dl.data = data;
    dl.device = {static_cast<DLDeviceType>(device_type), 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
  }
  ~DeviceTensor() { std::free(data); }
  T* values() { return static_cast<T*>(data); }
};

inline DLDataType F32() { return {kDLFloat, 32, 1}; }
inline DLDataType I64() { return {kDLInt, 64, 1}; }
class EmulatedFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_)); }
  void TearDown() override {
    for (gj_function* f : functions_) gj_function_destroy(f);
    for (gj_graph* g : graphs_) gj_graph_destroy(g);
    gj_context_destroy(ctx_);
  }
  gj_function* Load(const std::string& text,
                    gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO) {
    gj_graph* graph = nullptr;
    Err e{gj_graph_from_text(ctx_, text.data(), text.size(), nullptr, &graph)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    graphs_.push_back(graph);
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    gj_function* fn = nullptr;
    Err f{gj_function_create(ctx_, graph, &options, &fn)};
    EXPECT_EQ(f.e, nullptr) << f.message();
    functions_.push_back(fn);
    return fn;
  }
  gj_context* ctx_ = nullptr;
  std::vector<gj_graph*> graphs_;
  std::vector<gj_function*> functions_;
};

// Uniform values in [-2, 2).
inline void Fill(float* v, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  for (size_t i = 0; i < n; ++i) v[i] = dist(rng);
}

// Calls `fn` on CPU copies of `inputs` and returns its outputs' values.
inline std::vector<std::vector<float>> CpuResults(
    gj_function* fn, const std::vector<DLTensor*>& inputs) {
  std::vector<DLTensor> cpu;
  for (DLTensor* t : inputs) {
    DLTensor c = *t;
    c.device = {kDLCPU, 0};
    cpu.push_back(c);
  }
  std::vector<const DLTensor*> ptrs;
  for (DLTensor& c : cpu) ptrs.push_back(&c);
  std::vector<DLManagedTensor*> out(gj_function_num_outputs(fn));
  Err e{gj_function_call_alloc(fn, ptrs.data(), ptrs.size(), nullptr,
                               out.data(), out.size())};
  EXPECT_EQ(e.e, nullptr) << e.message();
  std::vector<std::vector<float>> values;
  for (DLManagedTensor* m : out) {
    if (m == nullptr) return values;
    int64_t n = 1;
    for (int d = 0; d < m->dl_tensor.ndim; ++d) n *= m->dl_tensor.shape[d];
    const float* p = static_cast<const float*>(m->dl_tensor.data);
    values.emplace_back(p, p + n);
    gj_tensor_release(m);
  }
  return values;
}

}  // namespace guardjit

#endif  // GUARDJIT_TESTS_CUDA_EMULATED_TEST_UTIL_H_
