// Size symbols named in error messages get their source and value appended
// (core/symbol_messages.h): whole-word matches only ("s10" is not s1, but
// "s0xs1" names both), each symbol once, the status code kept.

#include "core/symbol_messages.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/shape_env.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

const std::vector<std::string> kSources = {"x.size()[0]", "y.size()[1]"};
const std::vector<int64_t> kValues = {7, 3};

std::string Annotated(absl::string_view message) {
  return std::string(
      WithSymbolSources(absl::InvalidArgumentError(message), kSources, kValues)
          .message());
}

TEST(SymbolMessagesTest, AppendsEachNamedSymbolsSourceAndValue) {
  EXPECT_EQ(Annotated("sizes s0 and 4 are not broadcastable"),
            "sizes s0 and 4 are not broadcastable (s0 = x.size()[0], 7 in "
            "this call)");
  EXPECT_EQ(Annotated("index s1 out of range for s0 (s1 again)"),
            "index s1 out of range for s0 (s1 again) (s0 = x.size()[0], 7 in "
            "this call; s1 = y.size()[1], 3 in this call)");
  const absl::Status kept = WithSymbolSources(
      absl::OutOfRangeError("s0 overflows"), kSources, kValues);
  EXPECT_EQ(kept.code(), absl::StatusCode::kOutOfRange);
}

TEST(SymbolMessagesTest, MatchesWholeNamesOnly) {
  // A matrix's sizes "s0xs1" name both; "s10" (a digit after) and "abs0" (a
  // letter other than x before) name neither.
  EXPECT_EQ(Annotated("a [s0xs1] matrix"),
            "a [s0xs1] matrix (s0 = x.size()[0], 7 in this call; s1 = "
            "y.size()[1], 3 in this call)");
  EXPECT_EQ(Annotated("tensor s10 and abs0"), "tensor s10 and abs0");
  EXPECT_EQ(Annotated("no symbol here"), "no symbol here");
}

TEST(SymbolMessagesTest, OkStaysOk) {
  EXPECT_TRUE(WithSymbolSources(absl::OkStatus(), kSources, kValues).ok());
}

TEST(SymbolMessagesTest, ShapeEnvGivesTheSpecializationsHints) {
  ShapeEnv env;
  env.NewSymbol(5, "x.size()[0]", 0, 0);
  env.NewSymbol(9, "x.size()[1]", 0, 1);
  const absl::Status status =
      WithSymbolSources(absl::InvalidArgumentError("s1 is odd"), env);
  EXPECT_EQ(status.message(), "s1 is odd (s1 = x.size()[1], 9 in this call)");
}

}  // namespace
}  // namespace guardjit
