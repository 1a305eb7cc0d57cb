#include "bindings/cli/cache_command.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "bindings/cli/cli_common.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {
namespace {

// "2026-11-28 23:41:07 UTC" of Unix milliseconds.
std::string When(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace

int CacheCommand(const std::vector<std::string>& args) {
  if (args.empty()) return UsageError("cache needs stats, verify or clear");
  const std::string& action = args[0];
  if (action != "stats" && action != "verify" && action != "clear") {
    return UsageError("unknown cache action '" + action +
                      "' (stats, verify or clear)");
  }
  std::string dir;
  bool remove_bad = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--remove-bad" && action == "verify") {
      remove_bad = true;
    } else if (!args[i].empty() && args[i][0] == '-') {
      return UsageError("unknown flag '" + args[i] + "' for cache " + action);
    } else if (dir.empty()) {
      dir = args[i];
    } else {
      return UsageError("unexpected argument '" + args[i] + "'");
    }
  }
  if (dir.empty()) {
    const char* env = std::getenv("GJ_CACHE_DIR");
    if (env == nullptr || *env == '\0') {
      return UsageError("cache " + action +
                        " needs a DIR (or GJ_CACHE_DIR set)");
    }
    dir = env;
  }
  if (action == "clear") {
    int64_t removed = 0;
    if (Failed(gj_cache_dir_clear(dir.c_str(), &removed))) return kExitError;
    std::printf("%s: removed %lld files\n", dir.c_str(),
                static_cast<long long>(removed));
    return 0;
  }
  const bool verify = action == "verify";
  gj_cache_dir_stats stats;
  gj_cache_dir_stats_init(&stats);
  char* report = nullptr;
  if (Failed(gj_cache_dir_inspect(dir.c_str(), std::getenv("GJ_CACHE_KEY"),
                                  verify, remove_bad, &stats, &report))) {
    return kExitError;
  }
  std::printf("%s", report);
  gj_string_destroy(report);
  if (stats.records > 0) {
    std::printf("last used: %s to %s\n", When(stats.oldest_use_ms).c_str(),
                When(stats.newest_use_ms).c_str());
  }
  return verify && stats.bad > 0 ? kExitError : 0;
}

}  // namespace guardjit_cli
