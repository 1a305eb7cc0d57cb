#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_REDIS_CACHE_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_REDIS_CACHE_H_

// The compile cache's remote tier: records (cache_record.h) in a Redis
// server shared by a fleet, through hiredis (Debian's libhiredis-dev).
//
// Keys: "guardjit:r1:<key hash>" holds a record; "guardjit:r1:lock:<key
// hash>" is the compile lock of a key (SET NX PX: the replica that takes
// it compiles, the others wait for the record; the lock expires by itself,
// so a replica that died holding it stops nobody for longer than its TTL).
//
// A slow or dead Redis costs a call at most the timeouts: connecting and
// every command are bounded (URL timeout_ms, default 100 ms), and after a
// failure the server is not tried again for a backoff (1 s, doubling to 30 s)
// during which every operation fails at once. Errors are returned; the
// compile cache counts them and compiles locally. Thread-safe (one
// connection, one command at a time).

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct redisContext;

namespace guardjit {

struct RedisOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string password;
  int timeout_ms = 100;  // connect and each command
  int64_t ttl_s = 0;     // records expire after this; 0: never
  int64_t max_value_bytes = int64_t{64} << 20;  // larger records not stored
  int lock_ms = 10000;                          // a compile lock's lifetime
  int wait_ms = 10000;  // how long a replica waits for another's

  // redis://[:password@]host[:port][/db][?timeout_ms=N&ttl_s=N&
  // max_value_bytes=N&lock_ms=N&wait_ms=N]. INVALID_ARGUMENT naming the part
  // that is wrong.
  static absl::StatusOr<RedisOptions> FromUrl(absl::string_view url);
  // "redis://127.0.0.1:6379/0" (no password).
  std::string Url() const;
};

class RedisCache {
 public:
  explicit RedisCache(RedisOptions options);
  ~RedisCache();
  RedisCache(const RedisCache&) = delete;
  RedisCache& operator=(const RedisCache&) = delete;

  // The record stored under `key_hash`, or nullopt.
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key_hash);
  // Stores `bytes` (with the TTL); FAILED_PRECONDITION past max_value_bytes.
  absl::Status Set(absl::string_view key_hash, absl::string_view bytes);
  // Takes the compile lock of `key_hash` for `token` (SET NX PX lock_ms):
  // whether it was free.
  absl::StatusOr<bool> TryLock(absl::string_view key_hash,
                               absl::string_view token);
  // Releases the lock if `token` still holds it (a compare-and-delete
  // script: a lock that expired and was taken by another stays theirs).
  absl::Status Unlock(absl::string_view key_hash, absl::string_view token);

  const RedisOptions& options() const { return options_; }

 private:
  // The reply of one command (argv), connecting first if needed; the
  // connection is dropped on any error.
  struct Reply;
  absl::StatusOr<std::unique_ptr<Reply>> Command(
      std::initializer_list<absl::string_view> argv);
  // One command on the connected context: UNAVAILABLE when the connection
  // failed (the caller drops it), INTERNAL when Redis answered an error.
  absl::StatusOr<std::unique_ptr<Reply>> RunLocked(
      std::initializer_list<absl::string_view> argv);
  absl::Status ConnectLocked();
  absl::Status FailLocked(absl::Status error);

  const RedisOptions options_;
  std::mutex mu_;
  redisContext* context_ = nullptr;
  // No attempt before this after a failure; the backoff doubles per
  // consecutive failure.
  std::chrono::steady_clock::time_point retry_at_;
  std::chrono::milliseconds backoff_{0};
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_REDIS_CACHE_H_
