#include <cstdlib>
#include <cstring>

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

}  // namespace
