#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_DISK_CACHE_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_DISK_CACHE_H_

// A directory of compile-cache records (cache_record.h), one file per key:
// <dir>/<first two hex digits>/<SHA-256 of the key in hex>.gjc. Several
// processes may share a directory:
// - a record is written to a temporary file beside its final name and
//   renamed over it, so a reader sees a whole record or none, never a torn
//   one (rename is atomic on one file system);
// - a read takes the whole file and the caller checks its digest, so a file
//   damaged afterwards is refused, and replaced by the next write;
// - a hit sets the file's modification time, and a write that takes the
//   directory past `max_bytes` removes the least recently used files first
//   (down to 90% of the limit), whichever process wrote them.
// Thread-safe. Every filesystem failure is an error the caller counts and
// treats as a miss: the cache never fails a compile.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

class DiskCache {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{1} << 30;  // 1 GiB

  // The cache in `dir`, created (with its parents) if missing. max_bytes 0:
  // unbounded.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(std::string dir,
                                                         int64_t max_bytes);

  // The record file of `key_hash` (DigestHex of the key).
  std::string PathOf(absl::string_view key_hash) const;
  // The file's bytes (NOT_FOUND on a miss), its modification time refreshed.
  absl::StatusOr<std::string> Read(absl::string_view key_hash) const;
  // Writes `bytes` as the record of `key_hash` (temporary file + rename),
  // then evicts past max_bytes.
  absl::Status Write(absl::string_view key_hash, absl::string_view bytes);
  // Removes the record (a refused one); a missing file is fine.
  void Remove(absl::string_view key_hash) const;

  struct FileInfo {
    std::string path;
    int64_t bytes = 0;
    int64_t mtime_ns = 0;
  };
  // Every record file now, oldest first; leftover temporary files are
  // skipped.
  std::vector<FileInfo> List() const;
  // Removes every record file and leftover temporary file; the count.
  int64_t Clear() const;
  int64_t evictions() const;

  const std::string& dir() const { return dir_; }
  int64_t max_bytes() const { return max_bytes_; }

 private:
  DiskCache(std::string dir, int64_t max_bytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  void EvictLocked();

  const std::string dir_;
  const int64_t max_bytes_;
  mutable std::mutex mu_;
  // The directory's size as this process last counted it plus what it
  // wrote since; a write past max_bytes recounts before evicting.
  int64_t approx_bytes_ = -1;
  int64_t evictions_ = 0;
};

// Lists the record files of the cache directory `dir` without opening it
// for writing (`guardjit cache stats|verify`): oldest first.
std::vector<DiskCache::FileInfo> ListCacheFiles(const std::string& dir);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_DISK_CACHE_H_
