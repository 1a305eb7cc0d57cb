// max_pool{2,3}d_with_indices and avg_pool{2,3}d compiled
// (jit/lowering/lowering_pooling.cc, one lowering over N spatial dims)
// against the eager kernels: random windows (kernel, stride, padding,
// dilation, ceil_mode; for average pooling count_include_pad and
// divisor_override) over inputs with and without a batch dim, of the dtypes
// they compile for, max pooling's values and indices both read, with NaN,
// -inf and ties in the windows; no eager step left in the plan. A graph that
// reads only max pooling's values plans no index reductions; int64 average
// pooling stays its eager kernel.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::EagerSteps;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using testing::Ints;
using testing::PlanOfInputs;
using testing::RandomTensor;

struct Pool {
  Shape input;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;

  std::string ToString() const {
    return absl::StrCat("[", absl::StrJoin(input, "x"), "] kernel ",
                        absl::StrJoin(kernel, "x"), " stride ",
                        absl::StrJoin(stride, "x"), " padding ",
                        absl::StrJoin(padding, "x"), " dilation ",
                        absl::StrJoin(dilation, "x"), ceil_mode ? " ceil" : "");
  }
};

// max_pool{N}d_with_indices(x) -> outputs (values[, indices]), N the
// window's rank.
std::shared_ptr<const Graph> PoolGraph(const Pool& p, bool indices) {
  GraphBuilder b("pool");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(
      b, "pool",
      absl::StrCat("aten.max_pool", p.kernel.size(), "d_with_indices.default"),
      {Arg::Ref("x"), Ints(p.kernel), Ints(p.stride), Ints(p.padding),
       Ints(p.dilation), Arg::Bool(p.ceil_mode)});
  AddNode(b, "values", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  std::vector<Arg> outputs = {Arg::Ref("values")};
  if (indices) {
    AddNode(b, "indices", "getitem", {Arg::Ref("pool"), Arg::Int(1)});
    outputs.push_back(Arg::Ref("indices"));
  }
  EXPECT_TRUE(b.SetOutputs(std::move(outputs)).ok());
  return Finish(b);
}

// Values in [-3, 3] rounded to halves (ties within windows), with NaN and
// -inf sprinkled in for floating dtypes.
Tensor PoolInput(DType dtype, const Shape& shape, uint64_t seed) {
  Tensor t = RandomTensor(DType::kFloat64, shape, seed, -3, 3);
  std::vector<double> v = testing::ToDoubles(t);
  std::mt19937_64 rng(seed);
  for (double& x : v) {
    x = std::round(x * 2) / 2;
    if (IsFloating(dtype)) {
      const uint64_t r = rng() % 64;
      if (r == 0) x = std::nan("");
      if (r == 1) x = -std::numeric_limits<double>::infinity();
    }
  }
  return testing::MakeTensor(dtype, shape, v);
}

class PoolingConformanceTest : public ::testing::Test {};

TEST_F(PoolingConformanceTest, RandomWindowsMatchEagerWithoutEagerSteps) {
  std::mt19937_64 rng(7);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  const std::vector<DType> dtypes = {DType::kFloat32, DType::kFloat64,
                                     DType::kFloat16, DType::kInt32,
                                     DType::kInt64};
  // The emulated CUDA suites compile every case through NVRTC: fewer there.
  const int cases = testing::SharedJitBackend()[0] == '\0' ? 40 : 6;
  for (int i = 0; i < cases; ++i) {
    Pool p;
    const bool batched = i % 4 != 3;
    if (batched) p.input.push_back(pick(1, 3));
    p.input.push_back(pick(1, 4));
    p.input.push_back(pick(1, 12));
    p.input.push_back(pick(1, 12));
    for (int d = 0; d < 2; ++d) {
      const int64_t size = p.input[p.input.size() - 2 + d];
      // A window that fits the padded input (else both reject the call).
      int64_t k, pad, dil;
      do {
        k = pick(1, 4);
        pad = pick(0, k / 2);
        dil = pick(1, 2);
      } while (size + 2 * pad - dil * (k - 1) - 1 < 0);
      p.kernel.push_back(k);
      p.stride.push_back(pick(1, 3));
      p.padding.push_back(pad);
      p.dilation.push_back(dil);
    }
    p.ceil_mode = i % 3 == 0;
    const DType dtype = dtypes[i % dtypes.size()];
    SCOPED_TRACE(absl::StrCat(p.ToString(), " ", DTypeName(dtype)));
    const auto graph = PoolGraph(p, /*indices=*/true);
    const std::vector<Tensor> inputs = {PoolInput(dtype, p.input, 100 + i)};
    ExpectJitMatchesEager(graph, inputs);
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
  }
}

TEST_F(PoolingConformanceTest, ResNetStemPoolAndIndicesLeftUnread) {
  Pool p{{2, 8, 17, 16}, {3, 3}, {2, 2}, {1, 1}, {1, 1}};
  const std::vector<Tensor> inputs = {PoolInput(DType::kFloat32, p.input, 3)};
  const auto values_only = PoolGraph(p, /*indices=*/false);
  ExpectJitMatchesEager(values_only, inputs);
  EXPECT_EQ(EagerSteps(values_only, inputs), 0);
  // Values only: one reduction; with indices three more.
  const Plan plan = PlanOfInputs(*values_only, inputs);
  const std::string text = plan.ToString();
  EXPECT_EQ(text.find("min<int64>"), std::string::npos) << text;
  const auto both = PoolGraph(p, /*indices=*/true);
  ExpectJitMatchesEager(both, inputs);
}

// Windows that never leave the input (no padding; the last window ends in
// it) read their taps without bounds checks or clamps; a ceil-mode window
// past the end, or padding, keeps them for that dim only.
TEST_F(PoolingConformanceTest, WindowsInsideTheInputReadWithoutBounds) {
  const Pool inside{{2, 4, 16, 12}, {2, 2}, {2, 2}, {0, 0}, {1, 1}};
  const Pool ceil{{2, 4, 15, 12}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true};
  const Pool padded{{2, 4, 16, 12}, {3, 2}, {2, 2}, {1, 0}, {1, 1}};
  const std::vector<Pool> pools = {inside, ceil, padded};
  for (size_t i = 0; i < pools.size(); ++i) {
    const Pool& p = pools[i];
    SCOPED_TRACE(p.ToString());
    const auto graph = PoolGraph(p, /*indices=*/true);
    const std::vector<Tensor> inputs = {PoolInput(DType::kFloat32, p.input, 9)};
    ExpectJitMatchesEager(graph, inputs);
    const auto values = PoolGraph(p, /*indices=*/false);
    const std::string text = PlanOfInputs(*values, inputs).ToString();
    const bool checked = text.find("where(") != std::string::npos;
    EXPECT_EQ(checked, i > 0) << text;
    // A clamp keeps the side a window may cross (index_simplify.h drops
    // the other).
    const bool clamped = text.find("min(") != std::string::npos ||
                         text.find("max(") != std::string::npos;
    EXPECT_EQ(clamped, i > 0) << text;
  }
}

// avg_pool{N}d(x, kernel, stride, padding, ceil_mode, count_include_pad,
// divisor_override).
std::shared_ptr<const Graph> AvgPoolGraph(const Pool& p, bool include_pad,
                                          std::optional<int64_t> divisor) {
  GraphBuilder b("avg_pool");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "pool",
          absl::StrCat("aten.avg_pool", p.kernel.size(), "d.default"),
          {Arg::Ref("x"), Ints(p.kernel), Ints(p.stride), Ints(p.padding),
           Arg::Bool(p.ceil_mode), Arg::Bool(include_pad),
           divisor.has_value() ? Arg::Int(*divisor) : Arg::None()});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("pool")}).ok());
  return Finish(b);
}

TEST_F(PoolingConformanceTest, AvgPoolRandomWindowsMatchEager) {
  std::mt19937_64 rng(11);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  const std::vector<DType> dtypes = {DType::kFloat32, DType::kFloat64,
                                     DType::kFloat16};
  const int cases = testing::SharedJitBackend()[0] == '\0' ? 30 : 5;
  for (int i = 0; i < cases; ++i) {
    Pool p;
    if (i % 4 != 3) p.input.push_back(pick(1, 3));
    p.input.push_back(pick(1, 4));
    p.input.push_back(pick(1, 11));
    p.input.push_back(pick(1, 11));
    for (int d = 0; d < 2; ++d) {
      const int64_t size = p.input[p.input.size() - 2 + d];
      int64_t k, pad;
      do {
        k = pick(1, 4);
        pad = pick(0, k / 2);
      } while (size + 2 * pad - k < 0);
      p.kernel.push_back(k);
      p.stride.push_back(pick(1, 3));
      p.padding.push_back(pad);
      p.dilation.push_back(1);
    }
    p.ceil_mode = i % 3 == 0;
    const bool include_pad = i % 2 == 0;
    const std::optional<int64_t> divisor =
        i % 5 == 4 ? std::optional<int64_t>(pick(1, 7)) : std::nullopt;
    const DType dtype = dtypes[i % dtypes.size()];
    SCOPED_TRACE(
        absl::StrCat(p.ToString(), include_pad ? " include_pad" : "",
                     divisor ? absl::StrCat(" divisor ", *divisor) : "", " ",
                     DTypeName(dtype)));
    const auto graph = AvgPoolGraph(p, include_pad, divisor);
    const std::vector<Tensor> inputs = {RandomTensor(dtype, p.input, 200 + i)};
    ExpectJitMatchesEager(graph, inputs,
                          dtype == DType::kFloat16 ? 2e-3 : 1e-5);
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
  }
  // int64 sums divide as integers in the eager kernel: left to it.
  Pool p{{1, 2, 5, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}};
  const auto graph = AvgPoolGraph(p, true, std::nullopt);
  const std::vector<Tensor> ints = {RandomTensor(DType::kInt64, p.input, 9)};
  ExpectJitMatchesEager(graph, ints);
  EXPECT_EQ(EagerSteps(graph, ints), 1);
}

// The 3-D pools through the same lowering: random windows over (C, D, H, W)
// and (N, C, D, H, W) inputs, max pooling (values and indices, flat in the
// volume) and average pooling alike.
TEST_F(PoolingConformanceTest, Pool3dRandomWindowsMatchEagerWithoutEagerSteps) {
  std::mt19937_64 rng(13);
  const auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % (hi - lo + 1));
  };
  const std::vector<DType> dtypes = {DType::kFloat32, DType::kFloat64,
                                     DType::kInt32};
  const int cases = testing::SharedJitBackend()[0] == '\0' ? 12 : 3;
  for (int i = 0; i < cases; ++i) {
    Pool p;
    if (i % 3 != 2) p.input.push_back(pick(1, 2));
    p.input.push_back(pick(1, 3));
    for (int d = 0; d < 3; ++d) p.input.push_back(pick(1, 6));
    const bool max = i % 2 == 0;
    for (int d = 0; d < 3; ++d) {
      const int64_t size = p.input[p.input.size() - 3 + d];
      int64_t k, pad, dil;
      do {
        k = pick(1, 3);
        pad = pick(0, k / 2);
        dil = max ? pick(1, 2) : 1;
      } while (size + 2 * pad - dil * (k - 1) - 1 < 0);
      p.kernel.push_back(k);
      p.stride.push_back(pick(1, 2));
      p.padding.push_back(pad);
      p.dilation.push_back(dil);
    }
    p.ceil_mode = i % 4 == 1;
    const DType dtype = max ? dtypes[i % dtypes.size()] : DType::kFloat32;
    const bool include_pad = i % 4 == 3;
    const std::optional<int64_t> divisor =
        i % 6 == 5 ? std::optional<int64_t>(pick(1, 7)) : std::nullopt;
    SCOPED_TRACE(absl::StrCat(max ? "max " : "avg ", p.ToString(), " ",
                              DTypeName(dtype)));
    const auto graph = max ? PoolGraph(p, /*indices=*/true)
                           : AvgPoolGraph(p, include_pad, divisor);
    const std::vector<Tensor> inputs = {PoolInput(dtype, p.input, 300 + i)};
    ExpectJitMatchesEager(graph, inputs);
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
  }
}

TEST_F(PoolingConformanceTest, DynamicBatch) {
  Pool p{{2, 4, 9, 9}, {2, 2}, {2, 2}, {0, 0}, {1, 1}};
  const auto graph = PoolGraph(p, /*indices=*/true);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t batch : {2, 3, 6}) {
    calls.push_back({PoolInput(DType::kFloat32, {batch, 4, 9, 9}, batch)});
  }
  testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls);
}

}  // namespace
}  // namespace guardjit
