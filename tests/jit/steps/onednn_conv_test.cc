// Convolution steps on oneDNN (jit/steps/onednn_conv.h): which convolutions
// are planned on it and how (constants packed, the bias in the primitive, the
// epilogue reading oneDNN's layout, channels-last activations between them,
// the layout setting), and their results against the eager interpreter for
// the layouts oneDNN picks (blocked with padded channels, channels last),
// depthwise and grouped convolutions, 1-D and 3-D ones. How the steps run
// (parts across the pool, reorders, concurrency): onednn_conv_step_test.cc.
// The conformance suite (tests/conformance/convolution_conformance_test.cc)
// runs the geometries with weights as inputs; ctest runs these at 1 and 3
// threads too.

#include "jit/steps/onednn_conv.h"

#include <dirent.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/jit_compiler.h"
#include "runtime/eager_interpreter.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/steps/onednn_conv_test_util.h"
#include "tests/scoped_env.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::onednn::AddConv2d;
using testing::onednn::AddWeight;
using testing::onednn::ConvNet;
using testing::onednn::Layer;
using testing::onednn::List;
using testing::onednn::OneDnnConvTest;
using testing::onednn::OneDnnSteps;
using testing::onednn::ResultBlocks;
using testing::onednn::ScopedLayout;

TEST_F(OneDnnConvTest, ConstantWeightsArePackedAndTheBiasJoinsThePrimitive) {
  const auto graph = ConvNet(2, 16, {{32, 3, 1, 1}, {32, 1}});
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {1, 16, 12, 12}, 1)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  ASSERT_EQ(OneDnnSteps(plan), 2) << plan.ToString();
  const PlanStep& first = plan.steps[0];
  ASSERT_NE(first.conv, nullptr);
  const ConvStep::OneDnn& dnn = *first.conv->onednn;
  EXPECT_GE(dnn.weight_node, 0);
  EXPECT_GE(dnn.bias_node, 0);
  EXPECT_FALSE(dnn.impl.empty());
  // The epilogue reads the result and writes the relu: no bias parameter.
  EXPECT_EQ(first.kernel.kernel.buffers.size(), 2u) << plan.ToString();
  EXPECT_THAT(plan.ToString(), HasSubstr(" on oneDNN "));
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

TEST_F(OneDnnConvTest, ResidualBlocksWithPaddedChannelBlocksMatchEager) {
  // 24 channels: blocked layouts pad them to 32.
  const auto graph =
      ConvNet(2, 3, {{24, 3, 2, 1}, {24, 3, 1, 1}, {24, 3, 1, 1}, {40, 1}},
              DType::kFloat32, /*residual_at=*/1);
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE(absl::StrCat("batch ", batch));
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {batch, 3, 17, 15}, 2 + batch)};
    EXPECT_EQ(OneDnnSteps(PlanOfInputs(*graph, inputs)), 4);
    ExpectJitMatchesEager(graph, inputs, 1e-4);
  }
}

TEST_F(OneDnnConvTest, DepthwiseGroupedDilatedAndBiaslessMatchEager) {
  Layer depthwise = {32, 3, 1, 1, /*groups=*/32};
  Layer grouped = {48, 3, 2, 1, /*groups=*/4};
  Layer dilated = {16, 3, 1, 2, 1, /*dilation=*/2};
  dilated.bias = false;
  const auto graph =
      ConvNet(2, 32, {depthwise, grouped, {96, 1}, {96, 3, 1, 1, 96}, dilated});
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 32, 14, 14}, 3)};
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*graph, inputs)), 5);
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

TEST_F(OneDnnConvTest, OneAndThreeSpatialDimsMatchEager) {
  const auto conv1d = ConvNet(1, 8, {{16, 5, 2, 2}, {16, 3, 1, 1, 16}});
  const std::vector<Tensor> x1 = {RandomTensor(DType::kFloat32, {2, 8, 33}, 4)};
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*conv1d, x1)), 2);
  ExpectJitMatchesEager(conv1d, x1, 1e-4);
  const auto conv3d = ConvNet(3, 4, {{16, 3, 1, 1}, {8, 1}});
  const std::vector<Tensor> x3 = {
      RandomTensor(DType::kFloat32, {1, 4, 5, 6, 7}, 5)};
  EXPECT_EQ(OneDnnSteps(PlanOfInputs(*conv3d, x3)), 2);
  ExpectJitMatchesEager(conv3d, x3, 1e-4);
}

// conv -> relu -> max pool -> conv -> conv: the activations between the
// convolutions are laid out channels last (the convolutions read them in
// place, the pool reads its input through its window at those strides: a
// pool step, or as a kernel looping with channels innermost), the graph's
// output stays contiguous.
TEST_F(OneDnnConvTest, ActivationsBetweenConvolutionsAreChannelsLast) {
  GraphBuilder b("stem");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  const auto constant = [&](const std::string& name, const Shape& shape,
                            uint64_t seed) { AddWeight(b, name, shape, seed); };
  constant("w0", {16, 3, 3, 3}, 1);
  constant("w1", {16, 16, 3, 3}, 2);
  constant("w2", {8, 16, 1, 1}, 3);
  const auto conv = [&](const std::string& name, const std::string& x,
                        const std::string& w,
                        int64_t pad) { AddConv2d(b, name, x, w, pad); };
  conv("c0", "x", "w0", 1);
  testing::AddNode(b, "r0", "aten.relu.default", {Arg::Ref("c0")});
  testing::AddNode(b, "pool", "aten.max_pool2d_with_indices.default",
                   {Arg::Ref("r0"), testing::Ints({3, 3}),
                    testing::Ints({2, 2}), testing::Ints({1, 1})});
  testing::AddNode(b, "p0", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  conv("c1", "p0", "w1", 1);
  testing::AddNode(b, "r1", "aten.relu.default", {Arg::Ref("c1")});
  conv("c2", "r1", "w2", 0);
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("c2")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {2, 3, 19, 21}, 4)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  ASSERT_EQ(OneDnnSteps(plan), 3) << plan.ToString();
  int convs = 0;
  for (const PlanStep& step : plan.steps) {
    if (step.conv == nullptr) continue;
    const FixedRef& x = step.conv->input;
    // The graph's input as it is; the pooled and relu'd activations channels
    // last: [N, C, H, W] at strides [H*W*C, 1, W*C, C].
    if (convs++ == 0) {
      EXPECT_EQ(x.strides[1], x.sizes[2] * x.sizes[3]) << plan.ToString();
    } else {
      EXPECT_EQ(x.strides[1], 1) << plan.ToString();
      EXPECT_EQ(x.strides[3], x.sizes[1]) << plan.ToString();
    }
  }
  // The pool is a pool step (jit/steps/pool_step.h), no kernel.
  int pool_steps = 0;
  for (const PlanStep& step : plan.steps) {
    pool_steps += step.pool;
    EXPECT_TRUE(step.pool || step.conv != nullptr) << plan.ToString();
  }
  EXPECT_EQ(pool_steps, 1) << plan.ToString();
  ExpectJitMatchesEager(graph, inputs, 1e-4);
  // As a kernel (GJ_POOL_STEP=0) it loops with channels innermost, and the
  // activations around it are channels last alike.
  testing::ScopedEnv off("GJ_POOL_STEP", "0");
  const Plan kernels = PlanOfInputs(*graph, inputs);
  bool pool_seen = false;
  for (const PlanStep& step : kernels.steps) {
    if (!step.is_kernel || step.conv != nullptr) continue;
    pool_seen = true;
    ASSERT_EQ(step.kernel.kernel.outer.size(), 4u) << kernels.ToString();
    EXPECT_EQ(step.kernel.kernel.outer.back().var, 1) << kernels.ToString();
  }
  EXPECT_TRUE(pool_seen) << kernels.ToString();
  for (const PlanStep& step : kernels.steps) {
    if (step.conv != nullptr && step.conv->input.sizes[1] == 16) {
      EXPECT_EQ(step.conv->input.strides[1], 1) << kernels.ToString();
    }
  }
  ExpectJitMatchesEager(graph, inputs, 1e-4);
}

// A convolution's result that kernels or pool steps read other than
// pointwise (a pool computing the relu in its window, a mean over the
// spatial dims) is laid out channels last, as oneDNN writes it: oneDNN
// writes it in place, no epilogue transposes it into [N, C, H, W]. A result
// the graph outputs, or a view reads, stays contiguous.
TEST_F(OneDnnConvTest, ResultsReadByPoolsAreStoredChannelsLast) {
  // Whatever PrefersBlockedResult would pick for c1 on this host.
  ScopedLayout layout("channels_last");
  GraphBuilder b("convbn");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  const auto constant = [&](const std::string& name, const Shape& shape,
                            uint64_t seed) { AddWeight(b, name, shape, seed); };
  constant("w0", {16, 3, 3, 3}, 1);
  constant("w1", {32, 16, 3, 3}, 2);
  constant("w2", {8, 16, 1, 1}, 3);
  const auto conv = [&](const std::string& name, const std::string& x,
                        const std::string& w,
                        int64_t pad) { AddConv2d(b, name, x, w, pad); };
  conv("c0", "x", "w0", 1);
  testing::AddNode(b, "r0", "aten.relu.default", {Arg::Ref("c0")});
  testing::AddNode(
      b, "pool", "aten.max_pool2d_with_indices.default",
      {Arg::Ref("r0"), testing::Ints({2, 2}), testing::Ints({2, 2})});
  testing::AddNode(b, "p0", "getitem", {Arg::Ref("pool"), Arg::Int(0)});
  conv("c1", "p0", "w1", 1);
  testing::AddNode(b, "r1", "aten.relu.default", {Arg::Ref("c1")});
  testing::AddNode(b, "m", "aten.mean.dim",
                   {Arg::Ref("r1"), testing::Ints({2, 3})});
  conv("c2", "p0", "w2", 0);  // an output: stays contiguous
  conv("c3", "p0", "w2", 0);  // flattened by a view: stays contiguous
  testing::AddNode(b, "flat", "aten.view.default",
                   {Arg::Ref("c3"), testing::Ints({3, -1})});
  testing::AddNode(b, "e", "aten.exp.default", {Arg::Ref("flat")});
  ASSERT_TRUE(
      b.SetOutputs({Arg::Ref("m"), Arg::Ref("c2"), Arg::Ref("e")}).ok());
  const auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {3, 3, 18, 14}, 5)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  ASSERT_EQ(OneDnnSteps(plan), 4) << plan.ToString();
  std::vector<std::string> channels_last, contiguous;
  for (const Slot& slot : plan.slots) {
    if (slot.source != Slot::Source::kExtern) continue;
    const std::string& name = graph->node(slot.node).name;
    if (slot.strides.empty()) {
      contiguous.push_back(name);
      continue;
    }
    channels_last.push_back(name);
    // [N, C, H, W] at [H*W*C, 1, W*C, C].
    ASSERT_EQ(slot.strides.size(), 4u);
    EXPECT_TRUE(slot.strides[1].is_const(1)) << name;
    EXPECT_EQ(slot.strides[3].ToString(), slot.sizes[1].ToString()) << name;
  }
  // The max pool's result too: a pool step (jit/steps/pool_step.h) stores it
  // at the slot's strides, and c1, c2 and c3 read it in place.
  EXPECT_THAT(channels_last,
              ::testing::UnorderedElementsAre("c0", "pool", "c1"))
      << plan.ToString();
  EXPECT_THAT(contiguous, ::testing::IsSupersetOf({"c2", "c3"}))
      << plan.ToString();
  // oneDNN writes those two results in place: their epilogues would only
  // copy them.
  std::vector<std::string> in_place;
  for (const PlanStep& step : plan.steps) {
    if (step.conv != nullptr && step.conv->onednn->result_param >= 0) {
      in_place.push_back(graph->node(step.node).name);
    }
  }
  EXPECT_THAT(in_place, ::testing::UnorderedElementsAre("c0", "c1"))
      << plan.ToString();
  ExpectJitMatchesEager(graph, inputs, 1e-4);
  // A dynamic batch: the same layout, one entry for every batch size.
  testing::ExpectDynamicJitMatchesEager(
      graph, {{0, 0}},
      {{RandomTensor(DType::kFloat32, {3, 3, 18, 14}, 6)},
       {RandomTensor(DType::kFloat32, {2, 3, 18, 14}, 7)},
       {RandomTensor(DType::kFloat32, {5, 3, 18, 14}, 8)}},
      1e-4);
}

TEST_F(OneDnnConvTest, Float64AndGjOnednn0StayOnBlas) {
  const auto f64 = ConvNet(2, 8, {{16, 3, 1, 1}}, DType::kFloat64);
  const std::vector<Tensor> x64 = {
      RandomTensor(DType::kFloat64, {1, 8, 6, 6}, 8)};
  const Plan plan64 = PlanOfInputs(*f64, x64);
  EXPECT_EQ(OneDnnSteps(plan64), 0);
  EXPECT_THAT(plan64.ToString(), Not(HasSubstr("oneDNN")));

  const auto graph = ConvNet(2, 8, {{16, 3, 1, 1}, {16, 1}});
  const std::vector<Tensor> x = {
      RandomTensor(DType::kFloat32, {1, 8, 6, 6}, 9)};
  ASSERT_EQ(setenv("GJ_ONEDNN", "0", 1), 0);
  const Plan blas = PlanOfInputs(*graph, x);
  ExpectJitMatchesEager(graph, x, 1e-4);
  ASSERT_EQ(unsetenv("GJ_ONEDNN"), 0);
  EXPECT_EQ(OneDnnSteps(blas), 0);
  int conv_steps = 0;
  for (const PlanStep& s : blas.steps) conv_steps += s.conv != nullptr;
  EXPECT_EQ(conv_steps, 2) << blas.ToString();
}

TEST(PrefersBlockedResultTest, DenseWideConvolutionsWhereOneDnnBlocksBy8) {
  ConvStep conv;
  conv.spatial = 2;
  conv.in_channels = 64;
  conv.out_channels = 64;
  conv.kernel = {1, 3, 3};
  const OneDnnLayout automatic = OneDnnLayout::kAuto;
  EXPECT_TRUE(PrefersBlockedResult(conv, 8, automatic));
  // AVX-512 hosts (blocks of 16), or no blocked primitive.
  EXPECT_FALSE(PrefersBlockedResult(conv, 16, automatic));
  EXPECT_FALSE(PrefersBlockedResult(conv, 0, automatic));
  ConvStep pointwise = conv;
  pointwise.kernel = {1, 1, 1};
  EXPECT_FALSE(PrefersBlockedResult(pointwise, 8, automatic));
  ConvStep rgb = conv;
  rgb.in_channels = 3;
  EXPECT_FALSE(PrefersBlockedResult(rgb, 8, automatic));
  ConvStep depthwise = conv;
  depthwise.groups = 64;
  depthwise.in_channels = 1;
  depthwise.out_channels = 1;
  EXPECT_FALSE(PrefersBlockedResult(depthwise, 8, automatic));
  // The setting overrides the choice either way.
  EXPECT_TRUE(PrefersBlockedResult(rgb, 0, OneDnnLayout::kBlocked));
  EXPECT_FALSE(PrefersBlockedResult(conv, 8, OneDnnLayout::kChannelsLast));
}

TEST_F(OneDnnConvTest, LayoutSettingPicksTheResultsLayout) {
  const auto graph = ConvNet(2, 16, {{24, 3, 1, 1}, {24, 1}});
  const std::vector<Tensor> x = {
      RandomTensor(DType::kFloat32, {1, 16, 12, 12}, 70)};
  {
    ScopedLayout blocked("blocked");
    EXPECT_EQ(OneDnnLayoutSetting(), OneDnnLayout::kBlocked);
    const std::vector<int> blocks = ResultBlocks(PlanOfInputs(*graph, x));
    ASSERT_EQ(blocks.size(), 2u);
    for (int block : blocks) EXPECT_TRUE(block == 8 || block == 16) << block;
    // explain() names the layout.
    Specialization spec;
    spec.inputs.push_back(TensorMeta::Of(x[0]));
    auto exe = testing::SharedJit().Compile(graph, spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_THAT((*exe)->Describe(), ::testing::ContainsRegex(
                                        "weights packed once, nChw(8|16)c\\)"));
  }
  {
    ScopedLayout channels_last("channels_last");
    EXPECT_EQ(OneDnnLayoutSetting(), OneDnnLayout::kChannelsLast);
    EXPECT_THAT(ResultBlocks(PlanOfInputs(*graph, x)),
                ::testing::ElementsAre(0, 0));
  }
  EXPECT_EQ(OneDnnLayoutSetting(), OneDnnLayout::kAuto);
}

}  // namespace
}  // namespace guardjit
