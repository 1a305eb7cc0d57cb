// The compile cache's Redis tier against a real redis-server (Debian's
// package) started on a free loopback port and stopped by its pid, and
// against a server that accepts and never answers.
#include "runtime/compile_cache/redis_cache.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "gtest/gtest.h"
#include "runtime/compile_cache/compile_cache.h"
#include "testing/redis_server.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

CacheRecord Record(const std::string& key, const std::string& payload) {
  CacheRecord r;
  r.key = key;
  r.info.kind = "llvm-object";
  r.info.pid = ::getpid();
  r.info.compile_ms = 1;
  r.payload = payload;
  return r;
}

TEST(RedisOptionsTest, ParsesUrls) {
  auto o = RedisOptions::FromUrl(
      "redis://:pw@cache.local:6380/3?timeout_ms=250&ttl_s=60&"
      "max_value_bytes=1000&lock_ms=500&wait_ms=700");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->host, "cache.local");
  EXPECT_EQ(o->port, 6380);
  EXPECT_EQ(o->db, 3);
  EXPECT_EQ(o->password, "pw");
  EXPECT_EQ(o->timeout_ms, 250);
  EXPECT_EQ(o->ttl_s, 60);
  EXPECT_EQ(o->max_value_bytes, 1000);
  EXPECT_EQ(o->lock_ms, 500);
  EXPECT_EQ(o->wait_ms, 700);
  EXPECT_EQ(o->Url(), "redis://cache.local:6380/3");
  o = RedisOptions::FromUrl("redis://10.0.0.1");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->port, 6379);
  EXPECT_EQ(o->timeout_ms, 100);
  for (const char* bad :
       {"http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h/x",
        "redis://h?timeout_ms=abc", "redis://h?frob=1",
        "redis://h?timeout_ms=0"}) {
    auto r = RedisOptions::FromUrl(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status();
  }
}

class RedisCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    base_ =
        (fs::temp_directory_path() /
         absl::StrCat(
             "gj_redis_", ::getpid(), "_",
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    fs::remove_all(base_);
    SetLogSink([this](LogTopic, absl::string_view m) {
      std::lock_guard<std::mutex> lock(logs_mu_);
      logs_ += std::string(m) + "\n";
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    fs::remove_all(base_);
  }
  std::shared_ptr<CompileCache> Cache(const std::string& dir,
                                      const std::string& url,
                                      const std::string& key = "") {
    CompileCacheOptions o;
    o.dir = dir.empty() ? "" : absl::StrCat(base_, "/", dir);
    o.remote = url;
    o.signing_key = key;
    auto cache = CompileCache::Create(o);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *cache : nullptr;
  }

  RedisServer server_;
  std::string base_;
  std::mutex logs_mu_;
  std::string logs_;
};

TEST_F(RedisCacheTest, GetSetLockAndLimits) {
  RedisCache redis(*RedisOptions::FromUrl(server_.url() +
                                          "?max_value_bytes=100&lock_ms=300"));
  auto missing = redis.Get("h1");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(redis.Set("h1", std::string("\0bin\xff", 5)).ok());
  auto got = redis.Get("h1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, std::string("\0bin\xff", 5));
  EXPECT_EQ(redis.Set("h2", std::string(101, 'x')).code(),
            absl::StatusCode::kFailedPrecondition);
  // The compile lock: one holder; released by its token only; expires.
  EXPECT_TRUE(*redis.TryLock("h1", "a"));
  EXPECT_FALSE(*redis.TryLock("h1", "b"));
  ASSERT_TRUE(redis.Unlock("h1", "b").ok());
  EXPECT_FALSE(*redis.TryLock("h1", "b")) << "b's unlock freed a's lock";
  ASSERT_TRUE(redis.Unlock("h1", "a").ok());
  EXPECT_TRUE(*redis.TryLock("h1", "b"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_TRUE(*redis.TryLock("h1", "c")) << "a dead holder's lock expires";
}

TEST_F(RedisCacheTest, RecordsExpireAfterTheirTtl) {
  RedisCache redis(*RedisOptions::FromUrl(server_.url() + "?ttl_s=1"));
  ASSERT_TRUE(redis.Set("t", "x").ok());
  EXPECT_TRUE(redis.Get("t")->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_FALSE(redis.Get("t")->has_value());
}

// Two replicas with their own disk caches share records through Redis; a
// remote hit lands on the local disk.
TEST_F(RedisCacheTest, ReplicasShareRecordsThroughRedis) {
  auto a = Cache("a", server_.url());
  auto b = Cache("b", server_.url());
  a->Store(Record("kernel", "object-bytes"));
  EXPECT_EQ(a->stats().remote_stores, 1);
  auto hit = b->Lookup("kernel");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->tier, CacheTier::kRemote);
  EXPECT_EQ(hit->record.payload, "object-bytes");
  hit = b->Lookup("kernel");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->tier, CacheTier::kDisk) << "written to b's disk";
  const CompileCacheStats s = b->stats();
  EXPECT_EQ(s.remote_hits, 1);
  EXPECT_EQ(s.disk_hits, 1);
  EXPECT_EQ(s.disk_misses, 1);
  // Remote only, no directory.
  auto c = Cache("", server_.url());
  EXPECT_TRUE(c->Lookup("kernel").has_value());
  EXPECT_NE(c->Describe().find("remote cache redis://127.0.0.1"),
            std::string::npos);
}

// Signed records in a shared Redis: another key refuses them.
TEST_F(RedisCacheTest, ASharedRedisCannotInjectCode) {
  auto attacker = Cache("", server_.url());  // no key: unsigned records
  attacker->Store(Record("kernel", "evil"));
  auto replica = Cache("r", server_.url(), "fleet-key");
  EXPECT_FALSE(replica->Lookup("kernel").has_value());
  EXPECT_EQ(replica->stats().rejected, 1);
  auto forger = Cache("", server_.url(), "other-key");
  forger->Store(Record("kernel", "evil"));
  EXPECT_FALSE(replica->Lookup("kernel").has_value());
  EXPECT_EQ(replica->stats().rejected, 2);
  EXPECT_NE(logs_.find("bad signature"), std::string::npos) << logs_;
  Cache("", server_.url(), "fleet-key")->Store(Record("kernel", "good"));
  auto hit = replica->Lookup("kernel");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record.payload, "good");
}

// Replicas missing one key at once: one compiles (takes the lock), the
// others wait for its record.
TEST_F(RedisCacheTest, AFleetMissingTogetherCompilesOnce) {
  constexpr int kReplicas = 6;
  std::atomic<int> compiles{0}, loads{0};
  std::vector<std::thread> replicas;
  for (int i = 0; i < kReplicas; ++i) {
    replicas.emplace_back([&, i] {
      auto cache = Cache(absl::StrCat("r", i), server_.url());
      if (cache->Lookup("k").has_value()) {
        ++loads;
        return;
      }
      std::string token;
      if (cache->ClaimCompile("k", &token)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        cache->Store(Record("k", "compiled once"));
        cache->ReleaseCompile("k", token);
        ++compiles;
        return;
      }
      auto hit = cache->WaitFor("k");
      if (hit.has_value() && hit->record.payload == "compiled once") ++loads;
      EXPECT_EQ(cache->stats().lock_waits, 1);
    });
  }
  for (std::thread& t : replicas) t.join();
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(loads.load(), kReplicas - 1);
}

// A replica that missed before the lock holder stored its record and
// released the lock takes the free lock afterwards: the record is there to
// load (StoredBeforeClaim), not to compile a second time. A key no one
// stored is not found, and the miss is not counted twice.
TEST_F(RedisCacheTest, ALateClaimFindsTheRecordStoredBeforeIt) {
  auto holder = Cache("h", server_.url());
  auto late = Cache("l", server_.url());
  EXPECT_FALSE(late->Lookup("k").has_value());  // misses first
  std::string token;
  ASSERT_TRUE(holder->ClaimCompile("k", &token));
  holder->Store(Record("k", "compiled once"));
  holder->ReleaseCompile("k", token);
  std::string mine;
  ASSERT_TRUE(late->ClaimCompile("k", &mine));  // the lock is free again
  EXPECT_FALSE(mine.empty());
  std::optional<CompileCache::Hit> hit = late->StoredBeforeClaim("k");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->record.payload, "compiled once");
  late->ReleaseCompile("k", mine);
  const int64_t misses = late->stats().remote_misses;
  EXPECT_FALSE(late->StoredBeforeClaim("nobody").has_value());
  EXPECT_EQ(late->stats().remote_misses, misses);
}

// A replica that died holding the lock stops the others only until their
// wait bound; then they compile themselves.
TEST_F(RedisCacheTest, ADeadLockHolderDelaysOnlyUpToTheBound) {
  auto dead = Cache("", server_.url() + "?lock_ms=5000");
  std::string token;
  ASSERT_TRUE(dead->ClaimCompile("k", &token));  // and never stores
  auto waiter = Cache("w", server_.url() + "?wait_ms=300");
  std::string mine;
  EXPECT_FALSE(waiter->ClaimCompile("k", &mine));
  const auto start = Clock::now();
  EXPECT_FALSE(waiter->WaitFor("k").has_value());
  EXPECT_GE(MsSince(start), 290);
  EXPECT_LT(MsSince(start), 2000);
  EXPECT_EQ(waiter->stats().lock_timeouts, 1);
}

// Redis stopped mid-run: lookups and stores fail within the timeout, are
// counted, warned about once, and then skipped during the backoff.
TEST_F(RedisCacheTest, RedisStoppedMidRunCostsAtMostTheTimeout) {
  auto cache = Cache("d", server_.url());
  cache->Store(Record("a", "x"));
  ASSERT_EQ(cache->stats().remote_stores, 1);
  server_.Stop();
  auto start = Clock::now();
  EXPECT_FALSE(cache->Lookup("b").has_value());
  EXPECT_LT(MsSince(start), 1000);
  start = Clock::now();
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(cache->Lookup(absl::StrCat("c", i)).has_value());
    cache->Store(Record(absl::StrCat("c", i), "y"));
  }
  EXPECT_LT(MsSince(start), 500) << "the backoff skips a dead Redis";
  const CompileCacheStats s = cache->stats();
  EXPECT_GE(s.errors, 21);
  EXPECT_EQ(s.disk_stores, 21) << "the disk tier goes on";
  EXPECT_TRUE(cache->Lookup("c3").has_value()) << "from the disk";
  std::string token;
  EXPECT_TRUE(cache->ClaimCompile("z", &token))
      << "no Redis: compile locally, no waiting";
  size_t warnings = 0;
  for (size_t at = logs_.find("compile cache: Redis"); at != std::string::npos;
       at = logs_.find("compile cache: Redis", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 1u) << logs_;
}

// A Redis that accepts connections and never answers: each attempt is
// bounded by timeout_ms, and after it the backoff skips the server.
TEST_F(RedisCacheTest, ASilentRedisCostsAtMostTheTimeout) {
  SilentServer silent;
  auto cache = Cache("d", silent.url(150));
  auto start = Clock::now();
  EXPECT_FALSE(cache->Lookup("k").has_value());
  const double first = MsSince(start);
  EXPECT_GE(first, 100);
  EXPECT_LT(first, 1000);
  start = Clock::now();
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(cache->Lookup(absl::StrCat("k", i)).has_value());
  }
  EXPECT_LT(MsSince(start), 100);
  EXPECT_GE(cache->stats().errors, 1);
}

// Nothing listening at all: the connect fails at once.
TEST_F(RedisCacheTest, NothingListeningIsAMiss) {
  auto cache =
      Cache("", absl::StrCat("redis://127.0.0.1:", FreeLoopbackPort()));
  const auto start = Clock::now();
  EXPECT_FALSE(cache->Lookup("k").has_value());
  EXPECT_LT(MsSince(start), 500);
  EXPECT_EQ(cache->stats().errors, 1);
}

}  // namespace
}  // namespace guardjit
