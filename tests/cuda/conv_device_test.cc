// Convolutions through the public C API on the emulated device (this
// binary's main, in emulated_device_test.cc, installs the emulated driver
// and cuBLASLt): each runs as an im2col kernel and cuBLASLt products with
// its epilogue fused (jit/cuda/device_conv_step.h), never as its reference
// kernel on host copies. Each result is compared with the same function
// called on CPU tensors.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

// A contiguous float32 tensor whose memory the emulated device owns (its
// memory is host memory), or a CPU one.
struct Floats {
  std::vector<int64_t> shape;
  std::vector<float> values;
  DLTensor dl{};

  Floats(std::vector<int64_t> s, DLDeviceType device, uint32_t seed)
      : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    values.resize(static_cast<size_t>(n));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2, 2);
    for (float& v : values) v = dist(rng);
    dl.data = values.data();
    dl.device = {device, 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
};

// conv2d(x, w, b, padding 1) + r, relu: the ResNet block's tail. The batch
// of x and r is 2 as exported; dynamic entries take others.
constexpr char kConvBlock[] = R"pb(
  name: "conv_block"
  placeholders {
    name: "x"
    meta { dtype: FLOAT32 sizes: 2 sizes: 3 sizes: 8 sizes: 8 }
  }
  placeholders {
    name: "w"
    meta { dtype: FLOAT32 sizes: 4 sizes: 3 sizes: 3 sizes: 3 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 4 }
  }
  placeholders {
    name: "r"
    meta { dtype: FLOAT32 sizes: 2 sizes: 4 sizes: 8 sizes: 8 }
  }
  nodes {
    name: "conv"
    target: "aten.convolution.default"
    args { ref: "x" }
    args { ref: "w" }
    args { ref: "b" }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args {
      list {
        items { i: 1 }
        items { i: 1 }
      }
    }
    args { b: false }
    args {
      list {
        items { i: 0 }
        items { i: 0 }
      }
    }
    args { i: 1 }
  }
  nodes {
    name: "sum"
    target: "aten.add.Tensor"
    args { ref: "conv" }
    args { ref: "r" }
  }
  nodes {
    name: "act"
    target: "aten.relu.default"
    args { ref: "sum" }
  }
  outputs { ref: "act" }
)pb";

class ConvDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_));
    gj_graph* graph = nullptr;
    ASSERT_GJ_OK(gj_graph_from_text(ctx_, kConvBlock, sizeof(kConvBlock) - 1,
                                    nullptr, &graph));
    graph_ = graph;
  }
  void TearDown() override {
    gj_set_log_callback(nullptr, nullptr);
    gj_set_log_topics("");
    if (fn_ != nullptr) gj_function_destroy(fn_);
    gj_graph_destroy(graph_);
    gj_context_destroy(ctx_);
  }
  void Create(gj_dynamic_mode dynamic) {
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    ASSERT_GJ_OK(gj_function_create(ctx_, graph_, &options, &fn_));
  }
  // Calls the function on the device tensors and on CPU views of the same
  // memory; expects the same values.
  void ExpectDeviceMatchesCpu(int64_t batch, uint32_t seed) {
    Floats x({batch, 3, 8, 8}, kDLCUDA, seed),
        w({4, 3, 3, 3}, kDLCUDA, seed + 1), b({4}, kDLCUDA, seed + 2),
        r({batch, 4, 8, 8}, kDLCUDA, seed + 3);
    Floats out({batch, 4, 8, 8}, kDLCUDA, 0),
        cpu_out({batch, 4, 8, 8}, kDLCPU, 0);
    const DLTensor* in[] = {&x.dl, &w.dl, &b.dl, &r.dl};
    const DLTensor* outs[] = {&out.dl};
    ASSERT_GJ_OK(gj_function_call(fn_, in, 4, outs, 1, nullptr));
    // Again on the same memory: the products' cuBLASLt descriptors and
    // algorithms are cached (pointer alignment is part of their key).
    const EmulatedCublasLt::Counters first = EmulatedCublasLt::counters();
    ASSERT_GJ_OK(gj_function_call(fn_, in, 4, outs, 1, nullptr));
    EXPECT_EQ(EmulatedCublasLt::counters().matmul_descs, first.matmul_descs);
    EXPECT_EQ(EmulatedCublasLt::counters().heuristic_queries,
              first.heuristic_queries);
    std::vector<DLTensor> cpu;
    for (const DLTensor* t : in) {
      cpu.push_back(*t);
      cpu.back().device = {kDLCPU, 0};
    }
    const DLTensor* cpu_in[] = {&cpu[0], &cpu[1], &cpu[2], &cpu[3]};
    const DLTensor* cpu_outs[] = {&cpu_out.dl};
    ASSERT_GJ_OK(gj_function_call(fn_, cpu_in, 4, cpu_outs, 1, nullptr));
    for (size_t i = 0; i < out.values.size(); ++i) {
      ASSERT_NEAR(out.values[i], cpu_out.values[i], 1e-4) << batch << " " << i;
    }
  }
  gj_context* ctx_ = nullptr;
  gj_graph* graph_ = nullptr;
  gj_function* fn_ = nullptr;
};

std::vector<std::string>* Logged() {
  static std::vector<std::string>* logged = new std::vector<std::string>;
  return logged;
}

void CaptureCodegenLog() {
  Logged()->clear();
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "codegen") Logged()->push_back(message);
      },
      nullptr);
  gj_set_log_topics("codegen");
}

bool LogHas(const std::string& text) {
  for (const std::string& m : *Logged()) {
    if (m.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_F(ConvDeviceTest, ConvBlockRunsAsIm2ColAndCublasLt) {
  Create(GJ_DYNAMIC_AUTO);
  CaptureCodegenLog();
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  const int64_t launches = EmulatedCudaDriver::counters().launches;
  ExpectDeviceMatchesCpu(2, 1);
  // Per call one product (one group, batched over both images), and the
  // im2col and epilogue kernels launched on the device.
  EXPECT_EQ(EmulatedCublasLt::counters().matmuls - before.matmuls, 2);
  EXPECT_GE(EmulatedCudaDriver::counters().launches - launches, 4);
  EXPECT_FALSE(LogHas("host copies")) << "a node ran on host copies";
  EXPECT_TRUE(
      LogHas("conv aten.convolution.default float32 [2x3x8x8] * "
             "[4x3x3x3] stride 1x1 padding 1x1 dilation 1x1 groups 1 "
             "on cuBLASLt over im2col columns in slot"))
      << (Logged()->empty() ? "" : Logged()->back());
  EXPECT_TRUE(LogHas("kernel computing conv (im2col)"));
  // explain's account of the entry: its kernels on the device, no eager
  // node.
  char* text = nullptr;
  ASSERT_GJ_OK(gj_function_explain(fn_, &text));
  const std::string explain = text;
  gj_string_destroy(text);
  const size_t device = explain.find("kernels on cuda");
  ASSERT_NE(device, std::string::npos) << explain;
  const size_t line = explain.rfind('\n', device);
  EXPECT_NE(explain.substr(line, device - line).find(" 0 eager nodes"),
            std::string::npos)
      << explain;
  // And which node ran as which extern call.
  EXPECT_NE(explain.find("extern calls: 'conv' (aten.convolution.default) "
                         "as im2col and cuBLASLt with an epilogue kernel"),
            std::string::npos)
      << explain;
}

TEST_F(ConvDeviceTest, DynamicBatchIsOneDeviceEntry) {
  Create(GJ_DYNAMIC_DYNAMIC);
  const int64_t matmuls = EmulatedCublasLt::counters().matmuls;
  // Not 1: a dim of size 1 is specialized, as torch does.
  for (int64_t batch : {2, 3, 5, 9, 16}) {
    ExpectDeviceMatchesCpu(batch, static_cast<uint32_t>(10 * batch));
  }
  EXPECT_EQ(EmulatedCublasLt::counters().matmuls - matmuls, 10);
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn_, &stats));
  // One CPU entry and one CUDA entry, each dynamic.
  EXPECT_EQ(stats.compiles, 2);
}

// A cuBLASLt failure comes back as the call's error, naming the node.
TEST_F(ConvDeviceTest, CublasLtErrorNamesTheNode) {
  Create(GJ_DYNAMIC_AUTO);
  Floats x({2, 3, 8, 8}, kDLCUDA, 1), w({4, 3, 3, 3}, kDLCUDA, 2),
      b({4}, kDLCUDA, 3), r({2, 4, 8, 8}, kDLCUDA, 4),
      out({2, 4, 8, 8}, kDLCUDA, 0);
  const DLTensor* in[] = {&x.dl, &w.dl, &b.dl, &r.dl};
  const DLTensor* outs[] = {&out.dl};
  EmulatedCublasLt::FailNextMatmuls(1, CUBLAS_STATUS_EXECUTION_FAILED);
  {
    Err e{gj_function_call(fn_, in, 4, outs, 1, nullptr)};
    ASSERT_NE(e.e, nullptr);
    EXPECT_EQ(e.code(), GJ_INTERNAL) << e.message();
    EXPECT_NE(
        e.message().find("node 'conv' (aten.convolution.default) on cuBLASLt"),
        std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("CUBLAS_STATUS_EXECUTION_FAILED"),
              std::string::npos)
        << e.message();
  }
  // The next call runs.
  ASSERT_GJ_OK(gj_function_call(fn_, in, 4, outs, 1, nullptr));
}

// reduce-overhead mode: the conv block is recorded (the im2col and epilogue
// kernels as kernel nodes, the column matrices and the product in the key's
// pool, the cuBLASLt product captured as an extern call reading the weight
// where the caller keeps it) and its replays compute what plain launches
// and the CPU do: a dynamic batch (three sizes, one graph each), x and r new
// tensors (new addresses) on every call, the output into a caller buffer or
// into fresh memory, the weight changed in place and then moved.
TEST_F(ConvDeviceTest, CudaGraphsRecordTheConvBlock) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.mode = GJ_MODE_REDUCE_OVERHEAD;
  ASSERT_GJ_OK(gj_function_create(ctx_, graph_, &options, &fn_));
  gj_function* plain = nullptr;
  gj_function_options_init(&options);
  ASSERT_GJ_OK(gj_function_create(ctx_, graph_, &options, &plain));
  auto w =
      std::make_unique<Floats>(std::vector<int64_t>{4, 3, 3, 3}, kDLCUDA, 1);
  Floats b({4}, kDLCUDA, 2);
  const std::vector<int64_t> batches = {2, 3, 5};
  constexpr int kRounds = 5;
  uint32_t seed = 10;
  const EmulatedCublasLt::Counters before = EmulatedCublasLt::counters();
  for (int round = 0; round < kRounds; ++round) {
    for (int64_t batch : batches) {
      const std::string what = absl::StrCat("round ", round, ", batch ", batch);
      // The weight: changed in place on round 2, moved on round 3.
      if (round == 2 && batch == batches.front()) {
        for (float& v : w->values) v *= -0.5f;
      }
      if (round == 3 && batch == batches.front()) {
        w = std::make_unique<Floats>(std::vector<int64_t>{4, 3, 3, 3}, kDLCUDA,
                                     seed++);
      }
      Floats x({batch, 3, 8, 8}, kDLCUDA, seed++),
          r({batch, 4, 8, 8}, kDLCUDA, seed++);
      const DLTensor* in[] = {&x.dl, &w->dl, &b.dl, &r.dl};
      // The CPU on views of the same memory, and plain launches.
      std::vector<DLTensor> cpu;
      for (const DLTensor* t : in) {
        cpu.push_back(*t);
        cpu.back().device = {kDLCPU, 0};
      }
      const DLTensor* cpu_in[] = {&cpu[0], &cpu[1], &cpu[2], &cpu[3]};
      Floats cpu_out({batch, 4, 8, 8}, kDLCPU, 0),
          plain_out({batch, 4, 8, 8}, kDLCUDA, 0);
      const DLTensor* cpu_outs[] = {&cpu_out.dl};
      ASSERT_GJ_OK(gj_function_call(fn_, cpu_in, 4, cpu_outs, 1, nullptr));
      const DLTensor* plain_outs[] = {&plain_out.dl};
      ASSERT_GJ_OK(gj_function_call(plain, in, 4, plain_outs, 1, nullptr));
      // Odd rounds into a caller buffer, even ones into fresh memory.
      std::vector<float> got;
      if (round % 2 == 1) {
        Floats out({batch, 4, 8, 8}, kDLCUDA, 0);
        const DLTensor* outs[] = {&out.dl};
        ASSERT_GJ_OK(gj_function_call(fn_, in, 4, outs, 1, nullptr));
        got = out.values;
      } else {
        DLManagedTensor* out = nullptr;
        ASSERT_GJ_OK(gj_function_call_alloc(fn_, in, 4, nullptr, &out, 1));
        const float* p = static_cast<const float*>(out->dl_tensor.data);
        got.assign(p, p + cpu_out.values.size());
        gj_tensor_release(out);
      }
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(plain_out.values[i], cpu_out.values[i], 1e-4)
            << what << " (plain launches), element " << i;
        ASSERT_NEAR(got[i], plain_out.values[i], 1e-4)
            << what << " (graph replay), element " << i;
      }
    }
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn_, &stats));
  char* text = nullptr;
  ASSERT_GJ_OK(gj_function_explain(fn_, &text));
  const std::string explain = text;
  gj_string_destroy(text);
  // Each size key: a warm-up call, then replays (the first batch also warms
  // up the static entry the function starts with).
  const int64_t calls = kRounds * static_cast<int64_t>(batches.size());
  const int64_t warm_ups = static_cast<int64_t>(batches.size()) + 1;
  EXPECT_EQ(stats.cuda_graph_replays, calls - warm_ups) << explain;
  EXPECT_GE(stats.cuda_graphs_recorded, 3) << explain;
  // Replays ran the captured products: no plain cuBLASLt call past the
  // warm-ups (the plain function's one per call aside).
  EXPECT_GE(
      EmulatedCublasLt::counters().captured_matmuls - before.captured_matmuls,
      3);
  EXPECT_EQ(explain.find("cuda graphs refused"), std::string::npos) << explain;
  EXPECT_NE(explain.find("1 cuBLASLt step captured"), std::string::npos)
      << explain;
  gj_function_destroy(plain);
}

}  // namespace
}  // namespace guardjit
