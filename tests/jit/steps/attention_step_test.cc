#include "jit/steps/attention_step.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::RandomTensor;
using testing::SharedJit;

constexpr char kSdpa[] = "aten.scaled_dot_product_attention.default";

// sdpa(x0, x1, x2[, x3 mask]) with `kwargs`, compiled for `inputs`: the
// program runs it as an attention step (not the reference kernel) and
// matches the eager interpreter.
void ExpectAttentionStep(const std::vector<Tensor>& inputs, Kwargs kwargs = {},
                         bool causal = false) {
  std::vector<Arg> args = {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2")};
  if (inputs.size() > 3) args.push_back(Arg::Ref("x3"));
  if (causal) kwargs.push_back({"is_causal", Arg::Bool(true)});
  std::shared_ptr<const Graph> graph =
      OpGraph(kSdpa, args, static_cast<int>(inputs.size()), std::move(kwargs));
  Specialization spec;
  for (const Tensor& t : inputs) {
    spec.inputs.push_back(TensorMeta::Of(t));
    spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    spec.example_strides.emplace_back(t.strides().begin(), t.strides().end());
  }
  auto exe = SharedJit().Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_THAT((*exe)->Describe(),
              HasSubstr("'op' (aten.scaled_dot_product_attention.default) as "
                        "one attention step"));
  EXPECT_THAT((*exe)->Describe(), HasSubstr("0 eager nodes"));
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

TEST(AttentionStepTest, MatchesEagerWithoutAMask) {
  ExpectAttentionStep({RandomTensor(DType::kFloat32, {2, 3, 5, 8}, 1),
                       RandomTensor(DType::kFloat32, {2, 3, 7, 8}, 2),
                       RandomTensor(DType::kFloat32, {2, 3, 7, 6}, 3)});
  // Rank 3, one query, one key.
  ExpectAttentionStep({RandomTensor(DType::kFloat32, {4, 1, 16}, 4),
                       RandomTensor(DType::kFloat32, {4, 1, 16}, 5),
                       RandomTensor(DType::kFloat32, {4, 1, 3}, 6)});
}

TEST(AttentionStepTest, MatchesEagerWithMasksAndScale) {
  const Tensor q = RandomTensor(DType::kFloat32, {2, 3, 5, 8}, 1);
  const Tensor k = RandomTensor(DType::kFloat32, {2, 3, 7, 8}, 2);
  const Tensor v = RandomTensor(DType::kFloat32, {2, 3, 7, 6}, 3);
  // A float mask broadcast over batch and heads, with -inf entries.
  Tensor fmask = RandomTensor(DType::kFloat32, {5, 7}, 4);
  fmask.data_as<float>()[3] = -INFINITY;
  ExpectAttentionStep({q, k, v, fmask}, {{"scale", Arg::Float(0.3)}});
  // A bool mask per batch with a fully masked query row (zeros).
  std::vector<double> keep(2 * 5 * 7);
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = (i * 7 + 3) % 4 != 0;
  for (int j = 0; j < 7; ++j) keep[(5 + 2) * 7 + j] = 0;
  ExpectAttentionStep({q, k, v, MakeTensor(DType::kBool, {2, 1, 5, 7}, keep)});
}

TEST(AttentionStepTest, MatchesEagerWhenCausal) {
  for (const auto& [l, s] : {std::pair{6, 9}, {9, 6}}) {
    SCOPED_TRACE(::testing::Message() << l << "x" << s);
    ExpectAttentionStep({RandomTensor(DType::kFloat32, {2, l, 4}, 7),
                         RandomTensor(DType::kFloat32, {2, s, 4}, 8),
                         RandomTensor(DType::kFloat32, {2, s, 5}, 9)},
                        {}, /*causal=*/true);
  }
}

TEST(AttentionStepTest, AnyStridesAndBlocksOfRows) {
  // Transposed, padded, offset operands.
  ExpectAttentionStep(
      {NonContiguousCopy(RandomTensor(DType::kFloat32, {3, 6, 8}, 10)),
       NonContiguousCopy(RandomTensor(DType::kFloat32, {3, 9, 8}, 11)),
       NonContiguousCopy(RandomTensor(DType::kFloat32, {3, 9, 4}, 12))});
  // No unit stride in q's last two dims: copied before BLAS.
  const Tensor big = RandomTensor(DType::kFloat32, {3, 12, 16}, 13);
  ExpectAttentionStep({big.AsStrided({3, 6, 8}, {192, 32, 2}),
                       RandomTensor(DType::kFloat32, {3, 9, 8}, 14),
                       RandomTensor(DType::kFloat32, {3, 9, 4}, 15)});
  // Many keys: kScoreBlockFloats / 5000 = 3 query rows per block, so each
  // batch entry's 8 rows run as 3 blocks.
  ExpectAttentionStep({RandomTensor(DType::kFloat32, {2, 8, 16}, 16),
                       RandomTensor(DType::kFloat32, {2, 5000, 16}, 17),
                       RandomTensor(DType::kFloat32, {2, 5000, 8}, 18)},
                      {}, /*causal=*/true);
}

// A GPT-2 block's attention at sequence 64: q, k and v are strided views of
// one [1, 64, 768] projection (8 heads of 32), as torch.export leaves them;
// the block products run on oneDNN's matmul where it has a fast one (BLAS
// under GJ_ONEDNN=0), causal, with a bool mask, and unmasked.
TEST(AttentionStepTest, GptHeadsAsViewsOfOneProjection) {
  const Tensor qkv = RandomTensor(DType::kFloat32, {1, 64, 768}, 30);
  const auto head_view = [&](int64_t offset) {
    return qkv.AsStrided({1, 8, 64, 32}, {64 * 768, 32, 768, 1}, offset);
  };
  const std::vector<Tensor> qkv_views = {head_view(0), head_view(256),
                                         head_view(512)};
  ExpectAttentionStep(qkv_views, {}, /*causal=*/true);
  ExpectAttentionStep(qkv_views, {{"scale", Arg::Float(0.25)}});
  Tensor keep = RandomTensor(DType::kBool, {64, 64}, 31);
  std::vector<Tensor> masked = qkv_views;
  masked.push_back(keep);
  ExpectAttentionStep(masked);
}

// One executable called from several threads at once, from its first call
// on: the step's oneDNN block products, made when the program was built, are
// shared; each call computes its blocks (and copies its operands) in its own
// scratch.
TEST(AttentionStepTest, ConcurrentCallsMatchEager) {
  std::shared_ptr<const Graph> graph =
      OpGraph(kSdpa, {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2")}, 3,
              {{"is_causal", Arg::Bool(true)}});
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 4, 64, 32}, 40),
      RandomTensor(DType::kFloat32, {2, 4, 64, 32}, 41),
      RandomTensor(DType::kFloat32, {2, 4, 64, 32}, 42)};
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run(inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::vector<double> want = testing::ToDoubles((*expected)[0]);
  auto jit = JitCompiler::Create({.num_threads = 2});
  ASSERT_TRUE(jit.ok());
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto exe = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(testing::ConcurrentMismatches(**exe, inputs, want), 0);
}

TEST(AttentionStepTest, NanRowsAndNoKeys) {
  Tensor q = RandomTensor(DType::kFloat32, {1, 3, 4}, 19);
  q.data_as<float>()[4] = NAN;  // query row 1
  ExpectAttentionStep({q, RandomTensor(DType::kFloat32, {1, 5, 4}, 20),
                       RandomTensor(DType::kFloat32, {1, 5, 2}, 21)});
  ExpectAttentionStep({RandomTensor(DType::kFloat32, {2, 3, 4}, 22),
                       RandomTensor(DType::kFloat32, {2, 0, 4}, 23),
                       RandomTensor(DType::kFloat32, {2, 0, 2}, 24)});
}

TEST(AttentionStepTest, OnlyStaticFloat32Programs) {
  std::shared_ptr<const Graph> graph =
      OpGraph(kSdpa, {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2")}, 3);
  // float64 stays on the reference kernel (an eager node).
  const std::vector<Tensor> f64 = {RandomTensor(DType::kFloat64, {2, 3, 4}, 1),
                                   RandomTensor(DType::kFloat64, {2, 5, 4}, 2),
                                   RandomTensor(DType::kFloat64, {2, 5, 2}, 3)};
  const Plan plan = testing::PlanOfInputs(*graph, f64);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_FALSE(plan.steps[0].attention);
  ExpectJitMatchesEager(graph, f64);
}

}  // namespace
}  // namespace guardjit
