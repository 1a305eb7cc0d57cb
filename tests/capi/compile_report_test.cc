// gj_graph_compile_report: generated code per target, and emulated kernels
// checked against eager (what `guardjit compile --emulate` prints).

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "tests/capi/capi_test_util.h"

namespace gjtest {
namespace {

using ::testing::HasSubstr;

constexpr char kSoftmax[] = R"pb(
  name: "softmax"
  placeholders { name: "x" }
  nodes {
    name: "sm"
    target: "aten._softmax.default"
    args { ref: "x" }
    args { i: -1 }
    args { b: false }
  }
  outputs { ref: "sm" }
)pb";

constexpr char kLayerNorm[] = R"pb(
  name: "layer_norm"
  placeholders { name: "x" }
  placeholders { name: "w" }
  placeholders { name: "b" }
  nodes {
    name: "ln"
    target: "aten.native_layer_norm.default"
    args { ref: "x" }
    args { list { items { i: 48 } } }
    args { ref: "w" }
    args { ref: "b" }
    args { f: 1e-05 }
  }
  nodes {
    name: "out"
    target: "getitem"
    args { ref: "ln" }
    args { i: 0 }
  }
  outputs { ref: "out" }
)pb";

constexpr char kHalfChain[] = R"pb(
  name: "half_chain"
  placeholders { name: "x" }
  placeholders { name: "y" }
  nodes {
    name: "mul"
    target: "aten.mul.Tensor"
    args { ref: "x" }
    args { ref: "y" }
  }
  nodes {
    name: "sig"
    target: "aten.sigmoid.default"
    args { ref: "mul" }
  }
  nodes {
    name: "add"
    target: "aten.add.Tensor"
    args { ref: "sig" }
    args { ref: "x" }
  }
  outputs { ref: "add" }
)pb";

// A tensor description: shape and dtype, no data.
struct Meta {
  Meta(std::vector<int64_t> shape, DLDataType dtype) : shape(std::move(shape)) {
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int>(this->shape.size());
    dl.dtype = dtype;
    dl.shape = this->shape.data();
  }
  Meta(const Meta&) = delete;
  Meta& operator=(const Meta&) = delete;
  std::vector<int64_t> shape;
  DLTensor dl{};
};

constexpr DLDataType kF32 = {kDLFloat, 32, 1};
constexpr DLDataType kF16 = {kDLFloat, 16, 1};

class CompileReportTest : public ::testing::Test {
 protected:
  GraphPtr Load(const std::string& text) {
    gj_graph* graph = nullptr;
    EXPECT_TRUE(Ok(gj_graph_from_text(context_.get(), text.data(), text.size(),
                                      nullptr, &graph)));
    return GraphPtr(graph);
  }

  // The report's text, or "" with *error set.
  std::string Report(const gj_graph* graph,
                     const std::vector<const DLTensor*>& inputs,
                     const char* target, bool emulate, gj_compile_check* check,
                     gj_error** error) {
    gj_compile_report_options options;
    gj_compile_report_options_init(&options);
    options.target = target;
    options.emulate = emulate ? 1 : 0;
    char* text = nullptr;
    *error = gj_graph_compile_report(graph, inputs.data(), inputs.size(),
                                     &options, &text, check);
    if (*error != nullptr) {
      EXPECT_EQ(text, nullptr);
      return "";
    }
    std::string result = text;
    gj_string_destroy(text);
    return result;
  }

  ContextPtr context_ = MakeContext();
};

// NVRTC missing (a build without CUDA, a machine without the toolkit)
// skips the CUDA cases.
#define SKIP_WITHOUT_NVRTC(error)                                       \
  if (error != nullptr && gj_error_get_code(error) == GJ_UNAVAILABLE) { \
    const std::string message = gj_error_message(error);                \
    gj_error_destroy(error);                                            \
    GTEST_SKIP() << message;                                            \
  }

TEST_F(CompileReportTest, CudaSoftmaxShowsSourceAndRegisters) {
  GraphPtr graph = Load(kSoftmax);
  Meta x({4, 100}, kF32);
  gj_compile_check check;
  gj_compile_check_init(&check);
  gj_error* error = nullptr;
  const std::string text =
      Report(graph.get(), {&x.dl}, "cuda:sm_90", false, &check, &error);
  SKIP_WITHOUT_NVRTC(error);
  ASSERT_TRUE(Ok(error));
  EXPECT_THAT(text, HasSubstr("graph 'softmax' for cuda:sm_90"));
  EXPECT_THAT(text, HasSubstr("extern \"C\" __global__"));
  EXPECT_THAT(text, HasSubstr("registers"));
  EXPECT_THAT(text, HasSubstr("spill"));
  EXPECT_THAT(text, HasSubstr("sm_90 CUBIN"));
  EXPECT_EQ(check.checked, 0);
}

struct EmulateCase {
  const char* name;
  const char* graph;
  std::vector<std::pair<std::vector<int64_t>, DLDataType>> inputs;
};

class CompileReportEmulateTest
    : public CompileReportTest,
      public ::testing::WithParamInterface<EmulateCase> {};

TEST_P(CompileReportEmulateTest, WithinTolerance) {
  const EmulateCase& c = GetParam();
  GraphPtr graph = Load(c.graph);
  std::vector<std::unique_ptr<Meta>> metas;
  std::vector<const DLTensor*> inputs;
  for (const auto& [shape, dtype] : c.inputs) {
    metas.push_back(std::make_unique<Meta>(shape, dtype));
    inputs.push_back(&metas.back()->dl);
  }
  gj_compile_check check;
  gj_compile_check_init(&check);
  gj_error* error = nullptr;
  const std::string text =
      Report(graph.get(), inputs, "cuda:sm_90", true, &check, &error);
  SKIP_WITHOUT_NVRTC(error);
  ASSERT_TRUE(Ok(error));
  EXPECT_EQ(check.checked, 1);
  EXPECT_EQ(check.run_code, GJ_OK) << text;
  EXPECT_EQ(check.within_tolerance, 1) << text;
  EXPECT_TRUE(std::isfinite(check.max_abs_error));
  EXPECT_THAT(text, HasSubstr("emulated vs eager"));
  EXPECT_THAT(text, HasSubstr("kernels on cuda-simt"));
}

INSTANTIATE_TEST_SUITE_P(
    Graphs, CompileReportEmulateTest,
    ::testing::Values(
        EmulateCase{"softmax", kSoftmax, {{{6, 300}, kF32}}},
        EmulateCase{"layer_norm",
                    kLayerNorm,
                    {{{5, 48}, kF32}, {{48}, kF32}, {{48}, kF32}}},
        EmulateCase{"half_chain", kHalfChain, {{{3, 70}, kF16}, {{70}, kF16}}}),
    [](const ::testing::TestParamInfo<EmulateCase>& info) {
      return std::string(info.param.name);
    });

constexpr char kEmbedding[] = R"pb(
  name: "embedding"
  placeholders { name: "weight" }
  placeholders { name: "indices" }
  nodes {
    name: "emb"
    target: "aten.embedding.default"
    args { ref: "weight" }
    args { ref: "indices" }
  }
  outputs { ref: "emb" }
)pb";

// Random indices in [0, 8) into 3 rows: some are out of range, which the
// report shows as a failed run rather than failing itself.
TEST_F(CompileReportTest, IndexOutOfRangeIsAFailedRun) {
  GraphPtr graph = Load(kEmbedding);
  Meta weight({3, 4}, kF32);
  Meta indices({32}, DLDataType{kDLInt, 64, 1});
  gj_compile_check check;
  gj_compile_check_init(&check);
  gj_error* error = nullptr;
  const std::string text = Report(graph.get(), {&weight.dl, &indices.dl},
                                  "cuda:sm_90", true, &check, &error);
  SKIP_WITHOUT_NVRTC(error);
  ASSERT_TRUE(Ok(error));
  EXPECT_EQ(check.checked, 1);
  EXPECT_NE(check.run_code, GJ_OK) << text;
  EXPECT_EQ(check.within_tolerance, 0);
  EXPECT_THAT(text, HasSubstr("run failed"));
}

TEST_F(CompileReportTest, CpuTargetShowsLlvmIrAndCompares) {
  GraphPtr graph = Load(kSoftmax);
  Meta x({4, 100}, kF32);
  gj_compile_check check;
  gj_compile_check_init(&check);
  gj_error* error = nullptr;
  const std::string text =
      Report(graph.get(), {&x.dl}, "cpu", true, &check, &error);
  ASSERT_TRUE(Ok(error));
  EXPECT_THAT(text, HasSubstr("graph 'softmax' for cpu"));
  EXPECT_THAT(text, HasSubstr("LLVM IR before O3"));
  EXPECT_THAT(text, HasSubstr("define"));
  EXPECT_EQ(check.checked, 1);
  EXPECT_EQ(check.run_code, GJ_OK) << text;
  EXPECT_EQ(check.within_tolerance, 1) << text;
}

TEST_F(CompileReportTest, NullTargetIsCpuAndCheckIsOptional) {
  GraphPtr graph = Load(kSoftmax);
  Meta x({2, 8}, kF32);
  const DLTensor* inputs[] = {&x.dl};
  char* text = nullptr;
  ASSERT_TRUE(Ok(gj_graph_compile_report(graph.get(), inputs, 1, nullptr, &text,
                                         nullptr)));
  EXPECT_THAT(std::string(text), HasSubstr("for cpu"));
  gj_string_destroy(text);
}

TEST_F(CompileReportTest, UnknownTarget) {
  GraphPtr graph = Load(kSoftmax);
  Meta x({2, 8}, kF32);
  gj_compile_check check;
  gj_compile_check_init(&check);
  check.checked = 7;  // zeroed on entry
  gj_error* error = nullptr;
  Report(graph.get(), {&x.dl}, "tpu:v5", false, &check, &error);
  EXPECT_TRUE(IsError(error, GJ_INVALID_ARGUMENT,
                      {"gj_graph_compile_report", "unknown target 'tpu:v5'"}));
  EXPECT_EQ(check.checked, 0);
  EXPECT_EQ(check.struct_size, sizeof(gj_compile_check));
}

TEST_F(CompileReportTest, WrongInputCountAndDtype) {
  GraphPtr graph = Load(kSoftmax);
  Meta x({2, 8}, kF32);
  gj_error* error = nullptr;
  Report(graph.get(), {&x.dl, &x.dl}, "cpu", false, nullptr, &error);
  EXPECT_TRUE(IsError(error, GJ_INVALID_ARGUMENT, {"has 1 inputs, got 2"}));

  Meta bad({2, 8}, DLDataType{kDLFloat, 8, 1});
  Report(graph.get(), {&bad.dl}, "cpu", false, nullptr, &error);
  EXPECT_TRUE(IsError(error, GJ_INVALID_ARGUMENT, {"input 0 ('x')"}));

  Report(graph.get(), {nullptr}, "cpu", false, nullptr, &error);
  EXPECT_TRUE(IsError(error, GJ_INVALID_ARGUMENT, {"input 0 ('x') is NULL"}));
}

TEST_F(CompileReportTest, NullArguments) {
  GraphPtr graph = Load(kSoftmax);
  char* text = nullptr;
  EXPECT_TRUE(IsError(gj_graph_compile_report(graph.get(), nullptr, 1, nullptr,
                                              nullptr, nullptr),
                      GJ_INVALID_ARGUMENT, {"out_text is NULL"}));
  EXPECT_TRUE(IsError(
      gj_graph_compile_report(nullptr, nullptr, 0, nullptr, &text, nullptr),
      GJ_INVALID_ARGUMENT, {"graph is NULL"}));
  gj_compile_report_options options{};
  EXPECT_TRUE(IsError(gj_graph_compile_report(graph.get(), nullptr, 0, &options,
                                              &text, nullptr),
                      GJ_INVALID_ARGUMENT, {"struct_size"}));
  EXPECT_EQ(text, nullptr);
}

}  // namespace
}  // namespace gjtest
