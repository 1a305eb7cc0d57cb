#include "runtime/compile_cache/compile_cache.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "runtime/compile_cache/sha256.h"

namespace guardjit {
namespace {

std::string EnvOr(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// "<host>:<pid>:<n>": who holds a compile lock.
std::string NewToken() {
  static std::atomic<uint64_t> counter{0};
  char host[256] = {};
  (void)::gethostname(host, sizeof(host) - 1);
  return absl::StrCat(host, ":", ::getpid(), ":", counter.fetch_add(1));
}

}  // namespace

CompileCacheOptions CompileCacheOptions::Of(const char* dir,
                                            const char* signing_key,
                                            int64_t max_bytes,
                                            const char* remote) {
  CompileCacheOptions options;
  options.dir = dir != nullptr ? std::string(dir) : EnvOr("GJ_CACHE_DIR");
  options.signing_key =
      signing_key != nullptr ? std::string(signing_key) : EnvOr("GJ_CACHE_KEY");
  options.remote =
      remote != nullptr ? std::string(remote) : EnvOr("GJ_REMOTE_CACHE");
  options.max_bytes = max_bytes;
  return options;
}

const char* CacheTierName(CacheTier tier) {
  switch (tier) {
    case CacheTier::kDisk:
      return "disk";
    case CacheTier::kRemote:
      return "remote";
  }
  return "disk";
}

absl::StatusOr<std::shared_ptr<CompileCache>> CompileCache::Create(
    const CompileCacheOptions& options) {
  if (!options.enabled()) return std::shared_ptr<CompileCache>();
  std::unique_ptr<DiskCache> disk;
  if (!options.dir.empty()) {
    absl::StatusOr<std::unique_ptr<DiskCache>> opened =
        DiskCache::Open(options.dir, options.max_bytes);
    if (!opened.ok()) {
      return absl::Status(
          opened.status().code(),
          absl::StrCat("compile cache: ", opened.status().message()));
    }
    disk = *std::move(opened);
  }
  std::unique_ptr<RedisCache> remote;
  if (!options.remote.empty()) {
    absl::StatusOr<RedisOptions> redis = RedisOptions::FromUrl(options.remote);
    if (!redis.ok()) return redis.status();
    // Not connected here: a Redis that is down must not fail the context;
    // the first lookup connects (bounded by the timeout).
    remote = std::make_unique<RedisCache>(*std::move(redis));
  }
  return std::shared_ptr<CompileCache>(
      new CompileCache(options, std::move(disk), std::move(remote)));
}

std::string CompileCache::KeyHash(absl::string_view key) {
  return DigestHex(Sha256Of(key));
}

std::optional<CompileCache::Hit> CompileCache::LookupDisk(
    const std::string& key, const std::string& hash) {
  absl::StatusOr<std::string> bytes = disk_->Read(hash);
  if (!bytes.ok()) {
    if (!absl::IsNotFound(bytes.status())) CountError(bytes.status());
    disk_misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  absl::StatusOr<CacheRecord> record =
      DecodeCacheRecord(*bytes, key, options_.signing_key);
  if (!record.ok()) {
    // Removed, so the recompile's store replaces it (a foreign record is a
    // hash collision's: replaced too, the newer key wins).
    disk_->Remove(hash);
    Reject(disk_->PathOf(hash), record.status());
    disk_misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  disk_hits_.fetch_add(1, std::memory_order_relaxed);
  return Hit{*std::move(record), CacheTier::kDisk};
}

std::optional<CompileCache::Hit> CompileCache::AcceptRemote(
    const std::string& key, const std::string& hash, const std::string& bytes) {
  absl::StatusOr<CacheRecord> record =
      DecodeCacheRecord(bytes, key, options_.signing_key);
  if (!record.ok()) {
    // Left in Redis (another replica with the right key may store over
    // it); this process compiles and stores its own.
    Reject(absl::StrCat(remote_->options().Url(), " ", hash), record.status());
    return std::nullopt;
  }
  remote_hits_.fetch_add(1, std::memory_order_relaxed);
  if (disk_ != nullptr) {
    // The next process on this machine finds it on the disk.
    if (absl::Status s = disk_->Write(hash, bytes); s.ok()) {
      disk_stores_.fetch_add(1, std::memory_order_relaxed);
    } else {
      CountError(s);
    }
  }
  return Hit{*std::move(record), CacheTier::kRemote};
}

std::optional<CompileCache::Hit> CompileCache::LookupRemote(
    const std::string& key, const std::string& hash) {
  absl::StatusOr<std::optional<std::string>> bytes = remote_->Get(hash);
  if (!bytes.ok()) CountError(bytes.status());
  std::optional<Hit> hit;
  if (bytes.ok() && bytes->has_value()) hit = AcceptRemote(key, hash, **bytes);
  if (!hit.has_value()) remote_misses_.fetch_add(1, std::memory_order_relaxed);
  return hit;
}

std::optional<CompileCache::Hit> CompileCache::Lookup(const std::string& key) {
  const std::string hash = KeyHash(key);
  std::optional<Hit> hit;
  if (disk_ != nullptr) hit = LookupDisk(key, hash);
  if (!hit.has_value() && remote_ != nullptr) hit = LookupRemote(key, hash);
  if (hit.has_value() && LogEnabled(LogTopic::kCache)) {
    Log(LogTopic::kCache,
        absl::StrCat(CacheTierName(hit->tier), " hit ", hash.substr(0, 16),
                     " (", hit->record.info.kind, ", ",
                     hit->record.payload.size(), " bytes, compiled in ",
                     hit->record.info.compile_ms, " ms by pid ",
                     hit->record.info.pid, ")"));
  }
  return hit;
}

void CompileCache::Store(const CacheRecord& record) {
  const std::string hash = KeyHash(record.key);
  const std::string bytes = EncodeCacheRecord(record, options_.signing_key);
  if (disk_ != nullptr) {
    if (absl::Status s = disk_->Write(hash, bytes); s.ok()) {
      disk_stores_.fetch_add(1, std::memory_order_relaxed);
    } else {
      CountError(s);
    }
  }
  if (remote_ != nullptr) {
    if (absl::Status s = remote_->Set(hash, bytes); s.ok()) {
      remote_stores_.fetch_add(1, std::memory_order_relaxed);
    } else {
      CountError(s);
    }
  }
  if (LogEnabled(LogTopic::kCache)) {
    Log(LogTopic::kCache,
        absl::StrCat("store ", hash.substr(0, 16), " (", record.info.kind, ", ",
                     record.payload.size(), " bytes)"));
  }
}

bool CompileCache::ClaimCompile(const std::string& key, std::string* token) {
  token->clear();
  if (remote_ == nullptr) return true;
  *token = NewToken();
  absl::StatusOr<bool> taken = remote_->TryLock(KeyHash(key), *token);
  if (!taken.ok()) {
    CountError(taken.status());
    token->clear();
    return true;  // no fleet to coordinate with: compile here
  }
  if (!*taken) token->clear();
  return *taken;
}

std::optional<CompileCache::Hit> CompileCache::StoredBeforeClaim(
    const std::string& key) {
  if (remote_ == nullptr) return std::nullopt;
  const std::string hash = KeyHash(key);
  absl::StatusOr<std::optional<std::string>> bytes = remote_->Get(hash);
  if (!bytes.ok()) {
    CountError(bytes.status());
    return std::nullopt;
  }
  if (!bytes->has_value()) return std::nullopt;
  return AcceptRemote(key, hash, **bytes);
}

void CompileCache::ReleaseCompile(const std::string& key,
                                  const std::string& token) {
  if (remote_ == nullptr || token.empty()) return;
  if (absl::Status s = remote_->Unlock(KeyHash(key), token); !s.ok()) {
    CountError(s);  // the lock expires by itself
  }
}

std::optional<CompileCache::Hit> CompileCache::WaitFor(const std::string& key) {
  if (remote_ == nullptr) return std::nullopt;
  lock_waits_.fetch_add(1, std::memory_order_relaxed);
  const std::string hash = KeyHash(key);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(remote_->options().wait_ms);
  std::chrono::milliseconds pause(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
    absl::StatusOr<std::optional<std::string>> bytes = remote_->Get(hash);
    if (!bytes.ok()) {
      CountError(bytes.status());
      break;  // Redis is gone: compile here
    }
    if (!bytes->has_value()) continue;
    return AcceptRemote(key, hash, **bytes);  // nullopt if refused: compile
  }
  lock_timeouts_.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

void CompileCache::Reject(absl::string_view where,
                          const absl::Status& problem) {
  rejected_.fetch_add(1, std::memory_order_relaxed);
  Log(LogTopic::kWarnings,
      absl::StrCat("compile cache: refused record ", where, " (",
                   problem.message(), "); recompiling"));
}

void CompileCache::CountError(const absl::Status& error) {
  errors_.fetch_add(1, std::memory_order_relaxed);
  // Once per cache: a full disk or a dead Redis would otherwise log every
  // kernel.
  if (!warned_error_.exchange(true)) {
    Log(LogTopic::kWarnings,
        absl::StrCat("compile cache: ", error.message(),
                     " (compiling without the cache where it fails; further "
                     "errors are counted, not logged)"));
  }
}

CompileCacheStats CompileCache::stats() const {
  CompileCacheStats s;
  s.disk_hits = disk_hits_.load(std::memory_order_relaxed);
  s.disk_misses = disk_misses_.load(std::memory_order_relaxed);
  s.disk_stores = disk_stores_.load(std::memory_order_relaxed);
  s.remote_hits = remote_hits_.load(std::memory_order_relaxed);
  s.remote_misses = remote_misses_.load(std::memory_order_relaxed);
  s.remote_stores = remote_stores_.load(std::memory_order_relaxed);
  s.lock_waits = lock_waits_.load(std::memory_order_relaxed);
  s.lock_timeouts = lock_timeouts_.load(std::memory_order_relaxed);
  s.rejected = rejected_.load(std::memory_order_relaxed);
  s.errors = errors_.load(std::memory_order_relaxed);
  s.evictions = disk_ != nullptr ? disk_->evictions() : 0;
  return s;
}

std::string CompileCache::Describe() const {
  std::string text;
  if (disk_ != nullptr) {
    absl::StrAppend(&text, "disk cache ", disk_->dir(),
                    disk_->max_bytes() > 0
                        ? absl::StrCat(" (max ", disk_->max_bytes(), " bytes)")
                        : std::string(" (unbounded)"));
  }
  if (remote_ != nullptr) {
    absl::StrAppend(&text, text.empty() ? "" : ", ", "remote cache ",
                    remote_->options().Url());
  }
  if (signs()) absl::StrAppend(&text, ", signed");
  return text;
}

}  // namespace guardjit
