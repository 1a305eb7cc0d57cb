// The guard cache seen through the C API: stats, explain, guard dumps, and
// the recompile scenarios of the seed programs that need no symbolic shapes.

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/capi/capi_test_util.h"

namespace gjtest {
namespace {

using ::testing::HasSubstr;

// f(x, y) = x * y + 1
GraphPtr MulAddGraph(gj_context* ctx) {
  return BuildGraph(ctx, "muladd", {"x", "y"},
                    [](gj_graph_builder* b) {
                      gj_arg mul[] = {gj_arg_ref("x"), gj_arg_ref("y")};
                      EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                          b, "mul", "aten.mul.Tensor", mul, 2)));
                      gj_arg add[] = {gj_arg_ref("mul"), gj_arg_float(1.0)};
                      EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                          b, "add", "aten.add.Tensor", add, 2)));
                    },
                    {"add"});
}

FunctionPtr MakeFunction(gj_context* ctx, const gj_graph* graph,
                         gj_dynamic_mode mode, int32_t limit) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.dynamic = mode;
  options.recompile_limit = limit;
  gj_function* f = nullptr;
  EXPECT_TRUE(Ok(gj_function_create(ctx, graph, &options, &f)));
  return FunctionPtr(f);
}

gj_function_stats Stats(const gj_function* f) {
  gj_function_stats s;
  gj_function_stats_init(&s);
  EXPECT_TRUE(Ok(gj_function_get_stats(f, &s)));
  return s;
}

std::string Text(gj_error* (*fn)(const gj_function*, char**),
                 const gj_function* f) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(fn(f, &text)));
  std::string out = text ? text : "";
  gj_string_destroy(text);
  return out;
}

// Runs f on x, y (float32, any layout) and checks x * y + 1 elementwise.
void CallAndCheck(gj_function* f, DLTensor* x, DLTensor* y,
                  const gj_call_options* options = nullptr) {
  const DLTensor* in[] = {x, y};
  DLManagedTensor* out = nullptr;
  ASSERT_TRUE(Ok(gj_function_call_alloc(f, in, 2, options, &out, 1)));
  ManagedPtr owned(out);
  int64_t n = 1;
  for (int d = 0; d < x->ndim; ++d) n *= x->shape[d];
  ASSERT_EQ(Shape(out->dl_tensor),
            std::vector<int64_t>(x->shape, x->shape + x->ndim));
  std::vector<float> got = Floats(out->dl_tensor);
  // Inputs are contiguous in these tests unless strides say otherwise.
  for (int64_t i = 0; i < n; ++i) {
    int64_t xo = i, yo = i;
    if (x->strides != nullptr && x->ndim == 2)
      xo =
          (i / x->shape[1]) * x->strides[0] + (i % x->shape[1]) * x->strides[1];
    float xv = static_cast<const float*>(x->data)[xo];
    float yv = static_cast<const float*>(y->data)[yo];
    EXPECT_FLOAT_EQ(got[i], xv * yv + 1) << "at " << i;
  }
}

std::vector<float> Iota(int n, float start = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = start + i;
  return v;
}

TEST(IntrospectionTest, StatsExplainAndGuardsAfterHitsAndAMiss) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAddGraph(ctx.get());
  FunctionPtr f = MakeFunction(ctx.get(), graph.get(), GJ_DYNAMIC_STATIC, 8);
  HostTensor<float> x3({3}, Iota(3)), y3({3}, Iota(3, 1));
  HostTensor<float> x2({2}, Iota(2)), y2({2}, Iota(2, 5));
  for (int i = 0; i < 3; ++i) CallAndCheck(f.get(), x3.dl(), y3.dl());
  CallAndCheck(f.get(), x2.dl(), y2.dl());
  gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.calls, 4);
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 2);
  EXPECT_EQ(s.compiles, 2);
  EXPECT_EQ(s.recompiles, 1);
  EXPECT_EQ(s.cache_entries, 2);
  EXPECT_GT(s.compile_ms_total, 0.0);

  const std::string explain = Text(gj_function_explain, f.get());
  EXPECT_THAT(explain, HasSubstr("Graph Count: 1"));
  EXPECT_THAT(explain, HasSubstr("Graph Break Count: 0"));
  EXPECT_THAT(explain, HasSubstr("Op Count: 2"));
  EXPECT_THAT(explain, HasSubstr("aten.mul.Tensor"));
  EXPECT_THAT(
      explain,
      HasSubstr(
          "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 2"));
  EXPECT_THAT(explain, HasSubstr("jit: 1 fused kernels, 0 eager nodes"));
  const std::string guards = Text(gj_function_dump_guards, f.get());
  EXPECT_THAT(guards, HasSubstr("TREE_GUARD_MANAGER"));
  EXPECT_THAT(guards, HasSubstr("GuardManager: source=x"));
  EXPECT_THAT(guards, HasSubstr("size=[2], stride=[1]"));
  EXPECT_THAT(guards, HasSubstr("NO_TENSOR_ALIASING: check_no_aliasing(x, y)"));
}

TEST(IntrospectionTest, EachChangeRecompilesOnceWithItsReason) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAddGraph(ctx.get());
  FunctionPtr f = MakeFunction(ctx.get(), graph.get(), GJ_DYNAMIC_AUTO, 8);
  HostTensor<float> x({2, 2}, Iota(4)), y({2, 2}, Iota(4, 1));
  CallAndCheck(f.get(), x.dl(), y.dl());

  int64_t expected = 1;
  auto expect_one_recompile = [&](const char* reason) {
    ++expected;
    gj_function_stats s = Stats(f.get());
    EXPECT_EQ(s.compiles, expected) << reason;
    EXPECT_THAT(Text(gj_function_explain, f.get()), HasSubstr(reason));
  };
  // requires_grad on x.
  gj_call_options grad;
  gj_call_options_init(&grad);
  const uint8_t rg[] = {1, 0};
  grad.requires_grad = rg;
  CallAndCheck(f.get(), x.dl(), y.dl(), &grad);
  CallAndCheck(f.get(), x.dl(), y.dl(), &grad);
  expect_one_recompile(
      "tensor 'x' requires_grad mismatch. expected requires_grad=0");
  // Grad mode off.
  gj_call_options no_grad;
  gj_call_options_init(&no_grad);
  no_grad.grad_mode = 0;
  CallAndCheck(f.get(), x.dl(), y.dl(), &no_grad);
  CallAndCheck(f.get(), x.dl(), y.dl(), &no_grad);
  expect_one_recompile(
      "GLOBAL_STATE changed: grad_mode. expected True, actual False");
  // A transposed x (same shape, strides [1, 2]).
  HostTensor<float> xt({2, 2}, Iota(4), {1, 2});
  CallAndCheck(f.get(), xt.dl(), y.dl());
  CallAndCheck(f.get(), xt.dl(), y.dl());
  expect_one_recompile(
      "tensor 'x' stride mismatch at index 0. expected 2, actual 1");
  // The same buffer twice.
  CallAndCheck(f.get(), x.dl(), x.dl());
  CallAndCheck(f.get(), x.dl(), x.dl());
  expect_one_recompile("Duplicate tensors found: 'x' and 'y'");
  // Rank change of both inputs.
  HostTensor<float> x1({4}, Iota(4)), y1({4}, Iota(4, 1));
  CallAndCheck(f.get(), x1.dl(), y1.dl());
  CallAndCheck(f.get(), x1.dl(), y1.dl());
  expect_one_recompile("tensor 'x' rank mismatch. expected 2, actual 1");
  // dtype change (float64 inputs): checked by value below.
  HostTensor<double> xd({2, 2}, {1, 2, 3, 4}), yd({2, 2}, {2, 2, 2, 2});
  const DLTensor* in[] = {xd.dl(), yd.dl()};
  for (int i = 0; i < 2; ++i) {
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, &out, 1)));
    ManagedPtr owned(out);
    const double* p = static_cast<const double*>(out->dl_tensor.data);
    EXPECT_EQ(std::vector<double>(p, p + 4), (std::vector<double>{3, 5, 7, 9}));
  }
  expect_one_recompile(
      "tensor 'x' dtype mismatch. expected float32, actual float64");
  // Every earlier specialization still hits.
  CallAndCheck(f.get(), x.dl(), y.dl());
  CallAndCheck(f.get(), xt.dl(), y.dl());
  EXPECT_EQ(Stats(f.get()).compiles, expected);
}

TEST(IntrospectionTest, RecompileLimitRunsEagerWithCorrectResults) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAddGraph(ctx.get());
  FunctionPtr f = MakeFunction(ctx.get(), graph.get(), GJ_DYNAMIC_STATIC, 8);
  for (int round = 0; round < 2; ++round) {
    for (int n = 1; n <= 20; ++n) {
      HostTensor<float> x({n}, Iota(n, 0.5f)), y({n}, Iota(n, -3.0f));
      CallAndCheck(f.get(), x.dl(), y.dl());
    }
  }
  gj_function_stats s = Stats(f.get());
  EXPECT_EQ(s.cache_entries, 8);
  EXPECT_EQ(s.compiles, 8);
  EXPECT_EQ(s.fallback_calls, 24);
  EXPECT_EQ(s.hits, 8);
  EXPECT_THAT(Text(gj_function_explain, f.get()), HasSubstr("run-only"));
}

TEST(IntrospectionTest, NullArgumentsAndOldStructs) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAddGraph(ctx.get());
  FunctionPtr f = MakeFunction(ctx.get(), graph.get(), GJ_DYNAMIC_STATIC, 8);
  char* text = reinterpret_cast<char*>(1);
  EXPECT_TRUE(IsError(gj_function_explain(nullptr, &text), GJ_INVALID_ARGUMENT,
                      {"function"}));
  EXPECT_EQ(text, nullptr);
  EXPECT_TRUE(IsError(gj_function_dump_guards(f.get(), nullptr),
                      GJ_INVALID_ARGUMENT, {"out_text"}));
  EXPECT_TRUE(IsError(gj_function_get_stats(f.get(), nullptr),
                      GJ_INVALID_ARGUMENT, {"stats"}));
  // A host built when the struct ended after `misses` gets just those fields.
  HostTensor<float> x({2}, Iota(2)), y({2}, Iota(2));
  CallAndCheck(f.get(), x.dl(), y.dl());
  gj_function_stats old;
  std::memset(&old, 0xab, sizeof(old));
  old.struct_size = offsetof(gj_function_stats, compiles);
  ASSERT_TRUE(Ok(gj_function_get_stats(f.get(), &old)));
  EXPECT_EQ(old.calls, 1);
  EXPECT_EQ(old.misses, 1);
  int64_t untouched;
  std::memset(&untouched, 0xab, sizeof(untouched));
  EXPECT_EQ(old.compiles, untouched);
  // An unknown dynamic mode is refused, not silently static.
  gj_function_options options;
  gj_function_options_init(&options);
  options.dynamic = static_cast<gj_dynamic_mode>(7);
  gj_function* dyn = nullptr;
  EXPECT_TRUE(
      IsError(gj_function_create(ctx.get(), graph.get(), &options, &dyn),
              GJ_INVALID_ARGUMENT, {"dynamic"}));
  EXPECT_EQ(dyn, nullptr);
}

}  // namespace
TEST(IntrospectionTest, MarkDynamicRangesThroughTheCApi) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = MulAddGraph(ctx.get());
  gj_dynamic_dim dims[] = {{0, 0, 2, 8}, {1, 0, 2, 8}};
  gj_function_options options;
  gj_function_options_init(&options);
  options.mark_dynamic = dims;
  options.num_mark_dynamic = 2;
  gj_function* raw = nullptr;
  ASSERT_TRUE(Ok(gj_function_create(ctx.get(), graph.get(), &options, &raw)));
  FunctionPtr f(raw);
  for (int n : {3, 5, 8}) {
    HostTensor<float> x({n}, Iota(n)), y({n}, Iota(n, 2));
    CallAndCheck(f.get(), x.dl(), y.dl());
  }
  EXPECT_EQ(Stats(f.get()).cache_entries, 1);
  HostTensor<float> x9({9}, Iota(9)), y9({9}, Iota(9, 2));
  CallAndCheck(f.get(), x9.dl(), y9.dl());
  EXPECT_EQ(Stats(f.get()).cache_entries, 2);
  EXPECT_THAT(Text(gj_function_dump_guards, f.get()),
              HasSubstr("LAMBDA_GUARD: x.size()[0] <= 8"));
  EXPECT_THAT(Text(gj_function_explain, f.get()),
              HasSubstr("x.size()[0] <= 8  # x.size()[0] = 9"));

  options.mark_dynamic = nullptr;
  gj_function* bad = nullptr;
  EXPECT_TRUE(
      IsError(gj_function_create(ctx.get(), graph.get(), &options, &bad),
              GJ_INVALID_ARGUMENT, {"mark_dynamic"}));
  dims[1].input = 5;
  options.mark_dynamic = dims;
  EXPECT_TRUE(
      IsError(gj_function_create(ctx.get(), graph.get(), &options, &bad),
              GJ_INVALID_ARGUMENT, {"mark_dynamic", "input 5"}));
  EXPECT_EQ(bad, nullptr);
}

}  // namespace gjtest
