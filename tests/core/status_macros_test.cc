// RETURN_IF_ERROR and ASSIGN_OR_RETURN (core/status_macros.h): errors
// propagate unchanged, values bind, and the expression is evaluated once.

#include "core/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

absl::Status ReturnIfError(absl::Status in, int* reached) {
  RETURN_IF_ERROR(in);
  ++*reached;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorPassesOkAndReturnsTheError) {
  int reached = 0;
  EXPECT_TRUE(ReturnIfError(absl::OkStatus(), &reached).ok());
  EXPECT_EQ(reached, 1);
  absl::Status s = ReturnIfError(absl::NotFoundError("no x"), &reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no x");
  EXPECT_EQ(reached, 1);
}

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError(std::to_string(x));
  return x / 2;
}

// Two ASSIGN_OR_RETURNs in one scope (distinct hidden names per line).
absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(StatusMacrosTest, AssignOrReturnBindsOrReturnsTheFirstError) {
  auto q = Quarter(12);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(*q, 3);
  auto bad = Quarter(6);  // 6 / 2 = 3 is odd
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "3");
  bad = Quarter(5);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "5");
}

// A StatusOr<T> error returned from a function of another result type.
absl::Status UseValue(absl::StatusOr<std::string> in, std::string* out) {
  ASSIGN_OR_RETURN(*out, std::move(in));
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnAssignsToAnExistingLvalue) {
  std::string out = "old";
  EXPECT_TRUE(UseValue(std::string("new"), &out).ok());
  EXPECT_EQ(out, "new");
  absl::Status s = UseValue(absl::AbortedError("stop"), &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(s.message(), "stop");
  EXPECT_EQ(out, "new");
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(int v) {
  return std::make_unique<int>(v);
}
absl::StatusOr<int> Deref(int v) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> p, MakeInt(v));
  return *p;
}

TEST(StatusMacrosTest, AssignOrReturnMovesMoveOnlyValues) {
  auto v = Deref(7);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 7);
}

absl::Status CountCalls(int* calls, bool fail) {
  RETURN_IF_ERROR(([&]() -> absl::Status {
    ++*calls;
    return fail ? absl::InternalError("x") : absl::OkStatus();
  })());
  ASSIGN_OR_RETURN(int unused, ([&]() -> absl::StatusOr<int> {
                     ++*calls;
                     return 1;
                   })());
  (void)unused;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ExpressionsAreEvaluatedOnce) {
  int calls = 0;
  EXPECT_TRUE(CountCalls(&calls, false).ok());
  EXPECT_EQ(calls, 2);
  calls = 0;
  EXPECT_EQ(CountCalls(&calls, true).code(), absl::StatusCode::kInternal);
  EXPECT_EQ(calls, 1);
}

// The macros are single statements usable in unbraced if/else.
absl::Status Branch(bool first, absl::Status a, absl::Status b) {
  if (first)
    RETURN_IF_ERROR(a);
  else
    RETURN_IF_ERROR(b);
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorIsOneStatement) {
  EXPECT_EQ(Branch(true, absl::UnknownError("a"), absl::OkStatus()).message(),
            "a");
  EXPECT_TRUE(Branch(false, absl::UnknownError("a"), absl::OkStatus()).ok());
  EXPECT_EQ(Branch(false, absl::OkStatus(), absl::UnknownError("b")).message(),
            "b");
}

}  // namespace
}  // namespace guardjit
