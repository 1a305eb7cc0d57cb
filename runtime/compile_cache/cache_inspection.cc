#include "runtime/compile_cache/cache_inspection.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "runtime/compile_cache/cache_record.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/compile_cache/disk_cache.h"

namespace guardjit {
namespace {

absl::Status CheckDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("no compile cache directory ", dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

std::string CacheDirReport::Text(absl::string_view dir,
                                 bool verified_records) const {
  std::string out =
      absl::StrCat(dir, ": ", records, " records, ", bytes, " bytes\n");
  for (const auto& [kind, count_bytes] : kinds) {
    absl::StrAppend(&out, "  ", kind, ": ", count_bytes.first, " records, ",
                    count_bytes.second, " bytes\n");
  }
  if (verified_records) {
    absl::StrAppend(&out, "verified ", verified, ", bad ", bad,
                    removed > 0 ? absl::StrCat(", removed ", removed) : "",
                    "\n");
  }
  for (const std::string& p : problems) absl::StrAppend(&out, "  ", p, "\n");
  return out;
}

absl::StatusOr<CacheDirReport> InspectCacheDir(const std::string& dir,
                                               absl::string_view signing_key,
                                               bool verify, bool remove_bad) {
  if (absl::Status s = CheckDir(dir); !s.ok()) return s;
  CacheDirReport report;
  for (const DiskCache::FileInfo& f : ListCacheFiles(dir)) {
    ++report.records;
    report.bytes += f.bytes;
    const int64_t use_ms = f.mtime_ns / 1000000;
    if (report.oldest_use_ms == 0) report.oldest_use_ms = use_ms;
    report.newest_use_ms = use_ms;
    if (!verify) continue;
    absl::StatusOr<std::string> bytes = ReadFile(f.path);
    absl::StatusOr<CacheRecord> record =
        bytes.ok() ? DecodeCacheRecord(*bytes, "", signing_key)
                   : absl::StatusOr<CacheRecord>(bytes.status());
    std::string problem;
    if (!record.ok()) {
      problem = std::string(record.status().message());
    } else {
      // A record under another key's name is one no lookup would take.
      const std::string name = std::filesystem::path(f.path).stem().string();
      if (name != CompileCache::KeyHash(record->key)) {
        problem = "foreign: the file name is not its key's hash";
      }
    }
    if (problem.empty()) {
      ++report.verified;
      auto& kind = report.kinds[record->info.kind];
      ++kind.first;
      kind.second += f.bytes;
      continue;
    }
    ++report.bad;
    auto& kind = report.kinds["bad"];
    ++kind.first;
    kind.second += f.bytes;
    report.problems.push_back(absl::StrCat(f.path, ": ", problem));
    if (remove_bad && ::unlink(f.path.c_str()) == 0) ++report.removed;
  }
  return report;
}

absl::StatusOr<int64_t> ClearCacheDir(const std::string& dir) {
  if (absl::Status s = CheckDir(dir); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<DiskCache>> disk = DiskCache::Open(dir, 0);
  if (!disk.ok()) return disk.status();
  return (*disk)->Clear();
}

}  // namespace guardjit
