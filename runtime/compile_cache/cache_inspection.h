#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_INSPECTION_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_INSPECTION_H_

// A compile cache directory as a whole (`guardjit cache stats|verify|clear
// DIR`, gj_cache_dir_inspect): its records counted by kind and, when asked,
// each read and checked as a load would check it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

struct CacheDirReport {
  int64_t records = 0;
  int64_t bytes = 0;
  int64_t oldest_use_ms = 0;  // Unix ms of the least recently used record
  int64_t newest_use_ms = 0;
  int64_t verified = 0;
  int64_t bad = 0;
  int64_t removed = 0;
  // Per kind of record ("llvm-object"; "bad" for records that failed):
  // count and bytes. Filled when verifying (kinds are inside the records).
  std::map<std::string, std::pair<int64_t, int64_t>> kinds;
  // "<path>: <problem>" per bad record.
  std::vector<std::string> problems;

  // The summary and the problems, one per line.
  std::string Text(absl::string_view dir, bool verified_records) const;
};

// Inspects `dir` (NOT_FOUND when it does not exist). With `verify` each
// record is read whole and checked: its digest, its file name against its
// key's hash, with a non-empty `signing_key` its signature; with
// `remove_bad` the records that fail are removed.
absl::StatusOr<CacheDirReport> InspectCacheDir(const std::string& dir,
                                               absl::string_view signing_key,
                                               bool verify, bool remove_bad);

// Removes every record and leftover temporary file of `dir`; how many.
absl::StatusOr<int64_t> ClearCacheDir(const std::string& dir);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_INSPECTION_H_
