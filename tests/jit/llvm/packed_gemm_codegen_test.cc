// The packed product's code generator (jit/llvm/packed_gemm_codegen.h)
// driven directly: what it refuses, the function it adds (its name and
// CompiledKernelFn signature), which code a shape needs (masked column tails
// only where n has a partial panel, an alpha scale only where alpha != 1,
// multiply-adds), the code linked through OrcJit against a reference
// product panel range by panel range, and the host vector target.

#include "jit/llvm/packed_gemm_codegen.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/llvm/llvm_optimize.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "runtime/program/kernel_module.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

PackedGemm Product(int64_t m, int64_t n, int64_t k) {
  PackedGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.a_col_stride = 1;
  g.vector_width = 4;
  g.panel_width = 8;
  g.tile_rows = 3;
  g.k_block = k;
  return g;
}

Kernel PackedKernel(const PackedGemm& g) {
  Kernel kernel;
  kernel.packed_gemm = g;
  kernel.buffers = {{"a", DType::kFloat32, false},
                    {"b", DType::kFloat32, false},
                    {"c", DType::kFloat32, true}};
  kernel.outer = {{0, IndexExpr::Const(g.panels())}};
  return kernel;
}

struct Counts {
  int masked_loads = 0;
  int masked_stores = 0;
  int fmuladds = 0;
  int fmuls = 0;
  bool tail_block = false;
};

Counts Count(const llvm::Function& fn) {
  Counts c;
  for (const llvm::BasicBlock& block : fn) {
    if (block.getName().starts_with("tail_panel")) c.tail_block = true;
    for (const llvm::Instruction& inst : block) {
      if (inst.getOpcode() == llvm::Instruction::FMul) ++c.fmuls;
      const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      if (call == nullptr) continue;
      switch (call->getIntrinsicID()) {
        case llvm::Intrinsic::masked_load:
          ++c.masked_loads;
          break;
        case llvm::Intrinsic::masked_store:
          ++c.masked_stores;
          break;
        case llvm::Intrinsic::fmuladd:
          ++c.fmuladds;
          break;
        default:
          break;
      }
    }
  }
  return c;
}

TEST(PackedGemmCodegenTest, RefusesKernelsThatAreNotPackedProducts) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  Kernel plain;
  plain.buffers = {{"a", DType::kFloat32, false}};
  const absl::Status status = EmitPackedGemm(plain, "f", &module);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "EmitPackedGemm: not a packed product");
  EXPECT_EQ(module.getFunction("f"), nullptr);
}

TEST(PackedGemmCodegenTest, RefusesMalformedProducts) {
  const PackedGemm good = Product(5, 10, 6);
  std::vector<std::pair<std::string, PackedGemm>> cases;
  auto add = [&](const std::string& what, auto change) {
    PackedGemm g = good;
    change(g);
    cases.emplace_back(what, g);
  };
  add("m 0", [](PackedGemm& g) { g.m = 0; });
  add("n 0", [](PackedGemm& g) { g.n = 0; });
  add("k 0", [](PackedGemm& g) { g.k = 0; });
  add("vector width 0", [](PackedGemm& g) { g.vector_width = 0; });
  add("panel narrower than a vector", [](PackedGemm& g) {
    g.vector_width = 8;
    g.panel_width = 4;
  });
  add("panel not whole vectors", [](PackedGemm& g) { g.panel_width = 6; });
  add("tile rows 0", [](PackedGemm& g) { g.tile_rows = 0; });
  add("k block 0", [](PackedGemm& g) { g.k_block = 0; });
  add("k block past k", [](PackedGemm& g) { g.k_block = 7; });
  for (const auto& [what, g] : cases) {
    SCOPED_TRACE(what);
    llvm::LLVMContext context;
    llvm::Module module("m", context);
    const absl::Status status =
        EmitPackedGemm(PackedKernel(g), "gemm", &module);
    EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(status.message()),
                StartsWith("malformed packed product: "));
    EXPECT_THAT(status.message(), HasSubstr(g.ToString()));
    EXPECT_EQ(module.getFunction("gemm"), nullptr);
  }
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  EXPECT_TRUE(EmitPackedGemm(PackedKernel(good), "gemm", &module).ok());
}

TEST(PackedGemmCodegenTest, AddsAKernelFunctionOfTheCompiledKernelSignature) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  ASSERT_TRUE(
      EmitPackedGemm(PackedKernel(Product(5, 16, 6)), "gj_gemm", &module).ok());
  const llvm::Function* fn = module.getFunction("gj_gemm");
  ASSERT_NE(fn, nullptr);
  EXPECT_FALSE(fn->isDeclaration());
  EXPECT_EQ(fn->getLinkage(), llvm::Function::ExternalLinkage);
  EXPECT_TRUE(fn->hasFnAttribute(llvm::Attribute::NoUnwind));
  // int64_t (void* const* buffers, const int64_t* sizes, int64_t begin,
  //          int64_t end)
  const llvm::FunctionType* type = fn->getFunctionType();
  EXPECT_TRUE(type->getReturnType()->isIntegerTy(64));
  ASSERT_EQ(type->getNumParams(), 4u);
  EXPECT_TRUE(type->getParamType(0)->isPointerTy());
  EXPECT_TRUE(type->getParamType(1)->isPointerTy());
  EXPECT_TRUE(type->getParamType(2)->isIntegerTy(64));
  EXPECT_TRUE(type->getParamType(3)->isIntegerTy(64));
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_FALSE(llvm::verifyModule(module, &os)) << os.str();
  // A second product in the same module under another name.
  ASSERT_TRUE(
      EmitPackedGemm(PackedKernel(Product(2, 3, 4)), "gj_gemm2", &module).ok());
  EXPECT_NE(module.getFunction("gj_gemm2"), nullptr);
  EXPECT_FALSE(llvm::verifyModule(module, &os)) << os.str();
}

TEST(PackedGemmCodegenTest, MasksOnlyPartialPanelsAndScalesOnlyForAlpha) {
  struct Case {
    int64_t n;
    double alpha;
    bool tail;
    bool scaled;
  };
  for (const Case& c :
       {Case{16, 1.0, false, false}, Case{13, 1.0, true, false},
        Case{16, 0.5, false, true}, Case{3, -2.0, true, true}}) {
    SCOPED_TRACE(absl::StrCat("n ", c.n, " alpha ", c.alpha));
    PackedGemm g = Product(7, c.n, 6);
    g.alpha = c.alpha;
    llvm::LLVMContext context;
    llvm::Module module("m", context);
    ASSERT_TRUE(EmitPackedGemm(PackedKernel(g), "f", &module).ok());
    const Counts counts = Count(*module.getFunction("f"));
    EXPECT_EQ(counts.tail_block, c.tail);
    EXPECT_EQ(counts.masked_loads > 0, c.tail);
    EXPECT_EQ(counts.masked_stores > 0, c.tail);
    EXPECT_EQ(counts.fmuls > 0, c.scaled);
    EXPECT_GT(counts.fmuladds, 0);
  }
}

// Compiles the product's module into a JIT and returns the function, keeping
// what it needs alive.
class Linked {
 public:
  absl::Status Link(const PackedGemm& g) {
    auto jit = OrcJit::Create();
    if (!jit.ok()) return jit.status();
    jit_ = *std::move(jit);
    auto machine = jit_->CreateTargetMachine();
    if (!machine.ok()) return machine.status();
    llvm::LLVMContext context;
    llvm::Module module("packed", context);
    absl::Status emitted =
        EmitPackedGemm(PackedKernel(g), "gj_packed", &module);
    if (!emitted.ok()) return emitted;
    absl::Status optimized = OptimizeModule(module, **machine);
    if (!optimized.ok()) return optimized;
    auto object = jit_->CompileToObject(module, **machine);
    if (!object.ok()) return object.status();
    auto dylib = jit_->CreateDylib();
    if (!dylib.ok()) return dylib.status();
    absl::Status added = jit_->AddObject(*dylib, *std::move(object));
    if (!added.ok()) return added;
    auto address = jit_->Lookup(*dylib, "gj_packed");
    if (!address.ok()) return address.status();
    fn = reinterpret_cast<HostKernelFn>(*address);
    return absl::OkStatus();
  }
  HostKernelFn fn = nullptr;

 private:
  std::unique_ptr<OrcJit> jit_;
};

// 64-byte aligned floats (the packed panels' loads are aligned).
struct Aligned {
  explicit Aligned(size_t n)
      : data(static_cast<float*>(
            std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))) {}
  ~Aligned() { std::free(data); }
  float* data;
};

TEST(PackedGemmCodegenTest, LinkedCodeComputesAlphaTimesAB) {
  // Row tail (10 = 3 tiles of 3 + 1), column tail (19 = 2 panels of 8 + 3),
  // three k blocks (7 + 7 + 3), a strided a, alpha -0.5.
  PackedGemm g = Product(10, 19, 17);
  g.lda = 20;
  g.k_block = 7;
  g.alpha = -0.5;
  Linked linked;
  const absl::Status status = linked.Link(g);
  ASSERT_TRUE(status.ok()) << status;
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> a(static_cast<size_t>(g.m * g.lda));
  for (float& x : a) x = value(rng);
  std::vector<float> b(static_cast<size_t>(g.k * g.n));  // [k, n]
  for (float& x : b) x = value(rng);
  // Panel p, row kk: the panel's columns of b's row kk, zero past n.
  const int64_t pw = g.panel_width;
  Aligned packed(static_cast<size_t>(g.panels() * g.k * pw));
  for (int64_t p = 0; p < g.panels(); ++p) {
    for (int64_t kk = 0; kk < g.k; ++kk) {
      for (int64_t j = 0; j < pw; ++j) {
        const int64_t col = p * pw + j;
        packed.data[(p * g.k + kk) * pw + j] =
            col < g.n ? b[kk * g.n + col] : 0.0f;
      }
    }
  }
  std::vector<float> c(static_cast<size_t>(g.m * g.n), NAN);
  void* const buffers[3] = {a.data(), packed.data, c.data()};
  auto reference = [&](int64_t i, int64_t j) {
    double sum = 0;
    for (int64_t kk = 0; kk < g.k; ++kk) {
      sum += static_cast<double>(a[i * g.lda + kk]) * b[kk * g.n + j];
    }
    return g.alpha * sum;
  };
  // Panel 1 alone: only its columns are written.
  EXPECT_EQ(linked.fn(buffers, nullptr, 1, 2), 0);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      const float got = c[i * g.n + j];
      if (j >= pw && j < 2 * pw) {
        ASSERT_NEAR(got, reference(i, j), 1e-4) << i << ", " << j;
      } else {
        ASSERT_TRUE(std::isnan(got)) << i << ", " << j;
      }
    }
  }
  // Then panels 0 and 2 (the partial one): all of c.
  EXPECT_EQ(linked.fn(buffers, nullptr, 0, 1), 0);
  EXPECT_EQ(linked.fn(buffers, nullptr, 2, 3), 0);
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      ASSERT_NEAR(c[i * g.n + j], reference(i, j), 1e-4) << i << ", " << j;
    }
  }
  // An empty range writes nothing.
  std::vector<float> untouched(static_cast<size_t>(g.m * g.n), NAN);
  void* const none[3] = {a.data(), packed.data, untouched.data()};
  EXPECT_EQ(linked.fn(none, nullptr, 2, 2), 0);
  for (float v : untouched) ASSERT_TRUE(std::isnan(v));
}

TEST(HostVectorTargetTest, FollowsTheHostsFeatures) {
  const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto has = [&](const char* f) {
    auto it = features.find(f);
    return it != features.end() && it->second;
  };
  const VectorTarget target = HostVectorTarget();
  if (has("avx512f")) {
    EXPECT_EQ(target.width, 16);
    EXPECT_EQ(target.registers, 32);
  } else if (has("avx")) {
    EXPECT_EQ(target.width, 8);
    EXPECT_EQ(target.registers, 16);
  } else {
    EXPECT_EQ(target.width, 4);
    EXPECT_EQ(target.registers, 16);
  }
  const VectorTarget again = HostVectorTarget();
  EXPECT_EQ(again.width, target.width);
  EXPECT_EQ(again.registers, target.registers);
  const VectorTarget defaults;
  EXPECT_EQ(defaults.width, 4);
  EXPECT_EQ(defaults.registers, 16);
}

}  // namespace
}  // namespace guardjit
