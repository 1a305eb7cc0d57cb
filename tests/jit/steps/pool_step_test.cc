// Tests of the pool step (jit/steps/pool_step.h): its loops against a
// scalar scan in double at random shapes, windows and layouts, and convnets
// that run their max pools and spatial means as the step against the eager
// interpreter, with the activations around them channels last.

#include "jit/steps/pool_step.h"

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/steps/onednn_conv_test_util.h"
#include "tests/scoped_env.h"
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
using testing::onednn::OneDnnConvTest;
using testing::onednn::OneDnnSteps;

// Strides of an [N, C, H, W] tensor, contiguous or channels last.
void Strides(const int64_t sizes[4], bool channels_last, int64_t out[4]) {
  if (channels_last) {
    out[1] = 1;
    out[3] = sizes[1];
    out[2] = sizes[3] * sizes[1];
    out[0] = sizes[2] * sizes[3] * sizes[1];
  } else {
    out[3] = 1;
    out[2] = sizes[3];
    out[1] = sizes[2] * sizes[3];
    out[0] = sizes[1] * sizes[2] * sizes[3];
  }
}

int64_t OutSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// Every window, padding and dilation at both layouts (input and output
// each), with NaN and -inf in the input, against a scan in double.
TEST(PoolStepTest, MaxPoolRowsMatchAScan) {
  std::mt19937 rng(5);
  for (int round = 0; round < 40; ++round) {
    PoolShape s;
    MaxPoolWindow w;
    s.n = 1 + rng() % 3;
    s.c = 1 + rng() % 37;
    s.h = 1 + rng() % 13;
    s.w = 1 + rng() % 13;
    for (int d = 0; d < 2; ++d) {
      w.kernel[d] = 1 + rng() % 3;
      w.stride[d] = 1 + rng() % 3;
      w.dilation[d] = 1 + rng() % 2;
      w.padding[d] = rng() % (w.kernel[d] / 2 + 1);
    }
    s.out_h =
        OutSize(s.h, w.kernel[0], w.stride[0], w.padding[0], w.dilation[0]);
    s.out_w =
        OutSize(s.w, w.kernel[1], w.stride[1], w.padding[1], w.dilation[1]);
    if (s.out_h < 1 || s.out_w < 1) continue;
    const bool in_cl = round % 2 == 0, out_cl = round % 3 != 0;
    SCOPED_TRACE(absl::StrCat(
        "round ", round, ": ", s.n, "x", s.c, "x", s.h, "x", s.w, " kernel ",
        w.kernel[0], "x", w.kernel[1], " stride ", w.stride[0], "x",
        w.stride[1], " pad ", w.padding[0], "x", w.padding[1], " dilation ",
        w.dilation[0], "x", w.dilation[1], " layouts ", in_cl, out_cl));
    const int64_t in_sizes[4] = {s.n, s.c, s.h, s.w};
    const int64_t out_sizes[4] = {s.n, s.c, s.out_h, s.out_w};
    Strides(in_sizes, in_cl, s.in_strides);
    Strides(out_sizes, out_cl, s.out_strides);
    std::vector<float> in(s.n * s.c * s.h * s.w);
    std::uniform_real_distribution<float> u(-5, 5);
    for (float& v : in) v = u(rng);
    in[rng() % in.size()] = NAN;
    in[rng() % in.size()] = -INFINITY;
    std::vector<float> out(s.n * s.c * s.out_h * s.out_w, 12345.0f);
    MaxPool2dRows(in.data(), out.data(), s, w, 0, s.n * s.out_h);
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t c = 0; c < s.c; ++c) {
        for (int64_t y = 0; y < s.out_h; ++y) {
          for (int64_t x = 0; x < s.out_w; ++x) {
            double m = -std::numeric_limits<double>::infinity();
            bool nan = false;
            for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
              for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
                const int64_t iy =
                    y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
                const int64_t ix =
                    x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                const float v = in[n * s.in_strides[0] + c * s.in_strides[1] +
                                   iy * s.in_strides[2] + ix * s.in_strides[3]];
                nan = nan || std::isnan(v);
                m = std::max<double>(m, v);
              }
            }
            const float got = out[n * s.out_strides[0] + c * s.out_strides[1] +
                                  y * s.out_strides[2] + x * s.out_strides[3]];
            if (nan) {
              EXPECT_TRUE(std::isnan(got))
                  << n << " " << c << " " << y << " " << x;
            } else {
              EXPECT_EQ(got, m) << n << " " << c << " " << y << " " << x;
            }
          }
        }
      }
    }
  }
}

// The mean of each plane at both input layouts and a strided output, for
// channel counts around the vector widths; a NaN poisons its plane only.
TEST(PoolStepTest, SpatialMeanRowsMatchTheSum) {
  std::mt19937 rng(9);
  for (int64_t c : {1, 3, 15, 16, 17, 40, 512}) {
    for (int layout = 0; layout < 2; ++layout) {
      SCOPED_TRACE(absl::StrCat("c ", c, ", channels last ", layout));
      PoolShape s;
      s.n = 3;
      s.c = c;
      s.h = 1 + rng() % 9;
      s.w = 1 + rng() % 9;
      const int64_t in_sizes[4] = {s.n, s.c, s.h, s.w};
      Strides(in_sizes, layout == 1, s.in_strides);
      s.out_strides[0] = 2 * c;  // every other column of an [N, 2C] array
      s.out_strides[1] = 2;
      std::vector<float> in(s.n * c * s.h * s.w);
      std::uniform_real_distribution<float> u(-3, 7);
      for (float& v : in) v = u(rng);
      in[s.in_strides[0] + (c - 1) * s.in_strides[1]] = NAN;  // image 1
      std::vector<float> out(s.n * 2 * c, 777.0f);
      SpatialMeanRows(in.data(), out.data(), s, 0, s.n);
      for (int64_t n = 0; n < s.n; ++n) {
        for (int64_t ch = 0; ch < c; ++ch) {
          double sum = 0;
          for (int64_t y = 0; y < s.h; ++y) {
            for (int64_t x = 0; x < s.w; ++x) {
              sum += in[n * s.in_strides[0] + ch * s.in_strides[1] +
                        y * s.in_strides[2] + x * s.in_strides[3]];
            }
          }
          const double want = sum / (s.h * s.w);
          const float got = out[n * 2 * c + 2 * ch];
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(got));
          } else {
            EXPECT_NEAR(got, want, 1e-5 * (1 + std::fabs(want)))
                << n << " " << ch;
          }
          EXPECT_EQ(out[n * 2 * c + 2 * ch + 1], 777.0f);  // untouched
        }
      }
    }
  }
}

// conv -> relu -> max pool -> conv -> relu -> mean(H, W) -> [N, C]: both
// poolings run as pool steps (no kernel computes them), the convolutions
// read channels-last activations in place, and the result matches eager.
std::shared_ptr<const Graph> PoolNet(bool keepdim, bool read_indices,
                                     std::vector<int64_t> window = {3, 3},
                                     std::vector<int64_t> stride = {2, 2},
                                     std::vector<int64_t> padding = {1, 1}) {
  GraphBuilder b("poolnet");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  AddWeight(b, "w0", {16, 3, 3, 3}, 1);
  AddWeight(b, "w1", {24, 16, 3, 3}, 2);
  AddConv2d(b, "c0", "x", "w0", 1);
  testing::AddNode(b, "r0", "aten.relu.default", {Arg::Ref("c0")});
  testing::AddNode(b, "pool", "aten.max_pool2d_with_indices.default",
                   {Arg::Ref("r0"), testing::Ints(window),
                    testing::Ints(stride), testing::Ints(padding)});
  testing::AddNode(b, "p0", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  AddConv2d(b, "c1", "p0", "w1", 1);
  testing::AddNode(b, "r1", "aten.relu.default", {Arg::Ref("c1")});
  testing::AddNode(
      b, "m", "aten.mean.dim",
      {Arg::Ref("r1"), testing::Ints({-1, -2}), Arg::Bool(keepdim)});
  std::vector<Arg> outputs = {Arg::Ref("m")};
  if (read_indices) {
    testing::AddNode(b, "i0", "getitem", {Arg::Ref("pool"), Arg::Int(1)});
    outputs.push_back(Arg::Ref("i0"));
  }
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return testing::Finish(b);
}

int PoolSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) n += s.pool;
  return n;
}

TEST_F(OneDnnConvTest, PoolStepsRunAConvnetsPoolingsChannelsLast) {
  for (bool keepdim : {false, true}) {
    SCOPED_TRACE(absl::StrCat("keepdim ", keepdim));
    const auto graph = PoolNet(keepdim, false);
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {2, 3, 19, 21}, 4)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    EXPECT_EQ(PoolSteps(plan), 2) << plan.ToString();
    EXPECT_EQ(OneDnnSteps(plan), 2) << plan.ToString();
    for (const PlanStep& step : plan.steps) {
      // No kernel computes a pooling.
      if (step.is_kernel) {
        for (const std::string& c : step.kernel.computes) {
          EXPECT_THAT(c, Not(HasSubstr("pool"))) << plan.ToString();
          EXPECT_THAT(c, Not(HasSubstr("mean"))) << plan.ToString();
        }
      }
      // The pooled activation reaches the second convolution channels last.
      if (step.conv != nullptr && step.conv->input.sizes[1] == 16) {
        EXPECT_EQ(step.conv->input.strides[1], 1) << plan.ToString();
      }
    }
    const std::string describe = testing::DescribeCompiled(graph, inputs);
    EXPECT_THAT(describe,
                HasSubstr("'pool' (aten.max_pool2d_with_indices.default) as "
                          "one pool step"));
    EXPECT_THAT(describe, HasSubstr("'m' (aten.mean.dim) as one pool step"));
    EXPECT_THAT(describe, HasSubstr("0 eager nodes"));
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

// Windows with dilation, without padding, ceil-free shapes that leave a
// remainder, a non-square kernel; a NaN in the input; a strided input.
TEST_F(OneDnnConvTest, PoolStepsMatchEagerAtRandomWindows) {
  std::mt19937 rng(21);
  for (int round = 0; round < 6; ++round) {
    const int64_t k0 = 1 + rng() % 3, k1 = 1 + rng() % 3;
    const std::vector<int64_t> window = {k0, k1};
    const std::vector<int64_t> stride = {1 + static_cast<int64_t>(rng() % 2),
                                         1 + static_cast<int64_t>(rng() % 3)};
    const std::vector<int64_t> padding = {
        static_cast<int64_t>(rng() % (k0 / 2 + 1)),
        static_cast<int64_t>(rng() % (k1 / 2 + 1))};
    SCOPED_TRACE(absl::StrCat("round ", round));
    const auto graph = PoolNet(round % 2 == 0, false, window, stride, padding);
    Tensor x = RandomTensor(DType::kFloat32,
                            {1 + static_cast<int64_t>(rng() % 3), 3,
                             5 + static_cast<int64_t>(rng() % 9),
                             5 + static_cast<int64_t>(rng() % 9)},
                            30 + round);
    if (round == 3) x.data_as<float>()[7] = NAN;
    if (round == 4) x = testing::NonContiguousCopy(x);
    const std::vector<Tensor> inputs = {x};
    EXPECT_EQ(PoolSteps(PlanOfInputs(*graph, inputs)), 2);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

// A dynamic batch: one entry over the batch symbol serves batches 2 to 5.
TEST_F(OneDnnConvTest, PoolStepsServeADynamicBatch) {
  const auto graph = PoolNet(true, false);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t n : {2, 5, 3, 4}) {
    calls.push_back({RandomTensor(DType::kFloat32, {n, 3, 12, 10}, 40 + n)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 1e-4);
}

// Where the step does not apply the pooling stays loop IR: indices read,
// GJ_POOL_STEP=0, a graph without a convolution.
TEST_F(OneDnnConvTest, PoolingsStayKernelsWhereTheStepDoesNotApply) {
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 3, 15, 14}, 6)};
  {
    const auto graph = PoolNet(false, true);
    const Plan plan = PlanOfInputs(*graph, inputs);
    EXPECT_EQ(PoolSteps(plan), 1) << plan.ToString();  // the mean only
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
  {
    testing::ScopedEnv off("GJ_POOL_STEP", "0");
    const auto graph = PoolNet(false, false);
    EXPECT_EQ(PoolSteps(PlanOfInputs(*graph, inputs)), 0);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
  GraphBuilder b("no_conv");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(
      b, "pool", "aten.max_pool2d_with_indices.default",
      {Arg::Ref("x"), testing::Ints({2, 2}), testing::Ints({2, 2})});
  testing::AddNode(b, "p0", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  testing::AddNode(b, "m", "aten.mean.dim",
                   {Arg::Ref("p0"), testing::Ints({2, 3})});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("m")}).ok());
  const auto graph = testing::Finish(b);
  EXPECT_EQ(PoolSteps(PlanOfInputs(*graph, inputs)), 0);
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

}  // namespace
}  // namespace guardjit
