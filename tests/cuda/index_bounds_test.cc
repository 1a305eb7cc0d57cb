// Dynamic CUDA entries and their size bounds (issue #14) through the C API
// on the emulated device: an entry whose kernels narrow to 32-bit index
// math under bounds chosen from the call that made it guards those bounds;
// a call beyond one misses with a reason naming the bound, and its entry
// indexes in 64 bits; mark_dynamic ranges bound the symbols without an
// extra guard; a CPU entry's guards have no bound. The CUDA source comes
// from GJ_LOGS=codegen (the module's text as the backend rendered it).

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "tests/cuda/emulated_test_util.h"

namespace guardjit {
namespace {

// relu(a * b + 2) and its row sums.
constexpr char kChain[] = R"pb(
  name: "chain"
  placeholders {
    name: "a"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "a" }
    args { ref: "b" }
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "mul" }
    args { i: 2 }
  }
  nodes {
    name: "relu"
    target: "aten.relu.default"
    args { ref: "add" }
  }
  nodes {
    name: "sum"
    target: "aten.sum.dim_IntList"
    args { ref: "relu" }
    args { list { items { i: 1 } } }
  }
  outputs { ref: "relu" }
  outputs { ref: "sum" }
)pb";

// relu(a * b + 2): pointwise only.
constexpr char kPointwise[] = R"pb(
  name: "pointwise"
  placeholders {
    name: "a"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  placeholders {
    name: "b"
    meta { dtype: FLOAT32 sizes: 4 sizes: 33 }
  }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "a" }
    args { ref: "b" }
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "mul" }
    args { i: 2 }
  }
  nodes {
    name: "relu"
    target: "aten.relu.default"
    args { ref: "add" }
  }
  outputs { ref: "relu" }
)pb";

// a's rows lie 2^28 elements apart (a padded view: only the pages a kernel
// touches are ever backed), so its index math passes 2^31 from 9 rows on.
constexpr int64_t kRowStride = int64_t{1} << 28;

std::vector<std::string>* g_codegen = nullptr;

void Capture(void*, const char* topic, const char* message) {
  if (g_codegen != nullptr && std::string(topic) == "codegen") {
    g_codegen->push_back(message);
  }
}

class IndexBoundsTest : public EmulatedFunctionTest {
 protected:
  void SetUp() override {
    EmulatedFunctionTest::SetUp();
    g_codegen = &logs_;
    gj_set_log_callback(&Capture, nullptr);
    gj_set_log_topics("codegen");
  }
  void TearDown() override {
    gj_set_log_topics("");
    gj_set_log_callback(nullptr, nullptr);
    g_codegen = nullptr;
    EmulatedFunctionTest::TearDown();
  }
  // The CUDA modules logged since the last call (their text: per-kernel
  // index width, then the source).
  std::vector<std::string> TakeModules() {
    std::vector<std::string> out;
    for (const std::string& m : logs_) {
      if (m.rfind("cuda:", 0) == 0) out.push_back(m);
    }
    logs_.clear();
    return out;
  }
  std::string Guards(gj_function* fn) {
    char* text = nullptr;
    Err e{gj_function_dump_guards(fn, &text)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    std::string out = text == nullptr ? "" : text;
    gj_string_destroy(text);
    return out;
  }
  std::string Explain(gj_function* fn) {
    char* text = nullptr;
    Err e{gj_function_explain(fn, &text)};
    EXPECT_EQ(e.e, nullptr) << e.message();
    std::string out = text == nullptr ? "" : text;
    gj_string_destroy(text);
    return out;
  }
  // Calls `fn` on device tensors a, b of [rows, cols] (a with row stride
  // `a_row_stride`, 0: contiguous) and on CPU copies; expects equal
  // results.
  void CallAndCompare(gj_function* fn, int64_t rows, int64_t cols,
                      int64_t a_row_stride = 0) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    DeviceTensor<float> a({rows, cols}, F32(), kDLCUDA,
                          a_row_stride == 0
                              ? std::vector<int64_t>{}
                              : std::vector<int64_t>{a_row_stride, 1});
    DeviceTensor<float> b({rows, cols}, F32(), kDLCUDA);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t stride = a_row_stride == 0 ? cols : a_row_stride;
      Fill(a.values() + r * stride, cols, static_cast<uint32_t>(r * 7 + cols));
    }
    Fill(b.values(), b.count, static_cast<uint32_t>(rows + cols * 5));
    const auto device = CallValues(fn, {&a.dl, &b.dl}, /*cpu=*/false);
    const auto cpu = CallValues(fn, {&a.dl, &b.dl}, /*cpu=*/true);
    ASSERT_FALSE(device.empty());
    ASSERT_EQ(device.size(), cpu.size());
    for (size_t k = 0; k < cpu.size(); ++k) {
      ASSERT_EQ(device[k].size(), cpu[k].size());
      for (size_t i = 0; i < cpu[k].size(); ++i) {
        ASSERT_NEAR(device[k][i], cpu[k][i], 1e-5 * (1 + std::abs(cpu[k][i])))
            << k << " " << i;
      }
    }
  }
  std::vector<std::string> logs_;
};

// The entry made by 3 rows bounds the rows at 8 (7 * 2^28 + cols fits 32
// bits, 15 * 2^28 does not); 9 rows index 2^31 and past it, which the
// 64-bit entry they miss into computes right (a 32-bit one would read far
// outside the buffer).
TEST_F(IndexBoundsTest, ChosenBoundsAreGuardedAndACallBeyondOneMisses) {
  gj_function* fn = Load(kPointwise, GJ_DYNAMIC_DYNAMIC);
  CallAndCompare(fn, 3, 5, kRowStride);
  const std::vector<std::string> first = TakeModules();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_NE(first[0].find("Index math in 32 bits"), std::string::npos)
      << first[0];
  EXPECT_EQ(first[0].find("Index math in 64 bits"), std::string::npos)
      << first[0];
  const std::string guards = Guards(fn);
  // On the CUDA entry only (the CPU entry has none).
  const std::string bound =
      "LAMBDA_GUARD: a.size()[0] <= 8  # the bound "
      "under which the entry's CUDA kernels index in "
      "32 bits";
  ASSERT_NE(guards.find(bound), std::string::npos) << guards;
  EXPECT_EQ(guards.find(bound), guards.rfind(bound)) << guards;
  EXPECT_NE(Explain(fn).find("32-bit index math in 1 of 1 kernels"),
            std::string::npos)
      << Explain(fn);
  // Sizes within the bounds: hits of the same two entries.
  const int64_t sizes[][2] = {{2, 17}, {8, 64}, {5, 130}, {7, 1000}, {4, 3}};
  for (const auto& rc : sizes) CallAndCompare(fn, rc[0], rc[1], kRowStride);
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_TRUE(TakeModules().empty());

  // 9 rows: the CUDA entry misses, says why, and the new entry indexes in
  // 64 bits (and chooses no bound).
  CallAndCompare(fn, 9, 4, kRowStride);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  EXPECT_EQ(stats.compiles, 3);
  const std::string explain = Explain(fn);
  EXPECT_NE(explain.find("a.size()[0] = 9 exceeds 8, the bound under which "
                         "the entry's CUDA kernels index in 32 bits"),
            std::string::npos)
      << explain;
  const std::vector<std::string> second = TakeModules();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0].find("Index math in 64 bits"), std::string::npos)
      << second[0];
  EXPECT_EQ(second[0].find("Index math in 32 bits"), std::string::npos)
      << second[0];
  // More rows still: the 64-bit entry serves them.
  CallAndCompare(fn, 12, 3, kRowStride);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  EXPECT_EQ(stats.compiles, 3);
}

TEST_F(IndexBoundsTest, MarkDynamicRangesBoundWithoutAGuard) {
  gj_graph* graph = nullptr;
  ASSERT_GJ_OK(
      gj_graph_from_text(ctx_, kChain, sizeof(kChain) - 1, nullptr, &graph));
  graphs_.push_back(graph);
  const gj_dynamic_dim dims[] = {
      {0, 0, 2, 4096}, {0, 1, 2, 4096}, {1, 0, 2, 4096}, {1, 1, 2, 4096}};
  gj_function_options options;
  gj_function_options_init(&options);
  options.mark_dynamic = dims;
  options.num_mark_dynamic = 4;
  options.dynamic = GJ_DYNAMIC_AUTO;
  gj_function* fn = nullptr;
  ASSERT_GJ_OK(gj_function_create(ctx_, graph, &options, &fn));
  functions_.push_back(fn);
  CallAndCompare(fn, 3, 5);
  const std::vector<std::string> modules = TakeModules();
  ASSERT_EQ(modules.size(), 1u);
  EXPECT_NE(modules[0].find("Index math in 32 bits"), std::string::npos)
      << modules[0];
  const std::string guards = Guards(fn);
  EXPECT_NE(guards.find("a.size()[0] <= 4096"), std::string::npos) << guards;
  EXPECT_EQ(guards.find("the bound under which"), std::string::npos) << guards;
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  const int64_t compiles = stats.compiles;
  // Sizes anywhere in the ranges: the same entries, no recompile.
  for (int64_t cols : {2, 17, 300, 4096}) CallAndCompare(fn, 4, cols);
  ASSERT_GJ_OK(gj_function_get_stats(fn, &stats));
  EXPECT_EQ(stats.compiles, compiles);
}

TEST_F(IndexBoundsTest, CpuEntriesChooseNoBounds) {
  gj_function* fn = Load(kChain, GJ_DYNAMIC_DYNAMIC);
  DeviceTensor<float> a({3, 5}, F32(), kDLCUDA), b({3, 5}, F32(), kDLCUDA);
  const auto cpu = CallValues(fn, {&a.dl, &b.dl}, /*cpu=*/true);
  ASSERT_EQ(cpu.size(), 2u);
  const std::string guards = Guards(fn);
  EXPECT_NE(guards.find("LAMBDA_GUARD"), std::string::npos) << guards;
  EXPECT_EQ(guards.find("the bound under which"), std::string::npos) << guards;
  EXPECT_EQ(guards.find("a.size()[0] <= "), std::string::npos) << guards;
}

}  // namespace
}  // namespace guardjit
