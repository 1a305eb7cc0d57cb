// jit/steps/gemm_step.cc: RunGemmStep driven directly with a hand-written
// epilogue (a copy of the product's rows): row panels that cover every row
// once on one thread and on several, the column split of a product of few
// rows (one epilogue call over all of it), batched products with a
// broadcast operand, transposed and strided operands, alpha, a bare product
// written into its result parameter without the epilogue, a dynamic step
// bound per call (and its extent error); ToString's text for every kind of
// step; CheckServingProduct's reasons. Values against a naive double loop.

#include "jit/steps/gemm_step.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/tensor.h"
#include "gtest/gtest.h"
#include "jit/schedule/fusion.h"
#include "runtime/index_expr.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectTensor;
using testing::RandomTensor;
using testing::ToDoubles;

// The epilogue's view of the product: `unit_bytes` bytes per unit of its
// outer loop (a row, or a batch's matrix). It copies units [begin, end) of
// the product (buffer 0) into the output (buffer 1) and records the range.
struct EpilogueLog {
  std::mutex mu;
  int64_t unit_bytes = 0;
  std::vector<std::pair<int64_t, int64_t>> ranges;
};
EpilogueLog* g_log = nullptr;

int64_t CopyEpilogue(void* const* buffers, const int64_t*, int64_t begin,
                     int64_t end) {
  const int64_t bytes = g_log->unit_bytes;
  std::memcpy(static_cast<char*>(buffers[1]) + begin * bytes,
              static_cast<const char*>(buffers[0]) + begin * bytes,
              static_cast<size_t>((end - begin) * bytes));
  std::lock_guard<std::mutex> lock(g_log->mu);
  g_log->ranges.push_back({begin, end});
  return 0;
}

// alpha * a @ b in double for a [B, M, K], b [B, K, N] (values of any
// strides), row-major [B, M, N].
std::vector<double> Naive(const Tensor& a, const Tensor& b, double alpha) {
  const std::vector<double> va = ToDoubles(a), vb = ToDoubles(b);
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  std::vector<double> r(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          s += va[(bi * m + i) * k + kk] * vb[(bi * k + kk) * n + j];
        }
        r[static_cast<size_t>((bi * m + i) * n + j)] = alpha * s;
      }
    }
  }
  return r;
}

FixedRef RefOf(int slot, const Tensor& t) {
  return FixedRef{slot, Shape(t.sizes().begin(), t.sizes().end()),
                  Shape(t.strides().begin(), t.strides().end()), 0};
}

// A [rows, cols] matrix with the same values stored column-major.
Tensor ColumnMajor(const Tensor& t) {
  Tensor storage = *Tensor::Empty(t.dtype(), {t.size(1), t.size(0)});
  Tensor view = storage.AsStrided(t.sizes(), {1, t.size(0)});
  CopyInto(view, t);
  return view;
}

struct StepRun {
  Tensor out;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  absl::Status status;
};

// Runs `step` over slots {a's memory, b's memory} with the copy epilogue
// into a fresh [B,] M, N output on `threads` threads.
StepRun RunStep(GemmStep step, const Tensor& a, const Tensor& b, int threads,
                std::vector<int64_t> symbols = {}) {
  EpilogueLog log;
  g_log = &log;
  const int64_t batch = step.symbolic ? 1 : step.batch;
  StepRun run;
  const Shape out_sizes = step.batched
                              ? Shape{batch, a.size(1), b.size(2)}
                              : Shape{a.size(a.dim() - 2), b.size(b.dim() - 1)};
  run.out = *Tensor::Zeros(step.dtype, out_sizes);
  log.unit_bytes = ItemSize(step.dtype) *
                   (step.batched ? a.size(1) * b.size(2) : b.size(b.dim() - 1));
  step.product_param = 0;
  ThreadPool pool(threads);
  const std::vector<Tensor> slots = {a, b};
  std::vector<void*> params = {nullptr, run.out.data()};
  if (step.result_param >= 0) params[step.result_param] = run.out.data();
  run.status = RunGemmStep(step, CopyEpilogue, params, slots, symbols, pool);
  run.ranges = log.ranges;
  g_log = nullptr;
  return run;
}

GemmStep MatrixStep(DType dtype, const Tensor& a, const Tensor& b) {
  GemmStep step;
  step.target = "aten.mm.default";
  step.dtype = dtype;
  step.m = a.size(0);
  step.k = a.size(1);
  step.n = b.size(1);
  step.a = RefOf(0, a);
  step.b = RefOf(1, b);
  return step;
}

// The ranges, sorted, tile [0, units) exactly.
void ExpectTiles(std::vector<std::pair<int64_t, int64_t>> ranges,
                 int64_t units) {
  std::sort(ranges.begin(), ranges.end());
  int64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    EXPECT_EQ(begin, at);
    EXPECT_LT(begin, end);
    at = end;
  }
  EXPECT_EQ(at, units);
}

TEST(GemmStep, RowPanelsCoverEveryRowOnce) {
  // 1024 x 512 float32 rows of 2 KiB: 512-row panels on one thread, three
  // panels of 342 rows on three.
  const Tensor a = RandomTensor(DType::kFloat32, {1024, 64}, 1);
  const Tensor b = ColumnMajor(RandomTensor(DType::kFloat32, {64, 512}, 2));
  const std::vector<double> want =
      Naive(a.AsStrided({1, 1024, 64}, {0, 64, 1}),
            b.AsStrided({1, 64, 512}, {0, 1, 64}), 1);
  for (const auto& [threads, panels] :
       std::vector<std::pair<int, size_t>>{{1, 2}, {3, 3}}) {
    SCOPED_TRACE(threads);
    GemmStep step = MatrixStep(DType::kFloat32, a, b);
    EXPECT_EQ(GemmPanelUnits(step, threads), threads == 1 ? 512 : 342);
    const StepRun run = RunStep(step, a, b, threads);
    ASSERT_TRUE(run.status.ok()) << run.status;
    EXPECT_EQ(run.ranges.size(), panels);
    ExpectTiles(run.ranges, 1024);
    ExpectTensor(run.out, DType::kFloat32, {1024, 512}, want, 1e-4, 1e-5);
  }
}

TEST(GemmStep, FewRowsSplitByColumnsWithOneEpilogueCall) {
  // 8 rows, 1024 columns, k 256: 2^21 multiply-adds, split by columns on
  // three threads; the epilogue runs once over all 8 rows. alpha 0.5.
  const Tensor a = RandomTensor(DType::kFloat64, {8, 256}, 3);
  const Tensor b = RandomTensor(DType::kFloat64, {256, 1024}, 4);
  const std::vector<double> want =
      Naive(a.AsStrided({1, 8, 256}, {0, 256, 1}),
            b.AsStrided({1, 256, 1024}, {0, 1024, 1}), 0.5);
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    GemmStep step = MatrixStep(DType::kFloat64, a, b);
    step.alpha = 0.5;
    const StepRun run = RunStep(step, a, b, threads);
    ASSERT_TRUE(run.status.ok()) << run.status;
    ASSERT_EQ(run.ranges.size(), 1u);
    EXPECT_EQ(run.ranges[0], std::make_pair(int64_t{0}, int64_t{8}));
    ExpectTensor(run.out, DType::kFloat64, {8, 1024}, want, 1e-12, 1e-12);
  }
}

TEST(GemmStep, OneRowAndStridedOperands) {
  // m = 1 (a matrix-vector product) with b either way round, and a whose
  // strides have no BLAS layout (copied).
  const Tensor a = RandomTensor(DType::kFloat32, {1, 33}, 5);
  const Tensor b = RandomTensor(DType::kFloat32, {33, 17}, 6);
  const std::vector<double> want =
      Naive(a.AsStrided({1, 1, 33}, {0, 33, 1}),
            b.AsStrided({1, 33, 17}, {0, 17, 1}), 1);
  for (const Tensor& bb : {b, ColumnMajor(b)}) {
    const StepRun run = RunStep(MatrixStep(DType::kFloat32, a, bb), a, bb, 2);
    ASSERT_TRUE(run.status.ok()) << run.status;
    ExpectTensor(run.out, DType::kFloat32, {1, 17}, want, 1e-5, 1e-5);
  }
  const Tensor x = RandomTensor(DType::kFloat64, {6, 5}, 7);
  const Tensor strided = testing::NonContiguousCopy(x);  // no BLAS layout
  const Tensor y = RandomTensor(DType::kFloat64, {5, 4}, 8);
  const StepRun run =
      RunStep(MatrixStep(DType::kFloat64, strided, y), strided, y, 1);
  ASSERT_TRUE(run.status.ok()) << run.status;
  ExpectTensor(run.out, DType::kFloat64, {6, 4},
               Naive(x.AsStrided({1, 6, 5}, {0, 5, 1}),
                     y.AsStrided({1, 5, 4}, {0, 4, 1}), 1),
               1e-12, 1e-12);
}

TEST(GemmStep, BatchedWithABroadcastOperand) {
  // bmm: 5 products of [16, 4] @ [4, 8], a's batch stride 0 (one matrix
  // for all), panels over batches.
  const Tensor a1 = RandomTensor(DType::kFloat32, {1, 16, 4}, 9);
  const Tensor a = a1.AsStrided({5, 16, 4}, {0, 4, 1});
  const Tensor b = RandomTensor(DType::kFloat32, {5, 4, 8}, 10);
  GemmStep step;
  step.target = "aten.bmm.default";
  step.batched = true;
  step.batch = 5;
  step.m = 16;
  step.n = 8;
  step.k = 4;
  step.a = RefOf(0, a);
  step.b = RefOf(1, b);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const StepRun run = RunStep(step, a, b, threads);
    ASSERT_TRUE(run.status.ok()) << run.status;
    ExpectTiles(run.ranges, 5);
    ExpectTensor(run.out, DType::kFloat32, {5, 16, 8}, Naive(a, b, 1), 1e-5,
                 1e-5);
  }
}

TEST(GemmStep, BareProductIsWrittenIntoItsResult) {
  // result_param: BLAS writes the product there; the epilogue is not run.
  const Tensor a = RandomTensor(DType::kFloat32, {300, 64}, 11);
  const Tensor b = RandomTensor(DType::kFloat32, {64, 128}, 12);
  const std::vector<double> want =
      Naive(a.AsStrided({1, 300, 64}, {0, 64, 1}),
            b.AsStrided({1, 64, 128}, {0, 128, 1}), 2);
  for (int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    GemmStep step = MatrixStep(DType::kFloat32, a, b);
    step.alpha = 2;
    step.result_param = 1;
    const StepRun run = RunStep(step, a, b, threads);
    ASSERT_TRUE(run.status.ok()) << run.status;
    EXPECT_TRUE(run.ranges.empty());
    ExpectTensor(run.out, DType::kFloat32, {300, 128}, want, 1e-4, 1e-5);
  }
}

TEST(GemmStep, DynamicStepIsBoundPerCall) {
  // a [s0, 8] @ b [8, 6]: run for s0 = 5; s0 = 0 is an extent error.
  const Tensor a = RandomTensor(DType::kFloat64, {5, 8}, 13);
  const Tensor b = RandomTensor(DType::kFloat64, {8, 6}, 14);
  GemmStep step;
  step.target = "aten.mm.default";
  step.dtype = DType::kFloat64;
  const TensorRef ra{0,
                     {IndexExpr::Size(0), IndexExpr::Const(8)},
                     {IndexExpr::Const(8), IndexExpr::Const(1)},
                     IndexExpr::Const(0)};
  const TensorRef rb{1,
                     {IndexExpr::Const(8), IndexExpr::Const(6)},
                     {IndexExpr::Const(6), IndexExpr::Const(1)},
                     IndexExpr::Const(0)};
  step.symbolic = GemmStep::Symbolic{IndexExpr::Const(1),
                                     IndexExpr::Size(0),
                                     IndexExpr::Const(6),
                                     IndexExpr::Const(8),
                                     ra,
                                     rb};
  const StepRun run = RunStep(step, a, b, 1, {5});
  ASSERT_TRUE(run.status.ok()) << run.status;
  ExpectTiles(run.ranges, 5);
  ExpectTensor(run.out, DType::kFloat64, {5, 6},
               Naive(a.AsStrided({1, 5, 8}, {0, 8, 1}),
                     b.AsStrided({1, 8, 6}, {0, 6, 1}), 1),
               1e-12, 1e-12);
  const StepRun bad = RunStep(step, a, b, 1, {0});
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status.message(),
            "gemm aten.mm.default float64 [s0x8] @ [8x6]: extent 0 outside "
            "[1, 2147483647]");
  EXPECT_TRUE(bad.ranges.empty());
  // A static step binds to itself.
  GemmStep fixed = MatrixStep(DType::kFloat64, a, b);
  auto bound = fixed.Bind({});
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->ToString(), fixed.ToString());
}

TEST(GemmStep, ToStringNamesOperandsAlphaAndDeviceEpilogue) {
  GemmStep step;
  step.target = "aten.addmm.default";
  step.a = FixedRef{0, {4, 8}, {8, 1}, 0};
  step.b = FixedRef{1, {8, 16}, {1, 8}, 0};  // transposed
  EXPECT_EQ(step.ToString(),
            "gemm aten.addmm.default float32 [4x8] @ [8x16]^T");
  step.alpha = 0.5;
  step.b.strides = {16, 1};
  // A column of one element is not transposed whatever its stride.
  step.a = FixedRef{0, {4, 1}, {1, 7}, 0};
  EXPECT_EQ(step.ToString(),
            "gemm aten.addmm.default float32 [4x1] @ "
            "[8x16] * 0.5");
  using Activation = GemmStep::DeviceEpilogue::Activation;
  GemmStep::DeviceEpilogue e;
  step.alpha = 1;
  step.device_epilogue = e;
  EXPECT_EQ(step.ToString(),
            "gemm aten.addmm.default float32 [4x1] @ "
            "[8x16] with cuBLASLt's epilogue none");
  e.activation = Activation::kRelu;
  e.bias = FixedRef{2, {16}, {1}, 0};
  step.device_epilogue = e;
  EXPECT_EQ(step.ToString(),
            "gemm aten.addmm.default float32 [4x1] @ "
            "[8x16] with cuBLASLt's epilogue relu+bias");
  e.activation = Activation::kGeluTanh;
  e.bias.reset();
  e.c = FixedRef{2, {4, 16}, {16, 1}, 0};
  e.beta = 0.25;
  step.device_epilogue = e;
  EXPECT_EQ(step.ToString(),
            "gemm aten.addmm.default float32 [4x1] @ [8x16] with cuBLASLt's "
            "epilogue gelu_tanh and C * 0.25");
}

TEST(GemmStep, CheckServingProductReasons) {
  Plan plan;
  plan.slots.resize(3);
  plan.slots[1].source = Slot::Source::kConstant;
  plan.slots[2].source = Slot::Source::kInput;
  GemmStep step;
  step.dtype = DType::kFloat32;
  step.m = 8;
  step.b.slot = 1;
  EXPECT_TRUE(CheckServingProduct(step, plan).ok());
  const auto expect = [&](const GemmStep& s, const std::string& why) {
    const absl::Status st = CheckServingProduct(s, plan);
    EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
    EXPECT_EQ(st.message(), why);
  };
  GemmStep s = step;
  s.dtype = DType::kFloat64;
  expect(s, "not a static float32 product");
  s = step;
  s.batched = true;
  expect(s, "not a static float32 product");
  s = step;
  s.symbolic = GemmStep::Symbolic{};
  expect(s, "not a static float32 product");
  s = step;
  s.m = kServingMaxRows;
  expect(s, "256 rows: BLAS row panels keep the product in cache");
  s.m = kServingMaxRows - 1;
  EXPECT_TRUE(CheckServingProduct(s, plan).ok());
  s = step;
  s.b.slot = 2;
  expect(s, "b is not a graph constant");
  s.b.slot = 3;
  expect(s, "b is not a graph constant");
  s.b.slot = -1;
  expect(s, "b is not a graph constant");
}

}  // namespace
}  // namespace guardjit
