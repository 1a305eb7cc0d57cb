// Heap allocations on the hot path (issue #13): a cached call into caller
// outputs that the compiled kernels write in place allocates nothing. A
// counting operator new, active only inside the measured region on this
// thread, replaces the global one in this test binary.

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {
thread_local bool counting = false;
thread_local int64_t allocations = 0;
}  // namespace

// Sanitizers replace operator new themselves (and pair every variant with
// their delete): the count runs in the uninstrumented build only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GJ_COUNTING_NEW 0
#else
#define GJ_COUNTING_NEW 1
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (counting) ++allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept {
  return operator new(n, t);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

void* operator new(std::size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::Ok;

// Heap allocations made by `calls` calls of `call` on this thread.
template <typename Call>
int64_t AllocationsIn(int calls, Call call) {
  allocations = 0;
  counting = true;
  for (int i = 0; i < calls; ++i) call();
  counting = false;
  return allocations;
}

TEST(ZeroAllocTest, CachedCallIntoCallerOutputsAllocatesNothing) {
  if (!GJ_COUNTING_NEW) GTEST_SKIP() << "sanitizer build: new is theirs";
  gjtest::ContextPtr context = gjtest::MakeContext();
  // Two inputs, two outputs, each output written by the one fused kernel.
  GraphPtr graph = gjtest::BuildGraph(
      context.get(), "two", {"x", "y"},
      [](gj_graph_builder* b) {
        gj_arg mul[] = {gj_arg_ref("x"), gj_arg_ref("y")};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "p", "aten.mul.Tensor", mul, 2)));
        gj_arg add[] = {gj_arg_ref("p"), gj_arg_int(1)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "q", "aten.add.Tensor", add, 2)));
        gj_arg relu[] = {gj_arg_ref("x")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(b, "r", "aten.relu.default", relu, 1)));
      },
      {"q", "r"});
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  HostTensor<float> x({32, 32}, std::vector<float>(1024, 3));
  HostTensor<float> y({32, 32}, std::vector<float>(1024, 2));
  HostTensor<float> q({32, 32}, std::vector<float>(1024));
  HostTensor<float> r({32, 32}, std::vector<float>(1024));
  const DLTensor* in[] = {x.dl(), y.dl()};
  const DLTensor* out[] = {q.dl(), r.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 2, out, 2, nullptr)));
  ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 2, out, 2, nullptr)));
  bool ok = true;
  const int64_t n = AllocationsIn(1000, [&] {
    gj_error* e = gj_function_call(f.get(), in, 2, out, 2, nullptr);
    ok &= e == nullptr;
    gj_error_destroy(e);
  });
  EXPECT_TRUE(ok);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(q.buffer()[1023], 7.0f);
  EXPECT_EQ(r.buffer()[0], 3.0f);
}

TEST(ZeroAllocTest, TheCounterSeesAllocations) {
  if (!GJ_COUNTING_NEW) GTEST_SKIP() << "sanitizer build: new is theirs";
  // The harness itself: an allocation inside the region is counted.
  const int64_t n = AllocationsIn(3, [] {
    auto* p = new std::vector<int>(10);
    delete p;
  });
  EXPECT_EQ(n, 6);
}

}  // namespace
