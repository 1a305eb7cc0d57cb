// Devices at the C API on a machine as CI has it: CUDA tensors need a usable
// driver (UNAVAILABLE otherwise, naming the input), pinned host memory is
// host memory, constants must be host memory. Calls on a (emulated) CUDA
// device are tested in tests/cuda/emulated_device_test.cc.

#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cuda_device.h"

namespace {

constexpr char kScale[] = R"pb(
  name: "scale"
  placeholders {
    name: "a"
    meta { dtype: FLOAT32 sizes: 4 }
  }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "a" }
    args { f: 2.5 }
  }
  outputs { ref: "mul" }
)pb";

struct Fixture {
  gj_context* ctx = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
  Fixture() {
    gj_error_destroy(gj_context_create(nullptr, &ctx));
    gj_error_destroy(
        gj_graph_from_text(ctx, kScale, sizeof(kScale) - 1, nullptr, &graph));
    gj_error_destroy(gj_function_create(ctx, graph, nullptr, &fn));
  }
  ~Fixture() {
    gj_function_destroy(fn);
    gj_graph_destroy(graph);
    gj_context_destroy(ctx);
  }
};

DLTensor Floats(float* data, int64_t* shape, int device_type) {
  DLTensor t{};
  t.data = data;
  t.device = {static_cast<DLDeviceType>(device_type), 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

TEST(CapiDeviceTest, CallOptionsDefaultToTheLegacyStreamAsynchronously) {
  gj_call_options options;
  std::memset(&options, 0xab, sizeof(options));
  gj_call_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_call_options));
  EXPECT_EQ(options.stream, nullptr);
  EXPECT_EQ(options.synchronize, 0);
  EXPECT_GE(gj_api_version(), (0u << 16) | 7u);
}

TEST(CapiDeviceTest, CudaInputWithoutADriverIsUnavailableNamingTheInput) {
  if (guardjit::CudaDevice::Count().ok()) {
    GTEST_SKIP() << "a CUDA driver is usable here";
  }
  Fixture f;
  float a[4] = {1, 2, 3, 4}, out[4] = {};
  int64_t shape[1] = {4};
  DLTensor in = Floats(a, shape, kDLCUDA);
  DLTensor res = Floats(out, shape, kDLCUDA);
  const DLTensor* ins[] = {&in};
  const DLTensor* outs[] = {&res};
  gj_error* e = gj_function_call(f.fn, ins, 1, outs, 1, nullptr);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(gj_error_get_code(e), GJ_UNAVAILABLE);
  const std::string message = gj_error_message(e);
  EXPECT_NE(message.find("input 0 ('a') is on cuda:0"), std::string::npos)
      << message;
  EXPECT_NE(message.find("CUDA is not usable here"), std::string::npos)
      << message;
  gj_error_destroy(e);
  EXPECT_EQ(out[0], 0.0f);  // nothing written
  DLManagedTensor* managed[1] = {};
  e = gj_function_call_alloc(f.fn, ins, 1, nullptr, managed, 1);
  EXPECT_EQ(gj_error_get_code(e), GJ_UNAVAILABLE);
  EXPECT_EQ(managed[0], nullptr);
  gj_error_destroy(e);
  e = gj_function_precompile(f.fn, ins, 1, nullptr);
  EXPECT_EQ(gj_error_get_code(e), GJ_UNAVAILABLE);
  gj_error_destroy(e);
}

TEST(CapiDeviceTest, PinnedHostMemoryIsReadAsHostMemory) {
  Fixture f;
  float a[4] = {1, 2, 3, 4}, out[4] = {};
  int64_t shape[1] = {4};
  DLTensor in = Floats(a, shape, kDLCUDAHost);
  DLTensor res = Floats(out, shape, kDLCPU);
  const DLTensor* ins[] = {&in};
  const DLTensor* outs[] = {&res};
  gj_error* e = gj_function_call(f.fn, ins, 1, outs, 1, nullptr);
  ASSERT_EQ(e, nullptr) << gj_error_message(e);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[i], a[i] * 2.5f);
}

TEST(CapiDeviceTest, BuilderConstantOnCudaIsRejected) {
  gj_context* ctx = nullptr;
  ASSERT_EQ(gj_context_create(nullptr, &ctx), nullptr);
  gj_graph_builder* b = nullptr;
  ASSERT_EQ(gj_graph_builder_create(ctx, "g", &b), nullptr);
  float w[4] = {};
  int64_t shape[1] = {4};
  DLTensor t = Floats(w, shape, kDLCUDA);
  gj_error* e = gj_graph_builder_add_constant(b, "w", &t);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(gj_error_get_code(e), GJ_INVALID_ARGUMENT);
  const std::string message = gj_error_message(e);
  EXPECT_NE(message.find("constant 'w' is on cuda:0"), std::string::npos)
      << message;
  gj_error_destroy(e);
  gj_graph_builder_destroy(b);
  gj_context_destroy(ctx);
}

}  // namespace
