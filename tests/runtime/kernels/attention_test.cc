// aten.scaled_dot_product_attention's reference kernel against a naive
// softmax(q k^T * scale + mask) v in double, and its shape rules' errors.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectError;
using ::guardjit::testing::ExpectTensor;
using ::guardjit::testing::MakeTensor;
using ::guardjit::testing::NonContiguousCopy;
using ::guardjit::testing::OpArg;
using ::guardjit::testing::RandomTensor;
using ::guardjit::testing::RunOp;
using ::guardjit::testing::RunOp1;
using ::guardjit::testing::ToDoubles;

constexpr char kSdpa[] = "aten.scaled_dot_product_attention.default";
constexpr double kInf = std::numeric_limits<double>::infinity();

// [n, l, ev] for q [n, l, e], k [n, s, e], v [n, s, ev] and an additive bias
// [n, l, s] (-inf: masked); a row with every key masked is zeros.
std::vector<double> Naive(const std::vector<double>& q,
                          const std::vector<double>& k,
                          const std::vector<double>& v,
                          const std::vector<double>& bias, int64_t n, int64_t l,
                          int64_t s, int64_t e, int64_t ev, double scale) {
  std::vector<double> out(n * l * ev, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> w(s);
      double max = -kInf;
      for (int64_t j = 0; j < s; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < e; ++c) {
          dot += q[(b * l + i) * e + c] * k[(b * s + j) * e + c];
        }
        w[j] = dot * scale + (bias.empty() ? 0 : bias[(b * l + i) * s + j]);
        max = std::max(max, w[j]);
      }
      if (max == -kInf) continue;
      double sum = 0;
      for (double& x : w) sum += x = std::exp(x - max);
      for (int64_t j = 0; j < s; ++j) {
        for (int64_t c = 0; c < ev; ++c) {
          out[(b * l + i) * ev + c] += w[j] / sum * v[(b * s + j) * ev + c];
        }
      }
    }
  }
  return out;
}

TEST(AttentionKernelTest, OneQueryTwoKeysByHand) {
  // scores 1*1 = 1 and 1*3 = 3 scaled by 1/sqrt(1); softmax [1, e^2] / (1 +
  // e^2); out = (10 + 20 e^2) / (1 + e^2).
  const Tensor q = MakeTensor(DType::kFloat64, {1, 1, 1}, {1});
  const Tensor k = MakeTensor(DType::kFloat64, {1, 2, 1}, {1, 3});
  const Tensor v = MakeTensor(DType::kFloat64, {1, 2, 1}, {10, 20});
  const double e2 = std::exp(2.0);
  ExpectTensor(RunOp1(kSdpa, {q, k, v}), DType::kFloat64, {1, 1, 1},
               {(10 + 20 * e2) / (1 + e2)}, 1e-14, 0);
}

TEST(AttentionKernelTest, MatchesNaiveWithMasksCausalScaleAndStrides) {
  const int64_t b = 2, h = 3, l = 5, s = 7, e = 4, ev = 6;
  const Tensor q = RandomTensor(DType::kFloat32, {b, h, l, e}, 1);
  const Tensor k = RandomTensor(DType::kFloat32, {b, h, s, e}, 2);
  const Tensor v = RandomTensor(DType::kFloat32, {b, h, s, ev}, 3);
  const std::vector<double> qd = ToDoubles(q), kd = ToDoubles(k),
                            vd = ToDoubles(v);
  const int64_t n = b * h;
  // No mask, default scale; strided operands give the same.
  const double scale = 1 / std::sqrt(4.0);
  const std::vector<double> plain =
      Naive(qd, kd, vd, {}, n, l, s, e, ev, scale);
  ExpectTensor(RunOp1(kSdpa, {q, k, v}), DType::kFloat32, {b, h, l, ev}, plain,
               1e-5, 1e-6);
  ExpectTensor(RunOp1(kSdpa, {NonContiguousCopy(q), NonContiguousCopy(k),
                              NonContiguousCopy(v)}),
               DType::kFloat32, {b, h, l, ev}, plain, 1e-5, 1e-6);
  // A float mask [l, s] broadcast over b and h, and an explicit scale.
  const Tensor fmask = RandomTensor(DType::kFloat32, {l, s}, 4);
  std::vector<double> bias(n * l * s);
  for (int64_t i = 0; i < n * l * s; ++i)
    bias[i] = ToDoubles(fmask)[i % (l * s)];
  ExpectTensor(RunOp1(kSdpa, {q, k, v, fmask}, {{"scale", 0.3}}),
               DType::kFloat32, {b, h, l, ev},
               Naive(qd, kd, vd, bias, n, l, s, e, ev, 0.3), 1e-5, 1e-6);
  // A bool mask [b, 1, l, s] with query row 2 of batch 1 fully masked: that
  // row is zeros (a safe softmax), the others attend where true.
  std::vector<double> keep(b * l * s);
  for (int64_t i = 0; i < b * l * s; ++i) keep[i] = (i * 7 + 3) % 4 != 0;
  for (int64_t j = 0; j < s; ++j) keep[(1 * l + 2) * s + j] = 0;
  const Tensor bmask = MakeTensor(DType::kBool, {b, 1, l, s}, keep);
  for (int64_t x = 0; x < n * l * s; ++x) {
    const int64_t bi = x / (h * l * s), ij = x % (l * s);
    bias[x] = keep[bi * l * s + ij] ? 0 : -kInf;
  }
  ExpectTensor(RunOp1(kSdpa, {q, k, v, bmask}), DType::kFloat32, {b, h, l, ev},
               Naive(qd, kd, vd, bias, n, l, s, e, ev, scale), 1e-5, 1e-6);
  // is_causal: key j <= query i (top-left aligned, as torch's tril).
  for (int64_t x = 0; x < n * l * s; ++x) {
    const int64_t i = x / s % l, j = x % s;
    bias[x] = j <= i ? 0 : -kInf;
  }
  ExpectTensor(RunOp1(kSdpa, {q, k, v, Arg::None(), 0.0, true}),
               DType::kFloat32, {b, h, l, ev},
               Naive(qd, kd, vd, bias, n, l, s, e, ev, scale), 1e-5, 1e-6);
}

TEST(AttentionKernelTest, NanInAScoreMakesItsRowNan) {
  Tensor q = RandomTensor(DType::kFloat32, {1, 2, 3}, 5);
  q.data_as<float>()[0] = NAN;  // row 0 of the queries
  const Tensor out =
      RunOp1(kSdpa, {q, RandomTensor(DType::kFloat32, {1, 4, 3}, 6),
                     RandomTensor(DType::kFloat32, {1, 4, 2}, 7)});
  const std::vector<double> o = ToDoubles(out);
  EXPECT_TRUE(std::isnan(o[0]) && std::isnan(o[1]));
  EXPECT_FALSE(std::isnan(o[2]) || std::isnan(o[3]));
}

TEST(AttentionKernelTest, BadArgumentsAreNamed) {
  const Tensor q = RandomTensor(DType::kFloat32, {2, 3, 4}, 1);
  const Tensor k = RandomTensor(DType::kFloat32, {2, 5, 4}, 2);
  const Tensor v = RandomTensor(DType::kFloat32, {2, 5, 6}, 3);
  const auto code = absl::StatusCode::kInvalidArgument;
  ExpectError(RunOp(kSdpa, {q, k, v, Arg::None(), 0.1}), code,
              "argument 'dropout_p': only 0 is supported");
  ExpectError(RunOp(kSdpa, {q, k, v, RandomTensor(DType::kFloat32, {3, 5}, 4),
                            0.0, true}),
              code, "argument 'attn_mask': an explicit mask");
  ExpectError(RunOp(kSdpa, {q, RandomTensor(DType::kFloat32, {2, 5, 3}, 4), v}),
              code, "argument 'key': embedding size 3 does not match");
  ExpectError(RunOp(kSdpa, {q, k, RandomTensor(DType::kFloat32, {2, 4, 6}, 4)}),
              code, "argument 'value': sequence length 4");
  ExpectError(RunOp(kSdpa, {q, k, RandomTensor(DType::kFloat64, {2, 5, 6}, 4)}),
              code, "argument 'value': expected query's dtype float32");
  ExpectError(RunOp(kSdpa, {q, k, v, RandomTensor(DType::kFloat32, {4, 5}, 4)}),
              code, "argument 'attn_mask': shape [4, 5] cannot be broadcast");
  ExpectError(RunOp(kSdpa, {q, k, v, RandomTensor(DType::kInt32, {3, 5}, 4)}),
              code, "argument 'attn_mask': expected bool or query's dtype");
  ExpectError(RunOp(kSdpa, {q, k, v}, {{"enable_gqa", true}}), code,
              "argument 'enable_gqa'");
  ExpectError(RunOp(kSdpa, {RandomTensor(DType::kInt64, {2, 3, 4}, 1),
                            RandomTensor(DType::kInt64, {2, 5, 4}, 1),
                            RandomTensor(DType::kInt64, {2, 5, 6}, 1)}),
              code, "argument 'query': expected a floating dtype");
}

}  // namespace
}  // namespace guardjit
