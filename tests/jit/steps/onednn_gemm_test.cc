// Matrix products on oneDNN's matmul (jit/steps/onednn_gemm.h): which are
// planned on it (float32 products of fewer than 256 rows whose b is a graph
// constant, small float32 batched products of two values) and their results
// against the eager interpreter: attention's strided bmm operands, linear
// layers with bias and activation, alpha and beta, a weight used as [K, N] or
// transposed, a strided a, row counts at the limits, concurrent calls.
// ctest runs this suite at 1 and 3 threads too (column parts).

#include "jit/steps/onednn_gemm.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "jit/steps/onednn_conv.h"
#include "runtime/eager_interpreter.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::PlanOfInputs;
using testing::RandomTensor;

Arg R(const std::string& name) { return Arg::Ref(name); }
Arg Dims(int64_t a, int64_t b) {
  return Arg::OfList({Arg::Int(a), Arg::Int(b)});
}

int OneDnnGemms(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) {
    n += s.gemm != nullptr && s.gemm->onednn.has_value();
  }
  return n;
}

// Products the packed path (packed_gemm.h) would take go to oneDNN with it
// off.
class OneDnnGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!OneDnnEnabled()) GTEST_SKIP() << "GJ_ONEDNN=0";
    const char* packed = std::getenv("GJ_PACKED_GEMM");
    if (packed != nullptr) saved_ = packed;
    setenv("GJ_PACKED_GEMM", "0", 1);
  }
  void TearDown() override {
    if (saved_.has_value()) {
      setenv("GJ_PACKED_GEMM", saved_->c_str(), 1);
    } else {
      unsetenv("GJ_PACKED_GEMM");
    }
  }

 private:
  std::optional<std::string> saved_;
};

TEST_F(OneDnnGemmTest, ServingBatchLinearLayersRunOnOneDnn) {
  const auto graph = testing::LinearMlp(784, 512, 10);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {8, 784}, 5)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  ASSERT_EQ(OneDnnGemms(plan), 2) << plan.ToString();
  const GemmStep& first = *plan.steps[0].gemm;
  EXPECT_GE(first.onednn->weight_node, 0);
  EXPECT_FALSE(first.onednn->impl.empty());
  EXPECT_THAT(first.onednn->impl, ::testing::Not(HasSubstr("ref")));
  ExpectJitMatchesEager(graph, inputs, 1e-4);
  // explain() names it.
  const std::string described = testing::DescribeCompiled(graph, inputs);
  EXPECT_THAT(described, HasSubstr("'fc1' (aten.addmm.default) on oneDNN ("));
  EXPECT_THAT(described, HasSubstr("weights packed once"));
}

// A bare product of a constant weight (a tied embedding's logits, a linear
// layer without bias) is written by oneDNN straight into its output, its
// row parts across the pool, without an epilogue kernel.
TEST_F(OneDnnGemmTest, BareProductsWriteTheirResult) {
  GraphBuilder b("logits");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddConstant("w", RandomTensor(DType::kFloat32, {1000, 256}, 7)).ok());
  testing::AddNode(b, "t", "aten.permute.default", {R("w"), Dims(1, 0)});
  testing::AddNode(b, "mm", "aten.mm.default", {R("x"), R("t")});
  ASSERT_TRUE(b.SetOutputs({R("mm")}).ok());
  const auto graph = testing::Finish(b);
  for (int64_t m : {1, 5, 64, 200}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 256}, 20 + m)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    ASSERT_EQ(OneDnnGemms(plan), 1) << plan.ToString();
    EXPECT_GE(plan.steps[0].gemm->result_param, 0) << plan.ToString();
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
  auto jit = JitCompiler::Create();
  ASSERT_TRUE(jit.ok());
  Specialization spec;
  spec.inputs.push_back(
      TensorMeta::Of(RandomTensor(DType::kFloat32, {64, 256}, 1)));
  auto exe = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  // oneDNN names the kernel it picked for this CPU: brg (AVX-512), gemm:jit
  // (AVX2), ...
  EXPECT_THAT((*exe)->Describe(),
              HasSubstr("'mm' (aten.mm.default) on oneDNN ("));
  EXPECT_THAT((*exe)->Describe(),
              HasSubstr("weights packed once) writing its result"));
}

// Fewer rows than the pool has threads (a classifier at batch 1: 1280 to
// 1000 in mobilenet_v2) split by ranges of 16 columns, each with its columns
// of the weight packed apart, the last range taking the rest (1000 is not a
// multiple of 16 x threads); ctest runs this at 1 and 3 threads.
TEST_F(OneDnnGemmTest, FewRowsSplitByColumns) {
  const auto graph = testing::LinearMlp(1280, 1000, 24);
  for (int64_t m : {1, 2}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 1280}, 40 + m)};
    EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, inputs)), 2);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
    ExpectJitMatchesEager(graph, {testing::NonContiguousCopy(inputs[0])}, 1e-4);
  }
}

// Rows 1 to 255 take oneDNN (with column parts across the pool when large
// enough), 256 and more stay BLAS.
TEST_F(OneDnnGemmTest, RowCountsAtTheLimits) {
  const auto graph = testing::LinearMlp(96, 320, 48);
  for (int64_t m : {1, 3, 64, 255, 256, 300}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 96}, 10 + m)};
    EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, inputs)), m < 256 ? 2 : 0);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

// alpha and beta, weights read as [K, N] (not transposed), and a strided a
// (a transposed input).
TEST_F(OneDnnGemmTest, AlphaBetaLayoutsAndStridedInputsMatchEager) {
  GraphBuilder b("products");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(
      b.AddConstant("w", RandomTensor(DType::kFloat32, {64, 40}, 20, -0.2, 0.2))
          .ok());
  ASSERT_TRUE(
      b.AddConstant("bias", RandomTensor(DType::kFloat32, {40}, 21)).ok());
  ASSERT_TRUE(
      b.AddConstant("v", RandomTensor(DType::kFloat32, {40, 24}, 22, -0.2, 0.2))
          .ok());
  ASSERT_TRUE(b.AddConstant("c", RandomTensor(DType::kFloat32, {24}, 25)).ok());
  // addmm(bias, x, w, beta=0.5, alpha=2), then gelu.
  ASSERT_TRUE(b.AddNode("a", "aten.addmm.default", {R("bias"), R("x"), R("w")},
                        {{"beta", Arg::Float(0.5)}, {"alpha", Arg::Float(2)}})
                  .ok());
  testing::AddNode(b, "g", "aten.gelu.default", {R("a")});
  // addmm(bias, y^T, w): a strided a, then a consumer.
  testing::AddNode(b, "yt", "aten.permute.default", {R("y"), Dims(1, 0)});
  testing::AddNode(b, "m", "aten.addmm.default", {R("bias"), R("yt"), R("w")});
  testing::AddNode(b, "s", "aten.sigmoid.default", {R("m")});
  // addmm(c, g, v) * 3, v read as [K, N].
  testing::AddNode(b, "m2", "aten.addmm.default", {R("c"), R("g"), R("v")});
  testing::AddNode(b, "o", "aten.mul.Scalar", {R("m2"), Arg::Float(3)});
  ASSERT_TRUE(b.SetOutputs({R("s"), R("o")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {12, 64}, 23),
      RandomTensor(DType::kFloat32, {64, 12}, 24)};
  EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, inputs)), 3)
      << PlanOfInputs(*graph, inputs).ToString();
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

// Float64, and weights given as inputs, stay BLAS.
TEST_F(OneDnnGemmTest, Float64AndInputWeightsStayBlas) {
  const auto f64 = testing::LinearMlp(32, 48, 8, DType::kFloat64);
  const std::vector<Tensor> x64 = {RandomTensor(DType::kFloat64, {4, 32}, 30)};
  EXPECT_EQ(OneDnnGemms(PlanOfInputs(*f64, x64)), 0);
  ExpectJitMatchesEager(f64, x64);

  GraphBuilder b("linear");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("bias").ok());
  testing::AddNode(b, "t", "aten.permute.default", {R("w"), Dims(1, 0)});
  testing::AddNode(b, "y", "aten.addmm.default", {R("bias"), R("x"), R("t")});
  ASSERT_TRUE(b.SetOutputs({R("y")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {4, 32}, 31),
      RandomTensor(DType::kFloat32, {16, 32}, 32),
      RandomTensor(DType::kFloat32, {16}, 33)};
  EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, inputs)), 0);
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

// Attention spelled out with bmm, as torch.export writes it for a GPT-2 block
// at sequence 64: scores = q @ k^T over 8 heads, q and k^T strided views of
// the projections; probabilities @ v. Both small batched products run on
// oneDNN's brgemm batched matmul (the strided operands copied dense), where
// the host has it; a consumer after the first keeps its epilogue kernel. Batch
// counts the pool does not divide (3 and 5 entries at 2 and 3 threads) split
// unevenly.
Arg Dims3(int64_t a, int64_t b, int64_t c) {
  return Arg::OfList({Arg::Int(a), Arg::Int(b), Arg::Int(c)});
}

TEST_F(OneDnnGemmTest, SmallBatchedProductsOfValuesRunOnOneDnn) {
  for (int64_t heads : {8, 3, 5}) {
    SCOPED_TRACE(absl::StrCat(heads, " heads"));
    GraphBuilder b("attention");
    ASSERT_TRUE(b.AddPlaceholder("q").ok());  // [64, heads, 32]
    ASSERT_TRUE(b.AddPlaceholder("k").ok());  // [64, heads, 32]
    ASSERT_TRUE(b.AddPlaceholder("v").ok());  // [heads, 64, 32]
    testing::AddNode(b, "qh", "aten.permute.default", {R("q"), Dims3(1, 0, 2)});
    testing::AddNode(b, "kt", "aten.permute.default", {R("k"), Dims3(1, 2, 0)});
    testing::AddNode(b, "scores", "aten.bmm.default", {R("qh"), R("kt")});
    testing::AddNode(b, "scaled", "aten.mul.Scalar",
                     {R("scores"), Arg::Float(0.125)});
    testing::AddNode(b, "p", "aten._softmax.default",
                     {R("scaled"), Arg::Int(-1), Arg::Bool(false)});
    testing::AddNode(b, "out", "aten.bmm.default", {R("p"), R("v")});
    ASSERT_TRUE(b.SetOutputs({R("out")}).ok());
    const auto graph = testing::Finish(b);
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {64, heads, 32}, 50),
        RandomTensor(DType::kFloat32, {64, heads, 32}, 51),
        RandomTensor(DType::kFloat32, {heads, 64, 32}, 52)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    for (const PlanStep& step : plan.steps) {
      if (step.gemm == nullptr || step.gemm->onednn.has_value()) continue;
      // oneDNN 2.6 has brgemm matmuls on AVX-512 only.
      absl::StatusOr<GemmStep::OneDnn> why = PlanOneDnnGemm(*step.gemm, plan);
      if (!why.ok() && absl::StrContains(why.status().message(), "brgemm")) {
        GTEST_SKIP() << why.status();
      }
    }
    ASSERT_EQ(OneDnnGemms(plan), 2) << plan.ToString();
    for (const PlanStep& step : plan.steps) {
      if (step.gemm == nullptr) continue;
      EXPECT_EQ(step.gemm->onednn->weight_node, -1);
      EXPECT_THAT(step.gemm->onednn->impl, ::testing::StartsWith("brg"));
      EXPECT_THAT(step.gemm->onednn->impl, ::testing::Not(HasSubstr("ref")));
    }
    ExpectJitMatchesEager(graph, inputs, 1e-4);

    auto jit = JitCompiler::Create();
    ASSERT_TRUE(jit.ok());
    Specialization spec;
    for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
    auto exe = (*jit)->Compile(graph, spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_THAT((*exe)->Describe(),
                HasSubstr("'out' (aten.bmm.default) on oneDNN ("));
    EXPECT_THAT((*exe)->Describe(), HasSubstr(", batched) writing its result"));
  }
}

// Batched products past 2^21 multiply-adds per entry stay on BLAS's panels,
// and float64 ones on BLAS.
TEST_F(OneDnnGemmTest, LargeAndFloat64BatchedProductsStayBlas) {
  GraphBuilder b("bmm");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  testing::AddNode(b, "z", "aten.bmm.default", {R("x"), R("y")});
  ASSERT_TRUE(b.SetOutputs({R("z")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> large = {
      RandomTensor(DType::kFloat32, {2, 160, 128}, 60),
      RandomTensor(DType::kFloat32, {2, 128, 160}, 61)};
  EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, large)), 0);
  ExpectJitMatchesEager(graph, large, 1e-4);
  const std::vector<Tensor> f64 = {
      RandomTensor(DType::kFloat64, {4, 16, 8}, 62),
      RandomTensor(DType::kFloat64, {4, 8, 16}, 63)};
  EXPECT_EQ(OneDnnGemms(PlanOfInputs(*graph, f64)), 0);
  ExpectJitMatchesEager(graph, f64);
}

// One executable called from several threads at once (each call its own
// scratch; the packed weights shared, read only).
TEST_F(OneDnnGemmTest, ConcurrentCallsMatchEager) {
  const auto graph = testing::LinearMlp(256, 512, 64);
  auto jit = JitCompiler::Create({.num_threads = 2});
  ASSERT_TRUE(jit.ok());
  const Tensor x = RandomTensor(DType::kFloat32, {16, 256}, 40);
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  auto exe = (*jit)->Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run({x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::vector<double> want = testing::ToDoubles((*expected)[0]);
  EXPECT_EQ(testing::ConcurrentMismatches(**exe, {x}, want, 4, 20), 0);
}

}  // namespace
}  // namespace guardjit
