// The view ops' table and argument reading (core/ops/view_ops.h): every
// entry is a registered op, and ViewOpGeometry reads each op's arguments at
// its schema's positions and applies the geometry to the real strides, as
// the kernels call it (the shape rules' contiguous case is in
// view_test.cc), or to symbolic sizes.

#include "core/ops/view_ops.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/op_registry.h"
#include "core/shape_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using ::guardjit::testing::ExpectError;
using ::testing::ElementsAre;
using Ints = std::vector<int64_t>;

Arg IntList(const Ints& values) {
  std::vector<Arg> list;
  for (int64_t v : values) list.push_back(Arg::Int(v));
  return Arg::OfList(std::move(list));
}

// `op`'s geometry on a tensor laid out as (`sizes`, `strides`), its
// arguments after self being `args`, as a kernel reads them.
absl::StatusOr<ViewGeometry> KernelGeometry(ViewOp op, const Ints& sizes,
                                            const Ints& strides,
                                            std::vector<Arg> args) {
  Node node;
  node.name = "view";
  node.args = {Arg::None()};  // self: the geometry gets its layout instead
  node.args.insert(node.args.end(), args.begin(), args.end());
  BoundArgs<Tensor> bound(
      node, [](ValueRef) { return Tensor(); },
      [](const Scalar& s) { return Tensor::WrappedNumber(s); });
  return ViewOpGeometry(op, bound, IntsOf<int64_t>(sizes),
                        IntsOf<int64_t>(strides));
}

TEST(ViewOpsTest, EveryEntryIsARegisteredViewOfSelf) {
  std::set<ViewOp> ops;
  for (const ViewOpDef& def : kViewOps) {
    SCOPED_TRACE(def.schema);
    ops.insert(def.op);
    auto schema = ParseOpSchema(def.schema);
    ASSERT_TRUE(schema.ok()) << schema.status();
    const OpDef* registered =
        OpRegistry::Global().Find(schema->QualifiedName());
    ASSERT_NE(registered, nullptr);
    ASSERT_FALSE(registered->schema.args.empty());
    EXPECT_EQ(registered->schema.args[0].name, "self");
    EXPECT_EQ(registered->schema.args[0].type, ArgType::kTensor);
    EXPECT_EQ(registered->schema.num_returns, 1);
  }
  // One entry per op, kView through kDiagonal.
  EXPECT_EQ(ops.size(), std::size(kViewOps));
  EXPECT_EQ(ops.size(), static_cast<size_t>(ViewOp::kDiagonal) + 1);
}

TEST(ViewOpsTest, PermuteExpandAndUnsqueezeKeepTheRealStrides) {
  // [3, 4] stored transposed: strides (1, 3).
  const Ints sizes = {3, 4}, strides = {1, 3};
  auto permuted =
      KernelGeometry(ViewOp::kPermute, sizes, strides, {IntList({1, 0})});
  ASSERT_TRUE(permuted.ok()) << permuted.status();
  EXPECT_THAT(permuted->sizes, ElementsAre(4, 3));
  EXPECT_THAT(permuted->strides, ElementsAre(3, 1));
  EXPECT_EQ(permuted->offset, 0);

  auto expanded = KernelGeometry(ViewOp::kExpand, sizes, strides,
                                 {IntList({2, 3, -1}), Arg::Bool(false)});
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_THAT(expanded->sizes, ElementsAre(2, 3, 4));
  EXPECT_THAT(expanded->strides, ElementsAre(0, 1, 3));

  auto unsqueezed =
      KernelGeometry(ViewOp::kUnsqueeze, sizes, strides, {Arg::Int(1)});
  ASSERT_TRUE(unsqueezed.ok()) << unsqueezed.status();
  EXPECT_THAT(unsqueezed->sizes, ElementsAre(3, 1, 4));
  EXPECT_THAT(unsqueezed->strides, ElementsAre(1, 12, 3));

  auto alias = KernelGeometry(ViewOp::kAlias, sizes, strides, {});
  ASSERT_TRUE(alias.ok()) << alias.status();
  EXPECT_THAT(alias->sizes, ElementsAre(3, 4));
  EXPECT_THAT(alias->strides, ElementsAre(1, 3));
  EXPECT_EQ(alias->offset, 0);
}

TEST(ViewOpsTest, SliceSelectAndDiagonalReadTheirArgumentsInOrder) {
  const Ints sizes = {3, 4}, strides = {1, 3};
  // slice(dim=1, start=1, end=None, step=2): columns 1 and 3.
  auto sliced =
      KernelGeometry(ViewOp::kSlice, sizes, strides,
                     {Arg::Int(1), Arg::Int(1), Arg::None(), Arg::Int(2)});
  ASSERT_TRUE(sliced.ok()) << sliced.status();
  EXPECT_THAT(sliced->sizes, ElementsAre(3, 2));
  EXPECT_THAT(sliced->strides, ElementsAre(1, 6));
  EXPECT_EQ(sliced->offset, 3);

  // select(dim=1, index=-2): column 2.
  auto selected = KernelGeometry(ViewOp::kSelect, sizes, strides,
                                 {Arg::Int(1), Arg::Int(-2)});
  ASSERT_TRUE(selected.ok()) << selected.status();
  EXPECT_THAT(selected->sizes, ElementsAre(3));
  EXPECT_THAT(selected->strides, ElementsAre(1));
  EXPECT_EQ(selected->offset, 6);

  // diagonal(offset=1, dim1=0, dim2=1): (0,1) (1,2) (2,3).
  auto diagonal = KernelGeometry(ViewOp::kDiagonal, sizes, strides,
                                 {Arg::Int(1), Arg::Int(0), Arg::Int(1)});
  ASSERT_TRUE(diagonal.ok()) << diagonal.status();
  EXPECT_THAT(diagonal->sizes, ElementsAre(3));
  EXPECT_THAT(diagonal->strides, ElementsAre(4));
  EXPECT_EQ(diagonal->offset, 3);
}

TEST(ViewOpsTest, SqueezeOverloadsReadNoneOneOrAListOfDims) {
  const Ints sizes = {1, 3, 1}, strides = {3, 1, 1};
  auto all = KernelGeometry(ViewOp::kSqueeze, sizes, strides, {});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(all->sizes, ElementsAre(3));
  auto one = KernelGeometry(ViewOp::kSqueezeDim, sizes, strides, {Arg::Int(2)});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_THAT(one->sizes, ElementsAre(1, 3));
  EXPECT_THAT(one->strides, ElementsAre(3, 1));
  auto listed =
      KernelGeometry(ViewOp::kSqueezeDims, sizes, strides, {IntList({0, 1})});
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_THAT(listed->sizes, ElementsAre(3, 1));
  ExpectError(
      KernelGeometry(ViewOp::kSqueezeDims, sizes, strides, {IntList({0, -3})}),
      absl::StatusCode::kInvalidArgument,
      "argument 'dim': dim 0 appears multiple times in the list of "
      "dims");
}

TEST(ViewOpsTest, ViewFollowsTheRealStridesOrRefuses) {
  const Ints sizes = {3, 4}, strides = {1, 3};
  // Splitting the dim of stride 3 works; flattening the transpose does not.
  auto split =
      KernelGeometry(ViewOp::kView, sizes, strides, {IntList({3, 2, -1})});
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_THAT(split->sizes, ElementsAre(3, 2, 2));
  EXPECT_THAT(split->strides, ElementsAre(1, 6, 3));
  ExpectError(KernelGeometry(ViewOp::kView, sizes, strides, {IntList({12})}),
              absl::StatusCode::kInvalidArgument,
              "argument 'size': view size [12] is not compatible with the "
              "input's size [3, 4] and stride [1, 3] (at least one dimension "
              "spans across two contiguous subspaces); use reshape instead");
  // The same sizes laid out contiguously flatten.
  const Ints contiguous = {4, 1};
  auto flat = KernelGeometry(ViewOp::kView, sizes, contiguous, {IntList({12})});
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_THAT(flat->sizes, ElementsAre(12));
  EXPECT_THAT(flat->strides, ElementsAre(1));
}

TEST(ViewOpsTest, ASymbolicIndexGivesASymbolicOffset) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymInt n(SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0)), 5);
  // select(x, 0, n - 1) of x [n, 3]: the last row.
  Node node;
  node.name = "select";
  node.args = {Arg::None(), Arg::Int(0), Arg::Value({1, 0})};
  BoundArgs<TensorMeta> bound(
      node, [&](ValueRef) { return TensorMeta::SymValue(n - 1); },
      [](const Scalar& s) {
        return TensorMeta(s.dtype(), Shape{}, Device(), true);
      });
  const SymShape sizes = {n, 3};
  const SymShape strides = {3, 1};
  auto g = ViewOpGeometry(ViewOp::kSelect, bound, IntsOf<SymInt>(sizes),
                          IntsOf<SymInt>(strides));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(SymShapeToString(g->sizes), "[3]");
  EXPECT_TRUE(g->offset.is_symbolic());
  EXPECT_EQ(g->offset.ToString(), "3*s0 - 3");
  EXPECT_EQ(g->offset.hint(), 12);
  // n - 1 is in range for every n: no guard.
  EXPECT_TRUE(env.guards().empty());
}

TEST(ViewOpsTest, OptionalAsConvertsOnlyAValue) {
  EXPECT_EQ(OptionalAs<int64_t>(std::optional<SymInt>()), std::nullopt);
  const std::optional<int64_t> seven =
      OptionalAs<int64_t>(std::optional<SymInt>(SymInt(7)));
  EXPECT_EQ(seven, std::optional<int64_t>(7));
  const std::optional<SymInt> sym =
      OptionalAs<SymInt>(std::optional<int64_t>(4));
  ASSERT_TRUE(sym.has_value());
  EXPECT_FALSE(sym->is_symbolic());
  EXPECT_EQ(sym->hint(), 4);
}

}  // namespace
}  // namespace guardjit
