#include "core/ops/reduction_args.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/op_registry.h"
#include "gtest/gtest.h"
#include "tests/core/ops/op_meta_util.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;
using testing::Ints;

// A call node of `target` on a tensor input with `rest` after it, bound as
// the graph builder stores them (one Arg per schema argument).
Node CallNode(const std::string& target, std::vector<Arg> rest) {
  Node node;
  node.name = "op";
  node.target = target;
  node.op = OpRegistry::Global().Find(target);
  EXPECT_NE(node.op, nullptr) << target;
  node.args.push_back(Arg::Value(ValueRef{0, 0}));
  for (Arg& a : rest) node.args.push_back(std::move(a));
  return node;
}

absl::StatusOr<std::vector<bool>> Mask(const Node& node, int rank,
                                       EmptyDims empty) {
  const MetaArgs args(
      node, [](ValueRef) { return TensorMeta(DType::kFloat32, Shape{}); },
      [](const Scalar& s) { return TensorMeta(s.dtype(), Shape{}); });
  return ReadReductionMask(args, rank, empty);
}

using Bools = std::vector<bool>;

TEST(ReadReductionMaskTest, DimListWithNegativeDims) {
  const Node node = CallNode("aten.sum.dim_IntList",
                             {Ints({0, -1}), Arg::Bool(false), Arg::None()});
  absl::StatusOr<Bools> mask = Mask(node, 3, EmptyDims::kReduceAll);
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, Bools({true, false, true}));
}

TEST(ReadReductionMaskTest, OverloadWithoutDimReducesEverything) {
  const Node node = CallNode("aten.sum.default", {Arg::None()});
  absl::StatusOr<Bools> mask = Mask(node, 2, EmptyDims::kReduceNone);
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, Bools({true, true}));
}

TEST(ReadReductionMaskTest, NoneDimReducesEverything) {
  const Node node = CallNode("aten.any.dims", {Arg::None(), Arg::Bool(false)});
  absl::StatusOr<Bools> mask = Mask(node, 3, EmptyDims::kReduceNone);
  ASSERT_TRUE(mask.ok()) << mask.status();
  EXPECT_EQ(*mask, Bools({true, true, true}));
}

TEST(ReadReductionMaskTest, EmptyDimListFollowsTheOverloadsRule) {
  // sum: [] is every dim; any.dims/all.dims: [] reduces nothing.
  const Node sum = CallNode("aten.sum.dim_IntList",
                            {Ints({}), Arg::Bool(false), Arg::None()});
  absl::StatusOr<Bools> all = Mask(sum, 2, EmptyDims::kReduceAll);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, Bools({true, true}));
  const Node any = CallNode("aten.any.dims", {Ints({}), Arg::Bool(false)});
  absl::StatusOr<Bools> none = Mask(any, 2, EmptyDims::kReduceNone);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(*none, Bools({false, false}));
}

TEST(ReadReductionMaskTest, ErrorsNameTheDimArgument) {
  const Node out_of_range = CallNode(
      "aten.sum.dim_IntList", {Ints({3}), Arg::Bool(false), Arg::None()});
  ExpectError(Mask(out_of_range, 3, EmptyDims::kReduceAll),
              absl::StatusCode::kInvalidArgument,
              "argument 'dim': dimension 3 out of range [-3, 2]");
  const Node repeated = CallNode(
      "aten.sum.dim_IntList", {Ints({1, -2}), Arg::Bool(false), Arg::None()});
  ExpectError(Mask(repeated, 3, EmptyDims::kReduceAll),
              absl::StatusCode::kInvalidArgument,
              "argument 'dim': dim 1 appears multiple times in the list of "
              "dims");
}

TEST(ReadReductionMaskTest, ZeroDimTensorTakesDimZeroOrMinusOneOnce) {
  for (int64_t d : {0, -1}) {
    const Node node = CallNode("aten.sum.dim_IntList",
                               {Ints({d}), Arg::Bool(false), Arg::None()});
    absl::StatusOr<Bools> mask = Mask(node, 0, EmptyDims::kReduceAll);
    ASSERT_TRUE(mask.ok()) << mask.status();
    EXPECT_TRUE(mask->empty());
  }
  const Node twice = CallNode("aten.sum.dim_IntList",
                              {Ints({0, -1}), Arg::Bool(false), Arg::None()});
  ExpectError(Mask(twice, 0, EmptyDims::kReduceAll),
              absl::StatusCode::kInvalidArgument,
              "argument 'dim': dim 0 appears multiple times in the list of "
              "dims");
  const Node out_of_range = CallNode(
      "aten.sum.dim_IntList", {Ints({1}), Arg::Bool(false), Arg::None()});
  ExpectError(Mask(out_of_range, 0, EmptyDims::kReduceAll),
              absl::StatusCode::kInvalidArgument,
              "argument 'dim': dimension 1 out of range [-1, 0]");
}

}  // namespace
}  // namespace guardjit
