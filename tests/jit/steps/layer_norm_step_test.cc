// Tests of the layer-norm step (jit/steps/layer_norm_step.h): its rows
// against the formula in double, and programs that run native_layer_norm
// as the step against the eager interpreter.

#include "jit/steps/layer_norm_step.h"

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::NonContiguousCopy;
using ::testing::Not;
using testing::OpGraph;
using testing::RandomTensor;
using testing::SharedJit;

constexpr char kLayerNorm[] = "aten.native_layer_norm.default";

// Rows of every length around the 16 lanes, with and without weight and
// bias, against mean, biased variance and the normalized row in double.
TEST(LayerNormStepTest, RowsFollowTheFormula) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 5.0f);
  for (int64_t n : {1, 2, 7, 15, 16, 17, 33, 64, 256, 1000}) {
    for (int affine = 0; affine < 4; ++affine) {
      SCOPED_TRACE(absl::StrCat("n ", n, ", affine ", affine));
      const int64_t rows = 5;
      std::vector<float> x(rows * n), w(n), b(n), y(rows * n), mean(rows),
          rstd(rows);
      for (float& v : x) v = u(rng);
      for (float& v : w) v = u(rng);
      for (float& v : b) v = u(rng);
      const float* wp = (affine & 1) ? w.data() : nullptr;
      const float* bp = (affine & 2) ? b.data() : nullptr;
      const float eps = 1e-5f;
      LayerNormRows(x.data(), wp, bp, eps, rows, n, y.data(), mean.data(),
                    rstd.data());
      for (int64_t r = 0; r < rows; ++r) {
        double m = 0, v = 0;
        for (int64_t i = 0; i < n; ++i) m += x[r * n + i];
        m /= n;
        for (int64_t i = 0; i < n; ++i) {
          v += (x[r * n + i] - m) * (x[r * n + i] - m);
        }
        const double s = 1 / std::sqrt(v / n + eps);
        EXPECT_NEAR(mean[r], m, 1e-5 * (1 + std::fabs(m)));
        EXPECT_NEAR(rstd[r], s, 1e-4 * s);
        for (int64_t i = 0; i < n; ++i) {
          double want = (x[r * n + i] - m) * s;
          if (wp != nullptr) want *= w[i];
          if (bp != nullptr) want += b[i];
          EXPECT_NEAR(y[r * n + i], want, 2e-5 * (1 + std::fabs(want)))
              << "row " << r << ", element " << i;
        }
      }
    }
  }
}

// A NaN poisons its own row only; an infinity makes its row NaN (inf - inf),
// as the formula does.
TEST(LayerNormStepTest, NonFiniteValuesStayInTheirRow) {
  const int64_t n = 40;
  std::vector<float> x(3 * n, 1.5f), y(3 * n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  x[n + 7] = NAN;
  x[2 * n + 3] = INFINITY;
  LayerNormRows(x.data(), nullptr, nullptr, 1e-5f, 3, n, y.data(), nullptr,
                nullptr);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_FALSE(std::isnan(y[i])) << i;
    EXPECT_TRUE(std::isnan(y[n + i])) << i;
    EXPECT_TRUE(std::isnan(y[2 * n + i])) << i;
  }
}

// native_layer_norm(x0, shape, [x1 weight], [x2 bias], eps) with all three
// outputs, compiled for `inputs`: the program runs it as a layer-norm step
// (no kernel, no eager node) and matches the eager interpreter.
void ExpectLayerNormStep(const std::vector<Tensor>& inputs,
                         std::vector<int64_t> normalized, bool weight,
                         bool bias, double eps = 1e-5) {
  int next = 1;
  std::vector<Arg> args = {Arg::Ref("x0"), testing::Ints(normalized)};
  args.push_back(weight ? Arg::Ref(absl::StrCat("x", next++)) : Arg::None());
  args.push_back(bias ? Arg::Ref(absl::StrCat("x", next++)) : Arg::None());
  args.push_back(Arg::Float(eps));
  std::shared_ptr<const Graph> graph =
      OpGraph(kLayerNorm, args, static_cast<int>(inputs.size()), {}, 3);
  Specialization spec;
  for (const Tensor& t : inputs) {
    spec.inputs.push_back(TensorMeta::Of(t));
    spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
    spec.example_strides.emplace_back(t.strides().begin(), t.strides().end());
  }
  auto exe = SharedJit().Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_THAT((*exe)->Describe(),
              HasSubstr("'op' (aten.native_layer_norm.default) as one "
                        "layer-norm step"));
  EXPECT_THAT((*exe)->Describe(), HasSubstr("0 eager nodes"));
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

TEST(LayerNormStepTest, MatchesEagerAtRandomShapes) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 8; ++round) {
    const int64_t batch = 1 + static_cast<int64_t>(rng() % 3);
    const int64_t tokens = 1 + static_cast<int64_t>(rng() % 70);
    const int64_t dim = 1 + static_cast<int64_t>(rng() % 300);
    const bool weight = round % 2 == 0, bias = round % 4 < 2;
    SCOPED_TRACE(absl::StrCat("round ", round, ": [", batch, ", ", tokens, ", ",
                              dim, "], weight ", weight, ", bias ", bias));
    std::vector<Tensor> inputs = {RandomTensor(
        DType::kFloat32, {batch, tokens, dim}, 200 + round, -4, 6)};
    if (weight) {
      inputs.push_back(RandomTensor(DType::kFloat32, {dim}, 210 + round));
    }
    if (bias) {
      inputs.push_back(RandomTensor(DType::kFloat32, {dim}, 220 + round));
    }
    ExpectLayerNormStep(inputs, {dim}, weight, bias, round % 3 ? 1e-5 : 0.1);
  }
}

// Normalized over the last two dims; a strided input (copied contiguous
// first); NaN and infinities in the input.
TEST(LayerNormStepTest, MatchesEagerOverTwoDimsStridedAndNonFinite) {
  ExpectLayerNormStep({RandomTensor(DType::kFloat32, {3, 5, 6}, 1),
                       RandomTensor(DType::kFloat32, {5, 6}, 2),
                       RandomTensor(DType::kFloat32, {5, 6}, 3)},
                      {5, 6}, true, true);
  ExpectLayerNormStep(
      {NonContiguousCopy(RandomTensor(DType::kFloat32, {4, 9, 24}, 4)),
       RandomTensor(DType::kFloat32, {24}, 5)},
      {24}, true, false);
  Tensor x = RandomTensor(DType::kFloat32, {6, 32}, 6);
  x.data_as<float>()[5] = NAN;
  x.data_as<float>()[40] = INFINITY;
  x.data_as<float>()[100] = -INFINITY;
  ExpectLayerNormStep({x, RandomTensor(DType::kFloat32, {32}, 7),
                       RandomTensor(DType::kFloat32, {32}, 8)},
                      {32}, true, true);
}

// A pre-norm transformer's residual stream: h = x + y, then layer norm of
// h; the sum is a kernel (or an epilogue), the norm the step, and both
// match eager. float64 norms stay compiled kernels.
TEST(LayerNormStepTest, FollowsAKernelAndLeavesOtherDTypesLowered) {
  GraphBuilder b("prenorm");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  testing::AddNode(b, "h", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  testing::AddNode(b, "ln", kLayerNorm,
                   {Arg::Ref("h"), testing::Ints({48}), Arg::Ref("w"),
                    Arg::None(), Arg::Float(1e-5)});
  testing::AddNode(b, "y0", "getitem", {Arg::Ref("ln"), Arg::Int(0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y0"), Arg::Ref("h")}).ok());
  const auto graph = testing::Finish(b);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    const std::vector<Tensor> inputs = {RandomTensor(dtype, {2, 10, 48}, 1),
                                        RandomTensor(dtype, {2, 10, 48}, 2),
                                        RandomTensor(dtype, {48}, 3)};
    Specialization spec;
    for (const Tensor& t : inputs) {
      spec.inputs.push_back(TensorMeta::Of(t));
      spec.example_sizes.emplace_back(t.sizes().begin(), t.sizes().end());
      spec.example_strides.emplace_back(t.strides().begin(), t.strides().end());
    }
    auto exe = SharedJit().Compile(graph, spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    if (dtype == DType::kFloat32) {
      EXPECT_THAT((*exe)->Describe(), HasSubstr("as one layer-norm step"));
    } else {
      EXPECT_THAT((*exe)->Describe(), Not(HasSubstr("layer-norm step")));
    }
    EXPECT_THAT((*exe)->Describe(), HasSubstr("0 eager nodes"));
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

}  // namespace
}  // namespace guardjit
