// gj_function_call's run contract: outputs checked before anything runs,
// outputs written in place (or copied) whatever their layout, and calls the
// host stops with a cancel flag or a timeout (issue #19, item 3).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::ContextPtr;
using gjtest::FunctionPtr;
using gjtest::GraphPtr;
using gjtest::HostTensor;
using gjtest::IsError;
using gjtest::Ok;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class RunControlTest : public ::testing::Test {
 protected:
  void SetUp() override { context_ = gjtest::MakeContext(); }

  // rows = sum(expand(x, [rows, cols]), dim 1): rows * cols additions into
  // `rows` outputs, a parallel kernel of many chunks.
  FunctionPtr RowSums(int64_t rows, int64_t cols) {
    graph_ = gjtest::BuildGraph(
        context_.get(), "row_sums", {"x"},
        [&](gj_graph_builder* b) {
          const int64_t sizes[] = {rows, cols};
          gj_arg expand[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "big", "aten.expand.default", expand, 2)));
          const int64_t dims[] = {1};
          gj_arg sum[] = {gj_arg_ref("big"), gj_arg_ints(dims, 1)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "sums", "aten.sum.dim_IntList", sum, 2)));
        },
        {"sums"});
    return gjtest::MakeFunction(context_.get(), graph_.get());
  }

  // sum(expand(x, [rows, cols])) to a scalar: rows * cols additions with no
  // outer loop, which only a split reduction runs in chunks.
  FunctionPtr ScalarSum(int64_t rows, int64_t cols) {
    graph_ = gjtest::BuildGraph(
        context_.get(), "scalar_sum", {"x"},
        [&](gj_graph_builder* b) {
          const int64_t sizes[] = {rows, cols};
          gj_arg expand[] = {gj_arg_ref("x"), gj_arg_ints(sizes, 2)};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "big", "aten.expand.default", expand, 2)));
          gj_arg sum[] = {gj_arg_ref("big")};
          EXPECT_TRUE(Ok(gj_graph_builder_add_node(
              b, "total", "aten.sum.default", sum, 1)));
        },
        {"total"});
    return gjtest::MakeFunction(context_.get(), graph_.get());
  }

  // y = x * 2 + 1, elementwise.
  FunctionPtr Affine() {
    graph_ = gjtest::BuildGraph(
        context_.get(), "affine", {"x"},
        [](gj_graph_builder* b) {
          gj_arg mul[] = {gj_arg_ref("x"), gj_arg_int(2)};
          EXPECT_TRUE(Ok(
              gj_graph_builder_add_node(b, "mul", "aten.mul.Tensor", mul, 2)));
          gj_arg add[] = {gj_arg_ref("mul"), gj_arg_int(1)};
          EXPECT_TRUE(
              Ok(gj_graph_builder_add_node(b, "y", "aten.add.Tensor", add, 2)));
        },
        {"y"});
    return gjtest::MakeFunction(context_.get(), graph_.get());
  }

  ContextPtr context_;
  GraphPtr graph_;
};

TEST_F(RunControlTest, WrongOutputShapeFailsBeforeRunning) {
  // 2^36 additions: seconds of work if the call ran before checking.
  FunctionPtr f = RowSums(int64_t{1} << 20, int64_t{1} << 16);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> wrong({1 << 19}, std::vector<float>(1 << 19, -7));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {wrong.dl()};
  for (int call = 0; call < 2; ++call) {  // the miss, then a hit
    const auto start = Clock::now();
    EXPECT_TRUE(IsError(
        gj_function_call(f.get(), in, 1, out, 1, nullptr), GJ_INVALID_ARGUMENT,
        {"output 0", "expected float32[1048576], got float32[524288]"}));
    EXPECT_LT(SecondsSince(start), 2.0);
  }
  for (float v : wrong.buffer()) ASSERT_EQ(v, -7);
}

TEST_F(RunControlTest, CancelFlagSetBeforeTheCallStopsIt) {
  FunctionPtr f = RowSums(1024, 1024);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({1024}, std::vector<float>(1024, -7));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  int32_t cancel = 1;
  gj_call_options options;
  gj_call_options_init(&options);
  options.cancel = &cancel;
  EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 1, out, 1, &options),
                      GJ_CANCELLED, {"row_sums", "cancelled by the host"}));
  for (float v : y.buffer()) ASSERT_EQ(v, -7);
  // The same function runs normally once the flag is clear.
  cancel = 0;
  ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 1, out, 1, &options)));
  for (float v : y.buffer()) ASSERT_EQ(v, 1024);
}

TEST_F(RunControlTest, TimeoutStopsALongCallBetweenChunks) {
  // 2^36 additions over 2^20 rows: many seconds on two cores.
  FunctionPtr f = RowSums(int64_t{1} << 20, int64_t{1} << 16);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({1 << 20}, std::vector<float>(1 << 20, -7));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  gj_call_options options;
  gj_call_options_init(&options);
  options.timeout_us = 20000;
  const auto start = Clock::now();
  EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 1, out, 1, &options),
                      GJ_DEADLINE_EXCEEDED, {"timeout", "step 1 of 1"}));
  // The compile (a miss) plus one chunk per thread past the deadline.
  EXPECT_LT(SecondsSince(start), 3.0);
  for (float v : y.buffer()) ASSERT_EQ(v, -7);
  options.timeout_us = -1;
  EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 1, out, 1, &options),
                      GJ_INVALID_ARGUMENT, {"timeout_us is -1"}));
}

TEST_F(RunControlTest, CancelFromAnotherThread) {
  FunctionPtr f = RowSums(int64_t{1} << 20, int64_t{1} << 16);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({1 << 20}, std::vector<float>(1 << 20, -7));
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  int32_t cancel = 0;
  gj_call_options options;
  gj_call_options_init(&options);
  options.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    __atomic_store_n(&cancel, 1, __ATOMIC_RELAXED);
  });
  const auto start = Clock::now();
  gj_error* error = gj_function_call(f.get(), in, 1, out, 1, &options);
  stopper.join();
  EXPECT_TRUE(IsError(error, GJ_CANCELLED, {"cancelled by the host"}));
  EXPECT_LT(SecondsSince(start), 3.0);
  for (float v : y.buffer()) ASSERT_EQ(v, -7);
}

// Issue #19: sum(expand(x, [2^20, 2^20])) is 2^40 additions (31 s when it
// was one chunk nothing could stop). Split into partials, it stops at a
// deadline or a cancel flag between chunks of a few milliseconds. The entry
// is compiled first, so the deadline falls inside the partials kernel.
TEST_F(RunControlTest, DeadlineStopsAHugeScalarSum) {
  FunctionPtr f = ScalarSum(int64_t{1} << 20, int64_t{1} << 20);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({}, {-7});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  ASSERT_TRUE(Ok(gj_function_precompile(f.get(), in, 1, nullptr)));
  char* text = nullptr;
  ASSERT_TRUE(Ok(gj_function_explain(f.get(), &text)));
  EXPECT_NE(std::string(text).find("reduction 'total' split into"),
            std::string::npos)
      << text;
  gj_string_destroy(text);
  gj_call_options options;
  gj_call_options_init(&options);
  options.timeout_us = 50000;
  for (int call = 0; call < 2; ++call) {
    const auto start = Clock::now();
    // Step 1 of 2: the partials kernel; the combining kernel never ran.
    EXPECT_TRUE(IsError(gj_function_call(f.get(), in, 1, out, 1, &options),
                        GJ_DEADLINE_EXCEEDED, {"timeout", "step 1 of 2"}));
    EXPECT_LT(SecondsSince(start), 2.0);
    ASSERT_EQ(y.buffer()[0], -7);
  }
}

TEST_F(RunControlTest, CancelFromAnotherThreadStopsAHugeScalarSum) {
  FunctionPtr f = ScalarSum(int64_t{1} << 20, int64_t{1} << 20);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({}, {-7});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  ASSERT_TRUE(Ok(gj_function_precompile(f.get(), in, 1, nullptr)));
  int32_t cancel = 0;
  gj_call_options options;
  gj_call_options_init(&options);
  options.cancel = &cancel;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    __atomic_store_n(&cancel, 1, __ATOMIC_RELAXED);
  });
  const auto start = Clock::now();
  gj_error* error = gj_function_call(f.get(), in, 1, out, 1, &options);
  const double seconds = SecondsSince(start);
  stopper.join();
  EXPECT_TRUE(
      IsError(error, GJ_CANCELLED, {"scalar_sum", "cancelled by the host"}));
  EXPECT_LT(seconds, 2.0);
  ASSERT_EQ(y.buffer()[0], -7);
}

// The split sum is still exact where the values allow it: 2^26 ones in
// partials of 2^20.
TEST_F(RunControlTest, SplitScalarSumKeepsItsValue) {
  FunctionPtr f = ScalarSum(int64_t{1} << 13, int64_t{1} << 13);
  HostTensor<float> x({1, 1}, {1});
  HostTensor<float> y({}, {-7});
  const DLTensor* in[] = {x.dl()};
  const DLTensor* out[] = {y.dl()};
  ASSERT_TRUE(Ok(gj_function_call(f.get(), in, 1, out, 1, nullptr)));
  EXPECT_EQ(y.buffer()[0], 67108864.0f);
}

// Destinations of every layout get the same values: contiguous (written in
// place), transposed, offset into a larger buffer, padded rows, and the
// input's own buffer (f(x) written over x). `fn` maps a [3, 4] tensor of
// `values` to one of `expected`.
template <typename T>
void CheckEveryLayoutOf(gj_function* fn, const std::vector<T>& values,
                        const std::vector<T>& expected) {
  HostTensor<T> x({3, 4}, values);
  const DLTensor* in[] = {x.dl()};
  auto check = [&](HostTensor<T>& y, auto element) {
    const DLTensor* out[] = {y.dl()};
    for (int call = 0; call < 3; ++call) {
      ASSERT_TRUE(Ok(gj_function_call(fn, in, 1, out, 1, nullptr)));
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 4; ++c) {
          ASSERT_EQ(y.buffer()[element(r, c)], expected[r * 4 + c])
              << "row " << r << " col " << c;
        }
      }
    }
  };
  const T blank = static_cast<T>(-1);
  HostTensor<T> contiguous({3, 4}, std::vector<T>(12, blank));
  check(contiguous, [](int r, int c) { return r * 4 + c; });
  HostTensor<T> transposed({3, 4}, std::vector<T>(12, blank), {1, 3});
  check(transposed, [](int r, int c) { return c * 3 + r; });
  HostTensor<T> padded({3, 4}, std::vector<T>(18, blank), {6, 1});
  check(padded, [](int r, int c) { return r * 6 + c; });
  for (T v : {padded.buffer()[4], padded.buffer()[5]}) EXPECT_EQ(v, blank);
  HostTensor<T> offset({3, 4}, std::vector<T>(16, blank));
  offset.dl()->byte_offset = 4 * sizeof(T);
  check(offset, [](int r, int c) { return 4 + r * 4 + c; });
  for (int i = 0; i < 4; ++i) EXPECT_EQ(offset.buffer()[i], blank);
  // Over its own input: every call computes f in place.
  HostTensor<T> xy({3, 4}, values);
  const DLTensor* inout[] = {xy.dl()};
  ASSERT_TRUE(Ok(gj_function_call(fn, inout, 1, inout, 1, nullptr)));
  EXPECT_EQ(xy.buffer(), expected);
}

// Affine() into outputs of every layout, and over its own input.
void CheckEveryLayout(gj_function* fn) {
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = static_cast<float>(i) - 5;
  std::vector<float> expected;
  for (float v : values) expected.push_back(v * 2 + 1);
  CheckEveryLayoutOf(fn, values, expected);
}

std::string Explain(gj_function* fn) {
  char* text = nullptr;
  EXPECT_TRUE(Ok(gj_function_explain(fn, &text)));
  std::string explain = text != nullptr ? text : "";
  gj_string_destroy(text);
  return explain;
}

TEST_F(RunControlTest, OutputsOfEveryLayoutMatch) {
  FunctionPtr f = Affine();
  CheckEveryLayout(f.get());
}

// The eager backend's plans write the last node's output into the caller's
// destination too (any strides), and copy where it overlaps the input.
TEST_F(RunControlTest, EagerPlanOutputsOfEveryLayoutMatch) {
  context_ = gjtest::MakeContext(GJ_BACKEND_EAGER);
  FunctionPtr f = Affine();
  CheckEveryLayout(f.get());
  const std::string explain = Explain(f.get());
  EXPECT_NE(explain.find("eager plan, 2 kernels"), std::string::npos)
      << explain;
  EXPECT_EQ(explain.find("copied"), std::string::npos) << explain;
}

// A compiled program's eager step (integral power has no JIT lowering)
// writes its output into the caller's destination like a kernel does:
// y = (x * 2 + 1) ** 2 over int32, the power last.
TEST_F(RunControlTest, EagerStepOutputsOfEveryLayoutMatch) {
  graph_ = gjtest::BuildGraph(
      context_.get(), "affine_square", {"x"},
      [](gj_graph_builder* b) {
        gj_arg mul[] = {gj_arg_ref("x"), gj_arg_int(2)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "mul", "aten.mul.Tensor", mul, 2)));
        gj_arg add[] = {gj_arg_ref("mul"), gj_arg_int(1)};
        EXPECT_TRUE(
            Ok(gj_graph_builder_add_node(b, "a", "aten.add.Tensor", add, 2)));
        gj_arg pow[] = {gj_arg_ref("a"), gj_arg_int(2)};
        EXPECT_TRUE(Ok(gj_graph_builder_add_node(
            b, "y", "aten.pow.Tensor_Scalar", pow, 2)));
      },
      {"y"});
  FunctionPtr f = gjtest::MakeFunction(context_.get(), graph_.get());
  std::vector<int32_t> values(12);
  std::vector<int32_t> expected;
  for (int i = 0; i < 12; ++i) {
    values[i] = i - 5;
    expected.push_back((values[i] * 2 + 1) * (values[i] * 2 + 1));
  }
  CheckEveryLayoutOf(f.get(), values, expected);
  const std::string explain = Explain(f.get());
  EXPECT_NE(explain.find("1 eager node"), std::string::npos) << explain;
  EXPECT_EQ(explain.find("copied"), std::string::npos) << explain;
}

// Library-allocated outputs come from the context's caching allocator:
// repeated calls reuse the same blocks and the stats stay flat.
TEST_F(RunControlTest, CallAllocMemoryStaysFlat) {
  FunctionPtr f = Affine();
  std::vector<float> values(4096, 1.0f);
  HostTensor<float> x({64, 64}, values);
  const DLTensor* in[] = {x.dl()};
  gj_memory_stats before;
  gj_memory_stats_init(&before);
  auto stats = [&] {
    gj_memory_stats s;
    gj_memory_stats_init(&s);
    EXPECT_TRUE(Ok(gj_context_get_memory_stats(context_.get(), &s)));
    return s;
  };
  for (int i = 0; i < 100000; ++i) {
    DLManagedTensor* out = nullptr;
    ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, &out, 1)));
    ASSERT_EQ(static_cast<const float*>(out->dl_tensor.data)[4095], 3.0f);
    if (i == 100) before = stats();
    gj_tensor_release(out);
  }
  const gj_memory_stats after = stats();
  EXPECT_EQ(after.bytes_in_use, 0);
  EXPECT_EQ(after.system_allocations, before.system_allocations);
  EXPECT_EQ(after.bytes_cached, before.bytes_cached + before.bytes_in_use);
  EXPECT_GE(after.cache_hits, 99899);
  EXPECT_GE(after.compiled_modules, 1);
  EXPECT_TRUE(Ok(gj_context_release_cached_memory(context_.get())));
  EXPECT_EQ(stats().bytes_cached, 0);
  // An output may outlive the context that made it.
  DLManagedTensor* kept = nullptr;
  ASSERT_TRUE(Ok(gj_function_call_alloc(f.get(), in, 1, nullptr, &kept, 1)));
  EXPECT_EQ(stats().bytes_in_use, 64 * 64 * 4);
  f.reset();
  graph_.reset();
  context_.reset();
  EXPECT_EQ(static_cast<const float*>(kept->dl_tensor.data)[0], 3.0f);
  gj_tensor_release(kept);
  EXPECT_TRUE(IsError(gj_context_get_memory_stats(nullptr, &before),
                      GJ_INVALID_ARGUMENT, {"context is NULL"}));
}

}  // namespace
