// Factory ops (arange, full, scalar_tensor), fmod, remainder and
// round(decimals) compiled into kernels, against the eager kernels: fused
// with the pointwise ops that read them, no eager step left.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::EagerSteps;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using testing::Ints;
using testing::RandomTensor;
using testing::SharedJitOnGpu;

// x + factory(...): the factory's values, in x's dtype's promotion with
// the factory's dtype, fused into one kernel.
std::shared_ptr<const Graph> PlusFactory(const std::string& target,
                                         std::vector<Arg> args, DType dtype) {
  GraphBuilder b("plus_factory");
  EXPECT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "f", target, std::move(args), {{"dtype", Arg::OfDType(dtype)}});
  AddNode(b, "y", "aten.add.Tensor", {Arg::Ref("x"), Arg::Ref("f")});
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y"), Arg::Ref("f")}).ok());
  return Finish(b);
}

TEST(CreationConformanceTest, FactoriesFuseAndMatchEager) {
  struct Case {
    std::string target;
    std::vector<Arg> args;
    int64_t length;
  };
  const Case cases[] = {
      {"aten.arange.default", {Arg::Int(37)}, 37},
      {"aten.arange.start", {Arg::Int(-5), Arg::Int(32)}, 37},
      {"aten.arange.start_step",
       {Arg::Float(0.5), Arg::Float(19.0), Arg::Float(0.5)},
       37},
      {"aten.arange.start_step",
       {Arg::Int(100), Arg::Int(-11), Arg::Int(-3)},
       37},
      {"aten.arange.start_step",
       {Arg::Float(-1.0), Arg::Float(1.0), Arg::Float(0.054)},
       38},
      {"aten.full.default", {Ints({37}), Arg::Float(2.75)}, 37},
      {"aten.full.default", {Ints({37}), Arg::Int(-3)}, 37},
  };
  int compared = 0;
  for (const Case& c : cases) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
          DType::kFloat16, DType::kBFloat16, DType::kInt8}) {
      SCOPED_TRACE(absl::StrCat(c.target, " ", DTypeName(dtype)));
      auto graph = PlusFactory(c.target, c.args, dtype);
      const std::vector<Tensor> inputs = {
          RandomTensor(DType::kFloat32, {3, c.length}, compared + 1)};
      std::vector<TensorMeta> metas = {TensorMeta::Of(inputs[0])};
      if (!InferShapes(*graph, metas).ok()) continue;  // eager rejects it too
      EXPECT_EQ(EagerSteps(graph, inputs), 0);
      // The sum reads the factory's float16/bfloat16 value before its
      // rounding to that dtype (eager rounds it first): one rounding apart.
      // On a GPU start + i * step is one fused multiply-add (eager rounds
      // the product first): a few units in the last place of the terms
      // (seen on an H200: 0.35 vs 0.35000000000000009 for float64).
      // Everything else is exact.
      const bool floating =
          dtype == DType::kFloat32 || dtype == DType::kFloat64;
      const double rtol = dtype == DType::kFloat16    ? 1e-3
                          : dtype == DType::kBFloat16 ? 8e-3
                          : floating && SharedJitOnGpu()
                              ? (dtype == DType::kFloat32 ? 1e-6 : 1e-15)
                              : 0;
      ExpectJitMatchesEager(graph, inputs, rtol);
      ++compared;
    }
  }
  EXPECT_GT(compared, 35);

  GraphBuilder b("scalar_tensor");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "s", "aten.scalar_tensor.default", {Arg::Float(-1.5)},
          {{"dtype", Arg::OfDType(DType::kFloat64)}});
  AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("s")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = Finish(b);
  const std::vector<Tensor> inputs = {RandomTensor(DType::kFloat32, {4, 5}, 9)};
  EXPECT_EQ(EagerSteps(graph, inputs), 0);
  ExpectJitMatchesEager(graph, inputs, 0);
}

// Floating fmod/remainder and round(decimals) compile (their values are
// compared in PointwiseConformanceTest); integral modulo stays eager, where
// a zero divisor is an error.
TEST(CreationConformanceTest, ModAndRoundDecimalsCompileForFloats) {
  for (const char* target : {"aten.fmod.Tensor", "aten.remainder.Tensor"}) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt32}) {
      SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype)));
      auto graph =
          testing::OpGraph(target, {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
      const std::vector<Tensor> inputs = {
          RandomTensor(dtype, {4, 9}, 1, -20, 20),
          RandomTensor(dtype, {9}, 2, -4, 4)};
      EXPECT_EQ(EagerSteps(graph, inputs), IsFloating(dtype) ? 0 : 1);
      ExpectJitMatchesEager(graph, inputs);
    }
  }
  // Zero divisors: NaN for floats (both conventions), an error for ints.
  Tensor num = RandomTensor(DType::kFloat32, {6}, 3, -5, 5);
  Tensor den = RandomTensor(DType::kFloat32, {6}, 4, -5, 5);
  den.data_as<float>()[1] = 0.0f;
  den.data_as<float>()[4] = -0.0f;
  for (const char* target : {"aten.fmod.Tensor", "aten.remainder.Tensor"}) {
    ExpectJitMatchesEager(
        testing::OpGraph(target, {Arg::Ref("x0"), Arg::Ref("x1")}, 2),
        {num, den});
  }
  Tensor inum = RandomTensor(DType::kInt32, {6}, 5, -5, 5);
  Tensor iden = RandomTensor(DType::kInt32, {6}, 6, 1, 5);
  iden.data_as<int32_t>()[2] = 0;
  ExpectJitMatchesEager(testing::OpGraph("aten.remainder.Tensor",
                                         {Arg::Ref("x0"), Arg::Ref("x1")}, 2),
                        {inum, iden});

  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    auto graph = testing::OpGraph("aten.round.decimals", {Arg::Ref("x0")}, 1,
                                  {{"decimals", Arg::Int(2)}});
    const std::vector<Tensor> inputs = {RandomTensor(dtype, {5, 8}, 7, -9, 9)};
    EXPECT_EQ(EagerSteps(graph, inputs), dtype == DType::kBFloat16 ? 1 : 0);
    ExpectJitMatchesEager(graph, inputs, 0);
  }
}

}  // namespace
}  // namespace guardjit
