#include "jit/schedule/fusion.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/steps/gemm_step.h"
#include "tests/jit/jit_test_util.h"
#include "tests/scoped_env.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::PlanOf;
using testing::RandomTensor;
using testing::SharedJit;

int CountStages(const Kernel& k, Stage::Kind kind) {
  int n = 0;
  for (const Stage& s : k.stages) n += s.kind == kind;
  return n;
}

// x, y -> 8 pointwise ops -> out.
std::shared_ptr<const Graph> EightOpChain() {
  GraphBuilder b("chain8");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("y").ok());
  const std::vector<std::pair<std::string, std::vector<Arg>>> ops = {
      {"aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")}},
      {"aten.mul.Scalar", {Arg::Ref("v0"), Arg::Float(0.5)}},
      {"aten.sub.Tensor", {Arg::Ref("v1"), Arg::Ref("x")}},
      {"aten.relu.default", {Arg::Ref("v2")}},
      {"aten.neg.default", {Arg::Ref("v3")}},
      {"aten.maximum.default", {Arg::Ref("v4"), Arg::Ref("y")}},
      {"aten.abs.default", {Arg::Ref("v5")}},
      {"aten.add.Scalar", {Arg::Ref("v6"), Arg::Float(1.0)}},
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_TRUE(
        b.AddNode(absl::StrCat("v", i), ops[i].first, ops[i].second).ok());
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("v7")}).ok());
  return std::shared_ptr<const Graph>(*b.Finish());
}

TEST(FusionTest, EightOpPointwiseChainIsOneKernel) {
  auto graph = EightOpChain();
  Plan plan = PlanOf(*graph, {{64, 32}, {32}});
  ASSERT_EQ(plan.steps.size(), 1u);
  ASSERT_EQ(plan.num_kernels(), 1);
  const Kernel& k = plan.steps[0].kernel.kernel;
  // Two inputs, one output, no intermediate buffers.
  ASSERT_EQ(k.buffers.size(), 3u);
  EXPECT_EQ(CountStages(k, Stage::Kind::kStore), 1);
  EXPECT_EQ(k.outer.size(), 2u);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {64, 32}, 1),
                                RandomTensor(DType::kFloat32, {32}, 2)});
}

TEST(FusionTest, SoftmaxIsOneKernelWithTwoReductions) {
  auto graph =
      testing::OpGraph("aten._softmax.default",
                       {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(false)}, 1);
  Plan plan = PlanOf(*graph, {{8, 128}});
  ASSERT_EQ(plan.num_kernels(), 1);
  const Kernel& k = plan.steps[0].kernel.kernel;
  EXPECT_EQ(CountStages(k, Stage::Kind::kReduce), 2);
  EXPECT_EQ(CountStages(k, Stage::Kind::kStore), 1);
  EXPECT_EQ(k.buffers.size(), 2u);
  const std::string ir = k.ToString();
  // exp(x - max) is computed once: the sum stage stores it, the epilogue
  // reads it back and multiplies by the (hoisted) reciprocal of the sum.
  EXPECT_EQ(ir,
            "kernel(in0: float32*, out0: out float32*)\n"
            "  for i0 < 8:\n"
            "    local0 = max<float32> for i1 < 128\n"
            "        of in0[(i0*128 + i1)]\n"
            "    local1 = sum<float32> for i1 < 128\n"
            "        of exp(sub(in0[(i0*128 + i1)], local0))\n"
            "        storing out0[(i0*128 + i1)]\n"
            "    for i1 < 128: out0[(i0*128 + i1)] = mul(out0[(i0*128 + i1)], "
            "div(1:float32, local1))\n");
}

TEST(FusionTest, LayerNormIsOneKernelWritingThreeOutputs) {
  const testing::ScopedEnv kernels("GJ_LAYER_NORM_STEP", "0");  // lowered
  auto graph =
      testing::OpGraph("aten.native_layer_norm.default",
                       {Arg::Ref("x0"), Arg::OfList({Arg::Int(64)}),
                        Arg::Ref("x1"), Arg::Ref("x2"), Arg::Float(1e-5)},
                       3, {}, 3);
  Plan plan = PlanOf(*graph, {{16, 64}, {64}, {64}});
  ASSERT_EQ(plan.num_kernels(), 1);
  const Kernel& k = plan.steps[0].kernel.kernel;
  EXPECT_EQ(CountStages(k, Stage::Kind::kReduce), 2);
  EXPECT_EQ(CountStages(k, Stage::Kind::kStore), 3);
}

// A batch of one: the size-1 dim is a loop of one iteration that the row's
// reads index with 0, as broadcasting does, so the variance reads the mean
// on its row and both reductions and the normalization stay one kernel
// (they were three: mean, variance, normalization).
TEST(FusionTest, LayerNormOfABatchOfOneIsOneKernel) {
  const testing::ScopedEnv kernels("GJ_LAYER_NORM_STEP", "0");  // lowered
  auto graph =
      testing::OpGraph("aten.native_layer_norm.default",
                       {Arg::Ref("x0"), Arg::OfList({Arg::Int(64)}),
                        Arg::Ref("x1"), Arg::Ref("x2"), Arg::Float(1e-5)},
                       3, {}, 3);
  Plan plan = PlanOf(*graph, {{1, 16, 64}, {64}, {64}});
  ASSERT_EQ(plan.num_kernels(), 1) << plan.ToString();
  const Kernel& k = plan.steps[0].kernel.kernel;
  EXPECT_EQ(CountStages(k, Stage::Kind::kReduce), 2);
  ExpectJitMatchesEager(graph,
                        {RandomTensor(DType::kFloat32, {1, 16, 64}, 4),
                         RandomTensor(DType::kFloat32, {64}, 5),
                         RandomTensor(DType::kFloat32, {64}, 6)},
                        1e-5);
}

TEST(FusionTest, SoftmaxOfABatchOfOneIsOneKernel) {
  auto graph =
      testing::OpGraph("aten._softmax.default",
                       {Arg::Ref("x0"), Arg::Int(-1), Arg::Bool(false)}, 1);
  Plan plan = PlanOf(*graph, {{1, 8, 128}});
  ASSERT_EQ(plan.num_kernels(), 1) << plan.ToString();
  EXPECT_EQ(CountStages(plan.steps[0].kernel.kernel, Stage::Kind::kReduce), 2);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {1, 8, 128}, 7)},
                        1e-5);
}

// x - sum(x, -1, keepdim) * 2: the reduction's pointwise consumer over the
// full rows is its epilogue.
TEST(FusionTest, PointwiseConsumerOfAReductionIsItsEpilogue) {
  GraphBuilder b("center");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddNode("s", "aten.sum.dim_IntList",
                {Arg::Ref("x"), Arg::OfList({Arg::Int(-1)}), Arg::Bool(true)})
          .ok());
  ASSERT_TRUE(
      b.AddNode("m", "aten.mul.Scalar", {Arg::Ref("s"), Arg::Int(2)}).ok());
  ASSERT_TRUE(
      b.AddNode("d", "aten.sub.Tensor", {Arg::Ref("x"), Arg::Ref("m")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("d")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  Plan plan = PlanOf(*graph, {{5, 7}});
  EXPECT_EQ(plan.num_kernels(), 1);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {5, 7}, 3)},
                        1e-5);
}

// Reductions over different rows need the first one in memory.
TEST(FusionTest, ReductionsOverDifferentDimsAreSeparateKernels) {
  GraphBuilder b("two_sums");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddNode("e", "aten.exp.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("s0", "aten.sum.dim_IntList",
                {Arg::Ref("e"), Arg::OfList({Arg::Int(0)}), Arg::Bool(false)})
          .ok());
  ASSERT_TRUE(
      b.AddNode("s1", "aten.amax.default",
                {Arg::Ref("s0"), Arg::OfList({Arg::Int(0)}), Arg::Bool(false)})
          .ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("s1")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  Plan plan = PlanOf(*graph, {{6, 5, 4}});
  EXPECT_EQ(plan.num_kernels(), 2);
  ExpectJitMatchesEager(graph, {RandomTensor(DType::kFloat32, {6, 5, 4}, 4)},
                        1e-5);
}

// mm runs by BLAS after the first fused kernel, whose only materialized
// value is its input, with the second kernel (relu(h) * t) as its epilogue
// (gemm_epilogue.h).
TEST(FusionTest, MatmulRunsByBlasBetweenKernels) {
  GraphBuilder b("mm_sandwich");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddNode("t", "aten.tanh.default", {Arg::Ref("x")}).ok());
  ASSERT_TRUE(
      b.AddNode("h", "aten.mm.default", {Arg::Ref("t"), Arg::Ref("w")}).ok());
  ASSERT_TRUE(b.AddNode("r", "aten.relu.default", {Arg::Ref("h")}).ok());
  ASSERT_TRUE(
      b.AddNode("o", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Ref("t")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  Plan plan = PlanOf(*graph, {{8, 8}, {8, 8}});
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_TRUE(plan.steps[0].is_kernel);
  EXPECT_EQ(plan.steps[0].gemm, nullptr);
  EXPECT_TRUE(plan.steps[1].is_kernel);
  EXPECT_NE(plan.steps[1].gemm, nullptr);
  ExpectJitMatchesEager(graph,
                        {RandomTensor(DType::kFloat32, {8, 8}, 5),
                         RandomTensor(DType::kFloat32, {8, 8}, 6)},
                        1e-5);
}

// r1 = sum(x, 0), r2 = sum(exp(r1), 0), r3 = sum(r2 * 2, 0), out = sum(r3):
// three intermediates, live one after another, in two buffers.
TEST(FusionTest, IntermediatesShareBuffersByLiveness) {
  GraphBuilder b("reduce_chain");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  auto sum0 = [&](const std::string& name, const std::string& of) {
    ASSERT_TRUE(
        b.AddNode(name, "aten.sum.dim_IntList",
                  {Arg::Ref(of), Arg::OfList({Arg::Int(0)}), Arg::Bool(false)})
            .ok());
  };
  sum0("r1", "x");
  ASSERT_TRUE(b.AddNode("e", "aten.exp.default", {Arg::Ref("r1")}).ok());
  sum0("r2", "e");
  ASSERT_TRUE(
      b.AddNode("m", "aten.mul.Scalar", {Arg::Ref("r2"), Arg::Int(2)}).ok());
  sum0("r3", "m");
  ASSERT_TRUE(b.AddNode("out", "aten.sum.default", {Arg::Ref("r3")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  std::shared_ptr<const Graph> graph(*b.Finish());
  Plan plan = PlanOf(*graph, {{4, 5, 6, 7}});
  EXPECT_EQ(plan.num_kernels(), 4);
  int pooled = 0;
  for (int buffer : plan.slot_buffer) pooled += buffer >= 0;
  EXPECT_EQ(pooled, 3);
  EXPECT_EQ(plan.buffer_bytes.size(), 2u);
  ExpectJitMatchesEager(
      graph, {RandomTensor(DType::kFloat32, {4, 5, 6, 7}, 8, -0.5, 0.5)}, 1e-5);
}

TEST(FusionTest, IdenticalKernelsCompileOnce) {
  auto graph = EightOpChain();
  Specialization spec{{{DType::kFloat32, {16, 8}}, {DType::kFloat32, {8}}}};
  ASSERT_TRUE(SharedJit().Compile(graph, spec).ok());
  const int compiled = SharedJit().kernels().compiled();
  const int hits = SharedJit().kernels().cache_hits();
  ASSERT_TRUE(SharedJit().Compile(graph, spec).ok());
  EXPECT_EQ(SharedJit().kernels().compiled(), compiled);
  EXPECT_EQ(SharedJit().kernels().cache_hits(), hits + 1);
}

// The cache key is the printed IR: constants must print exactly, or two
// kernels differing in the 7th digit would share code.
TEST(FusionTest, KernelsDifferingInAConstantDoNotShareCode) {
  auto scaled = [](double scale) {
    return testing::OpGraph("aten.mul.Scalar",
                            {Arg::Ref("x0"), Arg::Float(scale)}, 1);
  };
  const Tensor x = *Tensor::Empty(DType::kFloat64, {4});
  for (int i = 0; i < 4; ++i) x.data_as<double>()[i] = 1e9;
  for (double scale : {1.0, 1.0 + 1e-9}) {
    auto exe = SharedJit().Compile(scaled(scale), {{TensorMeta::Of(x)}});
    ASSERT_TRUE(exe.ok()) << exe.status();
    auto out = RunToVector(**exe, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data_as<double>()[0], 1e9 * scale);
  }
}

}  // namespace
}  // namespace guardjit
