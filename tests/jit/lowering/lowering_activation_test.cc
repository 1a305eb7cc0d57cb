// jit/lowering/lowering_activation.cc: hardtanh, leaky_relu and elu lowered
// to one pointwise value each (no eager step), against the eager kernels on
// every dtype their shape rules accept and on strided inputs, with the
// parameters as the eager kernels read them (integral bounds truncated,
// slopes in the compute dtype, NaN propagated).

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/compiler.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/lowering/lowering_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::CompileStatus;
using testing::EagerSteps;
using testing::ExpectCompiledByJit;
using testing::ExpectJitMatchesEager;
using testing::ExpectLoweredMatchesEager;
using testing::ExpectTensor;
using testing::kNaN;
using testing::LoweredFor;
using testing::LowerFor;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::RandomTensor;
using testing::RunJit;
using testing::RunOnSharedJit;
using testing::SharedJit;

TEST(LoweringActivation, EachOpIsOnePointwiseValue) {
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {3, 4}, 1)};
  for (const char* target : {"aten.hardtanh.default", "aten.leaky_relu.default",
                             "aten.elu.default"}) {
    SCOPED_TRACE(target);
    auto graph = OpGraph(target, {Arg::Ref("x0")}, 1);
    const LoweredFor l = LowerFor(*graph, x);
    EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
    EXPECT_TRUE(l.lowered.externs.empty());
    EXPECT_EQ(l.KindOf(*graph, "op"), LValue::Kind::kPointwise);
    EXPECT_EQ(EagerSteps(graph, x), 0);
  }
}

TEST(LoweringActivation, HardtanhMatchesEagerOnEveryDType) {
  // Odd shape; integral inputs read the bounds truncated (-1, 2), uint8 only
  // takes non-negative ones.
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
        DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(d));
    auto graph =
        OpGraph("aten.hardtanh.default",
                {Arg::Ref("x0"), Arg::Float(-1.7), Arg::Float(2.9)}, 1);
    ExpectLoweredMatchesEager(graph,
                              {RandomTensor(d, {3, 5, 7}, ++seed, -4, 4)});
  }
  auto graph = OpGraph("aten.hardtanh.default",
                       {Arg::Ref("x0"), Arg::Float(0.5), Arg::Int(3)}, 1);
  ExpectLoweredMatchesEager(graph,
                            {RandomTensor(DType::kUInt8, {5, 3}, 3, 0, 6)});
}

TEST(LoweringActivation, HardtanhBoundsAndNaNByHand) {
  auto graph = OpGraph("aten.hardtanh.default",
                       {Arg::Ref("x0"), Arg::Float(-1.7), Arg::Float(2.9)}, 1);
  // int32: bounds truncated to [-1, 2].
  std::vector<Tensor> out =
      RunJit(graph, {MakeTensor(DType::kInt32, {6}, {-3, -1, 0, 1, 2, 5})});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensor(out[0], DType::kInt32, {6}, {-1, -1, 0, 1, 2, 2});
  // float32: the bounds as given, NaN kept.
  out = RunJit(graph,
               {MakeTensor(DType::kFloat32, {5}, {kNaN, -5, 5, 0.25, -1.5})});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensor(out[0], DType::kFloat32, {5}, {kNaN, -1.7, 2.9, 0.25, -1.5},
               1e-6, 1e-6);
}

TEST(LoweringActivation, LeakyReluMatchesEagerAndByHand) {
  auto graph =
      OpGraph("aten.leaky_relu.default", {Arg::Ref("x0"), Arg::Float(0.1)}, 1);
  int seed = 20;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    ExpectLoweredMatchesEager(graph, {RandomTensor(d, {7, 9}, ++seed)});
  }
  // The default slope (0.01) and the x > 0 test: 0 and -0 take the slope
  // branch (0 * slope), NaN too (NaN * slope).
  auto by_default = OpGraph("aten.leaky_relu.default", {Arg::Ref("x0")}, 1);
  const std::vector<Tensor> out = RunJit(
      by_default, {MakeTensor(DType::kFloat64, {5}, {-2, 0, 3, -300, kNaN})});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensor(out[0], DType::kFloat64, {5}, {-0.02, 0, 3, -3, kNaN}, 1e-12,
               1e-12);
}

TEST(LoweringActivation, EluParametersMatchEagerAndByHand) {
  // alpha 1.5, scale 2, input_scale 0.5: x <= 0 gives expm1(x / 2) * 3, x > 0
  // gives 2x.
  auto graph = OpGraph(
      "aten.elu.default",
      {Arg::Ref("x0"), Arg::Float(1.5), Arg::Float(2.0), Arg::Float(0.5)}, 1);
  int seed = 30;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    ExpectLoweredMatchesEager(graph, {RandomTensor(d, {2, 3, 11}, ++seed)});
  }
  const std::vector<Tensor> out =
      RunJit(graph, {MakeTensor(DType::kFloat64, {4}, {-2, 0, 1, -40})});
  ASSERT_EQ(out.size(), 1u);
  ExpectTensor(out[0], DType::kFloat64, {4},
               {std::expm1(-1.0) * 3, 0, 2, std::expm1(-20.0) * 3}, 1e-12,
               1e-12);
}

TEST(LoweringActivation, FusesWithItsProducerAndConsumer) {
  // exp(x) -> hardtanh -> neg: one kernel, no eager step.
  GraphBuilder b("fused");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "e", "aten.exp.default", {Arg::Ref("x")});
  testing::AddNode(b, "h", "aten.hardtanh.default",
                   {Arg::Ref("e"), Arg::Float(0.5), Arg::Float(3.0)});
  testing::AddNode(b, "n", "aten.neg.default", {Arg::Ref("h")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("n")}).ok());
  auto graph = testing::Finish(b);
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {4, 6}, 40)};
  EXPECT_EQ(testing::PlanOfInputs(*graph, x).num_kernels(), 1);
  ExpectLoweredMatchesEager(graph, x);
}

TEST(LoweringActivation, ShapeRuleErrorsReachTheCaller) {
  auto hardtanh = OpGraph("aten.hardtanh.default", {Arg::Ref("x0")}, 1);
  absl::Status s =
      CompileStatus(hardtanh, {MakeTensor(DType::kBool, {2}, {0, 1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("Bool inputs not supported for hardtanh"),
            std::string::npos)
      << s;
  auto leaky = OpGraph("aten.leaky_relu.default", {Arg::Ref("x0")}, 1);
  s = CompileStatus(leaky, {MakeTensor(DType::kInt32, {2}, {0, 1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("leaky_relu needs a floating tensor"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace guardjit
