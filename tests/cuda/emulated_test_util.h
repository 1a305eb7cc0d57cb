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

#include "core/half.h"
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
inline DLDataType F16() { return {kDLFloat, 16, 1}; }
inline DLDataType BF16() { return {kDLBfloat, 16, 1}; }

// The values of contiguous `t` (float32, float64, float16, bfloat16 or
// int64) as doubles.
inline std::vector<double> AsDoubles(const DLTensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
  std::vector<double> out(static_cast<size_t>(n));
  const char* p = static_cast<const char*>(t.data) + t.byte_offset;
  for (int64_t i = 0; i < n; ++i) {
    if (t.dtype.code == kDLFloat && t.dtype.bits == 32) {
      out[i] = reinterpret_cast<const float*>(p)[i];
    } else if (t.dtype.code == kDLFloat && t.dtype.bits == 64) {
      out[i] = reinterpret_cast<const double*>(p)[i];
    } else if (t.dtype.code == kDLFloat && t.dtype.bits == 16) {
      out[i] = HalfBitsToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    } else if (t.dtype.code == kDLBfloat && t.dtype.bits == 16) {
      out[i] = BFloat16BitsToFloat(reinterpret_cast<const uint16_t*>(p)[i]);
    } else if (t.dtype.code == kDLInt && t.dtype.bits == 64) {
      out[i] = static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    } else {
      ADD_FAILURE() << "AsDoubles: unexpected dtype";
      return {};
    }
  }
  return out;
}

// Calls `fn` on `inputs` (on the CPU: copies of them with a CPU device) with
// gj_function_call_alloc, and returns each output's values (and dtype, in
// `dtypes`), or the call's error in `error`.
inline std::vector<std::vector<double>> CallValues(
    gj_function* fn, const std::vector<const DLTensor*>& inputs, bool cpu,
    std::string* error = nullptr, std::vector<DLDataType>* dtypes = nullptr) {
  std::vector<DLTensor> copies;
  for (const DLTensor* t : inputs) {
    DLTensor c = *t;
    if (cpu) c.device = {kDLCPU, 0};
    copies.push_back(c);
  }
  std::vector<const DLTensor*> ptrs;
  for (DLTensor& c : copies) ptrs.push_back(&c);
  std::vector<DLManagedTensor*> out(gj_function_num_outputs(fn));
  gj_error* e = gj_function_call_alloc(fn, ptrs.data(), ptrs.size(), nullptr,
                                       out.data(), out.size());
  if (e != nullptr) {
    if (error != nullptr)
      *error = gj_error_message(e);
    else
      ADD_FAILURE() << gj_error_message(e);
    gj_error_destroy(e);
    return {};
  }
  std::vector<std::vector<double>> values;
  for (DLManagedTensor* m : out) {
    values.push_back(AsDoubles(m->dl_tensor));
    if (dtypes != nullptr) dtypes->push_back(m->dl_tensor.dtype);
    gj_tensor_release(m);
  }
  return values;
}

class EmulatedFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_)); }
  void TearDown() override {
    for (gj_function* f : functions_) gj_function_destroy(f);
    for (gj_graph* g : graphs_) gj_graph_destroy(g);
    gj_context_destroy(ctx_);
    if (eager_ctx_ != nullptr) gj_context_destroy(eager_ctx_);
  }
  // A function of `text` in the test's context, or with GJ_BACKEND_EAGER
  // in a second context whose backend is eager (the reference: each node's
  // reference kernel).
  gj_function* Load(const std::string& text,
                    gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO,
                    gj_backend backend = GJ_BACKEND_DEFAULT) {
    gj_context* ctx = ctx_;
    if (backend == GJ_BACKEND_EAGER) {
      if (eager_ctx_ == nullptr) {
        gj_context_options options;
        gj_context_options_init(&options);
        options.backend = GJ_BACKEND_EAGER;
        Err e{gj_context_create(&options, &eager_ctx_)};
        EXPECT_EQ(e.e, nullptr) << e.message();
      }
      ctx = eager_ctx_;
    }
    gj_graph* graph = nullptr;
    Err e{gj_graph_from_text(ctx, text.data(), text.size(), nullptr, &graph)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    graphs_.push_back(graph);
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    gj_function* fn = nullptr;
    Err f{gj_function_create(ctx, graph, &options, &fn)};
    EXPECT_EQ(f.e, nullptr) << f.message();
    functions_.push_back(fn);
    return fn;
  }
  gj_context* ctx_ = nullptr;
  gj_context* eager_ctx_ = nullptr;
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
