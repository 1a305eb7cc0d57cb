#include "runtime/compile_cache/cache_record.h"

#include <string>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

CacheRecord Sample() {
  CacheRecord r;
  r.key = "guardjit llvm kernel\ntriple=x86_64 cpu=test\nkernel k0 ...";
  r.info = {.kind = "llvm-object",
            .pid = 4242,
            .compile_ms = 12.5,
            .created_ms = 1764370000000,
            .producer = "guardjit 0.11.0"};
  r.payload = std::string(
                  "\x7f"
                  "ELF",
                  4) +
              std::string(300, '\x01');
  return r;
}

TEST(CacheRecordTest, RoundTripsUnsignedAndSigned) {
  const CacheRecord r = Sample();
  for (const std::string key : {"", "secret"}) {
    const std::string bytes = EncodeCacheRecord(r, key);
    auto back = DecodeCacheRecord(bytes, r.key, key);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->key, r.key);
    EXPECT_EQ(back->payload, r.payload);
    EXPECT_EQ(back->info.kind, "llvm-object");
    EXPECT_EQ(back->info.pid, 4242);
    EXPECT_DOUBLE_EQ(back->info.compile_ms, 12.5);
    EXPECT_EQ(back->info.created_ms, 1764370000000);
    EXPECT_EQ(back->info.producer, "guardjit 0.11.0");
    // Read without knowing the key (guardjit cache verify).
    EXPECT_TRUE(DecodeCacheRecord(bytes, "", key).ok());
  }
  // A signed record read by a cache without a key: its digest suffices.
  EXPECT_TRUE(
      DecodeCacheRecord(EncodeCacheRecord(r, "secret"), r.key, "").ok());
}

// Every prefix of a record is refused (truncated, or corrupt where the
// header itself is cut), never read as a shorter payload.
TEST(CacheRecordTest, EveryTruncationIsRefused) {
  const CacheRecord r = Sample();
  for (const std::string key : {"", "k"}) {
    const std::string bytes = EncodeCacheRecord(r, key);
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto back = DecodeCacheRecord(bytes.substr(0, n), r.key, key);
      ASSERT_FALSE(back.ok()) << "prefix of " << n << " bytes was accepted";
      const CacheRecordProblem p = ProblemOf(back.status());
      EXPECT_TRUE(p == CacheRecordProblem::kTruncated ||
                  p == CacheRecordProblem::kCorrupt)
          << n << ": " << back.status();
    }
    // Extra bytes are corruption too.
    EXPECT_EQ(ProblemOf(DecodeCacheRecord(bytes + "x", r.key, key).status()),
              CacheRecordProblem::kCorrupt);
  }
}

// Flipping any byte is caught: by the magic, the lengths, the digest or the
// signature.
TEST(CacheRecordTest, EveryFlippedByteIsRefused) {
  const CacheRecord r = Sample();
  for (const std::string key : {"", "k"}) {
    const std::string bytes = EncodeCacheRecord(r, key);
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ 0x20);
      EXPECT_FALSE(DecodeCacheRecord(bad, r.key, key).ok())
          << "byte " << i << " flipped was accepted";
    }
  }
}

TEST(CacheRecordTest, NamesEachProblem) {
  const CacheRecord r = Sample();
  const std::string bytes = EncodeCacheRecord(r, "");
  std::string skew = bytes;
  skew[8] = 2;  // the format version
  auto s = DecodeCacheRecord(skew, r.key, "");
  EXPECT_EQ(ProblemOf(s.status()), CacheRecordProblem::kVersionSkew);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("record format 2"), std::string::npos);

  auto foreign = DecodeCacheRecord(bytes, "another key", "");
  EXPECT_EQ(ProblemOf(foreign.status()), CacheRecordProblem::kForeign);

  auto junk = DecodeCacheRecord(std::string(100, 'x'), r.key, "");
  EXPECT_EQ(ProblemOf(junk.status()), CacheRecordProblem::kCorrupt);
  EXPECT_EQ(junk.status().code(), absl::StatusCode::kDataLoss);

  auto unsigned_read = DecodeCacheRecord(bytes, r.key, "secret");
  EXPECT_EQ(ProblemOf(unsigned_read.status()), CacheRecordProblem::kUnsigned);
  EXPECT_EQ(unsigned_read.status().code(), absl::StatusCode::kPermissionDenied);

  auto wrong_key =
      DecodeCacheRecord(EncodeCacheRecord(r, "alpha"), r.key, "beta");
  EXPECT_EQ(ProblemOf(wrong_key.status()), CacheRecordProblem::kBadSignature);

  // A payload altered by someone without the key, its digest recomputed
  // and a valid signature of another record attached: the signature fails.
  CacheRecord evil = r;
  evil.payload[10] = 'X';
  std::string forged = EncodeCacheRecord(evil, "attacker");
  const std::string good = EncodeCacheRecord(r, "alpha");
  forged.replace(forged.size() - 32, 32, good.substr(good.size() - 32));
  auto f = DecodeCacheRecord(forged, r.key, "alpha");
  EXPECT_EQ(ProblemOf(f.status()), CacheRecordProblem::kBadSignature)
      << f.status();
}

}  // namespace
}  // namespace guardjit
