// Whole models as torch exports them (tests/jit/models, written by
// export_models.py from torch.export + Core ATen: sym_size nodes, views over
// (s0*T) rows, permuted weights, bmm attention, causal and padding masks,
// BatchNorm, pooling, depthwise convolutions), each compiled ONCE for a
// dynamic batch and run at five batches against the eager interpreter. The
// entry must be the JIT's compiled program (the harness fails on an eager
// plan), with its products and convolutions as GEMM and conv steps bound per
// call rather than eager nodes.

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/graph_builder.h"
#include "core/graph_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/gemm_step.h"
#include "test_paths.h"  // GJ_EXAMPLES_DIR, GJ_GOLDEN_DIR, GJ_HOST_CXX
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::RandomTensor;

// Batches of the calls: one entry compiled for the first serves them all.
const std::vector<int64_t> kBatches = {2, 3, 5, 8, 13};
// The exports' sequence length and vocabulary (export_models.py).
constexpr int64_t kSeq = 8;
constexpr int64_t kVocab = 32;
// Elementwise tolerance vs the eager kernels (float32, BLAS and fused
// kernels summing in other orders through a few layers).
constexpr double kTolerance = 1e-4;

std::shared_ptr<const Graph> LoadModel(const std::string& name) {
  const std::string path =
      std::string(GJ_GOLDEN_DIR) + "/../models/" + name + ".pbtxt";
  auto graph = LoadGraphFromFile(path);
  EXPECT_TRUE(graph.ok()) << path << ": " << graph.status();
  if (!graph.ok()) return nullptr;
  return std::shared_ptr<const Graph>(*std::move(graph));
}

int CountTargets(const Graph& graph, const std::vector<std::string>& targets) {
  int n = 0;
  for (const Node& node : graph.nodes()) {
    for (const std::string& t : targets) n += node.target == t;
  }
  return n;
}

struct StepCounts {
  int gemm = 0, conv = 0, pool = 0, eager = 0;
  std::vector<std::string> eager_targets;
};

// The steps of the dynamic entry's plan for `calls[0]`.
StepCounts PlanSteps(const std::shared_ptr<const Graph>& graph,
                     const std::vector<Tensor>& example,
                     const std::vector<DynamicDim>& dynamic) {
  StepCounts counts;
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(graph, example, dynamic);
  if (entry.graph == nullptr) return counts;
  auto plan = testing::SharedJit().PlanFor(*entry.graph, entry.spec);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return counts;
  for (const PlanStep& s : plan->steps) {
    counts.gemm += s.gemm != nullptr;
    counts.conv += s.conv != nullptr;
    counts.pool += s.pool;
    if (!s.is_kernel && !s.pool && !s.layer_norm && !s.attention) {
      ++counts.eager;
      counts.eager_targets.push_back(entry.graph->node(s.node).target);
    }
  }
  return counts;
}

Tensor TokenIds(int64_t batch, uint64_t seed) {
  return RandomTensor(DType::kInt64, {batch, kSeq}, seed, 0, kVocab);
}

// A reshape of a computed value over a symbolic batch ([s0, 4, 8] ->
// [s0*4, 8], the rows a linear layer multiplies) is the value's memory
// viewed in place: the producer's kernel stores it, the GEMM step reads it,
// and no kernel copies it (a view of concrete sizes did that already).
TEST(DynamicModelsTest, ReshapeOfAComputedValueFeedsAGemmStepInPlace) {
  GraphBuilder b("reshape_linear");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("bias").ok());
  testing::AddNode(b, "n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)});
  testing::AddNode(b, "rows", "operator.mul", {Arg::Ref("n"), Arg::Int(4)});
  testing::AddNode(b, "y", "aten.tanh.default", {Arg::Ref("x")});
  testing::AddNode(
      b, "v", "aten.view.default",
      {Arg::Ref("y"), Arg::OfList({Arg::Ref("rows"), Arg::Int(8)})});
  testing::AddNode(b, "wt", "aten.permute.default",
                   {Arg::Ref("w"), testing::Ints({1, 0})});
  testing::AddNode(b, "h", "aten.addmm.default",
                   {Arg::Ref("bias"), Arg::Ref("v"), Arg::Ref("wt")});
  testing::AddNode(b, "r", "aten.relu.default", {Arg::Ref("h")});
  testing::AddNode(
      b, "out", "aten.view.default",
      {Arg::Ref("r"), Arg::OfList({Arg::Ref("n"), Arg::Int(4), Arg::Int(6)})});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  auto graph = testing::Finish(b);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t n : kBatches) {
    calls.push_back({RandomTensor(DType::kFloat32, {n, 4, 8}, n),
                     RandomTensor(DType::kFloat32, {6, 8}, 1),
                     RandomTensor(DType::kFloat32, {6}, 2)});
  }
  const std::vector<DynamicDim> batch = {{0, 0}};
  auto exe =
      testing::ExpectDynamicJitMatchesEager(graph, batch, calls, kTolerance);
  ASSERT_NE(exe, nullptr);
  // tanh's kernel, and the GEMM step's epilogue (bias, relu).
  EXPECT_THAT(testing::WithoutBackend(exe->Describe()),
              ::testing::StartsWith(
                  "jit: 2 fused kernels, 0 eager nodes, 1 size symbols"));
  const StepCounts steps = PlanSteps(graph, calls[0], batch);
  EXPECT_EQ(steps.gemm, 1);
  EXPECT_EQ(steps.eager, 0);
}

// GPT-2-style decoder: token + position embeddings, a pre-norm block with
// causal scaled_dot_product_attention and a tanh-GELU MLP, an LM head.
TEST(DynamicModelsTest, GptDecoderOverADynamicBatch) {
  auto graph = LoadModel("gpt_dynamic_batch");
  ASSERT_NE(graph, nullptr);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t b : kBatches) calls.push_back({TokenIds(b, 100 + b)});
  const std::vector<DynamicDim> batch = {{0, 0}};
  auto exe =
      testing::ExpectDynamicJitMatchesEager(graph, batch, calls, kTolerance);
  ASSERT_NE(exe, nullptr);
  EXPECT_THAT(exe->Describe(), ::testing::HasSubstr("1 size symbols"));
  // Every product is a GEMM step over the symbolic batch: the linears
  // (addmm over (s0*8) rows) with their epilogues, and the attention
  // products and the LM head's mm, which have no elementwise consumer to
  // fuse (softmax's reduction, a transposing copy, the output), writing
  // their results. Nothing is left to an eager kernel.
  const StepCounts steps = PlanSteps(graph, calls[0], batch);
  EXPECT_EQ(steps.gemm,
            CountTargets(*graph, {"aten.addmm.default", "aten.bmm.default",
                                  "aten.mm.default"}));
  EXPECT_EQ(steps.gemm, 7);
  EXPECT_THAT(steps.eager_targets, ::testing::IsEmpty());
}

// BERT-style encoder: ids and a padding mask (an additive -10000 bias on
// padded keys), both carrying the batch; post-norm layer, pooled [CLS].
TEST(DynamicModelsTest, BertEncoderWithPaddingMaskOverADynamicBatch) {
  auto graph = LoadModel("bert_dynamic_batch");
  ASSERT_NE(graph, nullptr);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t b : kBatches) {
    // Row i keeps its first max(1, seq - 2i) tokens.
    std::vector<double> mask;
    for (int64_t i = 0; i < b; ++i) {
      for (int64_t t = 0; t < kSeq; ++t) {
        mask.push_back(t < std::max<int64_t>(1, kSeq - 2 * i) ? 1 : 0);
      }
    }
    calls.push_back({TokenIds(b, 200 + b),
                     testing::MakeTensor(DType::kInt64, {b, kSeq}, mask)});
  }
  const std::vector<DynamicDim> batch = {{0, 0}, {1, 0}};
  auto exe =
      testing::ExpectDynamicJitMatchesEager(graph, batch, calls, kTolerance);
  ASSERT_NE(exe, nullptr);
  const StepCounts steps = PlanSteps(graph, calls[0], batch);
  // The linears and the attention products are GEMM steps.
  EXPECT_EQ(steps.gemm,
            CountTargets(*graph, {"aten.addmm.default", "aten.bmm.default"}));
  EXPECT_EQ(steps.gemm, 7);
  // Only the dtype check torch.export puts on the mask's conversion (an
  // eager check step).
  EXPECT_THAT(steps.eager_targets, ::testing::UnorderedElementsAre(
                                       "aten._assert_tensor_metadata.default"));
}

// resnet18's stem and basic block and mobilenet_v2's inverted residual
// (depthwise 3x3, ReLU6): BatchNorm folded into the conv steps' epilogues.
TEST(DynamicModelsTest, ConvNetBlocksOverADynamicBatch) {
  auto graph = LoadModel("convnet_dynamic_batch");
  ASSERT_NE(graph, nullptr);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t b : kBatches) {
    calls.push_back({RandomTensor(DType::kFloat32, {b, 3, 24, 24}, 300 + b)});
  }
  const std::vector<DynamicDim> batch = {{0, 0}};
  auto exe =
      testing::ExpectDynamicJitMatchesEager(graph, batch, calls, kTolerance);
  ASSERT_NE(exe, nullptr);
  // Every convolution is a conv step over the symbolic batch, the max pool
  // and the global mean pool steps (jit/steps/pool_step.h): nothing is left
  // to an eager kernel.
  const StepCounts steps = PlanSteps(graph, calls[0], batch);
  EXPECT_EQ(steps.conv, CountTargets(*graph, {"aten.convolution.default"}));
  EXPECT_EQ(steps.conv, 6);
  EXPECT_EQ(steps.pool, 2);
  EXPECT_EQ(steps.eager, 0) << absl::StrJoin(steps.eager_targets, ", ");
}

}  // namespace
}  // namespace guardjit
