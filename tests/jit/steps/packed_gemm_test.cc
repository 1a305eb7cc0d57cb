// Packed products (jit/steps/packed_gemm.h, jit/llvm/packed_gemm_codegen.h;
// the ahead-of-time kernels have packed_gemm_kernels_test.cc): the tile
// choice's invariants, the generated code against a reference
// product on random shapes, strides, alphas, tile shapes and vector widths
// (the tails of rows and columns, several k blocks, any split of panels),
// and linear layers of graphs planned on it against the eager interpreter.
// ctest runs this suite at 1 and 3 threads too (panel parts).

#include "jit/steps/packed_gemm.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/allocator.h"
#include "core/graph_builder.h"
#include "core/host_memory.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "jit/llvm/kernel_compiler.h"
#include "jit/steps/kernel_steps.h"
#include "runtime/eager_interpreter.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::PlanOfInputs;
using testing::RandomTensor;

Arg R(const std::string& name) { return Arg::Ref(name); }
Arg Dims(int64_t a, int64_t b) {
  return Arg::OfList({Arg::Int(a), Arg::Int(b)});
}

int PackedGemms(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) {
    n += s.gemm != nullptr && s.gemm->packed.has_value();
  }
  return n;
}

TEST(ChoosePackedGemmTest, TilesFitTheRegistersAndBlocksFitK) {
  for (const VectorTarget target :
       {VectorTarget{4, 16}, VectorTarget{8, 16}, VectorTarget{16, 32}}) {
    for (int64_t m : {1, 2, 5, 8, 13, 64, 255}) {
      for (int64_t n : {1, 10, 24, 512, 1000}) {
        for (int64_t k : {1, 7, 300, 784, 3072}) {
          SCOPED_TRACE(absl::StrCat("width ", target.width, " m ", m, " n ", n,
                                    " k ", k));
          const PackedGemm g = ChoosePackedGemm(m, n, k, k, 1, 1, target);
          EXPECT_EQ(g.vector_width, target.width);
          EXPECT_EQ(g.panel_width % g.vector_width, 0);
          const int vectors = g.panel_width / g.vector_width;
          EXPECT_LE(g.tile_rows * vectors + vectors + 1, target.registers);
          EXPECT_GE(g.k_block, 1);
          EXPECT_LE(g.k_block, k);
          EXPECT_EQ(g.panels(), (n + g.panel_width - 1) / g.panel_width);
        }
      }
    }
  }
  // A serving batch of 8 on AVX2 takes whole tiles (no row tail): 4x24 or
  // 8x8 or 2x32, never 6 + 2.
  const PackedGemm batch8 = ChoosePackedGemm(8, 512, 784, 784, 1, 1, {8, 16});
  EXPECT_EQ(8 % batch8.tile_rows, 0) << batch8.ToString();
}

// Reference C = alpha * A @ B in double.
std::vector<float> Reference(const PackedGemm& g, const std::vector<float>& a,
                             const std::vector<float>& b, int64_t b_row,
                             int64_t b_col) {
  std::vector<float> c(static_cast<size_t>(g.m * g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < g.k; ++k) {
        sum += static_cast<double>(a[i * g.lda + k * g.a_col_stride]) *
               b[k * b_row + j * b_col];
      }
      c[i * g.n + j] = static_cast<float>(g.alpha * sum);
    }
  }
  return c;
}

// The generated code on random products: each tile shape and vector width
// the planner may pick (wider vectors than the host has are split by LLVM),
// k blocks forced short, a strided or transposed a, B read as [K, N] or
// transposed, alpha != 1, and the panels run in random ranges.
TEST(PackedGemmCodegenTest, RandomProductsMatchAReference) {
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  std::mt19937 rng(1234);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::uniform_real_distribution<float> value(-1, 1);
  for (int trial = 0; trial < 40; ++trial) {
    const VectorTarget target = trial % 3 == 0   ? VectorTarget{4, 16}
                                : trial % 3 == 1 ? VectorTarget{8, 16}
                                                 : VectorTarget{16, 32};
    const int64_t m = uniform(1, trial < 20 ? 9 : 70);
    const int64_t n = uniform(1, 130);
    const int64_t k = uniform(1, 400);
    const bool transposed_a = trial % 4 == 3;
    const int64_t lda = transposed_a ? 1 : k + uniform(0, 3);
    const int64_t a_col = transposed_a ? m + uniform(0, 2) : 1;
    const double alpha = trial % 5 == 4 ? -0.75 : 1;
    PackedGemm g = ChoosePackedGemm(m, n, k, lda, a_col, alpha, target);
    // Any tile height the registers allow, and short k blocks.
    const int vectors = 1 + static_cast<int>(uniform(0, 3));
    g.panel_width = vectors * target.width;
    g.tile_rows = static_cast<int>(
        uniform(1, (target.registers - vectors - 1) / vectors));
    g.k_block = uniform(1, k);
    SCOPED_TRACE(g.ToString());
    const int64_t a_size = transposed_a ? k * a_col : m * lda;
    std::vector<float> a(static_cast<size_t>(a_size));
    for (float& x : a) x = value(rng);
    const bool transposed_b = trial % 2 == 1;
    const int64_t b_row = transposed_b ? 1 : n, b_col = transposed_b ? k : 1;
    std::vector<float> b(static_cast<size_t>(k * n));
    for (float& x : b) x = value(rng);
    const int64_t strides[2] = {b_row, b_col};
    std::vector<float> packed(
        static_cast<size_t>(g.panels() * g.k * g.panel_width) + 16);
    // 64-byte aligned, as the step allocates it.
    float* base = packed.data();
    while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
    PackGemmPanels(g, b.data(), strides, base);
    Kernel kernel;
    kernel.packed_gemm = g;
    kernel.buffers = {{"a", DType::kFloat32, false},
                      {"b", DType::kFloat32, false},
                      {"c", DType::kFloat32, true}};
    kernel.outer = {{0, IndexExpr::Const(g.panels())}};
    auto fns = (*compiler)->Compile({&kernel});
    ASSERT_TRUE(fns.ok()) << fns.status();
    std::vector<float> c(static_cast<size_t>(m * n), NAN);
    void* const params[3] = {a.data(), base, c.data()};
    for (int64_t p = 0; p < g.panels();) {
      const int64_t last = std::min(g.panels(), p + uniform(1, 3));
      EXPECT_EQ((*fns)[0](params, nullptr, p, last), 0);
      p = last;
    }
    const std::vector<float> want = Reference(g, a, b, b_row, b_col);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(c[i], want[i], 1e-5 * (k + 1)) << "at " << i;
    }
  }
}

// PackGemmPanels against packing element by element: row-major weights, a
// linear layer's [n, k] weight read transposed (k blocks of it), the same
// with padded rows, and any other strides; zeros past column n.
TEST(PackGemmPanelsTest, LayoutsMatchPackingElementByElement) {
  std::mt19937 rng(77);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 24; ++trial) {
    PackedGemm g;
    g.n = uniform(1, 150);
    g.k = uniform(1, 300);
    g.vector_width = 16;
    g.panel_width = 16 * static_cast<int>(uniform(1, 3));
    const int64_t pad = uniform(0, 5);
    int64_t strides[2];
    switch (trial % 4) {
      case 0:
        strides[0] = g.n + pad;
        strides[1] = 1;
        break;
      case 1:
        strides[0] = 1;
        strides[1] = g.k;
        break;
      case 2:
        strides[0] = 1;
        strides[1] = g.k + pad + 1;
        break;
      default:
        strides[0] = 2 * g.n + pad;
        strides[1] = 2;
        break;
    }
    SCOPED_TRACE(absl::StrCat("n ", g.n, " k ", g.k, " width ", g.panel_width,
                              " strides ", strides[0], ", ", strides[1]));
    std::vector<float> b(static_cast<size_t>((g.k - 1) * strides[0] +
                                             (g.n - 1) * strides[1] + 1));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 9973);
    const size_t floats = PackedGemmFloats(g);
    ASSERT_EQ(floats, static_cast<size_t>(g.panels() * g.k * g.panel_width));
    std::vector<float> packed(floats, NAN);
    PackGemmPanels(g, b.data(), strides, packed.data());
    for (int64_t p = 0; p < g.panels(); ++p) {
      for (int64_t k = 0; k < g.k; ++k) {
        for (int64_t j = 0; j < g.panel_width; ++j) {
          const int64_t col = p * g.panel_width + j;
          const float want =
              col < g.n ? b[k * strides[0] + col * strides[1]] : 0.0f;
          ASSERT_EQ(packed[(p * g.k + k) * g.panel_width + j], want)
              << "panel " << p << " k " << k << " column " << j;
        }
      }
    }
  }
}

// An allocator that counts what it hands out and gets back.
class CountingAllocator : public Allocator {
 public:
  void* Allocate(size_t nbytes) override {
    ++allocated;
    bytes += nbytes;
    return AllocateHostMemory(nbytes);
  }
  void Free(void* block, size_t nbytes) override {
    ++freed;
    freed_bytes += nbytes;
    FreeHostMemory(block);
  }
  int allocated = 0, freed = 0;
  size_t bytes = 0, freed_bytes = 0;
};

// A packed product's weight comes from the allocator the backend passes (a
// program's arena), and goes back to it with the step.
TEST(PackedGemmStepTest, PackedWeightComesFromTheAllocatorGiven) {
  if (!PackedGemmEnabled()) GTEST_SKIP() << "GJ_PACKED_GEMM=0";
  const auto graph = testing::LinearMlp(96, 64, 8);
  const Plan plan =
      PlanOfInputs(*graph, {RandomTensor(DType::kFloat32, {4, 96}, 3)});
  const PlanStep* step = nullptr;
  for (const PlanStep& s : plan.steps) {
    if (s.gemm != nullptr && s.gemm->packed.has_value()) {
      step = &s;
      break;
    }
  }
  ASSERT_NE(step, nullptr) << plan.ToString();
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  std::vector<const Kernel*> kernels = {&step->gemm->packed->kernel};
  if (HostStepRunsKernel(*step)) kernels.push_back(&step->kernel.kernel);
  auto fns = (*compiler)->Compile(kernels);
  ASSERT_TRUE(fns.ok()) << fns.status();
  auto counting = std::make_shared<CountingAllocator>();
  const size_t want =
      PackedGemmFloats(*step->gemm->packed->kernel.packed_gemm) * sizeof(float);
  {
    auto runner = MakePackedGemmStep(*step, *graph, (*fns)[0],
                                     fns->size() > 1 ? (*fns)[1] : nullptr,
                                     std::make_shared<ThreadPool>(1), counting);
    ASSERT_TRUE(runner.ok()) << runner.status();
    EXPECT_EQ(counting->allocated, 1);
    EXPECT_EQ(counting->bytes, (want + 63) / 64 * 64);
    EXPECT_EQ((*runner)->packed_bytes(), static_cast<int64_t>(counting->bytes));
    EXPECT_EQ(counting->freed, 0);
  }
  EXPECT_EQ(counting->freed, 1);
  EXPECT_EQ(counting->freed_bytes, counting->bytes);
}

class PackedGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PackedGemmEnabled()) GTEST_SKIP() << "GJ_PACKED_GEMM=0";
  }
};

TEST_F(PackedGemmTest, ServingBatchLinearLayersArePacked) {
  const auto graph = testing::LinearMlp(784, 512, 10);
  for (int64_t m : {1, 8, 37}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 784}, 5 + m)};
    const Plan plan = PlanOfInputs(*graph, inputs);
    ASSERT_EQ(PackedGemms(plan), 2) << plan.ToString();
    EXPECT_GE(plan.steps[0].gemm->packed->weight_node, 0);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
    ExpectJitMatchesEager(graph, {testing::NonContiguousCopy(inputs[0])}, 1e-4);
  }
  const std::string described = testing::DescribeCompiled(
      graph, {RandomTensor(DType::kFloat32, {8, 784}, 1)});
  EXPECT_THAT(described,
              HasSubstr("'fc1' (aten.addmm.default) as a packed product ("));
  // fc1's 784 x 512 weight in MiB, fc2's 512 x 10 in KiB.
  EXPECT_THAT(described,
              ::testing::ContainsRegex("weights packed once, [0-9.]+ MiB"));
  EXPECT_THAT(described,
              ::testing::ContainsRegex("weights packed once, [0-9.]+ KiB"));
}

// Rows 1 to 255 are packed, 256 and more stay BLAS; a bare product of a
// constant weight writes its result without an epilogue.
TEST_F(PackedGemmTest, RowCountsAndBareProducts) {
  const auto graph = testing::LinearMlp(96, 320, 48);
  for (int64_t m : {1, 3, 64, 255, 256}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 96}, 10 + m)};
    EXPECT_EQ(PackedGemms(PlanOfInputs(*graph, inputs)), m < 256 ? 2 : 0);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
  GraphBuilder b("logits");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(
      b.AddConstant("w", RandomTensor(DType::kFloat32, {1000, 256}, 7)).ok());
  testing::AddNode(b, "t", "aten.permute.default", {R("w"), Dims(1, 0)});
  testing::AddNode(b, "mm", "aten.mm.default", {R("x"), R("t")});
  ASSERT_TRUE(b.SetOutputs({R("mm")}).ok());
  const auto logits = testing::Finish(b);
  for (int64_t m : {1, 5, 200}) {
    SCOPED_TRACE(absl::StrCat(m, " rows"));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {m, 256}, 20 + m)};
    const Plan plan = PlanOfInputs(*logits, inputs);
    ASSERT_EQ(PackedGemms(plan), 1) << plan.ToString();
    EXPECT_GE(plan.steps[0].gemm->result_param, 0) << plan.ToString();
    ExpectJitMatchesEager(logits, inputs, 1e-4);
  }
}

// alpha and beta, a weight read as [K, N], and a strided a.
TEST_F(PackedGemmTest, AlphaBetaLayoutsAndStridedInputsMatchEager) {
  GraphBuilder b("products");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  ASSERT_TRUE(
      b.AddConstant("w", RandomTensor(DType::kFloat32, {64, 40}, 20, -0.2, 0.2))
          .ok());
  ASSERT_TRUE(
      b.AddConstant("bias", RandomTensor(DType::kFloat32, {40}, 21)).ok());
  ASSERT_TRUE(b.AddNode("a", "aten.addmm.default", {R("bias"), R("x"), R("w")},
                        {{"beta", Arg::Float(0.5)}, {"alpha", Arg::Float(2)}})
                  .ok());
  testing::AddNode(b, "g", "aten.gelu.default", {R("a")});
  testing::AddNode(b, "yt", "aten.permute.default", {R("y"), Dims(1, 0)});
  testing::AddNode(b, "m", "aten.addmm.default", {R("bias"), R("yt"), R("w")});
  testing::AddNode(b, "s", "aten.sigmoid.default", {R("m")});
  ASSERT_TRUE(b.SetOutputs({R("g"), R("s")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {12, 64}, 23),
      RandomTensor(DType::kFloat32, {64, 12}, 24)};
  EXPECT_EQ(PackedGemms(PlanOfInputs(*graph, inputs)), 2);
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

// The same products on the library's ahead-of-time kernels (the default
// where the host has them) and on code generated for their shapes
// (GJ_PACKED_GEMM=llvm): both match eager, and explain says which ran.
TEST_F(PackedGemmTest, AheadOfTimeKernelsAndGeneratedCode) {
  const auto graph = testing::LinearMlp(96, 320, 48);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {37, 96}, 31)};
  const PlanStep* step = nullptr;
  const Plan plan = PlanOfInputs(*graph, inputs);
  for (const PlanStep& s : plan.steps) {
    if (s.gemm != nullptr && s.gemm->packed.has_value()) step = &s;
  }
  ASSERT_NE(step, nullptr) << plan.ToString();
  // Where the environment asks for generated code already, both runs do.
  const bool ahead_of_time =
      AheadOfTimePackedGemm(*step->gemm->packed->kernel.packed_gemm) != nullptr;
  const char* env = std::getenv("GJ_PACKED_GEMM");
  const std::string saved = env != nullptr ? env : "";
  for (const bool generated : {false, true}) {
    SCOPED_TRACE(generated ? "GJ_PACKED_GEMM=llvm"
                           : "as the environment has it");
    if (generated) ::setenv("GJ_PACKED_GEMM", "llvm", 1);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
    EXPECT_THAT(testing::DescribeCompiled(graph, inputs),
                HasSubstr(!generated && ahead_of_time ? "ahead-of-time kernel"
                                                      : "LLVM kernel"));
  }
  if (env != nullptr) {
    ::setenv("GJ_PACKED_GEMM", saved.c_str(), 1);
  } else {
    ::unsetenv("GJ_PACKED_GEMM");
  }
}

// The kernel a packed product runs on is decided when it is planned: an
// executable compiled under GJ_PACKED_GEMM=llvm keeps its generated code,
// runs it and says so after the variable is gone, and one compiled on the
// ahead-of-time kernels keeps them when the variable appears.
TEST_F(PackedGemmTest, KernelChoiceOutlivesTheEnvironment) {
  const auto graph = testing::LinearMlp(96, 320, 48);
  const Tensor x = RandomTensor(DType::kFloat32, {37, 96}, 32);
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok()) << eager.status();
  auto expected = (*eager)->Run({x});
  ASSERT_TRUE(expected.ok()) << expected.status();
  const std::vector<double> want = testing::ToDoubles((*expected)[0]);
  const char* env = std::getenv("GJ_PACKED_GEMM");
  const std::string saved = env != nullptr ? env : "";
  const auto restore = [&] {
    if (env != nullptr) {
      ::setenv("GJ_PACKED_GEMM", saved.c_str(), 1);
    } else {
      ::unsetenv("GJ_PACKED_GEMM");
    }
  };
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  for (const bool generated : {true, false}) {
    SCOPED_TRACE(generated ? "compiled under GJ_PACKED_GEMM=llvm"
                           : "compiled without it");
    auto jit = JitCompiler::Create({.num_threads = 2});
    ASSERT_TRUE(jit.ok()) << jit.status();
    if (generated) {
      ::setenv("GJ_PACKED_GEMM", "llvm", 1);
    } else {
      ::unsetenv("GJ_PACKED_GEMM");
    }
    auto exe = (*jit)->Compile(graph, spec);
    const std::string planned = exe.ok() ? (*exe)->Describe() : "";
    // The other way round from here on.
    if (generated) {
      ::unsetenv("GJ_PACKED_GEMM");
    } else {
      ::setenv("GJ_PACKED_GEMM", "llvm", 1);
    }
    ASSERT_TRUE(exe.ok()) << exe.status();
    const std::string described = (*exe)->Describe();
    EXPECT_EQ(described, planned);
    if (generated) {
      EXPECT_THAT(described, HasSubstr("LLVM kernel"));
    } else if (described.find("ahead-of-time kernel") == std::string::npos) {
      // A host the ahead-of-time kernels do not cover.
      EXPECT_THAT(described, HasSubstr("LLVM kernel"));
      EXPECT_EQ(FindPackedGemmKernel(
                    ChoosePackedGemm(37, 320, 96, 96, 1, 1.0,
                                     HostVectorTarget())),
                nullptr);
    }
    EXPECT_EQ(testing::ConcurrentMismatches(**exe, {x}, want, 2, 4), 0);
  }
  restore();
}

}  // namespace
}  // namespace guardjit
