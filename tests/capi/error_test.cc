#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::IsError;

TEST(CapiErrorTest, NullErrorMeansSuccess) {
  EXPECT_EQ(gj_error_get_code(nullptr), GJ_OK);
  EXPECT_STREQ(gj_error_message(nullptr), "");
  gj_error_destroy(nullptr);
  gj_string_destroy(nullptr);
}

TEST(CapiErrorTest, CodesAreAbslCanonicalCodes) {
  EXPECT_EQ(GJ_CANCELLED, static_cast<int>(absl::StatusCode::kCancelled));
  EXPECT_EQ(GJ_INVALID_ARGUMENT,
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(GJ_NOT_FOUND, static_cast<int>(absl::StatusCode::kNotFound));
  EXPECT_EQ(GJ_FAILED_PRECONDITION,
            static_cast<int>(absl::StatusCode::kFailedPrecondition));
  EXPECT_EQ(GJ_OUT_OF_RANGE, static_cast<int>(absl::StatusCode::kOutOfRange));
  EXPECT_EQ(GJ_UNIMPLEMENTED,
            static_cast<int>(absl::StatusCode::kUnimplemented));
  EXPECT_EQ(GJ_DATA_LOSS, static_cast<int>(absl::StatusCode::kDataLoss));
  EXPECT_EQ(GJ_UNAUTHENTICATED,
            static_cast<int>(absl::StatusCode::kUnauthenticated));
}

TEST(CapiErrorTest, ErrorCarriesCodeAndMessageUntilDestroyed) {
  gj_error* error = gj_context_create(nullptr, nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(gj_error_get_code(error), GJ_INVALID_ARGUMENT);
  const char* message = gj_error_message(error);
  EXPECT_NE(std::strstr(message, "gj_context_create"), nullptr) << message;
  EXPECT_NE(std::strstr(message, "out_context"), nullptr) << message;
  EXPECT_STREQ(gj_error_message(error), message);  // stable pointer
  gj_error_destroy(error);
}

TEST(CapiErrorTest, IsErrorChecksCodeAndMessage) {
  EXPECT_TRUE(IsError(gj_context_create(nullptr, nullptr), GJ_INVALID_ARGUMENT,
                      {"out_context is NULL"}));
  EXPECT_FALSE(IsError(gj_context_create(nullptr, nullptr), GJ_NOT_FOUND, {}));
  EXPECT_FALSE(IsError(nullptr, GJ_NOT_FOUND, {}));
}

// Issue #19: messages echoed input bytes unescaped and unbounded (a 573 KB
// input gave a 1.86 MB message).
TEST(CapiErrorTest, MessagesAreEscapedAndBounded) {
  gj_context* raw = nullptr;
  ASSERT_EQ(gj_context_create(nullptr, &raw), nullptr);
  gjtest::ContextPtr context(raw);
  // A target with a newline, a control byte and 600,000 more bytes.
  const std::string text =
      "placeholders { name: \"x\" } nodes { name: \"n\" target: "
      "\"aten.bogus\\n\\001" +
      std::string(600000, 'x') +
      "\" args { ref: \"x\" } } outputs { ref: \"n\" }";
  gj_graph* graph = nullptr;
  gj_error* error = gj_graph_from_text(context.get(), text.data(), text.size(),
                                       nullptr, &graph);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(graph, nullptr);
  const std::string message = gj_error_message(error);
  gj_error_destroy(error);
  EXPECT_LE(message.size(), 4096u + 40u);
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(message.find('\001'), std::string::npos);
  EXPECT_NE(message.find("aten.bogus\\n\\x01xxx"), std::string::npos)
      << message.substr(0, 200);
  EXPECT_NE(message.find("more bytes)"), std::string::npos)
      << message.substr(message.size() - 100);
}

}  // namespace
