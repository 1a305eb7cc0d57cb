#include "runtime/compile_cache/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/compile_cache/cache_record.h"
#include "runtime/compile_cache/compile_cache.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() /
         absl::StrCat(
             "gj_disk_cache_", ::getpid(), "_",
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

std::string Hash(int i) { return CompileCache::KeyHash(absl::StrCat("k", i)); }

TEST_F(DiskCacheTest, WritesReadsAndRemoves) {
  auto cache = DiskCache::Open(dir_ + "/nested/dir", 0);
  ASSERT_TRUE(cache.ok()) << cache.status();
  EXPECT_TRUE(absl::IsNotFound((*cache)->Read(Hash(1)).status()));
  ASSERT_TRUE((*cache)->Write(Hash(1), "one").ok());
  auto read = (*cache)->Read(Hash(1));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "one");
  // Two-digit subdirectories, the hash as the name.
  EXPECT_EQ((*cache)->PathOf(Hash(1)),
            absl::StrCat(dir_, "/nested/dir/", Hash(1).substr(0, 2), "/",
                         Hash(1), ".gjc"));
  ASSERT_TRUE((*cache)->Write(Hash(1), "replaced").ok());
  EXPECT_EQ(*(*cache)->Read(Hash(1)), "replaced");
  EXPECT_EQ((*cache)->List().size(), 1u);
  (*cache)->Remove(Hash(1));
  EXPECT_TRUE(absl::IsNotFound((*cache)->Read(Hash(1)).status()));
  EXPECT_EQ((*cache)->Clear(), 0);
}

TEST_F(DiskCacheTest, OpenRefusesWhatCannotBeADirectory) {
  fs::create_directories(dir_);
  { std::ofstream(dir_ + "/file") << "x"; }
  auto cache = DiskCache::Open(dir_ + "/file/sub", 0);
  EXPECT_EQ(cache.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(cache.status().message().find("file/sub"), std::string::npos);
  EXPECT_EQ(DiskCache::Open("", 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DiskCache::Open(dir_, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Past the limit the least recently used records go first; a read counts as
// a use.
TEST_F(DiskCacheTest, EvictsLeastRecentlyUsedPastTheLimit) {
  auto cache = DiskCache::Open(dir_, 10000);
  ASSERT_TRUE(cache.ok()) << cache.status();
  const std::string record(1000, 'r');
  for (int i = 0; i < 9; ++i) {
    ASSERT_TRUE((*cache)->Write(Hash(i), record).ok());
    // Distinct modification times, whatever the file system's resolution.
    struct timespec times[2] = {{0, UTIME_OMIT}, {1000 + i, 0}};
    ASSERT_EQ(
        ::utimensat(AT_FDCWD, (*cache)->PathOf(Hash(i)).c_str(), times, 0), 0);
  }
  ASSERT_TRUE((*cache)->Read(Hash(0)).ok());  // 0 is now the newest
  ASSERT_TRUE((*cache)->Write(Hash(9), record).ok());
  ASSERT_TRUE((*cache)->Write(Hash(10), record).ok());  // 11000 > 10000
  EXPECT_GT((*cache)->evictions(), 0);
  int64_t total = 0;
  for (const auto& f : (*cache)->List()) total += f.bytes;
  EXPECT_LE(total, 9000);
  EXPECT_TRUE((*cache)->Read(Hash(0)).ok()) << "recently read: kept";
  EXPECT_TRUE((*cache)->Read(Hash(10)).ok()) << "just written: kept";
  EXPECT_TRUE(absl::IsNotFound((*cache)->Read(Hash(1)).status()))
      << "least recently used: evicted";
}

// Threads writing the same keys over and over while others read: a read
// sees a whole record of one writer or nothing, never a torn one.
TEST_F(DiskCacheTest, ConcurrentWritersNeverTearARecord) {
  auto cache = DiskCache::Open(dir_, 0);
  ASSERT_TRUE(cache.ok()) << cache.status();
  constexpr int kKeys = 4;
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, hits{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      for (int round = 0; round < 50; ++round) {
        for (int k = 0; k < kKeys; ++k) {
          CacheRecord r;
          r.key = absl::StrCat("key ", k);
          r.payload = std::string(20000 + 1000 * w, static_cast<char>('a' + w));
          ASSERT_TRUE((*cache)
                          ->Write(CompileCache::KeyHash(r.key),
                                  EncodeCacheRecord(r, ""))
                          .ok());
        }
      }
    });
  }
  for (int rd = 0; rd < 2; ++rd) {
    threads.emplace_back([&] {
      while (!stop.load()) {
        for (int k = 0; k < kKeys; ++k) {
          const std::string key = absl::StrCat("key ", k);
          auto bytes = (*cache)->Read(CompileCache::KeyHash(key));
          if (!bytes.ok()) continue;
          ++hits;
          if (!DecodeCacheRecord(*bytes, key, "").ok()) ++torn;
        }
      }
    });
  }
  for (int w = 0; w < 4; ++w) threads[w].join();
  stop = true;
  for (size_t t = 4; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(hits.load(), 0);
  EXPECT_EQ((*cache)->List().size(), static_cast<size_t>(kKeys));
}

// The same across processes sharing the directory.
TEST_F(DiskCacheTest, ConcurrentProcessesNeverTearARecord) {
  ASSERT_TRUE(DiskCache::Open(dir_, 0).ok());
  std::vector<pid_t> children;
  for (int w = 0; w < 3; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto cache = DiskCache::Open(dir_, 0);
      int bad = !cache.ok();
      for (int round = 0; round < 40 && !bad; ++round) {
        for (int k = 0; k < 3; ++k) {
          CacheRecord r;
          r.key = absl::StrCat("key ", k);
          r.payload = std::string(30000 + 7 * w, static_cast<char>('a' + w));
          bad |= !(*cache)
                      ->Write(CompileCache::KeyHash(r.key),
                              EncodeCacheRecord(r, "s"))
                      .ok();
          auto bytes = (*cache)->Read(
              CompileCache::KeyHash(absl::StrCat("key ", (k + 1) % 3)));
          if (bytes.ok()) {
            bad |= !DecodeCacheRecord(*bytes, absl::StrCat("key ", (k + 1) % 3),
                                      "s")
                        .ok();
          }
        }
      }
      ::_exit(bad);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "a writer process saw a torn record or failed to write";
  }
  auto cache = DiskCache::Open(dir_, 0);
  ASSERT_TRUE(cache.ok());
  for (const auto& f : (*cache)->List()) {
    EXPECT_EQ(f.path.find(".tmp."), std::string::npos) << f.path;
  }
  EXPECT_EQ((*cache)->List().size(), 3u);
}

}  // namespace
}  // namespace guardjit
