// cat and constant_pad_nd lowered to select values, fused with pointwise
// producers and consumers, against the eager kernels: random shapes, cat
// along every dim with 1-4 operands (empty ones too), pads positive,
// negative and zero with fill values, every dtype the pointwise path takes,
// contiguous and non-contiguous inputs, static and dynamic entries. The
// plans must have no eager step left.

#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::AddNode;
using testing::Finish;
using testing::Ints;

using testing::EagerSteps;
using testing::ExpectDynamicJitMatchesEager;
using testing::ExpectJitMatchesEager;
using ::testing::HasSubstr;
using testing::NonContiguousCopy;
using testing::RandomTensor;

constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                             DType::kInt64,   DType::kBool,    DType::kFloat16,
                             DType::kBFloat16};

// Whether eager mode accepts the graph for these inputs.
bool Accepts(const Graph& graph, const std::vector<Tensor>& inputs) {
  std::vector<TensorMeta> metas;
  for (const Tensor& t : inputs) metas.push_back(TensorMeta::Of(t));
  return InferShapes(graph, metas).ok();
}

// Compiled for contiguous inputs and run on them, then on non-contiguous
// copies (transposed, storage offset) through the same entry.
void ExpectMatchesEagerAnyLayout(const std::shared_ptr<const Graph>& graph,
                                 const std::vector<Tensor>& inputs,
                                 double rtol = -1) {
  ExpectJitMatchesEager(graph, inputs, rtol);
  std::vector<Tensor> strided;
  for (const Tensor& t : inputs) strided.push_back(NonContiguousCopy(t));
  ExpectJitMatchesEager(graph, strided, rtol, &inputs);
}

// cat(producers) * z (z broadcast over all but the last dim) where each
// producer is its input itself, x * y with y broadcast, or neg(x) (abs for
// bool).
class CatGraph {
 public:
  CatGraph(uint64_t seed, DType dtype) : rng_(seed), dtype_(dtype) {}

  // Returns null when the random case is one eager mode rejects.
  std::shared_ptr<const Graph> Build(int rank, int dim, int num_operands,
                                     std::vector<Tensor>* inputs) {
    Shape base;
    for (int d = 0; d < rank; ++d) base.push_back(1 + Pick(5));
    GraphBuilder b(absl::StrCat("cat", rank, "_", dim, "_", num_operands));
    std::vector<Arg> parts;
    int64_t catted = 0;
    for (int k = 0; k < num_operands; ++k) {
      Shape shape = base;
      shape[dim] = Pick(4);  // 0: an operand with nothing along `dim`
      catted += shape[dim];
      const std::string x = absl::StrCat("x", inputs->size());
      EXPECT_TRUE(b.AddPlaceholder(x).ok());
      inputs->push_back(RandomTensor(dtype_, shape, rng_()));
      const std::string name = absl::StrCat("p", k);
      switch (Pick(3)) {
        case 0:
          parts.push_back(Arg::Ref(x));
          continue;
        case 1: {
          Shape bshape = shape;
          for (int d = 0; d < rank; ++d) {
            if (Pick(2) == 0) bshape[d] = 1;
          }
          const std::string y = absl::StrCat("x", inputs->size());
          EXPECT_TRUE(b.AddPlaceholder(y).ok());
          inputs->push_back(RandomTensor(dtype_, bshape, rng_()));
          AddNode(b, name, "aten.mul.Tensor", {Arg::Ref(x), Arg::Ref(y)});
          break;
        }
        default:
          AddNode(b, name,
                  dtype_ == DType::kBool ? "aten.logical_not.default"
                                         : "aten.neg.default",
                  {Arg::Ref(x)});
          break;
      }
      parts.push_back(Arg::Ref(name));
    }
    AddNode(b, "cat", "aten.cat.default",
            {Arg::OfList(parts), Arg::Int(Pick(2) ? dim : dim - rank)});
    const std::string z = absl::StrCat("x", inputs->size());
    EXPECT_TRUE(b.AddPlaceholder(z).ok());
    inputs->push_back(
        RandomTensor(dtype_, {rank - 1 == dim ? catted : base.back()}, rng_()));
    AddNode(b, "out", "aten.mul.Tensor", {Arg::Ref("cat"), Arg::Ref(z)});
    EXPECT_TRUE(b.SetOutputs({Arg::Ref("out"), Arg::Ref("cat")}).ok());
    auto graph = Finish(b);
    return Accepts(*graph, *inputs) ? graph : nullptr;
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % n); }
  std::mt19937_64 rng_;
  DType dtype_;
};

TEST(CatPadConformanceTest, CatAlongEveryDimFusesAndMatchesEager) {
  int compared = 0;
  uint64_t seed = 1;
  for (DType dtype : kDTypes) {
    for (int rank = 1; rank <= 3; ++rank) {
      for (int dim = 0; dim < rank; ++dim) {
        for (int operands = 1; operands <= 4; ++operands) {
          SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " rank ", rank, " dim ",
                                    dim, " operands ", operands, " seed ",
                                    seed));
          std::vector<Tensor> inputs;
          auto graph =
              CatGraph(seed++, dtype).Build(rank, dim, operands, &inputs);
          if (graph == nullptr) continue;
          EXPECT_EQ(EagerSteps(graph, inputs), 0);
          ExpectMatchesEagerAnyLayout(graph, inputs);
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 120);
}

// cat promotes its operands' dtypes; 1-D empty tensors take no part
// whatever the others' ranks.
TEST(CatPadConformanceTest, CatPromotesAndSkipsLegacyEmpty) {
  GraphBuilder b("cat_mixed");
  for (const char* x : {"a", "b", "e", "c"}) {
    ASSERT_TRUE(b.AddPlaceholder(x).ok());
  }
  AddNode(b, "cat", "aten.cat.default",
          {Arg::OfList(
               {Arg::Ref("a"), Arg::Ref("e"), Arg::Ref("b"), Arg::Ref("c")}),
           Arg::Int(1)});
  AddNode(b, "out", "aten.add.Scalar", {Arg::Ref("cat"), Arg::Float(0.5)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
  auto graph = Finish(b);
  const std::vector<Tensor> inputs = {RandomTensor(DType::kInt32, {3, 2}, 1),
                                      RandomTensor(DType::kFloat32, {3, 4}, 2),
                                      RandomTensor(DType::kFloat32, {0}, 3),
                                      RandomTensor(DType::kBool, {3, 1}, 4)};
  EXPECT_EQ(EagerSteps(graph, inputs), 0);
  ExpectMatchesEagerAnyLayout(graph, inputs);
}

// pad(x * y) + z with random pads (positive, negative, zero) on 1..rank
// trailing dims and fill values of either kind.
TEST(CatPadConformanceTest, PadFusesAndMatchesEager) {
  std::mt19937_64 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  int compared = 0;
  for (DType dtype : kDTypes) {
    for (int trial = 0; trial < 24; ++trial) {
      const int rank = 1 + pick(4);
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(1 + pick(5));
      std::vector<int64_t> pad;
      const int padded = 1 + pick(rank);
      for (int p = 0; p < 2 * padded; ++p) pad.push_back(pick(6) - 2);
      const Arg fill =
          pick(2) ? Arg::Float(pick(2) ? 1.5 : -2.25) : Arg::Int(pick(3));
      SCOPED_TRACE(absl::StrCat(DTypeName(dtype), " trial ", trial));
      GraphBuilder b("pad");
      for (const char* x : {"x", "y", "z"})
        ASSERT_TRUE(b.AddPlaceholder(x).ok());
      AddNode(b, "m", "aten.mul.Tensor", {Arg::Ref("x"), Arg::Ref("y")});
      AddNode(b, "p", "aten.constant_pad_nd.default",
              {Arg::Ref("m"), Ints(pad), fill});
      AddNode(b, "out", "aten.mul.Tensor", {Arg::Ref("p"), Arg::Ref("z")});
      ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
      auto graph = Finish(b);
      Shape bshape = shape;
      bshape[0] = 1;
      const std::vector<Tensor> inputs = {RandomTensor(dtype, shape, rng()),
                                          RandomTensor(dtype, bshape, rng()),
                                          RandomTensor(dtype, {1}, rng())};
      if (!Accepts(*graph, inputs)) continue;
      EXPECT_EQ(EagerSteps(graph, inputs), 0);
      ExpectMatchesEagerAnyLayout(graph, inputs);
      // The padded value itself, read from an input directly.
      auto direct = testing::OpGraph("aten.constant_pad_nd.default",
                                     {Arg::Ref("x0"), Ints(pad), fill}, 1);
      ExpectMatchesEagerAnyLayout(direct, {inputs[0]});
      ++compared;
    }
  }
  EXPECT_GT(compared, 90);
}

// cat and pad feeding reductions: softmax over a catted and padded row,
// and a sum of a pad of a cat.
TEST(CatPadConformanceTest, CatAndPadFeedReductions) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("cat_pad_softmax");
    for (const char* x : {"x", "y"}) ASSERT_TRUE(b.AddPlaceholder(x).ok());
    AddNode(b, "e", "aten.exp.default", {Arg::Ref("y")});
    AddNode(b, "cat", "aten.cat.default",
            {Arg::OfList({Arg::Ref("x"), Arg::Ref("e")}), Arg::Int(-1)});
    AddNode(b, "p", "aten.constant_pad_nd.default",
            {Arg::Ref("cat"), Ints({2, -1}), Arg::Float(-1.0)});
    AddNode(b, "sm", "aten._softmax.default",
            {Arg::Ref("p"), Arg::Int(-1), Arg::Bool(false)});
    AddNode(b, "s", "aten.sum.dim_IntList",
            {Arg::Ref("p"), Ints({0}), Arg::Bool(false)});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("sm"), Arg::Ref("s")}).ok());
    auto graph = Finish(b);
    const std::vector<Tensor> inputs = {RandomTensor(dtype, {6, 5}, 1),
                                        RandomTensor(dtype, {6, 7}, 2)};
    EXPECT_EQ(EagerSteps(graph, inputs), 0);
    ExpectMatchesEagerAnyLayout(graph, inputs,
                                dtype == DType::kFloat32 ? 1e-5 : -1);
  }
}

// Dynamic entries, compiled once and called at many sizes: cat along a
// symbolic dim (the offsets are sums of size parameters) with a pad of
// the static dim (padded dims specialize), and cat along the symbolic last
// dim of symbolic rows.
TEST(CatPadConformanceTest, DynamicCatAndPad) {
  for (DType dtype :
       {DType::kFloat32, DType::kInt64, DType::kBool, DType::kBFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("dynamic_cat_pad");
    for (const char* x : {"x", "y"}) ASSERT_TRUE(b.AddPlaceholder(x).ok());
    AddNode(b, "n", "aten.mul.Tensor", {Arg::Ref("y"), Arg::Ref("y")});
    AddNode(b, "cat", "aten.cat.default",
            {Arg::OfList({Arg::Ref("x"), Arg::Ref("n"), Arg::Ref("x")}),
             Arg::Int(0)});
    AddNode(b, "p", "aten.constant_pad_nd.default",
            {Arg::Ref("cat"), Ints({1, 2}), Arg::Int(1)});
    AddNode(b, "out", "aten.mul.Tensor", {Arg::Ref("p"), Arg::Ref("p")});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 1;
    for (const auto& [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {3, 2}, {2, 5}, {9, 7}, {64, 130}, {5, 2}, {300, 3}}) {
      calls.push_back({RandomTensor(dtype, {n, 5}, seed++),
                       RandomTensor(dtype, {k, 5}, seed++)});
    }
    auto exe = ExpectDynamicJitMatchesEager(Finish(b), {{0, 0}, {1, 0}}, calls);
    ASSERT_NE(exe, nullptr);
    EXPECT_THAT(exe->Describe(),
                HasSubstr("1 fused kernels, 0 eager nodes, 2 size symbols"));
  }
  for (DType dtype : {DType::kFloat64, DType::kInt32, DType::kFloat16}) {
    SCOPED_TRACE(DTypeName(dtype));
    GraphBuilder b("dynamic_cat_last");
    for (const char* x : {"x", "y"}) ASSERT_TRUE(b.AddPlaceholder(x).ok());
    AddNode(b, "n", "aten.neg.default", {Arg::Ref("y")});
    AddNode(b, "cat", "aten.cat.default",
            {Arg::OfList({Arg::Ref("n"), Arg::Ref("x")}), Arg::Int(-1)});
    AddNode(b, "out", "aten.add.Tensor", {Arg::Ref("cat"), Arg::Ref("cat")});
    ASSERT_TRUE(b.SetOutputs({Arg::Ref("out")}).ok());
    std::vector<std::vector<Tensor>> calls;
    uint64_t seed = 1;
    for (const auto& [n, m, k] :
         std::vector<std::tuple<int64_t, int64_t, int64_t>>{{3, 4, 2},
                                                            {2, 2, 5},
                                                            {9, 33, 7},
                                                            {64, 3, 130},
                                                            {5, 17, 2},
                                                            {300, 301, 3}}) {
      calls.push_back({RandomTensor(dtype, {n, m}, seed++),
                       RandomTensor(dtype, {n, k}, seed++)});
    }
    auto exe = ExpectDynamicJitMatchesEager(
        Finish(b), {{0, 0}, {0, 1}, {1, 0}, {1, 1}}, calls);
    ASSERT_NE(exe, nullptr);
    EXPECT_THAT(exe->Describe(), HasSubstr("1 fused kernels, 0 eager nodes"));
  }
}

}  // namespace
}  // namespace guardjit
