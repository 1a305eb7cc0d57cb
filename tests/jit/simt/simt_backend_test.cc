// The CUDA backend on the SIMT emulator beyond what the conformance suites
// (run again on it by jit_cuda_simt_tests) cover: each row mapping at block
// sizes other than the suites', reductions whose ties and NaNs cross
// threads, warps and blocks, one dynamic entry at many sizes, and the
// module cache (and its ASSERT_COMPILE switch).

#include "jit/simt/simt_backend.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_codegen.h"
#include "jit/jit_compiler.h"
#include "jit/kernel_backend.h"
#include "jit/kernel_cache.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/cuda/cuda_test_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::Finish;
using testing::Ints;
using testing::RandomTensor;

std::unique_ptr<JitCompiler> SimtJit(
    int block_threads, std::shared_ptr<SimtCudaBackend>* out = nullptr) {
  SimtCudaBackend::Options simt;
  simt.codegen.block_threads = block_threads;
  simt.nvrtc_archs = {CudaArch{9, 0}};
  auto backend = std::make_shared<SimtCudaBackend>(simt);
  if (out != nullptr) *out = backend;
  auto jit = JitCompiler::Create(
      {.fail_instead_of_eager = true, .kernel_backend = backend});
  EXPECT_TRUE(jit.ok()) << jit.status();
  return *std::move(jit);
}

// Runs `graph` compiled by `jit` and eagerly on `inputs`; expects the same
// values within `rtol` (NaN where eager has NaN).
void ExpectMatchesEager(JitCompiler& jit, std::shared_ptr<const Graph> graph,
                        const std::vector<Tensor>& inputs, double rtol) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = jit.Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_NE((*exe)->Describe().find("kernels on cuda-simt"), std::string::npos)
      << (*exe)->Describe();
  auto actual = RunToVector(**exe, inputs);
  ASSERT_TRUE(actual.ok()) << actual.status();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok());
  auto expected = (*eager)->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t k = 0; k < actual->size(); ++k) {
    const Tensor& e = (*expected)[k];
    testing::ExpectTensor((*actual)[k], e.dtype(), e.sizes(),
                          testing::ToDoubles(e), rtol, rtol);
  }
}

std::shared_ptr<const Graph> UnaryOpGraph(const char* target,
                                          std::vector<Arg> extra) {
  GraphBuilder b(target);
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::vector<Arg> args = {Arg::Ref("x")};
  args.insert(args.end(), extra.begin(), extra.end());
  AddNode(b, "y", target, args);
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  return Finish(b);
}

TEST(SimtBackendTest, SoftmaxAtEveryRowMappingAndBlockSize) {
  auto graph =
      UnaryOpGraph("aten._softmax.default", {Arg::Int(-1), Arg::Bool(false)});
  for (int threads : {32, 96, 256}) {
    auto jit = SimtJit(threads);
    // 7: a thread per row; 300: a warp; 3000: a block.
    for (int64_t cols : {7, 300, 3000}) {
      SCOPED_TRACE(absl::StrCat(threads, " threads, rows of ", cols));
      ExpectMatchesEager(
          *jit, graph, {RandomTensor(DType::kFloat32, {5, cols}, cols)}, 2e-5);
    }
  }
}

// softmax and log_softmax take their row's max and sum in one online pass
// (cuda_online_softmax.h): rows of -inf (all: NaN as torch gives; some:
// zeros there), +inf, NaN and values that raise the running max late, at
// every row mapping, in float32, float64 and float16, match eager.
TEST(SimtBackendTest, OnlineSoftmaxMatchesEagerOnSpecialRows) {
  for (const bool log : {false, true}) {
    auto graph = UnaryOpGraph(
        log ? "aten._log_softmax.default" : "aten._softmax.default",
        {Arg::Int(-1), Arg::Bool(false)});
    for (const DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
      // The plan fuses the max and the sum into one pass.
      auto module =
          testing::RenderPlan(testing::PlanOf(*graph, {{6, 300}}, dtype));
      ASSERT_TRUE(module.ok()) << module.status();
      ASSERT_EQ(module->kernels.size(), 1u);
      EXPECT_EQ(module->kernels[0].online_softmax_passes, 1) << module->source;
      {
        const int threads = 128;  // 4 warps: partials cross warps too
        auto jit = SimtJit(threads);
        for (int64_t cols : {7, 300, 3000}) {
          SCOPED_TRACE(absl::StrCat(log ? "log_softmax " : "softmax ",
                                    DTypeName(dtype), " ", threads,
                                    " threads, rows of ", cols));
          const double inf = std::numeric_limits<double>::infinity();
          std::vector<double> v(6 * cols);
          for (int64_t c = 0; c < cols; ++c) {
            v[c] = -inf;                                             // all -inf
            v[cols + c] = c % 3 == 0 ? -inf : std::sin(c * 0.37);    // some
            v[2 * cols + c] = c == cols / 2 ? inf : 0.25 * (c % 5);  // +inf
            v[3 * cols + c] = c == cols - 1 ? NAN : 0.1 * (c % 7);   // NaN
            v[4 * cols + c] = 0.01 * c;  // the max grows at every element
            v[5 * cols + c] = c < cols - 2 ? -inf : 1.0;  // late first value
          }
          ExpectMatchesEager(*jit, graph,
                             {testing::MakeTensor(dtype, {6, cols}, v)},
                             dtype == DType::kFloat16   ? 2e-3
                             : dtype == DType::kFloat64 ? 1e-11
                                                        : 2e-5);
        }
      }
    }
  }
}

// argmax/argmin where the best value repeats across threads, warps and
// blocks (the first position wins), and where NaNs do (the first NaN wins).
TEST(SimtBackendTest, ArgReductionsTieBreakAcrossThreads) {
  auto jit = SimtJit(128);
  for (const char* op : {"aten.argmax.default", "aten.argmin.default"}) {
    auto graph = UnaryOpGraph(op, {Arg::Int(1)});
    for (int64_t cols : {12, 200, 5000}) {
      std::vector<double> values(3 * cols);
      for (int64_t r = 0; r < 3; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          // Few distinct values: many ties for the extreme.
          values[r * cols + c] = static_cast<double>((c * 7 + r) % 5);
        }
      }
      // Row 1: NaN at two positions, the later one in another warp.
      values[cols + cols / 3] = NAN;
      values[cols + cols - 1] = NAN;
      SCOPED_TRACE(absl::StrCat(op, " rows of ", cols));
      ExpectMatchesEager(
          *jit, graph,
          {testing::MakeTensor(DType::kFloat32, {3, cols}, values)}, 0);
    }
  }
}

// A float32 sum whose threads each see many blocks of kCudaSumBlock values:
// blocked in double it keeps its mass.
TEST(SimtBackendTest, LongSumsKeepTheirMass) {
  auto jit = SimtJit(64);
  auto graph = UnaryOpGraph("aten.sum.default", {});
  const int64_t n = int64_t{1} << 22;
  std::vector<double> tenth(n, 0.1);
  Specialization spec;
  const Tensor x = testing::MakeTensor(DType::kFloat32, {n}, tenth);
  spec.inputs.push_back(TensorMeta::Of(x));
  auto exe = jit->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto out = RunToVector(**exe, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  const double exact = static_cast<double>(n) * static_cast<float>(0.1);
  EXPECT_NEAR(testing::ToDoubles((*out)[0])[0], exact, exact * 1e-6);
}

// One dynamic entry (a symbolic row length: the block mapping) serves six
// sizes, from 2 to past a block's threads.
TEST(SimtBackendTest, DynamicEntryServesSixSizes) {
  GraphBuilder b("dynamic_layer_norm");
  for (const char* x : {"x", "w"}) ASSERT_TRUE(b.AddPlaceholder(x).ok());
  AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("w")});
  AddNode(b, "s", "aten.sum.dim_IntList",
          {Arg::Ref("m"), Ints({1}), Arg::Bool(true)});
  AddNode(b, "y", "aten.sub.Tensor", {Arg::Ref("m"), Arg::Ref("s")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = Finish(b);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t cols : {3, 2, 17, 64, 65, 700}) {
    calls.push_back({RandomTensor(DType::kFloat32, {4, cols}, cols),
                     RandomTensor(DType::kFloat32, {cols}, cols + 1)});
  }
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(graph, calls[0], {{0, 1}, {1, 0}});
  ASSERT_NE(entry.graph, nullptr);
  auto jit = SimtJit(64);
  auto exe = jit->Compile(entry.graph, entry.spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok());
  for (const auto& call : calls) {
    SCOPED_TRACE(absl::StrCat("cols ", call[0].size(1)));
    auto actual = RunToVector(**exe, call);
    ASSERT_TRUE(actual.ok()) << actual.status();
    auto expected = (*eager)->Run(call);
    ASSERT_TRUE(expected.ok());
    testing::ExpectTensor((*actual)[0], DType::kFloat32, (*expected)[0].sizes(),
                          testing::ToDoubles((*expected)[0]), 2e-5, 2e-5);
  }
}

// Keeps a copy of every kernel the JIT compiles, then compiles on `inner`.
class RecordingBackend : public KernelBackend {
 public:
  explicit RecordingBackend(std::shared_ptr<KernelBackend> inner)
      : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  absl::StatusOr<std::shared_ptr<const KernelModule>> Compile(
      absl::Span<const Kernel* const> kernels,
      absl::Span<const std::string> labels) override {
    for (const Kernel* k : kernels) kernels_.push_back(*k);
    return inner_->Compile(kernels, labels);
  }
  KernelCacheStats cache_stats() const override {
    return inner_->cache_stats();
  }
  const std::vector<Kernel>& kernels() const { return kernels_; }

 private:
  std::shared_ptr<KernelBackend> inner_;
  std::vector<Kernel> kernels_;
};

// The same dynamic entry with its sizes bounded at compile time: its
// kernels compute indices in int and still match eager at every size.
TEST(SimtBackendTest, BoundedDynamicEntryUsesIntIndices) {
  GraphBuilder b("bounded_softmax");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "e", "aten.exp.default", {Arg::Ref("x")});
  AddNode(b, "y", "aten._log_softmax.default",
          {Arg::Ref("e"), Arg::Int(1), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = Finish(b);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t cols : {3, 40, 700}) {
    calls.push_back({RandomTensor(DType::kFloat32, {3, cols}, cols)});
  }
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(graph, calls[0], {{0, 1}});
  ASSERT_NE(entry.graph, nullptr);
  SimtCudaBackend::Options simt;
  simt.codegen.block_threads = 64;
  simt.codegen.size_bounds = {4096, 4096, 4096, 4096};
  simt.nvrtc_archs = {CudaArch{8, 0}};
  auto recorder = std::make_shared<RecordingBackend>(
      std::make_shared<SimtCudaBackend>(simt));
  auto jit = JitCompiler::Create(
      {.fail_instead_of_eager = true, .kernel_backend = recorder});
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto exe = (*jit)->Compile(entry.graph, entry.spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  ASSERT_FALSE(recorder->kernels().empty());
  for (const Kernel& k : recorder->kernels()) {
    ASSERT_GT(k.num_size_params, 0) << k.ToString();
    const Kernel* one[] = {&k};
    auto bounded = RenderCudaModule(one, simt.codegen);
    ASSERT_TRUE(bounded.ok()) << bounded.status();
    EXPECT_TRUE(bounded->kernels[0].index32) << bounded->source;
    auto unbounded = RenderCudaModule(one, {.block_threads = 64});
    ASSERT_TRUE(unbounded.ok()) << unbounded.status();
    EXPECT_FALSE(unbounded->kernels[0].index32);
  }
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok());
  for (const auto& call : calls) {
    SCOPED_TRACE(absl::StrCat("cols ", call[0].size(1)));
    auto actual = RunToVector(**exe, call);
    ASSERT_TRUE(actual.ok()) << actual.status();
    auto expected = (*eager)->Run(call);
    ASSERT_TRUE(expected.ok());
    testing::ExpectTensor((*actual)[0], DType::kFloat32, (*expected)[0].sizes(),
                          testing::ToDoubles((*expected)[0]), 2e-5, 2e-5);
  }
}

// A pointwise kernel's vector path (aligned buffers) and its scalar path
// (a buffer one element off alignment) both match eager. The emulator
// poisons a misaligned vector access (simt_emulation_header.h), so a kernel
// that took the vector path on the misaligned buffer would fail here.
TEST(SimtBackendTest, VectorAndScalarPathsMatchEager) {
  GraphBuilder b("vector_paths");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("x")});
  AddNode(b, "o", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Float(3.0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  auto graph = Finish(b);
  for (const DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const Tensor x = RandomTensor(dtype, {6, 40}, 7);
    SimtCudaBackend::Options simt;
    simt.codegen.block_threads = 32;
    auto backend = std::make_shared<SimtCudaBackend>(simt);
    auto recorder = std::make_shared<RecordingBackend>(backend);
    auto jit = JitCompiler::Create(
        {.fail_instead_of_eager = true, .kernel_backend = recorder});
    ASSERT_TRUE(jit.ok()) << jit.status();
    // Through the JIT: its buffers are aligned.
    ExpectMatchesEager(**jit, graph, {x}, 0);
    ASSERT_EQ(recorder->kernels().size(), 1u);
    const Kernel& kernel = recorder->kernels()[0];
    ASSERT_EQ(kernel.buffers.size(), 2u);
    const Kernel* one[] = {&kernel};
    auto source = RenderCudaModule(one, simt.codegen);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ(source->kernels[0].vector_width,
              16 / static_cast<int>(ItemSize(dtype)));
    auto eager = EagerInterpreter::Create(graph);
    ASSERT_TRUE(eager.ok());
    auto expected = (*eager)->Run({x});
    ASSERT_TRUE(expected.ok()) << expected.status();
    const size_t bytes = static_cast<size_t>(x.numel()) * ItemSize(dtype);
    // The launch itself, on buffers placed at 16-byte boundaries or one
    // element past one.
    auto module = backend->Compile(one, {"vector_paths"});
    ASSERT_TRUE(module.ok()) << module.status();
    for (const bool misaligned_in : {false, true}) {
      for (const bool misaligned_out : {false, true}) {
        SCOPED_TRACE(absl::StrCat("input ", misaligned_in ? "mis" : "",
                                  "aligned, output ",
                                  misaligned_out ? "mis" : "", "aligned"));
        std::vector<unsigned char> in_storage(bytes + 64),
            out_storage(bytes + 64);
        auto place = [&](std::vector<unsigned char>& v, bool off) {
          const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
          return v.data() + ((16 - p % 16) % 16) + (off ? ItemSize(dtype) : 0);
        };
        unsigned char* in = place(in_storage, misaligned_in);
        unsigned char* out = place(out_storage, misaligned_out);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(in) % 16 != 0, misaligned_in);
        std::memcpy(in, x.data(), bytes);
        void* buffers[] = {in, out};
        if (kernel.buffers[0].is_output) std::swap(buffers[0], buffers[1]);
        auto launched =
            (*module)->Launch(0, buffers, {}, nullptr, RunContext());
        ASSERT_TRUE(launched.ok()) << launched.status();
        const Tensor actual =
            Tensor::Borrow(out, dtype, x.sizes(), x.strides());
        testing::ExpectTensor(actual, dtype, (*expected)[0].sizes(),
                              testing::ToDoubles((*expected)[0]), 0, 0);
      }
    }
  }
}

TEST(SimtBackendTest, IdenticalProgramsCompileOnce) {
  std::shared_ptr<SimtCudaBackend> backend;
  auto jit = SimtJit(64, &backend);
  auto graph = UnaryOpGraph("aten.relu.default", {});
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {3, 5}, 1)};
  ExpectMatchesEager(*jit, graph, x, 0);
  ExpectMatchesEager(*jit, graph, x, 0);
  EXPECT_EQ(backend->compiled(), 1);
  EXPECT_EQ(backend->cache_hits(), 1);
  EXPECT_EQ(backend->nvrtc_checked(), 1);
}

// Under the ASSERT_COMPILE switch the module cache serves a warm program and
// a program needing a new module fails with the miss, even from a strict
// JIT (which would otherwise prefix its own message).
TEST(SimtBackendTest, ForbiddenCompilesServeHitsAndFailMisses) {
  std::shared_ptr<SimtCudaBackend> backend;
  auto jit = SimtJit(64, &backend);
  auto graph = UnaryOpGraph("aten.relu.default", {});
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {3, 5}, 1)};
  ExpectMatchesEager(*jit, graph, x, 0);
  ScopedForbidKernelCompiles forbid;
  ExpectMatchesEager(*jit, graph, x, 0);
  Specialization spec;
  spec.inputs.push_back(
      TensorMeta::Of(RandomTensor(DType::kFloat64, {3, 5}, 1)));
  auto exe = jit->Compile(graph, spec);
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kFailedPrecondition)
      << exe.status();
  EXPECT_TRUE(IsKernelCacheMissError(exe.status()));
  EXPECT_NE(exe.status().message().find(
                "kernel cache miss for 'kernel 0 (computing "),
            std::string::npos)
      << exe.status();
  EXPECT_NE(exe.status().message().find("on cuda-simt (block_threads=64"),
            std::string::npos)
      << exe.status();
  EXPECT_EQ(backend->compiled(), 1);
  EXPECT_EQ(backend->cache_hits(), 1);
}

}  // namespace
}  // namespace guardjit
