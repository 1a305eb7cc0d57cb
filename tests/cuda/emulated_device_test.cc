// CUDA calls through the public C API on the emulated device: the driver
// table is EmulatedCudaDriver's (installed before anything touches CUDA), so
// kDLCUDA tensors are host memory the emulator's "device" owns, kernels are
// the CUDA backend's (rendered, compiled by NVRTC, loaded and launched
// through the driver table) and run on the SIMT emulator; matrix products
// run on the emulated cuBLASLt (emulated_cublaslt.h). Each result is
// compared with the same function called on CPU tensors.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cuda_allocator.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

class EmulatedDeviceTest : public EmulatedFunctionTest {};

// relu(a * b + 2) and its row sums: pointwise, then a reduction.
constexpr char kChain[] = R"pb(
  name: "chain"
  placeholders {
    name: "a"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "a" }
    args { ref: "b" }
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "mul" }
    args { i: 2 }
  }
  nodes {
    name: "relu"
    target: "aten.relu.default"
    args { ref: "add" }
  }
  nodes {
    name: "sum"
    target: "aten.sum.dim_IntList"
    args { ref: "relu" }
    args { list { items { i: 1 } } }
  }
  outputs { ref: "relu" }
  outputs { ref: "sum" }
)pb";

TEST_F(EmulatedDeviceTest, PointwiseAndReductionMatchCpuAndRunAsKernels) {
  gj_function* fn = Load(kChain);
  DeviceTensor<float> a({4, 33}, F32(), kDLCUDA), b({4, 33}, F32(), kDLCUDA);
  Fill(a.values(), a.count, 1);
  Fill(b.values(), b.count, 2);
  const auto expected = CpuResults(fn, {&a.dl, &b.dl});
  ASSERT_EQ(expected.size(), 2u);

  const int64_t launches = EmulatedCudaDriver::counters().launches;
  DeviceTensor<float> relu({4, 33}, F32(), kDLCUDA), sum({4}, F32(), kDLCUDA);
  const DLTensor* in[] = {&a.dl, &b.dl};
  const DLTensor* out[] = {&relu.dl, &sum.dl};
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, nullptr));
  // The kernels ran on the (emulated) device, not on host copies.
  EXPECT_GT(EmulatedCudaDriver::counters().launches, launches);
  for (size_t i = 0; i < relu.count; ++i) {
    ASSERT_NEAR(relu.values()[i], expected[0][i], 1e-6) << i;
  }
  for (size_t i = 0; i < sum.count; ++i) {
    ASSERT_NEAR(sum.values()[i], expected[1][i], 1e-4) << i;
  }
  char* text = nullptr;
  ASSERT_GJ_OK(gj_function_explain(fn, &text));
  EXPECT_NE(std::string(text).find("cuda"), std::string::npos) << text;
  gj_string_destroy(text);
}

TEST_F(EmulatedDeviceTest, CallEnqueuesOnTheCallersStream) {
  gj_function* fn = Load(kChain);
  DeviceTensor<float> a({4, 33}, F32(), kDLCUDA), b({4, 33}, F32(), kDLCUDA);
  DeviceTensor<float> relu({4, 33}, F32(), kDLCUDA), sum({4}, F32(), kDLCUDA);
  const DLTensor* in[] = {&a.dl, &b.dl};
  const DLTensor* out[] = {&relu.dl, &sum.dl};
  const CudaDriver* driver = *CudaDriver::Get();
  CUstream stream = nullptr;
  ASSERT_EQ(driver->cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  gj_call_options options;
  gj_call_options_init(&options);
  EXPECT_EQ(options.stream, nullptr);
  EXPECT_EQ(options.synchronize, 0);
  options.stream = stream;
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, &options));
  EXPECT_EQ(EmulatedCudaDriver::counters().last_launch_stream,
            static_cast<void*>(stream));
  options.stream = nullptr;
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, &options));
  EXPECT_EQ(EmulatedCudaDriver::counters().last_launch_stream, nullptr);
  driver->cuStreamDestroy(stream);
}

TEST_F(EmulatedDeviceTest, CallAllocReturnsDeviceTensorsFromThePool) {
  gj_function* fn = Load(kChain);
  DeviceTensor<float> a({4, 33}, F32(), kDLCUDA), b({4, 33}, F32(), kDLCUDA);
  Fill(a.values(), a.count, 3);
  Fill(b.values(), b.count, 4);
  const auto expected = CpuResults(fn, {&a.dl, &b.dl});
  CudaCachingAllocator* pool = *CudaCachingAllocator::ForDevice(0);
  const int64_t in_use = pool->stats().bytes_in_use;
  const DLTensor* in[] = {&a.dl, &b.dl};
  DLManagedTensor* out[2] = {};
  ASSERT_GJ_OK(gj_function_call_alloc(fn, in, 2, nullptr, out, 2));
  for (int k = 0; k < 2; ++k) {
    ASSERT_NE(out[k], nullptr);
    EXPECT_EQ(out[k]->dl_tensor.device.device_type, kDLCUDA);
    EXPECT_EQ(out[k]->dl_tensor.device.device_id, 0);
    const float* v = static_cast<const float*>(out[k]->dl_tensor.data);
    for (size_t i = 0; i < expected[k].size(); ++i) {
      ASSERT_NEAR(v[i], expected[k][i], 1e-4) << k << " " << i;
    }
  }
  EXPECT_GT(pool->stats().bytes_in_use, in_use);
  // The public view of the same pool.
  gj_memory_stats device;
  gj_memory_stats_init(&device);
  ASSERT_GJ_OK(gj_context_get_device_memory_stats(ctx_, {kDLCUDA, 0}, &device));
  EXPECT_EQ(device.bytes_in_use, pool->stats().bytes_in_use);
  EXPECT_EQ(device.system_allocations, pool->stats().device_allocations);
  EXPECT_GE(device.peak_bytes_in_use, device.bytes_in_use);
  gj_tensor_release(out[0]);
  gj_tensor_release(out[1]);
  // Intermediates and outputs went back to the pool.
  EXPECT_EQ(pool->stats().bytes_in_use, in_use);
  EXPECT_GT(pool->stats().cache_hits + pool->stats().device_allocations, 0);
  ASSERT_GJ_OK(gj_context_get_device_memory_stats(ctx_, {kDLCUDA, 0}, &device));
  EXPECT_GT(device.bytes_cached, 0);
  ASSERT_GJ_OK(gj_context_release_cached_device_memory(ctx_, {kDLCUDA, 0}));
  ASSERT_GJ_OK(gj_context_get_device_memory_stats(ctx_, {kDLCUDA, 0}, &device));
  EXPECT_EQ(device.bytes_cached, 0);
  EXPECT_EQ(device.bytes_in_use, in_use);
  // A device the emulated driver does not have.
  gj_error* missing =
      gj_context_get_device_memory_stats(ctx_, {kDLCUDA, 7}, &device);
  ASSERT_NE(missing, nullptr);
  EXPECT_NE(std::string(gj_error_message(missing)).find("CUDA device 7"),
            std::string::npos)
      << gj_error_message(missing);
  gj_error_destroy(missing);
}

TEST_F(EmulatedDeviceTest, DynamicEntryServesManySizes) {
  gj_function* fn = Load(kChain, GJ_DYNAMIC_DYNAMIC);
  for (int64_t cols : {5, 17, 33, 64, 130}) {
    DeviceTensor<float> a({3, cols}, F32(), kDLCUDA),
        b({3, cols}, F32(), kDLCUDA);
    Fill(a.values(), a.count, static_cast<uint32_t>(cols));
    Fill(b.values(), b.count, static_cast<uint32_t>(cols + 1));
    const auto expected = CpuResults(fn, {&a.dl, &b.dl});
    DeviceTensor<float> relu({3, cols}, F32(), kDLCUDA),
        sum({3}, F32(), kDLCUDA);
    const DLTensor* in[] = {&a.dl, &b.dl};
    const DLTensor* out[] = {&relu.dl, &sum.dl};
    ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, nullptr));
    for (size_t i = 0; i < sum.count; ++i) {
      ASSERT_NEAR(sum.values()[i], expected[1][i], 1e-4) << cols;
    }
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  // One CPU entry and one CUDA entry, each dynamic.
  EXPECT_EQ(stats.compiles, 2);
}

TEST_F(EmulatedDeviceTest, StridedDestinationAndZeroDimCpuScalar) {
  gj_function* fn = Load(R"pb(
    name: "scale"
    placeholders {
      name: "a"
      meta { dtype: FLOAT32 sizes: 3 sizes: 4 }
    }
    placeholders {
      name: "s"
      meta { dtype: FLOAT32 }
    }
    nodes {
      name: "mul"
      target: "aten.mul.Tensor"
      args { ref: "a" }
      args { ref: "s" }
    }
    outputs { ref: "mul" }
  )pb");
  DeviceTensor<float> a({3, 4}, F32(), kDLCUDA);
  DeviceTensor<float> s({}, F32(), kDLCPU);
  Fill(a.values(), a.count, 5);
  s.values()[0] = 2.5f;
  // A transposed destination: column-major.
  DeviceTensor<float> out({3, 4}, F32(), kDLCUDA, {1, 3});
  const DLTensor* in[] = {&a.dl, &s.dl};
  const DLTensor* outs[] = {&out.dl};
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, outs, 1, nullptr));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      ASSERT_FLOAT_EQ(out.values()[i + 3 * j], a.values()[i * 4 + j] * 2.5f);
    }
  }
}

TEST_F(EmulatedDeviceTest, ReturnedConstantIsACopyTheHostOwns) {
  // \000\000\200\077 is 1.0f: c = [1, 1].
  gj_function* fn = Load(R"pb(
    name: "with_constant"
    placeholders {
      name: "x"
      meta { dtype: FLOAT32 sizes: 2 }
    }
    constants {
      name: "c"
      dtype: FLOAT32
      sizes: 2
      data: "\000\000\200\077\000\000\200\077"
    }
    nodes {
      name: "add"
      target: "aten.add.Tensor"
      args { ref: "x" }
      args { ref: "c" }
    }
    outputs { ref: "add" }
    outputs { ref: "c" }
  )pb");
  DeviceTensor<float> x({2}, F32(), kDLCUDA);
  x.values()[0] = 3;
  x.values()[1] = 4;
  const DLTensor* in[] = {&x.dl};
  for (int call = 0; call < 2; ++call) {
    DLManagedTensor* out[2] = {};
    ASSERT_GJ_OK(gj_function_call_alloc(fn, in, 1, nullptr, out, 2));
    float* sum = static_cast<float*>(out[0]->dl_tensor.data);
    float* c = static_cast<float*>(out[1]->dl_tensor.data);
    EXPECT_FLOAT_EQ(sum[0], 4) << call;
    EXPECT_FLOAT_EQ(sum[1], 5) << call;
    EXPECT_FLOAT_EQ(c[0], 1) << call;
    // The host owns what it was handed: writing it must not reach the
    // program's copy of the constant.
    c[0] = 100;
    gj_tensor_release(out[0]);
    gj_tensor_release(out[1]);
  }
}

TEST_F(EmulatedDeviceTest, MixedDevicesAndMissingOrdinalsAreRejected) {
  gj_function* fn = Load(kChain);
  DeviceTensor<float> a({4, 33}, F32(), kDLCUDA), b({4, 33}, F32(), kDLCPU);
  DeviceTensor<float> relu({4, 33}, F32(), kDLCUDA), sum({4}, F32(), kDLCUDA);
  const DLTensor* in[] = {&a.dl, &b.dl};
  const DLTensor* out[] = {&relu.dl, &sum.dl};
  {
    Err e{gj_function_call(fn, in, 2, out, 2, nullptr)};
    EXPECT_EQ(e.code(), GJ_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("input 0 ('a') is on cuda:0"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("input 1 ('b') on cpu"), std::string::npos)
        << e.message();
  }
  b.dl.device = {kDLCUDA, 0};
  sum.dl.device = {kDLCPU, 0};
  {
    Err e{gj_function_call(fn, in, 2, out, 2, nullptr)};
    EXPECT_EQ(e.code(), GJ_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("output 1 is on cpu"), std::string::npos)
        << e.message();
  }
  a.dl.device = {kDLCUDA, 3};
  b.dl.device = {kDLCUDA, 3};
  {
    DLManagedTensor* outs[2] = {};
    Err e{gj_function_call_alloc(fn, in, 2, nullptr, outs, 2)};
    EXPECT_EQ(e.code(), GJ_INVALID_ARGUMENT);
    EXPECT_NE(e.message().find("sees 1 CUDA device"), std::string::npos)
        << e.message();
  }
}

TEST_F(EmulatedDeviceTest, DeviceSideIndexCheckIsReportedAtTheNextSync) {
  gj_function* fn = Load(R"pb(
    name: "lookup"
    placeholders {
      name: "w"
      meta { dtype: FLOAT32 sizes: 10 sizes: 4 }
    }
    placeholders {
      name: "idx"
      meta { dtype: INT64 sizes: 5 }
    }
    nodes {
      name: "emb"
      target: "aten.embedding.default"
      args { ref: "w" }
      args { ref: "idx" }
    }
    outputs { ref: "emb" }
  )pb");
  DeviceTensor<float> w({10, 4}, F32(), kDLCUDA);
  DeviceTensor<int64_t> idx({5}, I64(), kDLCUDA);
  Fill(w.values(), w.count, 6);
  for (int i = 0; i < 5; ++i) idx.values()[i] = i * 2;
  DeviceTensor<float> out({5, 4}, F32(), kDLCUDA);
  const DLTensor* in[] = {&w.dl, &idx.dl};
  const DLTensor* outs[] = {&out.dl};
  gj_call_options sync;
  gj_call_options_init(&sync);
  sync.synchronize = 1;
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, outs, 1, &sync));
  for (int i = 0; i < 5; ++i) {
    ASSERT_FLOAT_EQ(out.values()[i * 4 + 1], w.values()[i * 2 * 4 + 1]);
  }
  idx.values()[3] = 10;  // out of range
  {
    Err e{gj_function_call(fn, in, 2, outs, 1, &sync)};
    ASSERT_NE(e.e, nullptr);
    EXPECT_NE(e.message().find("device-side check failed during this call"),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("emb"), std::string::npos) << e.message();
  }
  // Without synchronize the call returns once enqueued; the next call of
  // the function reports the failure.
  {
    Err e{gj_function_call(fn, in, 2, outs, 1, nullptr)};
    EXPECT_EQ(e.e, nullptr) << e.message();
  }
  idx.values()[3] = 1;
  {
    Err e{gj_function_call(fn, in, 2, outs, 1, nullptr)};
    ASSERT_NE(e.e, nullptr);
    EXPECT_NE(e.message().find("in an earlier call"), std::string::npos)
        << e.message();
  }
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, outs, 1, nullptr));
}

TEST_F(EmulatedDeviceTest, ConcurrentCallsOnOneFunction) {
  gj_function* fn = Load(kChain, GJ_DYNAMIC_DYNAMIC);
  constexpr int kThreads = 4, kCalls = 8;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kCalls; ++c) {
        const int64_t cols = 8 + 8 * ((t + c) % 3);
        DeviceTensor<float> a({2, cols}, F32(), kDLCUDA),
            b({2, cols}, F32(), kDLCUDA);
        Fill(a.values(), a.count, static_cast<uint32_t>(t * 100 + c));
        Fill(b.values(), b.count, static_cast<uint32_t>(t * 100 + c + 50));
        DeviceTensor<float> relu({2, cols}, F32(), kDLCUDA),
            sum({2}, F32(), kDLCUDA);
        const DLTensor* in[] = {&a.dl, &b.dl};
        const DLTensor* out[] = {&relu.dl, &sum.dl};
        gj_error* e = gj_function_call(fn, in, 2, out, 2, nullptr);
        if (e != nullptr) {
          failures[t] = gj_error_message(e);
          gj_error_destroy(e);
          return;
        }
        for (int r = 0; r < 2; ++r) {
          double want = 0;
          for (int64_t j = 0; j < cols; ++j) {
            const float v = a.values()[r * cols + j] * b.values()[r * cols + j];
            want += std::max(v + 2.0f, 0.0f);
          }
          if (std::abs(sum.values()[r] - want) > 1e-4 * (1 + std::abs(want))) {
            failures[t] = "wrong sum";
            return;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << t;
}

// The MLP example (linear, relu, linear, as torch.export writes them) on
// the device: each addmm runs on cuBLASLt with the epilogue fused there
// (bias + relu, then bias), transposed weights read through layouts, and
// no node runs on host copies.
TEST_F(EmulatedDeviceTest, MatmulRunsOnCublasLtAndMatches) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(
      gj_graph_from_file(ctx_, GJ_EXAMPLES_DIR "/mlp.pbtxt", nullptr, &graph));
  graphs_.push_back(graph);
  gj_function* fn = nullptr;
  ASSERT_GJ_OK(gj_function_create(ctx_, graph, nullptr, &fn));
  functions_.push_back(fn);
  static std::vector<std::string>* logged = new std::vector<std::string>;
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "codegen") logged->push_back(message);
      },
      nullptr);
  gj_set_log_topics("codegen");
  DeviceTensor<float> x({4, 8}, F32(), kDLCUDA);
  Fill(x.values(), x.count, 7);
  const auto expected = CpuResults(fn, {&x.dl});
  ASSERT_EQ(expected.size(), 1u);
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  const CudaDriver* driver = EmulatedCudaDriver::Get();
  CUstream stream = nullptr;
  ASSERT_EQ(driver->cuStreamCreate(&stream, 0), CUDA_SUCCESS);
  gj_call_options options;
  gj_call_options_init(&options);
  options.stream = stream;
  DLManagedTensor* out[1] = {};
  const DLTensor* in[] = {&x.dl};
  ASSERT_GJ_OK(gj_function_call_alloc(fn, in, 1, &options, out, 1));
  const float* v = static_cast<const float*>(out[0]->dl_tensor.data);
  for (size_t i = 0; i < expected[0].size(); ++i) {
    ASSERT_NEAR(v[i], expected[0][i], 1e-5) << i;
  }
  EXPECT_EQ(out[0]->dl_tensor.device.device_type, kDLCUDA);
  gj_tensor_release(out[0]);
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  const EmulatedCublasLt::Counters after = EmulatedCublasLt::counters();
  EXPECT_EQ(after.matmuls - before.matmuls, 2);
  EXPECT_EQ(after.last_epilogue, CUBLASLT_EPILOGUE_BIAS);  // addmm_1
  EXPECT_EQ(after.last_stream, static_cast<void*>(stream));
  bool host_copies = false, relu_bias = false;
  for (const std::string& m : *logged) {
    host_copies |= m.find("host copies") != std::string::npos;
    relu_bias |= m.find(
                     "gemm aten.addmm.default float32 [4x8] @ [8x16]^T with "
                     "cuBLASLt's epilogue relu+bias") != std::string::npos;
  }
  EXPECT_FALSE(host_copies) << "a node ran on host copies";
  EXPECT_TRUE(relu_bias) << "no codegen log shows addmm + relu on cuBLASLt:\n"
                         << (logged->empty() ? "" : logged->back());
  // A second call reuses the cached descriptors and algorithms.
  ASSERT_GJ_OK(gj_function_call_alloc(fn, in, 1, &options, out, 1));
  gj_tensor_release(out[0]);
  const EmulatedCublasLt::Counters again = EmulatedCublasLt::counters();
  EXPECT_EQ(again.matmuls - after.matmuls, 2);
  EXPECT_EQ(again.matmul_descs, after.matmul_descs);
  EXPECT_EQ(again.heuristic_queries, after.heuristic_queries);
  driver->cuStreamDestroy(stream);
}

// A cuBLASLt failure comes back as the call's error, naming the node.
TEST_F(EmulatedDeviceTest, CublasLtErrorNamesTheNode) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(
      gj_graph_from_file(ctx_, GJ_EXAMPLES_DIR "/mlp.pbtxt", nullptr, &graph));
  graphs_.push_back(graph);
  gj_function* fn = nullptr;
  ASSERT_GJ_OK(gj_function_create(ctx_, graph, nullptr, &fn));
  functions_.push_back(fn);
  DeviceTensor<float> x({4, 8}, F32(), kDLCUDA);
  Fill(x.values(), x.count, 9);
  DLManagedTensor* out[1] = {};
  const DLTensor* in[] = {&x.dl};
  EmulatedCublasLt::FailNextMatmuls(1, CUBLAS_STATUS_EXECUTION_FAILED);
  Err e{gj_function_call_alloc(fn, in, 1, nullptr, out, 1)};
  ASSERT_NE(e.e, nullptr);
  EXPECT_EQ(e.code(), GJ_INTERNAL) << e.message();
  EXPECT_NE(e.message().find("node 'addmm' (aten.addmm.default)"),
            std::string::npos)
      << e.message();
  EXPECT_NE(e.message().find("CUBLAS_STATUS_EXECUTION_FAILED"),
            std::string::npos)
      << e.message();
  EXPECT_EQ(out[0], nullptr);
  // The next call runs.
  ASSERT_GJ_OK(gj_function_call_alloc(fn, in, 1, nullptr, out, 1));
  gj_tensor_release(out[0]);
}

// Dynamo's toy example on the device: the head's predicate is read on the
// host (the break's one synchronization) and each branch's continuation
// runs as device kernels.
TEST_F(EmulatedDeviceTest, GraphBreakReadsThePredicateFromTheDevice) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(gj_graph_from_file(
      ctx_, GJ_EXAMPLES_DIR "/seed_graph_break.pbtxt", nullptr, &graph));
  graphs_.push_back(graph);
  gj_function* fn = nullptr;
  ASSERT_GJ_OK(gj_function_create(ctx_, graph, nullptr, &fn));
  functions_.push_back(fn);
  for (float shift : {3.0f, -3.0f, 3.0f}) {
    DeviceTensor<float> a({37}, F32(), kDLCUDA), b({37}, F32(), kDLCUDA);
    Fill(a.values(), a.count, 7);
    Fill(b.values(), b.count, 8);
    for (size_t i = 0; i < b.count; ++i) b.values()[i] += shift;
    const auto expected = CpuResults(fn, {&a.dl, &b.dl});
    ASSERT_EQ(expected.size(), 1u);
    const int64_t launches = EmulatedCudaDriver::counters().launches;
    DeviceTensor<float> out({37}, F32(), kDLCUDA);
    const DLTensor* in[] = {&a.dl, &b.dl};
    const DLTensor* outs[] = {&out.dl};
    ASSERT_GJ_OK(gj_function_call(fn, in, 2, outs, 1, nullptr));
    EXPECT_GT(EmulatedCudaDriver::counters().launches, launches);
    for (size_t i = 0; i < out.count; ++i) {
      ASSERT_NEAR(out.values()[i], expected[0][i], 1e-6) << i;
    }
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  // Each segment has a CPU entry (the CpuResults calls) and a CUDA one.
  EXPECT_EQ(stats.graph_count, 3);
  EXPECT_EQ(stats.cache_entries, 6);
}

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Before anything reads the driver table: every CUDA call in this binary
  // goes to the emulated device.
  guardjit::CudaDriver::InstallForTesting(guardjit::EmulatedCudaDriver::Get());
  // And cuBLASLt: the emulated one, over the emulated device's memory.
  guardjit::CublasLtApi::InstallForTesting(guardjit::EmulatedCublasLt::Get());
  return RUN_ALL_TESTS();
}
