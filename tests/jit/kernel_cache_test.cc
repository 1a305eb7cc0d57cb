#include "jit/kernel_cache.h"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/function.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "jit/llvm/llvm_backend.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;
using testing::MakeTensor;
using testing::OpGraph;
using testing::ToDoubles;

using IntCache = KernelCache<std::shared_ptr<const int>>;

KernelCacheKey Key(const std::string& source) {
  return KernelCacheKey::Make("test", "cpu", "", source);
}

std::shared_ptr<const int> Int(int v) { return std::make_shared<const int>(v); }

TEST(KernelCacheTest, EvictsTheLeastRecentlyUsedPastItsCapacity) {
  IntCache cache(2);
  std::weak_ptr<const int> b;
  {
    auto value = Int(2);
    b = value;
    cache.Insert(Key("a"), Int(1));
    cache.Insert(Key("b"), std::move(value));
  }
  ASSERT_TRUE(cache.Lookup(Key("a")).has_value());  // a is now the newest
  // A value a program still holds survives its eviction.
  const std::shared_ptr<const int> c = Int(3);
  cache.Insert(Key("c"), c);
  EXPECT_FALSE(cache.Lookup(Key("b")).has_value());
  EXPECT_TRUE(b.expired());  // released with its eviction: nobody held it
  cache.Insert(Key("d"), Int(4));
  cache.Insert(Key("e"), Int(5));
  EXPECT_FALSE(cache.Lookup(Key("c")).has_value());
  EXPECT_EQ(*c, 3);
  EXPECT_EQ(c.use_count(), 1);
  const KernelCacheStats stats = cache.stats();
  EXPECT_EQ(stats.compiles, 5);
  EXPECT_EQ(stats.evictions, 3);
  EXPECT_EQ(stats.entries, 2);
  EXPECT_EQ(stats.hits, 1);
  // A key already cached keeps its value and is not counted again.
  cache.Insert(Key("e"), Int(50));
  EXPECT_EQ(**cache.Lookup(Key("e")), 5);
  EXPECT_EQ(cache.stats().compiles, 5);

  IntCache none(0);
  none.Insert(Key("a"), Int(1));
  EXPECT_FALSE(none.Lookup(Key("a")).has_value());
  EXPECT_EQ(none.stats().evictions, 1);
}

// The hash only picks the bucket: another source with the same hash (and
// the same source under another backend, target or options) is a miss.
TEST(KernelCacheTest, KeysCompareTheWholeSourceAndEveryField) {
  IntCache cache(8);
  KernelCacheKey a = Key("kernel a");
  KernelCacheKey collides = Key("kernel b");
  collides.source_hash = a.source_hash;
  cache.Insert(a, Int(1));
  EXPECT_FALSE(cache.Lookup(collides).has_value());
  cache.Insert(collides, Int(2));
  EXPECT_EQ(**cache.Lookup(a), 1);
  EXPECT_EQ(**cache.Lookup(collides), 2);
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("other", "cpu", "", "kernel a")));
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("test", "gpu", "", "kernel a")));
  EXPECT_FALSE(
      cache.Lookup(KernelCacheKey::Make("test", "cpu", "-O0", "kernel a")));
}

// Two threads missing one key compile it once: the second waits for the
// first's compile and takes its value as a hit.
TEST(KernelCacheTest, ConcurrentMissesOfOneKeyCompileOnce) {
  IntCache cache(8);
  std::atomic<int> compiles{0};
  std::promise<void> started;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto slow_compile = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    if (compiles.fetch_add(1) == 0) {
      started.set_value();
      released.wait();
    }
    return Int(7);
  };
  absl::StatusOr<std::shared_ptr<const int>> first, second;
  std::thread t1(
      [&] { first = cache.GetOrCompile(Key("k"), "k", slow_compile); });
  started.get_future().wait();  // t1 is compiling
  std::thread t2(
      [&] { second = cache.GetOrCompile(Key("k"), "k", slow_compile); });
  // t2 is waiting for t1's compile (it cannot have compiled: compiles is 1).
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(compiles.load(), 1);
  release.set_value();
  t1.join();
  t2.join();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(cache.stats().compiles, 1);
  EXPECT_EQ(cache.stats().hits, 1);
}

TEST(KernelCacheTest, AFailedCompileIsNotCached) {
  IntCache cache(8);
  auto fails = []() -> absl::StatusOr<std::shared_ptr<const int>> {
    return absl::InternalError("no");
  };
  EXPECT_EQ(cache.GetOrCompile(Key("k"), "k", fails).status().code(),
            absl::StatusCode::kInternal);
  auto works = []() -> absl::StatusOr<std::shared_ptr<const int>> {
    return Int(1);
  };
  auto value = cache.GetOrCompile(Key("k"), "k", works);
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(cache.stats().compiles, 1);
}

TEST(KernelCacheTest, ForbiddenCompilesFailMissesAndServeHits) {
  IntCache cache(8);
  int compiles = 0;
  auto compile = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    ++compiles;
    return Int(1);
  };
  ASSERT_TRUE(cache.GetOrCompile(Key("warm"), "warm", compile).ok());
  {
    ScopedForbidKernelCompiles forbid;
    EXPECT_TRUE(KernelCompilesForbidden());
    EXPECT_TRUE(cache.GetOrCompile(Key("warm"), "warm", compile).ok());
    absl::StatusOr<std::shared_ptr<const int>> cold = cache.GetOrCompile(
        KernelCacheKey::Make("llvm", "x86_64-test", "", "cold"), "fused_0",
        compile);
    EXPECT_EQ(cold.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(IsKernelCacheMissError(cold.status()));
    EXPECT_THAT(cold.status().message(),
                HasSubstr("kernel cache miss for 'fused_0' on "
                          "llvm:x86_64-test with GJ_ASSERT_NO_COMPILE set"));
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_FALSE(KernelCompilesForbidden());
  EXPECT_FALSE(IsKernelCacheMissError(absl::FailedPreconditionError("x")));
}

// out[i] = in[i] * 2 over 4 doubles.
Kernel Double() {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat64, false},
               {"out0", DType::kFloat64, true}};
  k.outer = {{0, IndexExpr::Const(4)}};
  Stage store;
  store.buffer = 1;
  store.index = IndexExpr::Var(0);
  store.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat64, IndexExpr::Var(0)),
      ValueExpr::Const(DType::kFloat64, 2.0));
  k.stages = {store};
  return k;
}

// The LLVM backend's module: host functions to call directly, and Launch,
// which runs a whole kernel on the calling thread.
TEST(LlvmKernelBackendTest, ModulesExposeHostFunctionsAndLaunch) {
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  LlvmKernelBackend backend(
      std::shared_ptr<KernelCompiler>(*std::move(compiler)));
  EXPECT_TRUE(backend.host_code());
  EXPECT_THAT(backend.name(), HasSubstr("llvm:"));
  const Kernel k = Double();
  const Kernel* kernels[] = {&k};
  auto module = backend.Compile(kernels, {});
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_NE((*module)->host_functions(), nullptr);
  ASSERT_EQ((*module)->host_functions()->size(), 1u);
  double in[4] = {1, 2, 3, 4};
  double out[4] = {};
  void* buffers[] = {in, out};
  auto failed = (*module)->Launch(0, buffers, {}, nullptr, RunContext());
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(*failed, 0);
  EXPECT_EQ(std::vector<double>(out, out + 4),
            (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ(
      (*module)->Launch(1, buffers, {}, nullptr, RunContext()).status().code(),
      absl::StatusCode::kInternal);
  // The same kernel again: a hit, the same function.
  auto again = backend.Compile(kernels, {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->host_functions()->at(0),
            (*module)->host_functions()->at(0));
  EXPECT_EQ(backend.cache_stats().compiles, 1);
  EXPECT_EQ(backend.cache_stats().hits, 1);
}

// ASSERT_COMPILE end to end: a second function over the same graph, in the
// same compiler, runs on cached kernels while compiles are forbidden; a call
// needing a new kernel fails with the miss (the JIT does not quietly run
// the eager plan instead), and compiles once they are allowed again.
TEST(AssertNoCompileTest, AWarmGraphHitsTheCacheAndANewKernelFails) {
  std::shared_ptr<JitCompiler> jit = *JitCompiler::Create();  // not strict
  auto graph = OpGraph("aten.add.Tensor", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
  auto call = [&](Function& f, DType dtype) {
    std::vector<Tensor> inputs = {MakeTensor(dtype, {4}, {1, 2, 3, 4}),
                                  MakeTensor(dtype, {4}, {10, 20, 30, 40})};
    std::vector<InputView> views;
    for (const Tensor& t : inputs) views.push_back(InputView::Of(t));
    return f.Call(inputs, CallSignature{views, AmbientState()});
  };
  auto warm = Function::Create(graph, jit, {});
  ASSERT_TRUE(warm.ok()) << warm.status();
  auto out = call(**warm, DType::kFloat32);
  ASSERT_TRUE(out.ok()) << out.status();
  const int compiled = jit->kernels().compiled();
  EXPECT_EQ(compiled, 1);
  {
    ScopedForbidKernelCompiles forbid;
    auto second = Function::Create(graph, jit, {});
    ASSERT_TRUE(second.ok()) << second.status();
    const int hits = jit->kernels().cache_hits();
    out = call(**second, DType::kFloat32);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(ToDoubles((*out)[0]), (std::vector<double>{11, 22, 33, 44}));
    EXPECT_EQ(jit->kernels().compiled(), compiled);
    EXPECT_EQ(jit->kernels().cache_hits(), hits + 1);

    out = call(**second, DType::kFloat64);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition)
        << out.status();
    EXPECT_THAT(out.status().message(),
                HasSubstr("kernel cache miss for 'kernel 0 (computing "));
    EXPECT_THAT(out.status().message(),
                HasSubstr("on llvm:" + jit->kernels().target()));
    EXPECT_THAT(out.status().message(),
                HasSubstr("with GJ_ASSERT_NO_COMPILE set"));
    EXPECT_EQ(jit->kernels().compiled(), compiled);
  }
  auto second = Function::Create(graph, jit, {});
  ASSERT_TRUE(second.ok()) << second.status();
  out = call(**second, DType::kFloat64);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(jit->kernels().compiled(), compiled + 1);
}

}  // namespace
}  // namespace guardjit
