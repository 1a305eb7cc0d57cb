// The exported gj_*_init symbols, for hosts built against headers up to
// 0.10, where _init was a library call that filled the LOADED library's
// sizeof: against a newer library it wrote past an older host's struct (a
// host with 0.4's 16-byte gj_context_options got 16 bytes written past it by
// 0.10). Headers after 0.10 make gj_*_init an inline call of gj_*_init_v(&s,
// sizeof s) and never reach these; each fills the struct's first release
// only (its sizeof in the version that introduced it), which every host
// that can call it holds. A field appended since keeps the library's
// default unless the host sets struct_size over it. These sizes are ABI:
// they never change (tests/abi/old_header_client.c checks them against the
// oldest headers).

#define GJ_LEGACY_INIT_SYMBOLS 1
#include <cstddef>

#include "guardjit/function.h"
#include "guardjit/guardjit.h"

namespace {

// sizeof each struct in the first release that had it (LP64).
constexpr size_t kContextOptions01 = 16;        // 0.1: num_threads
constexpr size_t kGraphLoadOptions01 = 16;      // 0.1: external_data_dir
constexpr size_t kFunctionOptions01 = 24;       // 0.1: ... dynamic
constexpr size_t kCallOptions01 = 16;           // 0.1: ... deterministic
constexpr size_t kFunctionStats02 = 80;         // 0.2
constexpr size_t kMemoryStats05 = 64;           // 0.5
constexpr size_t kCompileReportOptions06 = 32;  // 0.6
constexpr size_t kCompileCheck06 = 32;          // 0.6

static_assert(kContextOptions01 <= sizeof(gj_context_options));
static_assert(kGraphLoadOptions01 <= sizeof(gj_graph_load_options));
static_assert(kFunctionOptions01 <= sizeof(gj_function_options));
static_assert(kCallOptions01 <= sizeof(gj_call_options));
static_assert(kFunctionStats02 <= sizeof(gj_function_stats));
static_assert(kMemoryStats05 <= sizeof(gj_memory_stats));
static_assert(kCompileReportOptions06 <= sizeof(gj_compile_report_options));
static_assert(kCompileCheck06 <= sizeof(gj_compile_check));

}  // namespace

extern "C" {

void gj_context_options_init(gj_context_options* options) {
  gj_context_options_init_v(options, kContextOptions01);
}
void gj_graph_load_options_init(gj_graph_load_options* options) {
  gj_graph_load_options_init_v(options, kGraphLoadOptions01);
}
void gj_function_options_init(gj_function_options* options) {
  gj_function_options_init_v(options, kFunctionOptions01);
}
void gj_call_options_init(gj_call_options* options) {
  gj_call_options_init_v(options, kCallOptions01);
}
void gj_function_stats_init(gj_function_stats* stats) {
  gj_function_stats_init_v(stats, kFunctionStats02);
}
void gj_memory_stats_init(gj_memory_stats* stats) {
  gj_memory_stats_init_v(stats, kMemoryStats05);
}
void gj_compile_report_options_init(gj_compile_report_options* options) {
  gj_compile_report_options_init_v(options, kCompileReportOptions06);
}
void gj_compile_check_init(gj_compile_check* check) {
  gj_compile_check_init_v(check, kCompileCheck06);
}

}  // extern "C"
