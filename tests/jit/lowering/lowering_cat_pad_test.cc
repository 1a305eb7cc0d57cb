// jit/lowering/lowering_cat_pad.cc: cat, constant_pad_nd, the reflection and
// replication pads, flip, repeat, select_scatter and slice_scatter lowered to
// select values (no copy, no eager step), against the eager kernels and
// hand-computed values: empty operands, negative pads, fill values, strided
// inputs and several dtypes.

#include <memory>
#include <string>
#include <vector>

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

Arg Refs(int n) {
  std::vector<Arg> refs;
  for (int i = 0; i < n; ++i) refs.push_back(Arg::Ref("x" + std::to_string(i)));
  return Arg::OfList(refs);
}

// The single output of `graph` compiled and run on `inputs`.
Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

TEST(LoweringCatPad, EveryOpIsASelectValue) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3, 4}, 1);
  struct Case {
    const char* target;
    std::vector<Arg> args;
    int inputs;
  };
  const std::vector<Case> cases = {
      {"aten.cat.default", {Refs(2), Arg::Int(1)}, 2},
      {"aten.constant_pad_nd.default", {Arg::Ref("x0"), Ints({1, 2})}, 1},
      {"aten.reflection_pad1d.default", {Arg::Ref("x0"), Ints({2, 1})}, 1},
      {"aten.replication_pad2d.default",
       {Arg::Ref("x0"), Ints({1, 1, 2, 0})},
       1},
      {"aten.flip.default", {Arg::Ref("x0"), Ints({0, 2})}, 1},
      {"aten.repeat.default", {Arg::Ref("x0"), Ints({2, 1, 1, 2})}, 1},
      {"aten.select_scatter.default",
       {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Int(1), Arg::Int(2)},
       2},
      {"aten.slice_scatter.default",
       {Arg::Ref("x0"), Arg::Ref("x0"), Arg::Int(0)},
       1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target);
    auto graph = OpGraph(c.target, c.args, c.inputs);
    std::vector<Tensor> inputs = {x};
    if (c.inputs == 2) {
      inputs.push_back(std::string(c.target) == "aten.cat.default"
                           ? RandomTensor(DType::kFloat32, {2, 5, 4}, 2)
                           : RandomTensor(DType::kFloat32, {2, 4}, 2));
    }
    const LoweredFor l = LowerFor(*graph, inputs);
    EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
    EXPECT_EQ(l.KindOf(*graph, "op"), LValue::Kind::kSelect);
    ExpectLoweredMatchesEager(graph, inputs);
  }
}

TEST(LoweringCatPad, CatByHandWithEmptyOperands) {
  // A [1, 0] operand and a legacy 1-D empty tensor take no part.
  auto graph = OpGraph("aten.cat.default", {Refs(4), Arg::Int(-1)}, 4);
  const Tensor out =
      RunJit1(graph, {MakeTensor(DType::kInt32, {1, 2}, {1, 2}),
                      MakeTensor(DType::kInt32, {1, 0}, {}),
                      MakeTensor(DType::kInt32, {0}, {}),
                      MakeTensor(DType::kInt32, {1, 3}, {3, 4, 5})});
  ExpectTensor(out, DType::kInt32, {1, 5}, {1, 2, 3, 4, 5});
}

TEST(LoweringCatPad, CatAlongEveryDimMatchesEager) {
  int seed = 100;
  for (DType d :
       {DType::kFloat32, DType::kInt64, DType::kBool, DType::kFloat16}) {
    for (int dim = 0; dim < 3; ++dim) {
      SCOPED_TRACE(::testing::Message() << DTypeName(d) << " dim " << dim);
      std::vector<Tensor> inputs;
      for (int64_t n : {3, 1, 0, 2}) {
        Shape shape = {2, 3, 5};
        shape[dim] = n;
        inputs.push_back(RandomTensor(d, shape, ++seed));
      }
      ExpectLoweredMatchesEager(
          OpGraph("aten.cat.default", {Refs(4), Arg::Int(dim)}, 4), inputs);
    }
  }
}

TEST(LoweringCatPad, ConstantPadByHand) {
  // Pads pair up from the last dim: (lo, hi) of dim 1, then of dim 0.
  auto graph = OpGraph("aten.constant_pad_nd.default",
                       {Arg::Ref("x0"), Ints({1, 2, 0, 1}), Arg::Float(9)}, 1);
  Tensor out = RunJit1(graph, {MakeTensor(DType::kInt64, {1, 2}, {1, 2})});
  ExpectTensor(out, DType::kInt64, {2, 5}, {9, 1, 2, 9, 9, 9, 9, 9, 9, 9});
  // Negative pads crop.
  auto crop = OpGraph("aten.constant_pad_nd.default",
                      {Arg::Ref("x0"), Ints({-1, 1})}, 1);
  out = RunJit1(crop, {MakeTensor(DType::kFloat32, {3}, {1, 2, 3})});
  ExpectTensor(out, DType::kFloat32, {3}, {2, 3, 0});
  // An empty input: all fill value.
  auto fill = OpGraph("aten.constant_pad_nd.default",
                      {Arg::Ref("x0"), Ints({1, 1}), Arg::Float(-2.5)}, 1);
  out = RunJit1(fill, {MakeTensor(DType::kFloat32, {2, 0}, {})});
  ExpectTensor(out, DType::kFloat32, {2, 2}, {-2.5, -2.5, -2.5, -2.5});
}

TEST(LoweringCatPad, ConstantPadMatchesEagerOnStridedInputs) {
  int seed = 200;
  for (DType d :
       {DType::kFloat32, DType::kInt32, DType::kBFloat16, DType::kBool}) {
    for (const std::vector<int64_t>& pad : std::vector<std::vector<int64_t>>{
             {2, 1, 0, 3}, {-1, 2, 1, -2}, {0, 0, -1, -1, 1, 1}}) {
      SCOPED_TRACE(DTypeName(d));
      ExpectLoweredMatchesEager(
          OpGraph("aten.constant_pad_nd.default",
                  {Arg::Ref("x0"), Ints(pad), Arg::Float(1)}, 1),
          {RandomTensor(d, {3, 4, 5}, ++seed)});
    }
  }
}

TEST(LoweringCatPad, ReflectionAndReplicationPadsByHand) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 3}, {1, 2, 3});
  Tensor out = RunJit1(OpGraph("aten.reflection_pad1d.default",
                               {Arg::Ref("x0"), Ints({2, 1})}, 1),
                       {x});
  ExpectTensor(out, DType::kFloat32, {1, 6}, {3, 2, 1, 2, 3, 2});
  // replication_pad2d: (left, right, top, bottom) over [1, 2, 2].
  out = RunJit1(OpGraph("aten.replication_pad2d.default",
                        {Arg::Ref("x0"), Ints({1, 0, 0, 1})}, 1),
                {MakeTensor(DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4})});
  ExpectTensor(out, DType::kFloat32, {1, 3, 3}, {1, 1, 2, 3, 3, 4, 3, 3, 4});
  // Larger shapes against eager, strided.
  ExpectLoweredMatchesEager(OpGraph("aten.reflection_pad2d.default",
                                    {Arg::Ref("x0"), Ints({3, 1, 0, 2})}, 1),
                            {RandomTensor(DType::kFloat64, {2, 5, 4}, 3)});
  ExpectLoweredMatchesEager(
      OpGraph("aten.replication_pad3d.default",
              {Arg::Ref("x0"), Ints({1, 2, 0, 1, 2, 0})}, 1),
      {RandomTensor(DType::kFloat32, {1, 2, 3, 3, 2}, 4)});
}

TEST(LoweringCatPad, FlipAndRepeatByHand) {
  const Tensor x = MakeTensor(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor out = RunJit1(
      OpGraph("aten.flip.default", {Arg::Ref("x0"), Ints({-1})}, 1), {x});
  ExpectTensor(out, DType::kInt32, {2, 3}, {3, 2, 1, 6, 5, 4});
  out = RunJit1(OpGraph("aten.flip.default", {Arg::Ref("x0"), Ints({0, 1})}, 1),
                {x});
  ExpectTensor(out, DType::kInt32, {2, 3}, {6, 5, 4, 3, 2, 1});
  // repeat with a leading new dim: [2] -> [2, 4].
  out =
      RunJit1(OpGraph("aten.repeat.default", {Arg::Ref("x0"), Ints({2, 2})}, 1),
              {MakeTensor(DType::kInt32, {2}, {7, 8})});
  ExpectTensor(out, DType::kInt32, {2, 4}, {7, 8, 7, 8, 7, 8, 7, 8});
  // A zero repeat: an empty result.
  out = RunJit1(
      OpGraph("aten.repeat.default", {Arg::Ref("x0"), Ints({0, 1})}, 1), {x});
  ExpectTensor(out, DType::kInt32, {0, 3}, {});
}

TEST(LoweringCatPad, SelectAndSliceScatterByHand) {
  const Tensor self =
      MakeTensor(DType::kFloat32, {2, 5}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  // select_scatter at index -2 of dim 1.
  Tensor out = RunJit1(
      OpGraph("aten.select_scatter.default",
              {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Int(1), Arg::Int(-2)}, 2),
      {self, MakeTensor(DType::kFloat32, {2}, {1, 2})});
  ExpectTensor(out, DType::kFloat32, {2, 5}, {0, 0, 0, 1, 0, 0, 0, 0, 2, 0});
  // slice_scatter of [1:5:2] along dim 1.
  out = RunJit1(OpGraph("aten.slice_scatter.default",
                        {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Int(1),
                         Arg::Int(1), Arg::Int(5), Arg::Int(2)},
                        2),
                {self, MakeTensor(DType::kFloat32, {2, 2}, {1, 2, 3, 4})});
  ExpectTensor(out, DType::kFloat32, {2, 5}, {0, 1, 0, 2, 0, 0, 3, 0, 4, 0});
  // An empty slice leaves self as it is.
  out = RunJit1(OpGraph("aten.slice_scatter.default",
                        {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Int(1),
                         Arg::Int(4), Arg::Int(2)},
                        2),
                {MakeTensor(DType::kFloat32, {1, 5}, {1, 2, 3, 4, 5}),
                 MakeTensor(DType::kFloat32, {1, 0}, {})});
  ExpectTensor(out, DType::kFloat32, {1, 5}, {1, 2, 3, 4, 5});
  // Strided operands against eager.
  ExpectLoweredMatchesEager(
      OpGraph("aten.slice_scatter.default",
              {Arg::Ref("x0"), Arg::Ref("x1"), Arg::Int(0), Arg::Int(-5),
               Arg::None(), Arg::Int(3)},
              2),
      {RandomTensor(DType::kInt64, {7, 3}, 5),
       RandomTensor(DType::kInt64, {2, 3}, 6)});
}

}  // namespace
}  // namespace guardjit
