#include <algorithm>
#include <string>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::BuildGraph;
using gjtest::ContextPtr;
using gjtest::Floats;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::MakeContext;
using gjtest::MakeFunction;
using gjtest::ManagedPtr;
using gjtest::Ok;
using gjtest::Shape;

TEST(CapiContextTest, InitFillsDefaults) {
  gj_context_options options;
  options.struct_size = 0;
  options.num_threads = 42;
  gj_context_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_context_options));
  EXPECT_EQ(options.num_threads, 0);
  gj_context_options_init(nullptr);
}

TEST(CapiContextTest, CreateWithDefaultsAndWithOptions) {
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(nullptr, &context)));
  EXPECT_NE(context, nullptr);
  gj_context_destroy(context);

  gj_context_options options;
  gj_context_options_init(&options);
  options.num_threads = 3;
  ASSERT_TRUE(Ok(gj_context_create(&options, &context)));
  EXPECT_NE(context, nullptr);
  gj_context_destroy(context);
}

TEST(CapiContextTest, NullOutParameter) {
  EXPECT_TRUE(IsError(gj_context_create(nullptr, nullptr), GJ_INVALID_ARGUMENT,
                      {"gj_context_create", "out_context"}));
}

TEST(CapiContextTest, DestroyNull) { gj_context_destroy(nullptr); }

TEST(CapiContextTest, NegativeThreadsRejectedAndOutZeroed) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.num_threads = -1;
  gj_context* context = reinterpret_cast<gj_context*>(0x1);
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT, {"num_threads", "-1"}));
  EXPECT_EQ(context, nullptr);
}

TEST(CapiContextTest, KernelCacheCapOption) {
  gj_context_options options;
  gj_context_options_init(&options);
  EXPECT_EQ(options.max_cached_kernels, 1024);
  options.max_cached_kernels = -5;
  gj_context* context = reinterpret_cast<gj_context*>(0x1);
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT, {"max_cached_kernels", "-5"}));
  EXPECT_EQ(context, nullptr);
  // No cache at all still compiles and runs.
  options.max_cached_kernels = 0;
  ASSERT_EQ(gj_context_create(&options, &context), nullptr);
  gj_context_destroy(context);
}

TEST(CapiContextTest, UninitializedStructSizeRejected) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.struct_size = 0;
  gj_context* context = nullptr;
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT,
                      {"struct_size", "gj_context_options_init"}));
}

TEST(CapiContextTest, OlderHostStructReadsOnlyItsFields) {
  // A host whose header had only struct_size: num_threads must not be read,
  // so the invalid value beyond struct_size is ignored.
  gj_context_options options;
  gj_context_options_init(&options);
  options.struct_size = sizeof(size_t);
  options.num_threads = -5;
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options, &context)));
  ContextPtr owned(context);
  EXPECT_NE(context, nullptr);
}

TEST(CapiContextTest, NewerHostStructIsAccepted) {
  struct NewerOptions {
    gj_context_options v1;
    int64_t field_from_the_future;
  } options;
  gj_context_options_init(&options.v1);
  options.v1.struct_size = sizeof(NewerOptions);
  options.field_from_the_future = 7;
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options.v1, &context)));
  gj_context_destroy(context);
}

TEST(CapiContextTest, UnknownBackendRejected) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.backend = static_cast<gj_backend>(42);
  gj_context* context = reinterpret_cast<gj_context*>(0x1);
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT, {"backend", "42", "gj_backend"}));
  EXPECT_EQ(context, nullptr);
}

// softmax(x * y + 1, dim=1), summed over dim 0: pointwise, a row-wise
// softmax and a reduction, so the JIT fuses and the eager plan does not.
GraphPtr FusableGraph(gj_context* ctx) {
  return BuildGraph(
      ctx, "fusable", {"x", "y"},
      [](gj_graph_builder* b) {
        gj_arg mul[] = {gj_arg_ref("x"), gj_arg_ref("y")};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "mul", "aten.mul.Tensor", mul, 2)));
        gj_arg add[] = {gj_arg_ref("mul"), gj_arg_float(1.0)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "add", "aten.add.Tensor", add, 2)));
        gj_arg softmax[] = {gj_arg_ref("add"), gj_arg_int(1),
                            gj_arg_bool(false)};
        EXPECT_TRUE(Ok(gj_graph_builder_add_node(
            b, "softmax", "aten._softmax.default", softmax, 3)));
        int64_t dims[] = {0};
        gj_arg sum[] = {gj_arg_ref("softmax"), gj_arg_ints(dims, 1)};
        EXPECT_TRUE(Ok(gj_graph_builder_add_node(
            b, "sum", "aten.sum.dim_IntList", sum, 2)));
      },
      {"softmax", "sum"});
}

std::string Explain(const gj_function* f) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(gj_function_explain(f, &text)));
  std::string out = text != nullptr ? text : "";
  gj_string_destroy(text);
  return out;
}

TEST(CapiContextTest, BackendsAgreeAndExplainNamesThem) {
  const std::vector<int64_t> shape = {5, 7};
  std::vector<float> xs(35), ys(35);
  for (int i = 0; i < 35; ++i) {
    xs[i] = 0.1f * static_cast<float>(i % 11) - 0.4f;
    ys[i] = 0.3f * static_cast<float>(i % 5) + 0.2f;
  }
  HostTensor<float> x(shape, xs), y(shape, ys);
  std::vector<std::vector<float>> results[2];
  const gj_backend backends[] = {GJ_BACKEND_EAGER, GJ_BACKEND_CPU_JIT};
  const char* names[] = {"backend eager", "backend jit"};
  const char* describe[] = {"eager plan", "fused kernels"};
  for (int b = 0; b < 2; ++b) {
    ContextPtr ctx = MakeContext(backends[b]);
    GraphPtr graph = FusableGraph(ctx.get());
    FunctionPtr f = MakeFunction(ctx.get(), graph.get());
    const DLTensor* in[] = {x.dl(), y.dl()};
    for (int call = 0; call < 2; ++call) {
      DLManagedTensor* out[2] = {nullptr, nullptr};
      ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, out, 2)));
      ManagedPtr softmax(out[0]), sum(out[1]);
      EXPECT_EQ(Shape(out[1]->dl_tensor), std::vector<int64_t>({7}));
      results[b] = {Floats(out[0]->dl_tensor), Floats(out[1]->dl_tensor)};
    }
    const std::string explain = Explain(f.get());
    EXPECT_NE(explain.find(names[b]), std::string::npos) << explain;
    EXPECT_NE(explain.find(describe[b]), std::string::npos) << explain;
  }
  for (int o = 0; o < 2; ++o) {
    ASSERT_EQ(results[0][o].size(), results[1][o].size());
    for (size_t i = 0; i < results[0][o].size(); ++i) {
      EXPECT_NEAR(results[0][o][i], results[1][o][i], 1e-6f)
          << "output " << o << " at " << i;
    }
  }
}

// A context's thread count is the JIT's: one thread and several compute the
// same values (rows are split across threads, not reduced across them).
TEST(CapiContextTest, JitThreadCountsAgree) {
  const std::vector<int64_t> shape = {256, 1024};
  std::vector<float> xs(256 * 1024), ys(256 * 1024);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = 0.01f * static_cast<float>(i % 101) - 0.4f;
    ys[i] = 0.03f * static_cast<float>(i % 7) + 0.2f;
  }
  HostTensor<float> x(shape, xs), y(shape, ys);
  std::vector<std::vector<float>> results;
  for (int32_t threads : {1, 2}) {
    ContextPtr ctx = MakeContext(GJ_BACKEND_CPU_JIT, threads);
    GraphPtr graph = FusableGraph(ctx.get());
    FunctionPtr f = MakeFunction(ctx.get(), graph.get());
    const DLTensor* in[] = {x.dl(), y.dl()};
    DLManagedTensor* out[2] = {nullptr, nullptr};
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, out, 2)));
    ManagedPtr softmax(out[0]), sum(out[1]);
    results.push_back(Floats(out[0]->dl_tensor));
  }
  EXPECT_EQ(results[0], results[1]);
}

}  // namespace

namespace {

gj_memory_stats NewStats() {
  gj_memory_stats s;
  gj_memory_stats_init(&s);
  return s;
}

// gj_context_get_device_memory_stats: the host is the context's allocator;
// a CUDA device is UNAVAILABLE where there is no driver (these machines),
// and read from its caching allocator where there is one.
TEST(CapiContextTest, DeviceMemoryStats) {
  ContextPtr context = MakeContext();
  // Some host memory in use: a library-allocated output of a kernel.
  GraphPtr graph = BuildGraph(context.get(), "negate", {"x"},
                              [](gj_graph_builder* b) {
                                gj_arg neg[] = {gj_arg_ref("x")};
                                EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                                    b, "y", "aten.neg.default", neg, 1)));
                              },
                              {"y"});
  FunctionPtr fn = gjtest::MakeFunction(context.get(), graph.get());
  gjtest::HostTensor<float> x({256}, std::vector<float>(256, 1.0f));
  const DLTensor* in[] = {x.dl()};
  DLManagedTensor* out = nullptr;
  ASSERT_TRUE(Ok(gj_function_call_alloc(fn.get(), in, 1, nullptr, &out, 1)));
  gj_memory_stats host = NewStats(), cpu = NewStats();
  ASSERT_TRUE(Ok(gj_context_get_memory_stats(context.get(), &host)));
  ASSERT_TRUE(
      Ok(gj_context_get_device_memory_stats(context.get(), {kDLCPU, 0}, &cpu)));
  EXPECT_GE(host.bytes_in_use, 1024);
  EXPECT_EQ(cpu.bytes_in_use, host.bytes_in_use);
  EXPECT_EQ(cpu.peak_bytes_in_use, host.peak_bytes_in_use);
  EXPECT_EQ(cpu.system_allocations, host.system_allocations);
  gj_tensor_release(out);
  ASSERT_TRUE(
      Ok(gj_context_release_cached_device_memory(context.get(), {kDLCPU, 0})));
  ASSERT_TRUE(
      Ok(gj_context_get_device_memory_stats(context.get(), {kDLCPU, 0}, &cpu)));
  EXPECT_EQ(cpu.bytes_in_use, 0);
  EXPECT_EQ(cpu.bytes_cached, 0);

  gj_memory_stats cuda = NewStats();
  gj_error* error =
      gj_context_get_device_memory_stats(context.get(), {kDLCUDA, 0}, &cuda);
  if (error == nullptr) {  // a machine with a GPU
    EXPECT_GE(cuda.bytes_in_use, 0);
    EXPECT_EQ(cuda.compiled_modules, 0);
  } else {
    EXPECT_EQ(gj_error_get_code(error), GJ_UNAVAILABLE)
        << gj_error_message(error);
    EXPECT_NE(std::string(gj_error_message(error))
                  .find("gj_context_get_device_memory_stats: CUDA device 0"),
              std::string::npos)
        << gj_error_message(error);
    gj_error_destroy(error);
  }
}

int64_t PackedWeightBytes(const gj_context* context) {
  gj_memory_stats stats = NewStats();
  EXPECT_TRUE(Ok(gj_context_get_memory_stats(context, &stats)));
  return stats.packed_weight_bytes;
}

// A linear layer's weight, packed once when its entry compiles, counts in
// packed_weight_bytes while an entry holds it: once per entry, gone with the
// function. Products of two inputs pack nothing.
TEST(CapiContextTest, PackedWeightsCountWhileTheirEntriesLive) {
  ContextPtr context = MakeContext();
  constexpr int64_t kIn = 128, kOut = 64, kRows = 8;
  std::vector<float> weight(kIn * kOut), bias(kOut);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = 0.01f * (i % 13);
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.5f - 0.1f * (i % 7);
  // The weight as [in, out]: addmm(b, x, w).
  HostTensor<float> w({kIn, kOut}, weight), b({kOut}, bias);
  GraphPtr graph = BuildGraph(
      context.get(), "linear", {"x"},
      [&](gj_graph_builder* g) {
        EXPECT_TRUE(Ok(gj_graph_builder_add_constant(g, "w", w.dl())));
        EXPECT_TRUE(Ok(gj_graph_builder_add_constant(g, "b", b.dl())));
        gj_arg addmm[] = {gj_arg_ref("b"), gj_arg_ref("x"), gj_arg_ref("w")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(g, "y", "aten.addmm.default", addmm, 3)));
        gj_arg relu[] = {gj_arg_ref("y")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(g, "z", "aten.relu.default", relu, 1)));
      },
      {"z"});
  ASSERT_NE(graph, nullptr);
  const auto packed = [&] { return PackedWeightBytes(context.get()); };
  EXPECT_EQ(packed(), 0);

  std::vector<float> xs(kRows * kIn);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.02f * (i % 11) - 0.1f;
  HostTensor<float> x({kRows, kIn}, xs);
  const DLTensor* in[] = {x.dl()};
  const auto call = [&](gj_function* fn) {
    HostTensor<float> z({kRows, kOut}, std::vector<float>(kRows * kOut));
    const DLTensor* out[] = {z.dl()};
    EXPECT_TRUE(Ok(gj_function_call(fn, in, 1, out, 1, nullptr)));
    // The packed weight computes what the graph says.
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kOut; ++c) {
        double sum = bias[c];
        for (int64_t k = 0; k < kIn; ++k) {
          sum += double{xs[r * kIn + k]} * weight[k * kOut + c];
        }
        EXPECT_NEAR(z.buffer()[r * kOut + c], std::max(sum, 0.0), 1e-4)
            << r << ", " << c;
      }
    }
  };
  FunctionPtr first = MakeFunction(context.get(), graph.get());
  call(first.get());
  const int64_t one = packed();
  // The whole weight, in panels padded to the kernel's width at most to
  // twice its columns.
  const int64_t weight_bytes = kIn * kOut * 4;
  EXPECT_GE(one, weight_bytes);
  EXPECT_LE(one, 2 * weight_bytes);
  call(first.get());  // a hit packs nothing more
  EXPECT_EQ(packed(), one);

  FunctionPtr second = MakeFunction(context.get(), graph.get());
  call(second.get());
  EXPECT_EQ(packed(), 2 * one);
  first.reset();
  EXPECT_EQ(packed(), one);
  second.reset();
  EXPECT_EQ(packed(), 0);

  // x @ y of two inputs: nothing to pack.
  GraphPtr mm = BuildGraph(context.get(), "mm", {"a", "c"},
                           [](gj_graph_builder* g) {
                             gj_arg args[] = {gj_arg_ref("a"), gj_arg_ref("c")};
                             EXPECT_TRUE(Ok(gj_graph_builder_add_node(
                                 g, "p", "aten.mm.default", args, 2)));
                           },
                           {"p"});
  FunctionPtr product = MakeFunction(context.get(), mm.get());
  HostTensor<float> a({kRows, kIn}, xs), c({kIn, kOut}, weight);
  const DLTensor* mm_in[] = {a.dl(), c.dl()};
  DLManagedTensor* result = nullptr;
  ASSERT_TRUE(
      Ok(gj_function_call_alloc(product.get(), mm_in, 2, nullptr, &result, 1)));
  gj_tensor_release(result);
  EXPECT_EQ(packed(), 0);
}

// A convolution's constant weight, reordered once into oneDNN's layout, is
// counted the same way.
TEST(CapiContextTest, PackedConvolutionWeightsCount) {
  ContextPtr context = MakeContext();
  constexpr int64_t kIn = 16, kOut = 32, kSize = 12;
  std::vector<float> weight(kOut * kIn * 3 * 3);
  for (size_t i = 0; i < weight.size(); ++i)
    weight[i] = 0.01f * (i % 17) - 0.08f;
  HostTensor<float> w({kOut, kIn, 3, 3}, weight);
  GraphPtr graph = BuildGraph(
      context.get(), "conv", {"x"},
      [&](gj_graph_builder* g) {
        EXPECT_TRUE(Ok(gj_graph_builder_add_constant(g, "w", w.dl())));
        const int64_t ones[] = {1, 1}, zeros[] = {0, 0};
        gj_arg conv[] = {
            gj_arg_ref("x"),      gj_arg_ref("w"),       gj_arg_none(),
            gj_arg_ints(ones, 2), gj_arg_ints(ones, 2),  gj_arg_ints(ones, 2),
            gj_arg_bool(0),       gj_arg_ints(zeros, 2), gj_arg_int(1)};
        EXPECT_TRUE(Ok(gj_graph_builder_add_node(
            g, "y", "aten.convolution.default", conv, 9)));
        gj_arg relu[] = {gj_arg_ref("y")};
        EXPECT_TRUE(Ok(
            gj_graph_builder_add_node(g, "z", "aten.relu.default", relu, 1)));
      },
      {"z"});
  ASSERT_NE(graph, nullptr);
  const auto packed = [&] { return PackedWeightBytes(context.get()); };
  FunctionPtr fn = MakeFunction(context.get(), graph.get());
  HostTensor<float> x({2, kIn, kSize, kSize},
                      std::vector<float>(2 * kIn * kSize * kSize, 0.25f));
  const DLTensor* in[] = {x.dl()};
  DLManagedTensor* out = nullptr;
  ASSERT_TRUE(Ok(gj_function_call_alloc(fn.get(), in, 1, nullptr, &out, 1)));
  // Every output away from the border sums the whole window.
  const std::vector<float> z = Floats(out->dl_tensor);
  gj_tensor_release(out);
  double window = 0;
  for (int64_t i = 0; i < kIn * 9; ++i) window += 0.25 * weight[i];
  EXPECT_NEAR(z[kSize + 1], std::max(window, 0.0), 1e-4);
  const int64_t weight_bytes = kOut * kIn * 9 * 4;
  EXPECT_GE(packed(), weight_bytes);
  fn.reset();
  EXPECT_EQ(packed(), 0);
}

TEST(CapiContextTest, DeviceMemoryStatsRejectsBadArguments) {
  ContextPtr context = MakeContext();
  gj_memory_stats s = NewStats();
  EXPECT_TRUE(IsError(
      gj_context_get_device_memory_stats(context.get(), {kDLOpenCL, 0}, &s),
      GJ_INVALID_ARGUMENT,
      {"device type 4 is neither kDLCPU (1) nor kDLCUDA"}));
  EXPECT_TRUE(IsError(
      gj_context_get_device_memory_stats(context.get(), {kDLCPU, 1}, &s),
      GJ_INVALID_ARGUMENT, {"{kDLCPU, 1}: the host is 0"}));
  EXPECT_TRUE(IsError(
      gj_context_get_device_memory_stats(context.get(), {kDLCUDA, -1}, &s),
      GJ_INVALID_ARGUMENT, {"device id -1 is negative"}));
  EXPECT_TRUE(
      IsError(gj_context_get_device_memory_stats(nullptr, {kDLCPU, 0}, &s),
              GJ_INVALID_ARGUMENT, {"context"}));
  EXPECT_TRUE(IsError(
      gj_context_get_device_memory_stats(context.get(), {kDLCPU, 0}, nullptr),
      GJ_INVALID_ARGUMENT, {"stats"}));
  gj_memory_stats unset{};
  EXPECT_TRUE(IsError(
      gj_context_get_device_memory_stats(context.get(), {kDLCPU, 0}, &unset),
      GJ_INVALID_ARGUMENT, {"gj_memory_stats_init"}));
  EXPECT_TRUE(IsError(
      gj_context_release_cached_device_memory(context.get(), {kDLVulkan, 0}),
      GJ_INVALID_ARGUMENT, {"device type 7"}));
  EXPECT_TRUE(
      IsError(gj_context_release_cached_device_memory(nullptr, {kDLCPU, 0}),
              GJ_INVALID_ARGUMENT, {"context"}));
}

}  // namespace

// Graphs and functions keep what they need of their context (guardjit.h):
// destroyed first, the context leaves them working, a new shape compiling
// included, and destroying them afterwards is clean (ASan's build checks).
TEST(CapiContextTest, GraphsAndFunctionsOutliveTheirContext) {
  ContextPtr ctx = MakeContext();
  GraphPtr graph = FusableGraph(ctx.get());
  FunctionPtr f = MakeFunction(ctx.get(), graph.get());
  auto run = [&f](int64_t rows) {
    std::vector<float> values(static_cast<size_t>(rows * 3), 0.5f);
    HostTensor<float> x({rows, 3}, values), y({rows, 3}, values);
    const DLTensor* in[] = {x.dl(), y.dl()};
    DLManagedTensor* out[2] = {nullptr, nullptr};
    EXPECT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 2, nullptr, out, 2)));
    for (DLManagedTensor* t : out) {
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->dl_tensor.shape[t->dl_tensor.ndim - 1], 3);
      gj_tensor_release(t);
    }
  };
  run(2);
  ctx.reset();  // gj_context_destroy before the graph and the function
  run(2);       // a hit
  run(5);       // a miss: compiles with the context's compiler, kept alive
  graph.reset();
  run(7);
}
