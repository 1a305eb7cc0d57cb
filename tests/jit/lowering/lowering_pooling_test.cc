// jit/lowering/lowering_pooling.cc: max_pool{2,3}d_with_indices and
// avg_pool{2,3}d lowered to reductions over a window (no eager step), against
// the eager kernels and hand-computed values: padding, stride, dilation,
// ceil_mode, NaN and tie rules for the indices, windows outside the input,
// the avg divisors (count_include_pad, divisor_override), indices not
// computed where nothing reads them, and int64 avg_pool left to its eager
// kernel.

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
using testing::Ints;
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

// max_pool{n}d_with_indices(x0, kernel, stride, padding, dilation, ceil) ->
// (values, indices).
std::shared_ptr<const Graph> MaxPool(int n, std::vector<int64_t> kernel,
                                     std::vector<int64_t> stride,
                                     std::vector<int64_t> padding,
                                     std::vector<int64_t> dilation,
                                     bool ceil_mode = false) {
  return OpGraph(n == 2 ? "aten.max_pool2d_with_indices.default"
                        : "aten.max_pool3d_with_indices.default",
                 {Arg::Ref("x0"), Ints(kernel), Ints(stride), Ints(padding),
                  Ints(dilation), Arg::Bool(ceil_mode)},
                 1, {}, 2);
}

// avg_pool{n}d(x0, kernel, stride, padding, ceil, count_include_pad,
// divisor_override).
std::shared_ptr<const Graph> AvgPool(int n, std::vector<int64_t> kernel,
                                     std::vector<int64_t> stride,
                                     std::vector<int64_t> padding,
                                     bool ceil_mode, bool count_include_pad,
                                     Arg divisor_override = Arg::None()) {
  return OpGraph(
      n == 2 ? "aten.avg_pool2d.default" : "aten.avg_pool3d.default",
      {Arg::Ref("x0"), Ints(kernel), Ints(stride), Ints(padding),
       Arg::Bool(ceil_mode), Arg::Bool(count_include_pad), divisor_override},
      1);
}

// The single output of `graph` compiled and run on `inputs`.
Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

int CountKind(const LoweredGraph& l, LValue::Kind kind) {
  int n = 0;
  for (const LValue& v : l.values) n += v.kind == kind;
  return n;
}

TEST(LoweringPooling, MaxPoolIsAReductionOverItsWindow) {
  auto graph = MaxPool(2, {2, 2}, {1, 1}, {0, 0}, {1, 1});
  const std::vector<Tensor> x = {
      RandomTensor(DType::kFloat32, {1, 2, 4, 5}, 1)};
  const LoweredFor l = LowerFor(*graph, x);
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  EXPECT_EQ(l.KindOf(*graph, "item0"), LValue::Kind::kReduction);
  EXPECT_EQ(l.KindOf(*graph, "item1"), LValue::Kind::kSelect);
  // The maximum, the first maximum's index and the last NaN's index.
  EXPECT_EQ(CountKind(l.lowered, LValue::Kind::kReduction), 3);
  EXPECT_EQ(EagerSteps(graph, x), 0);
}

TEST(LoweringPooling, IndicesNobodyReadsAreNotComputed) {
  GraphBuilder b("values_only");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  testing::AddNode(b, "op", "aten.max_pool2d_with_indices.default",
                   {Arg::Ref("x"), Ints({3, 3}), Ints({2, 2})});
  testing::AddNode(b, "v", "getitem", {Arg::Ref("op"), Arg::Int(0)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("v")}).ok());
  auto graph = testing::Finish(b);
  const std::vector<Tensor> x = {RandomTensor(DType::kFloat32, {2, 7, 7}, 2)};
  const LoweredFor l = LowerFor(*graph, x);
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  EXPECT_EQ(CountKind(l.lowered, LValue::Kind::kReduction), 1);
  ExpectLoweredMatchesEager(graph, x);
}

TEST(LoweringPooling, MaxPoolByHand) {
  // 3x3 plane 1..9, 2x2 windows, stride 1.
  auto graph = MaxPool(2, {2, 2}, {1, 1}, {0, 0}, {1, 1});
  std::vector<Tensor> out = RunJit(
      graph,
      {MakeTensor(DType::kFloat32, {1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {1, 2, 2}, {5, 6, 8, 9}, 0, 0);
  ExpectTensor(out[1], DType::kInt64, {1, 2, 2}, {4, 5, 7, 8}, 0, 0);
  // Ties: the first maximum; NaN: the last NaN.
  auto whole = MaxPool(2, {2, 2}, {2, 2}, {0, 0}, {1, 1});
  out = RunJit(whole, {MakeTensor(DType::kFloat32, {2, 2, 2},
                                  {3, 3, 3, 3, 1, kNaN, kNaN, 4})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat32, {2, 1, 1}, {3, kNaN}, 0, 0);
  ExpectTensor(out[1], DType::kInt64, {2, 1, 1}, {0, 2}, 0, 0);
  // Padding 1, stride 2: each window has one in-input tap; all -inf keeps
  // that tap's index.
  auto padded = MaxPool(2, {2, 2}, {2, 2}, {1, 1}, {1, 1});
  out = RunJit(padded, {MakeTensor(DType::kFloat64, {1, 2, 2},
                                   {-kInf, -kInf, -kInf, -kInf})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kFloat64, {1, 2, 2}, {-kInf, -kInf, -kInf, -kInf},
               0, 0);
  ExpectTensor(out[1], DType::kInt64, {1, 2, 2}, {0, 1, 2, 3}, 0, 0);
  // Dilation 2 over a row: taps 0 and 2.
  auto dilated = MaxPool(2, {1, 2}, {1, 1}, {0, 0}, {1, 2});
  out = RunJit(dilated, {MakeTensor(DType::kInt32, {1, 1, 4}, {5, 9, 1, 7})});
  ASSERT_EQ(out.size(), 2u);
  ExpectTensor(out[0], DType::kInt32, {1, 1, 2}, {5, 9}, 0, 0);
  ExpectTensor(out[1], DType::kInt64, {1, 1, 2}, {0, 1}, 0, 0);
}

TEST(LoweringPooling, MaxPoolMatchesEager) {
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
        DType::kInt32, DType::kInt64, DType::kUInt8, DType::kInt8}) {
    SCOPED_TRACE(DTypeName(d));
    // Small integer ranges make ties common.
    ExpectLoweredMatchesEager(MaxPool(2, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true),
                              {RandomTensor(d, {2, 3, 7, 6}, ++seed, 0, 4)});
    ExpectLoweredMatchesEager(MaxPool(2, {2, 3}, {}, {0, 1}, {1, 1}),
                              {RandomTensor(d, {3, 5, 8}, ++seed, -3, 3)});
  }
  ExpectLoweredMatchesEager(
      MaxPool(3, {2, 2, 3}, {1, 2, 2}, {1, 0, 1}, {1, 1, 1}, true),
      {RandomTensor(DType::kFloat32, {1, 2, 4, 5, 6}, ++seed)});
}

TEST(LoweringPooling, AvgPoolDivisorsByHand) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(RunJit1(AvgPool(2, {2, 2}, {1, 1}, {0, 0}, false, true), {x}),
               DType::kFloat32, {1, 1, 2}, {3, 4}, 0, 0);
  // 2x2 windows, stride 2, padding 1 over [[1, 2], [3, 4]]: each window
  // holds one in-input tap.
  const Tensor y = MakeTensor(DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4});
  ExpectTensor(RunJit1(AvgPool(2, {2, 2}, {2, 2}, {1, 1}, false, true), {y}),
               DType::kFloat32, {1, 2, 2}, {0.25, 0.5, 0.75, 1}, 0, 0);
  ExpectTensor(RunJit1(AvgPool(2, {2, 2}, {2, 2}, {1, 1}, false, false), {y}),
               DType::kFloat32, {1, 2, 2}, {1, 2, 3, 4}, 0, 0);
  ExpectTensor(
      RunJit1(AvgPool(2, {2, 2}, {2, 2}, {1, 1}, false, true, Arg::Int(2)),
              {y}),
      DType::kFloat32, {1, 2, 2}, {0.5, 1, 1.5, 2}, 0, 0);
  // ceil_mode: a last window starting inside the input but running past
  // the padded input; its divisor is clipped to the padded input.
  ExpectTensor(RunJit1(AvgPool(2, {1, 2}, {1, 2}, {0, 0}, true, true),
                       {MakeTensor(DType::kFloat32, {1, 1, 3}, {2, 4, 9})}),
               DType::kFloat32, {1, 1, 2}, {3, 9}, 0, 0);
}

TEST(LoweringPooling, AvgPoolMatchesEager) {
  int seed = 20;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    for (bool include_pad : {false, true}) {
      ExpectLoweredMatchesEager(
          AvgPool(2, {3, 2}, {2, 2}, {1, 1}, true, include_pad),
          {RandomTensor(d, {2, 3, 7, 5}, ++seed)});
    }
    ExpectLoweredMatchesEager(
        AvgPool(3, {2, 2, 2}, {1, 2, 1}, {0, 1, 1}, false, false, Arg::Int(3)),
        {RandomTensor(d, {2, 3, 4, 5}, ++seed)});
  }
}

TEST(LoweringPooling, IntegersAndBoolsAreNotLowered) {
  // int64 avg_pool divides as integers: its eager kernel runs.
  auto avg = AvgPool(2, {2, 2}, {1, 1}, {0, 0}, false, true);
  const std::vector<Tensor> x = {
      RandomTensor(DType::kInt64, {1, 3, 3}, 30, -9, 9)};
  const LoweredFor l = LowerFor(*avg, x);
  EXPECT_EQ(l.reasons, std::vector<std::string>{
                           "op (aten.avg_pool2d.default): avg_pool2d of "
                           "integers"});
  EXPECT_EQ(EagerSteps(avg, x), 1);
  ExpectJitMatchesEager(avg, x);
  // bool max_pool: the shape rule's error.
  const absl::Status s =
      CompileStatus(MaxPool(2, {2, 2}, {1, 1}, {0, 0}, {1, 1}),
                    {MakeTensor(DType::kBool, {1, 2, 2}, {0, 1, 1, 0})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("max_pool2d is not implemented for bool tensors"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace guardjit
