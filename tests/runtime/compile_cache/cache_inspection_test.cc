// A compile cache directory as a whole (runtime/compile_cache/
// cache_inspection.h): counting records, verifying each (digest, name,
// signature), removing the bad ones, the report's text, and clearing.

#include "runtime/compile_cache/cache_inspection.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/compile_cache/cache_record.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/compile_cache/disk_cache.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;

class CacheInspectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        (fs::temp_directory_path() /
         absl::StrCat(
             "gj_cache_inspection_", ::getpid(), "_",
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
            .string();
    fs::remove_all(dir_);
    absl::StatusOr<std::unique_ptr<DiskCache>> disk = DiskCache::Open(dir_, 0);
    ASSERT_TRUE(disk.ok()) << disk.status();
    disk_ = std::move(*disk);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A record of `kind` under `key`, stored under `stored_as`'s hash.
  void Put(const std::string& key, const std::string& kind,
           const std::string& payload, const std::string& signing_key = "",
           const std::string& stored_as = "") {
    CacheRecord r;
    r.key = key;
    r.info.kind = kind;
    r.info.producer = "test";
    r.payload = payload;
    ASSERT_TRUE(
        disk_
            ->Write(CompileCache::KeyHash(stored_as.empty() ? key : stored_as),
                    EncodeCacheRecord(r, signing_key))
            .ok());
  }

  std::string PathOf(const std::string& key) {
    return disk_->PathOf(CompileCache::KeyHash(key));
  }

  std::string dir_;
  std::unique_ptr<DiskCache> disk_;
};

TEST_F(CacheInspectionTest, MissingDirectoryIsNotFound) {
  const std::string missing = dir_ + "/none";
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(missing, "", true, false);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_NE(r.status().message().find(missing), std::string::npos);
  EXPECT_TRUE(absl::IsNotFound(ClearCacheDir(missing).status()));
}

TEST_F(CacheInspectionTest, CountsWithoutVerifying) {
  Put("a", "llvm-object", "1234");
  Put("b", "cuda-module", "56");
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(dir_, "", false, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->records, 2);
  EXPECT_EQ(r->bytes, static_cast<int64_t>(fs::file_size(PathOf("a")) +
                                           fs::file_size(PathOf("b"))));
  EXPECT_GT(r->oldest_use_ms, 0);
  EXPECT_GE(r->newest_use_ms, r->oldest_use_ms);
  // Kinds live inside the records: only a verifying pass reads them.
  EXPECT_TRUE(r->kinds.empty());
  EXPECT_EQ(r->verified, 0);
}

TEST_F(CacheInspectionTest, VerifyCountsKinds) {
  Put("a", "llvm-object", "1234");
  Put("b", "llvm-object", "5678");
  Put("c", "cuda-module", "9");
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(dir_, "", true, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->verified, 3);
  EXPECT_EQ(r->bad, 0);
  ASSERT_EQ(r->kinds.size(), 2u);
  EXPECT_EQ(r->kinds.at("llvm-object").first, 2);
  EXPECT_EQ(r->kinds.at("cuda-module").first, 1);
  EXPECT_EQ(r->kinds.at("cuda-module").second,
            static_cast<int64_t>(fs::file_size(PathOf("c"))));
}

TEST_F(CacheInspectionTest, CorruptAndForeignRecordsAreBad) {
  Put("good", "llvm-object", "payload");
  Put("corrupt", "llvm-object", "payload");
  Put("real-key", "llvm-object", "payload", "", /*stored_as=*/"other-key");
  {
    // Flip a byte of the corrupt record's payload.
    std::fstream f(PathOf("corrupt"),
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('#');
  }
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(dir_, "", true, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->records, 3);
  EXPECT_EQ(r->verified, 1);
  EXPECT_EQ(r->bad, 2);
  EXPECT_EQ(r->kinds.at("bad").first, 2);
  ASSERT_EQ(r->problems.size(), 2u);
  std::string all = r->problems[0] + "\n" + r->problems[1];
  EXPECT_NE(all.find(PathOf("other-key") +
                     ": foreign: the file name is not its key's hash"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find(PathOf("corrupt") + ": "), std::string::npos) << all;
  EXPECT_EQ(r->removed, 0);
  EXPECT_TRUE(fs::exists(PathOf("corrupt")));
}

TEST_F(CacheInspectionTest, RemoveBadRemovesOnlyTheBad) {
  Put("good", "llvm-object", "payload");
  Put("real-key", "llvm-object", "payload", "", /*stored_as=*/"other-key");
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(dir_, "", true, true);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->removed, 1);
  EXPECT_FALSE(fs::exists(PathOf("other-key")));
  EXPECT_TRUE(fs::exists(PathOf("good")));
  absl::StatusOr<CacheDirReport> after = InspectCacheDir(dir_, "", true, false);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->records, 1);
  EXPECT_EQ(after->bad, 0);
}

TEST_F(CacheInspectionTest, SigningKeyRejectsUnsignedAndOtherKeys) {
  Put("signed", "llvm-object", "p", "secret");
  Put("unsigned", "llvm-object", "p");
  Put("other", "llvm-object", "p", "another secret");
  absl::StatusOr<CacheDirReport> r =
      InspectCacheDir(dir_, "secret", true, false);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->verified, 1);
  EXPECT_EQ(r->bad, 2);
  // Without a key, each record passes on its digest.
  absl::StatusOr<CacheDirReport> any = InspectCacheDir(dir_, "", true, false);
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->verified, 3);
}

TEST_F(CacheInspectionTest, TextSummarizesKindsAndProblems) {
  CacheDirReport r;
  r.records = 3;
  r.bytes = 300;
  r.kinds["llvm-object"] = {2, 200};
  r.kinds["bad"] = {1, 100};
  r.verified = 2;
  r.bad = 1;
  r.problems = {"/d/ab/x.gjc: corrupt: digest mismatch"};
  EXPECT_EQ(r.Text("/d", true),
            "/d: 3 records, 300 bytes\n"
            "  bad: 1 records, 100 bytes\n"
            "  llvm-object: 2 records, 200 bytes\n"
            "verified 2, bad 1\n"
            "  /d/ab/x.gjc: corrupt: digest mismatch\n");
  r.removed = 1;
  EXPECT_NE(r.Text("/d", true).find("verified 2, bad 1, removed 1\n"),
            std::string::npos);
  // Without verifying, no verified line.
  EXPECT_EQ(r.Text("/d", false).find("verified"), std::string::npos);
}

TEST_F(CacheInspectionTest, ClearRemovesEveryRecord) {
  Put("a", "llvm-object", "1");
  Put("b", "llvm-object", "2");
  absl::StatusOr<int64_t> cleared = ClearCacheDir(dir_);
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(*cleared, 2);
  absl::StatusOr<CacheDirReport> r = InspectCacheDir(dir_, "", false, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->records, 0);
}

}  // namespace
}  // namespace guardjit
