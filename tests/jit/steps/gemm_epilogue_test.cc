// Extern GEMM steps with fused epilogues (jit/steps/gemm_epilogue.h,
// jit/steps/gemm_step.h): the plans they make and their results against the
// eager interpreter. ctest also runs these with GJ_NUM_THREADS=1 and =3
// (tests/CMakeLists.txt), so panels run serially and in parallel.

#include "jit/steps/gemm_epilogue.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/steps/gemm_step.h"
#include "runtime/tensor_copy.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::PlanOf;
using testing::RandomTensor;

// One node per entry, named v0, v1, ...; "@k" in an argument list refers to
// entry k's node, placeholders by name.
struct Op {
  std::string target;
  std::vector<Arg> args;
  Kwargs kwargs = {};
};

std::shared_ptr<const Graph> Chain(const std::string& name,
                                   const std::vector<std::string>& inputs,
                                   const std::vector<Op>& ops,
                                   std::vector<std::string> outputs = {}) {
  GraphBuilder b(name);
  for (const std::string& in : inputs) EXPECT_TRUE(b.AddPlaceholder(in).ok());
  for (size_t i = 0; i < ops.size(); ++i) {
    auto node = b.AddNode(absl::StrCat("v", i), ops[i].target, ops[i].args,
                          ops[i].kwargs);
    EXPECT_TRUE(node.ok()) << node.status();
  }
  if (outputs.empty()) outputs.push_back(absl::StrCat("v", ops.size() - 1));
  std::vector<Arg> out;
  for (const std::string& o : outputs) out.push_back(Arg::Ref(o));
  EXPECT_TRUE(b.SetOutputs(out).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

Arg R(const std::string& name) { return Arg::Ref(name); }

Op Unary(const std::string& target, const std::string& x) {
  return {absl::StrCat("aten.", target, ".default"), {R(x)}};
}

int GemmSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) n += s.gemm != nullptr;
  return n;
}

// Tolerance for a product over k terms of values in [-2, 2]: BLAS blocks and
// the epilogue's bias add round in other orders than the eager kernel.
double GemmTolerance(DType dtype, int64_t k) {
  return (dtype == DType::kFloat32 ? 2e-6 : 1e-14) * static_cast<double>(k + 8);
}

// x [M, K], w [N, K] (linear's weight), bias [N] -> relu(x @ w.T + bias).
std::shared_ptr<const Graph> LinearRelu() {
  return Chain("linear_relu", {"x", "w", "bias"},
               {{"aten.permute.default",
                 {R("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                {"aten.addmm.default", {R("bias"), R("x"), R("v0")}},
                Unary("relu", "v1")});
}

TEST(GemmEpilogueTest, LinearReluIsOneGemmStepWithItsEpilogue) {
  const Plan plan = PlanOf(*LinearRelu(), {{64, 32}, {16, 32}, {16}});
  ASSERT_EQ(plan.steps.size(), 1u) << plan.ToString();
  ASSERT_NE(plan.steps[0].gemm, nullptr);
  EXPECT_EQ(plan.steps[0].gemm->m, 64);
  EXPECT_EQ(plan.steps[0].gemm->n, 16);
  EXPECT_EQ(plan.steps[0].gemm->k, 32);
  const std::string text = plan.ToString();
  EXPECT_THAT(text, HasSubstr("gemm aten.addmm.default float32 [64x32] @ "
                              "[32x16]^T with epilogue computing v2"));
  EXPECT_THAT(text, HasSubstr("relu"));
}

TEST(GemmEpilogueTest, MmBiasActivationResidualFuseIntoOneStep) {
  // relu(x @ w + bias) * 0.5 + residual: no kernel re-reads the product.
  auto graph = Chain("mm_chain", {"x", "w", "bias", "res"},
                     {{"aten.mm.default", {R("x"), R("w")}},
                      {"aten.add.Tensor", {R("v0"), R("bias")}},
                      Unary("relu", "v1"),
                      {"aten.mul.Scalar", {R("v2"), Arg::Float(0.5)}},
                      {"aten.add.Tensor", {R("v3"), R("res")}}});
  const Plan plan = PlanOf(*graph, {{40, 24}, {24, 48}, {48}, {40, 48}});
  ASSERT_EQ(plan.steps.size(), 1u) << plan.ToString();
  EXPECT_EQ(GemmSteps(plan), 1);
}

// The step writing its product straight into the output (no epilogue run).
int BareGemmSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) {
    n += s.gemm != nullptr && s.gemm->result_param >= 0;
  }
  return n;
}

// A bare product is a GEMM step too, which BLAS writes in place of the
// store kernel: the eager kernel it replaces allocated its result and ran
// OpenBLAS's own threads beside the pool's.
TEST(GemmEpilogueTest, BareAddmmGetsABiasEpilogueBareMmWritesItsResult) {
  auto addmm = Chain("addmm", {"b", "x", "w"},
                     {{"aten.addmm.default", {R("b"), R("x"), R("w")}}});
  const Plan p1 = PlanOf(*addmm, {{8}, {4, 3}, {3, 8}});
  ASSERT_EQ(p1.steps.size(), 1u);
  EXPECT_EQ(GemmSteps(p1), 1) << p1.ToString();
  EXPECT_EQ(BareGemmSteps(p1), 0) << p1.ToString();

  for (const char* target : {"aten.mm.default", "aten.bmm.default"}) {
    SCOPED_TRACE(target);
    const bool bmm = std::string(target) == "aten.bmm.default";
    auto mm = Chain("mm", {"x", "w"}, {{target, {R("x"), R("w")}}});
    const Plan p2 = bmm ? PlanOf(*mm, {{2, 4, 3}, {2, 3, 8}})
                        : PlanOf(*mm, {{4, 3}, {3, 8}});
    ASSERT_EQ(p2.steps.size(), 1u);
    EXPECT_TRUE(p2.steps[0].is_kernel);
    EXPECT_EQ(BareGemmSteps(p2), 1) << p2.ToString();
  }
}

TEST(GemmEpilogueTest, ProductReadElsewhereIsNotAnEpilogue) {
  // Each time the product must exist in memory: the step writes it whole
  // and its readers are kernels of their own.
  // The product is also an output.
  auto both =
      Chain("both", {"x", "w"},
            {{"aten.mm.default", {R("x"), R("w")}}, Unary("relu", "v0")},
            {"v0", "v1"});
  const Plan p1 = PlanOf(*both, {{4, 3}, {3, 8}});
  EXPECT_EQ(BareGemmSteps(p1), 1) << p1.ToString();
  EXPECT_EQ(p1.num_kernels(), 2);

  // A reduction over the product's rows reads whole rows.
  auto sum =
      Chain("sum", {"x", "w"},
            {{"aten.mm.default", {R("x"), R("w")}},
             {"aten.sum.dim_IntList", {R("v0"), Arg::OfList({Arg::Int(1)})}}});
  const Plan p2 = PlanOf(*sum, {{4, 3}, {3, 8}});
  EXPECT_EQ(BareGemmSteps(p2), 1) << p2.ToString();
  EXPECT_EQ(p2.num_kernels(), 2);

  // Reading the product transposed is not pointwise over it.
  auto transposed = Chain("transposed", {"x", "w", "y"},
                          {{"aten.mm.default", {R("x"), R("w")}},
                           {"aten.permute.default",
                            {R("v0"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                           {"aten.add.Tensor", {R("v1"), R("y")}}});
  const Plan p3 = PlanOf(*transposed, {{8, 3}, {3, 8}, {8, 8}});
  EXPECT_EQ(BareGemmSteps(p3), 1) << p3.ToString();
  EXPECT_EQ(p3.num_kernels(), 2);
}

TEST(GemmEpilogueTest, OtherDTypesStayEager) {
  for (DType dtype : {DType::kFloat16, DType::kInt32}) {
    auto graph =
        Chain("mm_relu", {"x", "w"},
              {{"aten.mm.default", {R("x"), R("w")}}, Unary("relu", "v0")});
    const Plan plan = PlanOf(*graph, {{4, 3}, {3, 8}}, dtype);
    EXPECT_EQ(GemmSteps(plan), 0) << plan.ToString();
    ExpectJitMatchesEager(
        graph, {RandomTensor(dtype, {4, 3}, 1), RandomTensor(dtype, {3, 8}, 2)},
        dtype == DType::kFloat16 ? 1e-2 : 0);
  }
}

struct Mnk {
  int64_t m, n, k;
};

// Includes M = 1, K = 1, N = 1, M not a multiple of any panel, M large
// enough for several panels of 256 rows on one thread, and products of few
// rows (under 256) with 2^20 multiply-adds and more, which a pool of several
// threads splits by columns (N not a multiple of the split's 16 columns).
const Mnk kShapes[] = {{1, 1, 1},       {1, 17, 9},     {13, 1, 5},
                       {7, 9, 1},       {33, 40, 17},   {101, 65, 70},
                       {600, 1100, 16}, {1001, 64, 3},  {8, 520, 300},
                       {1, 1030, 1100}, {63, 130, 160}, {200, 96, 80}};

Tensor Rand(DType dtype, Shape sizes, uint64_t seed) {
  return RandomTensor(dtype, sizes, seed);
}

// `t` [R, C] stored transposed (column by column).
Tensor Transposed(const Tensor& t) {
  Tensor storage = RandomTensor(t.dtype(), {t.size(1), t.size(0)}, 99);
  Tensor view = storage.AsStrided({t.size(0), t.size(1)}, {1, t.size(0)}, 0);
  CopyInto(view, t);
  return view;
}

// `t` [R, C] as every other column of an [R, 2C] tensor: no BLAS layout.
Tensor EveryOtherColumn(const Tensor& t) {
  Tensor storage = RandomTensor(t.dtype(), {t.size(0), 2 * t.size(1)}, 98);
  Tensor view =
      storage.AsStrided({t.size(0), t.size(1)}, {2 * t.size(1), 2}, 1);
  CopyInto(view, t);
  return view;
}

class GemmConformanceTest : public ::testing::TestWithParam<DType> {};

TEST_P(GemmConformanceTest, LinearWithActivations) {
  const DType dtype = GetParam();
  for (const char* act : {"relu", "gelu", "silu", "sigmoid", "tanh"}) {
    auto graph = Chain("linear_act", {"x", "w", "bias"},
                       {{"aten.permute.default",
                         {R("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                        {"aten.addmm.default", {R("bias"), R("x"), R("v0")}},
                        Unary(act, "v1")});
    for (const Mnk& s : kShapes) {
      SCOPED_TRACE(absl::StrCat(act, " ", s.m, "x", s.n, "x", s.k));
      ExpectJitMatchesEager(graph,
                            {Rand(dtype, {s.m, s.k}, 1),
                             Rand(dtype, {s.n, s.k}, 2), Rand(dtype, {s.n}, 3)},
                            GemmTolerance(dtype, s.k));
    }
  }
}

TEST_P(GemmConformanceTest, LinearWithoutBiasAndMmChains) {
  const DType dtype = GetParam();
  auto linear = Chain("linear_silu", {"x", "w"},
                      {{"aten.permute.default",
                        {R("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                       {"aten.mm.default", {R("x"), R("v0")}},
                       Unary("silu", "v1")});
  auto chain = Chain("mm_chain", {"x", "w", "bias", "res"},
                     {{"aten.mm.default", {R("x"), R("w")}},
                      {"aten.add.Tensor", {R("v0"), R("bias")}},
                      Unary("relu", "v1"),
                      {"aten.mul.Scalar", {R("v2"), Arg::Float(0.5)}},
                      {"aten.add.Scalar", {R("v3"), Arg::Float(-0.25)}},
                      {"aten.add.Tensor", {R("v4"), R("res")}}});
  for (const Mnk& s : kShapes) {
    SCOPED_TRACE(absl::StrCat(s.m, "x", s.n, "x", s.k));
    const double tol = GemmTolerance(dtype, s.k);
    ExpectJitMatchesEager(
        linear, {Rand(dtype, {s.m, s.k}, 4), Rand(dtype, {s.n, s.k}, 5)}, tol);
    ExpectJitMatchesEager(
        chain,
        {Rand(dtype, {s.m, s.k}, 6), Rand(dtype, {s.k, s.n}, 7),
         Rand(dtype, {s.n}, 8), Rand(dtype, {s.m, s.n}, 9)},
        tol);
  }
}

TEST_P(GemmConformanceTest, AddmmScalesAndBiasShapes) {
  const DType dtype = GetParam();
  struct Case {
    double beta, alpha;
    bool bias_rows, bias_cols;  // bias [M, N], [1, N], [M, 1] or [N]
  };
  const Case cases[] = {{1, 1, false, true},     {0.5, 2, true, true},
                        {-1, 0.25, true, false}, {1, 1, false, false},
                        {0, 3, false, true},     {2, -1, true, true}};
  for (const Case& c : cases) {
    auto graph = Chain(
        "addmm", {"bias", "x", "w"},
        {{"aten.addmm.default",
          {R("bias"), R("x"), R("w")},
          {{"beta", Arg::Float(c.beta)}, {"alpha", Arg::Float(c.alpha)}}}});
    auto relu =
        Chain("addmm_relu", {"bias", "x", "w"},
              {{"aten.addmm.default",
                {R("bias"), R("x"), R("w")},
                {{"beta", Arg::Float(c.beta)}, {"alpha", Arg::Float(c.alpha)}}},
               Unary("relu", "v0")});
    for (const Mnk& s : kShapes) {
      SCOPED_TRACE(absl::StrCat("beta ", c.beta, " alpha ", c.alpha, " ", s.m,
                                "x", s.n, "x", s.k));
      Shape bias_shape;
      if (c.bias_rows) bias_shape.push_back(s.m);
      bias_shape.push_back(c.bias_cols ? s.n : 1);
      if (!c.bias_rows && !c.bias_cols) bias_shape = {s.n};
      const std::vector<Tensor> inputs = {Rand(dtype, bias_shape, 10),
                                          Rand(dtype, {s.m, s.k}, 11),
                                          Rand(dtype, {s.k, s.n}, 12)};
      const double tol = GemmTolerance(dtype, s.k) * 4;
      ExpectJitMatchesEager(graph, inputs, tol);
      ExpectJitMatchesEager(relu, inputs, tol);
    }
  }
}

TEST_P(GemmConformanceTest, TransposedAndSlicedInputs) {
  const DType dtype = GetParam();
  auto graph = Chain("addmm_tanh", {"bias", "x", "w"},
                     {{"aten.addmm.default", {R("bias"), R("x"), R("w")}},
                      Unary("tanh", "v0")});
  for (const Mnk& s : kShapes) {
    SCOPED_TRACE(absl::StrCat(s.m, "x", s.n, "x", s.k));
    const Tensor bias = Rand(dtype, {s.n}, 13);
    const Tensor x = Rand(dtype, {s.m, s.k}, 14);
    const Tensor w = Rand(dtype, {s.k, s.n}, 15);
    const double tol = GemmTolerance(dtype, s.k);
    ExpectJitMatchesEager(graph, {bias, Transposed(x), w}, tol);
    ExpectJitMatchesEager(graph, {bias, x, Transposed(w)}, tol);
    ExpectJitMatchesEager(graph, {bias, EveryOtherColumn(x), w}, tol);
    ExpectJitMatchesEager(graph, {bias, x, EveryOtherColumn(w)}, tol);
    ExpectJitMatchesEager(
        graph,
        {testing::NonContiguousCopy(bias), x, testing::NonContiguousCopy(w)},
        tol);
  }
}

TEST_P(GemmConformanceTest, BmmWithEpilogues) {
  const DType dtype = GetParam();
  auto relu =
      Chain("bmm_relu", {"a", "b"},
            {{"aten.bmm.default", {R("a"), R("b")}}, Unary("relu", "v0")});
  auto residual = Chain("bmm_res", {"a", "b", "r"},
                        {{"aten.bmm.default", {R("a"), R("b")}},
                         {"aten.add.Tensor", {R("v0"), R("r")}},
                         Unary("sigmoid", "v1")});
  for (int64_t batch : {1, 3, 8}) {
    for (const Mnk& s : kShapes) {
      if (batch * s.m * s.n * s.k > (int64_t{1} << 24)) continue;
      SCOPED_TRACE(absl::StrCat(batch, "x", s.m, "x", s.n, "x", s.k));
      const double tol = GemmTolerance(dtype, s.k);
      const Tensor a = Rand(dtype, {batch, s.m, s.k}, 16);
      const Tensor b = Rand(dtype, {batch, s.k, s.n}, 17);
      ExpectJitMatchesEager(relu, {a, b}, tol);
      ExpectJitMatchesEager(relu, {testing::NonContiguousCopy(a), b}, tol);
      ExpectJitMatchesEager(residual,
                            {a, b, Rand(dtype, {batch, s.m, s.n}, 18)}, tol);
    }
  }
  const Plan plan = PlanOf(*relu, {{2, 3, 4}, {2, 4, 5}}, dtype);
  EXPECT_EQ(GemmSteps(plan), 1) << plan.ToString();
  EXPECT_EQ(plan.steps.size(), 1u);
}

// Bare products written in place, on every split RunGemmStep makes of
// them: one call, row ranges (M >= 256), column ranges (fewer rows, 2^21
// multiply-adds and more) and products of a batch (attention's scores: 64
// products of 64x64x32) across the pool; operands transposed, strided or
// without a BLAS layout; the product also read by a kernel and returned.
TEST_P(GemmConformanceTest, BareProductsWriteTheirResult) {
  const DType dtype = GetParam();
  auto mm = Chain("mm", {"x", "w"}, {{"aten.mm.default", {R("x"), R("w")}}});
  auto read = Chain("mm_read", {"x", "w", "y"},
                    {{"aten.mm.default", {R("x"), R("w")}},
                     {"aten.permute.default",
                      {R("v0"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                     {"aten.mul.Tensor", {R("v1"), R("y")}}},
                    {"v0", "v2"});
  std::vector<Mnk> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.push_back({40, 700, 100});
  shapes.push_back({300, 70, 120});
  for (const Mnk& s : shapes) {
    SCOPED_TRACE(absl::StrCat(s.m, "x", s.n, "x", s.k));
    const double tol = GemmTolerance(dtype, s.k);
    const Tensor x = Rand(dtype, {s.m, s.k}, 31);
    const Tensor w = Rand(dtype, {s.k, s.n}, 32);
    ExpectJitMatchesEager(mm, {x, w}, tol);
    ExpectJitMatchesEager(mm, {Transposed(x), EveryOtherColumn(w)}, tol);
    ExpectJitMatchesEager(mm, {EveryOtherColumn(x), Transposed(w)}, tol);
    ExpectJitMatchesEager(read, {x, w, Rand(dtype, {s.n, s.m}, 33)}, tol);
  }
  auto bmm = Chain("bmm", {"a", "b"}, {{"aten.bmm.default", {R("a"), R("b")}}});
  for (const auto& [batch, s] : {std::pair<int64_t, Mnk>{64, {64, 64, 32}},
                                 {3, {101, 65, 70}},
                                 {1, {600, 1100, 16}},
                                 {17, {1, 9, 5}}}) {
    SCOPED_TRACE(absl::StrCat(batch, "x", s.m, "x", s.n, "x", s.k));
    const double tol = GemmTolerance(dtype, s.k);
    const Tensor a = Rand(dtype, {batch, s.m, s.k}, 34);
    const Tensor b = Rand(dtype, {batch, s.k, s.n}, 35);
    ExpectJitMatchesEager(bmm, {a, b}, tol);
    ExpectJitMatchesEager(bmm, {testing::NonContiguousCopy(a), b}, tol);
  }
  const Plan plan = PlanOf(*bmm, {{64, 64, 32}, {64, 32, 64}}, dtype);
  EXPECT_EQ(BareGemmSteps(plan), 1) << plan.ToString();
}

// The GEMM steps of a dynamic entry's plan, for its first call.
int DynamicGemmSteps(std::shared_ptr<const Graph> graph,
                     const std::vector<Tensor>& example,
                     const std::vector<DynamicDim>& dynamic) {
  const testing::DynamicEntry entry =
      testing::MakeDynamicEntry(graph, example, dynamic);
  if (entry.graph == nullptr) return -1;
  auto plan = testing::SharedJit().PlanFor(*entry.graph, entry.spec);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? GemmSteps(*plan) : -1;
}

// A dynamic entry's products are GEMM steps whose extents and operands are
// expressions over its symbols, bound per call; their epilogues take the
// symbols as size parameters. One entry serves every size.
TEST_P(GemmConformanceTest, DynamicEntriesBindGemmStepsPerCall) {
  const DType dtype = GetParam();
  // Linear + GELU over a symbolic batch of rows: x [m, 24], w [16, 24].
  auto linear = Chain("linear_gelu", {"x", "w", "bias"},
                      {{"aten.permute.default",
                        {R("w"), Arg::OfList({Arg::Int(1), Arg::Int(0)})}},
                       {"aten.addmm.default", {R("bias"), R("x"), R("v0")}},
                       Unary("gelu", "v1")});
  std::vector<std::vector<Tensor>> calls;
  for (int64_t m : {2, 3, 7, 33, 130, 1001}) {
    calls.push_back({Rand(dtype, {m, 24}, m), Rand(dtype, {16, 24}, 2),
                     Rand(dtype, {16}, 3)});
  }
  const std::vector<DynamicDim> rows = {{0, 0}};
  EXPECT_EQ(DynamicGemmSteps(linear, calls[0], rows), 1);
  auto exe = testing::ExpectDynamicJitMatchesEager(linear, rows, calls,
                                                   GemmTolerance(dtype, 24));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(testing::WithoutBackend(exe->Describe()),
            "jit: 1 fused kernels, 0 eager nodes, 1 size symbols; extern "
            "calls: 'v1' (aten.addmm.default) on BLAS with an epilogue "
            "kernel");

  // Every extent symbolic: x [m, k] @ w [k, 5] + bias, relu, + res [m, 5].
  auto chain = Chain("mm_chain", {"x", "w", "bias", "res"},
                     {{"aten.mm.default", {R("x"), R("w")}},
                      {"aten.add.Tensor", {R("v0"), R("bias")}},
                      Unary("relu", "v1"),
                      {"aten.add.Tensor", {R("v2"), R("res")}}});
  calls.clear();
  for (const Mnk& s : kShapes) {
    if (s.m == 1 || s.k == 1) continue;  // sizes 0 and 1 are specialized
    calls.push_back({Rand(dtype, {s.m, s.k}, 4), Rand(dtype, {s.k, 5}, 5),
                     Rand(dtype, {5}, 6), Rand(dtype, {s.m, 5}, 7)});
  }
  ASSERT_GE(calls.size(), 5u);
  const std::vector<DynamicDim> all = {{0, 0}, {0, 1}, {1, 0}, {3, 0}};
  EXPECT_EQ(DynamicGemmSteps(chain, calls[0], all), 1);
  testing::ExpectDynamicJitMatchesEager(chain, all, calls,
                                        GemmTolerance(dtype, 1100));

  // bmm over a symbolic batch (attention's scores: [b * heads, t, t]).
  auto bmm = Chain("bmm_sigmoid", {"a", "b"},
                   {{"aten.bmm.default", {R("a"), R("b")}},
                    {"aten.mul.Scalar", {R("v0"), Arg::Float(0.25)}},
                    Unary("sigmoid", "v1")});
  calls.clear();
  for (int64_t batch : {2, 3, 5, 8, 17}) {
    calls.push_back({Rand(dtype, {batch, 6, 8}, batch),
                     Rand(dtype, {batch, 8, 6}, batch + 1)});
  }
  const std::vector<DynamicDim> batches = {{0, 0}, {1, 0}};
  EXPECT_EQ(DynamicGemmSteps(bmm, calls[0], batches), 1);
  testing::ExpectDynamicJitMatchesEager(bmm, batches, calls,
                                        GemmTolerance(dtype, 8));
}

TEST(GemmStepTest, DynamicStepsPrintAndBindTheirExtents) {
  GemmStep step;
  step.target = "aten.mm.default";
  TensorRef a{0,
              {IndexExpr::Size(0) * IndexExpr::Const(16), IndexExpr::Const(64)},
              {IndexExpr::Const(64), IndexExpr::Const(1)},
              IndexExpr::Const(0)};
  TensorRef b{1,
              {IndexExpr::Const(64), IndexExpr::Const(32)},
              {IndexExpr::Const(1), IndexExpr::Const(64)},
              IndexExpr::Const(0)};
  step.symbolic =
      GemmStep::Symbolic{IndexExpr::Const(1),  a.sizes[0], IndexExpr::Const(32),
                         IndexExpr::Const(64), a,          b};
  EXPECT_THAT(step.ToString(), HasSubstr("[(s0*16)x64] @ [64x32]^T"));
  auto bound = step.Bind({3});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_FALSE(bound->symbolic.has_value());
  EXPECT_EQ(bound->m, 48);
  EXPECT_EQ(bound->n, 32);
  EXPECT_EQ(bound->k, 64);
  EXPECT_EQ(bound->a.sizes, (Shape{48, 64}));
  EXPECT_EQ(bound->ToString(),
            "gemm aten.mm.default float32 [48x64] @ [64x32]^T");
  EXPECT_EQ(step.Bind({0}).status().code(), absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Float, GemmConformanceTest,
                         ::testing::Values(DType::kFloat32, DType::kFloat64),
                         [](const auto& info) {
                           return std::string(DTypeName(info.param));
                         });

TEST(GemmPanelTest, PanelsFitL2OrKRowsAndCoverEveryThread) {
  GemmStep step;
  step.m = 1024;
  step.n = 1024;
  step.k = 1024;
  EXPECT_EQ(GemmPanelUnits(step, 1), 1024);
  EXPECT_EQ(GemmPanelUnits(step, 2), 512);
  EXPECT_EQ(GemmPanelUnits(step, 16), 64);
  step.m = 4096;
  step.k = 64;
  EXPECT_EQ(GemmPanelUnits(step, 1), 256);  // 1 MiB of float32 rows
  step.m = 1;
  EXPECT_EQ(GemmPanelUnits(step, 4), 1);
  // Too little work to split: one panel, on the calling thread.
  step.m = 256;
  step.n = 16;
  step.k = 8;
  EXPECT_EQ(GemmPanelUnits(step, 2), 256);
  step.batched = true;
  step.batch = 5;
  EXPECT_EQ(GemmPanelUnits(step, 2), 5);
  step.m = step.n = step.k = 128;
  EXPECT_EQ(GemmPanelUnits(step, 2), 3);
}

}  // namespace
}  // namespace guardjit
