// *_init_v: a host whose header is older than the library fills only the
// bytes of its own struct.

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

// Fills `size` bytes of a poisoned buffer with init_v and checks that nothing
// past them changed and that struct_size says what was written.
template <typename T>
void ExpectWritesOnly(void (*init_v)(T*, size_t), size_t size) {
  std::vector<unsigned char> buffer(sizeof(T) + 64, 0xab);
  init_v(reinterpret_cast<T*>(buffer.data()), size);
  const size_t written = size < sizeof(size_t) ? 0
                         : size < sizeof(T)    ? size
                                               : sizeof(T);
  for (size_t i = written; i < buffer.size(); ++i) {
    ASSERT_EQ(buffer[i], 0xab)
        << "byte " << i << " of a " << size << "-byte struct";
  }
  if (written > 0) {
    size_t struct_size = 0;
    std::memcpy(&struct_size, buffer.data(), sizeof(struct_size));
    EXPECT_EQ(struct_size, written);
  }
}

template <typename T>
void ExpectAllSizes(void (*init_v)(T*, size_t)) {
  for (size_t size : {size_t{0}, size_t{4}, sizeof(size_t), sizeof(size_t) + 4,
                      sizeof(T) - 1, sizeof(T), sizeof(T) + 32}) {
    ExpectWritesOnly(init_v, size);
  }
}

TEST(CapiInitSizedTest, EveryInitVWritesOnlyTheHostsBytes) {
  ExpectAllSizes(&gj_context_options_init_v);
  ExpectAllSizes(&gj_memory_stats_init_v);
  ExpectAllSizes(&gj_graph_load_options_init_v);
  ExpectAllSizes(&gj_function_options_init_v);
  ExpectAllSizes(&gj_call_options_init_v);
  ExpectAllSizes(&gj_function_stats_init_v);
  ExpectAllSizes(&gj_compile_report_options_init_v);
  ExpectAllSizes(&gj_compile_check_init_v);
}

TEST(CapiInitSizedTest, AnOlderCallOptionsGetsTheDefaultsThatFit) {
  // gj_call_options as API 0.6 laid it out: up to timeout_us (40 bytes).
  std::vector<unsigned char> buffer(sizeof(gj_call_options), 0xab);
  auto* options = reinterpret_cast<gj_call_options*>(buffer.data());
  gj_call_options_init_v(options, 40);
  EXPECT_EQ(options->struct_size, 40u);
  EXPECT_EQ(options->grad_mode, 1);
  EXPECT_EQ(options->cancel, nullptr);
  EXPECT_EQ(options->timeout_us, 0);
  EXPECT_EQ(buffer[40], 0xab);
  // And the library reads such a struct with defaults for the rest.
  gj_call_options full;
  gj_call_options_init_v(&full, sizeof(full));
  EXPECT_EQ(full.struct_size, sizeof(gj_call_options));
  EXPECT_EQ(full.stream, nullptr);
}

}  // namespace
