// Extern convolution steps with fused epilogues (jit/steps/conv_epilogue.h,
// jit/steps/conv_step.h): the plans they make and their results against the
// eager interpreter. ctest also runs these with GJ_NUM_THREADS=1 and =3
// (tests/CMakeLists.txt), so images run serially and in parallel.

#include "jit/steps/conv_step.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_builder.h"
#include "core/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/steps/conv_epilogue.h"
#include "jit/steps/onednn_conv.h"
#include "runtime/tensor_copy.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::SharedJit;

// A convolution's geometry; spatial lists have one value per spatial dim.
struct Conv {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  Shape in, kernel, stride, padding, dilation;
  bool bias = true;
  bool transposed = false;

  int spatial() const { return static_cast<int>(in.size()); }
  Shape InputShape() const {
    Shape s = {batch, in_channels};
    s.insert(s.end(), in.begin(), in.end());
    return s;
  }
  Shape WeightShape() const {
    Shape s = transposed ? Shape{in_channels, out_channels / groups}
                         : Shape{out_channels, in_channels / groups};
    s.insert(s.end(), kernel.begin(), kernel.end());
    return s;
  }
  Shape OutputShape() const {
    Shape s = {batch, out_channels};
    for (int d = 0; d < spatial(); ++d) {
      const int64_t span = dilation[d] * (kernel[d] - 1) + 1;
      s.push_back(transposed ? (in[d] - 1) * stride[d] - 2 * padding[d] + span
                             : (in[d] + 2 * padding[d] - span) / stride[d] + 1);
    }
    return s;
  }
  std::string ToString() const {
    return absl::StrCat("[", absl::StrJoin(InputShape(), "x"), "] * [",
                        absl::StrJoin(WeightShape(), "x"), "] stride ",
                        absl::StrJoin(stride, "x"), " padding ",
                        absl::StrJoin(padding, "x"), " dilation ",
                        absl::StrJoin(dilation, "x"), " groups ", groups,
                        bias ? " bias" : "");
  }
};

Arg IntList(const Shape& values) {
  std::vector<Arg> list;
  for (int64_t v : values) list.push_back(Arg::Int(v));
  return Arg::OfList(std::move(list));
}

enum class Epilogue { kNone, kRelu, kResidualRelu, kGeluScale };

// conv(x, w, b) followed by `epilogue`; inputs x, w[, b][, res].
std::shared_ptr<const Graph> ConvGraph(const Conv& c, Epilogue epilogue) {
  GraphBuilder b("conv");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  EXPECT_TRUE(b.AddPlaceholder("w").ok());
  if (c.bias) EXPECT_TRUE(b.AddPlaceholder("b").ok());
  if (epilogue == Epilogue::kResidualRelu) {
    EXPECT_TRUE(b.AddPlaceholder("res").ok());
  }
  const auto node = [&](const std::string& name, const std::string& target,
                        std::vector<Arg> args) {
    auto n = b.AddNode(name, target, std::move(args));
    EXPECT_TRUE(n.ok()) << n.status();
  };
  node("v0", "aten.convolution.default",
       {Arg::Ref("x"), Arg::Ref("w"), c.bias ? Arg::Ref("b") : Arg::None(),
        IntList(c.stride), IntList(c.padding), IntList(c.dilation),
        Arg::Bool(c.transposed), IntList(Shape(c.spatial(), 0)),
        Arg::Int(c.groups)});
  std::string out = "v0";
  switch (epilogue) {
    case Epilogue::kNone:
      break;
    case Epilogue::kRelu:
      node("v1", "aten.relu.default", {Arg::Ref("v0")});
      out = "v1";
      break;
    case Epilogue::kResidualRelu:
      node("v1", "aten.add.Tensor", {Arg::Ref("v0"), Arg::Ref("res")});
      node("v2", "aten.relu.default", {Arg::Ref("v1")});
      out = "v2";
      break;
    case Epilogue::kGeluScale:
      node("v1", "aten.gelu.default", {Arg::Ref("v0")});
      node("v2", "aten.mul.Scalar", {Arg::Ref("v1"), Arg::Float(0.5)});
      out = "v2";
      break;
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(out)}).ok());
  auto graph = b.Finish();
  EXPECT_TRUE(graph.ok()) << graph.status();
  return std::shared_ptr<const Graph>(std::move(*graph));
}

std::vector<Tensor> ConvInputs(const Conv& c, Epilogue epilogue, DType dtype,
                               uint64_t seed) {
  std::vector<Tensor> inputs = {RandomTensor(dtype, c.InputShape(), seed),
                                RandomTensor(dtype, c.WeightShape(), seed + 1)};
  if (c.bias) inputs.push_back(RandomTensor(dtype, {c.out_channels}, seed + 2));
  if (epilogue == Epilogue::kResidualRelu) {
    inputs.push_back(RandomTensor(dtype, c.OutputShape(), seed + 3));
  }
  return inputs;
}

int ConvSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) n += s.conv != nullptr;
  return n;
}

// A sum of `terms` products of values in [-2, 2], rounded in BLAS's order
// and the epilogue's rather than the eager kernel's.
double ConvTolerance(DType dtype, int64_t terms) {
  return (dtype == DType::kFloat32 ? 2e-6 : 1e-14) *
         static_cast<double>(terms + 8);
}

Conv Conv2d(int64_t batch, int64_t cin, int64_t cout, int64_t h, int64_t w,
            int64_t k, int64_t stride, int64_t pad) {
  Conv c;
  c.batch = batch;
  c.in_channels = cin;
  c.out_channels = cout;
  c.in = {h, w};
  c.kernel = {k, k};
  c.stride = {stride, stride};
  c.padding = {pad, pad};
  c.dilation = {1, 1};
  return c;
}

TEST(ConvStepTest, ConvBiasReluIsOneConvStepWithItsEpilogue) {
  const Conv c = Conv2d(2, 3, 4, 8, 8, 3, 1, 1);
  const Plan plan =
      PlanOfInputs(*ConvGraph(c, Epilogue::kRelu),
                   ConvInputs(c, Epilogue::kRelu, DType::kFloat32, 1));
  ASSERT_EQ(plan.steps.size(), 1u) << plan.ToString();
  ASSERT_NE(plan.steps[0].conv, nullptr);
  EXPECT_EQ(plan.steps[0].conv->rows(), 27);
  EXPECT_EQ(plan.steps[0].conv->cols(), 64);
  EXPECT_FALSE(plan.steps[0].conv->pointwise());
  const std::string text = plan.ToString();
  EXPECT_THAT(text, HasSubstr("conv aten.convolution.default float32 "
                              "[2x3x8x8] * [4x3x3x3] stride 1x1 padding 1x1 "
                              "dilation 1x1 groups 1"));
  // " on oneDNN <impl> into <layout>" in between unless GJ_ONEDNN=0.
  EXPECT_EQ(plan.steps[0].conv->onednn.has_value(), OneDnnEnabled());
  EXPECT_THAT(text, HasSubstr(" with epilogue computing v1"));
  EXPECT_THAT(text, HasSubstr("relu"));
}

TEST(ConvStepTest, ResidualAndScalarConsumersFuseIntoOneStep) {
  const Conv c = Conv2d(2, 4, 4, 6, 6, 1, 1, 0);
  for (Epilogue e : {Epilogue::kResidualRelu, Epilogue::kGeluScale}) {
    const Plan plan =
        PlanOfInputs(*ConvGraph(c, e), ConvInputs(c, e, DType::kFloat32, 1));
    ASSERT_EQ(plan.steps.size(), 1u) << plan.ToString();
    EXPECT_EQ(ConvSteps(plan), 1);
    EXPECT_TRUE(plan.steps[0].conv->pointwise());
  }
}

TEST(ConvStepTest, BareConvGetsAStoringEpilogue) {
  Conv c = Conv2d(1, 2, 3, 5, 5, 3, 2, 0);
  c.bias = false;
  const Plan plan =
      PlanOfInputs(*ConvGraph(c, Epilogue::kNone),
                   ConvInputs(c, Epilogue::kNone, DType::kFloat64, 1));
  ASSERT_EQ(plan.steps.size(), 1u) << plan.ToString();
  EXPECT_EQ(ConvSteps(plan), 1);
}

TEST(ConvStepTest, ResultReadElsewhereIsStoredThenRead) {
  // The result is also a graph output: it must exist in memory, so the
  // conv step stores it and the relu stays a kernel of its own.
  GraphBuilder b("both");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddNode("v0", "aten.convolution.default",
                        {Arg::Ref("x"), Arg::Ref("w"), Arg::None(),
                         IntList({1}), IntList({0}), IntList({1}),
                         Arg::Bool(false), IntList({0}), Arg::Int(1)})
                  .ok());
  ASSERT_TRUE(b.AddNode("v1", "aten.relu.default", {Arg::Ref("v0")}).ok());
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("v0"), Arg::Ref("v1")}).ok());
  std::shared_ptr<const Graph> graph(std::move(*b.Finish()));
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 3, 10}, 1),
      RandomTensor(DType::kFloat32, {5, 3, 3}, 2)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  ASSERT_EQ(plan.steps.size(), 2u) << plan.ToString();
  EXPECT_EQ(ConvSteps(plan), 1);
  ExpectJitMatchesEager(graph, inputs, ConvTolerance(DType::kFloat32, 9));
}

TEST(ConvStepTest, TransposedAndHalfConvolutionsStayEagerAndSayWhy) {
  std::string log;
  SetLogTopics("codegen");
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    if (topic == LogTopic::kCodegen) log += std::string(message);
  });
  Conv transposed = Conv2d(2, 4, 6, 5, 5, 3, 2, 1);
  transposed.transposed = true;
  const Conv half = Conv2d(2, 3, 4, 6, 6, 3, 1, 1);
  struct Case {
    Conv conv;
    DType dtype;
    double tol;
  };
  for (const Case& c : {Case{transposed, DType::kFloat32, 1e-5},
                        Case{transposed, DType::kFloat64, 1e-12},
                        Case{half, DType::kFloat16, 1e-2},
                        Case{half, DType::kBFloat16, 5e-2}}) {
    SCOPED_TRACE(absl::StrCat(DTypeName(c.dtype), " ", c.conv.ToString()));
    auto graph = ConvGraph(c.conv, Epilogue::kRelu);
    const std::vector<Tensor> inputs =
        ConvInputs(c.conv, Epilogue::kRelu, c.dtype, 7);
    const Plan plan = PlanOfInputs(*graph, inputs);
    EXPECT_EQ(ConvSteps(plan), 0) << plan.ToString();
    ASSERT_FALSE(plan.steps.empty());
    EXPECT_FALSE(plan.steps[0].is_kernel);
    ExpectJitMatchesEager(graph, inputs, c.tol);
  }
  SetLogSink(nullptr);
  SetLogTopics("");
  EXPECT_THAT(log, HasSubstr("v0 (aten.convolution.default): no conv step: "
                             "transposed convolution"));
  EXPECT_THAT(log, HasSubstr("v0 (aten.convolution.default): no conv step: "
                             "float16: conv steps take float32 and float64"));
  EXPECT_THAT(log, HasSubstr("no conv step: bfloat16"));
}

// A dynamic entry over the batch: one ConvStep that binds the batch per
// call, its epilogue taking the symbol, for every geometry the static steps
// take (padding, stride, 1x1 read in place, groups, a residual input).
TEST(ConvStepTest, DynamicBatchIsOneConvStepBoundPerCall) {
  struct Case {
    Conv conv;
    Epilogue epilogue;
  };
  Conv grouped = Conv2d(2, 4, 6, 7, 7, 3, 1, 1);
  grouped.groups = 2;
  Conv no_bias = Conv2d(2, 3, 5, 9, 9, 3, 2, 1);
  no_bias.bias = false;
  const Case cases[] = {{Conv2d(2, 3, 4, 6, 6, 3, 1, 1), Epilogue::kRelu},
                        {no_bias, Epilogue::kNone},
                        {Conv2d(2, 8, 4, 5, 5, 1, 1, 0), Epilogue::kGeluScale},
                        {grouped, Epilogue::kResidualRelu}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.conv.ToString());
    auto graph = ConvGraph(c.conv, c.epilogue);
    std::vector<std::vector<Tensor>> calls;
    for (int64_t batch : {2, 3, 5, 8, 13}) {
      Conv sized = c.conv;
      sized.batch = batch;
      calls.push_back(ConvInputs(sized, c.epilogue, DType::kFloat32, batch));
    }
    std::vector<DynamicDim> dynamic = {{0, 0}};
    if (c.epilogue == Epilogue::kResidualRelu) {
      dynamic.push_back({c.conv.bias ? 3 : 2, 0});
    }
    testing::DynamicEntry entry =
        testing::MakeDynamicEntry(graph, calls[0], dynamic);
    ASSERT_NE(entry.graph, nullptr);
    auto plan = SharedJit().PlanFor(*entry.graph, entry.spec);
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(ConvSteps(*plan), 1) << plan->ToString();
    EXPECT_THAT(plan->ToString(),
                HasSubstr(absl::StrCat("[s0x", c.conv.in_channels, "x")));
    auto exe = testing::ExpectDynamicJitMatchesEager(
        graph, dynamic, calls,
        ConvTolerance(DType::kFloat32, c.conv.in_channels * 9));
    ASSERT_NE(exe, nullptr);
    EXPECT_THAT(testing::WithoutBackend(exe->Describe()),
                HasSubstr("jit: 1 fused kernels, 0 eager nodes"));
  }
}

TEST(ConvStepTest, ImagesPerChunkGiveEachChunkAMillionMultiplyAdds) {
  ConvStep step;
  step.in_channels = 64;
  step.out_channels = 64;
  step.kernel = {1, 3, 3};
  step.out = {1, 56, 56};
  EXPECT_EQ(ConvImagesPerChunk(step), 1);
  step.in_channels = step.out_channels = 2;
  step.kernel = {1, 1, 1};
  step.out = {1, 8, 8};
  EXPECT_EQ(ConvImagesPerChunk(step), 4096);
}

// `t` [N, C, spatial...] stored channels-last (channels innermost).
Tensor ChannelsLast(const Tensor& t) {
  const Shape sizes(t.sizes().begin(), t.sizes().end());
  Shape strides(t.dim());
  int64_t stride = t.size(1);
  strides[1] = 1;
  for (int d = t.dim() - 1; d >= 2; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  strides[0] = stride;
  Tensor storage = RandomTensor(t.dtype(), {t.numel()}, 97);
  Tensor view = storage.AsStrided(sizes, strides, 0);
  CopyInto(view, t);
  return view;
}

// A random convolution: batch 1..4, groups 1, 2 or depthwise, kernels 1x1,
// 3x3, 5x1 (and their 1-D and 3-D kin), stride 1 or 2, padding 0..2,
// dilation 1 or 2.
Conv RandomConv(std::mt19937_64& rng, int spatial) {
  const auto pick = [&](std::initializer_list<int64_t> values) {
    std::vector<int64_t> v(values);
    return v[rng() % v.size()];
  };
  Conv c;
  c.batch = pick({1, 2, 3, 4});
  const int64_t groups_kind = pick({0, 0, 1, 2});  // 1, 2, depthwise
  const int64_t per_group_in = pick({1, 3, 8});
  c.groups = groups_kind == 0 ? 1 : groups_kind == 1 ? 2 : pick({4, 6});
  c.in_channels = c.groups * (groups_kind == 2 ? 1 : per_group_in);
  c.out_channels =
      c.groups * (groups_kind == 2 ? pick({1, 2}) : pick({1, 5, 16}));
  const int64_t shape_kind = pick({0, 1, 2});  // 1x1, 3x3, 5x1
  for (int d = 0; d < spatial; ++d) {
    const int64_t k = shape_kind == 0   ? 1
                      : shape_kind == 1 ? 3
                      : d == 0          ? 5
                                        : 1;
    c.kernel.push_back(k);
    c.stride.push_back(pick({1, 1, 2}));
    c.padding.push_back(k == 1 ? pick({0, 0, 1}) : pick({0, 1, 2}));
    c.dilation.push_back(pick({1, 1, 2}));
    const int64_t span = c.dilation.back() * (k - 1) + 1;
    c.in.push_back(std::max<int64_t>(span, pick({1, 4, 7, 12})) +
                   (spatial == 3 ? 0 : pick({0, 3})));
  }
  c.bias = pick({0, 1}) == 1;
  return c;
}

class ConvConformanceTest : public ::testing::TestWithParam<DType> {};

TEST_P(ConvConformanceTest, RandomShapesWithEpilogues) {
  const DType dtype = GetParam();
  std::mt19937_64 rng(dtype == DType::kFloat32 ? 1 : 2);
  for (int spatial : {2, 2, 1, 3}) {
    for (int i = 0; i < 12; ++i) {
      const Conv c = RandomConv(rng, spatial);
      const Epilogue e =
          static_cast<Epilogue>(rng() % 4);  // none, relu, residual, gelu
      SCOPED_TRACE(
          absl::StrCat(c.ToString(), " epilogue ", static_cast<int>(e)));
      auto graph = ConvGraph(c, e);
      const std::vector<Tensor> inputs = ConvInputs(c, e, dtype, 10 + i);
      const Plan plan = PlanOfInputs(*graph, inputs);
      // One step: the convolution with its bias and consumers fused.
      EXPECT_EQ(plan.steps.size(), 1u) << plan.ToString();
      EXPECT_EQ(ConvSteps(plan), 1) << plan.ToString();
      int64_t terms = c.in_channels / c.groups;
      for (int64_t k : c.kernel) terms *= k;
      ExpectJitMatchesEager(graph, inputs, ConvTolerance(dtype, terms));
    }
  }
}

TEST_P(ConvConformanceTest, NonContiguousOperands) {
  const DType dtype = GetParam();
  std::vector<Conv> convs = {Conv2d(2, 6, 8, 9, 7, 3, 1, 1),
                             Conv2d(3, 8, 4, 6, 6, 1, 1, 0),
                             Conv2d(2, 4, 4, 7, 7, 1, 2, 0)};
  convs[0].groups = 2;
  for (const Conv& c : convs) {
    SCOPED_TRACE(c.ToString());
    for (Epilogue e : {Epilogue::kRelu, Epilogue::kResidualRelu}) {
      std::vector<Tensor> inputs = ConvInputs(c, e, dtype, 20);
      int64_t terms = c.in_channels / c.groups;
      for (int64_t k : c.kernel) terms *= k;
      const double tol = ConvTolerance(dtype, terms);
      auto graph = ConvGraph(c, e);
      std::vector<Tensor> strided = inputs;
      strided[0] = testing::NonContiguousCopy(inputs[0]);
      ExpectJitMatchesEager(graph, strided, tol);
      strided[0] = ChannelsLast(inputs[0]);
      ExpectJitMatchesEager(graph, strided, tol);
      EXPECT_EQ(ConvSteps(PlanOfInputs(*graph, strided)), 1);
      strided = inputs;
      strided[1] = testing::NonContiguousCopy(inputs[1]);
      if (c.bias) strided[2] = testing::NonContiguousCopy(inputs[2]);
      ExpectJitMatchesEager(graph, strided, tol);
      strided[1] = ChannelsLast(inputs[1]);
      ExpectJitMatchesEager(graph, strided, tol);
      // An offset view: every other image of a larger batch.
      Conv doubled = c;
      doubled.batch = 2 * c.batch;
      Tensor big = RandomTensor(dtype, doubled.InputShape(), 21);
      Shape strides(big.strides().begin(), big.strides().end());
      strides[0] *= 2;
      Tensor odd = big.AsStrided(inputs[0].sizes(), strides, big.stride(0));
      strided = inputs;
      strided[0] = odd;
      ExpectJitMatchesEager(graph, strided, tol);
    }
  }
}

TEST_P(ConvConformanceTest, LargerImagesSplitAcrossThreads) {
  const DType dtype = GetParam();
  Conv c = Conv2d(4, 16, 32, 20, 20, 3, 1, 1);
  const std::vector<Tensor> inputs =
      ConvInputs(c, Epilogue::kResidualRelu, dtype, 30);
  ExpectJitMatchesEager(ConvGraph(c, Epilogue::kResidualRelu), inputs,
                        ConvTolerance(dtype, 16 * 9));
  c = Conv2d(3, 64, 32, 14, 14, 1, 1, 0);
  ExpectJitMatchesEager(ConvGraph(c, Epilogue::kRelu),
                        ConvInputs(c, Epilogue::kRelu, dtype, 31),
                        ConvTolerance(dtype, 64));
}

INSTANTIATE_TEST_SUITE_P(Float, ConvConformanceTest,
                         ::testing::Values(DType::kFloat32, DType::kFloat64),
                         [](const auto& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace guardjit
