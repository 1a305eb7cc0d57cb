// jit/lowering/lowering_resample.cc: upsample_nearest2d.vec and
// upsample_bilinear2d.vec lowered to gathers (bilinear: four gathered taps
// blended pointwise) with no eager step, against the eager kernels and
// hand-computed values: output sizes and scale factors (integer and not,
// up and down), align_corners, strided inputs, dynamic spatial sizes
// computed in the kernel, and an empty batch left to the eager kernel.

#include <memory>
#include <string>
#include <utility>
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

Arg Floats(const std::vector<double>& v) {
  std::vector<Arg> list;
  for (double f : v) list.push_back(Arg::Float(f));
  return Arg::OfList(list);
}

// upsample_nearest2d.vec(x0, output_size, scale_factors).
std::shared_ptr<const Graph> Nearest(Arg output_size, Arg scale_factors) {
  return OpGraph("aten.upsample_nearest2d.vec",
                 {Arg::Ref("x0"), output_size, scale_factors}, 1);
}
// upsample_bilinear2d.vec(x0, output_size, align_corners, scale_factors).
std::shared_ptr<const Graph> Bilinear(Arg output_size, bool align_corners,
                                      Arg scale_factors) {
  return OpGraph(
      "aten.upsample_bilinear2d.vec",
      {Arg::Ref("x0"), output_size, Arg::Bool(align_corners), scale_factors},
      1);
}

Tensor RunJit1(const std::shared_ptr<const Graph>& graph,
               const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out = RunJit(graph, inputs);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Tensor() : out[0];
}

TEST(LoweringResample, NearestIsAGatherBilinearABlendOfGathers) {
  const std::vector<Tensor> x = {
      RandomTensor(DType::kFloat32, {1, 2, 3, 4}, 1)};
  auto nearest = Nearest(Ints({5, 7}), Arg::None());
  LoweredFor l = LowerFor(*nearest, x);
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  EXPECT_EQ(l.KindOf(*nearest, "op"), LValue::Kind::kGather);
  EXPECT_EQ(EagerSteps(nearest, x), 0);

  auto bilinear = Bilinear(Arg::None(), false, Floats({2.0, 1.5}));
  l = LowerFor(*bilinear, x);
  EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
  EXPECT_EQ(l.KindOf(*bilinear, "op"), LValue::Kind::kPointwise);
  int gathers = 0;
  for (const LValue& v : l.lowered.values) {
    gathers += v.kind == LValue::Kind::kGather;
  }
  EXPECT_EQ(gathers, 6);  // two rows, then four taps
  EXPECT_EQ(EagerSteps(bilinear, x), 0);
}

TEST(LoweringResample, NearestByHand) {
  const Tensor x = MakeTensor(DType::kFloat32, {1, 1, 2, 2}, {1, 2, 3, 4});
  ExpectTensor(RunJit1(Nearest(Arg::None(), Floats({2.0, 2.0})), {x}),
               DType::kFloat32, {1, 1, 4, 4},
               {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, 0, 0);
  // Down: source index floor(i * in / out).
  ExpectTensor(RunJit1(Nearest(Ints({1, 2}), Arg::None()),
                       {MakeTensor(DType::kUInt8, {1, 1, 2, 4},
                                   {1, 2, 3, 4, 5, 6, 7, 8})}),
               DType::kUInt8, {1, 1, 1, 2}, {1, 3}, 0, 0);
}

TEST(LoweringResample, BilinearByHand) {
  const Tensor x = MakeTensor(DType::kFloat64, {1, 1, 1, 2}, {0, 10});
  // align_corners: the corners map onto each other.
  ExpectTensor(RunJit1(Bilinear(Ints({1, 4}), true, Arg::None()), {x}),
               DType::kFloat64, {1, 1, 1, 4}, {0, 10.0 / 3, 20.0 / 3, 10},
               1e-12, 1e-12);
  // Half-pixel centers: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25.
  ExpectTensor(RunJit1(Bilinear(Ints({1, 4}), false, Arg::None()), {x}),
               DType::kFloat64, {1, 1, 1, 4}, {0, 2.5, 7.5, 10}, 1e-12, 1e-12);
}

TEST(LoweringResample, MatchesEagerOnSizesFactorsAndDTypes) {
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(d));
    const std::vector<Tensor> x = {RandomTensor(d, {2, 3, 5, 7}, ++seed)};
    ExpectLoweredMatchesEager(Nearest(Ints({9, 4}), Arg::None()), x);
    ExpectLoweredMatchesEager(Nearest(Arg::None(), Floats({1.7, 0.6})), x);
    for (bool align : {false, true}) {
      ExpectLoweredMatchesEager(Bilinear(Ints({3, 11}), align, Arg::None()), x);
      ExpectLoweredMatchesEager(
          Bilinear(Arg::None(), align, Floats({2.5, 0.75})), x);
    }
  }
  ExpectLoweredMatchesEager(
      Nearest(Arg::None(), Floats({3.0, 2.0})),
      {RandomTensor(DType::kUInt8, {1, 2, 3, 3}, ++seed, 0, 255)});
}

TEST(LoweringResample, DynamicSpatialSizes) {
  // H and W symbolic, integer factors: the source indices and weights are
  // computed from the size parameters, one compile for every call.
  for (bool bilinear : {false, true}) {
    SCOPED_TRACE(bilinear ? "bilinear" : "nearest");
    auto graph = bilinear ? Bilinear(Arg::None(), false, Floats({2.0, 3.0}))
                          : Nearest(Arg::None(), Floats({2.0, 3.0}));
    std::vector<std::vector<Tensor>> calls;
    int seed = 20;
    for (auto [h, w] : {std::pair{3, 4}, std::pair{5, 2}, std::pair{7, 9}}) {
      calls.push_back({RandomTensor(DType::kFloat32, {1, 2, h, w}, ++seed)});
    }
    auto exe =
        testing::ExpectDynamicJitMatchesEager(graph, {{0, 2}, {0, 3}}, calls);
    ASSERT_NE(exe, nullptr);
    EXPECT_NE(exe->Describe().find("0 eager nodes"), std::string::npos)
        << exe->Describe();
  }
}

TEST(LoweringResample, EmptyBatchRunsEagerlyAndBadInputsFail) {
  auto graph = Nearest(Ints({4, 4}), Arg::None());
  const std::vector<Tensor> empty = {
      RandomTensor(DType::kFloat32, {0, 2, 2, 2}, 30)};
  const LoweredFor l = LowerFor(*graph, empty);
  EXPECT_EQ(l.reasons, std::vector<std::string>{
                           "op (aten.upsample_nearest2d.vec): empty upsample"});
  EXPECT_EQ(EagerSteps(graph, empty), 1);
  ExpectJitMatchesEager(graph, empty);
  // Bilinear has no integer kernel: the shape rule says so.
  const absl::Status s =
      CompileStatus(Bilinear(Ints({4, 4}), false, Arg::None()),
                    {RandomTensor(DType::kUInt8, {1, 1, 2, 2}, 31, 0, 9)});
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("upsample_bilinear2d is not implemented for"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace guardjit
