// A C host's gj_arg as the graph builder's Arg (capi/arg_convert.h): each
// kind reads its own fields, and every field a host can get wrong (NULL
// strings and arrays, booleans other than 0/1, unknown kinds, dtypes and
// devices) is refused with an error that starts with the caller's `what`.

#include "capi/arg_convert.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"
#include "tests/test_util.h"

namespace guardjit::capi {
namespace {

using testing::ExpectError;

constexpr char kWhat[] = "gj_graph_builder_add_node: node 'n': argument 1";

gj_arg Of(gj_arg_kind kind) {
  gj_arg a;
  std::memset(&a, 0, sizeof a);
  a.kind = kind;
  return a;
}

TEST(DTypeFromCTest, RoundTripsEveryDType) {
  for (DType d : testing::kAllDTypes) {
    const std::optional<DType> back = DTypeFromC(DTypeToC(d));
    ASSERT_TRUE(back.has_value()) << DTypeName(d);
    EXPECT_EQ(*back, d);
  }
  EXPECT_EQ(DTypeToC(DType::kBFloat16), GJ_DTYPE_BFLOAT16);
  EXPECT_FALSE(DTypeFromC(GJ_DTYPE_UNKNOWN).has_value());
  gj_dtype bad;
  const int raw = 1000;
  std::memcpy(&bad, &raw, sizeof bad);
  EXPECT_FALSE(DTypeFromC(bad).has_value());
}

TEST(ArgFromCTest, ScalarsAndNone) {
  gj_arg a = Of(GJ_ARG_INT);
  a.i = -5;
  absl::StatusOr<Arg> i = ArgFromC(a, kWhat);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->as_int(), -5);
  a = Of(GJ_ARG_FLOAT);
  a.f = 0.25;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_float(), 0.25);
  a = Of(GJ_ARG_BOOL);
  a.i = 1;
  EXPECT_TRUE(ArgFromC(a, kWhat)->as_scalar().to_bool());
  EXPECT_TRUE(ArgFromC(Of(GJ_ARG_NONE), kWhat)->is_none());
}

TEST(ArgFromCTest, BoolMustBeZeroOrOne) {
  gj_arg a = Of(GJ_ARG_BOOL);
  a.i = 2;
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              std::string(kWhat) +
                  ": GJ_ARG_BOOL argument with i = 2; expected 0 or 1");
}

TEST(ArgFromCTest, StringsAndReferences) {
  gj_arg a = Of(GJ_ARG_REF);
  a.str = "x";
  absl::StatusOr<Arg> ref = ArgFromC(a, kWhat);
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->as_name_ref(), "x");
  a.kind = GJ_ARG_STRING;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_string(), "x");
  a.kind = GJ_ARG_SUBGRAPH;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_subgraph(), "x");
}

TEST(ArgFromCTest, NullStringsNameTheKindAndField) {
  for (gj_arg_kind kind :
       {GJ_ARG_REF, GJ_ARG_STRING, GJ_ARG_DEVICE, GJ_ARG_SUBGRAPH}) {
    absl::StatusOr<Arg> r = ArgFromC(Of(kind), kWhat);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::string(kWhat) + ": GJ_ARG_"),
              std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find("argument with str NULL"),
              std::string::npos)
        << r.status();
  }
}

TEST(ArgFromCTest, DTypesAndDevices) {
  gj_arg a = Of(GJ_ARG_DTYPE);
  a.dtype = GJ_DTYPE_INT16;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_dtype(), DType::kInt16);
  a.dtype = GJ_DTYPE_UNKNOWN;
  ExpectError(
      ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
      std::string(kWhat) + ": GJ_ARG_DTYPE argument with unknown dtype");
  a = Of(GJ_ARG_DEVICE);
  a.str = "cuda:1";
  absl::StatusOr<Arg> cuda = ArgFromC(a, kWhat);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->as_device().index, 1);
  a.str = "tpu";
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              std::string(kWhat) +
                  ": unknown device 'tpu'; expected \"cpu\" or \"cuda:N\"");
}

TEST(ArgFromCTest, Lists) {
  const int64_t ints[] = {1, -2, 3};
  gj_arg a = Of(GJ_ARG_INT_LIST);
  a.ints = ints;
  a.len = 3;
  absl::StatusOr<Arg> list = ArgFromC(a, kWhat);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->as_list().size(), 3u);
  EXPECT_EQ(list->as_list()[1].as_int(), -2);
  const double floats[] = {0.5, 1.5};
  a = Of(GJ_ARG_FLOAT_LIST);
  a.floats = floats;
  a.len = 2;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_list()[1].as_float(), 1.5);
  const char* refs[] = {"a", "b"};
  a = Of(GJ_ARG_REF_LIST);
  a.refs = refs;
  a.len = 2;
  EXPECT_EQ(ArgFromC(a, kWhat)->as_list()[1].as_name_ref(), "b");
  // An empty list may leave its array NULL.
  a = Of(GJ_ARG_INT_LIST);
  absl::StatusOr<Arg> empty = ArgFromC(a, kWhat);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->as_list().empty());
}

TEST(ArgFromCTest, NullArraysAndElementsAreRefused) {
  gj_arg a = Of(GJ_ARG_INT_LIST);
  a.len = 2;
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              "GJ_ARG_INT_LIST argument with ints NULL");
  a.kind = GJ_ARG_FLOAT_LIST;
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              "GJ_ARG_FLOAT_LIST argument with floats NULL");
  a.kind = GJ_ARG_REF_LIST;
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              "GJ_ARG_REF_LIST argument with refs NULL");
  const char* refs[] = {"a", nullptr};
  a.refs = refs;
  ExpectError(
      ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
      std::string(kWhat) + ": GJ_ARG_REF_LIST argument with refs[1] NULL");
}

TEST(ArgFromCTest, UnknownKindIsRefused) {
  gj_arg a = Of(GJ_ARG_NONE);
  const int raw = -1;
  std::memcpy(&a.kind, &raw, sizeof raw);
  ExpectError(ArgFromC(a, kWhat), absl::StatusCode::kInvalidArgument,
              std::string(kWhat) + ": unknown kind -1");
}

}  // namespace
}  // namespace guardjit::capi
