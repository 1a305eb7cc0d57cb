#include "jit/llvm/kernel_compiler.h"

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/compile_cache/cache_inspection.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/thread_pool.h"

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

// Without a persistent cache, the kernels one Compile misses compile in a
// group per worker of the pool: one LLVM module, object and dylib each.
// Every kernel still gets its own function, and a group stays loaded while
// the cache keeps any kernel of it.
TEST(KernelCompilerTest, KernelsOfABatchCompileInOneModulePerWorker) {
  auto compiler = KernelCompiler::Create(
      KernelCompiler::kDefaultMaxCachedKernels, /*persistent=*/nullptr,
      std::make_shared<ThreadPool>(2));
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  KernelCompiler& kc = **compiler;
  std::vector<Kernel> kernels;
  for (int i = 0; i < 5; ++i) kernels.push_back(Scale(10.0 + i));
  std::vector<const Kernel*> batch;
  for (const Kernel& k : kernels) batch.push_back(&k);
  std::vector<std::shared_ptr<const ModuleCode>> owners;
  auto fns = kc.Compile(batch, &owners);
  ASSERT_TRUE(fns.ok()) << fns.status();
  EXPECT_EQ(kc.compiled(), 5);
  EXPECT_EQ(kc.live_modules(), 2);
  EXPECT_EQ(owners.size(), 2u);
  for (int i = 0; i < 5; ++i) {
    std::vector<double> in = {1, 2, 3, 4}, out(4);
    void* buffers[] = {in.data(), out.data()};
    (*fns)[i](buffers, nullptr, 0, 4);
    EXPECT_EQ(out[3], 4 * (10.0 + i)) << "kernel " << i;
  }
  // The owners gone, the cache keeps every group; each kernel hits.
  owners.clear();
  EXPECT_EQ(kc.live_modules(), 2);
  auto again = kc.Compile(batch);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *fns);
  EXPECT_EQ(kc.compiled(), 5);

  // Serially (no pool), a batch is one group.
  auto serial = KernelCompiler::Create();
  ASSERT_TRUE(serial.ok()) << serial.status();
  ASSERT_TRUE((*serial)->Compile(batch).ok());
  EXPECT_EQ((*serial)->compiled(), 5);
  EXPECT_EQ((*serial)->live_modules(), 1);
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

// Runs a compiled Scale kernel on {1, 2, 3, 4}.
std::vector<double> RunScale(CompiledKernelFn fn) {
  std::vector<double> in = {1, 2, 3, 4}, out(4);
  void* buffers[] = {in.data(), out.data()};
  fn(buffers, nullptr, 0, 4);
  return out;
}

class PersistentKernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (std::filesystem::temp_directory_path() /
         absl::StrCat(
             "gj_kernel_cache_", ::getpid(), "_",
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // A compiler over the directory: another process's, as far as the cache
  // can tell (nothing in memory is shared).
  std::unique_ptr<KernelCompiler> Compiler(
      const std::string& key = "", std::shared_ptr<ThreadPool> pool = nullptr) {
    CompileCacheOptions options;
    options.dir = dir_;
    options.signing_key = key;
    auto cache = CompileCache::Create(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    auto compiler = KernelCompiler::Create(
        KernelCompiler::kDefaultMaxCachedKernels, *cache, std::move(pool));
    EXPECT_TRUE(compiler.ok()) << compiler.status();
    return *std::move(compiler);
  }
  std::string dir_;
};

// Issue #31: a second compiler over the same directory loads the object
// files the first stored, compiling nothing, and they compute the same.
TEST_F(PersistentKernelCacheTest, ASecondCompilerLoadsInsteadOfCompiling) {
  const Kernel a = Scale(3.0), b = Scale(5.0);
  {
    auto first = Compiler("", std::make_shared<ThreadPool>(2));
    CodeOrigin origin;
    auto fns = first->Compile({&a, &b, &a}, nullptr, {}, &origin);
    ASSERT_TRUE(fns.ok()) << fns.status();
    EXPECT_EQ(first->compiled(), 2);
    EXPECT_EQ(origin.compiled, 2);
    EXPECT_EQ(origin.loaded, 0);
    EXPECT_EQ(first->persistent()->stats().disk_stores, 2);
    EXPECT_EQ(RunScale((*fns)[1])[3], 20.0);
  }
  auto second = Compiler();
  ScopedForbidKernelCompiles forbid;  // a load is not a compile
  CodeOrigin origin;
  std::vector<std::shared_ptr<const ModuleCode>> owners;
  auto fns = second->Compile({&b, &a}, &owners, {}, &origin);
  ASSERT_TRUE(fns.ok()) << fns.status();
  EXPECT_EQ(second->compiled(), 0);
  EXPECT_EQ(second->loaded(), 2);
  EXPECT_EQ(owners.size(), 2u);
  EXPECT_TRUE(origin.all_loaded());
  EXPECT_EQ(origin.loaded, 2);
  EXPECT_EQ(origin.original_pid, ::getpid());
  EXPECT_GT(origin.original_compile_ms, 0);
  EXPECT_EQ(RunScale((*fns)[0]), (std::vector<double>{5, 10, 15, 20}));
  EXPECT_EQ(RunScale((*fns)[1]), (std::vector<double>{3, 6, 9, 12}));
  // Now in memory: reused, not loaded again.
  origin = CodeOrigin();
  ASSERT_TRUE(second->Compile({&a}, &owners, {}, &origin).ok());
  EXPECT_EQ(origin.reused, 1);
  EXPECT_EQ(second->loaded(), 2);
}

// A loaded kernel evicted from memory while a program still runs it, then
// loaded again: each load has its own symbols, so nothing clashes.
TEST_F(PersistentKernelCacheTest, LoadingTheSameObjectTwiceIsFine) {
  const Kernel a = Scale(7.0);
  ASSERT_TRUE(Compiler()->Compile({&a}).ok());
  CompileCacheOptions options;
  options.dir = dir_;
  auto compiler = KernelCompiler::Create(/*max_cached_kernels=*/0,
                                         *CompileCache::Create(options));
  ASSERT_TRUE(compiler.ok());
  std::vector<std::shared_ptr<const ModuleCode>> one, two;
  auto f1 = (*compiler)->Compile({&a}, &one);
  auto f2 = (*compiler)->Compile({&a}, &two);
  ASSERT_TRUE(f1.ok() && f2.ok());
  EXPECT_EQ((*compiler)->loaded(), 2);
  EXPECT_EQ((*compiler)->compiled(), 0);
  EXPECT_EQ((*compiler)->live_modules(), 2);
  EXPECT_EQ(RunScale((*f1)[0])[1], 14.0);
  EXPECT_EQ(RunScale((*f2)[0])[1], 14.0);
}

// A damaged record is refused and the kernel compiled and stored again; a
// record signed under another key is refused too.
TEST_F(PersistentKernelCacheTest, RefusedRecordsAreRecompiled) {
  const Kernel a = Scale(2.5);
  ASSERT_TRUE(Compiler("alpha")->Compile({&a}).ok());
  auto other = Compiler("beta");
  auto fns = other->Compile({&a});
  ASSERT_TRUE(fns.ok());
  EXPECT_EQ(other->compiled(), 1) << "signed under alpha: refused";
  EXPECT_EQ(other->persistent()->stats().rejected, 1);
  EXPECT_EQ(RunScale((*fns)[0])[0], 2.5);
  // The recompile replaced the record: now signed under beta.
  auto again = Compiler("beta");
  ASSERT_TRUE(again->Compile({&a}).ok());
  EXPECT_EQ(again->loaded(), 1);
  auto report = InspectCacheDir(dir_, "beta", true, false);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->verified, 1);
}

// The key names the kernel's source: another kernel never loads this one's
// code (the 1e-12 apart scales print differently).
TEST_F(PersistentKernelCacheTest, OnlyTheSameSourceLoads) {
  const Kernel a = Scale(2.0), b = Scale(2.0 + 1e-12);
  ASSERT_TRUE(Compiler()->Compile({&a}).ok());
  auto second = Compiler();
  ASSERT_TRUE(second->Compile({&b}).ok());
  EXPECT_EQ(second->loaded(), 0);
  EXPECT_EQ(second->compiled(), 1);
}

}  // namespace
}  // namespace guardjit
