// Soak tests (issue #19): many threads, many calls, many graphs, with the
// context's memory checked to stay flat. Short in CI; GJ_SOAK=1 runs the
// long versions (10^6 calls, 2,000 graphs).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::Ok;

bool Long() { return std::getenv("GJ_SOAK") != nullptr; }

gj_memory_stats Memory(const gj_context* context) {
  gj_memory_stats s;
  gj_memory_stats_init(&s);
  EXPECT_TRUE(Ok(gj_context_get_memory_stats(context, &s)));
  return s;
}

// y = sum(relu(x * a + b), dim 1) for x [rows, cols].
GraphPtr Model(gj_context* context, double a, double b) {
  return gjtest::BuildGraph(
      context, "model", {"x"},
      [a, b](gj_graph_builder* g) {
        gj_arg mul[] = {gj_arg_ref("x"), gj_arg_float(a)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(g, "m", "aten.mul.Tensor", mul, 2)));
        gj_arg add[] = {gj_arg_ref("m"), gj_arg_float(b)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(g, "s", "aten.add.Tensor", add, 2)));
        gj_arg relu[] = {gj_arg_ref("s")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(g, "r", "aten.relu.default", relu, 1)));
        const int64_t dims[] = {1};
        gj_arg sum[] = {gj_arg_ref("r"), gj_arg_ints(dims, 1)};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(g, "y", "aten.sum.dim_IntList", sum, 2)));
      },
      {"y"});
}

TEST(SoakTest, SixteenThreadsOfRandomShapesBesideCreateAndDestroy) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = Model(context.get(), 2.0, -1.0);
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  const int calls_per_thread = Long() ? 20000 : 300;
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};
  // Beside the callers: functions of other graphs created, called once and
  // destroyed on the same context.
  std::thread churn([&] {
    for (int i = 0; !done.load(); ++i) {
      GraphPtr g = Model(context.get(), 1.0 + i % 7, 0.5);
      FunctionPtr h = gjtest::MakeFunction(context.get(), g.get());
      HostTensor<float> x({2, 3}, std::vector<float>(6, 1));
      const DLTensor* in[] = {x.dl()};
      DLManagedTensor* out = nullptr;
      if (gj_error* e =
              gj_function_call_alloc(h.get(), in, 1, nullptr, &out, 1)) {
        failures.fetch_add(1);
        gj_error_destroy(e);
      }
      gj_tensor_release(out);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int c = 0; c < calls_per_thread; ++c) {
        const int64_t rows = 1 + rng() % 9, cols = 1 + rng() % 33;
        std::vector<float> values(rows * cols);
        for (size_t i = 0; i < values.size(); ++i) {
          values[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
        }
        HostTensor<float> x({rows, cols}, values);
        HostTensor<float> y({rows}, std::vector<float>(rows, -7));
        const DLTensor* in[] = {x.dl()};
        const DLTensor* out[] = {y.dl()};
        gj_error* e = gj_function_call(f.get(), in, 1, out, 1, nullptr);
        if (e != nullptr) {
          failures.fetch_add(1);
          gj_error_destroy(e);
          continue;
        }
        for (int64_t r = 0; r < rows; ++r) {
          float want = 0;
          for (int64_t k = 0; k < cols; ++k) {
            want += std::max(0.0f, values[r * cols + k] * 2 - 1);
          }
          if (y.buffer()[r] != want) failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  done.store(true);
  churn.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(Memory(context.get()).bytes_in_use, 0);
}

TEST(SoakTest, RepeatedCallsKeepMemoryFlat) {
  gjtest::ContextPtr context = gjtest::MakeContext();
  GraphPtr graph = Model(context.get(), 3.0, 0.25);
  FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
  const int calls = Long() ? 1000000 : 20000;
  HostTensor<float> x({64, 256}, std::vector<float>(64 * 256, 0.5f));
  const DLTensor* in[] = {x.dl()};
  gj_memory_stats warm{};
  for (int i = 0; i < calls; ++i) {
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, &out, 1)));
    gj_tensor_release(out);
    if (i == 100) warm = Memory(context.get());
  }
  const gj_memory_stats end = Memory(context.get());
  EXPECT_EQ(end.bytes_in_use, 0);
  EXPECT_EQ(end.system_allocations, warm.system_allocations);
  EXPECT_EQ(end.peak_bytes_in_use, warm.peak_bytes_in_use);
  EXPECT_EQ(end.compiled_modules, warm.compiled_modules);
}

TEST(SoakTest, ManyGraphsReturnToTheKernelCacheOnceDestroyed) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.max_cached_kernels = 16;
  gj_context* raw = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options, &raw)));
  gjtest::ContextPtr context(raw);
  const int graphs = Long() ? 2000 : 120;
  HostTensor<float> x({4, 8}, std::vector<float>(32, 1));
  const DLTensor* in[] = {x.dl()};
  for (int g = 0; g < graphs; ++g) {
    GraphPtr graph = Model(context.get(), 1.0 + g, 0.5);  // distinct kernels
    FunctionPtr f = gjtest::MakeFunction(context.get(), graph.get());
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, &out, 1)));
    gj_tensor_release(out);
  }
  const gj_memory_stats s = Memory(context.get());
  // Only what the kernel cache keeps is still loaded.
  EXPECT_LE(s.cached_kernels, 16);
  EXPECT_LE(s.compiled_modules, 16);
  EXPECT_EQ(s.bytes_in_use, 0);
}

}  // namespace
