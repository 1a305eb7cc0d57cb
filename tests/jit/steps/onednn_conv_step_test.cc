// The runner of oneDNN convolution steps (jit/steps/onednn_conv_step.cc):
// convolutions cut into parts across the pool (rows of each image, ranges
// of images, ranges of output channel blocks), the input's reorder cut into
// rows, epilogues run in place or per part, primitives per batch size of a
// dynamic entry, concurrent calls, and the OpenMP threads its calls start
// or leave alone, each against the eager interpreter. ctest runs these at
// 1 and 3 threads too (jit_gemm_threads_*).

#include <dirent.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/onednn_conv.h"
#include "runtime/eager_interpreter.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/steps/onednn_conv_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::onednn::AddConv2d;
using testing::onednn::AddWeight;
using testing::onednn::ConvNet;
using testing::onednn::Layer;
using testing::onednn::List;
using testing::onednn::OneDnnConvTest;
using testing::onednn::OneDnnSteps;
using testing::onednn::ResultBlocks;
using testing::onednn::ScopedLayout;

// Large enough to be cut into parts across the pool (ctest runs this suite
// at 1, 2 and 3 threads): rows of each image at batch 1 (each part with its
// own padding at its ends: odd row counts, strides, dilation, 3-D), ranges
// of images at larger batches.
TEST_F(OneDnnConvTest, ConvolutionsCutIntoPartsMatchEager) {
  const auto rows = ConvNet(
      2, 16, {{32, 5, 2, 2}, {32, 3, 1, 2, 1, 2}, {32, 3, 1, 1, 32}, {48, 1}});
  for (int64_t batch : {1, 2, 5}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {batch, 16, 45, 23}, 30 + batch)};
    EXPECT_EQ(OneDnnSteps(PlanOfInputs(*rows, inputs)), 4);
    ExpectJitMatchesEager(rows, inputs, 1e-4);
  }
  const auto conv3d = ConvNet(3, 8, {{16, 3, 2, 1}, {16, 3, 1, 1}});
  const std::vector<Tensor> x3 = {
      RandomTensor(DType::kFloat32, {1, 8, 11, 12, 13}, 40)};
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*conv3d, x3)), 2);
  ExpectJitMatchesEager(conv3d, x3, 1e-4);
}

// A 1x1 convolution of stride 2 padded by 4 over a one-row input: its 5
// output rows, cut into a part per thread ([0, 2) of two, [0, 1) of three),
// give a part whose window lies in the padding alone
// (onednn_primitives_test.cc), which no primitive takes; the convolution
// then runs whole. Its result is channels last for the next one.
TEST_F(OneDnnConvTest, PartsOfPaddingRowsAloneRunWhole) {
  const auto net = ConvNet(2, 96, {{96, 1, 2, 4}, {16, 3, 1, 1}});
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {1, 96, 1, 64}, 31)};
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*net, inputs)), 2);
  ExpectJitMatchesEager(net, inputs, 1e-4);
}

// An inverted residual (mobilenet_v2's block): expand 1x1 -> relu6 ->
// depthwise 3x3 -> relu6 -> project 1x1 + the block's input. Each epilogue
// stores its result at the element it reads oneDNN's from (channels last
// between the convolutions), so oneDNN writes into the epilogue's output and
// the epilogue updates it in place: the library's pointwise loop for the
// relu6s (pointwise_epilogue.h), their kernels with
// GJ_POINTWISE_EPILOGUES=0; a result the graph outputs (contiguous, the
// epilogue transposes it) goes to scratch. ctest runs this at 1, 2 and 3
// threads: at batch 1 a part of rows and its epilogue run on one thread.
// NaN and infinities in the input come out as the eager kernels' (relu6 of
// NaN is NaN, where an activation fused into oneDNN would give 0).
TEST_F(OneDnnConvTest, EpiloguesUpdateTheirOutputInPlace) {
  GraphBuilder b("inverted_residual");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddWeight(b, "w0", {16, 3, 3, 3}, 1);
  AddWeight(b, "w1", {64, 16, 1, 1}, 2);
  AddWeight(b, "w2", {64, 1, 3, 3}, 3);
  AddWeight(b, "w3", {16, 64, 1, 1}, 4);
  AddConv2d(b, "stem", "x", "w0", 1);
  const auto relu6 = [&](const std::string& name, const std::string& x) {
    testing::AddNode(b, name, "aten.hardtanh.default",
                     {Arg::Ref(x), Arg::Float(0), Arg::Float(6)});
  };
  relu6("s", "stem");
  AddConv2d(b, "expand", "s", "w1", 0);
  relu6("e", "expand");
  testing::AddNode(
      b, "depthwise", "aten.convolution.default",
      {Arg::Ref("e"), Arg::Ref("w2"), Arg::None(), List(2, 1), List(2, 1),
       List(2, 1), Arg::Bool(false), List(2, 0), Arg::Int(64)});
  relu6("d", "depthwise");
  AddConv2d(b, "project", "d", "w3", 0);
  testing::AddNode(b, "out", "aten.add.Tensor",
                   {Arg::Ref("project"), Arg::Ref("s")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  const auto graph = testing::Finish(b);
  const char* env = std::getenv("GJ_POINTWISE_EPILOGUES");
  const std::string saved = env != nullptr ? env : "";
  const bool enabled = PointwiseEpiloguesEnabled();
  for (int64_t batch : {1, 2, -1, -2}) {
    // Negative: the same batch with compiled epilogue kernels.
    const bool library = batch > 0 && enabled;
    if (batch < 0) {
      batch = -batch;
      ::setenv("GJ_POINTWISE_EPILOGUES", "0", 1);
    }
    SCOPED_TRACE(absl::StrCat("batch ", batch,
                              library ? "" : ", GJ_POINTWISE_EPILOGUES=0"));
    std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {batch, 3, 40, 36}, 50 + batch, -2, 2)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    ASSERT_EQ(OneDnnSteps(plan), 4) << plan.ToString();
    std::vector<std::string> in_place, pointwise;
    for (const PlanStep& step : plan.steps) {
      if (step.conv == nullptr) continue;
      if (step.conv->onednn->in_place_param >= 0) {
        in_place.push_back(graph->node(step.node).name);
      }
      if (step.conv->onednn->pointwise.has_value()) {
        pointwise.push_back(graph->node(step.node).name);
        EXPECT_EQ(step.conv->onednn->pointwise->ToString(), "clamp to [0, 6]");
        EXPECT_FALSE(HostStepRunsKernel(step));
      }
    }
    EXPECT_THAT(library ? pointwise : in_place,
                ::testing::UnorderedElementsAre("stem", "expand", "depthwise"))
        << plan.ToString();
    EXPECT_THAT(library ? in_place : pointwise, ::testing::IsEmpty());
    ExpectJitMatchesEager(graph, inputs, 1e-4);
    float* x = inputs[0].data_as<float>();
    x[7] = NAN;
    x[3 * 40 * 36 - 1] = INFINITY;
    x[40 * 36 + 100] = -INFINITY;
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
  if (env != nullptr) {
    ::setenv("GJ_POINTWISE_EPILOGUES", saved.c_str(), 1);
  } else {
    ::unsetenv("GJ_POINTWISE_EPILOGUES");
  }
}

// oneDNN runs on libgomp, as torch does: a call runs its primitives with one
// OpenMP thread each but leaves the calling thread's OpenMP setting as the
// host had it (torch.compile guards on torch.get_num_threads()).
TEST_F(OneDnnConvTest, CallsLeaveTheHostsOpenMpThreadCountAlone) {
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(gomp, nullptr) << "libdnnl's libgomp is not loaded";
  const auto set = reinterpret_cast<SetFn>(dlsym(gomp, "omp_set_num_threads"));
  const auto get = reinterpret_cast<GetFn>(dlsym(gomp, "omp_get_max_threads"));
  ASSERT_NE(set, nullptr);
  ASSERT_NE(get, nullptr);
  const int before = get();
  set(5);
  const auto graph = ConvNet(2, 16, {{32, 3, 1, 1}, {32, 1}});
  for (int64_t batch : {1, 4}) {
    ExpectJitMatchesEager(
        graph, {RandomTensor(DType::kFloat32, {batch, 16, 20, 20}, batch)},
        1e-4);
    EXPECT_EQ(get(), 5) << "batch " << batch;
  }
  set(before);
  dlclose(gomp);
}

// The number of threads this process has now (/proc/self/task).
int ProcessThreads() {
  int n = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(dir)) n += e->d_name[0] != '.';
    closedir(dir);
  }
  return n;
}

// oneDNN fixes a convolution's thread count when the primitive is created
// (brgconv reads omp_get_max_threads() then), not when it runs: primitives
// created at the host's OpenMP count and run on a one-thread program started
// an OpenMP team of the host's size on every call, whose spinning barrier
// cost a 1-thread convnet 3x on a loaded 2-core machine. Programs on a pool
// of one thread start no thread at all, whatever the host's OpenMP count.
TEST_F(OneDnnConvTest, OneThreadProgramsStartNoOpenMpTeam) {
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(gomp, nullptr) << "libdnnl's libgomp is not loaded";
  const auto set = reinterpret_cast<SetFn>(dlsym(gomp, "omp_set_num_threads"));
  const auto get = reinterpret_cast<GetFn>(dlsym(gomp, "omp_get_max_threads"));
  ASSERT_NE(set, nullptr);
  ASSERT_NE(get, nullptr);
  const int before = get();
  set(4);
  auto jit = JitCompiler::Create({.num_threads = 1});
  ASSERT_TRUE(jit.ok()) << jit.status();
  // A whole-batch convolution (too small to cut into parts) and a blocked
  // one (3 input channels), as a convnet's first layers are.
  const auto graph = ConvNet(2, 3, {{32, 3, 1, 1}, {64, 3, 1, 1}});
  const Tensor x = RandomTensor(DType::kFloat32, {8, 3, 16, 16}, 60);
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  spec.example_sizes.emplace_back(x.sizes().begin(), x.sizes().end());
  spec.example_strides.emplace_back(x.strides().begin(), x.strides().end());
  // Kernels compile on the process's pool (its threads start with it).
  ThreadPool::Global();
  const int threads_before = ProcessThreads();
  auto exe = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*graph, {x})), 2);
  for (int i = 0; i < 3; ++i) {
    auto out = RunToVector(**exe, {x});
    ASSERT_TRUE(out.ok()) << out.status();
  }
  EXPECT_EQ(ProcessThreads(), threads_before)
      << "a call of a one-thread program started threads";
  set(before);
  dlclose(gomp);
}

// Runs convolutions of `channels` channels over `size` x `size` images of
// batch 1 on a 2-thread program, their results in `layout`
// (GJ_ONEDNN_LAYOUT), and exits with status 0 when no thread was started by
// the calls, 1 otherwise (a child process: an OpenMP team, once started,
// stays for the life of the process).
void RunConvolutionsAndExit(const char* layout, int64_t channels,
                            int64_t size) {
  using SetFn = void (*)(int);
  void* gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (gomp == nullptr) {
    std::fprintf(stderr, "libdnnl's libgomp is not loaded\n");
    std::_Exit(2);
  }
  reinterpret_cast<SetFn>(dlsym(gomp, "omp_set_num_threads"))(4);
  setenv("GJ_ONEDNN_LAYOUT", layout, 1);
  auto jit = JitCompiler::Create({.num_threads = 2});
  const auto graph =
      ConvNet(2, channels, {{2 * channels, 3, 1, 1}, {2 * channels, 3, 1, 1}});
  // The graph's input is contiguous: the first convolution reorders it.
  const Tensor x = RandomTensor(DType::kFloat32, {1, channels, size, size}, 61);
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  spec.example_sizes.emplace_back(x.sizes().begin(), x.sizes().end());
  spec.example_strides.emplace_back(x.strides().begin(), x.strides().end());
  ThreadPool::Global();
  auto exe = (*jit)->Compile(graph, spec);
  if (!exe.ok() || OneDnnSteps(PlanOfInputs(*graph, {x})) != 2) {
    std::fprintf(stderr, "no oneDNN steps: %s\n",
                 exe.status().ToString().c_str());
    std::_Exit(2);
  }
  const int threads_before = ProcessThreads();
  for (int i = 0; i < 3; ++i) {
    if (!RunToVector(**exe, {x}).ok()) std::_Exit(2);
  }
  const int threads_after = ProcessThreads();
  std::fprintf(stderr, "threads before the calls %d, after %d\n",
               threads_before, threads_after);
  std::_Exit(threads_after == threads_before ? 0 : 1);
}

// Convolutions too small to cut into parts run on the calling thread, not on
// an OpenMP team of the pool's size: the team's threads spun after every
// region on the cores the pool's workers needed (mobilenet_v2 at 2 threads
// was slower than at 1).
TEST_F(OneDnnConvTest, SmallConvolutionsOnTwoThreadsStartNoOpenMpTeam) {
  // Re-executed from scratch: the tests before it may have started a team.
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  // Batch 1, 16 x 8 x 8 x 8 x 9 multiply-adds per convolution: one part.
  EXPECT_EXIT(RunConvolutionsAndExit("channels_last", 8, 8),
              ::testing::ExitedWithCode(0), "threads before the calls");
}

// Convolutions cut into parts on the pool, channels last and blocked, whose
// inputs oneDNN reorders on the calling thread (the graph's contiguous input
// into either layout; channels-last activations into blocks): the reorders
// ran on a team of the host's OpenMP size, fixed when they were created,
// whose spinning threads took a core from the pool's (resnet18's blocked
// convolutions at two threads were no faster than at one).
TEST_F(OneDnnConvTest, ReorderedInputsOnTwoThreadsStartNoOpenMpTeam) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  for (const char* layout : {"channels_last", "blocked"}) {
    SCOPED_TRACE(layout);
    EXPECT_EXIT(RunConvolutionsAndExit(layout, 16, 40),
                ::testing::ExitedWithCode(0), "threads before the calls");
  }
}

TEST_F(OneDnnConvTest, StridedInputsAreReorderedFromTheirStrides) {
  const auto graph = ConvNet(2, 16, {{16, 3, 1, 1}});
  const Tensor x = RandomTensor(DType::kFloat32, {2, 16, 9, 9}, 6);
  ExpectJitMatchesEager(graph, {testing::NonContiguousCopy(x)}, 1e-4);
  // Every other image of a larger batch.
  const Tensor big = RandomTensor(DType::kFloat32, {4, 16, 9, 9}, 7);
  Shape strides(big.strides().begin(), big.strides().end());
  strides[0] *= 2;
  ExpectJitMatchesEager(graph, {big.AsStrided(x.sizes(), strides, 0)}, 1e-4);
}

TEST_F(OneDnnConvTest, DynamicBatchBuildsAPrimitivePerBatchSize) {
  const auto graph = ConvNet(2, 8, {{16, 3, 1, 1}, {24, 3, 2, 1}});
  std::vector<std::vector<Tensor>> calls;
  // Batches of 2 and up: an entry specializes a batch of 1 apart.
  for (int64_t batch : {2, 5, 3, 2, 7}) {
    calls.push_back({RandomTensor(DType::kFloat32, {batch, 8, 10, 10}, batch)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 1e-4);
}

TEST_F(OneDnnConvTest, ConcurrentCallsOfOneProgramMatchEager) {
  const auto graph = ConvNet(2, 16, {{32, 3, 1, 1}, {32, 3, 1, 1, 32}});
  Specialization spec;
  const Tensor example = RandomTensor(DType::kFloat32, {2, 16, 10, 10}, 10);
  spec.inputs.push_back(TensorMeta::Of(example));
  spec.example_sizes.emplace_back(example.sizes().begin(),
                                  example.sizes().end());
  spec.example_strides.emplace_back(example.strides().begin(),
                                    example.strides().end());
  auto executable = testing::SharedJit().Compile(graph, spec);
  ASSERT_TRUE(executable.ok()) << executable.status();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  std::vector<std::vector<Tensor>> inputs, expected;
  for (int t = 0; t < 4; ++t) {
    inputs.push_back({RandomTensor(DType::kFloat32, {2, 16, 10, 10}, 20 + t)});
    auto e = (*eager)->Run(inputs.back());
    ASSERT_TRUE(e.ok()) << e.status();
    expected.push_back(*std::move(e));
  }
  std::vector<std::vector<Tensor>> actual(inputs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < inputs.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        auto out = testing::RunOnSharedJit(**executable, inputs[t]);
        if (!out.ok()) return;
        actual[t] = *std::move(out);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t t = 0; t < inputs.size(); ++t) {
    ASSERT_EQ(actual[t].size(), 1u) << "call " << t << " failed";
    const Tensor& e = expected[t][0];
    testing::ExpectTensor(actual[t][0], e.dtype(), e.sizes(),
                          testing::ToDoubles(e), 1e-4, 1e-4);
  }
}

// Blocked results cut across the pool (ctest runs this suite at 1, 2 and 3
// threads): by ranges of images at batches of at least the pool's threads,
// else by ranges of output channel blocks of each image (20 and 44
// channels: the last part's last block padded), with and without a bias; a
// grouped convolution (2 groups of 24 -> 32 channels) runs whole at batch
// 1, on an OpenMP team of the pool's size.
TEST_F(OneDnnConvTest, BlockedResultsCutIntoPartsMatchEager) {
  ScopedLayout blocked("blocked");
  Layer no_bias = {48, 3, 1, 1};
  no_bias.bias = false;
  const auto graph =
      ConvNet(2, 16, {{20, 3, 1, 1}, {44, 3, 2, 1}, no_bias, {64, 3, 1, 1, 2}});
  for (int64_t batch : {1, 2, 4}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {batch, 16, 29, 23}, 71 + batch)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    const std::vector<int> blocks = ResultBlocks(plan);
    ASSERT_EQ(blocks.size(), 4u) << plan.ToString();
    for (int block : blocks) EXPECT_NE(block, 0) << plan.ToString();
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

// Blocked convolutions whose input needs a reorder of 64 KiB or more (the
// graph's strided input, channels-last activations between them) reorder it
// in ranges of rows, or of images at a batch of at least the pool's size,
// one per thread of a 3-thread program: rows that do not divide evenly,
// strides that are neither channels last nor contiguous.
TEST_F(OneDnnConvTest, InputReordersCutIntoRowsOnThePoolMatchEager) {
  ScopedLayout blocked("blocked");
  auto jit = JitCompiler::Create({.num_threads = 3});
  ASSERT_TRUE(jit.ok()) << jit.status();
  const auto graph =
      ConvNet(2, 16, {{32, 3, 1, 1}, {32, 3, 1, 1}, {40, 3, 2, 1}});
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  for (int64_t batch : {1, 2, 4}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    const Tensor dense =
        RandomTensor(DType::kFloat32, {batch, 16, 31, 29}, 90 + batch);
    for (const Tensor& x : {dense, testing::NonContiguousCopy(dense)}) {
      Specialization spec;
      spec.inputs.push_back(TensorMeta::Of(x));
      spec.example_sizes.emplace_back(x.sizes().begin(), x.sizes().end());
      spec.example_strides.emplace_back(x.strides().begin(), x.strides().end());
      const Plan plan = PlanOfInputs(*graph, {x});
      for (int block : ResultBlocks(plan)) EXPECT_NE(block, 0);
      auto exe = (*jit)->Compile(graph, spec);
      ASSERT_TRUE(exe.ok()) << exe.status();
      auto actual = RunToVector(**exe, {x});
      ASSERT_TRUE(actual.ok()) << actual.status();
      auto expected = (*eager)->Run({x});
      ASSERT_TRUE(expected.ok()) << expected.status();
      const Tensor& want = (*expected)[0];
      testing::ExpectTensor((*actual)[0], DType::kFloat32, want.sizes(),
                            testing::ToDoubles(want), 1e-4, 1e-4);
    }
  }
}

// A blocked convolution whose weight is a graph input (no constant to pack
// per part of channels) runs whole at batch 1; a dynamic batch gets parts
// of images per batch size.
TEST_F(OneDnnConvTest,
       BlockedResultsOfInputWeightsAndDynamicBatchesMatchEager) {
  ScopedLayout blocked("blocked");
  GraphBuilder b("input_weight");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  AddConv2d(b, "conv", "x", "w", 1);
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("conv")}).ok());
  const auto input_weight = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {1, 16, 30, 30}, 80),
      RandomTensor(DType::kFloat32, {32, 16, 3, 3}, 81, -0.3, 0.3)};
  const std::vector<int> blocks =
      ResultBlocks(PlanOfInputs(*input_weight, inputs));
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_NE(blocks[0], 0);
  ExpectJitMatchesEager(input_weight, inputs, 1e-4);

  const auto graph = ConvNet(2, 16, {{24, 3, 1, 1}, {40, 3, 2, 1}});
  const Tensor example = RandomTensor(DType::kFloat32, {2, 16, 26, 26}, 84);
  for (int block : ResultBlocks(PlanOfInputs(*graph, {example}))) {
    EXPECT_NE(block, 0);
  }
  ASSERT_EQ(ResultBlocks(PlanOfInputs(*graph, {example})).size(), 2u);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t batch : {2, 5, 3}) {
    calls.push_back(
        {RandomTensor(DType::kFloat32, {batch, 16, 26, 26}, 82 + batch)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 1e-4);
}

}  // namespace
}  // namespace guardjit
