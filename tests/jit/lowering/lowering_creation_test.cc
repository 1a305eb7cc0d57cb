// jit/lowering/lowering_creation.cc: the factory ops (full, full_like,
// scalar_tensor, arange in its three overloads, fill, empty, empty_strided),
// copy and native_dropout without random numbers lowered to values computed
// in the kernel (no eager step, fused into their consumers), with the values
// the eager kernels write: arange in ATen's accumulation type, conversions
// as PyTorch's, zeros for empty.

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
using testing::Ints;
using testing::LoweredFor;
using testing::LowerFor;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::RandomTensor;
using testing::RunJit;
using testing::RunOnSharedJit;
using testing::SharedJit;

Kwargs WithDType(DType d) { return {{"dtype", Arg::OfDType(d)}}; }

Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs = {}) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

TEST(LoweringCreation, EveryOpIsComputedInTheKernel) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  struct Case {
    const char* target;
    std::vector<Arg> args;
    Kwargs kwargs;
    int inputs;
    LValue::Kind kind;
  };
  const std::vector<Case> cases = {
      {"aten.full.default",
       {Ints({2, 3}), Arg::Float(1.5)},
       {},
       0,
       LValue::Kind::kPointwise},
      {"aten.full_like.default",
       {Arg::Ref("x0"), Arg::Int(4)},
       {},
       1,
       LValue::Kind::kPointwise},
      {"aten.scalar_tensor.default",
       {Arg::Float(2)},
       {},
       0,
       LValue::Kind::kPointwise},
      {"aten.arange.default", {Arg::Int(5)}, {}, 0, LValue::Kind::kSelect},
      {"aten.arange.start",
       {Arg::Int(2), Arg::Int(5)},
       {},
       0,
       LValue::Kind::kSelect},
      {"aten.arange.start_step",
       {Arg::Int(2), Arg::Int(9), Arg::Int(3)},
       {},
       0,
       LValue::Kind::kSelect},
      {"aten.fill.Scalar",
       {Arg::Ref("x0"), Arg::Float(-1)},
       {},
       1,
       LValue::Kind::kPointwise},
      {"aten.empty.memory_format",
       {Ints({4})},
       {},
       0,
       LValue::Kind::kPointwise},
      {"aten.empty_strided.default",
       {Ints({2, 2}), Ints({1, 2})},
       {},
       0,
       LValue::Kind::kPointwise},
      {"aten.copy.default",
       {Arg::Ref("x0"), Arg::Ref("x0")},
       {},
       1,
       LValue::Kind::kPointwise},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    auto graph = OpGraph(c.target, c.args, c.inputs, c.kwargs);
    std::vector<Tensor> inputs;
    if (c.inputs == 1) inputs.push_back(x);
    const LoweredFor l = LowerFor(*graph, inputs);
    EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
    EXPECT_TRUE(l.lowered.externs.empty());
    EXPECT_EQ(l.KindOf(*graph, "op"), c.kind);
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
    ExpectJitMatchesEager(graph, inputs, 0);
  }
}

TEST(LoweringCreation, ArangeByHand) {
  // Integer bounds: int64.
  ExpectTensor(RunJit1(OpGraph("aten.arange.default", {Arg::Int(5)}, 0)),
               DType::kInt64, {5}, {0, 1, 2, 3, 4}, 0, 0);
  // Floating bounds: float32 accumulated in double.
  ExpectTensor(
      RunJit1(OpGraph("aten.arange.start_step",
                      {Arg::Float(0.5), Arg::Float(3), Arg::Float(0.75)}, 0)),
      DType::kFloat32, {4}, {0.5, 1.25, 2.0, 2.75}, 0, 0);
  // A negative step.
  ExpectTensor(RunJit1(OpGraph("aten.arange.start_step",
                               {Arg::Int(5), Arg::Int(-1), Arg::Int(-2)}, 0)),
               DType::kInt64, {3}, {5, 3, 1}, 0, 0);
  // An integral dtype reads a floating start as int64 first: 0.5 -> 0.
  ExpectTensor(
      RunJit1(OpGraph("aten.arange.start", {Arg::Float(0.5), Arg::Int(3)}, 0,
                      WithDType(DType::kInt32))),
      DType::kInt32, {3}, {0, 1, 2}, 0, 0);
}

TEST(LoweringCreation, ArangeOfReducedFloatsMatchesEagerExactly) {
  // float16/bfloat16 accumulate in float and round when stored; past 2048
  // float16 holds even integers only.
  for (DType d : {DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(d));
    ExpectJitMatchesEager(
        OpGraph("aten.arange.start_step",
                {Arg::Float(2040.0), Arg::Float(2060.0), Arg::Float(0.7)}, 0,
                WithDType(d)),
        {}, 0);
    ExpectJitMatchesEager(
        OpGraph("aten.arange.start_step",
                {Arg::Float(-1.0), Arg::Float(1.0), Arg::Float(0.1)}, 0,
                WithDType(d)),
        {}, 0);
  }
}

TEST(LoweringCreation, FullFillAndScalarTensorByHand) {
  ExpectTensor(
      RunJit1(OpGraph("aten.full.default", {Ints({2, 3}), Arg::Int(-7)}, 0,
                      WithDType(DType::kInt8))),
      DType::kInt8, {2, 3}, {-7, -7, -7, -7, -7, -7}, 0, 0);
  // full_like keeps the input's dtype: 1.1 rounded to float16.
  ExpectTensor(RunJit1(OpGraph("aten.full_like.default",
                               {Arg::Ref("x0"), Arg::Float(1.1)}, 1),
                       {RandomTensor(DType::kFloat16, {3}, 2)}),
               DType::kFloat16, {3}, {1.099609375, 1.099609375, 1.099609375}, 0,
               0);
  // Any value converts to bool.
  ExpectTensor(RunJit1(OpGraph("aten.fill.Scalar",
                               {Arg::Ref("x0"), Arg::Float(0.25)}, 1),
                       {MakeTensor(DType::kBool, {2}, {0, 0})}),
               DType::kBool, {2}, {1, 1}, 0, 0);
  ExpectTensor(RunJit1(OpGraph("aten.scalar_tensor.default", {Arg::Float(2.5)},
                               0, WithDType(DType::kFloat64))),
               DType::kFloat64, {}, {2.5}, 0, 0);
}

TEST(LoweringCreation, EmptyIsZeros) {
  ExpectTensor(RunJit1(OpGraph("aten.empty.memory_format", {Ints({3, 2})}, 0,
                               WithDType(DType::kInt32))),
               DType::kInt32, {3, 2}, {0, 0, 0, 0, 0, 0}, 0, 0);
  ExpectTensor(RunJit1(OpGraph("aten.empty_strided.default",
                               {Ints({2, 2}), Ints({1, 2})}, 0)),
               DType::kFloat32, {2, 2}, {0, 0, 0, 0}, 0, 0);
}

TEST(LoweringCreation, FactoriesFuseIntoTheirConsumers) {
  // x [4, 5] + arange(5) * full([4, 1], 2): one kernel.
  GraphBuilder b("fused");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "r", "aten.arange.default", {Arg::Int(5)},
                   WithDType(DType::kFloat32));
  testing::AddNode(b, "f", "aten.full.default", {Ints({4, 1}), Arg::Float(2)});
  testing::AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("r"), Arg::Ref("f")});
  testing::AddNode(b, "y", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("m")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = testing::Finish(b);
  const std::vector<Tensor> x = {
      MakeTensor(DType::kFloat32, {4, 5}, std::vector<double>(20, 1.0))};
  EXPECT_EQ(testing::PlanOfInputs(*graph, x).num_kernels(), 1);
  ExpectLoweredMatchesEager(graph, x);
  const Tensor y = RunJit1(graph, x);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) want.push_back(1 + 2 * j);
  }
  ExpectTensor(y, DType::kFloat32, {4, 5}, want, 0, 0);
}

TEST(LoweringCreation, CopyBroadcastsAndConverts) {
  // src [3] float into self [2, 3] int32: truncated toward zero, broadcast.
  auto graph =
      OpGraph("aten.copy.default", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
  const Tensor self = MakeTensor(DType::kInt32, {2, 3}, {9, 9, 9, 9, 9, 9});
  const Tensor src = MakeTensor(DType::kFloat32, {3}, {1.7, -2.5, 3});
  ExpectTensor(RunJit1(graph, {self, src}), DType::kInt32, {2, 3},
               {1, -2, 3, 1, -2, 3}, 0, 0);
  int seed = 10;
  for (DType d : {DType::kFloat16, DType::kBool, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(d));
    ExpectLoweredMatchesEager(graph,
                              {RandomTensor(d, {4, 3, 5}, ++seed),
                               RandomTensor(DType::kFloat64, {3, 1}, ++seed)});
  }
}

TEST(LoweringCreation, NativeDropoutWithoutRandomNumbers) {
  const Tensor x = MakeTensor(DType::kFloat32, {4}, {1, -2, 0.5, 3});
  // Evaluation mode: the identity and an all-true mask.
  auto eval =
      OpGraph("aten.native_dropout.default",
              {Arg::Ref("x0"), Arg::Float(0.3), Arg::Bool(false)}, 1, {}, 2);
  std::vector<Tensor> out = RunJit(eval, {x});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {4}, {1, -2, 0.5, 3}, 0, 0);
  ExpectTensor(out[1], DType::kBool, {4}, {1, 1, 1, 1}, 0, 0);
  // Training with p = 1: everything dropped.
  auto drop =
      OpGraph("aten.native_dropout.default",
              {Arg::Ref("x0"), Arg::Float(1.0), Arg::Bool(true)}, 1, {}, 2);
  out = RunJit(drop, {x});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {4}, {0, 0, 0, 0}, 0, 0);
  ExpectTensor(out[1], DType::kBool, {4}, {0, 0, 0, 0}, 0, 0);
  EXPECT_EQ(EagerSteps(drop, {x}), 0);
  ExpectLoweredMatchesEager(drop, {RandomTensor(DType::kBFloat16, {3, 5}, 3)});
  // Training with 0 < p < 1 needs random numbers: the shape rule refuses.
  auto random =
      OpGraph("aten.native_dropout.default",
              {Arg::Ref("x0"), Arg::Float(0.5), Arg::Bool(true)}, 1, {}, 2);
  const absl::Status s = CompileStatus(random, {x});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("needs a random number stream"), std::string::npos)
      << s;
}

}  // namespace
}  // namespace guardjit
