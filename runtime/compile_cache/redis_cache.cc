#include "runtime/compile_cache/redis_cache.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace guardjit {
namespace {

constexpr absl::string_view kRecordPrefix = "guardjit:r1:";
constexpr absl::string_view kLockPrefix = "guardjit:r1:lock:";
constexpr std::chrono::milliseconds kFirstBackoff{1000};
constexpr std::chrono::milliseconds kMaxBackoff{30000};

// Deletes the lock only if it still holds the caller's token.
constexpr absl::string_view kUnlockScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('del', KEYS[1]) else return 0 end";

absl::Status BadUrl(absl::string_view url, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("remote cache '", url, "': ", why,
                   " (expected redis://[:password@]host[:port][/db]"
                   "[?timeout_ms=N&ttl_s=N&max_value_bytes=N&lock_ms=N&"
                   "wait_ms=N])"));
}

struct timeval Timeval(int ms) {
  struct timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

}  // namespace

absl::StatusOr<RedisOptions> RedisOptions::FromUrl(absl::string_view url) {
  RedisOptions o;
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return BadUrl(url, "not a redis:// URL");
  }
  absl::string_view query;
  if (size_t q = rest.find('?'); q != absl::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    absl::string_view auth = rest.substr(0, at);
    absl::ConsumePrefix(&auth, ":");
    o.password = std::string(auth);
    rest = rest.substr(at + 1);
  }
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    absl::string_view db = rest.substr(slash + 1);
    if (!db.empty() && (!absl::SimpleAtoi(db, &o.db) || o.db < 0)) {
      return BadUrl(url, absl::StrCat("database '", db, "' is not a number"));
    }
    rest = rest.substr(0, slash);
  }
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    absl::string_view port = rest.substr(colon + 1);
    if (!absl::SimpleAtoi(port, &o.port) || o.port <= 0 || o.port > 65535) {
      return BadUrl(url, absl::StrCat("port '", port, "' is not a port"));
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) return BadUrl(url, "no host");
  o.host = std::string(rest);
  for (absl::string_view item : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (!absl::SimpleAtoi(kv.second, &value) || value < 0) {
      return BadUrl(url, absl::StrCat("'", item, "' needs a count"));
    }
    if (kv.first == "timeout_ms" && value > 0 && value <= 600000) {
      o.timeout_ms = static_cast<int>(value);
    } else if (kv.first == "ttl_s") {
      o.ttl_s = value;
    } else if (kv.first == "max_value_bytes") {
      o.max_value_bytes = value;
    } else if (kv.first == "lock_ms" && value > 0 && value <= 3600000) {
      o.lock_ms = static_cast<int>(value);
    } else if (kv.first == "wait_ms" && value <= 3600000) {
      o.wait_ms = static_cast<int>(value);
    } else {
      return BadUrl(
          url, absl::StrCat("unknown or out-of-range setting '", item, "'"));
    }
  }
  return o;
}

std::string RedisOptions::Url() const {
  return absl::StrCat("redis://", host, ":", port, "/", db);
}

struct RedisCache::Reply {
  explicit Reply(redisReply* r) : reply(r) {}
  ~Reply() { freeReplyObject(reply); }
  redisReply* reply;
};

RedisCache::RedisCache(RedisOptions options) : options_(std::move(options)) {}

RedisCache::~RedisCache() {
  if (context_ != nullptr) redisFree(context_);
}

absl::Status RedisCache::FailLocked(absl::Status error) {
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
  backoff_ = backoff_.count() == 0 ? kFirstBackoff
                                   : std::min(backoff_ * 2, kMaxBackoff);
  retry_at_ = std::chrono::steady_clock::now() + backoff_;
  return absl::UnavailableError(absl::StrCat("Redis at ", options_.Url(), ": ",
                                             error.message(), " (next try in ",
                                             backoff_.count(), " ms)"));
}

absl::Status RedisCache::ConnectLocked() {
  if (context_ != nullptr) return absl::OkStatus();
  if (backoff_.count() > 0 && std::chrono::steady_clock::now() < retry_at_) {
    return absl::UnavailableError(
        absl::StrCat("Redis at ", options_.Url(),
                     " failed recently; not retried before the backoff ends"));
  }
  context_ = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                     Timeval(options_.timeout_ms));
  if (context_ == nullptr) return FailLocked(absl::InternalError("no memory"));
  if (context_->err != 0) {
    return FailLocked(absl::UnavailableError(
        absl::StrCat("cannot connect: ", context_->errstr)));
  }
  if (redisSetTimeout(context_, Timeval(options_.timeout_ms)) != REDIS_OK) {
    return FailLocked(absl::UnavailableError("cannot set the timeout"));
  }
  if (!options_.password.empty()) {
    if (absl::StatusOr<std::unique_ptr<Reply>> r =
            RunLocked({"AUTH", options_.password});
        !r.ok()) {
      return FailLocked(r.status());
    }
  }
  if (options_.db != 0) {
    if (absl::StatusOr<std::unique_ptr<Reply>> r =
            RunLocked({"SELECT", absl::StrCat(options_.db)});
        !r.ok()) {
      return FailLocked(r.status());
    }
  }
  backoff_ = std::chrono::milliseconds(0);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RedisCache::Reply>> RedisCache::RunLocked(
    std::initializer_list<absl::string_view> argv) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (absl::string_view a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(
      context_, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
  if (r == nullptr) {
    // A timeout, a reset connection: the context is unusable now.
    return absl::UnavailableError(context_->err != 0 ? context_->errstr
                                                     : "no reply");
  }
  auto reply = std::make_unique<Reply>(r);
  if (r->type == REDIS_REPLY_ERROR) {
    // The server answered: the connection is fine, the command was not.
    return absl::InternalError(absl::StrCat("Redis at ", options_.Url(), ": ",
                                            std::string(r->str, r->len)));
  }
  return reply;
}

absl::StatusOr<std::unique_ptr<RedisCache::Reply>> RedisCache::Command(
    std::initializer_list<absl::string_view> argv) {
  std::lock_guard<std::mutex> lock(mu_);
  if (absl::Status s = ConnectLocked(); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<Reply>> reply = RunLocked(argv);
  if (absl::IsUnavailable(reply.status())) return FailLocked(reply.status());
  return reply;
}

absl::StatusOr<std::optional<std::string>> RedisCache::Get(
    absl::string_view key_hash) {
  const std::string key = absl::StrCat(kRecordPrefix, key_hash);
  absl::StatusOr<std::unique_ptr<Reply>> reply = Command({"GET", key});
  if (!reply.ok()) return reply.status();
  const redisReply* r = (*reply)->reply;
  if (r->type == REDIS_REPLY_NIL) return std::optional<std::string>();
  if (r->type != REDIS_REPLY_STRING) {
    return absl::InternalError(
        absl::StrCat("Redis GET ", key, ": not a string reply"));
  }
  return std::optional<std::string>(std::string(r->str, r->len));
}

absl::Status RedisCache::Set(absl::string_view key_hash,
                             absl::string_view bytes) {
  if (options_.max_value_bytes > 0 &&
      static_cast<int64_t>(bytes.size()) > options_.max_value_bytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("a ", bytes.size(),
                     "-byte record is over the remote "
                     "cache's max_value_bytes ",
                     options_.max_value_bytes));
  }
  const std::string key = absl::StrCat(kRecordPrefix, key_hash);
  absl::StatusOr<std::unique_ptr<Reply>> reply =
      options_.ttl_s > 0
          ? Command({"SET", key, bytes, "EX", absl::StrCat(options_.ttl_s)})
          : Command({"SET", key, bytes});
  return reply.status();
}

absl::StatusOr<bool> RedisCache::TryLock(absl::string_view key_hash,
                                         absl::string_view token) {
  const std::string key = absl::StrCat(kLockPrefix, key_hash);
  absl::StatusOr<std::unique_ptr<Reply>> reply =
      Command({"SET", key, token, "NX", "PX", absl::StrCat(options_.lock_ms)});
  if (!reply.ok()) return reply.status();
  return (*reply)->reply->type == REDIS_REPLY_STATUS;  // "OK"; nil if taken
}

absl::Status RedisCache::Unlock(absl::string_view key_hash,
                                absl::string_view token) {
  const std::string key = absl::StrCat(kLockPrefix, key_hash);
  return Command({"EVAL", kUnlockScript, "1", key, token}).status();
}

}  // namespace guardjit
