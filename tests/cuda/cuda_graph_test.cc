// reduce-overhead mode (runtime/cuda/cuda_graph.h) through the C API on the
// emulated device, with every launch and graph call recorded
// (recording_driver.h): the exact driver call sequence of each call (warm-up,
// capture, replay, node patches), size keys, eviction and refusals, and the
// results against the same function on CPU tensors. The emulated graph
// replays kernel nodes with the parameters they hold, so a pointer that was
// not patched really reads the old buffer (StalePointerReadsTheOldBuffer).

#include "runtime/cuda/cuda_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/recording_driver.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;

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

// float32 memory the emulated device owns (host memory).
struct DeviceTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
  DLTensor dl{};

  explicit DeviceTensor(std::vector<int64_t> s, int device_type = kDLCUDA)
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
  DeviceTensor(const DeviceTensor&) = delete;
  uint64_t address() const { return reinterpret_cast<uintptr_t>(dl.data); }
  void Fill(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2, 2);
    for (float& v : values) v = dist(rng);
  }
};

// Column sums of a (an intermediate), b * 3 plus them, and row sums of a:
// three kernels (reductions over different dims cannot share one), two
// reading a, one reading b and the intermediate.
constexpr char kTwo[] = R"pb(
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

class CudaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_));
    RecordingCudaDriver::Take();
  }
  void TearDown() override {
    for (gj_function* f : functions_) gj_function_destroy(f);
    for (gj_graph* g : graphs_) gj_graph_destroy(g);
    gj_context_destroy(ctx_);
    RecordingCudaDriver::DropNodePatches(false);
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

// `fn` on CPU copies of `inputs`: each output's values.
std::vector<std::vector<float>> CpuResults(
    gj_function* fn, const std::vector<const DeviceTensor*>& inputs) {
  std::vector<DLTensor> cpu;
  for (const DeviceTensor* t : inputs) {
    DLTensor c = t->dl;
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

// Calls `fn` on device `inputs` into device `outputs` on `stream`, checks
// every output against the CPU run, and returns the driver calls it made
// (the CPU run makes none).
std::vector<RecordedCall> CallAndCheck(
    gj_function* fn, const std::vector<const DeviceTensor*>& inputs,
    const std::vector<DeviceTensor*>& outputs, void* stream = nullptr) {
  const auto expected = CpuResults(fn, inputs);
  RecordingCudaDriver::Take();
  std::vector<const DLTensor*> in;
  for (const DeviceTensor* t : inputs) in.push_back(&t->dl);
  std::vector<const DLTensor*> out;
  for (DeviceTensor* t : outputs) out.push_back(&t->dl);
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

bool Holds(const RecordedCall& call, uint64_t address) {
  return std::find(call.params.begin(), call.params.end(), address) !=
         call.params.end();
}

std::vector<std::string> Repeat(const std::string& name, size_t n) {
  return std::vector<std::string>(n, name);
}

std::vector<std::string> Concat(
    std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST_F(CudaGraphTest,
       WarmsUpThenRecordsThenReplaysThenPatchesOnlyMovedPointers) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  DeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);

  // 1: warm-up, plain launches only.
  const std::vector<RecordedCall> warm = CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  const size_t kernels = warm.size();
  ASSERT_GE(kernels, 2u);
  EXPECT_EQ(RecordingCudaDriver::Names(warm),
            Repeat("cuLaunchKernel", kernels));
  size_t reading_a = 0;
  size_t reading_b = 0;
  size_t writing_mb = 0;
  for (const RecordedCall& c : warm) {
    reading_a += Holds(c, a.address());
    reading_b += Holds(c, b.address());
    writing_mb += Holds(c, mb.address());
  }
  ASSERT_GE(reading_a, 1u);
  ASSERT_GE(reading_b, 1u);
  ASSERT_LT(reading_b, kernels) << "a kernel that does not read b";
  ASSERT_GE(writing_mb, 1u);

  // 2: capture on the set's own stream, instantiate, launch on the call's.
  a.Fill(3);
  const std::vector<RecordedCall> record =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  EXPECT_EQ(
      RecordingCudaDriver::Names(record),
      Concat({{"cuStreamBeginCapture"},
              Repeat("cuLaunchKernel", kernels),
              {"cuStreamEndCapture", "cuGraphInstantiate", "cuGraphLaunch"}}));
  ASSERT_EQ(record.size(), kernels + 4);
  EXPECT_NE(record.front().stream, nullptr);  // not the legacy stream
  EXPECT_EQ(record.back().stream, nullptr);   // the call's

  // 3: same addresses, new values: one cuGraphLaunch.
  a.Fill(4);
  b.Fill(5);
  EXPECT_THAT(
      RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb})),
      ElementsAre("cuGraphLaunch"));

  // 4: b moved: only the nodes reading b are patched, with its new address.
  DeviceTensor b2({4, 33});
  b2.Fill(6);
  const std::vector<RecordedCall> moved_b =
      CallAndCheck(fn, {&a, &b2}, {&sa, &mb});
  EXPECT_EQ(RecordingCudaDriver::Names(moved_b),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", reading_b),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < moved_b.size(); ++i) {
    EXPECT_TRUE(Holds(moved_b[i], b2.address())) << i;
    EXPECT_FALSE(Holds(moved_b[i], b.address())) << i;
  }

  // 5: a moved: the nodes reading a.
  DeviceTensor a2({4, 33});
  a2.Fill(7);
  const std::vector<RecordedCall> moved =
      CallAndCheck(fn, {&a2, &b2}, {&sa, &mb});
  EXPECT_EQ(RecordingCudaDriver::Names(moved),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", reading_a),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < moved.size(); ++i) {
    EXPECT_TRUE(Holds(moved[i], a2.address())) << i;
    EXPECT_FALSE(Holds(moved[i], a.address())) << i;
  }

  // 6: a new destination for output 1: the nodes writing it.
  DeviceTensor mb2({4, 33});
  const std::vector<RecordedCall> dest =
      CallAndCheck(fn, {&a2, &b2}, {&sa, &mb2});
  EXPECT_EQ(RecordingCudaDriver::Names(dest),
            Concat({Repeat("cuGraphExecKernelNodeSetParams", writing_mb),
                    {"cuGraphLaunch"}}));
  for (size_t i = 0; i + 1 < dest.size(); ++i) {
    EXPECT_TRUE(Holds(dest[i], mb2.address())) << i;
  }

  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 1);
  EXPECT_EQ(s.cuda_graph_replays, 5);
  EXPECT_EQ(s.cuda_graph_pointer_updates,
            static_cast<int64_t>(reading_a + reading_b + writing_mb));
  EXPECT_EQ(s.cuda_graph_recaptures, 0);
  EXPECT_EQ(s.cuda_graph_evictions, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs: 1 recorded"), std::string::npos)
      << explain;
  EXPECT_NE(explain.find("5 replays"), std::string::npos) << explain;
}

TEST_F(CudaGraphTest, StalePointerReadsTheOldBuffer) {
  // What makes the other tests able to fail: without its patch, a replayed
  // node reads the buffer it was captured with.
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  DeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  CallAndCheck(fn, {&a, &b}, {&sa, &mb});
  const std::vector<float> old_sums = sa.values;
  DeviceTensor a2({4, 33});
  a2.Fill(9);
  RecordingCudaDriver::DropNodePatches(true);
  const DLTensor* in[] = {&a2.dl, &b.dl};
  const DLTensor* out[] = {&sa.dl, &mb.dl};
  ASSERT_GJ_OK(gj_function_call(fn, in, 2, out, 2, nullptr));
  EXPECT_EQ(sa.values, old_sums);
}

TEST_F(CudaGraphTest, ReplaysOnTheCallersStream) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  const CudaDriver* driver = RecordingCudaDriver::Get();
  CUstream s1 = nullptr;
  CUstream s2 = nullptr;
  ASSERT_EQ(driver->cuStreamCreate(&s1, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver->cuStreamCreate(&s2, 0), CUDA_SUCCESS);
  DeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s1);
  const std::vector<RecordedCall> record =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s1);
  ASSERT_FALSE(record.empty());
  EXPECT_EQ(record.back().name, "cuGraphLaunch");
  EXPECT_EQ(record.back().stream, s1);
  a.Fill(3);
  const std::vector<RecordedCall> replay =
      CallAndCheck(fn, {&a, &b}, {&sa, &mb}, s2);
  ASSERT_EQ(replay.size(), 1u);
  EXPECT_EQ(replay[0].name, "cuGraphLaunch");
  EXPECT_EQ(replay[0].stream, s2);
  driver->cuStreamDestroy(s1);
  driver->cuStreamDestroy(s2);
}

TEST_F(CudaGraphTest, DynamicEntryRecordsOneGraphPerSizeKey) {
  gj_function* fn = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC);
  auto call = [&](int64_t cols) {
    DeviceTensor a({4, cols}), b({4, cols}), sa({4}), mb({4, cols});
    a.Fill(static_cast<uint32_t>(cols));
    b.Fill(static_cast<uint32_t>(cols + 1));
    return RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb}));
  };
  auto is_plain = [](const std::vector<std::string>& names) {
    return !names.empty() &&
           std::all_of(names.begin(), names.end(), [](const std::string& n) {
             return n == "cuLaunchKernel";
           });
  };
  auto is_record = [](const std::vector<std::string>& names) {
    return names.size() > 4 && names.front() == "cuStreamBeginCapture" &&
           names.back() == "cuGraphLaunch";
  };
  EXPECT_TRUE(is_plain(call(5)));
  EXPECT_TRUE(is_record(call(5)));
  EXPECT_TRUE(is_plain(call(17)));  // a new key warms up
  EXPECT_TRUE(is_record(call(17)));
  // The old key replays; new tensors every call, so inputs and outputs are
  // patched first.
  const std::vector<std::string> again = call(5);
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again.back(), "cuGraphLaunch");
  EXPECT_EQ(std::count(again.begin(), again.end(), "cuStreamBeginCapture"), 0);
  EXPECT_EQ(std::count(again.begin(), again.end(), "cuLaunchKernel"), 0);
  const gj_function_stats s = Stats(fn);
  // One entry for the CUDA calls (CpuResults made the other).
  EXPECT_EQ(s.cache_entries, 2) << Explain(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 2);
  EXPECT_EQ(s.cuda_graph_replays, 3);
  EXPECT_GT(s.cuda_graph_pool_bytes, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("size keys"), std::string::npos) << explain;
}

TEST_F(CudaGraphTest, EvictsTheLeastRecentlyUsedKeyPastTheLimit) {
  gj_function* fn =
      Load(kTwo, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC, /*max_graphs=*/2);
  auto call = [&](int64_t cols) {
    DeviceTensor a({4, cols}), b({4, cols}), sa({4}), mb({4, cols});
    a.Fill(static_cast<uint32_t>(cols));
    b.Fill(static_cast<uint32_t>(cols + 1));
    return RecordingCudaDriver::Names(CallAndCheck(fn, {&a, &b}, {&sa, &mb}));
  };
  for (int64_t cols : {5, 17}) {
    call(cols);
    call(cols);
  }
  EXPECT_EQ(Stats(fn).cuda_graph_evictions, 0);
  // A third key: the first call of it evicts key 5's graph.
  const std::vector<std::string> third = call(33);
  EXPECT_EQ(std::count(third.begin(), third.end(), "cuGraphExecDestroy"), 1);
  EXPECT_EQ(std::count(third.begin(), third.end(), "cuGraphDestroy"), 1);
  call(33);
  gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graph_evictions, 1);
  EXPECT_EQ(s.cuda_graphs_recorded, 3);
  // Key 5 comes back: warm-up again, then a re-capture.
  call(5);
  const std::vector<std::string> back = call(5);
  ASSERT_FALSE(back.empty());
  EXPECT_EQ(back.front(), "cuStreamBeginCapture");
  s = Stats(fn);
  EXPECT_EQ(s.cuda_graph_recaptures, 1);
  EXPECT_EQ(s.cuda_graph_evictions, 2);
  EXPECT_EQ(s.cuda_graphs_recorded, 4);
}

// The MLP's products run on cuBLASLt, which the recording does not capture.
// conv2d(x, w, b, padding 1): im2col + cuBLASLt with buffers from the
// call's allocator, which a capture cannot allocate from.
constexpr char kConv[] = R"pb(
  name: "conv"
  placeholders {
    name: "x"
    meta { dtype: FLOAT32 sizes: 1 sizes: 2 sizes: 5 sizes: 5 }
  }
  placeholders {
    name: "w"
    meta { dtype: FLOAT32 sizes: 3 sizes: 2 sizes: 3 sizes: 3 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 3 }
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
  outputs { ref: "conv" }
)pb";

// Entries with cuBLASLt GEMM and conv steps are recorded
// (cuda_graph_extern_test.cc); a convolution whose weight cuBLASLt cannot
// read in place (channels-last: the plain path copies it contiguous from the
// call's allocator, which a capture cannot do) is refused, naming node and
// operand, once.
TEST_F(CudaGraphTest, ConvWithAChannelsLastWeightIsRefusedNamingTheOperand) {
  gj_function* fn = Load(kConv, GJ_MODE_REDUCE_OVERHEAD);
  static std::vector<std::string>* logged = new std::vector<std::string>;
  gj_set_log_callback(
      [](void*, const char* topic, const char* message) {
        if (std::string(topic) == "cudagraphs") logged->push_back(message);
      },
      nullptr);
  gj_set_log_topics("cudagraphs");
  DeviceTensor x({1, 2, 5, 5}), w({3, 2, 3, 3}), b({3}), y({1, 3, 5, 5});
  // w as [out, in, kh, kw] over memory laid out [out, kh, kw, in].
  int64_t channels_last[] = {18, 1, 6, 2};
  w.dl.strides = channels_last;
  x.Fill(7);
  w.Fill(8);
  b.Fill(9);
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(fn, {&x, &w, &b}, {&y})) {
      EXPECT_NE(c.name, "cuGraphLaunch") << "call " << i;
    }
  }
  gj_set_log_callback(nullptr, nullptr);
  gj_set_log_topics("");
  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 0);
  EXPECT_EQ(s.cuda_graph_replays, 0);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs refused: node 'conv' "
                         "(aten.convolution.default): cuBLASLt reads its "
                         "operand A (the weight) through a contiguous copy"),
            std::string::npos)
      << explain;
  ASSERT_EQ(logged->size(), 1u);  // once per reason
  EXPECT_NE((*logged)[0].find("skipping cudagraphs due to node 'conv'"),
            std::string::npos)
      << (*logged)[0];
}

TEST_F(CudaGraphTest, CpuScalarInputIsRefused) {
  // b is a 0-dim CPU tensor beside CUDA a: uploaded on every call.
  constexpr char kScaled[] = R"pb(
    name: "scaled"
    placeholders {
      name: "a"
      meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
    }
    placeholders {
      name: "b"
      meta { dtype: FLOAT32 }
    }
    nodes {
      name: "mul"
      target: "aten.mul.Tensor"
      args { ref: "a" }
      args { ref: "b" }
    }
    outputs { ref: "mul" }
  )pb";
  gj_function* fn = Load(kScaled, GJ_MODE_REDUCE_OVERHEAD);
  DeviceTensor a({4, 33}), b({}, kDLCPU), out({4, 33});
  a.Fill(1);
  b.values[0] = 2.5f;
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(fn, {&a, &b}, {&out})) {
      EXPECT_EQ(c.name, "cuLaunchKernel");
    }
  }
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("cuda graphs refused: input 1 ('b') is a CPU tensor"),
            std::string::npos)
      << explain;
}

TEST_F(CudaGraphTest, DefaultModeAndCpuCallsRecordNothing) {
  gj_function* plain = Load(kTwo, GJ_MODE_DEFAULT);
  DeviceTensor a({4, 33}), b({4, 33}), sa({4}), mb({4, 33});
  a.Fill(1);
  b.Fill(2);
  for (int i = 0; i < 3; ++i) {
    for (const RecordedCall& c : CallAndCheck(plain, {&a, &b}, {&sa, &mb})) {
      EXPECT_EQ(c.name, "cuLaunchKernel");
    }
  }
  EXPECT_EQ(Explain(plain).find("cuda graphs"), std::string::npos);
  gj_function* graphs = Load(kTwo, GJ_MODE_REDUCE_OVERHEAD);
  for (int i = 0; i < 3; ++i) CpuResults(graphs, {&a, &b});
  EXPECT_TRUE(RecordingCudaDriver::Take().empty());
  const gj_function_stats s = Stats(graphs);
  EXPECT_EQ(s.cuda_graphs_recorded + s.cuda_graph_replays, 0);
}

// A replayed kernel with an index check (embedding's gather) writes the
// entry's graph fault words, whose address the captured node holds: a
// synchronizing replay reports its own failure, an asynchronous one is
// reported by the function's next call, and the graph is never re-captured
// or patched for it. Another function of the same graph (sharing the loaded
// module) never sees those failures.
TEST_F(CudaGraphTest, ReplayedIndexCheckIsReportedByItsFunction) {
  constexpr char kLookup[] = R"pb(
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
  )pb";
  gj_function* fn = Load(kLookup, GJ_MODE_REDUCE_OVERHEAD);
  gj_function* other = Load(kLookup, GJ_MODE_DEFAULT);
  DeviceTensor w({10, 4}), out({5, 4});
  w.Fill(3);
  std::vector<int64_t> idx_values = {0, 2, 4, 6, 8};
  std::vector<int64_t> idx_shape = {5};
  DLTensor idx{};
  idx.data = idx_values.data();
  idx.device = {kDLCUDA, 0};
  idx.ndim = 1;
  idx.dtype = {kDLInt, 64, 1};
  idx.shape = idx_shape.data();
  auto call = [&](gj_function* f, bool sync) {
    const DLTensor* in[] = {&w.dl, &idx};
    const DLTensor* outs[] = {&out.dl};
    gj_call_options options;
    gj_call_options_init(&options);
    options.synchronize = sync ? 1 : 0;
    RecordingCudaDriver::Take();
    Err e{gj_function_call(f, in, 2, outs, 1, &options)};
    return e.message();
  };
  // 1: warm-up (plain launches, the call's own words); 2: capture, replay.
  ASSERT_EQ(call(fn, true), "");
  ASSERT_EQ(call(fn, true), "");
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(out.values[i * 4 + 1], w.values[idx_values[i] * 4 + 1]) << i;
  }
  // 3: a failing replay that synchronizes reports itself.
  idx_values[3] = 10;
  std::string e = call(fn, true);
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  EXPECT_NE(e.find("device-side check failed during this call"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("emb"), std::string::npos) << e;
  // 4: one that does not returns once launched...
  EXPECT_EQ(call(fn, false), "");
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  idx_values[3] = 1;
  // ...the other function of the same graph stays clean...
  EXPECT_EQ(call(other, true), "");
  // ...and this function's next call reports it, launching nothing.
  e = call(fn, false);
  EXPECT_NE(e.find("device-side check failed in an earlier call"),
            std::string::npos)
      << e;
  EXPECT_TRUE(RecordingCudaDriver::Take().empty());
  EXPECT_EQ(call(fn, true), "");
  EXPECT_THAT(RecordingCudaDriver::Names(RecordingCudaDriver::Take()),
              ElementsAre("cuGraphLaunch"));
  const gj_function_stats s = Stats(fn);
  EXPECT_EQ(s.cuda_graphs_recorded, 1);
  EXPECT_EQ(s.cuda_graph_replays, 4);
  EXPECT_EQ(s.cuda_graph_recaptures, 0) << Explain(fn);
}

// Each size key's graph writes fault words of its own (device_faults.h):
// replays of different keys in flight at once on different streams cannot
// report each other's failures. The words' address is the captured kernel's
// last launch value.
TEST_F(CudaGraphTest, EachSizeKeysGraphHasItsOwnFaultWords) {
  const std::string lookup = R"pb(
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
  )pb";
  gj_function* fn = Load(lookup, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC);
  DeviceTensor w({10, 4}), out({6, 4});
  w.Fill(3);
  std::vector<int64_t> idx_values = {0, 2, 4, 6, 8, 1};
  std::vector<int64_t> idx_shape = {5};
  DLTensor idx{};
  idx.data = idx_values.data();
  idx.device = {kDLCUDA, 0};
  idx.ndim = 1;
  idx.dtype = {kDLInt, 64, 1};
  idx.shape = idx_shape.data();
  auto captured_words = [&](int64_t n) {
    idx_shape[0] = n;
    out.shape[0] = n;
    std::vector<uint64_t> words;
    for (int call = 0; call < 2; ++call) {  // warm-up, then the capture
      const DLTensor* in[] = {&w.dl, &idx};
      const DLTensor* outs[] = {&out.dl};
      RecordingCudaDriver::Take();
      Err e{gj_function_call(fn, in, 2, outs, 1, nullptr)};
      EXPECT_EQ(e.e, nullptr) << e.message();
    }
    // A kernel with index checks takes its fault word's address last
    // (CudaBackend's DescribeLaunch).
    for (const RecordedCall& c : RecordingCudaDriver::Take()) {
      if (c.name == "cuLaunchKernel" && !c.params.empty()) {
        words.push_back(c.params.back());
      }
    }
    return words;
  };
  const std::vector<uint64_t> five = captured_words(5);
  const std::vector<uint64_t> six = captured_words(6);
  ASSERT_FALSE(five.empty());
  ASSERT_FALSE(six.empty());
  for (uint64_t v : five) {
    EXPECT_EQ(std::count(six.begin(), six.end(), v), 0) << v;
  }
  EXPECT_EQ(Stats(fn).cuda_graphs_recorded, 2);
}

TEST_F(CudaGraphTest, OptionsAreChecked) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(
      gj_graph_from_text(ctx_, kTwo, sizeof(kTwo) - 1, nullptr, &graph));
  graphs_.push_back(graph);
  gj_function_options options;
  gj_function_options_init(&options);
  EXPECT_EQ(options.mode, GJ_MODE_DEFAULT);
  EXPECT_EQ(options.max_graphs_per_entry, 0);
  gj_function* fn = nullptr;
  std::memset(&options.mode, 0x7f, sizeof(options.mode));
  Err bad_mode{gj_function_create(ctx_, graph, &options, &fn)};
  EXPECT_EQ(bad_mode.code(), GJ_INVALID_ARGUMENT);
  EXPECT_NE(bad_mode.message().find("options->mode"), std::string::npos);
  gj_function_options_init(&options);
  options.max_graphs_per_entry = -1;
  Err bad_limit{gj_function_create(ctx_, graph, &options, &fn)};
  EXPECT_EQ(bad_limit.code(), GJ_INVALID_ARGUMENT);
  EXPECT_NE(bad_limit.message().find("max_graphs_per_entry"),
            std::string::npos);
  EXPECT_EQ(fn, nullptr);
}

// CudaGraphSet's own bookkeeping, below the C API: the pool cap, one call
// holding the set at a time, and the counters.
TEST(CudaGraphSetTest, PoolOverTheCapAndABusySet) {
  absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<CudaContextScope> scope = (*device)->MakeCurrent();
  ASSERT_TRUE(scope.ok()) << scope.status();
  CudaGraphCounters counters;
  CudaGraphPolicy policy;
  policy.max_pool_bytes = 1024;
  policy.counters = &counters;
  {
    CudaGraphSet set(*device);
    const int64_t key[] = {7};
    std::optional<CudaGraphSet::Lease> lease = set.TryAcquire(key, policy);
    ASSERT_TRUE(lease.has_value());
    EXPECT_TRUE(lease->FirstCall());
    EXPECT_FALSE(lease->FirstCall());
    EXPECT_FALSE(set.TryAcquire(key, policy).has_value()) << "busy";
    absl::StatusOr<CUdeviceptr> pool = lease->Pool(512);
    ASSERT_TRUE(pool.ok()) << pool.status();
    EXPECT_EQ(*lease->Pool(512), *pool);  // the same memory every call
    EXPECT_EQ(counters.pool_bytes.load(), 512);
    absl::StatusOr<CUdeviceptr> over = lease->Pool(4096);
    EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(over.status().message().find("over the cap of 1.0 KiB"),
              std::string::npos)
        << over.status();
    set.Refuse(std::string(over.status().message()));
    lease.reset();
    EXPECT_NE(set.Describe().find("cuda graphs refused: its private pool "
                                  "would hold 4.0 KiB"),
              std::string::npos)
        << set.Describe();
  }
  EXPECT_EQ(counters.pool_bytes.load(), 0);  // freed with the set
}

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Before anything reads the driver table: every CUDA call in this binary
  // goes to the emulated device, through the recorder.
  if (!guardjit::EmulatedCudaDriver::Get().ok()) {
    std::fprintf(stderr, "the emulated CUDA driver needs the CUDA headers\n");
    return 1;
  }
  guardjit::CudaDriver::InstallForTesting(guardjit::RecordingCudaDriver::Get());
  guardjit::CublasLtApi::InstallForTesting(
      guardjit::EmulatedCublasLt::Get().value());
  return RUN_ALL_TESTS();
}
