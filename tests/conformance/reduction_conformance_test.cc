// Reductions over random dims (keepdim or not), softmax, log_softmax,
// layer_norm and inference batch norm, compiled vs eager.

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jit/schedule/fusion.h"
#include "jit/schedule/split_reduction.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectJitMatchesEager;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::RandomTensor;

// Float sums accumulate in the value's dtype in a different order than the
// eager kernels' double sums.
constexpr double kReductionRtol = 1e-5;

// float16/bfloat16 results round once from float32: JitTolerance's.
double Rtol(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 ? -1
                                                               : kReductionRtol;
}

std::vector<Arg> DimList(const std::vector<int64_t>& dims) {
  std::vector<Arg> list;
  for (int64_t d : dims) list.push_back(Arg::Int(d));
  return list;
}

TEST(ReductionConformanceTest, RandomDimsAndKeepdimMatchEager) {
  std::mt19937_64 rng(7);
  const Shape shape = {3, 5, 7};
  struct Op {
    const char* target;
    bool has_keepdim;
    bool floats_only;
  };
  const Op ops[] = {{"aten.sum.dim_IntList", true, false},
                    {"aten.mean.dim", true, true},
                    {"aten.amax.default", true, false},
                    {"aten.amin.default", true, false}};
  int compared = 0;
  for (const Op& op : ops) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
          DType::kBool, DType::kFloat16, DType::kBFloat16}) {
      if (op.floats_only && !IsFloating(dtype)) continue;
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<int64_t> dims;
        for (int d = 0; d < 3; ++d) {
          if (rng() % 2) dims.push_back(rng() % 2 ? d : d - 3);
        }
        if (dims.empty()) dims.push_back(rng() % 3);
        const bool keepdim = rng() % 2;
        SCOPED_TRACE(absl::StrCat(op.target, " ", DTypeName(dtype), " dims ",
                                  dims.size(), " keepdim ", keepdim));
        auto graph = OpGraph(
            op.target,
            {Arg::Ref("x0"), Arg::OfList(DimList(dims)), Arg::Bool(keepdim)},
            1);
        const Tensor x = RandomTensor(dtype, shape, rng());
        ExpectJitMatchesEager(graph, {x}, Rtol(dtype));
        ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, Rtol(dtype));
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 70);
}

TEST(ReductionConformanceTest, FullReductionsMatchEager) {
  for (const char* target :
       {"aten.sum.default", "aten.mean.default", "aten.prod.default"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
      if (std::string(target) == "aten.mean.default" && !IsFloating(dtype)) {
        continue;
      }
      SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype)));
      auto graph = OpGraph(target, {Arg::Ref("x0")}, 1);
      // Products of values near 1 stay finite.
      const bool prod = std::string(target) == "aten.prod.default";
      ExpectJitMatchesEager(
          graph,
          {RandomTensor(dtype, {6, 11}, 3, prod ? 0.5 : -2, prod ? 1.5 : 2)},
          kReductionRtol);
    }
  }
}

TEST(ReductionConformanceTest, VarAnyAllMatchEager) {
  const Shape shape = {4, 6, 5};
  for (bool keepdim : {false, true}) {
    for (int64_t dim : {0, -1}) {
      for (double correction : {0.0, 1.0, 6.0}) {
        SCOPED_TRACE(absl::StrCat("var dim ", dim, " correction ", correction,
                                  " keepdim ", keepdim));
        auto var = OpGraph("aten.var.correction",
                           {Arg::Ref("x0"), Arg::OfList({Arg::Int(dim)})}, 1,
                           {{"correction", Arg::Float(correction)},
                            {"keepdim", Arg::Bool(keepdim)}});
        for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
          ExpectJitMatchesEager(var, {RandomTensor(dtype, shape, 5)},
                                kReductionRtol);
        }
      }
      for (const char* target : {"aten.any.dim", "aten.all.dim"}) {
        SCOPED_TRACE(absl::StrCat(target, " dim ", dim));
        auto graph = OpGraph(
            target, {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(keepdim)}, 1);
        for (DType dtype :
             {DType::kBool, DType::kUInt8, DType::kFloat32, DType::kInt32}) {
          // Values in [0, 2) so that zeros (false) are common.
          ExpectJitMatchesEager(graph, {RandomTensor(dtype, shape, 6, 0, 2)});
        }
      }
    }
  }
  for (const char* target : {"aten.any.dims", "aten.all.dims"}) {
    auto graph = OpGraph(target, {Arg::Ref("x0"), Arg::OfList({})}, 1);
    ExpectJitMatchesEager(graph, {RandomTensor(DType::kBool, shape, 7)});
  }
  for (const char* target : {"aten.any.default", "aten.all.default"}) {
    SCOPED_TRACE(target);
    auto graph = OpGraph(target, {Arg::Ref("x0")}, 1);
    for (DType dtype : {DType::kBool, DType::kFloat32, DType::kInt64}) {
      ExpectJitMatchesEager(graph, {RandomTensor(dtype, shape, 8, 0, 2)});
      // All nonzero: all() is true.
      ExpectJitMatchesEager(graph, {RandomTensor(dtype, shape, 9, 1, 2)});
    }
  }
}

TEST(ReductionConformanceTest, ProdAlongADimMatchesEager) {
  for (int64_t dim : {0, 1, -1}) {
    for (bool keepdim : {false, true}) {
      SCOPED_TRACE(absl::StrCat("prod dim ", dim, " keepdim ", keepdim));
      auto graph =
          OpGraph("aten.prod.dim_int",
                  {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(keepdim)}, 1);
      for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
        ExpectJitMatchesEager(graph,
                              {RandomTensor(dtype, {4, 6, 5}, 10, 0.5, 1.5)},
                              kReductionRtol);
      }
    }
  }
}

TEST(ReductionConformanceTest, ArgMaxArgMinMatchEager) {
  for (const char* target : {"aten.argmax.default", "aten.argmin.default"}) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kUInt8}) {
      for (Arg dim : {Arg::Int(0), Arg::Int(-1), Arg()}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype), " ",
                                    dim.is_none() ? "all" : "dim", " ",
                                    keepdim));
          auto graph =
              OpGraph(target, {Arg::Ref("x0"), dim, Arg::Bool(keepdim)}, 1);
          // Few distinct values: ties must keep the first position.
          Tensor x = RandomTensor(dtype, {5, 7}, 8, 0, 4);
          if (IsFloating(dtype)) {
            for (int64_t i = 0; i < x.numel(); ++i) {
              if (dtype == DType::kFloat32) {
                x.data_as<float>()[i] = std::floor(x.data_as<float>()[i]);
              } else {
                x.data_as<double>()[i] = std::floor(x.data_as<double>()[i]);
              }
            }
            if (dtype == DType::kFloat32) {
              x.data_as<float>()[9] = std::nanf("");  // row 1, col 2
            }
          }
          ExpectJitMatchesEager(graph, {x});
          ExpectJitMatchesEager(graph, {NonContiguousCopy(x)});
        }
      }
    }
  }
}

// Floating max/min reductions run vectorized (maxnum with NaN tracked on the
// side): a NaN anywhere in a row, in the vector body or the remainder, makes
// that row's result NaN, as in eager; infinities are ordinary values. Rows of
// 67 elements cover both parts; softmax shares the max reduction.
TEST(ReductionConformanceTest, MaxMinPropagateNaNAndInfinityInLongRows) {
  constexpr int64_t kCols = 67;
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    Tensor x = RandomTensor(dtype, {6, kCols}, 21, -4, 4);
    auto set = [&](int64_t row, int64_t col, double v) {
      if (dtype == DType::kFloat32) {
        x.data_as<float>()[row * kCols + col] = static_cast<float>(v);
      } else {
        x.data_as<double>()[row * kCols + col] = v;
      }
    };
    set(0, 0, NAN);          // first element
    set(1, 40, NAN);         // vector body
    set(2, kCols - 1, NAN);  // remainder
    set(3, 5, INFINITY);
    set(3, 9, -INFINITY);
    set(4, 7, -INFINITY);
    set(4, 60, NAN);  // NaN after an infinity
    // row 5 stays finite
    for (const char* target : {"aten.amax.default", "aten.amin.default"}) {
      for (int dim : {0, 1}) {
        SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype), " ", dim));
        auto graph = OpGraph(
            target,
            {Arg::Ref("x0"), Arg::OfList({Arg::Int(dim)}), Arg::Bool(false)},
            1);
        ExpectJitMatchesEager(graph, {x});
        ExpectJitMatchesEager(graph, {NonContiguousCopy(x)});
      }
    }
    SCOPED_TRACE(absl::StrCat("softmax ", DTypeName(dtype)));
    auto softmax = OpGraph("aten._softmax.default",
                           {Arg::Ref("x0"), Arg::Int(1), Arg::Bool(false)}, 1);
    ExpectJitMatchesEager(softmax, {x}, Rtol(dtype));
  }
}

TEST(ReductionConformanceTest, SoftmaxAndLogSoftmaxMatchEager) {
  for (const char* target :
       {"aten._softmax.default", "aten._log_softmax.default"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                        DType::kBFloat16}) {
      for (int dim : {0, 1, -1}) {
        SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype), " ", dim));
        auto graph = OpGraph(
            target, {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(false)}, 1);
        const Tensor x = RandomTensor(dtype, {2, 9, 33}, dim + 10, -8, 8);
        ExpectJitMatchesEager(graph, {x}, Rtol(dtype));
        ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, Rtol(dtype));
      }
    }
  }
}

TEST(ReductionConformanceTest, LayerNormMatchesEager) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    for (int normalized_dims : {1, 2}) {
      for (bool affine : {false, true}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", normalized_dims,
                                  affine ? " affine" : ""));
        const Shape shape = {4, 6, 10};
        const Shape normalized(shape.end() - normalized_dims, shape.end());
        std::vector<Arg> norm;
        for (int64_t s : normalized) norm.push_back(Arg::Int(s));
        std::vector<Tensor> inputs = {RandomTensor(dtype, shape, 1)};
        std::vector<Arg> args = {Arg::Ref("x0"), Arg::OfList(norm)};
        if (affine) {
          inputs.push_back(RandomTensor(dtype, normalized, 2));
          inputs.push_back(RandomTensor(dtype, normalized, 3));
          args.push_back(Arg::Ref("x1"));
          args.push_back(Arg::Ref("x2"));
        } else {
          args.push_back(Arg());
          args.push_back(Arg());
        }
        args.push_back(Arg::Float(1e-5));
        auto graph = OpGraph("aten.native_layer_norm.default", args,
                             static_cast<int>(inputs.size()), {}, 3);
        ExpectJitMatchesEager(graph, inputs, Rtol(dtype));
      }
    }
  }
}

// _native_batch_norm_legit_no_training (and _native_batch_norm_legit with
// training=False) over 2-D and 4-D inputs, with and without weight and bias;
// float16/bfloat16 inputs with float32 parameters as ATen's mixed type.
TEST(ReductionConformanceTest, InferenceBatchNormMatchesEager) {
  for (DType dtype :
       {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const DType param =
        dtype == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    for (const Shape& shape : {Shape{5, 3}, Shape{2, 3, 4, 5}}) {
      for (bool affine : {false, true}) {
        for (bool legit : {false, true}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " rank ", shape.size(),
                                    affine ? " affine" : "",
                                    legit ? " legit" : ""));
          std::vector<Tensor> inputs = {RandomTensor(dtype, shape, 1),
                                        RandomTensor(param, {3}, 2),
                                        RandomTensor(param, {3}, 3, 0.1, 2)};
          std::vector<Arg> args = {Arg::Ref("x0"), Arg(), Arg(), Arg::Ref("x1"),
                                   Arg::Ref("x2")};
          if (affine) {
            inputs.push_back(RandomTensor(param, {3}, 4));
            inputs.push_back(RandomTensor(param, {3}, 5));
            args[1] = Arg::Ref("x3");
            args[2] = Arg::Ref("x4");
          }
          if (legit) args.push_back(Arg::Bool(false));
          args.push_back(Arg::Float(0.1));
          args.push_back(Arg::Float(1e-5));
          auto graph = OpGraph(legit ? "aten._native_batch_norm_legit.default"
                                     : "aten._native_batch_norm_legit_no_"
                                       "training.default",
                               args, static_cast<int>(inputs.size()), {}, 3);
          ExpectJitMatchesEager(graph, inputs, Rtol(dtype));
          inputs[0] = NonContiguousCopy(inputs[0]);
          ExpectJitMatchesEager(graph, inputs, Rtol(dtype));
        }
      }
    }
  }
}

// Issue #19: float32 sums accumulated in float lost mass past 2^24 addends
// (sum(ones[8192, 8192]) gave 65536000, sum(expand(1, [1, 2^30])) 2^29).
// Expanded scalars give billions of elements without the memory; the values
// are exact, so the compiled results must be too.
struct LargeCase {
  const char* label;
  DType dtype;
  std::vector<double> input;    // x0, [n, 1]
  std::vector<int64_t> expand;  // [n, count]
  const char* target;
  std::vector<Arg> args;  // after the expanded value
  double expected;        // first element of the output
};

TEST(ReductionConformanceTest, SumsOverBillionsOfElementsKeepTheirMass) {
  const std::vector<LargeCase> cases = {
      {"sum 8192^2 ones",
       DType::kFloat32,
       {1},
       {8192, 8192},
       "aten.sum.default",
       {},
       8192.0 * 8192.0},
      {"sum 2^30 ones",
       DType::kFloat32,
       {1},
       {1, int64_t{1} << 30},
       "aten.sum.default",
       {},
       std::ldexp(1.0, 30)},
      {"sum 2^28 tenths",
       DType::kFloat32,
       {0.1f},
       {1 << 14, 1 << 14},
       "aten.sum.default",
       {},
       static_cast<float>(0.1f * std::ldexp(1.0, 28))},
      {"mean 2^28 threes",
       DType::kFloat32,
       {3},
       {1, 1 << 28},
       "aten.mean.default",
       {},
       3.0},
      {"var of 1s and 2s",
       DType::kFloat32,
       {1, 2},
       {2, 1 << 27},
       "aten.var.correction",
       {Arg::None()},
       0.25 * (1 << 28) / ((1 << 28) - 1)},
      {"row sums 2^25",
       DType::kFloat32,
       {1},
       {4, 1 << 25},
       "aten.sum.dim_IntList",
       {testing::Ints({1})},
       std::ldexp(1.0, 25)},
      {"softmax 2^25",
       DType::kFloat32,
       {5},
       {1, 1 << 25},
       "aten._softmax.default",
       {Arg::Int(1), Arg::Bool(false)},
       std::ldexp(1.0, -25)},
      {"float16 sum 4096",
       DType::kFloat16,
       {1},
       {1, 4096},
       "aten.sum.default",
       {},
       4096},
      {"bfloat16 sum 2^16",
       DType::kBFloat16,
       {1},
       {1, 1 << 16},
       "aten.sum.default",
       {},
       65536},
  };
  for (const LargeCase& c : cases) {
    SCOPED_TRACE(c.label);
    GraphBuilder b("large");
    ASSERT_TRUE(b.AddPlaceholder("x0").ok());
    testing::AddNode(b, "big", "aten.expand.default",
                     {Arg::Ref("x0"), testing::Ints(c.expand)});
    std::vector<Arg> args = {Arg::Ref("big")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    testing::AddNode(b, "r", c.target, args);
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
    auto graph = testing::Finish(b);
    const int64_t n = static_cast<int64_t>(c.input.size());
    const Tensor x = testing::MakeTensor(c.dtype, {n, 1}, c.input);
    ASSERT_EQ(testing::EagerSteps(graph, {x}), 0);
    Specialization spec;
    spec.inputs.push_back(TensorMeta::Of(x));
    auto executable = testing::SharedJit().Compile(graph, spec);
    ASSERT_TRUE(executable.ok()) << executable.status();
    auto out = testing::RunOnSharedJit(**executable, {x});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<double> values = testing::ToDoubles((*out)[0]);
    ASSERT_FALSE(values.empty());
    // Sums of small integers and powers of two are exact (one rounding to
    // the result dtype); 0.1f rounds in every float block partial, within
    // the bound llvm_codegen.cc states for blocks of 2048: 129 * 2^-24.
    const double rtol = std::string(c.label) == "sum 2^28 tenths" ? 8e-6 : 1e-7;
    EXPECT_NEAR(values[0], c.expected, std::abs(c.expected) * rtol);
    EXPECT_EQ(values.back(), values[0]);
  }
}

// Issue #19: a reduction over few outer points and a long reduced extent
// is split (jit/schedule/split_reduction.h): a kernel of partials over chunks
// of the reduced extent, run in parallel and stoppable between chunks, then a
// kernel combining them. `target` over x0 into node "r".
std::shared_ptr<const Graph> ReductionGraph(const char* target,
                                            std::vector<Arg> args = {}) {
  GraphBuilder b("split");
  EXPECT_TRUE(b.AddPlaceholder("x0").ok());
  args.insert(args.begin(), Arg::Ref("x0"));
  testing::AddNode(b, "r", target, args);
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("r")}).ok());
  return testing::Finish(b);
}

// The split's description in the static plan, or "" if none was split.
std::string SplitOf(const Graph& graph, const std::vector<Tensor>& inputs) {
  const Plan plan = testing::PlanOfInputs(graph, inputs);
  std::string split;
  for (const PlanStep& step : plan.steps) split += step.kernel.split;
  return split;
}

TEST(ReductionConformanceTest, SplitReductionsMatchEager) {
  struct Op {
    const char* target;
    std::vector<Arg> args;
    bool floats_only;
    double lo, hi;
  };
  const std::vector<Op> ops = {
      {"aten.sum.default", {}, false, 0, 1},
      {"aten.mean.default", {}, true, 0, 1},
      {"aten.amax.default", {testing::Ints({})}, false, -100, 100},
      {"aten.amin.default", {testing::Ints({})}, false, -100, 100},
      // Products of values this near 1 stay finite over 300001 elements.
      {"aten.prod.default", {}, true, 0.9999, 1.0001},
  };
  // Just below the threshold (one kernel), just above (two partials), a
  // non-multiple of the chunk, and a multiple.
  const std::vector<std::pair<int64_t, bool>> sizes = {
      {kSplitMinReduced - 1, false},
      {kSplitMinReduced, false},
      {kSplitMinReduced + 1, true},
      {3 * kSplitMinReduced + 7, true},
      {300001, true}};
  int split = 0;
  for (const Op& op : ops) {
    for (DType dtype :
         {DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32}) {
      if (op.floats_only && !IsFloating(dtype)) continue;
      for (const auto& [n, expect_split] : sizes) {
        SCOPED_TRACE(absl::StrCat(op.target, " ", DTypeName(dtype), " ", n));
        const auto graph = ReductionGraph(op.target, op.args);
        const bool ints = !IsFloating(dtype);
        const Tensor x =
            RandomTensor(dtype, {n}, n, ints ? -50 : op.lo, ints ? 50 : op.hi);
        // float32 products accumulate in float32, split or not (unsplit:
        // 6e-4 off eager's double product at 300001 elements).
        const bool float_prod = dtype == DType::kFloat32 &&
                                std::string(op.target) == "aten.prod.default";
        ExpectJitMatchesEager(graph, {x}, float_prod ? 2e-3 : kReductionRtol);
        const std::string description = SplitOf(*graph, {x});
        if (expect_split) {
          EXPECT_THAT(description,
                      ::testing::MatchesRegex("(reduction 'r' split into "
                                              "[0-9]+ partials)+"));
          ++split;
        } else {
          EXPECT_EQ(description, "");
        }
      }
    }
  }
  EXPECT_EQ(split, 3 * (3 * 4 + 2 * 2));
}

// Several reduced dims (the split takes chunks of the outer one, or of the
// flattened dims before an inner one), kept outer dims, keepdim, strided
// inputs, any/all over bool, and integer sums.
TEST(ReductionConformanceTest, SplitReductionsOverSeveralDimsMatchEager) {
  struct Case {
    Shape shape;
    std::vector<int64_t> dims;
    bool split;
  };
  const std::vector<Case> cases = {
      {{700, 301}, {0, 1}, true},         // full: chunks of rows
      {{3, 70001}, {1}, true},            // three rows, two partials each
      {{3, 40000}, {1}, false},           // rows below the threshold
      {{2, 300, 500}, {1, 2}, true},      // two outer points
      {{3, 100, 1000}, {0, 1, 2}, true},  // chunks over dims 0 and 1
      {{64, 70000}, {1}, false},          // 64 outer points
      {{700, 3, 101}, {0, 2}, true},      // reduced dims around a kept one
  };
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " shape ",
                                  absl::StrJoin(c.shape, "x"), " keepdim ",
                                  keepdim));
        const auto graph =
            ReductionGraph("aten.sum.dim_IntList",
                           {testing::Ints(c.dims), Arg::Bool(keepdim)});
        const Tensor x =
            RandomTensor(dtype, c.shape, 11, 0, IsFloating(dtype) ? 1 : 10);
        ExpectJitMatchesEager(graph, {x}, kReductionRtol);
        ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, kReductionRtol);
        EXPECT_EQ(!SplitOf(*graph, {x}).empty(), c.split);
      }
    }
  }
  // any/all: one value different from the rest, in the last chunk.
  for (const char* target : {"aten.any.default", "aten.all.default"}) {
    const bool all = std::string(target) == "aten.all.default";
    for (int64_t at : {int64_t{5}, int64_t{299990}, int64_t{-1}}) {
      SCOPED_TRACE(absl::StrCat(target, " odd one at ", at));
      std::vector<double> values(300001, all ? 1 : 0);
      if (at >= 0) values[at] = all ? 0 : 1;
      const Tensor x = testing::MakeTensor(DType::kBool, {300001}, values);
      const auto graph = ReductionGraph(target);
      ExpectJitMatchesEager(graph, {x});
      EXPECT_NE(SplitOf(*graph, {x}), "");
    }
  }
}

// The kinds left unsplit (split_reduction.h): var's and softmax's passes
// fused into one kernel reduce values of an earlier stage's result (the
// mean, the max), argmax needs positions. Softmax over [1, n] fuses as over
// [n] (a loop of one iteration reads the max on its row).
TEST(ReductionConformanceTest, FusedTwoPassAndArgReductionsAreNotSplit) {
  const Tensor x = RandomTensor(DType::kFloat32, {300001}, 5, 0, 1);
  for (const auto& graph :
       {ReductionGraph("aten.var.correction", {Arg::None()}),
        ReductionGraph("aten.argmax.default", {Arg::None(), Arg::Bool(false)}),
        ReductionGraph("aten._softmax.default",
                       {Arg::Int(0), Arg::Bool(false)})}) {
    SCOPED_TRACE(graph->node(1).target);
    ExpectJitMatchesEager(graph, {x}, kReductionRtol);
    EXPECT_EQ(SplitOf(*graph, {x}), "");
  }
  const Tensor row = RandomTensor(DType::kFloat32, {1, 300001}, 5, 0, 1);
  const auto softmax =
      ReductionGraph("aten._softmax.default", {Arg::Int(1), Arg::Bool(false)});
  ExpectJitMatchesEager(softmax, {row}, kReductionRtol);
  EXPECT_EQ(SplitOf(*softmax, {row}), "");
}

// A dynamic entry splits its symbolic extents with chunk sizes evaluated per
// call: one partial for short calls, several for long ones, every call
// matching eager.
TEST(ReductionConformanceTest, SplitReductionsOfDynamicEntriesMatchEager) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(dtype));
    for (const char* target : {"aten.sum.default", "aten.amax.default"}) {
      SCOPED_TRACE(target);
      std::vector<Arg> args;
      if (std::string(target) == "aten.amax.default") {
        args.push_back(testing::Ints({}));
      }
      const auto graph = ReductionGraph(target, args);
      std::vector<std::vector<Tensor>> calls;
      for (int64_t n : {int64_t{7}, kSplitMinReduced - 1, kSplitMinReduced + 1,
                        int64_t{300001}, int64_t{2}}) {
        calls.push_back(
            {RandomTensor(dtype, {n}, n, IsFloating(dtype) ? 0 : -50,
                          IsFloating(dtype) ? 1 : 50)});
      }
      auto exe = testing::ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls,
                                                       kReductionRtol);
      ASSERT_NE(exe, nullptr);
      EXPECT_THAT(exe->Describe(),
                  ::testing::HasSubstr(
                      "reduction 'r' split into partials sized per call"));
      // Two symbolic dims, both reduced.
      const auto matrix = ReductionGraph(target, args);
      std::vector<std::vector<Tensor>> matrix_calls;
      for (const auto& [n, m] : std::vector<std::pair<int64_t, int64_t>>{
               {3, 5}, {700, 301}, {2, 200003}, {100003, 2}}) {
        matrix_calls.push_back(
            {RandomTensor(dtype, {n, m}, n + m, IsFloating(dtype) ? 0 : -50,
                          IsFloating(dtype) ? 1 : 50)});
      }
      auto matrix_exe = testing::ExpectDynamicJitMatchesEager(
          matrix, {{0, 0}, {0, 1}}, matrix_calls, kReductionRtol);
      ASSERT_NE(matrix_exe, nullptr);
      EXPECT_THAT(matrix_exe->Describe(),
                  ::testing::HasSubstr("split into partials sized per call"));
    }
  }
}

// A split float32 sum accumulates in float64: it is the correctly rounded
// sum (within one float ulp), never further from the exact sum than the
// unsplit kernel's float blocks (GJ_SPLIT_REDUCTIONS=0).
TEST(ReductionConformanceTest, SplitFloat32SumIsAtLeastAsAccurate) {
  const auto graph = ReductionGraph("aten.sum.default");
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    const Tensor x = RandomTensor(DType::kFloat32, {(1 << 22) + 3}, seed,
                                  seed == 3 ? -1 : 0, 1);
    double exact = 0;  // float values: exact enough in double for 2^22
    for (double v : testing::ToDoubles(x)) exact += v;
    auto run = [&](bool split) {
      if (!split) setenv("GJ_SPLIT_REDUCTIONS", "0", 1);
      Specialization spec;
      spec.inputs.push_back(TensorMeta::Of(x));
      auto exe = testing::SharedJit().Compile(graph, spec);
      unsetenv("GJ_SPLIT_REDUCTIONS");
      EXPECT_TRUE(exe.ok()) << exe.status();
      if (!exe.ok()) return 0.0;
      EXPECT_EQ((*exe)->Describe().find("split into") != std::string::npos,
                split);
      auto out = testing::RunOnSharedJit(**exe, {x});
      EXPECT_TRUE(out.ok()) << out.status();
      return out.ok() ? testing::ToDoubles((*out)[0])[0] : 0.0;
    };
    const double split = run(true);
    const double unsplit = run(false);
    const float rounded = static_cast<float>(exact);
    EXPECT_LE(std::abs(split - rounded),
              std::abs(std::nextafter(rounded, 0.0f) - rounded));
    EXPECT_LE(std::abs(split - exact), std::abs(unsplit - exact));
  }
}

// explain: the static entry says how many partials.
TEST(ReductionConformanceTest, ExplainSaysTheReductionWasSplit) {
  const auto graph = ReductionGraph("aten.sum.default");
  const Tensor x = RandomTensor(DType::kFloat32, {1 << 22}, 3, 0, 1);
  Specialization spec;
  spec.inputs.push_back(TensorMeta::Of(x));
  auto exe = testing::SharedJit().Compile(graph, spec);
  ASSERT_TRUE(exe.ok()) << exe.status();
  // 2^22 elements: chunks of 2^16, 64 partials.
  EXPECT_THAT((*exe)->Describe(),
              ::testing::HasSubstr("jit: 2 fused kernels, 0 eager nodes"));
  EXPECT_THAT((*exe)->Describe(),
              ::testing::HasSubstr("; reduction 'r' split into 64 partials"));
}

}  // namespace
}  // namespace guardjit
