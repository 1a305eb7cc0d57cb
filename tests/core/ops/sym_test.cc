// The shape rules of the size ops (core/ops/sym.cc): aten.sym_size.int and
// aten.sym_numel give 0-dim int64 metas carrying the size, operator.*
// nodes compute on them, and their bad operands are refused naming the
// argument and the node.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph_builder.h"
#include "core/shape_inference.h"
#include "core/tensor_meta.h"
#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace guardjit {
namespace {

using testing::ExpectError;

struct Call {
  std::string name, target;
  std::vector<Arg> args;
};

// The meta of the last of `calls` on an input x of `x`.
absl::StatusOr<TensorMeta> LastMeta(const TensorMeta& x,
                                    const std::vector<Call>& calls) {
  GraphBuilder b("g");
  if (absl::Status s = b.AddPlaceholder("x").status(); !s.ok()) return s;
  for (const Call& c : calls) {
    if (absl::Status s = b.AddNode(c.name, c.target, c.args).status();
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = b.SetOutputs({Arg::Ref("x")}); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<Graph>> g = b.Finish();
  if (!g.ok()) return g.status();
  absl::StatusOr<GraphMeta> metas = InferShapes(**g, {x});
  if (!metas.ok()) return metas.status();
  return (*metas)[(*g)->FindNode(calls.back().name)][0];
}

const TensorMeta kX(DType::kFloat32, Shape{2, 3, 5});

int64_t ValueOf(const absl::StatusOr<TensorMeta>& m) {
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok() || !m->sym_value.has_value()) return -1;
  return m->sym_value->hint();
}

TEST(SymSizeTest, SizeOfADimAsA0DimInt64) {
  absl::StatusOr<TensorMeta> m =
      LastMeta(kX, {{"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(-1)}}});
  EXPECT_EQ(ValueOf(m), 5);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->dtype, DType::kInt64);
  EXPECT_EQ(m->dim(), 0);
}

TEST(SymSizeTest, BadDimsNameTheArgument) {
  ExpectError(
      LastMeta(kX, {{"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(3)}}}),
      absl::StatusCode::kInvalidArgument,
      "node 's' (aten.sym_size.int): argument 'dim': dimension 3 out "
      "of range [-3, 2]");
  ExpectError(
      LastMeta(TensorMeta(DType::kFloat32, Shape{}),
               {{"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}}}),
      absl::StatusCode::kInvalidArgument,
      "argument 'self': a 0-dim tensor has no sizes");
}

TEST(SymNumelTest, ProductOfTheSizes) {
  EXPECT_EQ(
      ValueOf(LastMeta(kX, {{"n", "aten.sym_numel.default", {Arg::Ref("x")}}})),
      30);
}

TEST(SymOpMetaTest, ArithmeticOnSizesAndLiterals) {
  const Call size = {"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(2)}};
  EXPECT_EQ(
      ValueOf(LastMeta(
          kX, {size, {"m", "operator.mul", {Arg::Ref("s"), Arg::Int(4)}}})),
      20);
  EXPECT_EQ(
      ValueOf(LastMeta(
          kX,
          {size, {"d", "operator.floordiv", {Arg::Int(-11), Arg::Ref("s")}}})),
      -3);
  // A bool literal counts as 0 or 1.
  EXPECT_EQ(
      ValueOf(LastMeta(
          kX, {size, {"a", "operator.add", {Arg::Ref("s"), Arg::Bool(true)}}})),
      6);
}

TEST(SymOpMetaTest, ComparisonsAreBool) {
  absl::StatusOr<TensorMeta> m =
      LastMeta(kX, {{"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}},
                    {"g", "operator.gt", {Arg::Ref("s"), Arg::Int(1)}}});
  EXPECT_EQ(ValueOf(m), 1);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->dtype, DType::kBool);
}

TEST(SymOpMetaTest, DivisionByZeroIsRefused) {
  const Call size = {"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}};
  ExpectError(
      LastMeta(
          kX, {size, {"d", "operator.floordiv", {Arg::Ref("s"), Arg::Int(0)}}}),
      absl::StatusCode::kInvalidArgument,
      "node 'd' (operator.floordiv): argument 'b': integer division or "
      "modulo by zero");
  ExpectError(
      LastMeta(kX, {size, {"m", "operator.mod", {Arg::Ref("s"), Arg::Int(0)}}}),
      absl::StatusCode::kInvalidArgument, "argument 'b'");
}

TEST(SymOpMetaTest, OperandsMustBeIntegers) {
  // A tensor is not a size.
  ExpectError(
      LastMeta(kX, {{"a", "operator.add", {Arg::Ref("x"), Arg::Int(1)}}}),
      absl::StatusCode::kInvalidArgument,
      "argument 'a': expected an integer (a size), got a tensor "
      "float32[2, 3, 5]");
  ExpectError(
      LastMeta(kX, {{"s", "aten.sym_size.int", {Arg::Ref("x"), Arg::Int(0)}},
                    {"a", "operator.add", {Arg::Ref("s"), Arg::Float(1.5)}}}),
      absl::StatusCode::kInvalidArgument,
      "argument 'b': expected an integer, got");
}

}  // namespace
}  // namespace guardjit
