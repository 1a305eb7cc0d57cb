// Reading a node's arguments by schema position (core/bound_args.h): tensors
// resolved through the lookup, literals wrapped, integers that refer to
// size-computing nodes kept symbolic or specialized.

#include "core/bound_args.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/shape_env.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;

// A node whose arguments are `args`; values refer to nodes of `values`.
Node NodeWith(std::vector<Arg> args) {
  Node node;
  node.name = "n";
  node.target = "aten.test.default";
  node.args = std::move(args);
  return node;
}

Arg Ref(int node, int index = 0) { return Arg::Value({node, index}); }

// Kernel-side arguments: values are the tensors of `values`, looked up by
// (node, index); number literals become wrapped-number tensors.
struct KernelArgs {
  explicit KernelArgs(std::vector<Arg> args)
      : node(NodeWith(std::move(args))) {}
  BoundArgs<Tensor> Bind() {
    return BoundArgs<Tensor>(
        node,
        [this](ValueRef v) {
          ++lookups;
          return values.at({v.node, v.index});
        },
        [](const Scalar& s) { return Tensor::WrappedNumber(s); });
  }
  Node node;
  std::map<std::pair<int, int>, Tensor> values;
  int lookups = 0;
};

Tensor Int64(int64_t v) { return Tensor::FromScalar(Scalar(v), DType::kInt64); }

TEST(BoundArgsTest, TensorsResolveThroughTheLookupAndLiteralsAreWrapped) {
  KernelArgs k({Ref(0), Ref(1, 2), Arg::Float(2.5), Arg::None()});
  const Tensor x = *Tensor::Zeros(DType::kFloat32, {2, 3});
  const Tensor third = *Tensor::Zeros(DType::kInt32, {4});
  k.values[{0, 0}] = x;
  k.values[{1, 2}] = third;
  BoundArgs<Tensor> args = k.Bind();
  EXPECT_EQ(args.size(), 4);
  EXPECT_EQ(&args.node(), &k.node);
  EXPECT_EQ(args.tensor(0).data(), x.data());
  // The lookup sees the output index, not just the node.
  EXPECT_EQ(args.tensor(1).data(), third.data());
  EXPECT_EQ(args.tensor(1).dtype(), DType::kInt32);
  const Tensor wrapped = args.tensor(2);
  EXPECT_TRUE(wrapped.is_wrapped_number());
  EXPECT_DOUBLE_EQ(wrapped.Item().to_double(), 2.5);
  EXPECT_FALSE(args.is_none(0));
  EXPECT_TRUE(args.is_none(3));
  EXPECT_EQ(args.optional_tensor(3), std::nullopt);
  ASSERT_TRUE(args.optional_tensor(0).has_value());
  EXPECT_EQ(args.optional_tensor(0)->data(), x.data());
}

TEST(BoundArgsTest, TensorListsKeepNoneElementsOnlyWhenOptional) {
  KernelArgs k({Arg::OfList({Ref(0), Arg::Int(7), Ref(1)}),
                Arg::OfList({Ref(1), Arg::None(), Ref(0)})});
  const Tensor a = *Tensor::Zeros(DType::kFloat32, {1});
  const Tensor b = *Tensor::Zeros(DType::kFloat32, {2});
  k.values[{0, 0}] = a;
  k.values[{1, 0}] = b;
  BoundArgs<Tensor> args = k.Bind();
  const std::vector<Tensor> list = args.tensor_list(0);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].data(), a.data());
  EXPECT_TRUE(list[1].is_wrapped_number());
  EXPECT_EQ(list[1].Item().to_int(), 7);
  EXPECT_EQ(list[2].data(), b.data());
  const std::vector<std::optional<Tensor>> optional =
      args.optional_tensor_list(1);
  ASSERT_EQ(optional.size(), 3u);
  ASSERT_TRUE(optional[0].has_value());
  EXPECT_EQ(optional[0]->data(), b.data());
  EXPECT_FALSE(optional[1].has_value());
  ASSERT_TRUE(optional[2].has_value());
  EXPECT_EQ(optional[2]->data(), a.data());
}

TEST(BoundArgsTest, IntegersFromLiteralsAndFromSizeNodes) {
  // int, a value computing an int, a list mixing both, a bare int where an
  // int list is expected (int[1] broadcast), None.
  KernelArgs k({Arg::Int(-3), Ref(4), Arg::OfList({Arg::Int(2), Ref(4)}),
                Arg::Int(9), Arg::None()});
  k.values[{4, 0}] = Int64(11);
  BoundArgs<Tensor> args = k.Bind();
  EXPECT_EQ(args.int_arg(0), -3);
  EXPECT_EQ(args.int_arg(1), 11);
  EXPECT_EQ(args.sym_int(1), 11);
  EXPECT_THAT(args.int_list(2), ElementsAre(2, 11));
  EXPECT_THAT(args.sym_int_list(2), ElementsAre(2, 11));
  EXPECT_THAT(args.int_list(3), ElementsAre(9));
  EXPECT_EQ(args.optional_int(4), std::nullopt);
  EXPECT_EQ(args.optional_int(0), std::optional<int64_t>(-3));
  EXPECT_EQ(args.optional_sym_int(4), std::nullopt);
  EXPECT_EQ(args.optional_int_list(4), std::nullopt);
  ASSERT_TRUE(args.optional_int_list(2).has_value());
  EXPECT_THAT(*args.optional_int_list(2), ElementsAre(2, 11));
}

TEST(BoundArgsTest, FloatsBoolsAndScalarsConvertTheLiteral) {
  KernelArgs k({Arg::Int(3), Arg::Float(0.25), Arg::Bool(true), Arg::Int(0),
                Ref(2), Arg::None()});
  k.values[{2, 0}] = Int64(6);
  BoundArgs<Tensor> args = k.Bind();
  // An int literal where a float is expected converts.
  EXPECT_DOUBLE_EQ(args.float_arg(0), 3.0);
  EXPECT_DOUBLE_EQ(args.float_arg(1), 0.25);
  EXPECT_EQ(args.optional_float(5), std::nullopt);
  EXPECT_EQ(args.optional_float(1), std::optional<double>(0.25));
  EXPECT_TRUE(args.bool_arg(2));
  EXPECT_FALSE(args.bool_arg(3));
  EXPECT_TRUE(args.bool_arg(0));  // nonzero int
  EXPECT_EQ(args.optional_bool(5), std::nullopt);
  // A scalar keeps the literal's type; one computed by a node is its int.
  EXPECT_TRUE(args.scalar(1).is_float());
  EXPECT_TRUE(args.scalar(2).is_bool());
  const Scalar computed = args.scalar(4);
  EXPECT_TRUE(computed.is_int());
  EXPECT_EQ(computed.to_int(), 6);
  EXPECT_FALSE(args.optional_scalar(5).has_value());
  ASSERT_TRUE(args.optional_scalar(0).has_value());
  EXPECT_EQ(args.optional_scalar(0)->to_int(), 3);
}

TEST(BoundArgsTest, StringsAndDTypes) {
  KernelArgs k(
      {Arg::String("reflect"), Arg::OfDType(DType::kBFloat16), Arg::None()});
  BoundArgs<Tensor> args = k.Bind();
  EXPECT_EQ(args.optional_string(0),
            std::optional<absl::string_view>(absl::string_view("reflect")));
  EXPECT_EQ(args.optional_string(2), std::nullopt);
  EXPECT_EQ(args.optional_dtype(1), std::optional<DType>(DType::kBFloat16));
  EXPECT_EQ(args.optional_dtype(2), std::nullopt);
  // Nothing here refers to a value: the lookup never ran.
  EXPECT_EQ(k.lookups, 0);
}

TEST(BoundArgsTest, DestinationsOutOfRangeAreNull) {
  KernelArgs k({Ref(0)});
  BoundArgs<Tensor> args = k.Bind();
  EXPECT_EQ(args.destination(0), nullptr);
  const Tensor d0 = *Tensor::Zeros(DType::kFloat32, {2});
  const Tensor* dests[] = {&d0, nullptr};
  args.set_destinations(dests);
  EXPECT_EQ(args.destination(0), &d0);
  EXPECT_EQ(args.destination(1), nullptr);
  EXPECT_EQ(args.destination(2), nullptr);
}

TEST(BoundArgsTest, RawGivesTheArgumentAsBound) {
  KernelArgs k({Arg::OfList({Arg::Int(1), Arg::Int(2)}), Ref(3, 1)});
  BoundArgs<Tensor> args = k.Bind();
  ASSERT_TRUE(args.raw(0).is_list());
  EXPECT_EQ(args.raw(0).as_list().size(), 2u);
  EXPECT_EQ(args.raw(1).as_value(), (ValueRef{3, 1}));
}

// Shape inference: tensors are metas, sizes may be symbolic.
struct MetaArgsOf {
  explicit MetaArgsOf(std::vector<Arg> args)
      : node(NodeWith(std::move(args))) {}
  BoundArgs<TensorMeta> Bind() {
    return BoundArgs<TensorMeta>(
        node, [this](ValueRef v) { return values.at(v.node); },
        [](const Scalar& s) {
          return TensorMeta(s.dtype(), Shape{}, Device(),
                            /*wrapped_number=*/true);
        });
  }
  Node node;
  std::map<int, TensorMeta> values;
};

TEST(BoundArgsMetaTest, SymIntKeepsSizesSymbolicAndIntArgSpecializes) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(5, "x.size()[0]", 0, 0));
  MetaArgsOf m({Ref(1), Arg::OfList({Ref(1), Arg::Int(4)}), Ref(2)});
  // Node 1 computes x.size(0); node 2 is a tensor without an int value.
  m.values[1] =
      TensorMeta(DType::kInt64, SymShape{}, Device(), false, SymInt(s0, 5));
  m.values[2] = TensorMeta(DType::kFloat32, Shape{3});
  BoundArgs<TensorMeta> args = m.Bind();
  const SymInt sym = args.sym_int(0);
  EXPECT_TRUE(sym.is_symbolic());
  EXPECT_EQ(sym.hint(), 5);
  const std::vector<SymInt> list = args.sym_int_list(1);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_TRUE(list[0].is_symbolic());
  EXPECT_FALSE(list[1].is_symbolic());
  // Reading symbolic sizes keeps the entry general: no guard.
  EXPECT_TRUE(env.guards().empty());
  // int_arg specializes: the hint, guarded.
  EXPECT_EQ(args.int_arg(0), 5);
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.ToString(env.guards()[0]), "x.size()[0] == 5");
  EXPECT_THAT(args.int_list(1), ElementsAre(5, 4));
  // A value with no integer reads as 0.
  EXPECT_EQ(args.sym_int(2).hint(), 0);
  EXPECT_FALSE(args.sym_int(2).is_symbolic());
}

TEST(BoundArgsMetaTest, ScalarOfASymbolicSizeSpecializesIt) {
  ShapeEnv env;
  ShapeEnv::Scope scope(&env);
  const SymExpr s0 = SymExpr::Symbol(env.NewSymbol(3, "y.size()[1]", 0, 1));
  MetaArgsOf m({Ref(1), Arg::Float(1.5)});
  m.values[1] =
      TensorMeta(DType::kInt64, SymShape{}, Device(), false, SymInt(s0, 3));
  BoundArgs<TensorMeta> args = m.Bind();
  const TensorMeta wrapped = args.tensor(1);
  EXPECT_TRUE(wrapped.wrapped_number);
  EXPECT_EQ(wrapped.dtype, DType::kFloat64);
  const Scalar s = args.scalar(0);
  EXPECT_TRUE(s.is_int());
  EXPECT_EQ(s.to_int(), 3);
  ASSERT_EQ(env.guards().size(), 1u);
  EXPECT_EQ(env.ToString(env.guards()[0]), "y.size()[1] == 3");
}

TEST(IntOfValueTest, ReadsTheIntegerAValueHolds) {
  EXPECT_EQ(IntOfValue(Int64(-42)), -42);
  EXPECT_EQ(IntOfValue(TensorMeta(DType::kInt64, SymShape{}, Device(), false,
                                  SymInt(int64_t{8})))
                .hint(),
            8);
  EXPECT_EQ(IntOfValue(TensorMeta(DType::kFloat32, Shape{2})).hint(), 0);
}

}  // namespace
}  // namespace guardjit
