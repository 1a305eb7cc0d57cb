// Tests of the library's pointwise epilogues of convolutions
// (jit/steps/pointwise_epilogue.h): the loop's semantics element by element,
// and convolution networks planned with them against the eager interpreter.

#include "jit/steps/pointwise_epilogue.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/packed_gemm.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/steps/onednn_conv_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using Act = PointwiseEpilogue::Act;
using testing::ExpectJitMatchesEager;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::onednn::AddConv2d;
using testing::onednn::AddWeight;
using testing::onednn::List;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// The epilogue `e` over `x` (plus `residual` when not empty), in the
// vectors of every instruction set the host has, in the vector loop and in
// its tail, in place and into another array, which must all agree.
std::vector<float> Apply(PointwiseEpilogue e, std::vector<float> x,
                         const std::vector<float>& residual = {});

// Bitwise equal, NaN equal to any NaN.
void ExpectSame(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "at " << i;
    }
  }
}

std::vector<float> Apply(PointwiseEpilogue e, std::vector<float> x,
                         const std::vector<float>& residual) {
  std::vector<float> first;
  for (PointwiseIsa isa : {PointwiseIsa::kBest, PointwiseIsa::kAvx512,
                           PointwiseIsa::kAvx2, PointwiseIsa::kBaseline}) {
    if (!HostHasPointwiseIsa(isa)) continue;
    SCOPED_TRACE(absl::StrCat("isa ", static_cast<int>(isa)));
    // Nine copies end to end, so that every value goes through the
    // vector loop and its tail.
    constexpr int kCopies = 9;
    std::vector<float> y, r;
    for (int c = 0; c < kCopies; ++c) {
      y.insert(y.end(), x.begin(), x.end());
      r.insert(r.end(), residual.begin(), residual.end());
    }
    // Into another array, then in place: the same.
    std::vector<float> other(y.size(), 1234.0f);
    const int64_t n = static_cast<int64_t>(y.size());
    RunPointwiseEpilogue(e, y.data(), r.empty() ? nullptr : r.data(),
                         other.data(), n, isa);
    RunPointwiseEpilogue(e, y.data(), r.empty() ? nullptr : r.data(), y.data(),
                         n, isa);
    ExpectSame(other, y);
    for (int c = 0; c < kCopies; ++c) {
      const std::vector<float> copy(y.begin() + c * x.size(),
                                    y.begin() + (c + 1) * x.size());
      if (first.empty()) {
        first = copy;
      } else {
        ExpectSame(copy, first);
      }
    }
  }
  return first;
}

// The loop IR's semantics: relu is x < 0 ? 0 : x (NaN and -0 pass), maximum
// and minimum propagate NaN and order -0 below +0, as llvm.maximum does.
TEST(PointwiseEpilogueTest, ActivationsKeepTheLoopIrsSemantics) {
  const std::vector<float> x = {-2.5f, -0.0f, 0.0f, 3.0f,
                                7.5f,  kNan,  kInf, -kInf};
  PointwiseEpilogue none;
  ExpectSame(Apply(none, x), x);
  PointwiseEpilogue relu{.act = Act::kRelu};
  ExpectSame(Apply(relu, x), {0.0f, -0.0f, 0.0f, 3.0f, 7.5f, kNan, kInf, 0.0f});
  PointwiseEpilogue max0{.act = Act::kMaximum, .lo = 0.0f};
  ExpectSame(Apply(max0, x), {0.0f, 0.0f, 0.0f, 3.0f, 7.5f, kNan, kInf, 0.0f});
  PointwiseEpilogue relu6{.act = Act::kClamp, .lo = 0.0f, .hi = 6.0f};
  ExpectSame(Apply(relu6, x), {0.0f, 0.0f, 0.0f, 3.0f, 6.0f, kNan, 6.0f, 0.0f});
  // minimum(maximum(x, -0), +0): -0 below zero and at -0, +0 from +0 up.
  PointwiseEpilogue zeros{.act = Act::kClamp, .lo = -0.0f, .hi = 0.0f};
  ExpectSame(Apply(zeros, {-1.0f, -0.0f, 0.0f, 1.0f}),
             {-0.0f, -0.0f, 0.0f, 0.0f});
}

TEST(PointwiseEpilogueTest, ResidualIsAddedBeforeTheActivation) {
  PointwiseEpilogue e{.residual_param = 1, .act = Act::kRelu};
  ExpectSame(Apply(e, {1.0f, -3.0f, 2.0f, kNan}, {-2.0f, 4.0f, kNan, 1.0f}),
             {0.0f, 1.0f, kNan, kNan});
  // Long enough for the vector loop and its tail.
  std::vector<float> x(1003), r(1003), want(1003);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = u(rng);
    r[i] = u(rng);
    want[i] = std::fmin(std::fmax(x[i] + r[i], -1.0f), 4.0f);
  }
  PointwiseEpilogue clamp{
      .residual_param = 0, .act = Act::kClamp, .lo = -1.0f, .hi = 4.0f};
  ExpectSame(Apply(clamp, x, r), want);
}

// GPT-2's tanh-GELU, against the formula in double: within a few float
// roundings (absolute where 1 + tanh cancels, far below zero), the same in
// every instruction set (Apply), and the loop IR's values at the edges:
// NaN stays NaN, +inf is +inf, -inf is NaN (-inf * 0, as the compiled
// kernels give), zeros keep their sign.
TEST(PointwiseEpilogueTest, GeluTanhFollowsTheFormula) {
  const PointwiseEpilogue gelu{.act = Act::kGeluTanh};
  std::vector<float> x;
  for (float v = -12.0f; v <= 12.0f; v += 0.0137f) x.push_back(v);
  for (float v : {1e-30f, -1e-30f, 1e-8f, -1e-8f, 0.3f, -0.3f, 0.62f, 0.63f,
                  40.0f, -40.0f, 1e20f, -1e20f}) {
    x.push_back(v);
  }
  const std::vector<float> y = Apply(gelu, x);
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want =
        0.5 * v *
        (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(y[i], want, 4e-7 * std::fabs(want) + 1e-7) << "at x = " << v;
  }
  ExpectSame(Apply(gelu, {kNan, kInf, -kInf, 0.0f, -0.0f}),
             {kNan, kInf, kNan, 0.0f, -0.0f});
  // With a residual: gelu(x + r).
  ExpectSame(
      Apply(PointwiseEpilogue{.residual_param = 0, .act = Act::kGeluTanh},
            {1.0f, -2.0f, kNan}, {0.5f, 2.0f, 1.0f}),
      Apply(gelu, {1.5f, 0.0f, kNan}));
}

TEST(PointwiseEpilogueTest, NamesWhatItRuns) {
  EXPECT_EQ(PointwiseEpilogue{}.ToString(), "a copy");
  EXPECT_EQ(
      (PointwiseEpilogue{.residual_param = 2, .act = Act::kRelu}).ToString(),
      "residual add + relu");
  EXPECT_EQ(
      (PointwiseEpilogue{.act = Act::kClamp, .lo = 0, .hi = 6}).ToString(),
      "clamp to [0, 6]");
  EXPECT_EQ((PointwiseEpilogue{.act = Act::kMaximum, .lo = 0.5f}).ToString(),
            "maximum with 0.5");
  EXPECT_EQ((PointwiseEpilogue{.act = Act::kGeluTanh}).ToString(), "gelu_tanh");
}

// The epilogues of a plan's steps (convolutions and packed products) that
// the library runs, as "node: what"; none of those steps runs a kernel.
std::vector<std::string> LibraryEpilogues(const Graph& graph,
                                          const Plan& plan) {
  std::vector<std::string> names;
  for (const PlanStep& step : plan.steps) {
    std::string what;
    if (step.conv != nullptr && step.conv->onednn.has_value() &&
        step.conv->onednn->pointwise.has_value()) {
      what = step.conv->onednn->pointwise->ToString();
    } else if (step.gemm != nullptr && step.gemm->packed.has_value() &&
               step.gemm->packed->pointwise.has_value()) {
      what = step.gemm->packed->pointwise->ToString();
    } else {
      continue;
    }
    EXPECT_FALSE(HostStepRunsKernel(step));
    names.push_back(absl::StrCat(graph.node(step.node).name, ": ", what));
  }
  return names;
}

// `graph` compiled against eager on `inputs`, then again with a NaN (at
// element `at`) and both infinities in input 0.
void ExpectMatchesEagerWithNonFinite(const std::shared_ptr<const Graph>& graph,
                                     std::vector<Tensor> inputs, int64_t at) {
  ExpectJitMatchesEager(graph, inputs, 1e-4);
  float* x = inputs[0].data_as<float>();
  x[at] = NAN;
  x[inputs[0].numel() - 1] = INFINITY;
  x[inputs[0].numel() / 2] = -INFINITY;
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

// A residual block at random sizes: a = act0(conv0(x)), b = conv1(a),
// out = act1(b + a) then one more convolution so that `out` stays
// channels last between them; every epilogue but the last is the library's.
// Against eager, with NaN and infinities in the input too.
TEST(PointwiseEpilogueTest, ResidualBlocksMatchEager) {
  if (!OneDnnEnabled()) GTEST_SKIP() << "GJ_ONEDNN=0";
  if (!PointwiseEpiloguesEnabled()) GTEST_SKIP() << "GJ_POINTWISE_EPILOGUES=0";
  std::mt19937_64 rng(5);
  const auto pick = [&](std::initializer_list<int64_t> values) {
    std::vector<int64_t> v(values);
    return v[rng() % v.size()];
  };
  for (int round = 0; round < 8; ++round) {
    const int64_t batch = pick({1, 2, 3});
    const int64_t in = pick({3, 8}), channels = pick({16, 24, 40});
    const int64_t height = pick({7, 12, 20}), width = pick({5, 9, 16});
    const int64_t kernel = pick({1, 3});
    const int act = static_cast<int>(rng() % 3);  // relu, hardtanh, clamp(min)
    SCOPED_TRACE(absl::StrCat("round ", round, ": batch ", batch, ", ", in,
                              " -> ", channels, " channels, ", height, "x",
                              width, ", kernel ", kernel, ", act ", act));
    GraphBuilder b("residual_block");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddWeight(b, "w0", {channels, in, kernel, kernel}, 10 + round);
    AddWeight(b, "w1", {channels, channels, kernel, kernel}, 20 + round);
    AddWeight(b, "w2", {8, channels, 1, 1}, 30 + round);
    const auto activation = [&](const std::string& name, const std::string& x) {
      switch (act) {
        case 0:
          testing::AddNode(b, name, "aten.relu.default", {Arg::Ref(x)});
          break;
        case 1:
          testing::AddNode(b, name, "aten.hardtanh.default",
                           {Arg::Ref(x), Arg::Float(-0.5), Arg::Float(2)});
          break;
        default:
          testing::AddNode(b, name, "aten.clamp.default",
                           {Arg::Ref(x), Arg::Float(0.25), Arg::None()});
          break;
      }
    };
    AddConv2d(b, "conv0", "x", "w0", kernel / 2);
    activation("a", "conv0");
    AddConv2d(b, "conv1", "a", "w1", kernel / 2);
    testing::AddNode(b, "sum", "aten.add.Tensor",
                     {Arg::Ref("conv1"), Arg::Ref("a")});
    activation("out", "sum");
    AddConv2d(b, "conv2", "out", "w2", 0);
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("conv2")}).ok());
    const auto graph = testing::Finish(b);
    std::vector<Tensor> inputs = {RandomTensor(
        DType::kFloat32, {batch, in, height, width}, 40 + round, -2, 2)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    const std::vector<std::string> pointwise = LibraryEpilogues(*graph, plan);
    ASSERT_EQ(pointwise.size(), 2u) << plan.ToString();
    EXPECT_THAT(pointwise[1], ::testing::HasSubstr("conv1: residual add + "))
        << plan.ToString();
    ExpectMatchesEagerWithNonFinite(graph, std::move(inputs), round);
  }
}

// Linear layers at a serving batch: h = act(x @ w1^T + b1), out = h @ w2^T
// + b2 + h (a residual), then a bare product; the first two epilogues run
// on the library's loop after the packed products, over each part's
// columns (the wide layer's product is split across the pool's threads).
// Against eager at random batches, with NaN and infinities in the input.
TEST(PointwiseEpilogueTest, LinearLayersMatchEager) {
  if (!PackedGemmEnabled()) GTEST_SKIP() << "GJ_PACKED_GEMM=0";
  if (!PointwiseEpiloguesEnabled()) GTEST_SKIP() << "GJ_POINTWISE_EPILOGUES=0";
  std::mt19937_64 rng(11);
  for (int round = 0; round < 6; ++round) {
    const int64_t batch = 1 + static_cast<int64_t>(rng() % 24);
    const int64_t in = 64 + static_cast<int64_t>(rng() % 200);
    const int64_t hidden = round % 2 == 0 ? 1024 : 96 + rng() % 64;
    const int act = round % 3;  // relu, hardtanh, clamp(min)
    SCOPED_TRACE(absl::StrCat("round ", round, ": [", batch, "x", in, "] -> ",
                              hidden, ", act ", act));
    GraphBuilder b("linear");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddWeight(b, "w1", {hidden, in}, 50 + round);
    AddWeight(b, "b1", {hidden}, 60 + round);
    AddWeight(b, "w2", {hidden, hidden}, 70 + round);
    AddWeight(b, "b2", {hidden}, 80 + round);
    AddWeight(b, "w3", {hidden, 16}, 90 + round);
    const auto ref = [](const char* name) { return Arg::Ref(name); };
    testing::AddNode(b, "t1", "aten.permute.default",
                     {ref("w1"), testing::Ints({1, 0})});
    testing::AddNode(b, "fc1", "aten.addmm.default",
                     {ref("b1"), ref("x"), ref("t1")});
    switch (act) {
      case 0:
        testing::AddNode(b, "h", "aten.relu.default", {ref("fc1")});
        break;
      case 1:
        testing::AddNode(b, "h", "aten.hardtanh.default",
                         {ref("fc1"), Arg::Float(-1), Arg::Float(1)});
        break;
      default:
        testing::AddNode(b, "h", "aten.clamp.default",
                         {ref("fc1"), Arg::Float(-0.25), Arg::None()});
        break;
    }
    testing::AddNode(b, "t2", "aten.permute.default",
                     {ref("w2"), testing::Ints({1, 0})});
    testing::AddNode(b, "fc2", "aten.addmm.default",
                     {ref("b2"), ref("h"), ref("t2")});
    testing::AddNode(b, "out", "aten.add.Tensor", {ref("fc2"), ref("h")});
    testing::AddNode(b, "bare", "aten.mm.default", {ref("out"), ref("w3")});
    ASSERT_TRUE(b.SetOutputs({ref("bare"), ref("out")}).ok());
    const auto graph = testing::Finish(b);
    std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {batch, in}, 100 + round, -2, 2)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    const std::vector<std::string> pointwise = LibraryEpilogues(*graph, plan);
    ASSERT_EQ(pointwise.size(), 2u) << plan.ToString();
    EXPECT_THAT(pointwise[0], ::testing::StartsWith("fc1: bias + "));
    EXPECT_EQ(pointwise[1], "fc2: bias + residual add");
    ExpectMatchesEagerWithNonFinite(graph, std::move(inputs), round);
  }
}

// A transformer's MLP as torch.export writes it: tokens [1, T, C] viewed
// as [T, C] for fc (addmm), its result viewed back as [1, T, 4C] for the
// tanh-GELU, viewed again for proj, and proj's result viewed as [1, T, C]
// for the residual add. The views only add a unit dim, so both pointwise
// ops are epilogues of their products (their loops over the product's
// dims), on the library's loop: no kernel compiles; so is a residual
// stream that is itself a sum (x + y). Against eager at
// random token counts and widths, with NaN and infinities in the input.
TEST(PointwiseEpilogueTest, TransformerMlpThroughViewsMatchesEager) {
  if (!PackedGemmEnabled()) GTEST_SKIP() << "GJ_PACKED_GEMM=0";
  if (!PointwiseEpiloguesEnabled()) GTEST_SKIP() << "GJ_POINTWISE_EPILOGUES=0";
  std::mt19937_64 rng(13);
  for (int round = 0; round < 4; ++round) {
    const int64_t tokens = 2 + static_cast<int64_t>(rng() % 70);
    const int64_t dim = 32 * (1 + static_cast<int64_t>(rng() % 4));
    const int64_t hidden = 4 * dim;
    SCOPED_TRACE(
        absl::StrCat("round ", round, ": ", tokens, " tokens of ", dim));
    GraphBuilder b("mlp");
    ASSERT_TRUE(b.AddPlaceholder("x").ok());
    AddWeight(b, "w1", {hidden, dim}, 110 + round);
    AddWeight(b, "b1", {hidden}, 120 + round);
    AddWeight(b, "w2", {dim, hidden}, 130 + round);
    AddWeight(b, "b2", {dim}, 140 + round);
    const auto ref = [](const char* name) { return Arg::Ref(name); };
    testing::AddNode(b, "x2", "aten.view.default",
                     {ref("x"), testing::Ints({tokens, dim})});
    testing::AddNode(b, "t1", "aten.permute.default",
                     {ref("w1"), testing::Ints({1, 0})});
    testing::AddNode(b, "fc", "aten.addmm.default",
                     {ref("b1"), ref("x2"), ref("t1")});
    testing::AddNode(b, "fc3", "aten.view.default",
                     {ref("fc"), testing::Ints({1, tokens, hidden})});
    testing::AddNode(b, "g", "aten.gelu.default", {ref("fc3")},
                     {{"approximate", Arg::String("tanh")}});
    testing::AddNode(b, "g2", "aten.view.default",
                     {ref("g"), testing::Ints({tokens, hidden})});
    testing::AddNode(b, "t2", "aten.permute.default",
                     {ref("w2"), testing::Ints({1, 0})});
    testing::AddNode(b, "proj", "aten.addmm.default",
                     {ref("b2"), ref("g2"), ref("t2")});
    testing::AddNode(b, "proj3", "aten.view.default",
                     {ref("proj"), testing::Ints({1, tokens, dim})});
    // Odd rounds: the residual stream is x + y, summed in the epilogue.
    const bool two = round % 2 == 1;
    if (two) {
      ASSERT_TRUE(b.AddPlaceholder("y").ok());
      testing::AddNode(b, "xy", "aten.add.Tensor", {ref("x"), ref("y")});
    }
    testing::AddNode(b, "out", "aten.add.Tensor",
                     {ref(two ? "xy" : "x"), ref("proj3")});
    ASSERT_TRUE(b.SetOutputs({ref("out")}).ok());
    const auto graph = testing::Finish(b);
    std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {1, tokens, dim}, 150 + round, -2, 2)};
    if (two) {
      inputs.push_back(
          RandomTensor(DType::kFloat32, {1, tokens, dim}, 160 + round, -2, 2));
    }
    const Plan plan = PlanOfInputs(*graph, inputs);
    EXPECT_THAT(LibraryEpilogues(*graph, plan),
                ::testing::ElementsAre("fc: bias + gelu_tanh",
                                       two ? "proj: bias + add of two residuals"
                                           : "proj: bias + residual add"))
        << plan.ToString();
    for (const PlanStep& step : plan.steps) {
      EXPECT_FALSE(HostStepRunsKernel(step)) << plan.ToString();
    }
    ExpectMatchesEagerWithNonFinite(graph, std::move(inputs), round);
  }
}

}  // namespace
}  // namespace guardjit
