// The CUDA C generator: golden files for a few fixed graphs (as for LLVM
// IR; GJ_UPDATE_GOLDEN=1 rewrites them) and the launch mapping it picks.

#include "jit/cuda/cuda_codegen.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "jit/cuda/nvrtc_compiler.h"
#include "tests/jit/cuda/cuda_test_util.h"
#include "tests/jit/jit_test_util.h"
#include "tests/scoped_env.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::Finish;
using testing::Ints;
using Mapping = CudaKernelInfo::Mapping;

// NVRTC compiles `module` to a CUBIN for sm_80 and sm_90, every kernel
// present with its registers counted.
void ExpectNvrtcCompiles(const CudaModuleSource& module) {
  auto nvrtc = NvrtcCompiler::Create();
  ASSERT_TRUE(nvrtc.ok()) << nvrtc.status();
  for (const CudaArch arch : {CudaArch{8, 0}, CudaArch{9, 0}}) {
    CudaCompileRequest request;
    request.source = module.source;
    request.arch = arch;
    auto result = (*nvrtc)->Compile(request);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_FALSE((*result)->ptx) << arch.ToString();
    EXPECT_EQ((*result)->image.substr(0, 4),
              "\x7f"
              "ELF");
    ASSERT_EQ((*result)->kernels.size(), module.kernels.size());
    for (const CudaKernelResources& k : (*result)->kernels) {
      EXPECT_GT(k.registers, 0) << k.name;
    }
  }
}

void ExpectGoldenCuda(const std::string& name, const std::string& actual) {
  testing::ExpectGoldenFile("cuda_" + name + ".cu", actual);
}

TEST(CudaCodegenTest, SoftmaxMapsRowsByLength) {
  GraphBuilder b("softmax");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "sm", "aten._softmax.default",
          {Arg::Ref("x"), Arg::Int(-1), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("sm")}).ok());
  auto graph = Finish(b);
  const Plan plan = testing::PlanOf(*graph, {{4, 64}});
  auto module = testing::RenderPlan(plan);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  // 64-element rows: a warp each.
  EXPECT_EQ(module->kernels[0].mapping, Mapping::kRowPerWarp);
  ExpectGoldenCuda("softmax", module->source);
  ExpectNvrtcCompiles(*module);

  const Plan narrow = testing::PlanOf(*graph, {{4, 16}});
  auto narrow_module = testing::RenderPlan(narrow);
  ASSERT_TRUE(narrow_module.ok()) << narrow_module.status();
  EXPECT_EQ(narrow_module->kernels[0].mapping, Mapping::kRowPerThread);

  const Plan wide = testing::PlanOf(*graph, {{4, 4096}});
  auto wide_module = testing::RenderPlan(wide);
  ASSERT_TRUE(wide_module.ok()) << wide_module.status();
  EXPECT_EQ(wide_module->kernels[0].mapping, Mapping::kRowPerBlock);
  ExpectNvrtcCompiles(*wide_module);
}

TEST(CudaCodegenTest, PointwiseChainIsOneThreadPerElement) {
  GraphBuilder b("pointwise_broadcast");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  AddNode(b, "a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("a"), Arg::Ref("x")});
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("m")});
  AddNode(b, "o", "aten.sub.Scalar", {Arg::Ref("r"), Arg::Float(1.5)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  const Plan plan = testing::PlanOf(*Finish(b), {{4, 8}, {8}});
  auto module = testing::RenderPlan(plan);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  EXPECT_EQ(module->kernels[0].mapping, Mapping::kRowPerThread);
  EXPECT_EQ(module->kernels[0].GridBlocks({}, 1000), 1);
  ExpectGoldenCuda("pointwise_broadcast", module->source);
  ExpectNvrtcCompiles(*module);
}

TEST(CudaCodegenTest, LayerNorm) {
  const testing::ScopedEnv kernels("GJ_LAYER_NORM_STEP", "0");  // lowered
  GraphBuilder b("layer_norm");
  for (const char* x : {"x", "w", "bias"}) {
    ASSERT_TRUE(b.AddPlaceholder(x).ok());
  }
  AddNode(b, "ln", "aten.native_layer_norm.default",
          {Arg::Ref("x"), Ints({16}), Arg::Ref("w"), Arg::Ref("bias"),
           Arg::Float(1e-5)});
  AddNode(b, "y", "getitem", {Arg::Ref("ln"), Arg::Int(0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  const Plan plan = testing::PlanOf(*Finish(b), {{4, 16}, {16}, {16}});
  auto module = testing::RenderPlan(plan);
  ASSERT_TRUE(module.ok()) << module.status();
  ExpectGoldenCuda("layer_norm", module->source);
  ExpectNvrtcCompiles(*module);
}

TEST(CudaCodegenTest, EmbeddingGatherChecksItsIndex) {
  GraphBuilder b("embedding");
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("i").ok());
  AddNode(b, "e", "aten.embedding.default", {Arg::Ref("w"), Arg::Ref("i")});
  AddNode(b, "o", "aten.relu.default", {Arg::Ref("e")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  const Plan plan = testing::PlanOfInputs(
      *Finish(b), {testing::RandomTensor(DType::kFloat32, {10, 8}, 1),
                   testing::RandomTensor(DType::kInt64, {3, 5}, 2, 0, 10)});
  auto module = testing::RenderPlan(plan);
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  EXPECT_TRUE(module->kernels[0].has_fault_flag);
  ExpectGoldenCuda("embedding", module->source);
  ExpectNvrtcCompiles(*module);
}

// out[i0] = in[i0 * stride] * 2 over `rows` rows (loop IR by hand, to
// choose sizes no test could allocate).
Kernel ScaleKernel(IndexExpr rows, IndexExpr stride, int num_size_params) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = num_size_params;
  k.outer = {{0, rows}};
  Stage s;
  s.kind = Stage::Kind::kStore;
  s.value = ValueExpr::Binary(
      BinaryOp::kMul,
      ValueExpr::Load(0, DType::kFloat32, IndexExpr::Var(0) * stride),
      ValueExpr::Const(DType::kFloat32, 2.0));
  s.buffer = 1;
  s.index = IndexExpr::Var(0);
  k.stages = {s};
  return k;
}

bool Index32(const Kernel& k, std::vector<int64_t> bounds = {}) {
  const Kernel* kernels[] = {&k};
  auto module = RenderCudaModule(kernels, {.size_bounds = std::move(bounds)});
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  const bool narrow = module->kernels[0].index32;
  // The source says which it is, for explain and GJ_LOGS=codegen.
  EXPECT_NE(module->source.find(narrow ? "Index math in 32 bits"
                                       : "Index math in 64 bits"),
            std::string::npos);
  EXPECT_EQ(module->source.find("const int i0") != std::string::npos, narrow);
  return narrow;
}

TEST(CudaCodegenTest, StaticSizesBelowTwoToThe31UseIntIndices) {
  EXPECT_TRUE(
      Index32(ScaleKernel(IndexExpr::Const(1000), IndexExpr::Const(4), 0)));
  // The largest offset (rows - 1) * stride decides, not the row count.
  EXPECT_TRUE(Index32(
      ScaleKernel(IndexExpr::Const(int64_t{1} << 28), IndexExpr::Const(7), 0)));
  EXPECT_FALSE(Index32(
      ScaleKernel(IndexExpr::Const(int64_t{1} << 28), IndexExpr::Const(8), 0)));
  EXPECT_FALSE(Index32(
      ScaleKernel(IndexExpr::Const(int64_t{3} << 30), IndexExpr::Const(1), 0)));
  // Within kIndex32Limit's headroom below 2^31: still 64-bit.
  EXPECT_FALSE(Index32(ScaleKernel(IndexExpr::Const((int64_t{1} << 31) - 1000),
                                   IndexExpr::Const(1), 0)));
  // The real graphs of the golden tests are all narrow.
  GraphBuilder b("softmax");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "sm", "aten._softmax.default",
          {Arg::Ref("x"), Arg::Int(-1), Arg::Bool(false)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("sm")}).ok());
  auto module = testing::RenderPlan(testing::PlanOf(*Finish(b), {{4, 64}}));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_TRUE(module->kernels[0].index32);
}

TEST(CudaCodegenTest, SymbolicSizesNeedBoundsForIntIndices) {
  const Kernel k = ScaleKernel(IndexExpr::Size(0), IndexExpr::Size(1), 2);
  EXPECT_FALSE(Index32(k));
  EXPECT_FALSE(Index32(k, {1 << 20}));  // s1 unbounded
  EXPECT_FALSE(Index32(k, {1 << 20, -1}));
  EXPECT_TRUE(Index32(k, {1 << 20, 1 << 10}));
  EXPECT_FALSE(Index32(k, {1 << 20, 1 << 12}));  // 2^32 elements apart
  const Kernel* kernels[] = {&k};
  auto module = RenderCudaModule(kernels, {.size_bounds = {1 << 20, 1 << 10}});
  ASSERT_TRUE(module.ok()) << module.status();
  // The parameters stay long long (the launch ABI); the body narrows them.
  EXPECT_NE(module->source.find("long long s1"), std::string::npos);
  EXPECT_NE(module->source.find("const int s1i = (int)s1;"), std::string::npos);
  EXPECT_NE(module->source.find("b0[(i0 * s1i)]"), std::string::npos)
      << module->source;
  ExpectNvrtcCompiles(*module);
}

TEST(CudaCodegenTest, GatherOffsetsCountTheWholeIndexRange) {
  // out[i0] = table[idx[i0] * stride] for idx in [0, bound).
  auto gather = [](int64_t bound, int64_t stride) {
    Kernel k;
    k.buffers = {{"in0", DType::kInt64, false},
                 {"in1", DType::kFloat32, false},
                 {"out0", DType::kFloat32, true}};
    k.outer = {{0, IndexExpr::Const(16)}};
    k.num_checks = 1;
    Stage s;
    s.value =
        ValueExpr::Gather(1, DType::kFloat32, IndexExpr::Const(0),
                          ValueExpr::Load(0, DType::kInt64, IndexExpr::Var(0)),
                          IndexExpr::Const(stride), IndexExpr::Const(bound), 0);
    s.buffer = 2;
    s.index = IndexExpr::Var(0);
    k.stages = {s};
    return k;
  };
  const Kernel narrow = gather(1000, 64);
  EXPECT_TRUE(Index32(narrow));
  EXPECT_FALSE(Index32(gather(int64_t{1} << 20, int64_t{1} << 12)));
  const Kernel* kernels[] = {&narrow};
  auto module = RenderCudaModule(kernels);
  ASSERT_TRUE(module.ok()) << module.status();
  // The loaded index is compared in 64 bits, narrowed only once in range.
  EXPECT_NE(module->source.find("(unsigned long long)v0 < (unsigned long long)"
                                "1000"),
            std::string::npos)
      << module->source;
  EXPECT_NE(module->source.find("v1 ? b1[0 + (int)v0 * 64]"), std::string::npos)
      << module->source;
  ExpectNvrtcCompiles(*module);
}

// max(V) then sum(exp(W - max)) fuses into one online pass only when W is V
// (a copy of the same expression counts): otherwise the running max would
// not bound the exponentials.
TEST(CudaCodegenTest, OnlineMaxSumNeedsTheSameValue) {
  auto kernel = [](bool same) {
    Kernel k;
    k.buffers = {{"in0", DType::kFloat32, false},
                 {"out0", DType::kFloat32, true}};
    k.outer = {{0, IndexExpr::Const(4)}};
    k.num_locals = 2;
    const IndexExpr at =
        IndexExpr::Var(0) * IndexExpr::Const(64) + IndexExpr::Var(1);
    const std::vector<LoopRange> row = {{1, IndexExpr::Const(64)}};
    auto x = [&] { return ValueExpr::Load(0, DType::kFloat32, at); };
    Stage max;
    max.kind = Stage::Kind::kReduce;
    max.loops = row;
    max.value = x();
    max.local = 0;
    max.combine = CombineOp::kMax;
    const ValueExpr w =
        same ? x()
             : ValueExpr::Binary(BinaryOp::kMul, x(),
                                 ValueExpr::Const(DType::kFloat32, 2.0));
    Stage sum = max;
    sum.value = ValueExpr::Unary(
        UnaryOp::kExp, ValueExpr::Binary(BinaryOp::kSub, w,
                                         ValueExpr::Local(0, DType::kFloat32)));
    sum.local = 1;
    sum.combine = CombineOp::kSum;
    Stage out;
    out.loops = row;
    out.value = ValueExpr::Binary(BinaryOp::kDiv, x(),
                                  ValueExpr::Local(1, DType::kFloat32));
    out.buffer = 1;
    out.index = at;
    k.stages = {max, sum, out};
    return k;
  };
  for (const bool same : {true, false}) {
    const Kernel k = kernel(same);
    const Kernel* kernels[] = {&k};
    auto module = RenderCudaModule(kernels);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_EQ(module->kernels[0].online_softmax_passes, same ? 1 : 0)
        << module->source;
    ExpectNvrtcCompiles(*module);
  }
}

// Pointwise kernels move 16 bytes per access where every buffer is
// contiguous along the last loop and its static extent divides by the width.
TEST(CudaCodegenTest, PointwiseVectorWidthByDtypeAndLayout) {
  GraphBuilder b("vector");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("y").ok());
  AddNode(b, "a", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
  AddNode(b, "o", "aten.relu.default", {Arg::Ref("a")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("o")}).ok());
  auto graph = Finish(b);
  struct Case {
    DType dtype;
    Shape x, y;
    int width;
  };
  for (const Case& c : std::vector<Case>{
           {DType::kFloat32, {4, 8}, {4, 8}, 4},
           {DType::kFloat32, {4, 8}, {8}, 4},     // broadcast row: a vector
           {DType::kFloat32, {4, 8}, {4, 1}, 4},  // broadcast column: scalar
           {DType::kFloat64, {3, 6}, {3, 6}, 2},
           {DType::kFloat16, {2, 16}, {2, 16}, 8},
           {DType::kFloat32, {4, 6}, {4, 6}, 1},  // 6 % 4 != 0
           {DType::kFloat16, {4, 12}, {4, 12}, 1},
       }) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " ", c.x.size(), "-d"));
    auto module =
        testing::RenderPlan(testing::PlanOf(*graph, {c.x, c.y}, c.dtype));
    ASSERT_TRUE(module.ok()) << module.status();
    ASSERT_EQ(module->kernels.size(), 1u);
    EXPECT_EQ(module->kernels[0].vector_width, c.width) << module->source;
    EXPECT_EQ(module->source.find("gj_vload<") != std::string::npos,
              c.width > 1);
    if (c.width > 1) {
      // Rows count vectors; the misaligned path strides over them.
      EXPECT_EQ(module->kernels[0].rows.Evaluate({}),
                c.x[0] * c.x[1] / c.width);
      ExpectNvrtcCompiles(*module);
    }
  }
  // A reduction has no vector path; nor a transposed read.
  GraphBuilder t("transposed");
  ASSERT_TRUE(t.AddPlaceholder("x").ok());
  AddNode(t, "p", "aten.permute.default", {Arg::Ref("x"), Ints({1, 0})});
  AddNode(t, "o", "aten.mul.Tensor", {Arg::Ref("p"), Arg::Float(2.0)});
  ASSERT_TRUE(t.SetOutputs({Arg::Ref("o")}).ok());
  auto transposed = testing::RenderPlan(testing::PlanOf(*Finish(t), {{8, 8}}));
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  EXPECT_EQ(transposed->kernels[0].vector_width, 1) << transposed->source;
}

TEST(CudaCodegenTest, RejectsBadBlockSizes) {
  for (int threads : {0, 16, 48, 2048}) {
    auto module = RenderCudaModule({}, {.block_threads = threads});
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument)
        << threads;
  }
}

}  // namespace
}  // namespace guardjit
