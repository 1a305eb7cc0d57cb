#include "runtime/compile_cache/compile_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "gtest/gtest.h"
#include "runtime/compile_cache/cache_inspection.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;

class CompileCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() /
         absl::StrCat(
             "gj_compile_cache_", ::getpid(), "_",
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    fs::remove_all(dir_);
    SetLogSink([this](LogTopic, absl::string_view m) {
      logs_ += std::string(m) + "\n";
    });
  }
  void TearDown() override {
    SetLogSink(nullptr);
    fs::remove_all(dir_);
  }
  std::shared_ptr<CompileCache> Open(const std::string& key = "") {
    CompileCacheOptions options;
    options.dir = dir_;
    options.signing_key = key;
    auto cache = CompileCache::Create(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *cache : nullptr;
  }
  static CacheRecord Record(const std::string& key, const std::string& data) {
    CacheRecord r;
    r.key = key;
    r.info.kind = "llvm-object";
    r.info.pid = 7;
    r.info.compile_ms = 3;
    r.payload = data;
    return r;
  }
  std::string dir_;
  std::string logs_;
};

TEST_F(CompileCacheTest, NoDirectoryMeansNoCache) {
  auto cache = CompileCache::Create(CompileCacheOptions());
  ASSERT_TRUE(cache.ok());
  EXPECT_EQ(*cache, nullptr);
}

TEST_F(CompileCacheTest, StoresAndLoadsAndCounts) {
  std::shared_ptr<CompileCache> cache = Open();
  EXPECT_FALSE(cache->Lookup("k").has_value());
  cache->Store(Record("k", "payload"));
  auto hit = cache->Lookup("k");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->tier, CacheTier::kDisk);
  EXPECT_EQ(hit->record.payload, "payload");
  EXPECT_EQ(hit->record.info.pid, 7);
  // Another cache over the same directory (another process) sees it.
  EXPECT_TRUE(Open()->Lookup("k").has_value());
  const CompileCacheStats s = cache->stats();
  EXPECT_EQ(s.disk_hits, 1);
  EXPECT_EQ(s.disk_misses, 1);
  EXPECT_EQ(s.disk_stores, 1);
  EXPECT_EQ(s.rejected, 0);
  EXPECT_EQ(s.errors, 0);
  EXPECT_NE(cache->Describe().find(dir_), std::string::npos);
}

// A refused record is a counted miss, logged, and removed so that the
// recompile's store replaces it.
TEST_F(CompileCacheTest, RefusedRecordsAreCountedLoggedAndRemoved) {
  std::shared_ptr<CompileCache> cache = Open();
  cache->Store(Record("k", std::string(100, 'p')));
  const std::string path =
      absl::StrCat(dir_, "/", CompileCache::KeyHash("k").substr(0, 2), "/",
                   CompileCache::KeyHash("k"), ".gjc");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(60);
    f.put('!');
  }
  EXPECT_FALSE(cache->Lookup("k").has_value());
  EXPECT_EQ(cache->stats().rejected, 1);
  EXPECT_NE(logs_.find("refused record"), std::string::npos) << logs_;
  EXPECT_NE(logs_.find("corrupt"), std::string::npos) << logs_;
  EXPECT_FALSE(fs::exists(path));
  cache->Store(Record("k", "fresh"));
  EXPECT_EQ(cache->Lookup("k")->record.payload, "fresh");
}

TEST_F(CompileCacheTest, ASignedCacheRefusesRecordsItDidNotSign) {
  Open()->Store(Record("plain", "x"));
  Open("other")->Store(Record("theirs", "x"));
  std::shared_ptr<CompileCache> signed_cache = Open("mine");
  signed_cache->Store(Record("mine", "x"));
  EXPECT_TRUE(signed_cache->Lookup("mine").has_value());
  EXPECT_FALSE(signed_cache->Lookup("plain").has_value());
  EXPECT_FALSE(signed_cache->Lookup("theirs").has_value());
  EXPECT_EQ(signed_cache->stats().rejected, 2);
  EXPECT_NE(logs_.find("unsigned"), std::string::npos) << logs_;
  EXPECT_NE(logs_.find("bad signature"), std::string::npos) << logs_;
  EXPECT_NE(signed_cache->Describe().find("signed"), std::string::npos);
}

// I/O failures are counted misses or lost stores, logged once.
TEST_F(CompileCacheTest, IoErrorsAreCountedNotFatal) {
  std::shared_ptr<CompileCache> cache = Open();
  const std::string hash = CompileCache::KeyHash("k");
  // A file where the record's subdirectory would be: writes fail.
  { std::ofstream(absl::StrCat(dir_, "/", hash.substr(0, 2))) << "x"; }
  cache->Store(Record("k", "x"));
  cache->Store(Record("k", "y"));
  EXPECT_FALSE(cache->Lookup("k").has_value());
  const CompileCacheStats s = cache->stats();
  EXPECT_EQ(s.disk_stores, 0);
  EXPECT_GE(s.errors, 2);
  size_t logged = 0;
  for (size_t at = logs_.find("compile cache:"); at != std::string::npos;
       at = logs_.find("compile cache:", at + 1)) {
    ++logged;
  }
  EXPECT_EQ(logged, 1u) << logs_;
}

TEST_F(CompileCacheTest, OptionsTakeTheEnvironmentWhenUnset) {
  ::setenv("GJ_CACHE_DIR", "/from/env", 1);
  ::setenv("GJ_CACHE_KEY", "envkey", 1);
  ::setenv("GJ_REMOTE_CACHE", "redis://h:1/2", 1);
  CompileCacheOptions o = CompileCacheOptions::Of(nullptr, nullptr, 5, nullptr);
  EXPECT_EQ(o.dir, "/from/env");
  EXPECT_EQ(o.signing_key, "envkey");
  EXPECT_EQ(o.remote, "redis://h:1/2");
  EXPECT_EQ(o.max_bytes, 5);
  o = CompileCacheOptions::Of("", "", 0, "");
  EXPECT_FALSE(o.enabled()) << "\"\" turns the environment's cache off";
  EXPECT_TRUE(o.signing_key.empty());
  ::unsetenv("GJ_CACHE_DIR");
  ::unsetenv("GJ_CACHE_KEY");
  ::unsetenv("GJ_REMOTE_CACHE");
  EXPECT_FALSE(CompileCacheOptions::Of(nullptr, nullptr, 0, nullptr).enabled());
}

TEST_F(CompileCacheTest, InspectionVerifiesAndClears) {
  std::shared_ptr<CompileCache> cache = Open();
  for (int i = 0; i < 3; ++i) {
    cache->Store(Record(absl::StrCat("k", i),
                        std::string(50, static_cast<char>('a' + i))));
  }
  auto report = InspectCacheDir(dir_, "", /*verify=*/true, false);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->records, 3);
  EXPECT_EQ(report->verified, 3);
  EXPECT_EQ(report->bad, 0);
  EXPECT_EQ(report->kinds["llvm-object"].first, 3);
  EXPECT_GT(report->newest_use_ms, 0);
  // A record copied under another key's name is foreign.
  const std::string h0 = CompileCache::KeyHash("k0");
  const std::string h9 = CompileCache::KeyHash("k9");
  fs::create_directories(absl::StrCat(dir_, "/", h9.substr(0, 2)));
  fs::copy_file(absl::StrCat(dir_, "/", h0.substr(0, 2), "/", h0, ".gjc"),
                absl::StrCat(dir_, "/", h9.substr(0, 2), "/", h9, ".gjc"));
  report = InspectCacheDir(dir_, "", true, /*remove_bad=*/true);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->bad, 1);
  EXPECT_EQ(report->removed, 1);
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].find("foreign"), std::string::npos);
  EXPECT_NE(report->Text(dir_, true).find("verified 3, bad 1, removed 1"),
            std::string::npos)
      << report->Text(dir_, true);
  // Signatures under a key: these records have none.
  report = InspectCacheDir(dir_, "key", true, false);
  EXPECT_EQ(report->bad, 3);
  auto cleared = ClearCacheDir(dir_);
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(*cleared, 3);
  EXPECT_TRUE(absl::IsNotFound(
      InspectCacheDir(dir_ + "/none", "", false, false).status()));
}

}  // namespace
}  // namespace guardjit
