// gj_function_get_stats, gj_function_explain, gj_function_dump_guards: what
// the guard cache did and why.

#include <cstring>

#include "absl/strings/str_cat.h"
#include "capi/c_string.h"
#include "capi/error.h"
#include "capi/function.h"
#include "capi/options.h"
#include "core/status_macros.h"

namespace guardjit::capi {
namespace {

template <typename Render>
gj_error* TextOf(const gj_function* function, char** out_text,
                 absl::string_view fn, Render render) {
  if (out_text != nullptr) *out_text = nullptr;
  return Guarded([&]() -> absl::Status {
    if (out_text == nullptr) return NullArgument(fn, "out_text");
    if (function == nullptr) return NullArgument(fn, "function");
    ASSIGN_OR_RETURN(*out_text, NewCString(render(*function->impl)));
    return absl::OkStatus();
  });
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

// The defaults of every field this library knows; gj_function_stats_init_v and
// the legacy gj_function_stats_init symbol (legacy_init.cc) copy what fits.
static void FunctionStatsDefaults(gj_function_stats* stats) {
  if (stats == nullptr) return;
  *stats = gj_function_stats{};
  stats->struct_size = sizeof(gj_function_stats);
}

void gj_function_stats_init_v(gj_function_stats* stats, size_t struct_size) {
  guardjit::capi::InitSized(stats, struct_size, &FunctionStatsDefaults);
}

gj_error* gj_function_get_stats(const gj_function* function,
                                gj_function_stats* stats) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_function_get_stats";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (stats == nullptr) return NullArgument(kFn, "stats");
    if (function == nullptr) return NullArgument(kFn, "function");
    RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
        stats->struct_size, kFn, "stats", "gj_function_stats_init"));
    const guardjit::FunctionStats s = function->impl->stats();
    gj_function_stats full;
    gj_function_stats_init(&full);
    full.calls = s.calls;
    full.hits = s.hits;
    full.misses = s.misses;
    full.compiles = s.compiles;
    full.recompiles = s.recompiles;
    full.fallback_calls = s.fallback_calls;
    full.cache_entries = s.cache_entries;
    full.compile_ms_total = s.compile_ms_total;
    full.guard_ns_mean = s.guard_ns_mean;
    const guardjit::CudaGraphCounters& g =
        function->impl->cuda_graph_counters();
    full.cuda_graphs_recorded = g.recorded.load(std::memory_order_relaxed);
    full.cuda_graph_replays = g.replays.load(std::memory_order_relaxed);
    full.cuda_graph_pointer_updates =
        g.pointer_updates.load(std::memory_order_relaxed);
    full.cuda_graph_recaptures = g.recaptures.load(std::memory_order_relaxed);
    full.cuda_graph_evictions = g.evictions.load(std::memory_order_relaxed);
    full.cuda_graph_pool_bytes = g.pool_bytes.load(std::memory_order_relaxed);
    full.graph_count = s.graph_count;
    full.graph_break_count = s.graph_break_count;
    full.eager_while_compiling = s.eager_while_compiling;
    full.entries_loaded = s.entries_loaded;
    // An older host's struct is shorter: write only what it has.
    const size_t size =
        stats->struct_size < sizeof(full) ? stats->struct_size : sizeof(full);
    full.struct_size = stats->struct_size;
    std::memcpy(stats, &full, size);
    return absl::OkStatus();
  });
}

gj_error* gj_function_explain(const gj_function* function, char** out_text) {
  return guardjit::capi::TextOf(
      function, out_text, "gj_function_explain",
      [](const guardjit::Function& f) { return f.Explain(); });
}

gj_error* gj_function_dump_guards(const gj_function* function,
                                  char** out_text) {
  return guardjit::capi::TextOf(
      function, out_text, "gj_function_dump_guards",
      [](const guardjit::Function& f) { return f.DumpGuards(); });
}

}  // extern "C"
