// Checks the exported legacy gj_*_init symbols (capi/legacy_init.cc) that
// hosts built against headers up to 0.10 call: each fills exactly the
// struct's first-release size (an ABI constant), sets struct_size to it,
// writes the same defaults as gj_*_init_v there, and leaves the bytes past
// it as the host had them.

// Declares gj_*_init as the exported functions, as old headers did, instead
// of the inline gj_*_init_v(&s, sizeof s) calls.
#define GJ_LEGACY_INIT_SYMBOLS 1

#include <cstddef>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/function.h"
#include "guardjit/guardjit.h"

namespace {

// Runs the legacy `init` on a poisoned buffer, expects it to write the first
// `size` bytes only, as `init_v(&s, size)` would, with struct_size = size.
template <typename T>
void ExpectLegacyInit(void (*init)(T*), void (*init_v)(T*, size_t),
                      size_t size) {
  SCOPED_TRACE(size);
  std::vector<unsigned char> legacy(sizeof(T) + 16, 0xab);
  init(reinterpret_cast<T*>(legacy.data()));
  size_t struct_size = 0;
  std::memcpy(&struct_size, legacy.data(), sizeof(struct_size));
  EXPECT_EQ(struct_size, size);
  for (size_t i = size; i < legacy.size(); ++i) {
    ASSERT_EQ(legacy[i], 0xab) << "byte " << i << " written";
  }
  std::vector<unsigned char> sized(sizeof(T) + 16, 0xab);
  init_v(reinterpret_cast<T*>(sized.data()), size);
  EXPECT_EQ(std::memcmp(legacy.data(), sized.data(), size), 0);
}

TEST(LegacyInitTest, EachFillsItsFirstReleasesSize) {
  // LP64 sizes in the release that introduced each struct.
  ExpectLegacyInit(&gj_context_options_init, &gj_context_options_init_v, 16);
  ExpectLegacyInit(&gj_graph_load_options_init, &gj_graph_load_options_init_v,
                   16);
  ExpectLegacyInit(&gj_function_options_init, &gj_function_options_init_v, 24);
  ExpectLegacyInit(&gj_call_options_init, &gj_call_options_init_v, 16);
  ExpectLegacyInit(&gj_function_stats_init, &gj_function_stats_init_v, 80);
  ExpectLegacyInit(&gj_memory_stats_init, &gj_memory_stats_init_v, 64);
  ExpectLegacyInit(&gj_compile_report_options_init,
                   &gj_compile_report_options_init_v, 32);
  ExpectLegacyInit(&gj_compile_check_init, &gj_compile_check_init_v, 32);
}

TEST(LegacyInitTest, OldCallOptionsGetTheirDefaults) {
  // 0.1's gj_call_options: struct_size, grad_mode, deterministic.
  gj_call_options options;
  std::memset(&options, 0xab, sizeof(options));
  gj_call_options_init(&options);
  EXPECT_EQ(options.struct_size, 16u);
  EXPECT_EQ(options.grad_mode, 1);
  // A field appended since keeps what the host had (here, the poison).
  std::vector<unsigned char> cancel(sizeof(options.cancel), 0xab);
  EXPECT_EQ(std::memcmp(&options.cancel, cancel.data(), cancel.size()), 0);
}

TEST(LegacyInitTest, OldContextOptionsStillCreateAContext) {
  // A 0.1 host's gj_context_options: the legacy init, then num_threads.
  gj_context_options options;
  std::memset(&options, 0, sizeof(options));
  gj_context_options_init(&options);
  ASSERT_EQ(options.struct_size, 16u);
  options.num_threads = 1;
  gj_context* context = nullptr;
  gj_error* error = gj_context_create(&options, &context);
  EXPECT_EQ(error, nullptr) << (error ? gj_error_message(error) : "");
  if (error != nullptr) gj_error_destroy(error);
  ASSERT_NE(context, nullptr);
  gj_context_destroy(context);
}

}  // namespace
