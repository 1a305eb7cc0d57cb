// The CUDA C kernel writer (jit/cuda/cuda_kernel_writer.h): the launch
// description it fills in, and the code it writes for pointwise kernels
// (the row loop over static and symbolic outer loops, loads and stores,
// broadcasts and transposed reads, float16 storage, vector accesses with
// their scalar fallback, checked gathers), run on the SIMT emulator against
// values computed here. One module holds every kernel (one host compile);
// 32-thread blocks and at most a few blocks, so rows are grid-strided.

#include "jit/cuda/cuda_kernel_writer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/half.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/cuda/cuda_codegen.h"
#include "tests/jit/cuda/simt_launch_test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using Mapping = CudaKernelInfo::Mapping;

constexpr int64_t kRows = 5, kCols = 6;

// out[i0, i1] = relu(in0[i1, i0]) * 2 - in1[i1]: a transposed read and a
// broadcast row, [kRows, kCols].
Kernel TransposeBroadcast() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"in1", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(kRows)}, {1, IndexExpr::Const(kCols)}};
  Stage s;
  s.value = ValueExpr::Binary(
      BinaryOp::kSub,
      ValueExpr::Binary(
          BinaryOp::kMul,
          ValueExpr::Unary(
              UnaryOp::kRelu,
              ValueExpr::Load(0, DType::kFloat32,
                              IndexExpr::Var(1) * IndexExpr::Const(kRows) +
                                  IndexExpr::Var(0))),
          ValueExpr::Const(DType::kFloat32, 2.0)),
      ValueExpr::Load(1, DType::kFloat32, IndexExpr::Var(1)));
  s.buffer = 2;
  s.index = IndexExpr::Var(0) * IndexExpr::Const(kCols) + IndexExpr::Var(1);
  k.stages = {s};
  return k;
}

// out[i0, i1] = in0[i0, i1] + float(i1) over symbolic [s0, s1].
Kernel SymbolicAddColumn() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 2;
  k.outer = {{0, IndexExpr::Size(0)}, {1, IndexExpr::Size(1)}};
  const IndexExpr at =
      IndexExpr::Var(0) * IndexExpr::Size(1) + IndexExpr::Var(1);
  Stage s;
  s.value = ValueExpr::Binary(
      BinaryOp::kAdd, ValueExpr::Load(0, DType::kFloat32, at),
      ValueExpr::Cast(ValueExpr::Index(IndexExpr::Var(1)), DType::kFloat32));
  s.buffer = 1;
  s.index = at;
  k.stages = {s};
  return k;
}

// out = in * 3 + 1 over contiguous [4, 8] float32: a vector path.
Kernel ContiguousAffine() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(4)}, {1, IndexExpr::Const(8)}};
  const IndexExpr at =
      IndexExpr::Var(0) * IndexExpr::Const(8) + IndexExpr::Var(1);
  Stage s;
  s.value = ValueExpr::Binary(
      BinaryOp::kAdd,
      ValueExpr::Binary(BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat32, at),
                        ValueExpr::Const(DType::kFloat32, 3.0)),
      ValueExpr::Const(DType::kFloat32, 1.0));
  s.buffer = 1;
  s.index = at;
  k.stages = {s};
  return k;
}

// float16 storage: out = in * 3 (computed in float, rounded once), [6].
Kernel HalfTriple() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat16, false},
               {"out0", DType::kFloat16, true}};
  k.outer = {{0, IndexExpr::Const(6)}};
  Stage s;
  s.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat16, IndexExpr::Var(0)),
      ValueExpr::Const(DType::kFloat16, 3.0));
  s.buffer = 1;
  s.index = IndexExpr::Var(0);
  k.stages = {s};
  return k;
}

// out[i0] = table[idx[i0]] with idx checked against [0, 10), [4].
Kernel CheckedGather() {
  Kernel k;
  k.buffers = {{"in0", DType::kInt64, false},
               {"in1", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, IndexExpr::Const(4)}};
  k.num_checks = 1;
  Stage s;
  s.value =
      ValueExpr::Gather(1, DType::kFloat32, IndexExpr::Const(0),
                        ValueExpr::Load(0, DType::kInt64, IndexExpr::Var(0)),
                        IndexExpr::Const(1), IndexExpr::Const(10), 0);
  s.buffer = 2;
  s.index = IndexExpr::Var(0);
  k.stages = {s};
  return k;
}

class CudaKernelWriterTest
    : public testing::SimtModuleSuite<CudaKernelWriterTest> {
 protected:
  enum { kTranspose, kSymbolic, kAffine, kHalf, kGather, kCount };

 public:  // read by SimtModuleSuite
  static constexpr int kBlockThreads = 32;
  static std::vector<Kernel> Kernels() {
    return {TransposeBroadcast(), SymbolicAddColumn(), ContiguousAffine(),
            HalfTriple(), CheckedGather()};
  }
};

// Write fills in how the kernel is launched, and the signature says the
// same: buffers, then sizes, then the fault word.
TEST_F(CudaKernelWriterTest, DescribesTheLaunchItWrites) {
  const Kernel k = SymbolicAddColumn();
  const CudaCodegenOptions options{.block_threads = 64};
  CudaKernelInfo info;
  info.name = "my_kernel";
  std::string text;
  ASSERT_TRUE(cuda_c::KernelWriter(k, options, &info).Write(&text).ok());
  EXPECT_EQ(info.mapping, Mapping::kRowPerThread);
  EXPECT_EQ(info.block_threads, 64);
  EXPECT_EQ(info.rows_per_block, 64);
  EXPECT_EQ(info.num_buffers, 2);
  EXPECT_EQ(info.num_size_params, 2);
  EXPECT_FALSE(info.has_fault_flag);
  EXPECT_FALSE(info.index32) << "symbolic sizes without bounds";
  EXPECT_EQ(info.rows.Evaluate({3, 37}), 3 * 37);
  EXPECT_THAT(text, HasSubstr("extern \"C\" __global__ void "
                              "__launch_bounds__(64) my_kernel(const float* "
                              "__restrict__ b0, float* __restrict__ b1, long "
                              "long s0, long long s1)"));
  EXPECT_THAT(text, HasSubstr("Index math in 64 bits"));

  // Bounded sizes narrow the index math.
  const CudaCodegenOptions bounded{.block_threads = 64,
                                   .size_bounds = {100, 100}};
  CudaKernelInfo narrow;
  narrow.name = "narrow";
  std::string narrow_text;
  ASSERT_TRUE(
      cuda_c::KernelWriter(k, bounded, &narrow).Write(&narrow_text).ok());
  EXPECT_TRUE(narrow.index32);
  EXPECT_THAT(narrow_text, HasSubstr("const int s1i = (int)s1;"));

  EXPECT_TRUE(Info(kGather).has_fault_flag);
  EXPECT_THAT(source_->source,
              HasSubstr("unsigned long long* __restrict__ gj_faults"));
}

TEST_F(CudaKernelWriterTest, StageReducingIntoAnUndeclaredLocalIsAnError) {
  Kernel k = ContiguousAffine();
  Stage reduce;
  reduce.kind = Stage::Kind::kReduce;
  reduce.loops = {{2, IndexExpr::Const(4)}};
  reduce.value = ValueExpr::Const(DType::kFloat32, 1.0);
  reduce.local = 0;  // k.num_locals is 0
  k.stages.insert(k.stages.begin(), reduce);
  CudaKernelInfo info;
  std::string text;
  const absl::Status status =
      cuda_c::KernelWriter(k, CudaCodegenOptions{}, &info).Write(&text);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
}

TEST_F(CudaKernelWriterTest, TransposedReadAndBroadcastRow) {
  const CudaKernelInfo& info = Info(kTranspose);
  EXPECT_EQ(info.mapping, Mapping::kRowPerThread);
  EXPECT_EQ(info.vector_width, 1) << "a transposed read stays scalar";
  EXPECT_EQ(info.rows.Evaluate({}), kRows * kCols);
  std::vector<float> in0(kRows * kCols), in1(kCols), out(kRows * kCols, 99);
  for (size_t i = 0; i < in0.size(); ++i) in0[i] = 0.5f * i - 7;
  for (size_t i = 0; i < in1.size(); ++i) in1[i] = 0.25f * i;
  // One block of 32 threads for 30 points, and two for the same.
  for (const int64_t max_blocks : {1, 2}) {
    std::fill(out.begin(), out.end(), 99.0f);
    ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                      {in0.data(), in1.data(), out.data()}, {},
                                      nullptr, max_blocks)
                    .ok());
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        const float x = in0[j * kRows + i];
        EXPECT_EQ(out[i * kCols + j], (x > 0 ? x : 0) * 2 - in1[j])
            << i << ", " << j;
      }
    }
  }
}

TEST_F(CudaKernelWriterTest, SymbolicSizesGridStrideOverEveryRow) {
  const CudaKernelInfo& info = Info(kSymbolic);
  for (const std::vector<int64_t>& sizes :
       {std::vector<int64_t>{3, 37}, std::vector<int64_t>{1, 1},
        std::vector<int64_t>{7, 2}}) {
    const int64_t n = sizes[0] * sizes[1];
    std::vector<float> in(n), out(n + 4, -5);
    for (int64_t i = 0; i < n; ++i) in[i] = 1.5f * i;
    // One block: 32 threads stride over up to 111 rows.
    ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()},
                                      sizes, nullptr, 1)
                    .ok());
    for (int64_t i = 0; i < sizes[0]; ++i) {
      for (int64_t j = 0; j < sizes[1]; ++j) {
        EXPECT_EQ(out[i * sizes[1] + j], in[i * sizes[1] + j] + j)
            << sizes[0] << "x" << sizes[1] << " at " << i << ", " << j;
      }
    }
    for (int64_t i = n; i < n + 4; ++i) {
      EXPECT_EQ(out[i], -5.0f) << "past the end, at " << i;
    }
  }
}

// The vector path on aligned buffers, the scalar loop on misaligned ones:
// the same values either way (a misaligned vector access would read
// poisoned data on the emulator).
TEST_F(CudaKernelWriterTest, VectorPathAndItsMisalignedFallback) {
  const CudaKernelInfo& info = Info(kAffine);
  EXPECT_EQ(info.vector_width, 4);
  EXPECT_EQ(info.rows.Evaluate({}), 4 * 8 / 4) << "rows count vectors";
  EXPECT_THAT(source_->source, HasSubstr("gj_vload<4>"));
  alignas(16) float in_storage[40];
  alignas(16) float out_storage[40];
  for (const int offset : {0, 1}) {
    float* in = in_storage + offset;
    float* out = out_storage + offset;
    for (int i = 0; i < 32; ++i) {
      in[i] = 0.125f * i - 1;
      out[i] = 1234;
    }
    ASSERT_TRUE(
        testing::LaunchOnSimt(*simt_, info, {in, out}, {}, nullptr, 2).ok());
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(out[i], in[i] * 3 + 1) << "offset " << offset << ", " << i;
    }
  }
}

TEST_F(CudaKernelWriterTest, HalfStorageComputesInFloatAndRoundsOnce) {
  const CudaKernelInfo& info = Info(kHalf);
  // 1 + 2^-10 (one float16 ulp above 1) times 3 is 1.5 ulps above 3 at
  // float16: rounds to even, 3 + 2^-8.
  const std::vector<float> values = {1.0f + 1.0f / 1024, -2.5f, 0.0f,
                                     65504.0f / 4,       1e-3f, -0.3f};
  std::vector<uint16_t> in, out(values.size(), 0);
  for (float v : values) in.push_back(FloatToHalfBits(v));
  ASSERT_TRUE(
      testing::LaunchOnSimt(*simt_, info, {in.data(), out.data()}).ok());
  for (size_t i = 0; i < values.size(); ++i) {
    const float expected =
        HalfBitsToFloat(FloatToHalfBits(HalfBitsToFloat(in[i]) * 3.0f));
    EXPECT_EQ(HalfBitsToFloat(out[i]), expected) << i;
  }
  EXPECT_EQ(HalfBitsToFloat(out[0]), 3.0f + 1.0f / 256);
}

TEST_F(CudaKernelWriterTest, GatherChecksItsIndexAndReportsTheFault) {
  const CudaKernelInfo& info = Info(kGather);
  std::vector<float> table(10);
  for (int i = 0; i < 10; ++i) table[i] = 10.0f + i;
  {
    std::vector<int64_t> idx = {3, 9, 0, 5};
    std::vector<float> out(4, -1);
    unsigned long long faults = 0;
    ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                      {idx.data(), table.data(), out.data()},
                                      {}, &faults)
                    .ok());
    EXPECT_EQ(faults, 0u);
    EXPECT_EQ(out, (std::vector<float>{13, 19, 10, 15}));
  }
  {
    std::vector<int64_t> idx = {2, 10, -1, 7};
    std::vector<float> out(4, -1);
    unsigned long long faults = 0;
    ASSERT_TRUE(testing::LaunchOnSimt(*simt_, info,
                                      {idx.data(), table.data(), out.data()},
                                      {}, &faults)
                    .ok());
    EXPECT_EQ(faults, 1u) << "check 0's bit";
    EXPECT_EQ(out[0], 12.0f);
    EXPECT_EQ(out[1], 0.0f) << "an index out of range reads zero";
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_EQ(out[3], 17.0f);
  }
}

}  // namespace
}  // namespace guardjit
