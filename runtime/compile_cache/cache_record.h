#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_RECORD_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_RECORD_H_

// One compile-cache record as bytes, the same on disk and in Redis:
//
//   "GJCACHE\0"                  magic (8 bytes)
//   u32 format version           kCacheRecordFormat
//   u32 flags                    bit 0: signed
//   u32 key length, u32 info length, u64 payload length
//   key                          the whole cache key (compared on read)
//   info                         "name=value" lines: kind, pid, compile_ms,
//                                created_ms, producer
//   payload                      the cached bytes (an object file ...)
//   SHA-256 of everything above  (32 bytes)
//   HMAC-SHA256 of everything above, digest included, under the cache's
//   signing key               (32 bytes, signed records only)
//
// Integers are little-endian. A record is read whole and checked before its
// payload is used: a short, corrupt, foreign or wrongly signed record is an
// error naming the problem, never a payload.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

inline constexpr uint32_t kCacheRecordFormat = 1;

// Where a record's payload came from.
struct CacheRecordInfo {
  std::string kind;        // "llvm-object"
  int64_t pid = 0;         // the process that compiled it
  double compile_ms = 0;   // what compiling it took there
  int64_t created_ms = 0;  // Unix time of the compile, in milliseconds
  std::string producer;    // "guardjit 0.11.0"
};

struct CacheRecord {
  std::string key;
  CacheRecordInfo info;
  std::string payload;
};

// Why a record was refused (DecodeCacheRecord's error names it first in
// its message, "corrupt: ...", with the status code below).
enum class CacheRecordProblem {
  kTruncated,     // DATA_LOSS: shorter than its header or lengths say
  kCorrupt,       // DATA_LOSS: bad magic, or the digest does not match
  kVersionSkew,   // FAILED_PRECONDITION: another record format
  kForeign,       // FAILED_PRECONDITION: stored under another key
  kUnsigned,      // PERMISSION_DENIED: a key is set and the record has none
  kBadSignature,  // PERMISSION_DENIED: signed under another key, or altered
};
const char* CacheRecordProblemName(CacheRecordProblem problem);

// The record's bytes, signed under `signing_key` when it is not empty.
std::string EncodeCacheRecord(const CacheRecord& record,
                              absl::string_view signing_key);

// The record in `bytes`, checked: its digest; its key equal to
// `expected_key` (unless that is empty: `guardjit cache verify` reads
// records without knowing their keys); with a `signing_key`, a signature
// made with it. A signed record read without a key is accepted on its
// digest. Errors are as CacheRecordProblem says, the message naming the
// problem: "corrupt: digest mismatch", "unsigned: ...".
absl::StatusOr<CacheRecord> DecodeCacheRecord(absl::string_view bytes,
                                              absl::string_view expected_key,
                                              absl::string_view signing_key);
// The problem of a DecodeCacheRecord error.
CacheRecordProblem ProblemOf(const absl::Status& status);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_CACHE_RECORD_H_
