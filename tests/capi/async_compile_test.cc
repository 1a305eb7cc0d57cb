// GJ_COMPILE_ASYNC through the C API: the first call of a shape is answered
// by the eager interpreter while the JIT compiles its entry on the context's
// compile thread; later calls hit the compiled entry.

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/capi/capi_test_util.h"

namespace gjtest {
namespace {

using ::testing::HasSubstr;

// f(x) = x * 3 + 1
GraphPtr MulAdd(gj_context* ctx) {
  return BuildGraph(ctx, "mul_add", {"x"},
                    [](gj_graph_builder* b) {
                      gj_arg mul[] = {gj_arg_ref("x"), gj_arg_int(3)};
                      EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                          b, "mul", "aten.mul.Tensor", mul, 2)));
                      gj_arg add[] = {gj_arg_ref("mul"), gj_arg_int(1)};
                      EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                          b, "add", "aten.add.Tensor", add, 2)));
                    },
                    {"add"});
}

gj_function_stats Stats(const gj_function* f) {
  gj_function_stats s;
  gj_function_stats_init(&s);
  EXPECT_TRUE(Ok(gj_function_get_stats(f, &s)));
  return s;
}

void Call(gj_function* f, int64_t n) {
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) - 2;
  HostTensor<float> tx({n}, x);
  HostTensor<float> out({n}, std::vector<float>(n));
  const DLTensor* in[] = {tx.dl()};
  const DLTensor* outs[] = {out.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f, in, 1, outs, 1, nullptr)));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out.buffer()[i], x[i] * 3 + 1);
}

TEST(CapiAsyncCompileThreadsTest, FirstCallEagerThenCompiled) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAdd(ctx.get());
  gj_function_options options;
  gj_function_options_init(&options);
  EXPECT_EQ(options.compile, GJ_COMPILE_SYNC);
  options.compile = GJ_COMPILE_ASYNC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(Ok(gj_function_create(ctx.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  Call(f.get(), 16);
  EXPECT_EQ(Stats(f.get()).eager_while_compiling, 1);
  for (int i = 0; i < 2000 && Stats(f.get()).compiles < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(Stats(f.get()).compiles, 1);
  Call(f.get(), 16);
  const gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.eager_while_compiling, 1);
  char* text = nullptr;
  ASSERT_TRUE(Ok(gj_function_explain(f.get(), &text)));
  EXPECT_THAT(text, HasSubstr("Compile: async, 0 compiling now, 1 calls "
                              "answered eagerly while compiling"));
  EXPECT_THAT(text, HasSubstr("(jit: "));
  gj_string_destroy(text);
}

TEST(CapiAsyncCompileThreadsTest, DestroyContextAndFunctionWhileCompiling) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAdd(ctx.get());
  gj_function_options options;
  gj_function_options_init(&options);
  options.compile = GJ_COMPILE_ASYNC;
  gj_function* raw = nullptr;
  ASSERT_TRUE(Ok(gj_function_create(ctx.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  for (int64_t n : {3, 5, 9, 17}) Call(f.get(), n);
  ctx.reset();  // the function keeps the compile thread alive
  f.reset();    // waits for the compile running, cancels the queued ones
}

TEST(CapiAsyncCompileThreadsTest, UnknownCompileModeIsInvalid) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAdd(ctx.get());
  gj_function_options options;
  gj_function_options_init(&options);
  options.compile = static_cast<gj_compile_mode>(7);
  gj_function* raw = nullptr;
  EXPECT_TRUE(IsError(
      gj_function_create(ctx.get(), graph.get(), &options, &raw),
      GJ_INVALID_ARGUMENT, {"options->compile is 7", "gj_compile_mode"}));
  EXPECT_EQ(raw, nullptr);
}

}  // namespace
}  // namespace gjtest
