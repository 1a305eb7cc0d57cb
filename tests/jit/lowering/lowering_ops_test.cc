// jit/lowering/lowering_ops.cc: the pointwise lowerings (unary, binary with
// PyTorch's type promotion and alpha, comparisons, logical ops, where,
// clamp, fmod/remainder, pow, round with decimals, _to_copy/clone) and the
// table FindLowering reads, against the eager kernels and hand-computed
// values, plus the cases left to the eager kernels with their reasons.

#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiler.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "jit/lowering/lowering_context.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/lowering/lowering_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::EagerSteps;
using testing::ExpectCompiledByJit;
using testing::ExpectJitMatchesEager;
using testing::ExpectLoweredMatchesEager;
using testing::ExpectTensor;
using testing::kInf;
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

Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

// `target`(x0, x1, ..., rest...) over `n` inputs.
std::shared_ptr<const Graph> OpN(const std::string& target, int n,
                                 std::vector<Arg> rest = {},
                                 Kwargs kwargs = {}) {
  std::vector<Arg> args;
  for (int i = 0; i < n; ++i) args.push_back(Arg::Ref("x" + std::to_string(i)));
  for (Arg& a : rest) args.push_back(std::move(a));
  return OpGraph(target, args, n, std::move(kwargs));
}

TEST(LoweringOps, FindLoweringCoversEveryPartOfTheTable) {
  for (const char* target :
       {"aten.add.Tensor", "aten.sub.Scalar", "aten.relu.default",
        "aten.where.self", "aten._to_copy.default", "aten.permute.default",
        "aten.sum.dim_IntList", "aten.cat.default", "aten.full.default",
        "aten.gather.default", "aten.elu.default",
        "aten.max_pool2d_with_indices.default",
        "aten.upsample_bilinear2d.vec"}) {
    EXPECT_NE(FindLowering(target), nullptr) << target;
  }
  EXPECT_EQ(FindLowering("aten.mm.default"), nullptr);
  EXPECT_EQ(FindLowering("aten.add"), nullptr);
  EXPECT_EQ(FindLowering(""), nullptr);
}

TEST(LoweringOps, UnaryOpsMatchEager) {
  int seed = 0;
  for (const char* op :
       {"abs", "neg", "exp", "log1p", "sqrt", "sin", "tanh", "sigmoid", "erf",
        "reciprocal", "relu", "silu", "floor", "round", "sign", "gelu"}) {
    for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                    DType::kFloat64}) {
      SCOPED_TRACE(::testing::Message() << op << " " << DTypeName(d));
      auto graph = OpN(absl::StrCat("aten.", op, ".default"), 1);
      const std::vector<Tensor> x = {RandomTensor(d, {3, 7}, ++seed, 0.1, 3)};
      const LoweredFor l = LowerFor(*graph, x);
      EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
      ExpectLoweredMatchesEager(graph, x);
    }
  }
  // Floating ops of integers compute in the default float dtype;
  // bitwise_not of integers and bools.
  ExpectLoweredMatchesEager(OpN("aten.exp.default", 1),
                            {RandomTensor(DType::kInt32, {4, 5}, 50, -3, 3)});
  ExpectLoweredMatchesEager(OpN("aten.bitwise_not.default", 1),
                            {RandomTensor(DType::kInt8, {9}, 51, -100, 100)});
  ExpectLoweredMatchesEager(OpN("aten.bitwise_not.default", 1),
                            {RandomTensor(DType::kBool, {9}, 52)});
}

TEST(LoweringOps, ArithmeticPromotesAndTakesAlpha) {
  // int32 + 2.5 (a wrapped number): float32.
  ExpectTensor(RunJit1(OpN("aten.add.Tensor", 1, {Arg::Float(2.5)}),
                       {MakeTensor(DType::kInt32, {2}, {1, -4})}),
               DType::kFloat32, {2}, {3.5, -1.5}, 0, 0);
  // sub with alpha: x - 3 * y, in int64.
  ExpectTensor(RunJit1(OpN("aten.sub.Tensor", 2, {}, {{"alpha", Arg::Int(3)}}),
                       {MakeTensor(DType::kInt64, {2}, {10, 0}),
                        MakeTensor(DType::kInt64, {2}, {1, 2})}),
               DType::kInt64, {2}, {7, -6}, 0, 0);
  // int8 * int16 tensors: int16, wrapping as the eager kernel does.
  ExpectTensor(RunJit1(OpN("aten.mul.Tensor", 2),
                       {MakeTensor(DType::kInt8, {2}, {100, -3}),
                        MakeTensor(DType::kInt16, {2}, {400, 7})}),
               DType::kInt16, {2}, {40000 - 65536, -21}, 0, 0);
  // bool: add is or, mul is and, maximum is or.
  const Tensor a = MakeTensor(DType::kBool, {4}, {0, 0, 1, 1});
  const Tensor b = MakeTensor(DType::kBool, {4}, {0, 1, 0, 1});
  ExpectTensor(RunJit1(OpN("aten.add.Tensor", 2), {a, b}), DType::kBool, {4},
               {0, 1, 1, 1}, 0, 0);
  ExpectTensor(RunJit1(OpN("aten.mul.Tensor", 2), {a, b}), DType::kBool, {4},
               {0, 0, 0, 1}, 0, 0);
  ExpectTensor(RunJit1(OpN("aten.maximum.default", 2), {a, b}), DType::kBool,
               {4}, {0, 1, 1, 1}, 0, 0);
  // Integer true division: float32.
  ExpectTensor(RunJit1(OpN("aten.div.Tensor", 2),
                       {MakeTensor(DType::kInt32, {2}, {7, -1}),
                        MakeTensor(DType::kInt32, {2}, {2, 4})}),
               DType::kFloat32, {2}, {3.5, -0.25}, 0, 0);
}

TEST(LoweringOps, BinaryOpsMatchEagerWithBroadcastAndStrides) {
  int seed = 60;
  for (const char* op :
       {"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
        "aten.div.Tensor", "aten.maximum.default", "aten.atan2.default",
        "aten.pow.Tensor_Tensor", "aten.lt.Tensor", "aten.remainder.Tensor",
        "aten.fmod.Tensor"}) {
    for (DType d : {DType::kFloat32, DType::kFloat16, DType::kFloat64}) {
      SCOPED_TRACE(::testing::Message() << op << " " << DTypeName(d));
      ExpectLoweredMatchesEager(OpN(op, 2),
                                {RandomTensor(d, {4, 1, 5}, ++seed, 0.5, 3),
                                 RandomTensor(d, {3, 1}, ++seed, -3, 3)});
    }
  }
  // Mixed dtypes: int64 tensor and float16 tensor promote to float16.
  ExpectLoweredMatchesEager(OpN("aten.add.Tensor", 2),
                            {RandomTensor(DType::kInt64, {2, 3}, 70),
                             RandomTensor(DType::kFloat16, {3}, 71)});
}

TEST(LoweringOps, ComparisonsModPowAndRoundByHand) {
  // Compared in the promoted type: 2 > 2.5 is false, 3 > 2.5 true.
  ExpectTensor(RunJit1(OpN("aten.gt.Scalar", 1, {Arg::Float(2.5)}),
                       {MakeTensor(DType::kInt64, {2}, {2, 3})}),
               DType::kBool, {2}, {0, 1}, 0, 0);
  // fmod takes the dividend's sign, remainder the divisor's.
  const Tensor n = MakeTensor(DType::kFloat32, {4}, {-7, 7, 6, -7});
  const Tensor m = MakeTensor(DType::kFloat32, {4}, {3, -3, -3, -3});
  ExpectTensor(RunJit1(OpN("aten.fmod.Tensor", 2), {n, m}), DType::kFloat32,
               {4}, {-1, 1, 0, -1}, 0, 0);
  ExpectTensor(RunJit1(OpN("aten.remainder.Tensor", 2), {n, m}),
               DType::kFloat32, {4}, {2, -2, 0, -1}, 0, 0);
  // pow by 0.5, -0.5 and 2.
  const Tensor four = MakeTensor(DType::kFloat64, {2}, {4, 9});
  ExpectTensor(
      RunJit1(OpN("aten.pow.Tensor_Scalar", 1, {Arg::Float(0.5)}), {four}),
      DType::kFloat64, {2}, {2, 3}, 0, 0);
  ExpectTensor(
      RunJit1(OpN("aten.pow.Tensor_Scalar", 1, {Arg::Float(-0.5)}), {four}),
      DType::kFloat64, {2}, {0.5, 1.0 / 3}, 1e-15, 1e-15);
  ExpectTensor(RunJit1(OpN("aten.pow.Tensor_Scalar", 1, {Arg::Int(2)}), {four}),
               DType::kFloat64, {2}, {16, 81}, 0, 0);
  // round(x, decimals): half to even after scaling.
  ExpectTensor(
      RunJit1(OpN("aten.round.decimals", 1, {}, {{"decimals", Arg::Int(-2)}}),
              {MakeTensor(DType::kFloat64, {3}, {1250, 1350, -49})}),
      DType::kFloat64, {3}, {1200, 1400, 0}, 0, 0);
  ExpectTensor(
      RunJit1(OpN("aten.round.decimals", 1, {}, {{"decimals", Arg::Int(1)}}),
              {MakeTensor(DType::kFloat64, {2}, {0.25, -2.75})}),
      DType::kFloat64, {2}, {0.2, -2.8}, 1e-15, 1e-15);
}

TEST(LoweringOps, WhereClampAndCopiesByHand) {
  // where: branches promoted (int64 and float32).
  ExpectTensor(RunJit1(OpN("aten.where.self", 3),
                       {MakeTensor(DType::kBool, {3}, {0, 1, 1}),
                        MakeTensor(DType::kInt64, {3}, {1, 2, 3}),
                        MakeTensor(DType::kFloat32, {1}, {-0.5})}),
               DType::kFloat32, {3}, {-0.5, 2, 3}, 0, 0);
  // clamp with only a max, NaN kept.
  ExpectTensor(
      RunJit1(OpN("aten.clamp.default", 1, {Arg::None(), Arg::Float(1.5)}),
              {MakeTensor(DType::kFloat32, {3}, {-kInf, 2, kNaN})}),
      DType::kFloat32, {3}, {-kInf, 1.5, kNaN}, 0, 0);
  // clamp.Tensor with both bounds, broadcast: min(max(x, lo), hi), so a
  // bound pair with lo > hi gives hi.
  ExpectTensor(RunJit1(OpN("aten.clamp.Tensor", 3),
                       {MakeTensor(DType::kInt32, {2, 2}, {-5, 5, 0, 9}),
                        MakeTensor(DType::kInt32, {2}, {-1, 6}),
                        MakeTensor(DType::kInt32, {2, 1}, {1, 8})}),
               DType::kInt32, {2, 2}, {-1, 1, 0, 8}, 0, 0);
  // _to_copy to float16 rounds there, even where a float32 consumer reads
  // it: 1 + 2^-12 becomes 1.
  GraphBuilder b("round_trip");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "h", "aten._to_copy.default", {Arg::Ref("x")},
                   {{"dtype", Arg::OfDType(DType::kFloat16)}});
  testing::AddNode(b, "f", "aten._to_copy.default", {Arg::Ref("h")},
                   {{"dtype", Arg::OfDType(DType::kFloat32)}});
  testing::AddNode(b, "y", "aten.sub.Tensor", {Arg::Ref("f"), Arg::Int(1)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = testing::Finish(b);
  const std::vector<Tensor> x = {
      MakeTensor(DType::kFloat32, {2}, {1 + 1.0 / 4096, 3})};
  EXPECT_EQ(testing::PlanOfInputs(*graph, x).num_kernels(), 1);
  ExpectTensor(RunJit1(graph, x), DType::kFloat32, {2}, {0, 2}, 0, 0);
}

TEST(LoweringOps, CasesLeftToTheEagerKernels) {
  struct Case {
    std::shared_ptr<const Graph> graph;
    std::vector<Tensor> inputs;
    std::string reason;
  };
  const Tensor i = MakeTensor(DType::kInt32, {3}, {7, -7, 3});
  const Tensor j = MakeTensor(DType::kInt32, {3}, {2, 2, 1});
  const Tensor h = MakeTensor(DType::kFloat16, {2}, {1.25, 2.5});
  const std::vector<Case> cases = {
      {OpN("aten.pow.Tensor_Tensor", 2),
       {i, j},
       "op (aten.pow.Tensor_Tensor): integral division and power run "
       "eagerly"},
      {OpN("aten.pow.Tensor_Scalar", 1, {Arg::Int(3)}),
       {i},
       "op (aten.pow.Tensor_Scalar): integral power runs eagerly"},
      {OpN("aten.div.Tensor_mode", 2, {},
           {{"rounding_mode", Arg::String("floor")}}),
       {i, j},
       "op (aten.div.Tensor_mode): rounding division runs eagerly"},
      {OpN("aten.remainder.Tensor", 2),
       {i, j},
       "op (aten.remainder.Tensor): integral modulo runs eagerly (zero "
       "divisors)"},
      {OpN("aten.round.decimals", 1, {}, {{"decimals", Arg::Int(1)}}),
       {h},
       "op (aten.round.decimals): round with decimals of a reduced float "
       "runs eagerly"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    const LoweredFor l = LowerFor(*c.graph, c.inputs);
    EXPECT_EQ(l.reasons, std::vector<std::string>{c.reason});
    EXPECT_EQ(EagerSteps(c.graph, c.inputs), 1);
    ExpectJitMatchesEager(c.graph, c.inputs);
  }
  // div with rounding_mode None is true division, lowered.
  auto plain =
      OpN("aten.div.Tensor_mode", 2, {}, {{"rounding_mode", Arg::None()}});
  EXPECT_TRUE(LowerFor(*plain, {i, j}).reasons.empty());
  ExpectLoweredMatchesEager(plain, {i, j});
}

}  // namespace
}  // namespace guardjit
