// jit/lowering/lowering_reductions.cc: the reductions (sum, mean, prod,
// amax/amin, max/min.dim, argmax/argmin, var, any/all) and softmax,
// log_softmax, layer/group/batch norm lowered to reductions plus pointwise
// values (no eager step), against the eager kernels and hand-computed
// values: dims and keepdim, integer promotion, NaN and tie rules, var's
// correction, any/all's truth of NaN and uint8 results, and the cases left
// to the eager kernels with their reasons.

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/compiler.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gtest/gtest.h"
#include "jit/lowering/lowering.h"
#include "runtime/index_expr.h"
#include "tests/jit/jit_test_util.h"
#include "tests/jit/lowering/lowering_test_util.h"
#include "tests/scoped_env.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::EagerSteps;
using testing::ExpectCompiledByJit;
using testing::ExpectJitMatchesEager;
using testing::ExpectLoweredMatchesEager;
using testing::ExpectTensor;
using testing::Ints;
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

std::shared_ptr<const Graph> Op1(const std::string& target,
                                 std::vector<Arg> rest, Kwargs kwargs = {},
                                 int num_outputs = 1) {
  rest.insert(rest.begin(), Arg::Ref("x0"));
  return OpGraph(target, rest, 1, std::move(kwargs), num_outputs);
}

TEST(LoweringReductions, ReductionValuesAndTheirCombineOps) {
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {2, 3, 4}, 1)};
  struct Case {
    std::shared_ptr<const Graph> graph;
    CombineOp combine;
    std::vector<bool> mask;
    bool keepdim;
  };
  const std::vector<Case> cases = {
      {Op1("aten.sum.dim_IntList", {Ints({0, -1})}),
       CombineOp::kSum,
       {true, false, true},
       false},
      {Op1("aten.prod.dim_int", {Arg::Int(1), Arg::Bool(true)}),
       CombineOp::kProd,
       {false, true, false},
       true},
      {Op1("aten.amax.default", {Ints({2})}),
       CombineOp::kMax,
       {false, false, true},
       false},
      {Op1("aten.amin.default", {Ints({})}),
       CombineOp::kMin,
       {true, true, true},
       false},
      {Op1("aten.argmax.default", {Arg::Int(1), Arg::Bool(true)}),
       CombineOp::kArgMax,
       {false, true, false},
       true},
      {Op1("aten.argmin.default", {}),
       CombineOp::kArgMin,
       {true, true, true},
       false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.graph->name());
    const LoweredFor l = LowerFor(*c.graph, x);
    ASSERT_TRUE(l.reasons.empty()) << l.reasons[0];
    const LValue& v =
        l.lowered.values[l.lowered.ValueOf({c.graph->FindNode("op"), 0})];
    ASSERT_EQ(v.kind, LValue::Kind::kReduction);
    EXPECT_EQ(v.combine, c.combine);
    EXPECT_EQ(v.mask, c.mask);
    EXPECT_EQ(v.keepdim, c.keepdim);
  }
  // mean: the sum's value divided by the count.
  auto mean = Op1("aten.mean.dim", {Ints({1})});
  const LoweredFor l = LowerFor(*mean, x);
  EXPECT_EQ(l.KindOf(*mean, "op"), LValue::Kind::kPointwise);
  EXPECT_EQ(EagerSteps(mean, x), 0);
}

TEST(LoweringReductions, SumMeanProdAmaxByHand) {
  const Tensor x = MakeTensor(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(RunJit1(Op1("aten.sum.dim_IntList", {Ints({1})}), {x}),
               DType::kFloat32, {2}, {6, 15}, 0, 0);
  ExpectTensor(RunJit1(Op1("aten.mean.dim", {Ints({0}), Arg::Bool(true)}), {x}),
               DType::kFloat32, {1, 3}, {2.5, 3.5, 4.5}, 0, 0);
  ExpectTensor(RunJit1(Op1("aten.prod.default", {}), {x}), DType::kFloat32, {},
               {720}, 0, 0);
  ExpectTensor(RunJit1(Op1("aten.amax.default", {Ints({})}), {x}),
               DType::kFloat32, {}, {6}, 0, 0);
  // Integers sum to int64 (no overflow of int8).
  ExpectTensor(RunJit1(Op1("aten.sum.default", {}),
                       {MakeTensor(DType::kInt8, {3}, {100, 100, 100})}),
               DType::kInt64, {}, {300}, 0, 0);
  // A NaN propagates through amax.
  ExpectTensor(RunJit1(Op1("aten.amax.default", {Ints({0})}),
                       {MakeTensor(DType::kFloat32, {3}, {1, kNaN, 3})}),
               DType::kFloat32, {}, {kNaN}, 0, 0);
  // A sum over a dim of size 0 is 0, a prod 1.
  const Tensor empty = MakeTensor(DType::kFloat32, {2, 0}, {});
  ExpectTensor(RunJit1(Op1("aten.sum.dim_IntList", {Ints({1})}), {empty}),
               DType::kFloat32, {2}, {0, 0}, 0, 0);
  ExpectTensor(RunJit1(Op1("aten.prod.dim_int", {Arg::Int(1)}), {empty}),
               DType::kFloat32, {2}, {1, 1}, 0, 0);
}

TEST(LoweringReductions, ReductionsMatchEager) {
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
        DType::kInt32, DType::kInt64, DType::kBool}) {
    SCOPED_TRACE(DTypeName(d));
    const std::vector<Tensor> x = {RandomTensor(d, {3, 5, 7}, ++seed)};
    ExpectLoweredMatchesEager(
        Op1("aten.sum.dim_IntList", {Ints({0, 2}), Arg::Bool(true)}), x);
    ExpectLoweredMatchesEager(Op1("aten.prod.dim_int", {Arg::Int(-1)}),
                              {RandomTensor(d, {3, 5, 7}, ++seed, 0.5, 1.5)});
    ExpectLoweredMatchesEager(Op1("aten.amin.default", {Ints({1})}), x);
    ExpectLoweredMatchesEager(Op1("aten.any.dims", {Ints({0, 1})}), x);
    ExpectLoweredMatchesEager(Op1("aten.all.dim", {Arg::Int(2)}), x);
    if (IsFloating(d)) {
      ExpectLoweredMatchesEager(Op1("aten.mean.dim", {Ints({1})}), x);
      ExpectLoweredMatchesEager(Op1("aten.var.correction", {Ints({0, 2})},
                                    {{"correction", Arg::Int(1)}}),
                                x);
    }
    // argmax of bool is refused by its shape rule; max.dim of bool runs
    // eagerly (CasesLeftToTheEagerKernels).
    if (d != DType::kBool) {
      ExpectLoweredMatchesEager(Op1("aten.argmax.default", {Arg::Int(0)}), x);
      ExpectLoweredMatchesEager(
          Op1("aten.max.dim", {Arg::Int(1), Arg::Bool(true)}, {}, 2), x);
    }
  }
}

TEST(LoweringReductions, MaxMinDimArgmaxAndAnyAllByHand) {
  // max.dim: NaN propagates, its index is the first NaN's.
  std::vector<Tensor> out =
      RunJit(Op1("aten.max.dim", {Arg::Int(0)}, {}, 2),
             {MakeTensor(DType::kFloat32, {4}, {1, kNaN, 3, kNaN})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {}, {kNaN}, 0, 0);
  ExpectTensor(out[1], DType::kInt64, {}, {1}, 0, 0);
  // min.dim and argmax: ties take the first extreme.
  out = RunJit(Op1("aten.min.dim", {Arg::Int(1)}, {}, 2),
               {MakeTensor(DType::kInt32, {2, 3}, {3, 1, 1, 2, 2, 5})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kInt32, {2}, {1, 2}, 0, 0);
  ExpectTensor(out[1], DType::kInt64, {2}, {1, 0}, 0, 0);
  // argmax over the flattened tensor.
  ExpectTensor(RunJit1(Op1("aten.argmax.default", {}),
                       {MakeTensor(DType::kFloat32, {2, 2}, {1, 7, 7, 2})}),
               DType::kInt64, {}, {1}, 0, 0);
  // NaN is true; uint8 input gives a uint8 result.
  ExpectTensor(RunJit1(Op1("aten.all.default", {}),
                       {MakeTensor(DType::kFloat32, {3}, {1, kNaN, -2})}),
               DType::kBool, {}, {1}, 0, 0);
  ExpectTensor(RunJit1(Op1("aten.any.dim", {Arg::Int(1)}),
                       {MakeTensor(DType::kUInt8, {2, 2}, {0, 0, 0, 9})}),
               DType::kUInt8, {2}, {0, 1}, 0, 0);
  // any.dims with an empty list reduces nothing.
  ExpectTensor(RunJit1(Op1("aten.any.dims", {Ints({})}),
                       {MakeTensor(DType::kInt32, {3}, {0, 4, 0})}),
               DType::kBool, {3}, {0, 1, 0}, 0, 0);
}

TEST(LoweringReductions, VarCorrectionByHand) {
  const Tensor x = MakeTensor(DType::kFloat64, {4}, {1, 2, 3, 4});
  ExpectTensor(
      RunJit1(Op1("aten.var.correction", {}, {{"correction", Arg::Int(1)}}),
              {x}),
      DType::kFloat64, {}, {5.0 / 3}, 1e-15, 1e-15);
  ExpectTensor(
      RunJit1(Op1("aten.var.correction", {}, {{"correction", Arg::Int(0)}}),
              {x}),
      DType::kFloat64, {}, {1.25}, 1e-15, 1e-15);
  // var.dim(unbiased=False, keepdim=True) over rows.
  ExpectTensor(RunJit1(Op1("aten.var.dim",
                           {Ints({1}), Arg::Bool(false), Arg::Bool(true)}),
                       {MakeTensor(DType::kFloat32, {2, 2}, {1, 3, 5, 5})}),
               DType::kFloat32, {2, 1}, {1, 0}, 0, 0);
  // One element with correction 1: 0 / 0.
  ExpectTensor(
      RunJit1(Op1("aten.var.correction", {}, {{"correction", Arg::Int(1)}}),
              {MakeTensor(DType::kFloat32, {1}, {3})}),
      DType::kFloat32, {}, {kNaN}, 0, 0);
}

TEST(LoweringReductions, SoftmaxAndNormalizationsMatchEager) {
  const testing::ScopedEnv kernels("GJ_LAYER_NORM_STEP", "0");  // lowered
  int seed = 40;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    const Tensor x = RandomTensor(d, {2, 6, 5}, ++seed, -8, 8);
    ExpectLoweredMatchesEager(
        Op1("aten._softmax.default", {Arg::Int(-1), Arg::Bool(false)}), {x});
    ExpectLoweredMatchesEager(
        Op1("aten._log_softmax.default", {Arg::Int(1), Arg::Bool(false)}), {x});
    ExpectLoweredMatchesEager(
        OpGraph("aten.native_layer_norm.default",
                {Arg::Ref("x0"), Ints({6, 5}), Arg::Ref("x1"), Arg::Ref("x2"),
                 Arg::Float(1e-5)},
                3, {}, 3),
        {x, RandomTensor(d, {6, 5}, ++seed), RandomTensor(d, {6, 5}, ++seed)});
    ExpectLoweredMatchesEager(
        OpGraph("aten._native_batch_norm_legit_no_training.default",
                {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x2"), Arg::Ref("x3"),
                 Arg::Ref("x4"), Arg::Float(0.1), Arg::Float(1e-5)},
                5, {}, 3),
        {x, RandomTensor(d, {6}, ++seed), RandomTensor(d, {6}, ++seed),
         RandomTensor(d, {6}, ++seed), RandomTensor(d, {6}, ++seed, 0.5, 2)});
  }
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(d));
    ExpectLoweredMatchesEager(
        OpGraph("aten.native_group_norm.default",
                {Arg::Ref("x0"), Arg::Ref("x1"), Arg::None(), Arg::Int(2),
                 Arg::Int(6), Arg::Int(10), Arg::Int(3), Arg::Float(1e-5)},
                2, {}, 3),
        {RandomTensor(d, {2, 6, 2, 5}, ++seed), RandomTensor(d, {6}, ++seed)});
  }
}

TEST(LoweringReductions, SoftmaxByHand) {
  // softmax([0, ln 3]) = [1/4, 3/4]; log_softmax of equal values = -ln 2.
  ExpectTensor(
      RunJit1(Op1("aten._softmax.default", {Arg::Int(0), Arg::Bool(false)}),
              {MakeTensor(DType::kFloat64, {2}, {0, std::log(3.0)})}),
      DType::kFloat64, {2}, {0.25, 0.75}, 1e-15, 1e-15);
  ExpectTensor(
      RunJit1(Op1("aten._log_softmax.default", {Arg::Int(1), Arg::Bool(false)}),
              {MakeTensor(DType::kFloat64, {1, 2}, {1e4, 1e4})}),
      DType::kFloat64, {1, 2}, {-std::log(2.0), -std::log(2.0)}, 1e-15, 1e-15);
}

TEST(LoweringReductions, CasesLeftToTheEagerKernels) {
  struct Case {
    std::shared_ptr<const Graph> graph;
    std::vector<Tensor> inputs;
    std::string reason;
  };
  const Tensor x = RandomTensor(DType::kFloat32, {2, 4, 3}, 50);
  const Tensor c = RandomTensor(DType::kFloat32, {4}, 51, 0.5, 1.5);
  const std::vector<Case> cases = {
      {Op1("aten.max.dim", {Arg::Int(0)}, {}, 2),
       {MakeTensor(DType::kBool, {3}, {0, 1, 1})},
       "op (aten.max.dim): max/min.dim of bool runs eagerly"},
      {OpGraph(
           "aten._native_batch_norm_legit.default",
           {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Ref("x1"), Arg::Ref("x1"),
            Arg::Ref("x1"), Arg::Bool(true), Arg::Float(0.1), Arg::Float(1e-5)},
           2, {}, 3),
       {x, c},
       "op (aten._native_batch_norm_legit.default): batch norm in training "
       "mode runs eagerly"},
      {OpGraph("aten.native_group_norm.default",
               {Arg::Ref("x0"), Arg::None(), Arg::None(), Arg::Int(2),
                Arg::Int(4), Arg::Int(3), Arg::Int(2), Arg::Float(1e-5)},
               1, {}, 3),
       {RandomTensor(DType::kFloat16, {2, 4, 3}, 52)},
       "op (aten.native_group_norm.default): group norm of a reduced float "
       "runs eagerly"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.reason);
    const LoweredFor l = LowerFor(*k.graph, k.inputs);
    EXPECT_EQ(l.reasons, std::vector<std::string>{k.reason});
    EXPECT_EQ(EagerSteps(k.graph, k.inputs), 1);
    ExpectJitMatchesEager(k.graph, k.inputs);
  }
}

}  // namespace
}  // namespace guardjit
