#include "tests/jit/jit_test_util.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/call_signature.h"
#include "core/compiler.h"
#include "core/shape_env.h"
#include "core/specializer.h"
#include "core/status_macros.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_backend.h"
#include "jit/simt/simt_backend.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/eager_interpreter.h"
#include "test_paths.h"  // GJ_GOLDEN_DIR, GJ_SIMT_CACHE_DIR_DEFAULT
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/test_util.h"

namespace guardjit::testing {

#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
namespace {

// jit_cuda_device_tests on a real GPU (GJ_CUDA_REAL_DEVICE=1): libcuda and
// libcublasLt instead of the emulated device; without a usable device every
// test is skipped (DeviceEnvironment below).
bool RealDeviceRequested() {
  const char* real = std::getenv("GJ_CUDA_REAL_DEVICE");
  return real != nullptr && std::string(real) == "1";
}

// A trampoline in front of one entry of a driver or cuBLASLt table that
// counts its calls and forwards them: the launch and matmul counts the
// conformance suites check, the same on the emulated device and on a GPU.
template <int kTag, typename Fn>
struct Counted;
template <int kTag, typename R, typename... A>
struct Counted<kTag, R (*)(A...)> {
  static inline R (*real)(A...) = nullptr;
  static inline std::atomic<int64_t> calls{0};
  static R Call(A... args) {
    calls.fetch_add(1, std::memory_order_relaxed);
    return real(args...);
  }
};
using CountedLaunch = Counted<0, decltype(CudaDriver::cuLaunchKernel)>;
using CountedMatmul = Counted<1, decltype(CublasLtApi::cublasLtMatmul)>;

// Installs copies of `driver` and `cublaslt` whose launch and matmul entries
// count; the copies live for the process, as installed tables must.
void InstallCountingTables(const CudaDriver& driver,
                           const CublasLtApi& cublaslt) {
  auto* counting_driver = new CudaDriver(driver);
  CountedLaunch::real = driver.cuLaunchKernel;
  counting_driver->cuLaunchKernel = &CountedLaunch::Call;
  CudaDriver::InstallForTesting(counting_driver);
  auto* counting_cublaslt = new CublasLtApi(cublaslt);
  CountedMatmul::real = cublaslt.cublasLtMatmul;
  counting_cublaslt->cublasLtMatmul = &CountedMatmul::Call;
  CublasLtApi::InstallForTesting(counting_cublaslt);
}

// Why there is no usable GPU for GJ_CUDA_REAL_DEVICE=1, or "" when there is.
std::string RealDeviceMissing() {
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (!driver.ok()) return driver.status().ToString();
  absl::StatusOr<const CublasLtApi*> cublaslt = CublasLtApi::Get();
  if (!cublaslt.ok()) return cublaslt.status().ToString();
  return "";
}

// Skips every test of the binary when GJ_CUDA_REAL_DEVICE=1 finds no GPU,
// naming why, as the GPU tests do (GTEST_SKIP without a device).
class DeviceEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!RealDeviceRequested()) return;
    const std::string missing = RealDeviceMissing();
    if (!missing.empty()) {
      GTEST_SKIP() << "GJ_CUDA_REAL_DEVICE=1 and no usable GPU: " << missing;
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kDeviceEnvironment =
    ::testing::AddGlobalTestEnvironment(new DeviceEnvironment);

// The shared JIT's CUDA backend, for the copies between host and device.
std::shared_ptr<CudaKernelBackend>& SharedCudaBackend() {
  static auto* backend = new std::shared_ptr<CudaKernelBackend>();
  return *backend;
}

}  // namespace
#endif  // GJ_CONFORMANCE_ON_CUDA_EMULATED

JitCompiler& SharedJit() {
  // Strict: a JIT failure fails the test instead of running eager.
  static JitCompiler* jit = [] {
    JitCompiler::Options options{.fail_instead_of_eager = true};
#if defined(GJ_CONFORMANCE_ON_SIMT) || defined(GJ_CONFORMANCE_ON_CUDA_EMULATED)
    // The two emulated suites generate the same CUDA sources: the host
    // compiles of one are the other's cache hits, and a later run's
    // (scripts/test.sh points GJ_SIMT_CACHE_DIR at a cache that outlives the
    // build tree).
    setenv("GJ_SIMT_CACHE_DIR", GJ_SIMT_CACHE_DIR_DEFAULT, /*overwrite=*/0);
#endif
#ifdef GJ_CONFORMANCE_ON_SIMT
    // The conformance suites again, every fused kernel as generated CUDA C
    // on the SIMT emulator (tests/CMakeLists.txt: jit_cuda_simt_tests).
    SimtCudaBackend::Options simt;
    // Two warps per block: cross-warp reductions run too, with few threads.
    simt.codegen.block_threads = 64;
    // NVRTC compiles every module first, for sm_80: jit_cuda_device_tests
    // compiles the same suites for sm_90 (its emulated device's arch), so
    // every conformance kernel still goes through NVRTC for both archs, once
    // each (CI time: compiling both here too cost a third of the suite).
    simt.nvrtc_archs = {CudaArch{8, 0}};
    options.kernel_backend = std::make_shared<SimtCudaBackend>(simt);
#elif defined(GJ_CONFORMANCE_ON_CUDA_EMULATED)
    // The conformance suites on the CUDA device path (tests/CMakeLists.txt:
    // jit_cuda_device_tests): NVRTC for the device's arch, module loads,
    // launches, device memory, constants and host-copy steps, through the
    // driver table, on the emulated device (testing/cuda/emulated_driver.h)
    // or, with GJ_CUDA_REAL_DEVICE=1, on GPU 0 through libcuda.
    // GJ_CUDA_LAUNCH_BLOCKING=1 reports a failed index check in the call
    // that made it, as the CPU does (set here, before any device program
    // reads it: ctest's ENVIRONMENT property lost it behind a ';').
    setenv("GJ_CUDA_LAUNCH_BLOCKING", "1", 1);
    CudaKernelBackend::Options cuda;
    if (RealDeviceRequested()) {
      // DeviceEnvironment skipped every test if these fail.
      InstallCountingTables(*CudaDriver::Get().value(),
                            *CublasLtApi::Get().value());
    } else {
      // Matrix products run on cuBLASLt: the emulated one, over the
      // emulated device's memory (testing/cuda/emulated_cublaslt.h).
      InstallCountingTables(*EmulatedCudaDriver::Get(),
                            *EmulatedCublasLt::Get());
      // Small launches: the emulator runs every thread of a block.
      cuda.block_threads = 64;
      cuda.max_blocks = 4;
    }
    SharedCudaBackend() = CudaKernelBackend::Create(cuda).value();
    options.kernel_backend = SharedCudaBackend();
#endif
    return JitCompiler::Create(options).value().release();
  }();
  return *jit;
}

bool SharedJitOnGpu() {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  return RealDeviceRequested();
#else
  return false;
#endif
}

const char* SharedJitBackend() {
#ifdef GJ_CONFORMANCE_ON_SIMT
  return "cuda-simt";
#elif defined(GJ_CONFORMANCE_ON_CUDA_EMULATED)
  // "cuda:sm_90" on the emulated device; the GPU's arch on a real one.
  static const std::string* name = [] {
    SharedJit();
    return new std::string(SharedCudaBackend()->name());
  }();
  return name->c_str();
#else
  return "";
#endif
}

Tensor OnSharedJitDevice(const Tensor& t) {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  SharedJit();
  absl::StatusOr<Tensor> copy = SharedCudaBackend()->ToDevice(t, RunContext());
  EXPECT_TRUE(copy.ok()) << copy.status();
  return copy.ok() ? *std::move(copy) : t;
#else
  return t;
#endif
}

int64_t CublasLtMatmuls() {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  return CountedMatmul::calls.load();
#else
  return 0;
#endif
}

int64_t DeviceLaunches() {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  return CountedLaunch::calls.load();
#else
  return 0;
#endif
}

DeviceInputs::DeviceInputs(const std::vector<Tensor>& host) {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  SharedJit();
  const CudaKernelBackend& backend = *SharedCudaBackend();
  // Inputs whose bytes overlap share one device buffer, so aliasing and
  // views of one another survive the copy; 0-dim tensors stay on the host
  // (CPU scalars beside device inputs, as in PyTorch).
  struct Group {
    ByteRange range;
    std::vector<size_t> members;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < host.size(); ++i) {
    const ByteRange range = MemoryRange(host[i]);
    if (host[i].dim() == 0 || range.begin == range.end) continue;
    Group merged{range, {i}};
    for (auto it = groups.begin(); it != groups.end();) {
      if (it->range.Overlaps(merged.range)) {
        merged.range.begin = std::min(merged.range.begin, it->range.begin);
        merged.range.end = std::max(merged.range.end, it->range.end);
        merged.members.insert(merged.members.end(), it->members.begin(),
                              it->members.end());
        it = groups.erase(it);
      } else {
        ++it;
      }
    }
    groups.push_back(std::move(merged));
  }
  tensors = host;
  for (const Group& g : groups) {
    const int64_t bytes = static_cast<int64_t>(g.range.end - g.range.begin);
    const Tensor span = Tensor::Borrow(reinterpret_cast<void*>(g.range.begin),
                                       DType::kUInt8, {bytes}, {1});
    absl::StatusOr<Tensor> buffer = backend.ToDevice(span, RunContext());
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (!buffer.ok()) continue;
    for (size_t i : g.members) {
      const uintptr_t offset =
          reinterpret_cast<uintptr_t>(host[i].data()) - g.range.begin;
      tensors[i] = Tensor::Borrow(static_cast<char*>(buffer->data()) + offset,
                                  host[i].dtype(), host[i].sizes(),
                                  host[i].strides(), backend.device());
    }
    buffers_.push_back(*std::move(buffer));
  }
  // Empty tensors: a device address of their own that nothing reads.
  for (size_t i = 0; i < host.size(); ++i) {
    if (host[i].dim() == 0 || host[i].numel() != 0) continue;
    const int64_t one = 1;
    absl::StatusOr<Tensor> buffer = backend.ToDevice(
        Tensor::Borrow(const_cast<int64_t*>(&one), DType::kInt64, {1}, {1}),
        RunContext());
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    if (!buffer.ok()) continue;
    tensors[i] =
        Tensor::Borrow(buffer->data(), host[i].dtype(), host[i].sizes(),
                       host[i].strides(), backend.device());
    buffers_.push_back(*std::move(buffer));
  }
#else
  tensors = host;
#endif
}

absl::StatusOr<std::vector<Tensor>> ToHost(std::vector<Tensor> outputs) {
#ifdef GJ_CONFORMANCE_ON_CUDA_EMULATED
  for (Tensor& t : outputs) {
    if (t.device().is_cpu()) continue;
    ASSIGN_OR_RETURN(t, SharedCudaBackend()->ToHost(t, RunContext()));
  }
#endif
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> RunOnSharedJit(
    const Executable& executable, const std::vector<Tensor>& inputs) {
  const DeviceInputs staged(inputs);
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                   RunToVector(executable, staged.tensors));
  return ToHost(std::move(outputs));
}

std::string WithoutBackend(const std::string& description) {
  const std::string suffix = absl::StrCat(", kernels on ", SharedJitBackend());
  if (*SharedJitBackend() != '\0' && absl::EndsWith(description, suffix)) {
    return description.substr(0, description.size() - suffix.size());
  }
  return description;
}

std::optional<std::string> NotCompiledByJitReason(
    const Executable& executable) {
  const std::string d = executable.Describe();
  if (d.rfind("jit:", 0) != 0) {
    return absl::StrCat("not the JIT's program: ", d);
  }
  if (*SharedJitBackend() != '\0' &&
      !absl::StrContains(d, absl::StrCat("kernels on ", SharedJitBackend()))) {
    return absl::StrCat("kernels not on ", SharedJitBackend(), ": ", d);
  }
  return std::nullopt;
}

void ExpectCompiledByJit(const Executable& executable) {
  const std::optional<std::string> reason = NotCompiledByJitReason(executable);
  EXPECT_FALSE(reason.has_value()) << *reason;
}

void ExpectNoUnplannedCalls(const Executable& executable) {
  const std::string d = executable.Describe();
  EXPECT_FALSE(absl::StrContains(d, "not planned for"))
      << "a call ran on the reference kernels, not the compiled program: " << d;
}

void ExpectGoldenFile(const std::string& file, const std::string& actual) {
  const std::string path = absl::StrCat(GJ_GOLDEN_DIR, "/", file);
  const char* update = std::getenv("GJ_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "no golden file " << path
                         << "; run with GJ_UPDATE_GOLDEN=1 to create it";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string expected = buffer.str();
  if (expected == actual) return;
  const std::vector<std::string> want = absl::StrSplit(expected, '\n');
  const std::vector<std::string> got = absl::StrSplit(actual, '\n');
  size_t line = 0;
  while (line < want.size() && line < got.size() && want[line] == got[line]) {
    ++line;
  }
  auto at = [](const std::vector<std::string>& lines, size_t i) {
    return i < lines.size() ? lines[i] : std::string("<end of text>");
  };
  std::string context;
  for (size_t i = line; i < line + 3; ++i) {
    absl::StrAppend(&context, "  line ", i + 1, "\n    golden: ", at(want, i),
                    "\n    now:    ", at(got, i), "\n");
  }
  ADD_FAILURE() << path << " differs from the generated code (" << want.size()
                << " vs " << got.size() << " lines), first at line " << line + 1
                << ":\n"
                << context
                << "If the change is intended, rerun with "
                   "GJ_UPDATE_GOLDEN=1 and review the diff of "
                << path;
}

double JitTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 2e-5;
    case DType::kFloat64:
      return 1e-11;
    // Two units in the last place: the kernels compute in float32 as eager
    // does, but their float32 math may land on the other side of a rounding
    // boundary, and fused chains round once where eager rounds per op.
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    default:
      return 0;
  }
}

namespace {

std::vector<InputView> ViewsOf(const std::vector<Tensor>& inputs) {
  std::vector<InputView> views;
  for (const Tensor& t : inputs) views.push_back(InputView::Of(t));
  return views;
}

void ExpectSameOutputs(const std::vector<Tensor>& actual,
                       const std::vector<Tensor>& expected, double rtol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const Tensor& e = expected[i];
    SCOPED_TRACE(absl::StrCat("output ", i));
    const double tol = rtol >= 0 ? rtol : JitTolerance(e.dtype());
    ExpectTensor(actual[i], e.dtype(), e.sizes(), ToDoubles(e), tol, tol);
  }
}

}  // namespace

DynamicEntry MakeDynamicEntry(std::shared_ptr<const Graph> graph,
                              const std::vector<Tensor>& example,
                              const std::vector<DynamicDim>& dynamic) {
  std::vector<std::string> names;
  for (size_t i = 0; i < example.size(); ++i) {
    names.push_back(absl::StrCat("x", i));
  }
  const std::vector<InputView> views = ViewsOf(example);
  const CallSignature call{views, AmbientState()};
  ShapeEnv env;
  SymbolicInputs symbolic;
  DynamicEntry entry;
  {
    ShapeEnv::Scope scope(&env);
    symbolic = MakeSymbolicInputs(names, call, dynamic, env);
    auto specialized = SpecializeGraph(graph, symbolic.metas);
    EXPECT_TRUE(specialized.ok()) << specialized.status();
    if (!specialized.ok()) return entry;
    entry.graph = specialized->graph;
    entry.spec.meta = std::move(specialized->meta);
  }
  entry.spec.inputs = symbolic.metas;
  // Planned for the example's layout, as Function plans an entry for the
  // call that missed.
  for (const Tensor& t : example) {
    entry.spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    entry.spec.example_strides.emplace_back(t.strides().begin(),
                                            t.strides().end());
  }
  for (const SymbolInfo& s : env.symbols()) {
    entry.spec.symbols.push_back({s.input, s.dim});
  }
  entry.guards = std::make_shared<const GuardTree>(
      MakeGuardTree(call, std::move(symbolic), env));
  return entry;
}

std::unique_ptr<Executable> ExpectDynamicJitMatchesEager(
    std::shared_ptr<const Graph> graph, const std::vector<DynamicDim>& dynamic,
    const std::vector<std::vector<Tensor>>& calls, double rtol) {
  const DynamicEntry entry = MakeDynamicEntry(graph, calls[0], dynamic);
  EXPECT_TRUE(entry.spec.dynamic()) << "no dim became a symbol";
  if (entry.graph == nullptr) return nullptr;
  auto executable = SharedJit().Compile(entry.graph, entry.spec);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return nullptr;
  if (!JitCompiler::EagerOnlyReason(*entry.graph)) {
    ExpectCompiledByJit(**executable);
  }
  auto eager = EagerInterpreter::Create(graph);
  EXPECT_TRUE(eager.ok()) << eager.status();
  for (size_t c = 0; c < calls.size(); ++c) {
    std::string sizes;
    for (const Tensor& t : calls[c]) {
      absl::StrAppend(&sizes, " [", absl::StrJoin(t.sizes(), ","), "]");
    }
    SCOPED_TRACE(absl::StrCat("call ", c, " of graph ", graph->name(),
                              " with sizes", sizes));
    const std::vector<InputView> views = ViewsOf(calls[c]);
    // Only calls the entry serves are meaningful.
    EXPECT_EQ(entry.guards->FailureReason({views, AmbientState()}),
              std::nullopt);
    auto actual = RunOnSharedJit(**executable, calls[c]);
    auto expected = (*eager)->Run(calls[c]);
    EXPECT_TRUE(expected.ok()) << expected.status();
    EXPECT_TRUE(actual.ok()) << actual.status();
    if (!actual.ok() || !expected.ok()) continue;
    ExpectSameOutputs(*actual, *expected, rtol);
  }
  ExpectNoUnplannedCalls(**executable);
  return *std::move(executable);
}

void ExpectJitMatchesEager(std::shared_ptr<const Graph> graph,
                           const std::vector<Tensor>& inputs, double rtol,
                           const std::vector<Tensor>* compile_for) {
  Specialization spec;
  for (const Tensor& t : compile_for ? *compile_for : inputs) {
    spec.inputs.push_back(TensorMeta::Of(t));
  }
  // Planned for the layout of the call, as Function plans an entry for the
  // call that missed.
  for (const Tensor& t : inputs) {
    spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    spec.example_strides.emplace_back(t.strides().begin(), t.strides().end());
  }
  auto executable = SharedJit().Compile(graph, spec);
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  if (!executable.ok()) {
    // A specialization the graph rejects (a view of memory it cannot view,
    // planned for the call's strides) is rejected by eager mode too.
    auto expected = (*eager)->Run(inputs);
    ASSERT_FALSE(expected.ok()) << executable.status();
    EXPECT_EQ(executable.status().code(), expected.status().code())
        << executable.status() << " vs " << expected.status();
    return;
  }
  // The compiled path, not an eager plan standing in for it (unless the
  // graph is one the JIT leaves to the eager plan by design).
  if (!JitCompiler::EagerOnlyReason(*graph)) ExpectCompiledByJit(**executable);
  auto actual = RunOnSharedJit(**executable, inputs);
  auto expected = (*eager)->Run(inputs);
  if (!expected.ok()) {
    // What eager mode rejects (a view of memory it cannot view) the compiled
    // program rejects too.
    EXPECT_EQ(actual.status().code(), expected.status().code())
        << actual.status() << " vs " << expected.status();
    return;
  }
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& a = (*actual)[i];
    const Tensor& e = (*expected)[i];
    SCOPED_TRACE(absl::StrCat("output ", i, " of graph ", graph->name()));
    const double tol = rtol >= 0 ? rtol : JitTolerance(e.dtype());
    ExpectTensor(a, e.dtype(), e.sizes(), ToDoubles(e), tol, tol);
  }
  ExpectNoUnplannedCalls(**executable);
}

std::shared_ptr<const Graph> OpGraph(const std::string& target,
                                     const std::vector<Arg>& args,
                                     int num_inputs, Kwargs kwargs,
                                     int num_outputs) {
  GraphBuilder b(target);
  for (int i = 0; i < num_inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  auto node = b.AddNode("op", target, args, std::move(kwargs));
  EXPECT_TRUE(node.ok()) << node.status();
  std::vector<Arg> outputs;
  if (num_outputs == 1) {
    outputs.push_back(Arg::Ref("op"));
  } else {
    for (int k = 0; k < num_outputs; ++k) {
      const std::string name = absl::StrCat("item", k);
      EXPECT_TRUE(
          b.AddNode(name, "getitem", {Arg::Ref("op"), Arg::Int(k)}).ok());
      outputs.push_back(Arg::Ref(name));
    }
  }
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

Arg Ints(const std::vector<int64_t>& v) {
  std::vector<Arg> list;
  for (int64_t i : v) list.push_back(Arg::Int(i));
  return Arg::OfList(list);
}

void AddNode(GraphBuilder& b, const std::string& name,
             const std::string& target, std::vector<Arg> args, Kwargs kwargs) {
  auto node = b.AddNode(name, target, std::move(args), std::move(kwargs));
  ASSERT_TRUE(node.ok()) << name << ": " << node.status();
}

std::shared_ptr<const Graph> Finish(GraphBuilder& b) {
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

std::shared_ptr<const Graph> LinearMlp(int64_t in, int64_t hidden, int64_t out,
                                       DType dtype) {
  GraphBuilder b("mlp");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  const double l1 = 1 / std::sqrt(static_cast<double>(in));
  const double l2 = 1 / std::sqrt(static_cast<double>(hidden));
  EXPECT_TRUE(
      b.AddConstant("w1", RandomTensor(dtype, {hidden, in}, 1, -l1, l1)).ok());
  EXPECT_TRUE(b.AddConstant("b1", RandomTensor(dtype, {hidden}, 2)).ok());
  EXPECT_TRUE(
      b.AddConstant("w2", RandomTensor(dtype, {out, hidden}, 3, -l2, l2)).ok());
  EXPECT_TRUE(b.AddConstant("b2", RandomTensor(dtype, {out}, 4)).ok());
  const auto ref = [](const char* name) { return Arg::Ref(name); };
  AddNode(b, "t1", "aten.permute.default", {ref("w1"), Ints({1, 0})});
  AddNode(b, "fc1", "aten.addmm.default", {ref("b1"), ref("x"), ref("t1")});
  AddNode(b, "relu", "aten.relu.default", {ref("fc1")});
  AddNode(b, "t2", "aten.permute.default", {ref("w2"), Ints({1, 0})});
  AddNode(b, "fc2", "aten.addmm.default", {ref("b2"), ref("relu"), ref("t2")});
  EXPECT_TRUE(b.SetOutputs({ref("fc2")}).ok());
  return Finish(b);
}

namespace {

Plan PlanOrEmpty(const Graph& graph, const Specialization& spec) {
  auto plan = SharedJit().PlanFor(graph, spec);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : Plan();
}

}  // namespace

Plan PlanOf(const Graph& graph, const std::vector<Shape>& shapes, DType dtype) {
  Specialization spec;
  for (const Shape& s : shapes) spec.inputs.push_back({dtype, s});
  return PlanOrEmpty(graph, spec);
}

Plan PlanOfInputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  return PlanOrEmpty(graph, spec);
}

std::string DescribeCompiled(std::shared_ptr<const Graph> graph,
                             const std::vector<Tensor>& inputs) {
  auto jit = JitCompiler::Create();
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (!jit.ok()) return "";
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = (*jit)->Compile(std::move(graph), spec);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? (*exe)->Describe() : "";
}

int EagerSteps(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  int eager = 0;
  for (const PlanStep& step : PlanOfInputs(*graph, inputs).steps) {
    eager += !step.is_kernel;
  }
  return eager;
}

int ConcurrentMismatches(const Executable& executable,
                         const std::vector<Tensor>& inputs,
                         const std::vector<double>& want, int threads,
                         int calls) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = 0; i < calls; ++i) {
        absl::StatusOr<std::vector<Tensor>> out =
            RunToVector(executable, inputs);
        if (!out.ok()) {
          ++mismatches;
          continue;
        }
        const std::vector<double> got = ToDoubles((*out)[0]);
        for (size_t j = 0; j < want.size(); ++j) {
          if (std::abs(got[j] - want[j]) > 1e-4 * (1 + std::abs(want[j]))) {
            ++mismatches;
            break;
          }
        }
      }
    });
  }
  for (std::thread& w : workers) w.join();
  return mismatches.load();
}

}  // namespace guardjit::testing
