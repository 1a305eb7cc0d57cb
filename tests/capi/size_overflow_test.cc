// Sizes an op computes past 2^63 are OUT_OF_RANGE naming the node and the
// overflow, in static and in dynamic (symbolic) entries alike: a sum (cat)
// and a product (an outer product's element count). Inputs are
// zero-stride views of one float: huge shapes, a few bytes of memory.

#include <cstdint>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using ::testing::HasSubstr;

constexpr char kCat[] = R"(
name: "cat_overflow"
placeholders { name: "x" meta { dtype: FLOAT32 sizes: 4 } }
placeholders { name: "y" meta { dtype: FLOAT32 sizes: 4 } }
nodes {
  name: "joined"
  target: "aten.cat.default"
  args { list { items { ref: "x" } items { ref: "y" } } }
}
outputs { ref: "joined" }
)";

struct Broadcast {
  explicit Broadcast(int64_t n) : shape{n} {
    dl.data = &value;
    dl.device = {kDLCPU, 0};
    dl.ndim = 1;
    dl.dtype = {kDLFloat, 32, 1};
    dl.shape = shape;
    dl.strides = strides;
  }
  float value = 1.0f;
  int64_t shape[1];
  int64_t strides[1] = {0};
  DLTensor dl{};
};

constexpr char kOuter[] = R"(
name: "outer_overflow"
placeholders { name: "x" meta { dtype: FLOAT32 sizes: 4 } }
placeholders { name: "y" meta { dtype: FLOAT32 sizes: 4 } }
nodes { name: "col" target: "aten.unsqueeze.default" args { ref: "x" } args { i: 1 } }
nodes { name: "row" target: "aten.unsqueeze.default" args { ref: "y" } args { i: 0 } }
nodes { name: "outer" target: "aten.mul.Tensor" args { ref: "col" } args { ref: "row" } }
outputs { ref: "outer" }
)";

class SizeOverflowTest : public ::testing::TestWithParam<gj_dynamic_mode> {
 protected:
  void SetUp() override { Load(kCat, sizeof kCat - 1); }
  void Load(const char* text, size_t size) {
    if (fn_ != nullptr) gj_function_destroy(fn_);
    if (graph_ != nullptr) gj_graph_destroy(graph_);
    fn_ = nullptr;
    graph_ = nullptr;
    if (ctx_ == nullptr) ASSERT_EQ(gj_context_create(nullptr, &ctx_), nullptr);
    ASSERT_EQ(gj_graph_from_text(ctx_, text, size, nullptr, &graph_), nullptr);
    gj_function_options options;
    gj_function_options_init(&options);
    options.dynamic = GetParam();
    ASSERT_EQ(gj_function_create(ctx_, graph_, &options, &fn_), nullptr);
  }
  void TearDown() override {
    gj_function_destroy(fn_);
    gj_graph_destroy(graph_);
    gj_context_destroy(ctx_);
  }

  // Calls with x and y of `nx` and `ny` elements; the error, or "" and the
  // output's first size on success.
  std::string Call(int64_t nx, int64_t ny, gj_error_code* code,
                   int64_t* size0) {
    Broadcast x(nx), y(ny);
    const DLTensor* inputs[] = {&x.dl, &y.dl};
    DLManagedTensor* out = nullptr;
    gj_error* err = gj_function_call_alloc(fn_, inputs, 2, nullptr, &out, 1);
    if (err == nullptr) {
      *size0 = out->dl_tensor.shape[0];
      gj_tensor_release(out);
      *code = GJ_OK;
      return "";
    }
    *code = gj_error_get_code(err);
    std::string message = gj_error_message(err);
    gj_error_destroy(err);
    return message;
  }

  gj_context* ctx_ = nullptr;
  gj_graph* graph_ = nullptr;
  gj_function* fn_ = nullptr;
};

// The overflowing sizes, each pair adding up past 2^63.
constexpr int64_t kBig = int64_t{1} << 62;
constexpr std::pair<int64_t, int64_t> kPastInt64[] = {
    {kBig, kBig}, {kBig + 7, kBig - 1}, {INT64_MAX, 1}};

void ExpectOverflowNamingTheNode(gj_error_code code,
                                 const std::string& message) {
  EXPECT_EQ(code, GJ_OUT_OF_RANGE) << message;
  EXPECT_THAT(message, HasSubstr("'joined'")) << message;
  EXPECT_THAT(message, HasSubstr("past 2^63")) << message;
  EXPECT_THAT(message, ::testing::Not(HasSubstr("negative size")));
}

TEST_P(SizeOverflowTest, CatOfSizesAddingUpPast2To63OnTheFirstCall) {
  gj_error_code code;
  int64_t size0 = 0;
  for (auto [nx, ny] : kPastInt64) {
    const std::string message = Call(nx, ny, &code, &size0);
    ExpectOverflowNamingTheNode(code, message);
  }
  // Nothing was cached from the failed calls; one that fits runs.
  ASSERT_EQ(Call(6, 5, &code, &size0), "");
  EXPECT_EQ(size0, 11);
}

TEST_P(SizeOverflowTest, CatOfSizesAddingUpPast2To63AfterACallThatFits) {
  // On a dynamic entry the call fails the entry's guard 0 <= s0 + s1 (the
  // sum wraps negative) and misses into the shape rule's check.
  gj_error_code code;
  int64_t size0 = 0;
  // A first call that fits; automatic dynamic then recompiles symbolically
  // (a dynamic function's entry is symbolic from the first call).
  ASSERT_EQ(Call(4, 5, &code, &size0), "");
  EXPECT_EQ(size0, 9);
  for (auto [nx, ny] : kPastInt64) {
    const std::string message = Call(nx, ny, &code, &size0);
    ExpectOverflowNamingTheNode(code, message);
  }
  ASSERT_EQ(Call(6, 5, &code, &size0), "");
  EXPECT_EQ(size0, 11);
}

// An outer product of two broadcast vectors of 2^32 elements each has 2^64:
// past int64 as a count. A dynamic entry made by calls that fit evaluates
// its output's sizes per call, with checked arithmetic.
TEST_P(SizeOverflowTest,
       OuterProductPast2To63ElementsBeforeAndAfterCallsThatFit) {
  Load(kOuter, sizeof kOuter - 1);
  gj_error_code code;
  int64_t size0 = 0;
  constexpr int64_t k2To32 = int64_t{1} << 32;
  for (int round = 0; round < 2; ++round) {
    const std::string message = Call(k2To32, k2To32, &code, &size0);
    EXPECT_EQ(code, GJ_OUT_OF_RANGE) << message;
    EXPECT_THAT(message, HasSubstr("'outer'")) << message;
    EXPECT_THAT(message, HasSubstr("int64")) << message;
    // Calls that fit: the second and third make an automatic entry dynamic.
    ASSERT_EQ(Call(4, 5, &code, &size0), "");
    EXPECT_EQ(size0, 4);
    ASSERT_EQ(Call(6, 7, &code, &size0), "");
    EXPECT_EQ(size0, 6);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDynamicMode, SizeOverflowTest,
                         ::testing::Values(GJ_DYNAMIC_STATIC, GJ_DYNAMIC_AUTO,
                                           GJ_DYNAMIC_DYNAMIC),
                         [](const auto& info) {
                           switch (info.param) {
                             case GJ_DYNAMIC_STATIC:
                               return std::string("Static");
                             case GJ_DYNAMIC_AUTO:
                               return std::string("Auto");
                             default:
                               return std::string("Dynamic");
                           }
                         });

}  // namespace
