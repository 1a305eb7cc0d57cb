// embedding, index_select and gather compiled into kernels (indirect loads
// with an index check), against the eager kernels: every dtype, int32 and
// int64 indices, 0-dim operands, non-contiguous and offset inputs, indices
// computed in the same kernel, dynamic entries, and out-of-range indices
// failing with the node and argument named.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/eager_interpreter.h"
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
using testing::MakeTensor;
using testing::NonContiguousCopy;
using testing::PlanOfInputs;
using testing::RandomTensor;
using testing::SharedJit;
using testing::ToDoubles;

constexpr DType kDTypes[] = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                             DType::kBFloat16, DType::kInt64,   DType::kInt32,
                             DType::kInt8,     DType::kUInt8,   DType::kBool};

// op(x0, ...) * 2 (or, for bool, op(...) & op(...)), the product an output
// along with the op's result: the gather fuses into its consumer.
std::shared_ptr<const Graph> GatherThenScale(const std::string& target,
                                             std::vector<Arg> args,
                                             int num_inputs, DType dtype) {
  GraphBuilder b("gather_then_scale");
  for (int i = 0; i < num_inputs; ++i) {
    EXPECT_TRUE(b.AddPlaceholder(absl::StrCat("x", i)).ok());
  }
  AddNode(b, "g", target, std::move(args));
  if (dtype == DType::kBool) {
    AddNode(b, "y", "aten.bitwise_and.Tensor", {Arg::Ref("g"), Arg::Ref("g")});
  } else {
    AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("g"), Arg::Int(2)});
  }
  EXPECT_TRUE(b.SetOutputs({Arg::Ref("y"), Arg::Ref("g")}).ok());
  return Finish(b);
}

Tensor Indices(DType dtype, IntSpan sizes, int64_t bound, uint64_t seed) {
  return RandomTensor(dtype, sizes, seed, 0, static_cast<double>(bound));
}

TEST(IndexingConformanceTest, EmbeddingFusesAndMatchesEagerExactly) {
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (DType index_dtype : {DType::kInt64, DType::kInt32}) {
      for (const Shape& index_shape : {Shape{}, Shape{7}, Shape{3, 5}}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " weight, ",
                                  DTypeName(index_dtype), " indices of rank ",
                                  index_shape.size()));
        auto graph =
            GatherThenScale("aten.embedding.default",
                            {Arg::Ref("x0"), Arg::Ref("x1")}, 2, dtype);
        const std::vector<Tensor> inputs = {
            RandomTensor(dtype, {11, 19}, compared + 1, -8, 8),
            Indices(index_dtype, index_shape, 11, compared + 100)};
        EXPECT_EQ(EagerSteps(graph, inputs), 0);
        EXPECT_EQ(PlanOfInputs(*graph, inputs).num_kernels(), 1);
        ExpectJitMatchesEager(graph, inputs, 0);
        // A transposed weight with a storage offset, and strided indices.
        const std::vector<Tensor> strided = {NonContiguousCopy(inputs[0]),
                                             NonContiguousCopy(inputs[1])};
        ExpectJitMatchesEager(graph, strided, 0);
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 54);
}

TEST(IndexingConformanceTest, IndexSelectAlongEveryDimMatchesEager) {
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int64_t dim : {0, 1, 2, -1}) {
      for (bool scalar_index : {false, true}) {
        SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " dim ", dim,
                                  scalar_index ? " 0-dim index" : ""));
        auto graph = GatherThenScale(
            "aten.index_select.default",
            {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1")}, 2, dtype);
        const Shape shape = {4, 6, 5};
        const int64_t size = shape[dim < 0 ? dim + 3 : dim];
        const std::vector<Tensor> inputs = {
            RandomTensor(dtype, shape, compared + 1, -8, 8),
            Indices(compared % 2 ? DType::kInt32 : DType::kInt64,
                    scalar_index ? Shape{} : Shape{9}, size, compared + 50)};
        EXPECT_EQ(EagerSteps(graph, inputs), 0);
        ExpectJitMatchesEager(graph, inputs, 0);
        ExpectJitMatchesEager(graph, {NonContiguousCopy(inputs[0]), inputs[1]},
                              0);
        ++compared;
      }
    }
  }
  // A 0-dim self is indexed like a 1-element vector.
  auto graph = GatherThenScale("aten.index_select.default",
                               {Arg::Ref("x0"), Arg::Int(0), Arg::Ref("x1")}, 2,
                               DType::kFloat32);
  for (const Shape& index_shape : {Shape{}, Shape{1}}) {
    const std::vector<Tensor> inputs = {
        RandomTensor(DType::kFloat32, {}, 3),
        Indices(DType::kInt64, index_shape, 1, 4)};
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
    ExpectJitMatchesEager(graph, inputs, 0);
  }
  EXPECT_EQ(compared, 72);
}

TEST(IndexingConformanceTest, GatherAlongEveryDimMatchesEager) {
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int64_t dim : {0, 1, 2, -2}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " dim ", dim));
      auto graph = GatherThenScale(
          "aten.gather.default",
          {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1")}, 2, dtype);
      const Shape shape = {5, 6, 7};
      // The index may be larger than self along dim, not elsewhere.
      Shape index_shape = {4, 3, 7};
      const int d = dim < 0 ? static_cast<int>(dim) + 3 : static_cast<int>(dim);
      index_shape[d] = 9;
      const std::vector<Tensor> inputs = {
          RandomTensor(dtype, shape, compared + 1, -8, 8),
          Indices(compared % 2 ? DType::kInt32 : DType::kInt64, index_shape,
                  shape[d], compared + 70)};
      EXPECT_EQ(EagerSteps(graph, inputs), 0);
      ExpectJitMatchesEager(graph, inputs, 0);
      ExpectJitMatchesEager(
          graph, {NonContiguousCopy(inputs[0]), NonContiguousCopy(inputs[1])},
          0);
      ++compared;
    }
  }
  // 0-dim operands take part as 1-element vectors.
  auto graph = GatherThenScale("aten.gather.default",
                               {Arg::Ref("x0"), Arg::Int(0), Arg::Ref("x1")}, 2,
                               DType::kFloat32);
  const std::vector<std::vector<Tensor>> scalar_cases = {
      {RandomTensor(DType::kFloat32, {}, 5), Indices(DType::kInt64, {}, 1, 6)},
      {RandomTensor(DType::kFloat32, {}, 7), Indices(DType::kInt64, {4}, 1, 8)},
      {RandomTensor(DType::kFloat32, {6}, 9),
       Indices(DType::kInt64, {}, 6, 10)},
  };
  for (const std::vector<Tensor>& inputs : scalar_cases) {
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
    ExpectJitMatchesEager(graph, inputs, 0);
  }
  EXPECT_EQ(compared, 36);
}

// The index is computed in the gathering kernel (pointwise from a float
// tensor), and the source is computed by an earlier kernel: two kernels, no
// eager step, same values.
TEST(IndexingConformanceTest, ComputedIndicesAndSourcesFuse) {
  GraphBuilder b("computed");
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  AddNode(b, "w2", "aten.exp.default", {Arg::Ref("w")});
  AddNode(b, "xa", "aten.abs.default", {Arg::Ref("x")});
  AddNode(b, "xs", "aten.mul.Tensor", {Arg::Ref("xa"), Arg::Float(4.0)});
  AddNode(b, "idx", "aten._to_copy.default", {Arg::Ref("xs")},
          {{"dtype", Arg::OfDType(DType::kInt64)}});
  AddNode(b, "e", "aten.embedding.default", {Arg::Ref("w2"), Arg::Ref("idx")});
  AddNode(b, "y", "aten.neg.default", {Arg::Ref("e")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = Finish(b);
  // |x| * 4 < 12: every index lies in [0, 12).
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {12, 33}, 1),
      RandomTensor(DType::kFloat32, {8, 5}, 2, -2.9, 2.9)};
  const Plan plan = PlanOfInputs(*graph, inputs);
  EXPECT_EQ(EagerSteps(graph, inputs), 0) << plan.ToString();
  EXPECT_EQ(plan.num_kernels(), 2) << plan.ToString();
  ExpectJitMatchesEager(graph, inputs);  // exp: within 2 ulp
}

// Indices the source does not have, as the first or the second of two
// gathers in one kernel, in small kernels and in ones split across the
// thread pool: the call fails as the eager one does, naming the node, the
// argument and the size; nothing is read out of bounds (ASan builds check).
TEST(IndexingConformanceTest, OutOfRangeIndicesFailNamingTheNode) {
  GraphBuilder b("two_gathers");
  ASSERT_TRUE(b.AddPlaceholder("w").ok());
  ASSERT_TRUE(b.AddPlaceholder("i").ok());
  ASSERT_TRUE(b.AddPlaceholder("v").ok());
  ASSERT_TRUE(b.AddPlaceholder("j").ok());
  AddNode(b, "rows", "aten.embedding.default", {Arg::Ref("w"), Arg::Ref("i")});
  AddNode(b, "cols", "aten.index_select.default",
          {Arg::Ref("v"), Arg::Int(1), Arg::Ref("j")});
  AddNode(b, "y", "aten.add.Tensor", {Arg::Ref("rows"), Arg::Ref("cols")});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = Finish(b);
  auto eager = EagerInterpreter::Create(graph);
  ASSERT_TRUE(eager.ok());
  for (int64_t rows : {6, 40000}) {
    const std::vector<Tensor> good = {
        RandomTensor(DType::kFloat32, {10, 16}, 1),
        Indices(DType::kInt64, {rows}, 10, 2),
        RandomTensor(DType::kFloat32, {rows, 20}, 3),
        Indices(DType::kInt32, {16}, 20, 4)};
    Specialization spec;
    for (const Tensor& t : good) spec.inputs.push_back(TensorMeta::Of(t));
    auto exe = SharedJit().Compile(graph, spec);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ(EagerSteps(graph, good), 0);
    ASSERT_TRUE(testing::RunOnSharedJit(**exe, good).ok());
    struct Bad {
      int input;
      int64_t position;
      double value;
      std::string message;
    };
    const Bad bads[] = {
        {1, rows - 1, 10,
         "node 'rows' (aten.embedding.default): argument 'indices': an index "
         "is out of range for dimension 0 with size 10"},
        {1, 0, -1, "node 'rows'"},
        {1, rows / 2, 1e15, "node 'rows'"},
        {3, 15, 20,
         "node 'cols' (aten.index_select.default): argument 'index': an "
         "index is out of range for dimension 1 with size 20"},
        {3, 0, -20, "node 'cols'"},
    };
    for (const Bad& bad : bads) {
      SCOPED_TRACE(absl::StrCat(rows, " rows, input ", bad.input, " = ",
                                bad.value, " at ", bad.position));
      std::vector<Tensor> inputs = good;
      std::vector<double> values = ToDoubles(good[bad.input]);
      values[bad.position] = bad.value;
      inputs[bad.input] =
          MakeTensor(good[bad.input].dtype(), good[bad.input].sizes(), values);
      auto actual = testing::RunOnSharedJit(**exe, inputs);
      auto expected = (*eager)->Run(inputs);
      ASSERT_FALSE(expected.ok());
      ASSERT_FALSE(actual.ok());
      EXPECT_EQ(actual.status().code(), expected.status().code());
      EXPECT_THAT(actual.status().message(), HasSubstr(bad.message));
      // The program stays usable.
      ASSERT_TRUE(testing::RunOnSharedJit(**exe, good).ok());
    }
  }
}

// An empty source dim: every index is out of range, and the kernel must not
// read the (empty) source to find out.
TEST(IndexingConformanceTest, GatheringFromAnEmptyDimFails) {
  auto graph = GatherThenScale("aten.index_select.default",
                               {Arg::Ref("x0"), Arg::Int(0), Arg::Ref("x1")}, 2,
                               DType::kFloat32);
  const std::vector<Tensor> inputs = {
      RandomTensor(DType::kFloat32, {0, 4}, 1),
      MakeTensor(DType::kInt64, {3}, {0, 0, 0})};
  EXPECT_EQ(EagerSteps(graph, inputs), 0);
  ExpectJitMatchesEager(graph, inputs, 0);  // both fail with the same code
}

// One dynamic entry (number of rows and of indices symbolic) serves every
// size its guards accept.
TEST(IndexingConformanceTest, DynamicEntryServesEverySize) {
  auto graph =
      GatherThenScale("aten.embedding.default",
                      {Arg::Ref("x0"), Arg::Ref("x1")}, 2, DType::kFloat32);
  std::vector<std::vector<Tensor>> calls;
  for (int64_t n : {5, 9, 17, 64, 301}) {
    const int64_t vocab = n + 3;
    calls.push_back({RandomTensor(DType::kFloat32, {vocab, 24}, n),
                     Indices(DType::kInt64, {n}, vocab, n + 1)});
  }
  ExpectDynamicJitMatchesEager(graph, {{0, 0}, {1, 0}}, calls, 0);
}

}  // namespace
}  // namespace guardjit
