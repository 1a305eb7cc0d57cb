#include "capi_test_util.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using gjtest::ContextPtr;
using gjtest::IsError;
using gjtest::Ok;

TEST(CapiContextTest, InitFillsDefaults) {
  gj_context_options options;
  options.struct_size = 0;
  options.num_threads = 42;
  gj_context_options_init(&options);
  EXPECT_EQ(options.struct_size, sizeof(gj_context_options));
  EXPECT_EQ(options.num_threads, 0);
  gj_context_options_init(nullptr);
}

TEST(CapiContextTest, CreateWithDefaultsAndWithOptions) {
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(nullptr, &context)));
  EXPECT_NE(context, nullptr);
  gj_context_destroy(context);

  gj_context_options options;
  gj_context_options_init(&options);
  options.num_threads = 3;
  ASSERT_TRUE(Ok(gj_context_create(&options, &context)));
  EXPECT_NE(context, nullptr);
  gj_context_destroy(context);
}

TEST(CapiContextTest, NullOutParameter) {
  EXPECT_TRUE(IsError(gj_context_create(nullptr, nullptr), GJ_INVALID_ARGUMENT,
                      {"gj_context_create", "out_context"}));
}

TEST(CapiContextTest, DestroyNull) { gj_context_destroy(nullptr); }

TEST(CapiContextTest, NegativeThreadsRejectedAndOutZeroed) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.num_threads = -1;
  gj_context* context = reinterpret_cast<gj_context*>(0x1);
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT, {"num_threads", "-1"}));
  EXPECT_EQ(context, nullptr);
}

TEST(CapiContextTest, UninitializedStructSizeRejected) {
  gj_context_options options;
  gj_context_options_init(&options);
  options.struct_size = 0;
  gj_context* context = nullptr;
  EXPECT_TRUE(IsError(gj_context_create(&options, &context),
                      GJ_INVALID_ARGUMENT,
                      {"struct_size", "gj_context_options_init"}));
}

TEST(CapiContextTest, OlderHostStructReadsOnlyItsFields) {
  // A host whose header had only struct_size: num_threads must not be read,
  // so the invalid value beyond struct_size is ignored.
  gj_context_options options;
  gj_context_options_init(&options);
  options.struct_size = sizeof(size_t);
  options.num_threads = -5;
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options, &context)));
  ContextPtr owned(context);
  EXPECT_NE(context, nullptr);
}

TEST(CapiContextTest, NewerHostStructIsAccepted) {
  struct NewerOptions {
    gj_context_options v1;
    int64_t field_from_the_future;
  } options;
  gj_context_options_init(&options.v1);
  options.v1.struct_size = sizeof(NewerOptions);
  options.field_from_the_future = 7;
  gj_context* context = nullptr;
  ASSERT_TRUE(Ok(gj_context_create(&options.v1, &context)));
  gj_context_destroy(context);
}

}  // namespace
