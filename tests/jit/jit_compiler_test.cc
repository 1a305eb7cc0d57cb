#include "jit/jit_compiler.h"

#include <thread>
#include <vector>

#include "core/graph_builder.h"
#include "core/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::OpGraph;
using testing::RandomTensor;
using testing::SharedJit;

std::shared_ptr<const Graph> AddGraph() {
  return OpGraph("aten.add.Tensor", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
}

TEST(JitCompilerTest, ZeroDimAndEmptyTensors) {
  ExpectJitMatchesEager(AddGraph(), {RandomTensor(DType::kFloat32, {}, 1),
                                     RandomTensor(DType::kFloat32, {}, 2)});
  ExpectJitMatchesEager(AddGraph(), {RandomTensor(DType::kFloat32, {0, 5}, 1),
                                     RandomTensor(DType::kFloat32, {5}, 2)});
  auto sum = OpGraph(
      "aten.sum.dim_IntList",
      {Arg::Ref("x0"), Arg::OfList({Arg::Int(1)}), Arg::Bool(false)}, 1);
  ExpectJitMatchesEager(sum, {RandomTensor(DType::kFloat32, {3, 0, 4}, 3)});
  auto softmax = OpGraph("aten._softmax.default",
                         {Arg::Ref("x0"), Arg::Int(0), Arg::Bool(false)}, 1);
  ExpectJitMatchesEager(softmax, {RandomTensor(DType::kFloat64, {}, 4)});
}

// float16 compiles: loaded, computed in float32, rounded when stored.
TEST(JitCompilerTest, HalfPrecisionNodesCompile) {
  GraphBuilder b("mixed");
  ASSERT_TRUE(b.AddPlaceholder("h").ok());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("hh", "aten.mul.Tensor", {Arg::Ref("h"), Arg::Ref("h")}).ok());
  ASSERT_TRUE(b.AddNode("f", "aten._to_copy.default", {Arg::Ref("hh")},
                        {{"dtype", Arg::OfDType(DType::kFloat32)}})
                  .ok());
  ASSERT_TRUE(
      b.AddNode("y", "aten.add.Tensor", {Arg::Ref("f"), Arg::Ref("x")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y"), Arg::Ref("hh")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  const std::vector<Tensor> inputs = {RandomTensor(DType::kFloat16, {6, 4}, 1),
                                      RandomTensor(DType::kFloat32, {4}, 2)};
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto plan = SharedJit().PlanFor(*graph, spec);
  ASSERT_TRUE(plan.ok()) << plan.status();
  int eager = 0;
  for (const PlanStep& s : plan->steps) eager += !s.is_kernel;
  EXPECT_EQ(eager, 0);
  // y reads h * h unrounded (eager rounds it to float16 first): one
  // float16 rounding apart.
  ExpectJitMatchesEager(graph, inputs, 2e-3);
}

TEST(JitCompilerTest, DescribeCountsKernelsAndEagerNodes) {
  auto exe = SharedJit().Compile(
      AddGraph(), {{{DType::kFloat32, {4}}, {DType::kFloat32, {4}}}});
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->Describe(), "jit: 1 fused kernels, 0 eager nodes");
  EXPECT_EQ(SharedJit().name(), "jit");
}

TEST(JitCompilerTest, RunIsThreadSafeAcrossLayouts) {
  auto graph = OpGraph("aten._softmax.default",
                       {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(false)}, 1);
  const Tensor x = RandomTensor(DType::kFloat32, {64, 300}, 9);
  const Tensor strided = testing::NonContiguousCopy(x);
  auto exe = SharedJit().Compile(graph, {{TensorMeta::Of(x)}});
  ASSERT_TRUE(exe.ok()) << exe.status();
  // Each layout has its own kernel (and summation order): compare each with
  // its own first result.
  std::vector<double> want[2];
  for (int layout = 0; layout < 2; ++layout) {
    auto expected = RunToVector(**exe, {layout ? strided : x});
    ASSERT_TRUE(expected.ok());
    want[layout] = testing::ToDoubles((*expected)[0]);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int layout = (t + i) % 2;
        auto out = RunToVector(**exe, {layout ? strided : x});
        if (!out.ok() || testing::ToDoubles((*out)[0]) != want[layout]) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(JitCompilerTest, WrongInputCountIsAnError) {
  auto exe = SharedJit().Compile(
      AddGraph(), {{{DType::kFloat32, {4}}, {DType::kFloat32, {4}}}});
  ASSERT_TRUE(exe.ok());
  auto out = RunToVector(**exe, {RandomTensor(DType::kFloat32, {4}, 1)});
  EXPECT_FALSE(out.ok());
}

TEST(JitCompilerTest, CodegenLogShowsThePlanAndEagerNodes) {
  std::string log;
  SetLogTopics("codegen");
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    if (topic == LogTopic::kCodegen) log += std::string(message);
  });
  // Adaptive average pooling has a reference kernel and no lowering.
  auto exe = SharedJit().Compile(
      OpGraph("aten._adaptive_avg_pool2d.default",
              {Arg::Ref("x0"), Arg::OfList({Arg::Int(2), Arg::Int(2)})}, 1),
      {{{DType::kFloat32, {1, 2, 4, 4}}}});
  SetLogSink(nullptr);
  SetLogTopics("");
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_THAT(log, HasSubstr("0 kernels"));
  EXPECT_THAT(
      log,
      HasSubstr("op (aten._adaptive_avg_pool2d.default): no JIT lowering"));
}

// A product the GEMM step runs (with its relu epilogue) is not listed as an
// eager node.
TEST(JitCompilerTest, CodegenLogListsOnlyNodesThatStayEager) {
  GraphBuilder b("mm_relu");
  ASSERT_TRUE(b.AddPlaceholder("a").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(
      b.AddNode("mm", "aten.mm.default", {Arg::Ref("a"), Arg::Ref("w")}).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("mm")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  std::string log;
  SetLogTopics("codegen");
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    if (topic == LogTopic::kCodegen) log += std::string(message);
  });
  auto exe = SharedJit().Compile(
      graph, {{{DType::kFloat32, {64, 32}}, {DType::kFloat32, {32, 48}}}});
  SetLogSink(nullptr);
  SetLogTopics("");
  ASSERT_TRUE(exe.ok());
  EXPECT_THAT(log, HasSubstr("gemm"));
  EXPECT_THAT(log, Not(HasSubstr("eager nodes")));
  EXPECT_THAT(log, Not(HasSubstr("mm (aten.mm.default)")));
}

// A compiler with its own pool runs its programs' parallel loops there, not
// on the process's global pool.
TEST(JitCompilerTest, ProgramsRunOnTheCompilersThreadPool) {
  EXPECT_EQ(JitCompiler::Create({.num_threads = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
  for (int threads : {1, 3}) {
    auto jit = JitCompiler::Create({.num_threads = threads});
    ASSERT_TRUE(jit.ok()) << jit.status();
    EXPECT_EQ((*jit)->thread_pool().num_threads(), threads);
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {512, 1024}, 1),
        RandomTensor(DType::kFloat32, {1024}, 2)};
    Specialization spec;
    for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
    auto exe = (*jit)->Compile(AddGraph(), spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    const uint64_t global_before = ThreadPool::Global().parallel_loops();
    auto out = RunToVector(**exe, inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*jit)->thread_pool().parallel_loops(), threads > 1 ? 1u : 0u);
    EXPECT_EQ(ThreadPool::Global().parallel_loops(), global_before);
    auto eager = EagerInterpreter::Create(AddGraph());
    ASSERT_TRUE(eager.ok());
    auto want = (*eager)->Run(inputs);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(testing::ToDoubles((*out)[0]), testing::ToDoubles((*want)[0]));
  }
}

TEST(JitCompilerTest, FallbackIsTheEagerInterpreter) {
  auto exe = SharedJit().Fallback(AddGraph());
  ASSERT_TRUE(exe.ok());
  EXPECT_THAT((*exe)->Describe(), HasSubstr("eager"));
}

// Issue #19 item 4: many distinct graphs compiled and dropped (a server
// loading models over time) leave at most the kernel cache's code loaded.
TEST(JitCompilerTest, DroppedExecutablesReleaseTheirCode) {
  auto jit = JitCompiler::Create({.max_cached_kernels = 8});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const Tensor x = RandomTensor(DType::kFloat32, {64}, 1);
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Executable>> live;
    for (int g = 0; g < 40; ++g) {
      // x * (round * 40 + g): a distinct kernel each.
      auto graph =
          OpGraph("aten.mul.Tensor",
                  {Arg::Ref("x0"), Arg::Float(round * 40 + g + 0.5)}, 1);
      auto exe = (*jit)->Compile(graph, spec);
      ASSERT_TRUE(exe.ok()) << exe.status();
      ASSERT_TRUE(RunToVector(**exe, {x}).ok());
      live.push_back(*std::move(exe));
    }
    // The cache keeps 8 of the 40 live modules (the older ones evicted).
    EXPECT_EQ((*jit)->kernels().live_modules(), 40) << "round " << round;
    live.clear();
    EXPECT_EQ((*jit)->kernels().live_modules(), 8) << "round " << round;
  }
  EXPECT_EQ(JitCompiler::Create({.max_cached_kernels = -1}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Issue #13: a transposed input compiled a contiguous program at compile
// time and the one it needed inside Run, invisible to stats.
TEST(JitCompilerTest, TheEntrysLayoutIsCompiledOnceAtCompileTime) {
  auto jit = JitCompiler::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  const Tensor base = RandomTensor(DType::kFloat32, {48, 32}, 4);
  const Tensor transposed = base.AsStrided({32, 48}, {1, 32});
  const Tensor y = RandomTensor(DType::kFloat32, {32, 48}, 5);
  Specialization spec;
  for (const Tensor& t : {transposed, y}) {
    spec.inputs.push_back(TensorMeta::Of(t));
    spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    spec.example_strides.emplace_back(t.strides().begin(), t.strides().end());
  }
  auto exe = (*jit)->Compile(AddGraph(), spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const int compiled = (*jit)->kernels().compiled();
  EXPECT_EQ(compiled, 1);
  auto out = RunToVector(**exe, {transposed, y});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*jit)->kernels().compiled(), compiled);  // nothing in Run
  EXPECT_THAT((*exe)->Describe(), Not(HasSubstr("variants")));
  ExpectJitMatchesEager(AddGraph(), {transposed, y}, -1, nullptr);
  // A contiguous call the same metas accept (the function's guards would
  // send it to an entry of its own) compiles nothing: it runs on the
  // reference kernels, counted, with the right values.
  const Tensor contiguous = *Contiguous(transposed);
  auto again = RunToVector(**exe, {contiguous, y});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*jit)->kernels().compiled(), compiled);
  EXPECT_THAT((*exe)->Describe(),
              HasSubstr("1 calls in a layout it was not planned for ran on "
                        "the reference kernels"));
  testing::ExpectTensor((*again)[0], DType::kFloat32, (*out)[0].sizes(),
                        testing::ToDoubles((*out)[0]), 1e-6, 1e-6);
}

}  // namespace
}  // namespace guardjit
