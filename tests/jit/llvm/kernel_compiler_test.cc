#include "jit/llvm/kernel_compiler.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// out[i] = in[i] * scale over 4 elements.
Kernel Scale(double scale) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  k.outer = {{0, IndexExpr::Const(4)}};
  Stage store;
  store.buffer = 1;
  store.index = IndexExpr::Var(0);
  store.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat64, IndexExpr::Var(0)),
      ValueExpr::Const(DType::kFloat64, scale));
  k.stages = {store};
  return k;
}

TEST(KernelCompilerTest, IdenticalKernelsCompileOnceDifferentOnesDoNot) {
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const Kernel a = Scale(2.0);
  const Kernel a_again = Scale(2.0);
  const Kernel b = Scale(2.0 + 1e-12);
  // Two copies of one kernel in one batch compile once.
  auto first = (*compiler)->Compile({&a, &a_again});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)[0], (*first)[1]);
  EXPECT_EQ((*compiler)->compiled(), 1);
  auto second = (*compiler)->Compile({&a_again, &b});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)[0], (*first)[0]);
  EXPECT_NE((*second)[1], (*first)[0]);
  EXPECT_EQ((*compiler)->compiled(), 2);
  EXPECT_EQ((*compiler)->cache_hits(), 2);
  std::vector<double> in = {1, 2, 3, 4}, out(4);
  void* buffers[] = {in.data(), out.data()};
  (*second)[1](buffers, nullptr, 0, 4);
  EXPECT_EQ(out[3], 4 * (2.0 + 1e-12));
  EXPECT_NE((*compiler)->target().find("x86_64"), std::string::npos);
}

// Issue #19 item 4: code of graphs whose functions are gone used to stay
// loaded until the context went away.
TEST(KernelCompilerTest, CodeIsFreedWithItsLastOwnerAndTheCacheIsCapped) {
  auto compiler = KernelCompiler::Create(/*max_cached_kernels=*/4);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  KernelCompiler& kc = **compiler;
  std::vector<Kernel> kernels;
  for (int i = 0; i < 10; ++i) kernels.push_back(Scale(3.0 + i));
  std::vector<std::vector<std::shared_ptr<const ModuleCode>>> owners(10);
  std::vector<CompiledKernelFn> fns;
  for (int i = 0; i < 10; ++i) {
    auto fn = kc.Compile({&kernels[i]}, &owners[i]);
    ASSERT_TRUE(fn.ok()) << fn.status();
    ASSERT_EQ(owners[i].size(), 1u);
    fns.push_back((*fn)[0]);
  }
  EXPECT_EQ(kc.live_modules(), 10);   // every program still owns its code
  EXPECT_EQ(kc.cached_kernels(), 4);  // the 4 most recent
  // Evicted code still runs for its owners.
  std::vector<double> in = {1, 2, 3, 4}, out(4);
  void* buffers[] = {in.data(), out.data()};
  fns[0](buffers, nullptr, 0, 4);
  EXPECT_EQ(out[3], 12.0);
  // Owners gone: only what the cache keeps stays loaded.
  owners.clear();
  EXPECT_EQ(kc.live_modules(), 4);
  // A recent kernel hits the cache; an evicted one compiles again.
  const int compiled = kc.compiled();
  std::vector<std::shared_ptr<const ModuleCode>> again;
  ASSERT_TRUE(kc.Compile({&kernels[9]}, &again).ok());
  EXPECT_EQ(kc.compiled(), compiled);
  ASSERT_TRUE(kc.Compile({&kernels[0]}, &again).ok());
  EXPECT_EQ(kc.compiled(), compiled + 1);
  EXPECT_EQ(again.size(), 2u);
  again.clear();
  EXPECT_EQ(kc.live_modules(), 4);
  EXPECT_EQ(kc.cached_kernels(), 4);
}

TEST(KernelCompilerTest, NoCacheFreesCodeAsSoonAsItsOwnersGo) {
  auto compiler = KernelCompiler::Create(/*max_cached_kernels=*/0);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const Kernel k = Scale(5.0);
  {
    std::vector<std::shared_ptr<const ModuleCode>> owners;
    ASSERT_TRUE((*compiler)->Compile({&k}, &owners).ok());
    EXPECT_EQ((*compiler)->live_modules(), 1);
  }
  EXPECT_EQ((*compiler)->live_modules(), 0);
  EXPECT_EQ((*compiler)->cached_kernels(), 0);
  EXPECT_EQ(KernelCompiler::Create(-1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace guardjit
