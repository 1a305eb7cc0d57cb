// aten.convolution against a direct convolution loop over ToDoubles of the
// inputs (no im2col, no GEMM).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat64,
                                  DType::kFloat16, DType::kBFloat16};

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& result,
                 absl::StatusCode code, absl::string_view text) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status();
  EXPECT_NE(result.status().message().find(text), absl::string_view::npos)
      << result.status();
}

struct ConvCase {
  std::string name;
  Shape input;   // [N, C, spatial...]
  Shape weight;  // [out, in / groups, kernel...] ([in, out / groups, ...]
                 // transposed)
  bool bias = true;
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};
  bool transposed = false;
  std::vector<int64_t> output_padding = {0};
  int64_t groups = 1;
};

// Spatial value i of a one-or-all list.
int64_t At(const std::vector<int64_t>& v, size_t i) {
  return v.size() == 1 ? v[0] : v[i];
}

// Row-major flat index of `index` in `sizes`.
int64_t Flat(IntSpan sizes, const std::vector<int64_t>& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < sizes.size(); ++d) flat = flat * sizes[d] + index[d];
  return flat;
}

// Visits every index of `sizes` in row-major order.
template <typename F>
void ForEachIndex(IntSpan sizes, F&& f) {
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t s : sizes) {
    if (s == 0) return;
  }
  while (true) {
    f(index);
    int d = static_cast<int>(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// The convolution straight from its definition: every output element sums
// input * weight over the taps that reach it (scattered from the input side
// when transposed). Returns the output shape in `out_shape`.
std::vector<double> DirectConvolution(const ConvCase& c, const Tensor& input,
                                      const Tensor& weight,
                                      const std::optional<Tensor>& bias,
                                      Shape* out_shape) {
  const size_t spatial = c.input.size() - 2;
  const std::vector<double> x = ToDoubles(input), w = ToDoubles(weight);
  const int64_t out_channels =
      c.transposed ? c.weight[1] * c.groups : c.weight[0];
  const int64_t in_per_group = c.input[1] / c.groups;
  const int64_t out_per_group = out_channels / c.groups;
  Shape out = {c.input[0], out_channels};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t k = c.weight[2 + i], in = c.input[2 + i];
    const int64_t s = At(c.stride, i), p = At(c.padding, i),
                  d = At(c.dilation, i);
    out.push_back(c.transposed ? (in - 1) * s - 2 * p + d * (k - 1) +
                                     At(c.output_padding, i) + 1
                               : (in + 2 * p - d * (k - 1) - 1) / s + 1);
  }
  *out_shape = out;
  int64_t numel = 1;
  for (int64_t s : out) numel *= s;
  std::vector<double> result(numel, 0.0);
  const Shape kernel(c.weight.begin() + 2, c.weight.end());
  // Every (input position, kernel tap) pair feeds one output position.
  ForEachIndex(c.input, [&](const std::vector<int64_t>& xi) {
    const int64_t n = xi[0], ic = xi[1], g = ic / in_per_group;
    ForEachIndex(kernel, [&](const std::vector<int64_t>& k) {
      std::vector<int64_t> o(spatial);
      for (size_t i = 0; i < spatial; ++i) {
        const int64_t s = At(c.stride, i), p = At(c.padding, i),
                      d = At(c.dilation, i);
        if (c.transposed) {
          o[i] = xi[2 + i] * s - p + k[i] * d;
        } else {
          // x = o * s - p + k * d, so o = (x + p - k * d) / s if exact.
          const int64_t num = xi[2 + i] + p - k[i] * d;
          if (num < 0 || num % s != 0) return;
          o[i] = num / s;
        }
        if (o[i] < 0 || o[i] >= out[2 + i]) return;
      }
      for (int64_t oc_g = 0; oc_g < out_per_group; ++oc_g) {
        const int64_t oc = g * out_per_group + oc_g;
        std::vector<int64_t> wi;
        if (c.transposed) {
          wi = {ic, oc_g};
        } else {
          wi = {oc, ic - g * in_per_group};
        }
        wi.insert(wi.end(), k.begin(), k.end());
        std::vector<int64_t> oi = {n, oc};
        oi.insert(oi.end(), o.begin(), o.end());
        result[Flat(out, oi)] += x[Flat(c.input, xi)] * w[Flat(c.weight, wi)];
      }
    });
  });
  if (bias.has_value()) {
    const std::vector<double> b = ToDoubles(*bias);
    ForEachIndex(out, [&](const std::vector<int64_t>& oi) {
      result[Flat(out, oi)] += b[oi[1]];
    });
  }
  return result;
}

double Tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1e-2;
    case DType::kFloat32:
      return 1e-5;
    default:
      return 1e-12;
  }
}

absl::StatusOr<std::vector<Tensor>> RunConvolution(
    const ConvCase& c, const Tensor& input, const Tensor& weight,
    const std::optional<Tensor>& bias) {
  return RunOp(
      "aten.convolution.default",
      {input, weight, bias.has_value() ? OpArg(*bias) : OpArg(Arg::None()),
       c.stride, c.padding, c.dilation, c.transposed, c.output_padding,
       c.groups});
}

// Runs `c` for every floating dtype, once with contiguous operands and once
// with non-contiguous ones, and compares with DirectConvolution.
void CheckCase(const ConvCase& c, uint64_t seed) {
  for (DType dtype : kFloatDTypes) {
    for (bool contiguous : {true, false}) {
      SCOPED_TRACE(::testing::Message()
                   << c.name << " " << DTypeName(dtype)
                   << (contiguous ? "" : " non-contiguous"));
      Tensor input = RandomTensor(dtype, c.input, seed);
      Tensor weight = RandomTensor(dtype, c.weight, seed + 1);
      std::optional<Tensor> bias;
      const int64_t out_channels =
          c.transposed ? c.weight[1] * c.groups : c.weight[0];
      if (c.bias) bias = RandomTensor(dtype, {out_channels}, seed + 2);
      Shape out_shape;
      const double tol = Tolerance(dtype);
      // Values below 2 in magnitude: the sum of products grows with the
      // number of taps per output.
      int64_t taps = c.input[1];
      for (size_t i = 2; i < c.weight.size(); ++i) taps *= c.weight[i];
      std::vector<double> expected =
          DirectConvolution(c, input, weight, bias, &out_shape);
      if (!contiguous) {
        input = NonContiguousCopy(input);
        weight = NonContiguousCopy(weight);
        if (bias.has_value()) bias = NonContiguousCopy(*bias);
      }
      auto out = RunConvolution(c, input, weight, bias);
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectTensor((*out)[0], dtype, out_shape, expected, tol * 4 * taps, tol);
    }
  }
}

TEST(ConvolutionTest, Conv2dMatchesDirectLoop) {
  const std::vector<ConvCase> cases = {
      {"plain 3x3", {2, 3, 7, 6}, {4, 3, 3, 3}},
      {"rectangular kernel, no bias", {1, 2, 5, 8}, {3, 2, 2, 3}, false},
      {"stride, padding, dilation per dim",
       {2, 3, 9, 7},
       {2, 3, 3, 2},
       true,
       {2, 1},
       {1, 2},
       {2, 1}},
      {"groups",
       {2, 6, 6, 5},
       {4, 3, 3, 3},
       true,
       {1},
       {1},
       {1},
       false,
       {0},
       2},
      {"depthwise",
       {1, 4, 5, 5},
       {4, 1, 3, 3},
       true,
       {2},
       {1},
       {1},
       false,
       {0},
       4},
      {"1x1 kernel", {3, 5, 4, 4}, {7, 5, 1, 1}},
      {"kernel as large as the padded input",
       {1, 1, 3, 3},
       {2, 1, 5, 5},
       true,
       {1},
       {1}},
      {"stride larger than kernel", {1, 2, 10, 9}, {3, 2, 2, 2}, true, {4, 3}},
  };
  uint64_t seed = 1;
  for (const ConvCase& c : cases) CheckCase(c, seed += 10);
}

TEST(ConvolutionTest, Conv1dAndConv3dMatchDirectLoop) {
  const std::vector<ConvCase> cases = {
      {"1-D plain", {2, 3, 11}, {4, 3, 3}},
      {"1-D stride padding dilation",
       {3, 2, 13},
       {5, 2, 4},
       true,
       {3},
       {2},
       {2}},
      {"1-D groups no bias",
       {1, 6, 8},
       {9, 2, 2},
       false,
       {1},
       {0},
       {1},
       false,
       {0},
       3},
      {"3-D", {1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, true, {1, 2, 1}, {1, 0, 1}},
  };
  uint64_t seed = 100;
  for (const ConvCase& c : cases) CheckCase(c, seed += 10);
}

TEST(ConvolutionTest, TransposedMatchesDirectLoop) {
  const std::vector<ConvCase> cases = {
      {"2-D transposed", {2, 3, 4, 5}, {3, 2, 3, 3}, true, {1}, {0}, {1}, true},
      {"2-D transposed stride padding output_padding",
       {1, 2, 3, 4},
       {2, 3, 3, 2},
       true,
       {2, 3},
       {1, 0},
       {1},
       true,
       {1, 2}},
      {"2-D transposed dilation groups",
       {2, 4, 3, 3},
       {4, 1, 2, 2},
       false,
       {2},
       {1},
       {2},
       true,
       {1},
       2},
      {"1-D transposed", {2, 2, 6}, {2, 3, 4}, true, {3}, {1}, {1}, true, {2}},
  };
  uint64_t seed = 200;
  for (const ConvCase& c : cases) CheckCase(c, seed += 10);
}

TEST(ConvolutionTest, EmptyBatchAndEmptyChannels) {
  ConvCase c{"empty batch", {0, 3, 5, 5}, {2, 3, 3, 3}};
  auto out = RunConvolution(c, RandomTensor(DType::kFloat32, c.input, 1),
                            RandomTensor(DType::kFloat32, c.weight, 2),
                            RandomTensor(DType::kFloat32, {2}, 3));
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectTensor((*out)[0], DType::kFloat32, {0, 2, 3, 3}, {});

  // No input channels: every output is the bias.
  ConvCase no_channels{"no channels", {1, 0, 3}, {2, 0, 2}};
  Tensor bias = RandomTensor(DType::kFloat16, {2}, 4);
  out = RunConvolution(
      no_channels, RandomTensor(DType::kFloat16, no_channels.input, 5),
      RandomTensor(DType::kFloat16, no_channels.weight, 6), bias);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> b = ToDoubles(bias);
  ExpectTensor((*out)[0], DType::kFloat16, {1, 2, 2}, {b[0], b[0], b[1], b[1]});
}

TEST(ConvolutionTest, RejectsBadArguments) {
  const Tensor input = RandomTensor(DType::kFloat32, {1, 4, 5, 5}, 1);
  const Tensor weight = RandomTensor(DType::kFloat32, {2, 4, 3, 3}, 2);
  const Tensor bias = RandomTensor(DType::kFloat32, {2}, 3);
  auto run = [&](const Tensor& in, const Tensor& w, const OpArg& b,
                 const OpArg& stride, const OpArg& padding,
                 const OpArg& dilation, bool transposed,
                 const OpArg& output_padding, int64_t groups) {
    return RunOp("aten.convolution.default",
                 {in, w, b, stride, padding, dilation, transposed,
                  output_padding, groups});
  };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  ExpectError(run(RandomTensor(DType::kInt64, {1, 4, 5, 5}, 1),
                  RandomTensor(DType::kInt64, {2, 4, 3, 3}, 2), Arg::None(),
                  {1}, {0}, {1}, false, {0}, 1),
              kInvalid,
              "argument 'input': convolution is defined for floating");
  ExpectError(run(input, RandomTensor(DType::kFloat64, {2, 4, 3, 3}, 2), bias,
                  {1}, {0}, {1}, false, {0}, 1),
              kInvalid, "argument 'weight': expected dtype float32");
  ExpectError(run(input, weight, RandomTensor(DType::kFloat16, {2}, 2), {1},
                  {0}, {1}, false, {0}, 1),
              kInvalid, "argument 'bias': expected dtype float32");
  // aten.convolution has no unbatched form.
  ExpectError(run(RandomTensor(DType::kFloat32, {4, 5, 5}, 1), weight, bias,
                  {1}, {0}, {1}, false, {0}, 1),
              kInvalid, "argument 'input': expected a 4-D input");
  ExpectError(run(input, RandomTensor(DType::kFloat32, {2, 4}, 1), bias, {1},
                  {0}, {1}, false, {0}, 1),
              kInvalid, "argument 'weight': expected a 3-D, 4-D or 5-D weight");
  ExpectError(run(input, weight, bias, {0}, {0}, {1}, false, {0}, 1), kInvalid,
              "argument 'stride': non-positive stride is not supported");
  ExpectError(run(input, weight, bias, {1, 2, 1}, {0}, {1}, false, {0}, 1),
              kInvalid,
              "argument 'stride': expected a single value or a list of 2");
  ExpectError(run(input, weight, bias, {1}, {0, -1}, {1}, false, {0}, 1),
              kInvalid,
              "argument 'padding': negative padding is not supported");
  ExpectError(run(input, weight, bias, {1}, {0}, {0}, false, {0}, 1), kInvalid,
              "argument 'dilation': dilation should be greater than zero");
  ExpectError(run(input, weight, bias, {1}, {0}, {1}, false, {0}, 0), kInvalid,
              "argument 'groups': non-positive groups is not supported");
  ExpectError(run(input, RandomTensor(DType::kFloat32, {3, 2, 3, 3}, 1),
                  Arg::None(), {1}, {0}, {1}, false, {0}, 2),
              kInvalid,
              "argument 'weight': given groups=2, expected weight to be "
              "divisible by 2 at dimension 0");
  ExpectError(run(input, RandomTensor(DType::kFloat32, {2, 3, 3, 3}, 1), bias,
                  {1}, {0}, {1}, false, {0}, 1),
              kInvalid,
              "argument 'input': given groups=1, weight of size [2, 3, 3, 3], "
              "expected input[1, 4, 5, 5] to have 3 channels, but got 4");
  ExpectError(run(input, weight, RandomTensor(DType::kFloat32, {3}, 1), {1},
                  {0}, {1}, false, {0}, 1),
              kInvalid,
              "argument 'bias': expected a 1-D tensor with 2 elements");
  ExpectError(
      run(input, RandomTensor(DType::kFloat32, {2, 4, 6, 3}, 1), bias, {1}, {0},
          {1}, false, {0}, 1),
      kInvalid,
      "argument 'input': calculated padded input size per channel: (5 x "
      "5). Kernel size: (6 x 3). Kernel size can't be greater");
  ExpectError(run(input, weight, bias, {1}, {0}, {3}, false, {0}, 1), kInvalid,
              "Kernel size: (7 x 7)");
  ExpectError(
      run(input, RandomTensor(DType::kFloat32, {4, 2, 3, 3}, 1),
          RandomTensor(DType::kFloat32, {2}, 1), {2}, {0}, {1}, true, {2}, 1),
      kInvalid,
      "argument 'output_padding': output padding must be smaller than "
      "either stride or dilation");
  ExpectError(run(input, RandomTensor(DType::kFloat32, {4, 2, 3, 3}, 1),
                  Arg::None(), {1}, {4}, {1}, true, {0}, 1),
              kInvalid,
              "argument 'input': given input of size [1, 4, 5, 5], the "
              "calculated output size per channel (-1 x -1) is too small");
  // Sizes that would overflow int64 index arithmetic are refused up front.
  ExpectError(run(input, weight, bias, {int64_t{1} << 62}, {int64_t{1} << 61},
                  {1}, false, {0}, 1),
              absl::StatusCode::kOutOfRange, "argument 'padding'");
}

}  // namespace
}  // namespace guardjit
