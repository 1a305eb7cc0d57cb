// The JIT's programs (jit/program_builder.h) under the run contract: outputs
// written straight into the caller's destinations where nothing can fail
// after them, copies elsewhere, intermediates in the call's arena. The
// runner itself over hand-built programs: tests/runtime/program/.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/run_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "jit/llvm/kernel_compiler.h"
#include "jit/llvm/llvm_backend.h"
#include "jit/steps/packed_gemm.h"
#include "runtime/eager_compiler.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::OpGraph;
using testing::RandomTensor;
using testing::ToDoubles;

std::unique_ptr<Executable> CompileFor(std::shared_ptr<const Graph> graph,
                                       const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto executable = testing::SharedJit().Compile(std::move(graph), spec);
  EXPECT_TRUE(executable.ok()) << executable.status();
  return executable.ok() ? *std::move(executable) : nullptr;
}

TEST(JitProgramTest, KernelOutputsAreWrittenIntoContiguousDestinations) {
  auto graph = OpGraph("aten.exp.default", {Arg::Ref("x0")}, 1);
  const Tensor x = RandomTensor(DType::kFloat32, {64, 33}, 1);
  auto executable = CompileFor(graph, {x});
  ASSERT_NE(executable, nullptr);
  const std::vector<double> expected =
      ToDoubles((*RunToVector(*executable, {x}))[0]);

  Tensor dest = *Tensor::Zeros(DType::kFloat32, {64, 33});
  const Tensor* destinations[] = {&dest};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = RunToVector(*executable, ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data(), dest.data());  // in place, no copy
  EXPECT_EQ(ToDoubles(dest), expected);

  // A transposed destination is not the kernel's layout: a tensor to copy.
  Tensor base = *Tensor::Zeros(DType::kFloat32, {33, 64});
  Tensor transposed = base.AsStrided({64, 33}, {1, 64});
  destinations[0] = &transposed;
  out = RunToVector(*executable, ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].data(), transposed.data());
  EXPECT_EQ(ToDoubles(base), std::vector<double>(64 * 33, 0.0));

  // With a stop condition nothing is written before the run has finished.
  destinations[0] = &dest;
  int32_t cancel = 0;
  ctx.cancel = &cancel;
  out = RunToVector(*executable, ctx, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[0].data(), dest.data());

  // A destination of the wrong shape fails before anything runs.
  ctx.cancel = nullptr;
  Tensor wrong = *Tensor::Zeros(DType::kFloat32, {64, 32});
  destinations[0] = &wrong;
  out = RunToVector(*executable, ctx, {x});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToDoubles(wrong), std::vector<double>(64 * 32, 0.0));
}

TEST(JitProgramTest, OutputsOfKernelsThatCanStillFailAreNotInPlace) {
  // embedding's index check may fail: its output must stay unwritten until
  // the whole run succeeded.
  auto graph =
      OpGraph("aten.embedding.default", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
  const Tensor weight = RandomTensor(DType::kFloat32, {10, 4}, 2);
  Tensor indices = *Tensor::Zeros(DType::kInt64, {3});
  auto executable = CompileFor(graph, {weight, indices});
  ASSERT_NE(executable, nullptr);
  ASSERT_EQ(testing::EagerSteps(graph, {weight, indices}), 0);
  indices.data_as<int64_t>()[1] = 10;  // out of range
  Tensor dest = *Tensor::Zeros(DType::kFloat32, {3, 4});
  const Tensor* destinations[] = {&dest};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = RunToVector(*executable, ctx, {weight, indices});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToDoubles(dest), std::vector<double>(12, 0.0));
}

// r = relu(x) compiles; p = n ** 2 over int32 runs its reference kernel as
// an eager step of the program (integral power is not lowered), and `tail`
// follows it when given: embedding(w, p), a kernel with index checks.
std::shared_ptr<const Graph> EagerStepGraph(bool tail) {
  GraphBuilder b("eager_step");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("n").ok());
  testing::AddNode(b, "r", "aten.relu.default", {Arg::Ref("x")});
  testing::AddNode(b, "p", "aten.pow.Tensor_Scalar",
                   {Arg::Ref("n"), Arg::Int(2)});
  std::vector<Arg> outputs = {Arg::Ref("r"), Arg::Ref("p")};
  if (tail) {
    EXPECT_TRUE(b.AddPlaceholder("w").ok());
    testing::AddNode(b, "e", "aten.embedding.default",
                     {Arg::Ref("w"), Arg::Ref("p")});
    outputs.push_back(Arg::Ref("e"));
  }
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return testing::Finish(b);
}

TEST(JitProgramTest, EagerStepsWriteTheirOutputsIntoDestinations) {
  auto graph = EagerStepGraph(/*tail=*/false);
  const Tensor x = RandomTensor(DType::kFloat32, {16, 9}, 1);
  Tensor n = *Tensor::Zeros(DType::kInt32, {5, 7});
  for (int i = 0; i < 35; ++i) n.data_as<int32_t>()[i] = i % 11 - 5;
  ASSERT_EQ(testing::EagerSteps(graph, {x, n}), 1);
  auto executable = CompileFor(graph, {x, n});
  ASSERT_NE(executable, nullptr);
  EXPECT_THAT(executable->Describe(),
              ::testing::Not(::testing::HasSubstr("copied")));
  auto plain = RunToVector(*executable, {x, n});
  ASSERT_TRUE(plain.ok()) << plain.status();

  Tensor r = *Tensor::Zeros(DType::kFloat32, {16, 9});
  Tensor p = *Tensor::Zeros(DType::kInt32, {5, 7});
  const Tensor* destinations[] = {&r, &p};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = RunToVector(*executable, ctx, {x, n});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data(), r.data());
  EXPECT_EQ((*out)[1].data(), p.data());  // the reference kernel wrote it
  EXPECT_EQ(ToDoubles(r), ToDoubles((*plain)[0]));
  EXPECT_EQ(ToDoubles(p), ToDoubles((*plain)[1]));
  EXPECT_EQ(p.data_as<int32_t>()[0], 25);
  EXPECT_EQ(p.data_as<int32_t>()[4], 1);

  // A destination over the input the eager step reads is not written in
  // place: the result is a tensor to copy, with the same values.
  Tensor over_n = n;
  destinations[1] = &over_n;
  out = RunToVector(*executable, ctx, {x, n});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[1].data(), n.data());
  EXPECT_EQ(ToDoubles((*out)[1]), ToDoubles((*plain)[1]));

  // A stoppable call writes nothing before the run has finished.
  destinations[1] = &p;
  int32_t cancel = 0;
  ctx.cancel = &cancel;
  out = RunToVector(*executable, ctx, {x, n});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE((*out)[1].data(), p.data());
}

TEST(JitProgramTest, EagerStepOutputsFollowedByFallibleStepsAreCopied) {
  // embedding reads p and may still fail: p stays unwritten until then.
  auto graph = EagerStepGraph(/*tail=*/true);
  const Tensor x = RandomTensor(DType::kFloat32, {4, 3}, 1);
  Tensor n = *Tensor::Zeros(DType::kInt32, {6});
  for (int i = 0; i < 6; ++i) n.data_as<int32_t>()[i] = i % 3;
  const Tensor w = RandomTensor(DType::kFloat32, {5, 2}, 2);
  auto executable = CompileFor(graph, {x, n, w});
  ASSERT_NE(executable, nullptr);
  EXPECT_THAT(executable->Describe(),
              ::testing::HasSubstr("1 'p' (step 3 can still fail after it is "
                                   "written (a kernel with index checks))"));
  n.data_as<int32_t>()[5] = 3;  // 9 is out of range for 5 rows
  Tensor r = *Tensor::Zeros(DType::kFloat32, {4, 3});
  Tensor p = *Tensor::Zeros(DType::kInt32, {6});
  Tensor e = *Tensor::Zeros(DType::kFloat32, {6, 2});
  const Tensor* destinations[] = {&r, &p, &e};
  RunContext ctx;
  ctx.destinations = destinations;
  auto out = RunToVector(*executable, ctx, {x, n, w});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ToDoubles(p), std::vector<double>(6, 0.0));
  EXPECT_EQ(ToDoubles(e), std::vector<double>(12, 0.0));

  // cumsum's reference kernel allocates its result: explain says so.
  auto cumsum =
      OpGraph("aten.cumsum.default", {Arg::Ref("x0"), Arg::Int(0)}, 1);
  auto scan = CompileFor(cumsum, {x});
  ASSERT_NE(scan, nullptr);
  EXPECT_THAT(scan->Describe(), ::testing::HasSubstr("computed by eager node"));
  EXPECT_THAT(scan->Describe(),
              ::testing::HasSubstr("whose reference kernel allocates its "
                                   "results"));
}

// y = tanh(h @ w) * (h @ w) with h = relu(x): h = relu(x) is an intermediate
// that the pointwise kernel writes and the GEMM step reads, and p = h @ w feeds
// the epilogue; both live in the call's arena.
std::shared_ptr<const Graph> MlpGraph() {
  GraphBuilder b("mlp");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("w").ok());
  testing::AddNode(b, "h", "aten.relu.default", {Arg::Ref("x")});
  testing::AddNode(b, "p", "aten.mm.default", {Arg::Ref("h"), Arg::Ref("w")});
  testing::AddNode(b, "t", "aten.tanh.default", {Arg::Ref("p")});
  testing::AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("t"), Arg::Ref("p")});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  return testing::Finish(b);
}

TEST(JitProgramTest, IntermediatesLiveInTheCallsArena) {
  auto graph = MlpGraph();
  const Tensor x = RandomTensor(DType::kFloat32, {48, 40}, 1);
  const Tensor w = RandomTensor(DType::kFloat32, {40, 24}, 2);
  const Plan plan = testing::PlanOfInputs(*graph, {x, w});
  EXPECT_GE(plan.buffer_bytes.size(), 1u) << plan.ToString();
  auto executable = CompileFor(graph, {x, w});
  ASSERT_NE(executable, nullptr);
  EXPECT_THAT(executable->Describe(), ::testing::HasSubstr("-byte arena"));
  // The GEMM step's epilogue writes y straight into a destination (its slot
  // was planned for the eager mm the step replaced).
  EXPECT_THAT(executable->Describe(),
              ::testing::Not(::testing::HasSubstr("copied")));
  // Results equal eager's for other inputs too.
  for (int i = 0; i < 3; ++i) {
    testing::ExpectJitMatchesEager(
        graph, {RandomTensor(DType::kFloat32, {48, 40}, 10 + i), w});
  }
}

TEST(JitProgramTest, DynamicArenaGrowsAndShrinksWithTheCallsSizes) {
  auto graph = MlpGraph();
  std::vector<std::vector<Tensor>> calls;
  const Tensor w = RandomTensor(DType::kFloat32, {40, 24}, 2);
  // Small, the largest, then smaller again: the arena grows once and later
  // calls use a prefix of it.
  for (int64_t rows : {5, 64, 9, 64, 2, 33}) {
    calls.push_back({RandomTensor(DType::kFloat32, {rows, 40}, 100 + rows), w});
  }
  auto executable =
      testing::ExpectDynamicJitMatchesEager(graph, {DynamicDim{0, 0}}, calls);
  ASSERT_NE(executable, nullptr);
  EXPECT_THAT(executable->Describe(),
              ::testing::HasSubstr("buffers sized per call"));
}

TEST(JitProgramTest, ConcurrentCallsGetArenasOfTheirOwn) {
  auto graph = MlpGraph();
  const Tensor w = RandomTensor(DType::kFloat32, {40, 24}, 2);
  constexpr int kThreads = 8;
  std::vector<Tensor> xs;
  std::vector<std::vector<double>> expected;
  auto executable =
      CompileFor(graph, {RandomTensor(DType::kFloat32, {48, 40}, 1), w});
  ASSERT_NE(executable, nullptr);
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(RandomTensor(DType::kFloat32, {48, 40}, 1000 + t));
    auto out = RunToVector(*executable, {xs.back(), w});
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(ToDoubles((*out)[0]));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto out = RunToVector(*executable, {xs[t], w});
        if (!out.ok() || ToDoubles((*out)[0]) != expected[t]) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(kThreads, 0));
}

TEST(JitProgramTest, DescribeNamesEachOutputThatIsCopied) {
  GraphBuilder b("outs");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "r", "aten.relu.default", {Arg::Ref("x")});
  testing::AddNode(b, "e", "aten.exp.default", {Arg::Ref("x")});
  EXPECT_TRUE(
      b.SetOutputs({Arg::Ref("r"), Arg::Ref("x"), Arg::Ref("e"), Arg::Ref("e")})
          .ok());
  auto graph = testing::Finish(b);
  const Tensor x = RandomTensor(DType::kFloat32, {8, 5}, 1);
  auto executable = CompileFor(graph, {x});
  ASSERT_NE(executable, nullptr);
  const std::string text = executable->Describe();
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "outputs copied: 1 'x' (a view of input 0 ('x')), "
                        "2 'e' (the same memory as output 3), "
                        "3 'e' (the same memory as output 2)"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("0 'r'")));

  // A GEMM step writes the addmm's own value (a slot planned for the eager
  // node it replaced) straight into the destination.
  GraphBuilder g("addmm");
  EXPECT_TRUE(g.AddPlaceholder("bias").ok());
  EXPECT_TRUE(g.AddPlaceholder("a").ok());
  EXPECT_TRUE(g.AddPlaceholder("b").ok());
  testing::AddNode(g, "y", "aten.addmm.default",
                   {Arg::Ref("bias"), Arg::Ref("a"), Arg::Ref("b")});
  EXPECT_TRUE(g.SetOutputs({Arg::Ref("y")}).ok());
  auto addmm = CompileFor(testing::Finish(g),
                          {RandomTensor(DType::kFloat32, {6}, 2),
                           RandomTensor(DType::kFloat32, {4, 5}, 3),
                           RandomTensor(DType::kFloat32, {5, 6}, 4)});
  ASSERT_NE(addmm, nullptr);
  EXPECT_THAT(addmm->Describe(), ::testing::HasSubstr("0 eager nodes"));
  EXPECT_THAT(addmm->Describe(),
              ::testing::Not(::testing::HasSubstr("copied")));

  // A graph whose outputs are all written in place says nothing of copies.
  auto single = OpGraph("aten.exp.default", {Arg::Ref("x0")}, 1);
  auto plain = CompileFor(single, {x});
  ASSERT_NE(plain, nullptr);
  EXPECT_THAT(plain->Describe(),
              ::testing::Not(::testing::HasSubstr("copied")));
}

// The host backend, with each MakeStepRunner call noted (its kernel index
// and thread) and held until another call is in flight beside it: calls
// made on the pool's threads at once meet; calls made one after another
// never do (the first gives up waiting after `kPatience`, and no later one
// waits).
class MeetingBackend : public LlvmKernelBackend {
 public:
  explicit MeetingBackend(std::shared_ptr<KernelCompiler> compiler)
      : LlvmKernelBackend(std::move(compiler)) {}

  absl::StatusOr<std::unique_ptr<const StepRunner>> MakeStepRunner(
      const PlanStep& step, const Graph& graph,
      std::shared_ptr<const KernelModule> module, int index,
      const std::shared_ptr<ThreadPool>& pool) const override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      indices_.push_back(index);
      threads_.insert(std::this_thread::get_id());
      ++in_flight_;
      if (in_flight_ >= 2) met_ = true;
      cv_.notify_all();
      if (!met_ && !gave_up_ &&
          !cv_.wait_for(lock, kPatience, [&] { return met_; })) {
        gave_up_ = true;
      }
    }
    auto runner = LlvmKernelBackend::MakeStepRunner(
        step, graph, std::move(module), index, pool);
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
    return runner;
  }

  bool met() const {
    std::lock_guard<std::mutex> lock(mu_);
    return met_;
  }
  std::vector<int> indices() const {
    std::lock_guard<std::mutex> lock(mu_);
    return indices_;
  }
  size_t threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_.size();
  }

 private:
  static constexpr std::chrono::seconds kPatience{20};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable int in_flight_ = 0;
  mutable bool met_ = false, gave_up_ = false;
  mutable std::vector<int> indices_;
  mutable std::set<std::thread::id> threads_;
};

// A host program's step runners (oneDNN primitives, packed weights: most of
// a warm start) are made on the compiler's pool at once, and each lands on
// its own step. Four convolutions of different shapes and weights, each
// with a sigmoid (an epilogue kernel: a relu between two convolutions would
// be the library's loop, jit/steps/pointwise_epilogue.h, without one), on a
// 4-thread pool, against the eager interpreter.
TEST(JitProgramTest, StepRunnersMadeOnPoolThreadsRunTheirOwnSteps) {
  GraphBuilder b("conv_chain");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  const int64_t channels[] = {3, 8, 16, 12, 5};
  std::string value = "x";
  for (int l = 0; l < 4; ++l) {
    const std::string w = absl::StrCat("w", l), bias = absl::StrCat("b", l);
    EXPECT_TRUE(
        b.AddConstant(w, RandomTensor(DType::kFloat32,
                                      {channels[l + 1], channels[l], 3, 3},
                                      10 + l, -0.3, 0.3))
            .ok());
    EXPECT_TRUE(b.AddConstant(bias, RandomTensor(DType::kFloat32,
                                                 {channels[l + 1]}, 20 + l))
                    .ok());
    const std::string conv = absl::StrCat("conv", l);
    testing::AddNode(b, conv, "aten.convolution.default",
                     {Arg::Ref(value), Arg::Ref(w), Arg::Ref(bias),
                      testing::Ints({l % 2 + 1, l % 2 + 1}),
                      testing::Ints({1, 1}), testing::Ints({1, 1}),
                      Arg::Bool(false), testing::Ints({0, 0}), Arg::Int(1)});
    value = absl::StrCat("sigmoid", l);
    testing::AddNode(b, value, "aten.sigmoid.default", {Arg::Ref(conv)});
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(value)}).ok());
  const std::shared_ptr<const Graph> graph = testing::Finish(b);
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3, 20, 20}, 1);

  auto kernels = KernelCompiler::Create();
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  auto backend = std::make_shared<MeetingBackend>(*std::move(kernels));
  JitCompiler::Options options;
  options.num_threads = 4;
  options.fail_instead_of_eager = true;
  options.kernel_backend = backend;
  auto jit = JitCompiler::Create(options);
  ASSERT_TRUE(jit.ok()) << jit.status();
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  auto compiled = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string text = (*compiled)->Describe();
  EXPECT_THAT(text, ::testing::HasSubstr("0 eager nodes"));
  for (int l = 0; l < 4; ++l) {
    EXPECT_THAT(text, ::testing::HasSubstr(absl::StrCat(
                          "'conv", l, "' (aten.convolution.default)")));
  }
  EXPECT_TRUE(backend->met()) << "the runners were made one after another";
  EXPECT_GE(backend->threads(), 2u);
  std::vector<int> indices = backend->indices();
  std::sort(indices.begin(), indices.end());
  EXPECT_THAT(indices, ::testing::ElementsAre(0, 1, 2, 3));

  auto eager = EagerCompiler().Compile(graph, spec);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = RunToVector(**eager, {x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (int call = 0; call < 2; ++call) {
    auto out = RunToVector(**compiled, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].sizes(), (*expected)[0].sizes());
    const std::vector<double> got = ToDoubles((*out)[0]);
    const std::vector<double> want = ToDoubles((*expected)[0]);
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << i;
    }
  }
}

// A product written straight to its output (BLAS, oneDNN or a packed
// product's code into the
// destination: "writing its result") never runs its bare-store epilogue, so
// that kernel is not compiled: of `bare = x @ w0` and `act = sigmoid(x @
// w1)` only the sigmoid epilogue is (a relu would be the library's loop
// after a packed product: pointwise_epilogue.h). Both still match the
// eager interpreter.
TEST(JitProgramTest, BareProductsCompileNoKernel) {
  GraphBuilder b("bare_and_relu");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(
      b.AddConstant("w0", RandomTensor(DType::kFloat32, {48, 40}, 2)).ok());
  EXPECT_TRUE(
      b.AddConstant("w1", RandomTensor(DType::kFloat32, {48, 24}, 3)).ok());
  testing::AddNode(b, "bare", "aten.mm.default",
                   {Arg::Ref("x"), Arg::Ref("w0")});
  testing::AddNode(b, "p1", "aten.mm.default", {Arg::Ref("x"), Arg::Ref("w1")});
  testing::AddNode(b, "act", "aten.sigmoid.default", {Arg::Ref("p1")});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("bare"), Arg::Ref("act")}).ok());
  const std::shared_ptr<const Graph> graph = testing::Finish(b);
  const Tensor x = RandomTensor(DType::kFloat32, {8, 48}, 1);

  auto kernels = KernelCompiler::Create();
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  std::shared_ptr<KernelCompiler> compiler = *std::move(kernels);
  JitCompiler::Options options;
  options.fail_instead_of_eager = true;
  options.kernel_backend = std::make_shared<LlvmKernelBackend>(compiler);
  auto jit = JitCompiler::Create(options);
  ASSERT_TRUE(jit.ok()) << jit.status();
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  auto compiled = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  const std::string text = (*compiled)->Describe();
  EXPECT_THAT(text, ::testing::HasSubstr("writing its result"));
  EXPECT_THAT(text, ::testing::HasSubstr("with an epilogue kernel"));
  // Each product is also a packed product where those are on
  // (jit/steps/packed_gemm.h): a kernel more each where its code is
  // generated ("LLVM kernel"), none on the library's ahead-of-time tiles;
  // still no bare store.
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos;
         at = text.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  const int generated = count("LLVM kernel");
  if (PackedGemmEnabled()) {
    EXPECT_EQ(generated + count("ahead-of-time kernel"), 2) << text;
  }
  EXPECT_EQ(compiler->cache_stats().compiles, 1 + generated) << text;

  auto eager = EagerCompiler().Compile(graph, spec);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = RunToVector(**eager, {x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto out = RunToVector(**compiled, {x});
  ASSERT_TRUE(out.ok()) << out.status();
  for (int o = 0; o < 2; ++o) {
    const std::vector<double> got = ToDoubles((*out)[o]);
    const std::vector<double> want = ToDoubles((*expected)[o]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i])))
          << "output " << o << " element " << i;
    }
  }
}

}  // namespace
}  // namespace guardjit
