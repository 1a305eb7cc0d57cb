#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_COMPILE_CACHE_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_COMPILE_CACHE_H_

// The persistent compile cache a context's compilers share: compiled code
// (today the LLVM object file of each fused CPU kernel) stored under a key
// that names everything the code depends on (the kernel's source, the
// target CPU and its features, the LLVM version and a fingerprint of the
// code generator's sources), so that the next process, or another replica
// sharing the directory, loads what this one compiled instead of compiling
// it again. A key mismatch is a miss, never wrong code.
//
// Tiers: a directory (disk_cache.h) and, with Options::remote, a Redis
// server (redis_cache.h); a lookup tries the disk first, and a remote hit is
// written to the disk. A key that misses on both is compiled by one replica
// of a fleet: the one that takes its compile lock in Redis, while the
// others wait for its record (ClaimCompile, WaitFor). Every record is checked
// before use (cache_record.h): its digest always, and with a signing key
// (Options::signing_key, GJ_CACHE_KEY) its HMAC-SHA256 signature, so that
// whoever can write to the directory or the Redis cannot make a process run
// code it did not sign. A refused record is counted, logged once per cause,
// removed from the disk and recompiled. Failures of the cache itself (I/O, a
// dead Redis) are counted misses: the cache never fails a compile. Thread-safe.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/compile_cache/cache_record.h"
#include "runtime/compile_cache/disk_cache.h"
#include "runtime/compile_cache/redis_cache.h"

namespace guardjit {

struct CompileCacheOptions {
  // The cache directory; empty: none.
  std::string dir;
  // The directory's size limit (least recently used records removed
  // beyond); 0: unbounded.
  int64_t max_bytes = DiskCache::kDefaultMaxBytes;
  // With a key, records are signed when stored and must carry a valid
  // signature to be loaded.
  std::string signing_key;
  // The remote tier's URL (redis_cache.h: redis://host:port/db?...); empty:
  // none.
  std::string remote;

  // A host's settings: a null `dir`, `signing_key` or `remote` takes
  // GJ_CACHE_DIR, GJ_CACHE_KEY or GJ_REMOTE_CACHE from the environment, an
  // empty one means none.
  static CompileCacheOptions Of(const char* dir, const char* signing_key,
                                int64_t max_bytes, const char* remote);
  bool enabled() const { return !dir.empty() || !remote.empty(); }
};

struct CompileCacheStats {
  int64_t disk_hits = 0;
  int64_t disk_misses = 0;
  int64_t disk_stores = 0;
  int64_t remote_hits = 0;
  int64_t remote_misses = 0;
  int64_t remote_stores = 0;
  // Compiles this process left to another that held the key's compile
  // lock, and of those the waits that ended without its record (then
  // compiled here).
  int64_t lock_waits = 0;
  int64_t lock_timeouts = 0;
  int64_t rejected = 0;  // records refused (cache_record.h's problems)
  int64_t errors = 0;    // I/O and Redis failures, each a miss or lost store
  int64_t evictions = 0;
};

enum class CacheTier { kDisk, kRemote };
const char* CacheTierName(CacheTier tier);  // "disk", "remote"

class CompileCache {
 public:
  // The cache `options` describe, or null when it names none. A directory that
  // cannot be created is an error (a misspelt path should not silently mean "no
  // cache").
  static absl::StatusOr<std::shared_ptr<CompileCache>> Create(
      const CompileCacheOptions& options);

  struct Hit {
    CacheRecord record;
    CacheTier tier = CacheTier::kDisk;
  };
  // The checked record stored under `key`, or nullopt (a miss, counted).
  std::optional<Hit> Lookup(const std::string& key);
  // Stores `record` under record.key (signed with the cache's key), on the
  // disk and the remote tier.
  void Store(const CacheRecord& record);

  // The fleet's compile lock of a key that missed everywhere, with a remote
  // tier: true when this process should compile it (it took the lock, or
  // the lock cannot be had: no remote, Redis down), false when another
  // replica holds it (then WaitFor). `token` identifies the holder for
  // ReleaseCompile.
  bool ClaimCompile(const std::string& key, std::string* token);
  void ReleaseCompile(const std::string& key, const std::string& token);
  // After a claim that took the lock: the record, if the replica that held
  // the lock before stored it and released the lock between this process's
  // Lookup and its claim (then it is loaded, not compiled twice). Asks
  // Redis only; a miss here is not counted again.
  std::optional<Hit> StoredBeforeClaim(const std::string& key);
  // The record another replica is compiling, polled for until it appears
  // or the wait bound passes (nullopt: compile here).
  std::optional<Hit> WaitFor(const std::string& key);
  bool has_remote() const { return remote_ != nullptr; }

  // Counts (and logs, the first time) a failure of the cache outside it: a
  // record that passed its checks but did not load.
  void CountError(const absl::Status& error);

  CompileCacheStats stats() const;
  // "disk cache /var/cache/gj (max 1073741824 bytes, signed)".
  std::string Describe() const;
  bool signs() const { return !options_.signing_key.empty(); }
  const CompileCacheOptions& options() const { return options_; }

  // The file name hash of a key: lower-case hex SHA-256.
  static std::string KeyHash(absl::string_view key);

 private:
  CompileCache(CompileCacheOptions options, std::unique_ptr<DiskCache> disk,
               std::unique_ptr<RedisCache> remote)
      : options_(std::move(options)),
        disk_(std::move(disk)),
        remote_(std::move(remote)) {}
  std::optional<Hit> LookupDisk(const std::string& key,
                                const std::string& hash);
  std::optional<Hit> LookupRemote(const std::string& key,
                                  const std::string& hash);
  // A record Redis returned: checked, counted, written to the disk.
  std::optional<Hit> AcceptRemote(const std::string& key,
                                  const std::string& hash,
                                  const std::string& bytes);
  void Reject(absl::string_view where, const absl::Status& problem);

  const CompileCacheOptions options_;
  const std::unique_ptr<DiskCache> disk_;     // null: no directory
  const std::unique_ptr<RedisCache> remote_;  // null: no remote tier
  std::atomic<int64_t> disk_hits_{0}, disk_misses_{0}, disk_stores_{0},
      remote_hits_{0}, remote_misses_{0}, remote_stores_{0}, lock_waits_{0},
      lock_timeouts_{0}, rejected_{0}, errors_{0};
  std::atomic<bool> warned_error_{false};
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_COMPILE_CACHE_H_
