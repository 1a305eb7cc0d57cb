// reduce-overhead mode's results through the C API on whichever device the
// binary gets: the emulated device here and in CI (main installs the
// emulated driver and cuBLASLt), GPU 0 through libcuda and libcublasLt with
// GJ_CUDA_REAL_DEVICE=1 (scripts/gpu_check.sh), where every test skips,
// naming why, without a usable GPU. Unlike cuda_graph_tests, which assert
// the emulated driver's exact call sequences over host memory, everything
// here is device memory the test allocates and copies through the driver
// table, so the same checks hold on a GPU: graph replays equal plain
// launches and the CPU for static and dynamic entries, with inputs at new
// addresses on every call, outputs into caller buffers and fresh memory, on
// two streams, and with eviction at max_graphs_per_entry. Each test also
// checks the replays happened, so a silent fall-back to plain launches
// fails it.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

bool RealDevice() {
  const char* real = std::getenv("GJ_CUDA_REAL_DEVICE");
  return real != nullptr && std::string(real) == "1";
}

// GPU 0 (or the emulated device), its primary context made current around
// each use.
const CudaDevice& Gpu() { return *CudaDevice::Get(0).value(); }

// float32 device memory of `shape` (contiguous), allocated, filled and read
// back through the driver table.
class Buffer {
 public:
  explicit Buffer(std::vector<int64_t> shape) : shape_(std::move(shape)) {
    count_ = 1;
    for (int64_t d : shape_) count_ *= static_cast<size_t>(d);
    auto scope = Gpu().MakeCurrent();
    EXPECT_TRUE(scope.ok()) << scope.status();
    EXPECT_EQ(Gpu().driver().cuMemAlloc(&ptr_, bytes()), CUDA_SUCCESS);
    EXPECT_EQ(Gpu().driver().cuMemsetD8(ptr_, 0, bytes()), CUDA_SUCCESS);
    dl_.data = reinterpret_cast<void*>(ptr_);
    dl_.device = {kDLCUDA, 0};
    dl_.ndim = static_cast<int>(shape_.size());
    dl_.dtype = {kDLFloat, 32, 1};
    dl_.shape = shape_.data();
  }
  ~Buffer() {
    auto scope = Gpu().MakeCurrent();
    if (scope.ok()) (void)Gpu().driver().cuMemFree(ptr_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  size_t bytes() const { return std::max<size_t>(count_, 1) * sizeof(float); }
  const DLTensor* dl() const { return &dl_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  // Uniform values in [-scale, scale), kept in host() as well.
  void Fill(uint32_t seed, float scale = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-scale, scale);
    host_.assign(count_, 0);
    for (float& v : host_) v = dist(rng);
    auto scope = Gpu().MakeCurrent();
    ASSERT_TRUE(scope.ok()) << scope.status();
    ASSERT_EQ(
        Gpu().driver().cuMemcpyHtoD(ptr_, host_.data(), count_ * sizeof(float)),
        CUDA_SUCCESS);
  }
  // The values last filled in (what a CPU reference reads).
  std::vector<float>& host() { return host_; }
  // The device's values now (the legacy stream drained first).
  std::vector<float> Read() const { return ReadDevice(ptr_, count_); }

  static std::vector<float> ReadDevice(CUdeviceptr ptr, size_t count) {
    std::vector<float> values(count);
    auto scope = Gpu().MakeCurrent();
    EXPECT_TRUE(scope.ok()) << scope.status();
    EXPECT_EQ(Gpu().driver().cuStreamSynchronize(nullptr), CUDA_SUCCESS);
    EXPECT_EQ(
        Gpu().driver().cuMemcpyDtoH(values.data(), ptr, count * sizeof(float)),
        CUDA_SUCCESS);
    return values;
  }

 private:
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  CUdeviceptr ptr_ = 0;
  DLTensor dl_{};
  std::vector<float> host_;
};

// Graph text: float32 placeholders and nodes.
std::string Placeholder(const std::string& name,
                        const std::vector<int64_t>& sizes) {
  std::string meta;
  for (int64_t s : sizes) absl::StrAppend(&meta, " sizes: ", s);
  return absl::StrCat("placeholders { name: \"", name,
                      "\" meta { dtype: FLOAT32", meta, " } }\n");
}
std::string Node(const std::string& name, const std::string& target,
                 const std::string& args) {
  return absl::StrCat("nodes { name: \"", name, "\" target: \"", target, "\" ",
                      args, " }\n");
}
std::string Ref(const std::string& name) {
  return absl::StrCat("args { ref: \"", name, "\" }");
}

// Several fused kernels over [rows, 64]: a pointwise chain, a softmax over
// the rows, layer_norm without affine parameters, and a residual.
std::string PointwiseSoftmaxLayerNorm(int64_t rows) {
  std::string t = "name: \"block\"\n" + Placeholder("x", {rows, 64});
  t += Node("m", "aten.mul.Tensor", Ref("x") + " args { f: 1.5 }");
  t += Node("a", "aten.add.Tensor", Ref("m") + " args { f: 0.25 }");
  t += Node("s", "aten._softmax.default",
            Ref("a") + " args { i: -1 } args { b: false }");
  t += Node("ln", "aten.native_layer_norm.default",
            Ref("x") +
                " args { list { items { i: 64 } } } args { none: {} }"
                " args { none: {} } args { f: 1e-5 }");
  t += Node("y", "getitem", Ref("ln") + " args { i: 0 }");
  t += Node("r", "aten.add.Tensor", Ref("s") + " " + Ref("y"));
  t += Node("o", "aten.tanh.default", Ref("r"));
  t += "outputs { ref: \"o\" }\n";
  return t;
}

// nn.Linear layers as torch.compile lowers them for inference (addmm of the
// bias, the activations and the permuted weight, relu between), the
// weights and biases inputs: the products run on cuBLASLt, captured into
// the graph as extern calls.
std::string Mlp(const std::vector<int64_t>& dims, int64_t batch) {
  std::string t = "name: \"mlp\"\n" + Placeholder("x", {batch, dims[0]});
  const size_t layers = dims.size() - 1;
  for (size_t i = 0; i < layers; ++i) {
    t += Placeholder(absl::StrCat("w", i), {dims[i + 1], dims[i]});
    t += Placeholder(absl::StrCat("b", i), {dims[i + 1]});
  }
  std::string h = "x";
  for (size_t i = 0; i < layers; ++i) {
    const std::string w = absl::StrCat("w", i), b = absl::StrCat("b", i);
    const std::string tr = absl::StrCat("t", i), fc = absl::StrCat("fc", i);
    t += Node(tr, "aten.permute.default",
              Ref(w) + " args { list { items { i: 1 } items { i: 0 } } }");
    t += Node(fc, "aten.addmm.default", Ref(b) + " " + Ref(h) + " " + Ref(tr));
    h = fc;
    if (i + 1 < layers) {
      const std::string relu = absl::StrCat("relu", i);
      t += Node(relu, "aten.relu.default", Ref(h));
      h = relu;
    }
  }
  t += absl::StrCat("outputs { ref: \"", h, "\" }\n");
  return t;
}

class DeviceReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
    if (!device.ok()) {
      GTEST_SKIP() << "no usable GPU: " << device.status();
    }
    ASSERT_GJ_OK(gj_context_create(nullptr, &ctx_));
  }
  void TearDown() override {
    for (gj_function* f : functions_) gj_function_destroy(f);
    for (gj_graph* g : graphs_) gj_graph_destroy(g);
    gj_context_destroy(ctx_);
  }

  gj_function* Load(const std::string& text, gj_function_mode mode,
                    gj_dynamic_mode dynamic = GJ_DYNAMIC_STATIC,
                    int32_t max_graphs_per_entry = 0) {
    gj_graph* graph = nullptr;
    Err e{gj_graph_from_text(ctx_, text.data(), text.size(), nullptr, &graph)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    graphs_.push_back(graph);
    gj_function_options options;
    gj_function_options_init(&options);
    options.mode = mode;
    options.dynamic = dynamic;
    if (max_graphs_per_entry > 0) {
      options.max_graphs_per_entry = max_graphs_per_entry;
    }
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

  // `fn` on host copies of `inputs`' values: the reference (the CPU entry).
  std::vector<float> Cpu(gj_function* fn, std::vector<Buffer*> inputs) {
    std::vector<DLTensor> cpu;
    for (Buffer* b : inputs) {
      DLTensor c = *b->dl();
      c.data = b->host().data();
      c.device = {kDLCPU, 0};
      cpu.push_back(c);
    }
    std::vector<const DLTensor*> ptrs;
    for (DLTensor& c : cpu) ptrs.push_back(&c);
    DLManagedTensor* out = nullptr;
    Err e{
        gj_function_call_alloc(fn, ptrs.data(), ptrs.size(), nullptr, &out, 1)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    if (out == nullptr) return {};
    int64_t n = 1;
    for (int d = 0; d < out->dl_tensor.ndim; ++d) n *= out->dl_tensor.shape[d];
    const float* p = static_cast<const float*>(out->dl_tensor.data);
    std::vector<float> values(p, p + n);
    gj_tensor_release(out);
    return values;
  }

  // `fn` on device `inputs` on `stream`: into `output` when given, else into
  // memory the library allocates; the values read back once the stream is
  // done.
  std::vector<float> OnDevice(gj_function* fn, std::vector<Buffer*> inputs,
                              Buffer* output, CUstream stream = nullptr) {
    std::vector<const DLTensor*> in;
    for (Buffer* b : inputs) in.push_back(b->dl());
    gj_call_options options;
    gj_call_options_init(&options);
    options.stream = stream;
    options.synchronize = 1;
    if (output != nullptr) {
      const DLTensor* out[] = {output->dl()};
      Err e{gj_function_call(fn, in.data(), in.size(), out, 1, &options)};
      EXPECT_EQ(e.e, nullptr) << e.message();
      return output->Read();
    }
    DLManagedTensor* out = nullptr;
    Err e{gj_function_call_alloc(fn, in.data(), in.size(), &options, &out, 1)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    if (out == nullptr) return {};
    EXPECT_EQ(out->dl_tensor.device.device_type, kDLCUDA);
    int64_t n = 1;
    for (int d = 0; d < out->dl_tensor.ndim; ++d) n *= out->dl_tensor.shape[d];
    std::vector<float> values =
        Buffer::ReadDevice(reinterpret_cast<CUdeviceptr>(out->dl_tensor.data) +
                               out->dl_tensor.byte_offset,
                           static_cast<size_t>(n));
    gj_tensor_release(out);
    return values;
  }

  gj_context* ctx_ = nullptr;
  std::vector<gj_graph*> graphs_;
  std::vector<gj_function*> functions_;
};

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  ASSERT_FALSE(got.empty()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance * (1 + std::fabs(want[i])))
        << what << ", element " << i;
  }
}

// A static entry of several fused kernels: every call brings a new input
// and, on odd calls, a new caller buffer; replays match plain launches and
// the CPU, and the moves were patched, not re-captured.
TEST_F(DeviceReplayTest, StaticEntryWithMovingInputsAndOutputs) {
  const std::string text = PointwiseSoftmaxLayerNorm(48);
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD);
  gj_function* plain = Load(text, GJ_MODE_DEFAULT);
  const int calls = 6;
  // Every call's tensors stay allocated to the end: each call brings new
  // addresses (a freed buffer's address could come back).
  std::vector<std::unique_ptr<Buffer>> keep;
  for (int call = 0; call < calls; ++call) {
    Buffer& x = *keep.emplace_back(new Buffer({48, 64}));
    x.Fill(static_cast<uint32_t>(10 + call), 2);
    Buffer& y = *keep.emplace_back(new Buffer({48, 64}));
    const std::string what = absl::StrCat("call ", call);
    const std::vector<float> cpu = Cpu(graphed, {&x});
    ExpectNear(OnDevice(plain, {&x}, nullptr), cpu, 3e-5, what + " (plain)");
    ExpectNear(OnDevice(graphed, {&x}, call % 2 == 1 ? &y : nullptr), cpu, 3e-5,
               what + " (replay)");
  }
  const gj_function_stats s = Stats(graphed);
  EXPECT_EQ(s.cuda_graphs_recorded, 1) << Explain(graphed);
  EXPECT_EQ(s.cuda_graph_replays, calls - 1) << Explain(graphed);
  EXPECT_GT(s.cuda_graph_pointer_updates, 0);
  EXPECT_EQ(s.cuda_graph_recaptures, 0) << Explain(graphed);
  EXPECT_EQ(Stats(plain).cuda_graph_replays, 0);
}

// An MLP whose products run on cuBLASLt inside the graph: a new activation
// on every call, a weight changed in place (the replay reads the new
// values), then a weight moved; outputs into caller buffers and fresh
// memory.
TEST_F(DeviceReplayTest, CublasLtMlpWithMovingOperands) {
  const std::vector<int64_t> dims = {96, 128, 128, 10};
  const std::string text = Mlp(dims, 4);
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD);
  gj_function* plain = Load(text, GJ_MODE_DEFAULT);
  std::vector<std::unique_ptr<Buffer>> weights;
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    weights.push_back(
        std::make_unique<Buffer>(std::vector<int64_t>{dims[i + 1], dims[i]}));
    weights.back()->Fill(static_cast<uint32_t>(100 + i), 0.2f);
    weights.push_back(
        std::make_unique<Buffer>(std::vector<int64_t>{dims[i + 1]}));
    weights.back()->Fill(static_cast<uint32_t>(200 + i), 0.5f);
  }
  const int calls = 8;
  std::vector<std::unique_ptr<Buffer>> keep;  // new addresses every call
  for (int call = 0; call < calls; ++call) {
    if (call == 3) weights[0]->Fill(300, 0.2f);  // in place
    if (call == 5) {                             // moved
      auto moved = std::make_unique<Buffer>(weights[2]->shape());
      moved->Fill(301, 0.2f);
      keep.push_back(std::move(weights[2]));
      weights[2] = std::move(moved);
    }
    Buffer& x = *keep.emplace_back(new Buffer({4, dims[0]}));
    x.Fill(static_cast<uint32_t>(call));
    Buffer& y = *keep.emplace_back(new Buffer({4, dims.back()}));
    std::vector<Buffer*> in = {&x};
    for (auto& w : weights) in.push_back(w.get());
    const std::string what = absl::StrCat("call ", call);
    const std::vector<float> cpu = Cpu(graphed, in);
    // TF32 is off (cuBLASLt computes float32 in float32), so products
    // differ from BLAS by rounding order only.
    ExpectNear(OnDevice(plain, in, nullptr), cpu, 1e-4, what + " (plain)");
    ExpectNear(OnDevice(graphed, in, call % 2 == 1 ? &y : nullptr), cpu, 1e-4,
               what + " (replay)");
  }
  const gj_function_stats s = Stats(graphed);
  EXPECT_GE(s.cuda_graphs_recorded, 1);
  EXPECT_EQ(s.cuda_graph_replays, calls - 1) << Explain(graphed);
  EXPECT_GT(s.cuda_graph_pointer_updates, 0);
  EXPECT_THAT(Explain(graphed), HasSubstr("3 cuBLASLt steps captured"));
  EXPECT_THAT(Explain(graphed), Not(HasSubstr("cuda graphs refused")));
}

// A dynamic entry records one graph per batch size; with room for two, a
// third size evicts the least recently replayed, and every result still
// matches the CPU.
TEST_F(DeviceReplayTest, DynamicEntryGraphsPerSizeAndEviction) {
  const std::string text = PointwiseSoftmaxLayerNorm(8);
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD, GJ_DYNAMIC_DYNAMIC,
                              /*max_graphs_per_entry=*/2);
  const std::vector<int64_t> batches = {8, 5, 8, 5, 8, 13, 13, 13, 8, 8};
  uint32_t seed = 40;
  std::vector<std::unique_ptr<Buffer>> keep;  // new addresses every call
  for (int64_t rows : batches) {
    Buffer& x = *keep.emplace_back(new Buffer({rows, 64}));
    x.Fill(seed++, 2);
    ExpectNear(OnDevice(graphed, {&x}, nullptr), Cpu(graphed, {&x}), 3e-5,
               absl::StrCat(rows, " rows"));
  }
  const gj_function_stats s = Stats(graphed);
  // Each key warms up, records on its second call and replays on later
  // ones at new addresses; 13 records with 8 and 5 kept, evicting 5 (the
  // least recently replayed).
  EXPECT_EQ(s.cuda_graph_evictions, 1) << Explain(graphed);
  EXPECT_EQ(s.cuda_graph_replays, 7) << Explain(graphed);
  EXPECT_GT(s.cuda_graph_pointer_updates, 0) << Explain(graphed);
}

// Replays alternate between two streams the test creates: a graph recorded
// during a call on one replays on the other.
TEST_F(DeviceReplayTest, ReplaysOnTwoStreams) {
  const std::string text = PointwiseSoftmaxLayerNorm(32);
  gj_function* graphed = Load(text, GJ_MODE_REDUCE_OVERHEAD);
  CUstream streams[2] = {nullptr, nullptr};
  {
    auto scope = Gpu().MakeCurrent();
    ASSERT_TRUE(scope.ok()) << scope.status();
    for (CUstream& s : streams) {
      ASSERT_EQ(Gpu().driver().cuStreamCreate(&s, CU_STREAM_NON_BLOCKING),
                CUDA_SUCCESS);
    }
  }
  const int calls = 6;
  std::vector<std::unique_ptr<Buffer>> keep;  // new addresses every call
  for (int call = 0; call < calls; ++call) {
    Buffer& x = *keep.emplace_back(new Buffer({32, 64}));
    x.Fill(static_cast<uint32_t>(70 + call), 2);
    Buffer& y = *keep.emplace_back(new Buffer({32, 64}));
    ExpectNear(OnDevice(graphed, {&x}, &y, streams[call % 2]),
               Cpu(graphed, {&x}), 3e-5,
               absl::StrCat("call ", call, " on stream ", call % 2));
  }
  EXPECT_EQ(Stats(graphed).cuda_graph_replays, calls - 1) << Explain(graphed);
  auto scope = Gpu().MakeCurrent();
  ASSERT_TRUE(scope.ok()) << scope.status();
  for (CUstream s : streams) {
    EXPECT_EQ(Gpu().driver().cuStreamDestroy(s), CUDA_SUCCESS);
  }
}

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!guardjit::RealDevice()) {
    // The emulated device, and cuBLASLt over its memory.
    guardjit::CudaDriver::InstallForTesting(
        guardjit::EmulatedCudaDriver::Get());
    guardjit::CublasLtApi::InstallForTesting(guardjit::EmulatedCublasLt::Get());
  }
  return RUN_ALL_TESTS();
}
