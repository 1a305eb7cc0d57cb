#include "jit/llvm/llvm_codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/llvm/kernel_compiler.h"
#include "jit/llvm/libmvec.h"
#include "jit/llvm/llvm_optimize.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

using E = IndexExpr;

KernelCompiler& Compiler() {
  static KernelCompiler* compiler = KernelCompiler::Create().value().release();
  return *compiler;
}

// out[i] = op(in[i]) over s0 elements.
Kernel Map(DType in, DType out, UnaryOp op) {
  Kernel k;
  k.buffers = {{"in0", in, false}, {"out0", out, true}};
  k.num_size_params = 1;
  k.outer = {{0, E::Size(0)}};
  Stage store;
  store.buffer = 1;
  store.index = E::Var(0);
  store.value = ValueExpr::Cast(
      ValueExpr::Unary(op, ValueExpr::Load(0, in, E::Var(0))), out);
  k.stages = {store};
  return k;
}

// One kernel serves every size: sizes are arguments.
TEST(LlvmCodegenTest, SizeParametersServeEverySize) {
  // out[r, c] = in[r, c] / sum_c in[r, c], rows of s0 columns.
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  k.num_size_params = 1;
  const E n = E::Size(0);
  k.outer = {{0, E::Const(3)}};
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.loops = {{1, n}};
  sum.value = ValueExpr::Load(0, DType::kFloat64, E::Var(0) * n + E::Var(1));
  sum.local = 0;
  Stage store;
  store.loops = {{2, n}};
  store.buffer = 1;
  store.index = E::Var(0) * n + E::Var(2);
  store.value = ValueExpr::Binary(
      BinaryOp::kDiv,
      ValueExpr::Load(0, DType::kFloat64, E::Var(0) * n + E::Var(2)),
      ValueExpr::Local(0, DType::kFloat64));
  k.stages = {sum, store};
  k.num_locals = 1;
  auto fns = Compiler().Compile({&k});
  ASSERT_TRUE(fns.ok()) << fns.status();
  for (int64_t cols : {1, 5, 64}) {
    std::vector<double> in(3 * cols), out(3 * cols, -1);
    for (size_t i = 0; i < in.size(); ++i) in[i] = 1 + i % 7;
    void* buffers[] = {in.data(), out.data()};
    (*fns)[0](buffers, &cols, 0, 3);
    for (int r = 0; r < 3; ++r) {
      double sum = 0;
      for (int c = 0; c < cols; ++c) sum += in[r * cols + c];
      for (int c = 0; c < cols; ++c) {
        EXPECT_DOUBLE_EQ(out[r * cols + c], in[r * cols + c] / sum);
      }
    }
  }
}

int64_t UlpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return std::llabs(int64_t{ia} - int64_t{ib});
}

// `op`'s float32 kernel on `in` against `libm`: within `ulps`, NaN where
// libm gives NaN, and (with `signs`) the sign libm gives, zeros included.
// Returns the worst distance; a failure stops at the first bad input.
int64_t ExpectWithinUlp(UnaryOp op, float (*libm)(float),
                        const std::vector<float>& in, int64_t ulps,
                        bool signs) {
  Kernel k = Map(DType::kFloat32, DType::kFloat32, op);
  auto fns = Compiler().Compile({&k});
  EXPECT_TRUE(fns.ok()) << fns.status();
  if (!fns.ok()) return -1;
  constexpr size_t kChunk = size_t{1} << 24;
  std::vector<float> chunk, out;
  int64_t worst = 0;
  for (size_t base = 0; base < in.size(); base += kChunk) {
    chunk.assign(in.begin() + base,
                 in.begin() + std::min(in.size(), base + kChunk));
    out.resize(chunk.size());
    int64_t n = static_cast<int64_t>(chunk.size());
    void* buffers[] = {chunk.data(), out.data()};
    (*fns)[0](buffers, &n, 0, n);
    for (size_t i = 0; i < chunk.size(); ++i) {
      const float expected = libm(chunk[i]);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(out[i])) << chunk[i];
        if (!std::isnan(out[i])) return worst;
        continue;
      }
      if (signs) {
        EXPECT_EQ(std::signbit(out[i]), std::signbit(expected)) << chunk[i];
      }
      const int64_t ulp = UlpDistance(out[i], expected);
      worst = std::max(worst, ulp);
      EXPECT_LE(ulp, ulps) << UnaryOpName(op) << "(" << chunk[i]
                           << ") = " << out[i] << ", libm " << expected;
      if (ulp > ulps) return worst;
    }
  }
  return worst;
}

// Every one of the 2^32 float32 inputs (about a minute on one core each),
// when GJ_EXHAUSTIVE=1: a sampled test cannot see a lone bad input.
int64_t ExpectWithinUlpForEveryInput(UnaryOp op, float (*libm)(float),
                                     int64_t ulps) {
  int64_t worst = 0;
  constexpr int64_t kPart = int64_t{1} << 26;
  std::vector<float> in(kPart);
  for (int64_t base = 0; base < (int64_t{1} << 32); base += kPart) {
    for (int64_t i = 0; i < kPart; ++i) {
      const uint32_t bits = static_cast<uint32_t>(base + i);
      std::memcpy(&in[i], &bits, 4);
    }
    worst = std::max(worst, ExpectWithinUlp(op, libm, in, ulps, false));
    if (::testing::Test::HasFailure()) break;
  }
  return worst;
}

float LibmExp(float x) { return std::exp(x); }
float LibmTanh(float x) { return std::tanh(x); }

// The documented bound of the float32 exp approximation.
TEST(LlvmCodegenTest, Float32ExpIsWithinTwoUlpOfLibm) {
  std::vector<float> in;
  for (double x = -110; x < 92; x += 0.000731)
    in.push_back(static_cast<float>(x));
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72283f, 88.72284f, -103.97f,
                  -87.33655f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()}) {
    in.push_back(x);
  }
  RecordProperty("worst_ulp", static_cast<int>(ExpectWithinUlp(
                                  UnaryOp::kExp, LibmExp, in, 2, false)));
}

TEST(LlvmCodegenTest, Float32ExpIsWithinTwoUlpOfLibmForEveryInput) {
  if (std::getenv("GJ_EXHAUSTIVE") == nullptr) {
    GTEST_SKIP() << "set GJ_EXHAUSTIVE=1 to run over all 2^32 inputs";
  }
  RecordProperty("worst_ulp", static_cast<int>(ExpectWithinUlpForEveryInput(
                                  UnaryOp::kExp, LibmExp, 2)));
}

// float32 tanh is expanded inline (jit/llvm/llvm_math.h): within 3 ulp of
// libm's tanhf, signed zeros, infinities and NaN kept.
TEST(LlvmCodegenTest, Float32TanhIsWithinThreeUlpOfLibm) {
  std::vector<float> in;
  for (double x = -60; x < 60; x += 0.000917)
    in.push_back(static_cast<float>(x));
  for (double x = -1; x < 1; x += 0.0000131)
    in.push_back(static_cast<float>(x));
  for (float x : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-40f, 0.625f, -0.625f,
                  0.62499994f, 9.0f, 44.0f, 89.0f, 1e30f, -1e30f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()}) {
    in.push_back(x);
  }
  RecordProperty("worst_ulp", static_cast<int>(ExpectWithinUlp(
                                  UnaryOp::kTanh, LibmTanh, in, 3, true)));
}

TEST(LlvmCodegenTest, Float32TanhIsWithinThreeUlpOfLibmForEveryInput) {
  if (std::getenv("GJ_EXHAUSTIVE") == nullptr) {
    GTEST_SKIP() << "set GJ_EXHAUSTIVE=1 to run over all 2^32 inputs";
  }
  RecordProperty("worst_ulp", static_cast<int>(ExpectWithinUlpForEveryInput(
                                  UnaryOp::kTanh, LibmTanh, 3)));
}

// log, log1p, erf, sin and cos loops (and float64 tanh) are vectorized around
// libmvec's SIMD variants (jit/llvm/libmvec.h), and stay within libmvec's
// documented 4 ulp of the scalar libm functions the eager kernels call.
TEST(LlvmCodegenTest, MathLoopsVectorizeThroughLibmvecWithinFourUlp) {
  auto jit = OrcJit::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto machine = (*jit)->CreateTargetMachine();
  ASSERT_TRUE(machine.ok()) << machine.status();
  llvm::TargetLibraryInfoImpl probe((*machine)->getTargetTriple());
  if (AddLibmvecFunctions(**machine, probe) == 0) {
    GTEST_SKIP() << "no libmvec for this target";
  }
  struct Case {
    UnaryOp op;
    float (*f32)(float);
    double (*f64)(double);
    double lo, hi;
  };
  const Case cases[] = {
      {UnaryOp::kLog, std::log, std::log, 1e-3, 1e4},
      {UnaryOp::kLog1p, std::log1p, std::log1p, -0.9, 50},
      {UnaryOp::kTanh, std::tanh, std::tanh, -12, 12},
      {UnaryOp::kErf, std::erf, std::erf, -5, 5},
      {UnaryOp::kSin, std::sin, std::sin, -40, 40},
      {UnaryOp::kCos, std::cos, std::cos, -40, 40},
  };
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      // float32 tanh is inline (the test above).
      if (c.op == UnaryOp::kTanh && dtype == DType::kFloat32) continue;
      SCOPED_TRACE(absl::StrCat(UnaryOpName(c.op), " ", DTypeName(dtype)));
      Kernel k = Map(dtype, dtype, c.op);
      llvm::LLVMContext context;
      llvm::Module module("libmvec_test", context);
      ASSERT_TRUE(EmitKernel(k, "k", &module).ok());
      ASSERT_TRUE(OptimizeModule(module, **machine).ok());
      std::string ir;
      llvm::raw_string_ostream os(ir);
      module.print(os, nullptr);
      EXPECT_THAT(ir, ::testing::HasSubstr("_ZGV")) << "not vectorized";

      auto fns = Compiler().Compile({&k});
      ASSERT_TRUE(fns.ok()) << fns.status();
      const int64_t n = 20011;
      std::vector<double> xs(n);
      for (int64_t i = 0; i < n; ++i)
        xs[i] = c.lo + (c.hi - c.lo) * i / (n - 1);
      if (dtype == DType::kFloat32) {
        std::vector<float> in(xs.begin(), xs.end()), out(n);
        void* buffers[] = {in.data(), out.data()};
        int64_t size = n;
        (*fns)[0](buffers, &size, 0, n);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_LE(UlpDistance(out[i], c.f32(in[i])), 4)
              << in[i] << ": " << out[i] << " vs " << c.f32(in[i]);
        }
      } else {
        std::vector<double> out(n);
        void* buffers[] = {xs.data(), out.data()};
        int64_t size = n;
        (*fns)[0](buffers, &size, 0, n);
        for (int64_t i = 0; i < n; ++i) {
          const double want = c.f64(xs[i]);
          ASSERT_LE(
              std::abs(out[i] - want),
              4 * std::abs(std::nextafter(want, INFINITY) - want) + 1e-300)
              << xs[i] << ": " << out[i] << " vs " << want;
        }
      }
    }
  }
}

// `k`'s IR after the host's optimization pipeline (for the host CPU), or
// "" after a failed expectation.
std::string OptimizedIr(const Kernel& k) {
  auto jit = OrcJit::Create();
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (!jit.ok()) return "";
  auto machine = (*jit)->CreateTargetMachine();
  EXPECT_TRUE(machine.ok()) << machine.status();
  if (!machine.ok()) return "";
  llvm::LLVMContext context;
  llvm::Module module("optimized", context);
  EXPECT_TRUE(EmitKernel(k, "k", &module).ok());
  EXPECT_TRUE(OptimizeModule(module, **machine).ok());
  std::string ir;
  llvm::raw_string_ostream os(ir);
  module.print(os, nullptr);
  return ir;
}

// An embedding bag: out[b, d] = sum_t emb[ids[b, t], d] / T. Its reduction
// reads along the last outer loop, so it is emitted column by column: the
// rows are read as vectors, no gathers, and an index out of range still
// fails its check.
Kernel EmbeddingBag(int64_t batch, int64_t tokens, int64_t dim, int64_t vocab) {
  Kernel k;
  k.buffers = {{"in0", DType::kInt64, false},
               {"in1", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, E::Const(batch)}, {1, E::Const(dim)}};
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.loops = {{2, E::Const(tokens)}};
  sum.value = ValueExpr::Gather(
      1, DType::kFloat32, E::Var(1),
      ValueExpr::Load(0, DType::kInt64,
                      E::Var(0) * E::Const(tokens) + E::Var(2)),
      E::Const(dim), E::Const(vocab), 0);
  sum.local = 0;
  Stage store;
  store.buffer = 2;
  store.index = E::Var(0) * E::Const(dim) + E::Var(1);
  store.value =
      ValueExpr::Binary(BinaryOp::kDiv, ValueExpr::Local(0, DType::kFloat32),
                        ValueExpr::Const(DType::kFloat32, tokens));
  k.stages = {sum, store};
  k.num_locals = 1;
  k.num_checks = 1;
  return k;
}

TEST(LlvmCodegenTest, ColumnReductionsReadRowsAsVectors) {
  const int64_t batch = 3, tokens = 7, dim = 40, vocab = 50;
  Kernel k = EmbeddingBag(batch, tokens, dim, vocab);
  auto fns = Compiler().Compile({&k});
  ASSERT_TRUE(fns.ok()) << fns.status();
  std::vector<int64_t> ids(batch * tokens);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = (i * 17 + 3) % vocab;
  std::vector<float> emb(vocab * dim);
  for (size_t i = 0; i < emb.size(); ++i) emb[i] = std::sin(0.37 * i);
  std::vector<float> out(batch * dim, -1);
  void* buffers[] = {ids.data(), emb.data(), out.data()};
  EXPECT_EQ((*fns)[0](buffers, nullptr, 0, batch), 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = 0; d < dim; ++d) {
      double sum = 0;
      for (int64_t t = 0; t < tokens; ++t) {
        sum += emb[ids[b * tokens + t] * dim + d];
      }
      EXPECT_FLOAT_EQ(out[b * dim + d], static_cast<float>(sum) / tokens)
          << b << ", " << d;
    }
  }
  // An index out of range: check 0 fails, nothing is read out of bounds.
  ids[5] = vocab;
  EXPECT_EQ((*fns)[0](buffers, nullptr, 0, batch), 1);
  ids[5] = -1;
  EXPECT_EQ((*fns)[0](buffers, nullptr, 0, batch), 1);

  // Vector loads of the rows, no gathers.
  const std::string ir = OptimizedIr(k);
  EXPECT_THAT(ir, ::testing::HasSubstr("load <"));
  EXPECT_THAT(ir, ::testing::Not(::testing::HasSubstr("masked.gather")));
}

// A causal softmax over [heads, 64, 64] as the fused kernel of torch.export's
// attention has it: the mask from the loop indices (key > query is -inf),
// the exp pass storing its values at out[h*4096 + (q*64 + k)], an index
// written the other way round from the load's ((h*4096 + q*64) + k). Its
// loops read and write rows as vectors: no gathers, no scatters (LLVM turned
// the inner sum into an `or` it could not see through, before the emitter
// put every sum in loop order), and it matches a reference.
Kernel CausalSoftmax(int64_t heads, int64_t n) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.outer = {{0, E::Const(heads)}, {1, E::Const(n)}};
  const IndexExpr load_index =
      (E::Var(0) * E::Const(n * n) + E::Var(1) * E::Const(n)) + E::Var(2);
  const IndexExpr store_index =
      E::Var(0) * E::Const(n * n) + (E::Var(1) * E::Const(n) + E::Var(2));
  const ValueExpr masked = ValueExpr::Where(
      ValueExpr::Binary(BinaryOp::kGt, ValueExpr::Index(E::Var(2)),
                        ValueExpr::Index(E::Var(1))),
      ValueExpr::Const(DType::kFloat32, -INFINITY),
      ValueExpr::Load(0, DType::kFloat32, load_index));
  Stage max;
  max.kind = Stage::Kind::kReduce;
  max.combine = CombineOp::kMax;
  max.loops = {{2, E::Const(n)}};
  max.value = masked;
  max.local = 0;
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.loops = {{2, E::Const(n)}};
  sum.value = ValueExpr::Unary(
      UnaryOp::kExp, ValueExpr::Binary(BinaryOp::kSub, masked,
                                       ValueExpr::Local(0, DType::kFloat32)));
  sum.local = 1;
  sum.buffer = 1;
  sum.index = store_index;
  Stage scale;
  scale.loops = {{2, E::Const(n)}};
  scale.buffer = 1;
  scale.index = store_index;
  scale.value = ValueExpr::Binary(
      BinaryOp::kDiv, ValueExpr::Load(1, DType::kFloat32, store_index),
      ValueExpr::Local(1, DType::kFloat32));
  k.stages = {max, sum, scale};
  k.num_locals = 2;
  return k;
}

TEST(LlvmCodegenTest, CausalSoftmaxReadsAndWritesRowsAsVectors) {
  const int64_t heads = 2, n = 64;
  Kernel k = CausalSoftmax(heads, n);
  auto fns = Compiler().Compile({&k});
  ASSERT_TRUE(fns.ok()) << fns.status();
  std::vector<float> in(heads * n * n), out(in.size(), -1);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.37 * i) * 3;
  void* buffers[] = {in.data(), out.data()};
  EXPECT_EQ((*fns)[0](buffers, nullptr, 0, heads), 0);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t q = 0; q < n; ++q) {
      const float* row = &in[(h * n + q) * n];
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j <= q; ++j) max = std::max<double>(max, row[j]);
      for (int64_t j = 0; j <= q; ++j) sum += std::exp(row[j] - max);
      for (int64_t j = 0; j < n; ++j) {
        const double want = j > q ? 0.0 : std::exp(row[j] - max) / sum;
        EXPECT_NEAR(out[(h * n + q) * n + j], want, 1e-6)
            << h << ", " << q << ", " << j;
      }
    }
  }
  const std::string ir = OptimizedIr(k);
  EXPECT_THAT(ir, ::testing::HasSubstr("store <"));
  EXPECT_THAT(ir, ::testing::Not(::testing::HasSubstr("masked.gather")));
  EXPECT_THAT(ir, ::testing::Not(::testing::HasSubstr("masked.scatter")));
}

// sum/max/min over the middle dim of [B, T, D] for each dtype column mode
// takes; max and min propagate NaN.
template <typename T>
void ExpectMiddleReduction(DType dtype, CombineOp combine,
                           const std::vector<T>& in, int64_t b, int64_t t,
                           int64_t d) {
  Kernel k;
  k.buffers = {{"in0", dtype, false}, {"out0", dtype, true}};
  k.outer = {{0, E::Const(b)}, {1, E::Const(d)}};
  Stage reduce;
  reduce.kind = Stage::Kind::kReduce;
  reduce.combine = combine;
  reduce.loops = {{2, E::Const(t)}};
  reduce.value = ValueExpr::Load(
      0, dtype,
      E::Var(0) * E::Const(t * d) + E::Var(2) * E::Const(d) + E::Var(1));
  reduce.local = 0;
  Stage store;
  store.buffer = 1;
  store.index = E::Var(0) * E::Const(d) + E::Var(1);
  store.value = ValueExpr::Local(0, dtype);
  k.stages = {reduce, store};
  k.num_locals = 1;
  auto fns = Compiler().Compile({&k});
  ASSERT_TRUE(fns.ok()) << fns.status();
  std::vector<T> out(b * d);
  void* buffers[] = {const_cast<T*>(in.data()), out.data()};
  (*fns)[0](buffers, nullptr, 0, b);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t j = 0; j < d; ++j) {
      double want = combine == CombineOp::kSum   ? 0
                    : combine == CombineOp::kMax ? -INFINITY
                                                 : INFINITY;
      bool nan = false;
      for (int64_t r = 0; r < t; ++r) {
        const double x = static_cast<double>(in[(i * t + r) * d + j]);
        nan = nan || std::isnan(x);
        want = combine == CombineOp::kSum   ? want + x
               : combine == CombineOp::kMax ? std::max(want, x)
                                            : std::min(want, x);
      }
      const double got = static_cast<double>(out[i * d + j]);
      if (nan) {
        EXPECT_TRUE(std::isnan(got)) << i << ", " << j;
      } else {
        EXPECT_EQ(got, static_cast<double>(static_cast<T>(want)))
            << CombineOpName(combine) << " " << i << ", " << j;
      }
    }
  }
}

// Sum, max and min over t rows of each dtype, NaN and inf among them.
void ExpectMiddleReductionsOfEachDtype(int64_t t) {
  const int64_t b = 2, d = 33;
  std::vector<float> f(b * t * d);
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::cos(1.3 * i) * 10;
  f[4 * d + 5] = NAN;  // column 5 of batch 0
  f[(t + 2) * d + 7] = INFINITY;
  for (CombineOp op : {CombineOp::kSum, CombineOp::kMax, CombineOp::kMin}) {
    ExpectMiddleReduction<float>(DType::kFloat32, op, f, b, t, d);
  }
  std::vector<double> g(f.begin(), f.end());
  ExpectMiddleReduction<double>(DType::kFloat64, CombineOp::kSum, g, b, t, d);
  std::vector<int64_t> l(b * t * d);
  for (size_t i = 0; i < l.size(); ++i)
    l[i] = (int64_t{1} << 40) * (i % 5) - 7 * i;
  for (CombineOp op : {CombineOp::kSum, CombineOp::kMax, CombineOp::kMin}) {
    ExpectMiddleReduction<int64_t>(DType::kInt64, op, l, b, t, d);
  }
  std::vector<int32_t> n(b * t * d);
  for (size_t i = 0; i < n.size(); ++i)
    n[i] = static_cast<int32_t>(i * 7919 % 1000) - 500;
  for (CombineOp op : {CombineOp::kSum, CombineOp::kMax, CombineOp::kMin}) {
    ExpectMiddleReduction<int32_t>(DType::kInt32, op, n, b, t, d);
  }
}

TEST(LlvmCodegenTest, ColumnReductionsMatchAReferenceForEachDtype) {
  // 9 steps: inline in the column loop (a constant window); 21: a loop of
  // column loops.
  for (const int64_t t : {9, 21}) {
    SCOPED_TRACE(absl::StrCat(t, " steps"));
    ExpectMiddleReductionsOfEachDtype(t);
  }
}

// A constant window of at most 16 steps is emitted inline in one column
// loop (each column's value in a register across the window); a longer one
// as a column loop per step of a loop, through the local's array.
TEST(LlvmCodegenTest, ColumnWindowsAreInlineInOneColumnLoop) {
  for (const int64_t t : {4, 16, 17}) {
    SCOPED_TRACE(absl::StrCat(t, " steps"));
    Kernel k;
    k.buffers = {{"in0", DType::kFloat32, false},
                 {"out0", DType::kFloat32, true}};
    k.outer = {{0, E::Const(2)}, {1, E::Const(40)}};
    Stage reduce;
    reduce.kind = Stage::Kind::kReduce;
    reduce.combine = CombineOp::kMax;
    reduce.loops = {{2, E::Const(t)}};
    reduce.value = ValueExpr::Load(
        0, DType::kFloat32,
        E::Var(0) * E::Const(t * 40) + E::Var(2) * E::Const(40) + E::Var(1));
    reduce.local = 0;
    Stage store;
    store.buffer = 1;
    store.index = E::Var(0) * E::Const(40) + E::Var(1);
    store.value = ValueExpr::Local(0, DType::kFloat32);
    k.stages = {reduce, store};
    k.num_locals = 1;
    llvm::LLVMContext context;
    llvm::Module module("m", context);
    ASSERT_TRUE(EmitKernel(k, "k", &module).ok());
    std::string ir;
    llvm::raw_string_ostream os(ir);
    module.print(os, nullptr);
    int maxima = 0;
    for (size_t at = ir.find("@llvm.maximum.f32(float %");
         at != std::string::npos;
         at = ir.find("@llvm.maximum.f32(float %", at + 1)) {
      ++maxima;
    }
    // Inline: a maximum per step (the first one's, of -inf, may fold).
    if (t <= 16) {
      EXPECT_GE(maxima, t - 1) << ir;
    } else {
      EXPECT_EQ(maxima, 1) << ir;
    }
  }
}

// Float-to-int conversion follows runtime/convert.h, not C's UB.
TEST(LlvmCodegenTest, FloatToIntCastMatchesEagerConversion) {
  Kernel k = Map(DType::kFloat32, DType::kInt32, UnaryOp::kAbs);
  // abs keeps the sign-free values; the cast is what is tested.
  auto fns = Compiler().Compile({&k});
  ASSERT_TRUE(fns.ok()) << fns.status();
  std::vector<float> in = {2.7f, 1e20f, std::numeric_limits<float>::quiet_NaN(),
                           3e9f};
  std::vector<int32_t> out(in.size());
  int64_t n = 4;
  void* buffers[] = {in.data(), out.data()};
  (*fns)[0](buffers, &n, 0, n);
  EXPECT_EQ(out[0], 2);
  EXPECT_EQ(out[1], 0);  // INT64_MIN truncated to 32 bits
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], static_cast<int32_t>(int64_t{3000000000}));
}

}  // namespace
}  // namespace guardjit
