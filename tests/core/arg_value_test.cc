// Node arguments (core/arg_value.h): each kind's factory, predicate and
// accessor, the scalar view of number literals, kind names for messages,
// and equality.

#include "core/arg_value.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// Which of the is_*() predicates hold, as a string of their names.
std::string Kinds(const Arg& a) {
  std::string out;
  auto add = [&](bool holds, const char* name) {
    if (!holds) return;
    if (!out.empty()) out += ",";
    out += name;
  };
  add(a.is_none(), "none");
  add(a.is_int(), "int");
  add(a.is_float(), "float");
  add(a.is_bool(), "bool");
  add(a.is_number(), "number");
  add(a.is_string(), "string");
  add(a.is_dtype(), "dtype");
  add(a.is_device(), "device");
  add(a.is_list(), "list");
  add(a.is_value(), "value");
  add(a.is_subgraph(), "subgraph");
  add(a.is_name_ref(), "name_ref");
  return out;
}

TEST(ArgTest, EachFactoryMakesExactlyItsKind) {
  EXPECT_EQ(Kinds(Arg()), "none");
  EXPECT_EQ(Kinds(Arg::None()), "none");
  EXPECT_EQ(Kinds(Arg::Int(3)), "int,number");
  EXPECT_EQ(Kinds(Arg::Float(0.5)), "float,number");
  EXPECT_EQ(Kinds(Arg::Bool(false)), "bool,number");
  EXPECT_EQ(Kinds(Arg::String("mean")), "string");
  EXPECT_EQ(Kinds(Arg::OfDType(DType::kInt8)), "dtype");
  EXPECT_EQ(Kinds(Arg::OfDevice(Device::Cpu())), "device");
  EXPECT_EQ(Kinds(Arg::OfList({})), "list");
  EXPECT_EQ(Kinds(Arg::Value({2, 1})), "value");
  EXPECT_EQ(Kinds(Arg::Subgraph("true_graph_0")), "subgraph");
  EXPECT_EQ(Kinds(Arg::Ref("x")), "name_ref");
}

TEST(ArgTest, AccessorsReturnWhatWasStored) {
  EXPECT_EQ(Arg::Int(-7).as_int(), -7);
  EXPECT_EQ(Arg::Int(int64_t{1} << 40).as_int(), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(Arg::Float(-2.25).as_float(), -2.25);
  EXPECT_TRUE(Arg::Bool(true).as_bool());
  EXPECT_EQ(Arg::String("reflect").as_string(), "reflect");
  EXPECT_EQ(Arg::OfDType(DType::kBFloat16).as_dtype(), DType::kBFloat16);
  const Device cuda1{DeviceType::kCUDA, 1};
  EXPECT_EQ(Arg::OfDevice(cuda1).as_device(), cuda1);
  EXPECT_EQ(Arg::Value({4, 2}).as_value(), (ValueRef{4, 2}));
  EXPECT_EQ(Arg::Subgraph("false_graph_0").as_subgraph(), "false_graph_0");
  EXPECT_EQ(Arg::Ref("weight").as_name_ref(), "weight");
  const Arg list = Arg::OfList({Arg::Int(1), Arg::Ref("y"), Arg::None()});
  ASSERT_EQ(list.as_list().size(), 3u);
  EXPECT_EQ(list.as_list()[0].as_int(), 1);
  EXPECT_EQ(list.as_list()[1].as_name_ref(), "y");
  EXPECT_TRUE(list.as_list()[2].is_none());
}

TEST(ArgTest, MutableListEditsTheArgument) {
  Arg list = Arg::OfList({Arg::Ref("a")});
  list.mutable_list()[0] = Arg::Value({0, 0});
  list.mutable_list().push_back(Arg::Int(5));
  ASSERT_EQ(list.as_list().size(), 2u);
  EXPECT_TRUE(list.as_list()[0].is_value());
  EXPECT_EQ(list.as_list()[1].as_int(), 5);
}

TEST(ArgTest, NumberLiteralsAsScalarsKeepTheirType) {
  const Scalar i = Arg::Int(9).as_scalar();
  EXPECT_TRUE(i.is_int());
  EXPECT_EQ(i.to_int(), 9);
  const Scalar f = Arg::Float(1.5).as_scalar();
  EXPECT_TRUE(f.is_float());
  EXPECT_DOUBLE_EQ(f.to_double(), 1.5);
  const Scalar b = Arg::Bool(true).as_scalar();
  EXPECT_TRUE(b.is_bool());
  EXPECT_TRUE(b.to_bool());
  EXPECT_FALSE(Arg::Bool(false).as_scalar().to_bool());
}

TEST(ArgTest, KindNamesForMessages) {
  EXPECT_STREQ(Arg().kind_name(), "None");
  EXPECT_STREQ(Arg::Int(1).kind_name(), "int");
  EXPECT_STREQ(Arg::Float(1).kind_name(), "float");
  EXPECT_STREQ(Arg::Bool(true).kind_name(), "bool");
  EXPECT_STREQ(Arg::String("s").kind_name(), "str");
  EXPECT_STREQ(Arg::OfDType(DType::kFloat32).kind_name(), "dtype");
  EXPECT_STREQ(Arg::OfDevice(Device::Cpu()).kind_name(), "device");
  EXPECT_STREQ(Arg::OfList({}).kind_name(), "list");
  // A value and a reference by name are both tensors to the user.
  EXPECT_STREQ(Arg::Value({0, 0}).kind_name(), "Tensor");
  EXPECT_STREQ(Arg::Ref("x").kind_name(), "Tensor");
  EXPECT_STREQ(Arg::Subgraph("g").kind_name(), "subgraph");
}

TEST(ArgTest, EqualityComparesKindAndValue) {
  EXPECT_EQ(Arg(), Arg::None());
  EXPECT_EQ(Arg::Int(2), Arg::Int(2));
  EXPECT_NE(Arg::Int(2), Arg::Int(3));
  // Same number, different literal kinds: different arguments.
  EXPECT_NE(Arg::Int(1), Arg::Float(1.0));
  EXPECT_NE(Arg::Int(1), Arg::Bool(true));
  EXPECT_NE(Arg::Float(0.0), Arg::Bool(false));
  // A name and the value it resolves to are not the same argument, nor are
  // a subgraph and a string of its name.
  EXPECT_NE(Arg::Ref("x"), Arg::String("x"));
  EXPECT_NE(Arg::Subgraph("x"), Arg::Ref("x"));
  EXPECT_EQ(Arg::Value({1, 0}), Arg::Value({1, 0}));
  EXPECT_NE(Arg::Value({1, 0}), Arg::Value({1, 1}));
  EXPECT_NE(Arg::Value({1, 0}), Arg::Value({2, 0}));
  EXPECT_NE(Arg::OfDevice(Device::Cpu()),
            Arg::OfDevice(Device{DeviceType::kCUDA, 0}));
  EXPECT_NE(Arg::OfDType(DType::kFloat16), Arg::OfDType(DType::kBFloat16));
  // Lists compare element by element, in order.
  EXPECT_EQ(Arg::OfList({Arg::Int(1), Arg::Ref("a")}),
            Arg::OfList({Arg::Int(1), Arg::Ref("a")}));
  EXPECT_NE(Arg::OfList({Arg::Int(1), Arg::Ref("a")}),
            Arg::OfList({Arg::Ref("a"), Arg::Int(1)}));
  EXPECT_NE(Arg::OfList({Arg::Int(1)}), Arg::OfList({Arg::Int(1), Arg()}));
  EXPECT_NE(Arg::OfList({}), Arg());
}

TEST(ValueRefTest, DefaultsAndEquality) {
  const ValueRef none;
  EXPECT_EQ(none.node, -1);
  EXPECT_EQ(none.index, 0);
  EXPECT_EQ((ValueRef{3, 1}), (ValueRef{3, 1}));
  EXPECT_FALSE((ValueRef{3, 1}) == (ValueRef{3, 0}));
  EXPECT_FALSE((ValueRef{3, 1}) == (ValueRef{2, 1}));
}

}  // namespace
}  // namespace guardjit
