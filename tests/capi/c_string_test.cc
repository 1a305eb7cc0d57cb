#include "capi/c_string.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace guardjit::capi {
namespace {

TEST(NewCStringTest, CopiesTextWithTerminator) {
  std::string text = "node 'mm': bad";
  absl::StatusOr<char*> copy = NewCString(text);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_STREQ(*copy, "node 'mm': bad");
  EXPECT_NE(static_cast<const void*>(*copy), text.c_str());
  text[0] = 'X';  // the host's copy does not follow the original
  EXPECT_EQ((*copy)[0], 'n');
  std::free(*copy);
}

TEST(NewCStringTest, EmptyTextIsAnEmptyCString) {
  absl::StatusOr<char*> copy = NewCString("");
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ((*copy)[0], '\0');
  std::free(*copy);
}

TEST(NewCStringTest, CopiesPastEmbeddedNulsAndTerminates) {
  const std::string text("a\0b", 3);
  absl::StatusOr<char*> copy = NewCString(text);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(std::memcmp(*copy, "a\0b\0", 4), 0);
  std::free(*copy);
}

}  // namespace
}  // namespace guardjit::capi
