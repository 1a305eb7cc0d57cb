// Complements capi/abi_layout.cc's build-time offset checks at run time:
// every growable struct of the C header starts with its size_t struct_size,
// gj_*_init_v over the host's whole struct reports that whole size, and
// each struct ends right after the last field abi_layout.cc pins (LP64), so
// a field appended without an offset check there fails here.

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/function.h"
#include "guardjit/guardjit.h"

namespace {

static_assert(sizeof(void*) == 8, "the sizes below are for LP64");

// init_v over a poisoned struct of sizeof(T): struct_size comes first and
// says sizeof(T), which is `expected_size`.
template <typename T>
void ExpectWholeStruct(void (*init_v)(T*, size_t), size_t expected_size) {
  SCOPED_TRACE(expected_size);
  static_assert(offsetof(T, struct_size) == 0);
  static_assert(std::is_same_v<decltype(T::struct_size), size_t>);
  EXPECT_EQ(sizeof(T), expected_size);
  std::vector<unsigned char> buffer(sizeof(T), 0xab);
  init_v(reinterpret_cast<T*>(buffer.data()), sizeof(T));
  size_t struct_size = 0;
  std::memcpy(&struct_size, buffer.data(), sizeof(struct_size));
  EXPECT_EQ(struct_size, expected_size);
}

TEST(AbiLayoutTest, StructsEndAtTheirLastPinnedField) {
  // The last field's offset (abi_layout.cc) plus its size, rounded up to 8.
  ExpectWholeStruct(&gj_context_options_init_v, 56 + 8);       // remote_cache
  ExpectWholeStruct(&gj_memory_stats_init_v, 64 + 8);          // packed_weight
  ExpectWholeStruct(&gj_graph_load_options_init_v, 16 + 8);    // format (enum)
  ExpectWholeStruct(&gj_function_options_init_v, 56 + 8);      // stride flag
  ExpectWholeStruct(&gj_call_options_init_v, 48 + 8);          // synchronize
  ExpectWholeStruct(&gj_function_stats_init_v, 152 + 8);       // entries_loaded
  ExpectWholeStruct(&gj_compile_cache_stats_init_v, 104 + 8);  // evictions
  ExpectWholeStruct(&gj_compile_report_options_init_v, 24 + 8);  // seed
  ExpectWholeStruct(&gj_compile_check_init_v, 24 + 8);  // within_tolerance
}

TEST(AbiLayoutTest, ArrayElementsHaveFixedSizes) {
  // Hosts pass arrays of these with the library reading element i at
  // i * sizeof: their sizes are ABI.
  EXPECT_EQ(sizeof(gj_arg), 80u);
  EXPECT_EQ(sizeof(gj_dynamic_dim), 24u);
  EXPECT_EQ(alignof(gj_arg), 8u);
  EXPECT_EQ(alignof(gj_dynamic_dim), 8u);
}

}  // namespace
