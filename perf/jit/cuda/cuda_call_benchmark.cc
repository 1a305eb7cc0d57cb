// CUDA calls through the public C API, each against a baseline timed on the
// same device in the same run (issue #14's targets). Needs a GPU: every
// benchmark skips with the driver's reason where there is none.
//   BM_CudaPointwiseChain/N  the 8-op chain (a*1.5+2, relu, v*v, -1, *0.5,
//       +a, clamp(max=3)) over N float32, one call + stream sync per
//       iteration; vs_memcpy = time of a cuMemcpyDtoD of the same bytes read
//       and written (8N) / time per call (target >= 0.90)
//   BM_CudaSoftmax, BM_CudaLayerNorm   [8192, 4096] float32 rows, the same
//       ratio (target >= 0.80)
//   BM_CudaHostTimePerCall   host time of a cached call of a 5-kernel entry
//       (enqueue only; the stream is drained every 256 calls): target <= 10 us
//   BM_CudaGraphReplayVsLaunches  a ~20-kernel entry on [1, 256] replayed
//       as a CUDA graph (reduce-overhead mode) vs plain launches, end to end
//       per call and host time per replay; speedup target >= 3, host <= 5 us
//   BM_CudaGraphMlpReplayVsLaunches  issue #15's MLP case: 10 linear layers
//       (addmm + relu, the weights call inputs) at batch 1, width 256: the
//       products run on cuBLASLt and are captured into the graph; the same
//       counters (speedup target >= 3, host <= 5 us) and patch_us per
//       changed input (x moves on every other call: staged through the
//       graph's pool, a memcpy node patch per move)
//   BM_CudaMatmulBiasRelu    mm 4096^3 + bias + relu (addmm + relu, fused
//       into cuBLASLt's RELU_BIAS epilogue) vs the same cuBLASLt call made
//       directly: vs_cublaslt (target >= 0.90)
// Run: ./build/perf/cuda_call_benchmark --benchmark_repetitions=5
// GJ_CUDA_EMULATE=1 runs them on the emulated device (a smoke test of the
// graphs and the call path here: the numbers mean nothing; use
// --benchmark_min_time=1x, each launch takes a while).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "guardjit/guardjit.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"

namespace guardjit {
namespace {

// Set by main for GJ_CUDA_EMULATE=1: shapes shrink to what the emulator
// runs in seconds.
bool g_emulated = false;
int64_t Size(int64_t real, int64_t emulated) {
  return g_emulated ? emulated : real;
}

// The device, its primary context current for the benchmark's thread.
struct Device {
  const CudaDevice* device = nullptr;
  const CudaDriver* driver = nullptr;
  std::string error;
};

const Device& GetDevice() {
  static const Device* const kDevice = [] {
    auto* d = new Device;
    absl::StatusOr<const CudaDevice*> device = CudaDevice::Get(0);
    if (!device.ok()) {
      d->error = std::string(device.status().message());
      return d;
    }
    // The buffers, events and copies below are driver calls made by the
    // benchmark itself, outside guardjit's calls (which make the primary
    // context current for their own scope): they need it current on the
    // benchmark thread too, or every cuMemAlloc fails with
    // CUDA_ERROR_INVALID_CONTEXT on a real GPU.
    absl::StatusOr<CUcontext> context = (*device)->PrimaryContext();
    if (!context.ok()) {
      d->error = std::string(context.status().message());
      return d;
    }
    if ((*device)->driver().cuCtxSetCurrent(*context) != CUDA_SUCCESS) {
      d->error = "cuCtxSetCurrent on device 0's primary context failed";
      return d;
    }
    d->device = *device;
    d->driver = &(*device)->driver();
    return d;
  }();
  return *kDevice;
}

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer(const CudaDriver& driver, size_t n) : bytes(n) {
    if (driver.cuMemAlloc(&ptr, n) != CUDA_SUCCESS) {
      std::fprintf(stderr, "cuMemAlloc of %zu bytes failed\n", n);
      std::abort();
    }
    (void)driver.cuMemsetD8(ptr, 0, n);
  }
};

DLTensor Cuda(const DeviceBuffer& b, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = reinterpret_cast<void*>(b.ptr);
  t.device = {kDLCUDA, 0};
  t.ndim = static_cast<int>(shape.size());
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape.data();
  return t;
}

// Median milliseconds of `runs` device-to-device copies of `bytes`.
double MemcpyMs(const Device& d, const DeviceBuffer& src,
                const DeviceBuffer& dst, int runs = 10) {
  CUevent start = nullptr, stop = nullptr;
  d.driver->cuEventCreate(&start, 0);
  d.driver->cuEventCreate(&stop, 0);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    d.driver->cuEventRecord(start, nullptr);
    d.driver->cuMemcpyDtoDAsync(dst.ptr, src.ptr, src.bytes, nullptr);
    d.driver->cuEventRecord(stop, nullptr);
    d.driver->cuEventSynchronize(stop);
    float t = 0;
    d.driver->cuEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  d.driver->cuEventDestroy(start);
  d.driver->cuEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Function {
  gj_context* ctx = nullptr;
  gj_graph* graph = nullptr;
  gj_function* fn = nullptr;
  explicit Function(const std::string& text,
                    gj_function_mode mode = GJ_MODE_DEFAULT) {
    gj_error_destroy(gj_context_create(nullptr, &ctx));
    gj_error_destroy(
        gj_graph_from_text(ctx, text.data(), text.size(), nullptr, &graph));
    gj_function_options options;
    gj_function_options_init(&options);
    options.mode = mode;
    gj_error_destroy(gj_function_create(ctx, graph, &options, &fn));
  }
  ~Function() {
    gj_function_destroy(fn);
    gj_graph_destroy(graph);
    gj_context_destroy(ctx);
  }
};

std::string Placeholder(const char* name, const std::vector<int64_t>& sizes) {
  std::string meta;
  for (int64_t s : sizes) absl::StrAppend(&meta, " sizes: ", s);
  return absl::StrCat("placeholders { name: \"", name,
                      "\" meta { dtype: FLOAT32", meta, " } }\n");
}

std::string Node(const char* name, const char* target,
                 const std::string& args) {
  return absl::StrCat("nodes { name: \"", name, "\" target: \"", target, "\" ",
                      args, " }\n");
}

// The first call compiles (NVRTC, module load, cuBLASLt heuristics): made
// before the timed loop, so the loop times cache hits only. Without it,
// Google Benchmark's iteration estimate could take the compile as one
// iteration of a repetition (seen on an H200: a softmax repetition of one
// 224 ms iteration against 0.11 ms per hit). False after SkipWithError.
bool WarmUp(benchmark::State& state, Function& f,
            const std::vector<const DLTensor*>& inputs,
            const std::vector<const DLTensor*>& outputs) {
  gj_call_options options;
  gj_call_options_init(&options);
  options.synchronize = 1;
  gj_error* e = gj_function_call(f.fn, inputs.data(), inputs.size(),
                                 outputs.data(), outputs.size(), &options);
  if (e == nullptr) return true;
  state.SkipWithError(gj_error_message(e));
  gj_error_destroy(e);
  return false;
}

// Times `fn` on `inputs` into `outputs`, synchronizing each call, and sets
// vs_memcpy against a copy of `baseline_bytes` (read + write counted once
// each, as the kernel's traffic is).
void RunSynchronized(benchmark::State& state, Function& f,
                     std::vector<const DLTensor*> inputs,
                     std::vector<const DLTensor*> outputs,
                     int64_t baseline_bytes) {
  const Device& d = GetDevice();
  DeviceBuffer src(*d.driver, baseline_bytes / 2),
      dst(*d.driver, baseline_bytes / 2);
  const double memcpy_ms = MemcpyMs(d, src, dst);
  if (!WarmUp(state, f, inputs, outputs)) return;
  gj_call_options options;
  gj_call_options_init(&options);
  options.synchronize = 1;
  for (auto _ : state) {
    gj_error* e = gj_function_call(f.fn, inputs.data(), inputs.size(),
                                   outputs.data(), outputs.size(), &options);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * baseline_bytes);
  state.counters["memcpy_ms"] = memcpy_ms;
  state.counters["vs_memcpy"] = benchmark::Counter(
      memcpy_ms * 1e-3 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_CudaPointwiseChain(benchmark::State& state) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  const int64_t n = Size(state.range(0), 4096);
  std::string text = "name: \"chain\"\n" + Placeholder("a", {n});
  text += Node("m0", "aten.mul.Tensor", "args { ref: \"a\" } args { f: 1.5 }");
  text += Node("a0", "aten.add.Tensor", "args { ref: \"m0\" } args { f: 2 }");
  text += Node("r", "aten.relu.default", "args { ref: \"a0\" }");
  text +=
      Node("sq", "aten.mul.Tensor", "args { ref: \"r\" } args { ref: \"r\" }");
  text += Node("s1", "aten.sub.Tensor", "args { ref: \"sq\" } args { f: 1 }");
  text += Node("h", "aten.mul.Tensor", "args { ref: \"s1\" } args { f: 0.5 }");
  text +=
      Node("p", "aten.add.Tensor", "args { ref: \"h\" } args { ref: \"a\" }");
  text += Node("c", "aten.clamp.default",
               "args { ref: \"p\" } args { none {} } args { f: 3 }");
  text += "outputs { ref: \"c\" }\n";
  Function f(text);
  std::vector<int64_t> shape = {n};
  DeviceBuffer a(*d.driver, n * 4), out(*d.driver, n * 4);
  DLTensor ta = Cuda(a, shape), tout = Cuda(out, shape);
  RunSynchronized(state, f, {&ta}, {&tout}, 8 * n);
}
BENCHMARK(BM_CudaPointwiseChain)->Arg(int64_t{1} << 26)->UseRealTime();

void RowBenchmark(benchmark::State& state, bool layer_norm) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  const int64_t rows = Size(8192, 16), cols = Size(4096, 512);
  std::string text = "name: \"rows\"\n" + Placeholder("x", {rows, cols});
  if (layer_norm) {
    text +=
        Node("ln", "aten.native_layer_norm.default",
             absl::StrCat("args { ref: \"x\" } args { list { items { i: ", cols,
                          " } } } args { none {} } args { none {} } "
                          "args { f: 1e-05 }"));
    text += Node("y", "getitem", "args { ref: \"ln\" } args { i: 0 }");
  } else {
    text += Node("y", "aten._softmax.default",
                 "args { ref: \"x\" } args { i: -1 } args { b: false }");
  }
  text += "outputs { ref: \"y\" }\n";
  Function f(text);
  std::vector<int64_t> shape = {rows, cols};
  DeviceBuffer x(*d.driver, rows * cols * 4), y(*d.driver, rows * cols * 4);
  DLTensor tx = Cuda(x, shape), ty = Cuda(y, shape);
  RunSynchronized(state, f, {&tx}, {&ty}, 8 * rows * cols);
}
void BM_CudaSoftmax(benchmark::State& state) { RowBenchmark(state, false); }
void BM_CudaLayerNorm(benchmark::State& state) { RowBenchmark(state, true); }
BENCHMARK(BM_CudaSoftmax)->UseRealTime();
BENCHMARK(BM_CudaLayerNorm)->UseRealTime();

// `n` rounds of x - amax(x, 1, keepdim) over [rows, cols]: each reduction
// ends a fusion group, so about one kernel per round.
std::string ReductionChain(int n, int64_t rows, int64_t cols) {
  std::string text = "name: \"chain\"\n" + Placeholder("x", {rows, cols});
  std::string prev = "x";
  for (int k = 0; k < n; ++k) {
    const std::string sum = absl::StrCat("s", k);
    const std::string next = absl::StrCat("k", k);
    text += Node(sum.c_str(), "aten.amax.default",
                 absl::StrCat("args { ref: \"", prev,
                              "\" } args { list { items { i: 1 } } } args { b: "
                              "true }"));
    text += Node(next.c_str(), "aten.sub.Tensor",
                 absl::StrCat("args { ref: \"", prev, "\" } args { ref: \"",
                              sum, "\" }"));
    prev = next;
  }
  return text + absl::StrCat("outputs { ref: \"", prev, "\" }\n");
}

void BM_CudaHostTimePerCall(benchmark::State& state) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  // Five kernels.
  Function f(ReductionChain(5, 64, 256));
  std::vector<int64_t> shape = {64, 256};
  DeviceBuffer x(*d.driver, 64 * 256 * 4), y(*d.driver, 64 * 256 * 4);
  DLTensor tx = Cuda(x, shape), ty = Cuda(y, shape);
  const DLTensor* in[] = {&tx};
  const DLTensor* out[] = {&ty};
  if (!WarmUp(state, f, {&tx}, {&ty})) return;
  int64_t calls = 0;
  for (auto _ : state) {
    gj_error* e = gj_function_call(f.fn, in, 1, out, 1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
    if (++calls % 256 == 0) {
      state.PauseTiming();
      (void)d.driver->cuStreamSynchronize(nullptr);
      state.ResumeTiming();
    }
  }
  (void)d.driver->cuStreamSynchronize(nullptr);
}
BENCHMARK(BM_CudaHostTimePerCall);

// Microseconds per call of `f` over `calls` calls (each waiting for the
// stream when `sync`), inputs alternating between `in` and `in2` when given.
double MicrosPerCall(const Device& d, Function& f, const DLTensor* in,
                     const DLTensor* in2, const DLTensor* out, int calls,
                     bool sync) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    const DLTensor* x[] = {in2 != nullptr && i % 2 == 1 ? in2 : in};
    const DLTensor* y[] = {out};
    gj_error_destroy(gj_function_call(f.fn, x, 1, y, 1, nullptr));
    if (sync) (void)d.driver->cuStreamSynchronize(nullptr);
  }
  (void)d.driver->cuStreamSynchronize(nullptr);
  const std::chrono::duration<double, std::micro> took =
      std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

// Issue #15's target: a 20-kernel entry on small tensors, replayed as a CUDA
// graph (reduce-overhead mode) vs plain launches, in the same run. Times
// the replay end to end (call + stream sync) per iteration; counters:
//   plain_us, replay_us    end to end per call (plain measured first)
//   speedup                plain_us / replay_us (target >= 3)
//   replay_host_us         enqueue only, per replay (target <= 5)
//   patch_us               extra host time per replay whose input moved
void BM_CudaGraphReplayVsLaunches(benchmark::State& state) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  const int rounds = static_cast<int>(Size(20, 4));
  const std::string text = ReductionChain(rounds, 1, 256);
  Function plain(text), graphs(text, GJ_MODE_REDUCE_OVERHEAD);
  std::vector<int64_t> shape = {1, 256};
  DeviceBuffer x(*d.driver, 256 * 4), x2(*d.driver, 256 * 4),
      y(*d.driver, 256 * 4);
  DLTensor tx = Cuda(x, shape), tx2 = Cuda(x2, shape), ty = Cuda(y, shape);
  const int calls = static_cast<int>(Size(2000, 8));
  // Warm-up and capture.
  MicrosPerCall(d, plain, &tx, nullptr, &ty, 2, true);
  MicrosPerCall(d, graphs, &tx, nullptr, &ty, 2, true);
  const double plain_us =
      MicrosPerCall(d, plain, &tx, nullptr, &ty, calls, true);
  const double host_us =
      MicrosPerCall(d, graphs, &tx, nullptr, &ty, calls, false);
  const double moving_us =
      MicrosPerCall(d, graphs, &tx, &tx2, &ty, calls, false);
  const DLTensor* in[] = {&tx};
  const DLTensor* out[] = {&ty};
  double replay_total_us = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    gj_error* e = gj_function_call(graphs.fn, in, 1, out, 1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
    (void)d.driver->cuStreamSynchronize(nullptr);
    const std::chrono::duration<double, std::micro> took =
        std::chrono::steady_clock::now() - start;
    replay_total_us += took.count();
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  gj_error_destroy(gj_function_get_stats(graphs.fn, &stats));
  if (stats.cuda_graph_replays == 0) {
    state.SkipWithError("reduce-overhead mode recorded no graph");
  }
  const double replay_us =
      replay_total_us /
      static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["plain_us"] = plain_us;
  state.counters["replay_us"] = replay_us;
  state.counters["speedup"] = plain_us / replay_us;
  state.counters["replay_host_us"] = host_us;
  state.counters["patch_us"] = moving_us - host_us;
  state.counters["rounds"] = static_cast<double>(rounds);  // ~1 kernel each
}
BENCHMARK(BM_CudaGraphReplayVsLaunches)->UseRealTime();

// An MLP of `layers` nn.Linear layers of `width` at `batch`, as torch.compile
// lowers them for inference (addmm(b, h, permute(w)), relu between them);
// the weights and biases are inputs: x, w0, b0, w1, b1, ...
std::string LinearChain(int layers, int64_t batch, int64_t width) {
  auto tensor = [](const std::string& name, std::vector<int64_t> sizes) {
    std::string meta;
    for (int64_t v : sizes) absl::StrAppend(&meta, " sizes: ", v);
    return absl::StrCat("placeholders { name: \"", name,
                        "\" meta { dtype: FLOAT32", meta, " } }\n");
  };
  std::string text = "name: \"linear_chain\"\n" + tensor("x", {batch, width});
  for (int i = 0; i < layers; ++i) {
    text += tensor(absl::StrCat("w", i), {width, width});
    text += tensor(absl::StrCat("b", i), {width});
  }
  std::string h = "x";
  for (int i = 0; i < layers; ++i) {
    absl::StrAppend(&text, "nodes { name: \"t", i,
                    "\" target: \"aten.permute.default\" args { ref: \"w", i,
                    "\" } args { list { items { i: 1 } items { i: 0 } } } }\n");
    absl::StrAppend(&text, "nodes { name: \"fc", i,
                    "\" target: \"aten.addmm.default\" args { ref: \"b", i,
                    "\" } args { ref: \"", h, "\" } args { ref: \"t", i,
                    "\" } }\n");
    h = absl::StrCat("fc", i);
    if (i + 1 < layers) {
      absl::StrAppend(&text, "nodes { name: \"relu", i,
                      "\" target: \"aten.relu.default\" args { ref: \"", h,
                      "\" } }\n");
      h = absl::StrCat("relu", i);
    }
  }
  absl::StrAppend(&text, "outputs { ref: \"", h, "\" }\n");
  return text;
}

// Microseconds per call of `f` on `inputs` into `out`; with `moved_x`, odd
// calls read x from there instead (a new address every other call).
double MicrosPerCallOf(const Device& d, Function& f,
                       std::vector<const DLTensor*> inputs,
                       const DLTensor* moved_x, const DLTensor* out, int calls,
                       bool sync) {
  const DLTensor* x = inputs[0];
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    inputs[0] = moved_x != nullptr && i % 2 == 1 ? moved_x : x;
    const DLTensor* y[] = {out};
    gj_error_destroy(
        gj_function_call(f.fn, inputs.data(), inputs.size(), y, 1, nullptr));
    if (sync) (void)d.driver->cuStreamSynchronize(nullptr);
  }
  (void)d.driver->cuStreamSynchronize(nullptr);
  const std::chrono::duration<double, std::micro> took =
      std::chrono::steady_clock::now() - start;
  return took.count() / calls;
}

// Issue #15's benchmark case: an MLP of 10 layers at batch 1 (each layer one
// cuBLASLt product with its bias and relu inside it), replayed as a CUDA
// graph vs plain launches. Counters as BM_CudaGraphReplayVsLaunches's, with
//   patch_us      extra host time per replay whose input x moved (x is
//                 staged through the graph's pool: one memcpy node patch)
//   recaptures    re-captures over the run (1: x becoming staged)
void BM_CudaGraphMlpReplayVsLaunches(benchmark::State& state) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  const int layers = 10;
  const int64_t width = Size(256, 16);
  const std::string text = LinearChain(layers, 1, width);
  Function plain(text), graphs(text, GJ_MODE_REDUCE_OVERHEAD);
  if (plain.fn == nullptr || graphs.fn == nullptr) {
    return state.SkipWithError("the MLP did not compile");
  }
  const size_t row = static_cast<size_t>(width) * 4;
  std::vector<int64_t> row_shape = {1, width}, bias_shape = {width},
                       weight_shape = {width, width};
  DeviceBuffer x(*d.driver, row), x2(*d.driver, row), y(*d.driver, row);
  std::vector<std::unique_ptr<DeviceBuffer>> params;
  std::vector<DLTensor> param_tensors;
  param_tensors.reserve(2 * layers);
  for (int i = 0; i < layers; ++i) {
    params.push_back(std::make_unique<DeviceBuffer>(*d.driver, row * width));
    param_tensors.push_back(Cuda(*params.back(), weight_shape));
    params.push_back(std::make_unique<DeviceBuffer>(*d.driver, row));
    param_tensors.push_back(Cuda(*params.back(), bias_shape));
  }
  DLTensor tx = Cuda(x, row_shape), tx2 = Cuda(x2, row_shape),
           ty = Cuda(y, row_shape);
  std::vector<const DLTensor*> inputs = {&tx};
  for (const DLTensor& t : param_tensors) inputs.push_back(&t);
  const int calls = static_cast<int>(Size(2000, 8));
  // Warm-up, capture, and x staged (its first move re-captures once).
  MicrosPerCallOf(d, plain, inputs, nullptr, &ty, 2, true);
  MicrosPerCallOf(d, graphs, inputs, &tx2, &ty, 4, true);
  const double plain_us =
      MicrosPerCallOf(d, plain, inputs, nullptr, &ty, calls, true);
  const double host_us =
      MicrosPerCallOf(d, graphs, inputs, nullptr, &ty, calls, false);
  const double moving_us =
      MicrosPerCallOf(d, graphs, inputs, &tx2, &ty, calls, false);
  const DLTensor* out[] = {&ty};
  double replay_total_us = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    gj_error* e = gj_function_call(graphs.fn, inputs.data(), inputs.size(), out,
                                   1, nullptr);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
    (void)d.driver->cuStreamSynchronize(nullptr);
    const std::chrono::duration<double, std::micro> took =
        std::chrono::steady_clock::now() - start;
    replay_total_us += took.count();
  }
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  gj_error_destroy(gj_function_get_stats(graphs.fn, &stats));
  if (stats.cuda_graph_replays == 0) {
    state.SkipWithError("reduce-overhead mode recorded no graph");
  }
  const double replay_us =
      replay_total_us /
      static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["plain_us"] = plain_us;
  state.counters["replay_us"] = replay_us;
  state.counters["speedup"] = plain_us / replay_us;
  state.counters["replay_host_us"] = host_us;
  // Half the calls of the moving run moved x.
  state.counters["patch_us"] = 2 * (moving_us - host_us);
  state.counters["recaptures"] =
      static_cast<double>(stats.cuda_graph_recaptures);
  state.counters["layers"] = layers;
}
BENCHMARK(BM_CudaGraphMlpReplayVsLaunches)->UseRealTime();

// Median milliseconds of `runs` calls of `enqueue` on the legacy default
// stream, timed with events.
template <typename F>
double EventMs(const Device& d, F&& enqueue, int runs = 10) {
  CUevent start = nullptr, stop = nullptr;
  d.driver->cuEventCreate(&start, 0);
  d.driver->cuEventCreate(&stop, 0);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    d.driver->cuEventRecord(start, nullptr);
    enqueue();
    d.driver->cuEventRecord(stop, nullptr);
    d.driver->cuEventSynchronize(stop);
    float t = 0;
    d.driver->cuEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  d.driver->cuEventDestroy(start);
  d.driver->cuEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// relu(addmm(b, x, w)) (nn.Linear + ReLU as torch.export writes it, weight
// pre-transposed) over [n, n] float32, n = 4096, one call + stream sync per
// iteration, vs the same product with cuBLASLt's RELU_BIAS epilogue called
// directly (CublasLtGemm: one cublasLtMatmul on a cached descriptor) in the
// same run. Counters: cublaslt_ms (median), vs_cublaslt = cublaslt_ms /
// time per call (target >= 0.90).
void BM_CudaMatmulBiasRelu(benchmark::State& state) {
  const Device& d = GetDevice();
  if (d.device == nullptr) return state.SkipWithError(d.error.c_str());
  absl::StatusOr<CublasLtGemm*> gemm = CublasLtGemm::ForDevice(*d.device);
  if (!gemm.ok()) {
    return state.SkipWithError(std::string(gemm.status().message()).c_str());
  }
  const int64_t n = Size(4096, 32);
  std::string text = "name: \"linear_relu\"\n" + Placeholder("x", {n, n}) +
                     Placeholder("w", {n, n}) + Placeholder("b", {n});
  text += Node("lin", "aten.addmm.default",
               "args { ref: \"b\" } args { ref: \"x\" } args { ref: \"w\" }");
  text += Node("act", "aten.relu.default", "args { ref: \"lin\" }");
  text += "outputs { ref: \"act\" }\n";
  Function f(text);
  std::vector<int64_t> matrix = {n, n}, row = {n};
  DeviceBuffer x(*d.driver, n * n * 4), w(*d.driver, n * n * 4),
      b(*d.driver, n * 4), y(*d.driver, n * n * 4);
  DLTensor tx = Cuda(x, matrix), tw = Cuda(w, matrix), tb = Cuda(b, row),
           ty = Cuda(y, matrix);
  absl::StatusOr<CudaCachingAllocator*> allocator =
      CudaCachingAllocator::ForDevice(0);
  if (!allocator.ok()) {
    return state.SkipWithError(
        std::string(allocator.status().message()).c_str());
  }
  std::shared_ptr<Allocator> workspace = (*allocator)->OnStream(nullptr);
  CublasLtGemmArgs args;
  args.m = args.n = args.k = n;
  args.a = GemmMatrix{reinterpret_cast<void*>(x.ptr), n, 1, 0};
  args.b = GemmMatrix{reinterpret_cast<void*>(w.ptr), n, 1, 0};
  args.d = GemmMatrix{reinterpret_cast<void*>(y.ptr), n, 1, 0};
  args.bias = reinterpret_cast<void*>(b.ptr);
  args.activation = GemmActivation::kRelu;
  absl::Status direct = absl::OkStatus();
  const double cublaslt_ms = EventMs(
      d, [&] { direct.Update((*gemm)->Run(args, nullptr, *workspace)); });
  if (!direct.ok()) {
    return state.SkipWithError(std::string(direct.message()).c_str());
  }
  gj_call_options options;
  gj_call_options_init(&options);
  options.synchronize = 1;
  const DLTensor* in[] = {&tx, &tw, &tb};
  const DLTensor* out[] = {&ty};
  if (!WarmUp(state, f, {&tx, &tw, &tb}, {&ty})) return;
  for (auto _ : state) {
    gj_error* e = gj_function_call(f.fn, in, 3, out, 1, &options);
    if (e != nullptr) {
      state.SkipWithError(gj_error_message(e));
      gj_error_destroy(e);
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * 2 * n * n * n);  // flops
  state.counters["cublaslt_ms"] = cublaslt_ms;
  state.counters["vs_cublaslt"] = benchmark::Counter(
      cublaslt_ms * 1e-3 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CudaMatmulBiasRelu)->UseRealTime();

}  // namespace
}  // namespace guardjit

int main(int argc, char** argv) {
  const char* emulate = std::getenv("GJ_CUDA_EMULATE");
  if (emulate != nullptr && std::string(emulate) == "1") {
    guardjit::CudaDriver::InstallForTesting(
        guardjit::EmulatedCudaDriver::Get());
    guardjit::CublasLtApi::InstallForTesting(guardjit::EmulatedCublasLt::Get());
    guardjit::g_emulated = true;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
