#ifndef GUARDJIT_TESTS_JIT_STEPS_ONEDNN_CONV_TEST_UTIL_H_
#define GUARDJIT_TESTS_JIT_STEPS_ONEDNN_CONV_TEST_UTIL_H_

// Convolution networks and checks shared by the tests of the oneDNN
// convolution steps' planning (onednn_conv_test.cc) and their runner
// (onednn_conv_step_test.cc).

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "jit/steps/onednn_conv.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit::testing::onednn {

// One convolution layer of a test network, its weights graph constants.
struct Layer {
  int64_t out_channels;
  int64_t kernel;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t groups = 1;
  int64_t dilation = 1;
  bool bias = true;
};

inline Arg List(int spatial, int64_t v) {
  std::vector<Arg> list(spatial, Arg::Int(v));
  return Arg::OfList(std::move(list));
}

// x -> conv -> relu -> conv -> ... over `layers` (a residual add where
// `residual_at` names the layer whose input it adds, when shapes match),
// with constants of `dtype` drawn from `seed`.
inline std::shared_ptr<const Graph> ConvNet(int spatial, int64_t in_channels,
                                            const std::vector<Layer>& layers,
                                            DType dtype = DType::kFloat32,
                                            int residual_at = -1) {
  GraphBuilder b("convnet");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  std::string value = "x";
  std::string residual;
  int64_t channels = in_channels;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if (static_cast<int>(i) == residual_at) residual = value;
    Shape w = {l.out_channels, channels / l.groups};
    int64_t fan_in = channels / l.groups;
    for (int d = 0; d < spatial; ++d) {
      w.push_back(l.kernel);
      fan_in *= l.kernel;
    }
    // Weights at the scale of a trained network's (values stay near 1
    // through the layers, as they do in one).
    const double limit = 1.0 / std::sqrt(static_cast<double>(fan_in));
    const std::string wn = absl::StrCat("w", i), bn = absl::StrCat("b", i);
    EXPECT_TRUE(
        b.AddConstant(wn, RandomTensor(dtype, w, 100 + i, -limit, limit)).ok());
    if (l.bias) {
      EXPECT_TRUE(
          b.AddConstant(bn, RandomTensor(dtype, {l.out_channels}, 200 + i))
              .ok());
    }
    const std::string conv = absl::StrCat("conv", i);
    testing::AddNode(
        b, conv, "aten.convolution.default",
        {Arg::Ref(value), Arg::Ref(wn), l.bias ? Arg::Ref(bn) : Arg::None(),
         List(spatial, l.stride), List(spatial, l.padding),
         List(spatial, l.dilation), Arg::Bool(false), List(spatial, 0),
         Arg::Int(l.groups)});
    value = conv;
    if (!residual.empty() && static_cast<int>(i) == residual_at + 1) {
      testing::AddNode(b, absl::StrCat("add", i), "aten.add.Tensor",
                       {Arg::Ref(value), Arg::Ref(residual)});
      value = absl::StrCat("add", i);
    }
    if (i + 1 < layers.size()) {
      testing::AddNode(b, absl::StrCat("relu", i), "aten.relu.default",
                       {Arg::Ref(value)});
      value = absl::StrCat("relu", i);
    }
    channels = l.out_channels;
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref(value)}).ok());
  return testing::Finish(b);
}

inline int OneDnnSteps(const Plan& plan) {
  int n = 0;
  for (const PlanStep& s : plan.steps) {
    n += s.conv != nullptr && s.conv->onednn.has_value();
  }
  return n;
}

// A float32 constant `name` of `shape` in [-0.3, 0.3).
inline void AddWeight(GraphBuilder& b, const std::string& name,
                      const Shape& shape, uint64_t seed) {
  ASSERT_TRUE(
      b.AddConstant(name, RandomTensor(DType::kFloat32, shape, seed, -0.3, 0.3))
          .ok());
}

// name = conv2d(x, w) without bias, stride 1, `pad` on every side.
inline void AddConv2d(GraphBuilder& b, const std::string& name,
                      const std::string& x, const std::string& w, int64_t pad) {
  testing::AddNode(
      b, name, "aten.convolution.default",
      {Arg::Ref(x), Arg::Ref(w), Arg::None(), List(2, 1), List(2, pad),
       List(2, 1), Arg::Bool(false), List(2, 0), Arg::Int(1)});
}

// GJ_ONEDNN_LAYOUT set for the scope's life (unset after it).
class ScopedLayout {
 public:
  explicit ScopedLayout(const char* layout) {
    setenv("GJ_ONEDNN_LAYOUT", layout, 1);
  }
  ~ScopedLayout() { unsetenv("GJ_ONEDNN_LAYOUT"); }
};

class OneDnnConvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!OneDnnEnabled()) GTEST_SKIP() << "GJ_ONEDNN=0";
  }
};

// The channel block of each oneDNN step's result, in plan order.
inline std::vector<int> ResultBlocks(const Plan& plan) {
  std::vector<int> blocks;
  for (const PlanStep& s : plan.steps) {
    if (s.conv != nullptr && s.conv->onednn.has_value()) {
      blocks.push_back(s.conv->onednn->block);
    }
  }
  return blocks;
}

}  // namespace guardjit::testing::onednn

#endif  // GUARDJIT_TESTS_JIT_STEPS_ONEDNN_CONV_TEST_UTIL_H_
