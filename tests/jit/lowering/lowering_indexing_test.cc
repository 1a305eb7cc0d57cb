// jit/lowering/lowering_indexing.cc: embedding, index_select, gather and
// index.Tensor with one index tensor lowered to gather values (no eager
// step, the index computed in the same kernel), against the eager kernels
// and hand-computed values: negative indices of index.Tensor, 0-dim
// operands, an index out of range failing the call with the node and
// argument named, and the cases left to the eager kernels with their
// reasons.

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

using testing::EagerSteps;
using testing::ExpectCompiledByJit;
using testing::ExpectJitMatchesEager;
using testing::ExpectLoweredMatchesEager;
using testing::ExpectTensor;
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

// The status of running the compiled `graph` on `inputs`.
absl::Status RunStatus(const std::shared_ptr<const Graph>& graph,
                       const std::vector<Tensor>& inputs) {
  Specialization spec;
  for (const Tensor& t : inputs) spec.inputs.push_back(TensorMeta::Of(t));
  auto executable = SharedJit().Compile(graph, spec);
  if (!executable.ok()) return executable.status();
  ExpectCompiledByJit(**executable);
  return RunOnSharedJit(**executable, inputs).status();
}

std::shared_ptr<const Graph> IndexSelect(int dim) {
  return OpGraph("aten.index_select.default",
                 {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1")}, 2);
}
std::shared_ptr<const Graph> Gather(int dim) {
  return OpGraph("aten.gather.default",
                 {Arg::Ref("x0"), Arg::Int(dim), Arg::Ref("x1")}, 2);
}
std::shared_ptr<const Graph> Embedding() {
  return OpGraph("aten.embedding.default", {Arg::Ref("x0"), Arg::Ref("x1")}, 2);
}
// self[x1] (leading 0) or self[:, x1] (leading 1).
std::shared_ptr<const Graph> IndexTensor(int leading) {
  const Arg index = Arg::Ref("x1");
  const Arg entries =
      leading == 0 ? Arg::OfList({index}) : Arg::OfList({Arg::None(), index});
  EXPECT_LE(leading, 1);
  return OpGraph("aten.index.Tensor", {Arg::Ref("x0"), entries}, 2);
}

TEST(LoweringIndexing, EveryOpIsAGather) {
  const Tensor self = RandomTensor(DType::kFloat32, {4, 3}, 1);
  const Tensor index = MakeTensor(DType::kInt64, {2}, {3, 0});
  const Tensor gather_index =
      MakeTensor(DType::kInt64, {2, 3}, {3, 0, 1, 2, 2, 0});
  for (const auto& [graph, idx] :
       std::vector<std::pair<std::shared_ptr<const Graph>, Tensor>>{
           {IndexSelect(0), index},
           {Gather(0), gather_index},
           {Embedding(), index},
           {IndexTensor(0), index}}) {
    SCOPED_TRACE(graph->name());
    const LoweredFor l = LowerFor(*graph, {self, idx});
    EXPECT_TRUE(l.reasons.empty()) << l.reasons[0];
    EXPECT_EQ(l.KindOf(*graph, "op"), LValue::Kind::kGather);
    EXPECT_EQ(EagerSteps(graph, {self, idx}), 0);
  }
}

TEST(LoweringIndexing, ByHand) {
  const Tensor x = MakeTensor(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectTensor(
      RunJit1(IndexSelect(1), {x, MakeTensor(DType::kInt64, {3}, {2, 0, 2})}),
      DType::kInt32, {2, 3}, {3, 1, 3, 6, 4, 6}, 0, 0);
  // gather along dim 0: out[i][j] = x[index[i][j]][j].
  ExpectTensor(
      RunJit1(Gather(0), {x, MakeTensor(DType::kInt64, {1, 3}, {1, 0, 1})}),
      DType::kInt32, {1, 3}, {4, 2, 6}, 0, 0);
  // embedding: rows of the weight.
  ExpectTensor(RunJit1(Embedding(),
                       {x, MakeTensor(DType::kInt64, {2, 2}, {1, 1, 0, 1})}),
               DType::kInt32, {2, 2, 3}, {4, 5, 6, 4, 5, 6, 1, 2, 3, 4, 5, 6},
               0, 0);
  // index.Tensor along dim 1 (x[:, idx]), negative indices from the end.
  ExpectTensor(
      RunJit1(IndexTensor(1), {x, MakeTensor(DType::kInt32, {2}, {-1, 0})}),
      DType::kInt32, {2, 2}, {3, 1, 6, 4}, 0, 0);
  // A 0-dim source indexed like a 1-element vector: a 0-dim result.
  const std::vector<Tensor> scalar = {MakeTensor(DType::kFloat32, {}, {7}),
                                      MakeTensor(DType::kInt64, {1}, {0})};
  ExpectTensor(RunJit1(IndexSelect(0), scalar), DType::kFloat32, {}, {7}, 0, 0);
  ExpectJitMatchesEager(IndexSelect(0), scalar);
}

TEST(LoweringIndexing, MatchEagerOnDTypesAndStridedSources) {
  int seed = 10;
  for (DType d :
       {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kBool}) {
    SCOPED_TRACE(DTypeName(d));
    const Tensor self = RandomTensor(d, {5, 7, 3}, ++seed);
    for (int dim : {0, 1, -1}) {
      const int64_t n = self.sizes()[dim < 0 ? 2 : dim];
      ExpectLoweredMatchesEager(
          IndexSelect(dim),
          {self, RandomTensor(DType::kInt64, {6}, ++seed, 0, n)});
      Shape index_shape = {4, 6, 2};
      ExpectLoweredMatchesEager(
          Gather(dim),
          {self, RandomTensor(DType::kInt64, index_shape, ++seed, 0, n)});
    }
    ExpectLoweredMatchesEager(
        IndexTensor(1),
        {self, RandomTensor(DType::kInt32, {2, 3}, ++seed, -7, 7)});
    ExpectLoweredMatchesEager(
        Embedding(), {RandomTensor(d, {9, 5}, ++seed),
                      RandomTensor(DType::kInt64, {3, 4}, ++seed, 0, 9)});
  }
}

TEST(LoweringIndexing, IndexComputedInTheSameKernel) {
  // index_select(x, 0, idx % 4) * 2: the index's producer and the gather's
  // consumer fuse with it.
  GraphBuilder b("computed_index");
  ASSERT_TRUE(b.AddPlaceholder("x").ok());
  ASSERT_TRUE(b.AddPlaceholder("i").ok());
  testing::AddNode(b, "m", "aten.remainder.Scalar",
                   {Arg::Ref("i"), Arg::Int(4)});
  testing::AddNode(b, "g", "aten.index_select.default",
                   {Arg::Ref("x"), Arg::Int(0), Arg::Ref("m")});
  testing::AddNode(b, "y", "aten.mul.Tensor", {Arg::Ref("g"), Arg::Int(2)});
  ASSERT_TRUE(b.SetOutputs({Arg::Ref("y")}).ok());
  auto graph = testing::Finish(b);
  const std::vector<Tensor> inputs = {
      MakeTensor(DType::kFloat32, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
      MakeTensor(DType::kInt64, {3}, {5, 2, 7})};
  EXPECT_EQ(testing::PlanOfInputs(*graph, inputs).num_kernels(), 1);
  ExpectTensor(RunJit1(graph, inputs), DType::kFloat32, {3, 2},
               {4, 6, 8, 10, 12, 14}, 0, 0);
}

TEST(LoweringIndexing, AnIndexOutOfRangeFailsTheCall) {
  const Tensor x = RandomTensor(DType::kFloat32, {2, 3}, 1);
  absl::Status s =
      RunStatus(IndexSelect(1), {x, MakeTensor(DType::kInt64, {2}, {0, 3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("node 'op' (aten.index_select.default): argument "
                             "'index': an index is out of range for "
                             "dimension 1 with size 3"),
            std::string::npos)
      << s;
  // index_select does not wrap negative indices.
  s = RunStatus(IndexSelect(0), {x, MakeTensor(DType::kInt64, {1}, {-1})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  // index.Tensor wraps them once: -3 is out of range for size 2.
  s = RunStatus(IndexTensor(0), {x, MakeTensor(DType::kInt64, {1}, {-3})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("node 'op' (aten.index.Tensor): argument "
                             "'indices': an index is out of range for "
                             "dimension 0 with size 2"),
            std::string::npos)
      << s;
  s = RunStatus(Embedding(), {x, MakeTensor(DType::kInt64, {1}, {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("(aten.embedding.default): argument 'indices'"),
            std::string::npos)
      << s;
  // The eager interpreter fails these calls with the same code
  // (ExpectJitMatchesEager compares them).
  ExpectJitMatchesEager(Gather(0), {x, MakeTensor(DType::kInt64, {1, 1}, {5})});
}

TEST(LoweringIndexing, CasesLeftToTheEagerKernels) {
  struct Case {
    std::shared_ptr<const Graph> graph;
    std::vector<Tensor> inputs;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {OpGraph("aten.index.Tensor",
               {Arg::Ref("x0"), Arg::OfList({Arg::Ref("x1"), Arg::Ref("x1")})},
               2),
       {RandomTensor(DType::kFloat32, {3, 3}, 1),
        MakeTensor(DType::kInt64, {2}, {0, 2})},
       "op (aten.index.Tensor): several index tensors run eagerly"},
      {IndexSelect(1),
       {RandomTensor(DType::kFloat32, {0, 3}, 2),
        MakeTensor(DType::kInt64, {2}, {0, 2})},
       "op (aten.index_select.default): empty slices beside the index"},
      {Gather(0),
       {RandomTensor(DType::kFloat32, {3, 3}, 3),
        MakeTensor(DType::kInt64, {0, 3}, {})},
       "op (aten.gather.default): empty index"},
      {Embedding(),
       {RandomTensor(DType::kFloat32, {4, 0}, 4),
        MakeTensor(DType::kInt64, {2}, {0, 3})},
       "op (aten.embedding.default): empty embedding rows"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    const LoweredFor l = LowerFor(*c.graph, c.inputs);
    EXPECT_EQ(l.reasons, std::vector<std::string>{c.reason});
    EXPECT_EQ(l.lowered.externs.size(), 1u);
    EXPECT_EQ(EagerSteps(c.graph, c.inputs), 1);
    ExpectJitMatchesEager(c.graph, c.inputs);
  }
}

}  // namespace
}  // namespace guardjit
