// The CUDA C writer's reductions (jit/cuda/cuda_kernel_reduce.cc, declared
// with the writer in cuda_kernel_writer.h): blocked sums over rows reduced
// by a thread, a warp and a block; max/min and arg reductions whose NaNs and
// ties cross lanes and warps; the online max + sum pass of softmax; integer
// and product combines. Loop IR by hand, one module (one host compile),
// run on the SIMT emulator with 64-thread blocks against values computed
// here.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/cuda/cuda_codegen.h"
#include "jit/cuda/cuda_kernel_writer.h"
#include "tests/jit/cuda/simt_launch_test_util.h"

namespace guardjit {
namespace {

using Mapping = CudaKernelInfo::Mapping;

constexpr int64_t kSumRows = 3;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

IndexExpr At(int64_t len) {
  return IndexExpr::Var(0) * IndexExpr::Const(len) + IndexExpr::Var(1);
}

// out[i0] = combine over i1 < len of in[i0, i1] (dtype `d`), [rows, len].
Kernel RowReduce(int64_t rows, int64_t len, DType d, CombineOp op) {
  Kernel k;
  k.buffers = {{"in0", d, false}, {"out0", d, true}};
  k.outer = {{0, IndexExpr::Const(rows)}};
  k.num_locals = 1;
  Stage r;
  r.kind = Stage::Kind::kReduce;
  r.loops = {{1, IndexExpr::Const(len)}};
  r.value = ValueExpr::Load(0, d, At(len));
  r.local = 0;
  r.combine = op;
  Stage s;
  s.value = ValueExpr::Local(0, d);
  s.buffer = 1;
  s.index = IndexExpr::Var(0);
  k.stages = {r, s};
  return k;
}

// out_max[i0], out_arg[i0] = max and argmax (or min and argmin) of
// in[i0, :], [rows, len].
Kernel ValueAndIndex(int64_t rows, int64_t len, bool max) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true},
               {"out1", DType::kInt64, true}};
  k.outer = {{0, IndexExpr::Const(rows)}};
  k.num_locals = 2;
  Stage v;
  v.kind = Stage::Kind::kReduce;
  v.loops = {{1, IndexExpr::Const(len)}};
  v.value = ValueExpr::Load(0, DType::kFloat32, At(len));
  v.local = 0;
  v.combine = max ? CombineOp::kMax : CombineOp::kMin;
  Stage a = v;
  a.local = 1;
  a.combine = max ? CombineOp::kArgMax : CombineOp::kArgMin;
  Stage s0;
  s0.value = ValueExpr::Local(0, DType::kFloat32);
  s0.buffer = 1;
  s0.index = IndexExpr::Var(0);
  Stage s1;
  s1.value = ValueExpr::Local(1, DType::kInt64);
  s1.buffer = 2;
  s1.index = IndexExpr::Var(0);
  k.stages = {v, a, s0, s1};
  return k;
}

// softmax over rows of `len`: max, sum of exp(x - max), exp(x - max) / sum.
Kernel Softmax(int64_t rows, int64_t len) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(rows)}};
  k.num_locals = 2;
  const std::vector<LoopRange> row = {{1, IndexExpr::Const(len)}};
  auto x = [&] { return ValueExpr::Load(0, DType::kFloat32, At(len)); };
  auto shifted_exp = [&] {
    return ValueExpr::Unary(
        UnaryOp::kExp, ValueExpr::Binary(BinaryOp::kSub, x(),
                                         ValueExpr::Local(0, DType::kFloat32)));
  };
  Stage max;
  max.kind = Stage::Kind::kReduce;
  max.loops = row;
  max.value = x();
  max.local = 0;
  max.combine = CombineOp::kMax;
  Stage sum = max;
  sum.value = shifted_exp();
  sum.local = 1;
  sum.combine = CombineOp::kSum;
  Stage out;
  out.loops = row;
  out.value = ValueExpr::Binary(BinaryOp::kDiv, shifted_exp(),
                                ValueExpr::Local(1, DType::kFloat32));
  out.buffer = 1;
  out.index = At(len);
  k.stages = {max, sum, out};
  return k;
}

class CudaKernelReduceTest
    : public testing::SimtModuleSuite<CudaKernelReduceTest> {
 protected:
  // Row lengths reduced by one thread (<= 16), a warp (<= 1024) and a
  // block.
  static constexpr int64_t kLens[3] = {9, 100, 1500};
  enum {
    kSumThread,
    kSumWarp,
    kSumBlock,
    kMaxArgWarp,
    kMinArgBlock,
    kSoftmaxWarp,
    kIntSum,
    kProd,
    kCount
  };

 public:  // read by SimtModuleSuite
  static constexpr int kBlockThreads = 64;
  static std::vector<Kernel> Kernels() {
    return {RowReduce(kSumRows, kLens[0], DType::kFloat32, CombineOp::kSum),
            RowReduce(kSumRows, kLens[1], DType::kFloat32, CombineOp::kSum),
            RowReduce(kSumRows, kLens[2], DType::kFloat32, CombineOp::kSum),
            ValueAndIndex(3, 40, /*max=*/true),
            ValueAndIndex(2, 1500, /*max=*/false),
            Softmax(3, 64),
            RowReduce(2, 50, DType::kInt64, CombineOp::kSum),
            RowReduce(2, 5, DType::kFloat64, CombineOp::kProd)};
  }
};

TEST_F(CudaKernelReduceTest, RowSumsOnOneLaneAWarpAndABlock) {
  const Mapping mappings[3] = {Mapping::kRowPerThread, Mapping::kRowPerWarp,
                               Mapping::kRowPerBlock};
  for (int m = 0; m < 3; ++m) {
    const int64_t len = kLens[m];
    const CudaKernelInfo& info = Info(kSumThread + m);
    SCOPED_TRACE(len);
    EXPECT_EQ(info.mapping, mappings[m]);
    std::vector<float> in(kSumRows * len);
    for (size_t i = 0; i < in.size(); ++i) {
      in[i] = static_cast<float>(std::sin(0.37 * i) * 100);
    }
    std::vector<float> out(kSumRows, -1);
    // One block: rows grid-stride even for the thread and warp mappings.
    ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()}, {},
                                      nullptr, 1)
                    .ok());
    for (int64_t r = 0; r < kSumRows; ++r) {
      double expected = 0, magnitude = 0;
      for (int64_t j = 0; j < len; ++j) {
        expected += in[r * len + j];
        magnitude += std::abs(in[r * len + j]);
      }
      // Float blocks summed in double: well within 1e-5 of the magnitude.
      EXPECT_NEAR(out[r], expected, 1e-4 + 1e-5 * magnitude) << "row " << r;
    }
  }
}

TEST_F(CudaKernelReduceTest, MaxAndArgMaxTakeNaNAndTheFirstTie) {
  const CudaKernelInfo& info = Info(kMaxArgWarp);
  EXPECT_EQ(info.mapping, Mapping::kRowPerWarp);
  const int64_t len = 40;
  std::vector<float> in(3 * len);
  for (int64_t j = 0; j < len; ++j) {
    in[j] = static_cast<float>(j % 7);         // ties at 6: 6, 13, 20, ...
    in[len + j] = static_cast<float>(j) - 50;  // NaN at 17 beats 39 - 50
    in[2 * len + j] = -kInf;                   // all -inf
  }
  in[30] = 9;  // row 0's max, once, in the second half-warp
  in[len + 17] = kNaN;
  std::vector<float> max(3, 0);
  std::vector<int64_t> arg(3, -7);
  ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                    {in.data(), max.data(), arg.data()}, {},
                                    nullptr, 1)
                  .ok());
  EXPECT_EQ(max[0], 9.0f);
  EXPECT_EQ(arg[0], 30);
  EXPECT_TRUE(std::isnan(max[1]));
  EXPECT_EQ(arg[1], 17);
  EXPECT_EQ(max[2], -kInf);
  EXPECT_EQ(arg[2], 0) << "the first of equal values";
  // Ties: the first position wins across lanes.
  in[30] = 6;
  ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                    {in.data(), max.data(), arg.data()}, {},
                                    nullptr, 1)
                  .ok());
  EXPECT_EQ(max[0], 6.0f);
  EXPECT_EQ(arg[0], 6);
}

TEST_F(CudaKernelReduceTest, MinAndArgMinAcrossTheWarpsOfABlock) {
  const CudaKernelInfo& info = Info(kMinArgBlock);
  EXPECT_EQ(info.mapping, Mapping::kRowPerBlock);
  const int64_t len = 1500;
  std::vector<float> in(2 * len);
  for (int64_t i = 0; i < 2 * len; ++i) {
    in[i] = static_cast<float>((i * 37) % 101);
  }
  // Row 0: the minimum twice, in different warps' shares; row 1: once.
  in[700] = -3;
  in[1200] = -3;
  in[len + 1499] = -8;
  std::vector<float> min(2, 0);
  std::vector<int64_t> arg(2, -7);
  ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                    {in.data(), min.data(), arg.data()}, {},
                                    nullptr, 1)
                  .ok());
  EXPECT_EQ(min[0], -3.0f);
  EXPECT_EQ(arg[0], 700);
  EXPECT_EQ(min[1], -8.0f);
  EXPECT_EQ(arg[1], 1499);
}

TEST_F(CudaKernelReduceTest, SoftmaxRunsAsOneOnlinePass) {
  const CudaKernelInfo& info = Info(kSoftmaxWarp);
  EXPECT_EQ(info.online_softmax_passes, 1);
  EXPECT_EQ(info.mapping, Mapping::kRowPerWarp);
  const int64_t len = 64;
  std::vector<float> in(3 * len);
  for (int64_t j = 0; j < len; ++j) {
    in[j] = static_cast<float>(std::cos(0.5 * j) * 8);
    // Row 1: -inf entries and a large value late in the row (the running
    // max grows and earlier partial sums are rescaled).
    in[len + j] = j % 3 == 0 ? -kInf : static_cast<float>(j) * 0.5f;
    in[2 * len + j] = -kInf;
  }
  in[len + 62] = 80;
  std::vector<float> out(3 * len, -1);
  ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()}, {},
                                    nullptr, 1)
                  .ok());
  for (int64_t r = 0; r < 2; ++r) {
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t j = 0; j < len; ++j) m = std::max<double>(m, in[r * len + j]);
    for (int64_t j = 0; j < len; ++j) s += std::exp(in[r * len + j] - m);
    for (int64_t j = 0; j < len; ++j) {
      const double expected = std::exp(in[r * len + j] - m) / s;
      EXPECT_NEAR(out[r * len + j], expected, 1e-6 + 1e-5 * expected)
          << "row " << r << ", " << j;
    }
  }
  // A row of -inf: NaN, as torch's softmax.
  for (int64_t j = 0; j < len; ++j) {
    EXPECT_TRUE(std::isnan(out[2 * len + j])) << j;
  }
}

TEST_F(CudaKernelReduceTest, IntegerSumsAreExactAndProductsMultiply) {
  {
    const CudaKernelInfo& info = Info(kIntSum);
    std::vector<int64_t> in(2 * 50);
    int64_t expected[2] = {0, 0};
    for (int64_t i = 0; i < 100; ++i) {
      in[i] = (int64_t{1} << 40) + i * 1000003 - 7;
      expected[i / 50] += in[i];
    }
    std::vector<int64_t> out(2, 0);
    ASSERT_TRUE(
        testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()}).ok());
    EXPECT_EQ(out[0], expected[0]);
    EXPECT_EQ(out[1], expected[1]);
  }
  {
    const CudaKernelInfo& info = Info(kProd);
    std::vector<double> in = {1.5, -2, 3, 0.5, 4, 2, 2, 2, 2, -0.25};
    std::vector<double> out(2, 0);
    ASSERT_TRUE(
        testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()}).ok());
    EXPECT_EQ(out[0], 1.5 * -2 * 3 * 0.5 * 4);
    EXPECT_EQ(out[1], 2.0 * 2 * 2 * 2 * -0.25);
  }
}

}  // namespace
}  // namespace guardjit
