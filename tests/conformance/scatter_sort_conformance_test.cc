// Issue #16's indexing, scatter, sort/scan and reduction ops inside compiled
// programs, against the eager interpreter:
//  - lowered to loop IR (fused kernels, no eager step): max.dim, min.dim
//    (an amax/amin plus an argmax/argmin), var.dim (two-pass) and
//    index.Tensor with one index tensor (a gather, negatives wrapped);
//  - eager steps of the compiled program (their reference kernels run
//    between fused kernels): index.Tensor with several index tensors,
//    index_put, scatter.src/.value,
//    scatter_add, scatter_reduce.two, cumsum, sort, topk,
//    native_group_norm of float16/bfloat16 and the 3-D pools;
//  - native_group_norm of float32/float64 is lowered too (like layer norm).
// Random shapes, dtypes, dims and strides, and dynamic entries compiled once
// and called at several sizes; an out-of-range index fails the compiled call
// naming the node and the argument.

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::EagerSteps;
using testing::ExpectDynamicJitMatchesEager;
using testing::ExpectJitMatchesEager;
using testing::Finish;
using ::testing::HasSubstr;
using testing::Ints;
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::OpGraph;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::SharedJit;

// op(x0, ...) followed by a pointwise consumer of its first output (x * 2,
// or x & x for bool) so that kernels run around it; outputs: the consumer
// and every output of the op.
std::shared_ptr<const Graph> OpThenScale(const std::string& target,
                                         std::vector<Arg> args, int num_inputs,
                                         int num_outputs, DType dtype,
                                         Kwargs kwargs = {}) {
  GraphBuilder b("op_then_scale");
  for (int i = 0; i < num_inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  AddNode(b, "op", target, std::move(args), std::move(kwargs));
  std::vector<Arg> outputs;
  std::string first = "op";
  if (num_outputs > 1) {
    for (int k = 0; k < num_outputs; ++k) {
      const std::string name = absl::StrCat("item", k);
      AddNode(b, name, "getitem", {Arg::Ref("op"), Arg::Int(k)});
      outputs.push_back(Arg::Ref(name));
    }
    first = "item0";
  } else {
    outputs.push_back(Arg::Ref("op"));
  }
  if (dtype == DType::kBool) {
    AddNode(b, "y", "aten.bitwise_and.Tensor",
            {Arg::Ref(first), Arg::Ref(first)});
  } else {
    AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref(first), Arg::Int(2)});
  }
  outputs.insert(outputs.begin(), Arg::Ref("y"));
  EXPECT_TRUE(b.SetOutputs(outputs).ok());
  return Finish(b);
}

Tensor Indices(DType dtype, IntSpan sizes, int64_t lo, int64_t hi,
               uint64_t seed) {
  return RandomTensor(dtype, sizes, seed, static_cast<double>(lo),
                      static_cast<double>(hi));
}

// Random integers in [lo, hi) as `dtype` (RandomTensor truncates).
constexpr DType kValueDTypes[] = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
    DType::kInt64,   DType::kInt32,   DType::kInt8};

TEST(ScatterSortConformanceTest, MaxMinDimAreFusedAndMatchEager) {
  int compared = 0;
  for (const char* target : {"aten.max.dim", "aten.min.dim"}) {
    for (DType dtype : kValueDTypes) {
      for (int64_t dim : {0, 1, -1}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(absl::StrCat(target, " ", DTypeName(dtype), " dim ", dim,
                                    keepdim ? " keepdim" : ""));
          auto graph = OpGraph(
              target, {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(keepdim)}, 1,
              {}, 2);
          // Few distinct values: ties are common (the first index wins).
          Tensor x = RandomTensor(dtype, {5, 7, 6}, compared + 1, -3, 3);
          EXPECT_EQ(EagerSteps(graph, {x}), 0);
          ExpectJitMatchesEager(graph, {x}, 0);
          ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, 0);
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 84);
  // NaN propagates; its index is the first NaN's.
  Tensor x = RandomTensor(DType::kFloat32, {4, 37}, 9, -4, 4);
  x.data_as<float>()[0 * 37 + 3] = NAN;
  x.data_as<float>()[1 * 37 + 36] = NAN;
  x.data_as<float>()[1 * 37 + 20] = NAN;
  x.data_as<float>()[2 * 37 + 5] = INFINITY;
  for (const char* target : {"aten.max.dim", "aten.min.dim"}) {
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(target, " NaN dim ", dim));
      auto graph = OpGraph(
          target, {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(false)}, 1, {}, 2);
      ExpectJitMatchesEager(graph, {x}, 0);
    }
  }
}

TEST(ScatterSortConformanceTest, VarDimIsFusedAndMatchesEager) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    for (const std::vector<int64_t>& dims :
         {std::vector<int64_t>{0}, std::vector<int64_t>{-1},
          std::vector<int64_t>{0, 2}}) {
      for (bool unbiased : {false, true}) {
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " dims ", dims.size(),
                                    unbiased ? " unbiased" : "",
                                    keepdim ? " keepdim" : ""));
          auto graph = OpGraph("aten.var.dim",
                               {Arg::Ref("x0"), Ints(dims), Arg::Bool(unbiased),
                                Arg::Bool(keepdim)},
                               1);
          Tensor x = RandomTensor(dtype, {4, 6, 5}, 3);
          EXPECT_EQ(EagerSteps(graph, {x}), 0);
          const double rtol = dtype == DType::kFloat16 ? 2e-3 : 1e-5;
          ExpectJitMatchesEager(graph, {x}, rtol);
          ExpectJitMatchesEager(graph, {NonContiguousCopy(x)}, rtol);
        }
      }
    }
  }
  auto all = OpGraph("aten.var.dim",
                     {Arg::Ref("x0"), Arg::None(), Arg::Bool(true)}, 1);
  ExpectJitMatchesEager(all, {RandomTensor(DType::kFloat32, {3, 9}, 4)}, 1e-5);
}

TEST(ScatterSortConformanceTest, ReductionsOfDynamicEntries) {
  std::vector<std::vector<Tensor>> calls;
  for (int64_t n : {3, 8, 21, 64}) {
    calls.push_back({RandomTensor(DType::kFloat32, {n, 5}, n)});
  }
  for (const char* target : {"aten.max.dim", "aten.min.dim"}) {
    SCOPED_TRACE(target);
    auto graph = OpGraph(target, {Arg::Ref("x0"), Arg::Int(0)}, 1, {}, 2);
    ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 0);
  }
  auto var =
      OpGraph("aten.var.dim", {Arg::Ref("x0"), Ints({0}), Arg::Bool(true)}, 1);
  ExpectDynamicJitMatchesEager(var, {{0, 0}}, calls, 1e-5);
}

// index.Tensor: adjacent and separated index tensors, None entries,
// broadcasting, negative indices, int32/int64, strided operands.
TEST(ScatterSortConformanceTest, IndexTensorMatchesEager) {
  int compared = 0;
  for (DType dtype : kValueDTypes) {
    for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
      const Shape shape = {5, 6, 7};
      struct Case {
        std::vector<Arg> indices;
        std::vector<Shape> index_shapes;
        std::vector<int64_t> bounds;
      };
      const Case cases[] = {
          {{Arg::Ref("x1")}, {{4}}, {5}},
          {{Arg::None(), Arg::Ref("x1")}, {{2, 3}}, {6}},
          {{Arg::Ref("x1"), Arg::Ref("x2")}, {{4, 1}, {3}}, {5, 6}},
          {{Arg::Ref("x1"), Arg::None(), Arg::Ref("x2")},
           {{3}, {2, 3}},
           {5, 7}},
      };
      for (const Case& c : cases) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " ", DTypeName(index_dtype),
                                  " case ", compared % 4));
        const int n = static_cast<int>(c.index_shapes.size());
        auto graph = OpThenScale("aten.index.Tensor",
                                 {Arg::Ref("x0"), Arg::OfList(c.indices)},
                                 1 + n, 1, dtype);
        std::vector<Tensor> inputs = {
            RandomTensor(dtype, shape, compared + 1, -8, 8)};
        for (int k = 0; k < n; ++k) {
          // Negative indices count from the end.
          inputs.push_back(Indices(index_dtype, c.index_shapes[k], -c.bounds[k],
                                   c.bounds[k], compared * 10 + k));
        }
        // One index tensor is a fused gather; several run eagerly.
        EXPECT_EQ(EagerSteps(graph, inputs), n == 1 ? 0 : 1);
        ExpectJitMatchesEager(graph, inputs, 0);
        inputs[0] = NonContiguousCopy(inputs[0]);
        inputs[1] = NonContiguousCopy(inputs[1]);
        ExpectJitMatchesEager(graph, inputs, 0);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 56);
}

TEST(ScatterSortConformanceTest, ScatterFamilyRunsAsEagerSteps) {
  int compared = 0;
  for (DType dtype : kValueDTypes) {
    for (int64_t dim : {0, 1, -1}) {
      const Shape self_shape = {5, 6, 4};
      Shape index_shape = {3, 4, 2};
      const int d = dim < 0 ? static_cast<int>(dim) + 3 : static_cast<int>(dim);
      index_shape[d] = 7;  // may exceed self along dim
      Shape src_shape = index_shape;
      src_shape[0] += 1;  // src may be larger than the index
      const std::vector<Tensor> inputs = {
          RandomTensor(dtype, self_shape, compared + 1, -8, 8),
          Indices(compared % 2 ? DType::kInt32 : DType::kInt64, index_shape, 0,
                  self_shape[d], compared + 40),
          RandomTensor(dtype, src_shape, compared + 80, -8, 8)};
      struct Op {
        const char* target;
        std::vector<Arg> args;
        Kwargs kwargs;
      };
      std::vector<Op> ops = {
          {"aten.scatter.src",
           {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1"), Arg::Ref("x2")}},
          {"aten.scatter_add.default",
           {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1"), Arg::Ref("x2")}},
      };
      for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
        for (bool include_self : {true, false}) {
          ops.push_back({"aten.scatter_reduce.two",
                         {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1"),
                          Arg::Ref("x2"), Arg::String(reduce)},
                         {{"include_self", Arg::Bool(include_self)}}});
        }
      }
      for (const Op& op : ops) {
        SCOPED_TRACE(
            absl::StrCat(op.target, " ", DTypeName(dtype), " dim ", dim));
        auto graph = OpThenScale(op.target, op.args, 3, 1, dtype, op.kwargs);
        EXPECT_EQ(EagerSteps(graph, inputs), 1);
        ExpectJitMatchesEager(graph, inputs, 0);
        ExpectJitMatchesEager(
            graph,
            {NonContiguousCopy(inputs[0]), NonContiguousCopy(inputs[1]),
             NonContiguousCopy(inputs[2])},
            0);
      }
      auto value = OpThenScale(
          "aten.scatter.value",
          {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1"), Arg::Float(1.5)}, 2,
          1, dtype);
      ExpectJitMatchesEager(value, {inputs[0], inputs[1]}, 0);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 21);
}

TEST(ScatterSortConformanceTest, IndexPutRunsAsAnEagerStep) {
  for (DType dtype : kValueDTypes) {
    for (bool accumulate : {false, true}) {
      SCOPED_TRACE(
          absl::StrCat(DTypeName(dtype), accumulate ? " accumulate" : ""));
      // self[:, idx] (op)= values with idx (3, 2) and values broadcast from
      // (3, 1, 7).
      auto graph = OpThenScale(
          "aten.index_put.default",
          {Arg::Ref("x0"), Arg::OfList({Arg::None(), Arg::Ref("x1")}),
           Arg::Ref("x2"), Arg::Bool(accumulate)},
          3, 1, dtype);
      const std::vector<Tensor> inputs = {
          RandomTensor(dtype, {4, 6, 7}, 1, -8, 8),
          Indices(DType::kInt64, {3, 2}, -6, 6, 2),
          RandomTensor(dtype, {3, 1, 7}, 3, -8, 8)};
      EXPECT_EQ(EagerSteps(graph, inputs), 1);
      ExpectJitMatchesEager(graph, inputs, 0);
      ExpectJitMatchesEager(graph,
                            {NonContiguousCopy(inputs[0]), inputs[1],
                             NonContiguousCopy(inputs[2])},
                            0);
    }
  }
}

TEST(ScatterSortConformanceTest, CumsumSortTopkRunAsEagerSteps) {
  int compared = 0;
  for (DType dtype : kValueDTypes) {
    for (int64_t dim : {0, 1, -1}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " dim ", dim));
      // Distinct values (a permutation scaled) so that sort and topk have
      // no ties: their order among equal values is not torch's contract.
      Tensor x = RandomTensor(DType::kFloat64, {4, 5, 6}, compared + 1, -1, 1);
      Tensor values = RandomTensor(dtype, {4, 5, 6}, compared + 1, -8, 8);
      if (dtype == DType::kFloat32 || dtype == DType::kFloat64) values = x;
      auto cumsum = OpThenScale("aten.cumsum.default",
                                {Arg::Ref("x0"), Arg::Int(dim)}, 1, 1, dtype);
      EXPECT_EQ(EagerSteps(cumsum, {values}), 1);
      ExpectJitMatchesEager(cumsum, {values}, 0);
      ExpectJitMatchesEager(cumsum, {NonContiguousCopy(values)}, 0);
      for (bool descending : {false, true}) {
        auto sort =
            OpThenScale("aten.sort.default",
                        {Arg::Ref("x0"), Arg::Int(dim), Arg::Bool(descending)},
                        1, 2, DType::kFloat64);
        EXPECT_EQ(EagerSteps(sort, {x}), 1);
        ExpectJitMatchesEager(sort, {x}, 0);
        ExpectJitMatchesEager(sort, {NonContiguousCopy(x)}, 0);
        auto topk = OpThenScale(
            "aten.topk.default",
            {Arg::Ref("x0"), Arg::Int(3), Arg::Int(dim), Arg::Bool(descending)},
            1, 2, DType::kFloat64);
        EXPECT_EQ(EagerSteps(topk, {x}), 1);
        ExpectJitMatchesEager(topk, {NonContiguousCopy(x)}, 0);
      }
      ++compared;
    }
  }
  EXPECT_EQ(compared, 21);
}

// native_group_norm: lowered for float32/float64 (two fused reductions over
// the grouped view); float16 input keeps its eager step.
TEST(ScatterSortConformanceTest, GroupNormMatchesEager) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (int64_t group : {1, 2, 6}) {
      for (bool affine : {true, false}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " groups ", group,
                                  affine ? " affine" : ""));
        auto graph = OpThenScale(
            "aten.native_group_norm.default",
            {Arg::Ref("x0"), affine ? Arg::Ref("x1") : Arg::None(),
             affine ? Arg::Ref("x2") : Arg::None(), Arg::Int(3), Arg::Int(6),
             Arg::Int(20), Arg::Int(group), Arg::Float(1e-5)},
            affine ? 3 : 1, 3, dtype);
        std::vector<Tensor> inputs = {RandomTensor(dtype, {3, 6, 4, 5}, 1)};
        if (affine) {
          inputs.push_back(RandomTensor(dtype, {6}, 2));
          inputs.push_back(RandomTensor(dtype, {6}, 3));
        }
        EXPECT_EQ(EagerSteps(graph, inputs), 0);
        const double rtol = dtype == DType::kFloat32 ? 1e-4 : 1e-9;
        ExpectJitMatchesEager(graph, inputs, rtol);
        inputs[0] = NonContiguousCopy(inputs[0]);
        ExpectJitMatchesEager(graph, inputs, rtol);
      }
    }
  }
  // (N, C) input: HxW = 1.
  auto flat =
      OpThenScale("aten.native_group_norm.default",
                  {Arg::Ref("x0"), Arg::None(), Arg::None(), Arg::Int(4),
                   Arg::Int(6), Arg::Int(1), Arg::Int(3), Arg::Float(1e-5)},
                  1, 3, DType::kFloat64);
  ExpectJitMatchesEager(flat, {RandomTensor(DType::kFloat64, {4, 6}, 5)}, 1e-9);
  // float16 input with float32 stats: an eager step.
  auto half =
      OpThenScale("aten.native_group_norm.default",
                  {Arg::Ref("x0"), Arg::Ref("x1"), Arg::None(), Arg::Int(2),
                   Arg::Int(4), Arg::Int(3), Arg::Int(2), Arg::Float(1e-5)},
                  2, 3, DType::kFloat16);
  const std::vector<Tensor> half_inputs = {
      RandomTensor(DType::kFloat16, {2, 4, 3}, 6),
      RandomTensor(DType::kFloat32, {4}, 7)};
  EXPECT_EQ(EagerSteps(half, half_inputs), 1);
  ExpectJitMatchesEager(half, half_inputs, 0);
}

// A dynamic batch: N is the input's sym_size, compiled once and called at
// several batch sizes. The shape rule keeps N symbolic (no guard on the
// batch) and the lowering reads N, C and HxW from the input's sizes
// (jit/lowering/lowering.cc SymbolicLiteralArg lets those arguments be
// symbolic), so group norm is fused kernels like the rest.
TEST(ScatterSortConformanceTest, GroupNormOfADynamicBatch) {
  GraphBuilder b("group_norm_dynamic");
  for (const char* name : {"x", "w", "bias"}) {
    ASSERT_TRUE(b.AddPlaceholder(name).ok());
  }
  AddNode(b, "n", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)});
  AddNode(b, "gn", "aten.native_group_norm.default",
          {Arg::Ref("x"), Arg::Ref("w"), Arg::Ref("bias"), Arg::Ref("n"),
           Arg::Int(6), Arg::Int(12), Arg::Int(3), Arg::Float(1e-5)});
  AddNode(b, "y", "getitem", {Arg::Ref("gn"), Arg::Int(0)});
  AddNode(b, "mean", "getitem", {Arg::Ref("gn"), Arg::Int(1)});
  AddNode(b, "rstd", "getitem", {Arg::Ref("gn"), Arg::Int(2)});
  AddNode(b, "out", "aten.relu.default", {Arg::Ref("y")});
  ASSERT_TRUE(
      b.SetOutputs({Arg::Ref("out"), Arg::Ref("mean"), Arg::Ref("rstd")}).ok());
  auto graph = Finish(b);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t n : {2, 5, 9}) {
    calls.push_back({RandomTensor(DType::kFloat64, {n, 6, 3, 4}, n),
                     RandomTensor(DType::kFloat64, {6}, n + 1),
                     RandomTensor(DType::kFloat64, {6}, n + 2)});
  }
  auto exe = ExpectDynamicJitMatchesEager(graph, {{0, 0}}, calls, 1e-9);
  ASSERT_NE(exe, nullptr);
  EXPECT_THAT(exe->Describe(), HasSubstr(" 0 eager nodes, 1 size symbols"));
}

// Dynamic entries: the eager steps run at each call's sizes.
TEST(ScatterSortConformanceTest, EagerStepsOfDynamicEntries) {
  std::vector<std::vector<Tensor>> index_calls;
  std::vector<std::vector<Tensor>> rows;
  for (int64_t n : {3, 8, 21}) {
    index_calls.push_back({RandomTensor(DType::kFloat32, {n, 6}, n),
                           Indices(DType::kInt64, {4}, -6, 6, n + 1)});
    rows.push_back({RandomTensor(DType::kFloat64, {n, 6}, n + 2, -1, 1)});
  }
  auto index =
      OpThenScale("aten.index.Tensor",
                  {Arg::Ref("x0"), Arg::OfList({Arg::None(), Arg::Ref("x1")})},
                  2, 1, DType::kFloat32);
  ExpectDynamicJitMatchesEager(index, {{0, 0}}, index_calls, 0);
  auto cumsum =
      OpThenScale("aten.cumsum.default", {Arg::Ref("x0"), Arg::Int(0)}, 1, 1,
                  DType::kFloat64);
  ExpectDynamicJitMatchesEager(cumsum, {{0, 0}}, rows, 0);
  auto sort = OpThenScale("aten.sort.default", {Arg::Ref("x0"), Arg::Int(0)}, 1,
                          2, DType::kFloat64);
  ExpectDynamicJitMatchesEager(sort, {{0, 0}}, rows, 0);
}

// An index out of range fails the compiled call as the eager one does,
// naming the node and the argument.
TEST(ScatterSortConformanceTest, OutOfRangeIndicesFailNamingTheNode) {
  auto index =
      OpThenScale("aten.index.Tensor",
                  {Arg::Ref("x0"), Arg::OfList({Arg::None(), Arg::Ref("x1")})},
                  2, 1, DType::kFloat32);
  const std::vector<Tensor> bad_index = {
      RandomTensor(DType::kFloat32, {3, 4}, 1),
      MakeTensor(DType::kInt64, {2}, {1, 4})};
  auto scatter =
      OpThenScale("aten.scatter.src",
                  {Arg::Ref("x0"), Arg::Int(0), Arg::Ref("x1"), Arg::Ref("x2")},
                  3, 1, DType::kFloat32);
  const std::vector<Tensor> bad_scatter = {
      RandomTensor(DType::kFloat32, {3, 4}, 1),
      MakeTensor(DType::kInt64, {1, 2}, {0, 3}),
      RandomTensor(DType::kFloat32, {1, 2}, 2)};
  for (const auto& [graph, inputs, arg] :
       {std::tuple{index, bad_index, "indices"},
        std::tuple{scatter, bad_scatter, "index"}}) {
    Specialization spec;
    for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
    auto exe = SharedJit().Compile(graph, spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    auto result = testing::RunOnSharedJit(**exe, inputs);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("node 'op'"));
    EXPECT_THAT(std::string(result.status().message()),
                HasSubstr(absl::StrCat("argument '", arg, "'")));
    EXPECT_THAT(std::string(result.status().message()), HasSubstr("out of"));
  }
}

// The 3-D pools between fused kernels: max_pool3d_with_indices (values and
// indices) and avg_pool3d compiled (jit/lowering/lowering_pooling.cc),
// _adaptive_avg_pool3d an eager step.
TEST(ScatterSortConformanceTest, Pool3dBetweenFusedKernels) {
  GraphBuilder b("pool3d");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "r", "aten.relu.default", {Arg::Ref("x")});
  AddNode(b, "mp", "aten.max_pool3d_with_indices.default",
          {Arg::Ref("r"), Ints({3, 2, 2}), Ints({2, 1, 2}), Ints({1, 1, 0}),
           Ints({1, 1, 1}), Arg::Bool(true)});
  AddNode(b, "v", "getitem", {Arg::Ref("mp"), Arg::Int(0)});
  AddNode(b, "i", "getitem", {Arg::Ref("mp"), Arg::Int(1)});
  AddNode(b, "ap", "aten.avg_pool3d.default",
          {Arg::Ref("v"), Ints({2, 2, 2}), Ints({1, 1, 1}), Ints({1, 0, 1}),
           Arg::Bool(false), Arg::Bool(false)});
  AddNode(b, "ad", "aten._adaptive_avg_pool3d.default",
          {Arg::Ref("ap"), Ints({2, 3, 1})});
  AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("ad"), Arg::Float(0.5)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y"), Arg::Ref("i")}).ok());
  auto graph = Finish(b);
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    const std::vector<Tensor> inputs = {
        RandomTensor(dtype, {2, 3, 6, 7, 8}, 1, -4, 4)};
    EXPECT_EQ(EagerSteps(graph, inputs), 1);
    // The compiled average sums in the compute dtype, the eager kernel in
    // double: float32 results may differ in the last bit.
    ExpectJitMatchesEager(graph, inputs, 1e-6);
    ExpectJitMatchesEager(graph, {NonContiguousCopy(inputs[0])}, 1e-6);
  }
}

}  // namespace
}  // namespace guardjit
