// The compile cache's C API: a context's counters
// (gj_context_get_compile_cache_stats) and a cache directory as a whole
// (gj_cache_dir_inspect, gj_cache_dir_clear). The cache itself is
// runtime/compile_cache/; a context opens it in gj_context_create.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "capi/c_string.h"
#include "capi/context.h"
#include "capi/error.h"
#include "capi/options.h"
#include "core/status_macros.h"
#include "guardjit/guardjit.h"
#include "jit/jit_compiler.h"
#include "runtime/compile_cache/cache_inspection.h"

namespace guardjit::capi {
namespace {

// Writes `full` over the host's struct: only what its struct_size holds.
template <typename T>
void CopyOut(T& full, T* out) {
  const size_t size = std::min(out->struct_size, sizeof(full));
  full.struct_size = out->struct_size;
  std::memcpy(static_cast<void*>(out), &full, size);
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

// The defaults of every field this library knows.
static void CompileCacheStatsDefaults(gj_compile_cache_stats* stats) {
  if (stats == nullptr) return;
  *stats = gj_compile_cache_stats{};
  stats->struct_size = sizeof(gj_compile_cache_stats);
}

void gj_compile_cache_stats_init_v(gj_compile_cache_stats* stats,
                                   size_t struct_size) {
  guardjit::capi::InitSized(stats, struct_size, &CompileCacheStatsDefaults);
}

gj_error* gj_context_get_compile_cache_stats(const gj_context* context,
                                             gj_compile_cache_stats* stats) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_context_get_compile_cache_stats";
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (stats == nullptr) return NullArgument(kFn, "stats");
    if (context == nullptr) return NullArgument(kFn, "context");
    RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
        stats->struct_size, kFn, "stats", "gj_compile_cache_stats_init"));
    gj_compile_cache_stats full;
    gj_compile_cache_stats_init(&full);
    if (auto* jit =
            dynamic_cast<guardjit::JitCompiler*>(context->compiler.get())) {
      full.kernels_compiled = jit->kernels().compiled();
      full.kernels_loaded = jit->kernels().loaded();
    }
    if (context->compile_cache != nullptr) {
      const guardjit::CompileCacheStats s = context->compile_cache->stats();
      full.disk_hits = s.disk_hits;
      full.disk_misses = s.disk_misses;
      full.disk_stores = s.disk_stores;
      full.remote_hits = s.remote_hits;
      full.remote_misses = s.remote_misses;
      full.remote_stores = s.remote_stores;
      full.lock_waits = s.lock_waits;
      full.lock_timeouts = s.lock_timeouts;
      full.rejected = s.rejected;
      full.errors = s.errors;
      full.evictions = s.evictions;
    }
    guardjit::capi::CopyOut(full, stats);
    return absl::OkStatus();
  });
}

static void CacheDirStatsDefaults(gj_cache_dir_stats* stats) {
  if (stats == nullptr) return;
  *stats = gj_cache_dir_stats{};
  stats->struct_size = sizeof(gj_cache_dir_stats);
}

void gj_cache_dir_stats_init_v(gj_cache_dir_stats* stats, size_t struct_size) {
  guardjit::capi::InitSized(stats, struct_size, &CacheDirStatsDefaults);
}

gj_error* gj_cache_dir_inspect(const char* dir, const char* key, int32_t verify,
                               int32_t remove_bad, gj_cache_dir_stats* stats,
                               char** out_report) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_cache_dir_inspect";
  if (out_report != nullptr) *out_report = nullptr;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (dir == nullptr) return NullArgument(kFn, "dir");
    if (stats != nullptr) {
      RETURN_IF_ERROR(guardjit::capi::CheckStructSize(
          stats->struct_size, kFn, "stats", "gj_cache_dir_stats_init"));
    }
    absl::StatusOr<guardjit::CacheDirReport> report = guardjit::InspectCacheDir(
        dir, key != nullptr ? key : "", verify != 0, remove_bad != 0);
    if (!report.ok()) {
      return absl::Status(report.status().code(),
                          absl::StrCat(kFn, ": ", report.status().message()));
    }
    char* text = nullptr;
    if (out_report != nullptr) {
      ASSIGN_OR_RETURN(
          text, guardjit::capi::NewCString(report->Text(dir, verify != 0)));
    }
    if (stats != nullptr) {
      gj_cache_dir_stats full;
      gj_cache_dir_stats_init(&full);
      full.records = report->records;
      full.bytes = report->bytes;
      full.oldest_use_ms = report->oldest_use_ms;
      full.newest_use_ms = report->newest_use_ms;
      full.verified = report->verified;
      full.bad = report->bad;
      full.removed = report->removed;
      guardjit::capi::CopyOut(full, stats);
    }
    if (out_report != nullptr) *out_report = text;
    return absl::OkStatus();
  });
}

gj_error* gj_cache_dir_clear(const char* dir, int64_t* out_removed) {
  using guardjit::capi::NullArgument;
  constexpr absl::string_view kFn = "gj_cache_dir_clear";
  if (out_removed != nullptr) *out_removed = 0;
  return guardjit::capi::Guarded([&]() -> absl::Status {
    if (dir == nullptr) return NullArgument(kFn, "dir");
    absl::StatusOr<int64_t> removed = guardjit::ClearCacheDir(dir);
    if (!removed.ok()) {
      return absl::Status(removed.status().code(),
                          absl::StrCat(kFn, ": ", removed.status().message()));
    }
    if (out_removed != nullptr) *out_removed = *removed;
    return absl::OkStatus();
  });
}

}  // extern "C"
