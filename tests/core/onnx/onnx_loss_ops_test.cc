// ONNX's losses (core/onnx/onnx_loss_ops.cc): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss imported and run by the eager interpreter against
// hand-computed values, and the inputs and attributes they refuse.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
#include "tests/core/onnx/onnx_test_models.h"
#include "tests/test_util.h"

namespace guardjit::testing {
namespace {

using ::testing::HasSubstr;

// Loads `m` and runs it on `inputs`; fails the test on error.
std::vector<Tensor> LoadAndRun(const ModelProto& m,
                               const std::vector<Tensor>& inputs) {
  auto g = Load(m);
  EXPECT_TRUE(g.ok()) << g.status();
  if (!g.ok()) return {};
  auto interp =
      EagerInterpreter::Create(std::shared_ptr<const Graph>(*std::move(g)));
  EXPECT_TRUE(interp.ok()) << interp.status();
  if (!interp.ok()) return {};
  auto out = (*interp)->Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return *out;
}

// NegativeLogLikelihoodLoss of x [2, 3] and target [2] (int64), with an
// optional weight [3] input and the given attributes.
ModelProto NllModel(const std::string& reduction, bool with_weight,
                    std::optional<int64_t> ignore_index = std::nullopt) {
  ModelProto m = Model(13);
  AddInput(m, "x", {2, 3});
  AddInput(m, "t", {2}, TensorProto::INT64);
  std::vector<std::string> inputs = {"x", "t"};
  if (with_weight) {
    AddInput(m, "w", {3});
    inputs.push_back("w");
  }
  NodeProto* n = AddNode(m, "NegativeLogLikelihoodLoss", inputs, {"y"});
  if (!reduction.empty()) SetString(n, "reduction", reduction);
  if (ignore_index.has_value()) SetInt(n, "ignore_index", *ignore_index);
  AddOutput(m, "y");
  return m;
}

Tensor LogProbs() {
  return MakeTensor(DType::kFloat32, {2, 3}, {-1, -2, -3, -0.5, -1.5, -2.5});
}
Tensor Targets2() { return MakeTensor(DType::kInt64, {2}, {2, 0}); }
Tensor Weights() { return MakeTensor(DType::kFloat32, {3}, {1, 2, 3}); }

TEST(OnnxLossOpsTest, NllReductionsNoneSumAndDefaultMean) {
  auto none = LoadAndRun(NllModel("none", false), {LogProbs(), Targets2()});
  ASSERT_EQ(none.size(), 1u);
  ExpectTensor(none[0], DType::kFloat32, {2}, {3.0, 0.5});
  auto sum = LoadAndRun(NllModel("sum", false), {LogProbs(), Targets2()});
  ASSERT_EQ(sum.size(), 1u);
  ExpectTensor(sum[0], DType::kFloat32, {}, {3.5});
  // No reduction attribute: mean.
  auto mean = LoadAndRun(NllModel("", false), {LogProbs(), Targets2()});
  ASSERT_EQ(mean.size(), 1u);
  ExpectTensor(mean[0], DType::kFloat32, {}, {1.75});
}

TEST(OnnxLossOpsTest, NllWeightedMeanDividesByTheTargetsWeights) {
  auto none =
      LoadAndRun(NllModel("none", true), {LogProbs(), Targets2(), Weights()});
  ASSERT_EQ(none.size(), 1u);
  ExpectTensor(none[0], DType::kFloat32, {2}, {9.0, 0.5});
  auto mean =
      LoadAndRun(NllModel("mean", true), {LogProbs(), Targets2(), Weights()});
  ASSERT_EQ(mean.size(), 1u);
  // (3 * 3 + 0.5 * 1) / (3 + 1).
  ExpectTensor(mean[0], DType::kFloat32, {}, {2.375});
}

TEST(OnnxLossOpsTest, NllIgnoreIndexZeroesAndLeavesOutOfTheMean) {
  auto none = LoadAndRun(NllModel("none", false, 2), {LogProbs(), Targets2()});
  ASSERT_EQ(none.size(), 1u);
  ExpectTensor(none[0], DType::kFloat32, {2}, {0.0, 0.5});
  auto mean = LoadAndRun(NllModel("mean", false, 2), {LogProbs(), Targets2()});
  ASSERT_EQ(mean.size(), 1u);
  ExpectTensor(mean[0], DType::kFloat32, {}, {0.5});
  // Weighted: the ignored element's weight leaves the normalizer too.
  auto wmean = LoadAndRun(NllModel("mean", true, 0),
                          {LogProbs(), Targets2(), Weights()});
  ASSERT_EQ(wmean.size(), 1u);
  ExpectTensor(wmean[0], DType::kFloat32, {}, {3.0});
}

TEST(OnnxLossOpsTest, NllRefusesAnUnknownReduction) {
  auto g = Load(NllModel("average", false));
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument)
      << g.status();
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("reduction 'average'"));
}

TEST(OnnxLossOpsTest, NllRefusesFloatTargetsAndWrongRanks) {
  ModelProto m = Model(13);
  AddInput(m, "x", {2, 3});
  AddInput(m, "t", {2});  // float
  AddNode(m, "NegativeLogLikelihoodLoss", {"x", "t"}, {"y"});
  AddOutput(m, "y");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("target is not an integer tensor"));

  m = Model(13);
  AddInput(m, "x", {2, 3});
  AddInput(m, "t", {2, 3}, TensorProto::INT64);
  AddNode(m, "NegativeLogLikelihoodLoss", {"x", "t"}, {"y"});
  AddOutput(m, "y");
  g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("input must be [N, C, d...] and target [N, d...]"));
}

TEST(OnnxLossOpsTest, SoftmaxCrossEntropyGivesLossAndLogProb) {
  ModelProto m = Model(13);
  AddInput(m, "s", {2, 2});
  AddInput(m, "l", {2}, TensorProto::INT64);
  NodeProto* n =
      AddNode(m, "SoftmaxCrossEntropyLoss", {"s", "l"}, {"loss", "log_prob"});
  SetString(n, "reduction", "none");
  AddOutputs(m, {"loss", "log_prob"});
  const double l2 = std::log(2.0);
  // Row 1: log_softmax([0, ln 3]) = [-ln 4, ln 3 - ln 4].
  const double l3 = std::log(3.0), l4 = std::log(4.0);
  auto out = LoadAndRun(m, {MakeTensor(DType::kFloat32, {2, 2}, {0, 0, 0, l3}),
                            MakeTensor(DType::kInt64, {2}, {1, 0})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {2}, {l2, l4}, 1e-5, 1e-5);
  ExpectTensor(out[1], DType::kFloat32, {2, 2}, {-l2, -l2, -l4, l3 - l4}, 1e-5,
               1e-5);
}

TEST(OnnxLossOpsTest, SoftmaxCrossEntropyRefusesOneDimScores) {
  ModelProto m = Model(13);
  AddInput(m, "s", {3});
  AddInput(m, "l", {}, TensorProto::INT64);
  AddNode(m, "SoftmaxCrossEntropyLoss", {"s", "l"}, {"loss"});
  AddOutput(m, "loss");
  auto g = Load(m);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(std::string(g.status().message()),
              HasSubstr("scores must be [N, C, d...]"));
}

}  // namespace
}  // namespace guardjit::testing
