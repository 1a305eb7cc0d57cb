#ifndef GUARDJIT_TESTS_CUDA_CUDA_GRAPH_TEST_UTIL_H_
#define GUARDJIT_TESTS_CUDA_CUDA_GRAPH_TEST_UTIL_H_

// What the reduce-overhead tests share (cuda_graph_test.cc,
// cuda_graph_refusal_test.cc, cuda_graph_extern_test.cc; each binary's main
// is recording_main.cc): float32 tensors in emulated device memory, a
// fixture that loads functions in a mode, and the CPU run to compare with.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "tests/cuda/emulated_test_util.h"
#include "tests/cuda/recording_driver.h"

namespace guardjit {

// float32 memory the emulated device owns (host memory), contiguous.
struct FloatDeviceTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  DLTensor dl{};

  explicit FloatDeviceTensor(std::vector<int64_t> s, int device_type = kDLCUDA)
      : shape(std::move(s)) {
    size_t count = 1;
    for (int64_t d : shape) count *= static_cast<size_t>(d);
    values.assign(std::max<size_t>(count, 1), 0.0f);
    dl.data = values.data();
    dl.device = {static_cast<DLDeviceType>(device_type), 0};
    dl.ndim = static_cast<int>(shape.size());
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape.data();
  }
  FloatDeviceTensor(const FloatDeviceTensor&) = delete;
  uint64_t address() const { return reinterpret_cast<uintptr_t>(dl.data); }
  // Uniform values in [-scale, scale).
  void Fill(uint32_t seed, float scale = 2) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (float& v : values) v = dist(rng);
  }
};

// Functions loaded from graph text in a mode, destroyed with the test; the
// recording driver's log is cleared at the start.
class ReduceOverheadTest : public ::testing::Test {
 public:
  void SetUp() override {
    ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_));
    RecordingCudaDriver::Take();
  }
  void TearDown() override {
    for (gj_function* f : functions_) gj_function_destroy(f);
    for (gj_graph* g : graphs_) gj_graph_destroy(g);
    gj_context_destroy(ctx_);
    RecordingCudaDriver::DropNodePatches(false);
    gj_set_log_callback(nullptr, nullptr);
    gj_set_log_topics("");
  }
  gj_function* Load(const std::string& text, gj_function_mode mode,
                    gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO,
                    int32_t max_graphs = 0) {
    gj_graph* graph = nullptr;
    Err e{gj_graph_from_text(ctx_, text.data(), text.size(), nullptr, &graph)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    graphs_.push_back(graph);
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = dynamic;
    options.mode = mode;
    options.max_graphs_per_entry = max_graphs;
    gj_function* fn = nullptr;
    Err f{gj_function_create(ctx_, graph, &options, &fn)};
    EXPECT_EQ(f.e, nullptr) << f.message();
    functions_.push_back(fn);
    return fn;
  }
  gj_function_stats Stats(gj_function* fn) {
    gj_function_stats s;
    gj_function_stats_init(&s);
    Err e{gj_function_get_stats(fn, &s)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    return s;
  }
  std::string Explain(gj_function* fn) {
    char* text = nullptr;
    Err e{gj_function_explain(fn, &text)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    std::string out = text == nullptr ? "" : text;
    gj_string_destroy(text);
    return out;
  }
  gj_context* ctx_ = nullptr;
  std::vector<gj_graph*> graphs_;
  std::vector<gj_function*> functions_;
};

inline std::vector<std::string> Concat(
    std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline std::vector<std::string> Repeat(const std::string& name, size_t n) {
  return std::vector<std::string>(n, name);
}

inline bool Holds(const RecordedCall& call, uint64_t address) {
  return std::find(call.params.begin(), call.params.end(), address) !=
         call.params.end();
}

// Column sums of a (an intermediate), b * 3 plus them, and row sums of a:
// three kernels (reductions over different dims cannot share one), two
// reading a, one reading b and the intermediate.
inline constexpr char kTwo[] = R"pb(
  name: "two"
  placeholders {
    name: "a"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  nodes {
    name: "cols"
    target: "aten.sum.dim_IntList"
    args { ref: "a" }
    args { list { items { i: 0 } } }
    args { b: false }
  }
  nodes {
    name: "mb"
    target: "aten.mul.Tensor"
    args { ref: "b" }
    args { i: 3 }
  }
  nodes {
    name: "y"
    target: "aten.add.Tensor"
    args { ref: "mb" }
    args { ref: "cols" }
  }
  nodes {
    name: "rows"
    target: "aten.sum.dim_IntList"
    args { ref: "a" }
    args { list { items { i: 1 } } }
    args { b: false }
  }
  outputs { ref: "rows" }
  outputs { ref: "y" }
)pb";

// `fn` on CPU copies of `inputs`: each output's values.
inline std::vector<std::vector<float>> CpuResultsOf(
    gj_function* fn, const std::vector<const FloatDeviceTensor*>& inputs) {
  std::vector<DLTensor*> dl;  // CpuResults copies them, writing nothing
  for (const FloatDeviceTensor* t : inputs) {
    dl.push_back(const_cast<DLTensor*>(&t->dl));
  }
  return CpuResults(fn, dl);
}

// Calls `fn` on device `inputs` into device `outputs` on `stream`, checks
// every output against the CPU run, and returns the driver calls it made
// (the CPU run makes none).
inline std::vector<RecordedCall> CallAndCheck(
    gj_function* fn, const std::vector<const FloatDeviceTensor*>& inputs,
    const std::vector<FloatDeviceTensor*>& outputs, void* stream = nullptr) {
  const auto expected = CpuResultsOf(fn, inputs);
  RecordingCudaDriver::Take();
  std::vector<const DLTensor*> in;
  for (const FloatDeviceTensor* t : inputs) in.push_back(&t->dl);
  std::vector<const DLTensor*> out;
  for (FloatDeviceTensor* t : outputs) out.push_back(&t->dl);
  gj_call_options options;
  gj_call_options_init(&options);
  options.stream = stream;
  Err e{gj_function_call(fn, in.data(), in.size(), out.data(), out.size(),
                         &options)};
  EXPECT_EQ(e.e, nullptr) << e.message();
  std::vector<RecordedCall> calls = RecordingCudaDriver::Take();
  EXPECT_EQ(expected.size(), outputs.size());
  for (size_t k = 0; k < outputs.size() && k < expected.size(); ++k) {
    for (size_t i = 0; i < expected[k].size(); ++i) {
      EXPECT_NEAR(outputs[k]->values[i], expected[k][i], 1e-4)
          << "output " << k << " element " << i;
      if (std::fabs(outputs[k]->values[i] - expected[k][i]) > 1e-4) break;
    }
  }
  return calls;
}

}  // namespace guardjit

#endif  // GUARDJIT_TESTS_CUDA_CUDA_GRAPH_TEST_UTIL_H_
