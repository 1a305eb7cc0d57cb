#include "runtime/compile_cache/cache_record.h"

#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/compile_cache/sha256.h"

namespace guardjit {
namespace {

constexpr char kMagic[8] = {'G', 'J', 'C', 'A', 'C', 'H', 'E', '\0'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 4 + 4 + 8;
constexpr size_t kDigestBytes = 32;
constexpr uint32_t kSigned = 1;

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetLe(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  }
  return v;
}

std::string EncodeInfo(const CacheRecordInfo& info) {
  return absl::StrCat(
      "kind=", info.kind, "\npid=", info.pid, "\ncompile_ms=", info.compile_ms,
      "\ncreated_ms=", info.created_ms, "\nproducer=", info.producer, "\n");
}

// Unknown names are skipped (a later format may add lines); a malformed
// number reads as 0: the info only describes, the digest guards the bytes.
CacheRecordInfo DecodeInfo(absl::string_view text) {
  CacheRecordInfo info;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    absl::string_view name = line.substr(0, eq);
    absl::string_view value = line.substr(eq + 1);
    if (name == "kind") info.kind = std::string(value);
    if (name == "pid") (void)absl::SimpleAtoi(value, &info.pid);
    if (name == "compile_ms") (void)absl::SimpleAtod(value, &info.compile_ms);
    if (name == "created_ms") (void)absl::SimpleAtoi(value, &info.created_ms);
    if (name == "producer") info.producer = std::string(value);
  }
  return info;
}

absl::Status Problem(CacheRecordProblem problem, absl::string_view detail) {
  absl::StatusCode code = absl::StatusCode::kDataLoss;
  if (problem == CacheRecordProblem::kVersionSkew ||
      problem == CacheRecordProblem::kForeign) {
    code = absl::StatusCode::kFailedPrecondition;
  }
  if (problem == CacheRecordProblem::kUnsigned ||
      problem == CacheRecordProblem::kBadSignature) {
    code = absl::StatusCode::kPermissionDenied;
  }
  return absl::Status(
      code, absl::StrCat(CacheRecordProblemName(problem), ": ", detail));
}

}  // namespace

const char* CacheRecordProblemName(CacheRecordProblem problem) {
  switch (problem) {
    case CacheRecordProblem::kTruncated:
      return "truncated";
    case CacheRecordProblem::kCorrupt:
      return "corrupt";
    case CacheRecordProblem::kVersionSkew:
      return "version skew";
    case CacheRecordProblem::kForeign:
      return "foreign";
    case CacheRecordProblem::kUnsigned:
      return "unsigned";
    case CacheRecordProblem::kBadSignature:
      return "bad signature";
  }
  return "corrupt";
}

CacheRecordProblem ProblemOf(const absl::Status& status) {
  // The message starts with the problem's name (Problem above).
  for (CacheRecordProblem p :
       {CacheRecordProblem::kTruncated, CacheRecordProblem::kCorrupt,
        CacheRecordProblem::kVersionSkew, CacheRecordProblem::kForeign,
        CacheRecordProblem::kUnsigned, CacheRecordProblem::kBadSignature}) {
    if (absl::StartsWith(status.message(),
                         absl::StrCat(CacheRecordProblemName(p), ":"))) {
      return p;
    }
  }
  return CacheRecordProblem::kCorrupt;
}

std::string EncodeCacheRecord(const CacheRecord& record,
                              absl::string_view signing_key) {
  const std::string info = EncodeInfo(record.info);
  std::string out;
  out.reserve(kHeaderBytes + record.key.size() + info.size() +
              record.payload.size() + 2 * kDigestBytes);
  out.append(kMagic, sizeof(kMagic));
  PutU32(&out, kCacheRecordFormat);
  PutU32(&out, signing_key.empty() ? 0 : kSigned);
  PutU32(&out, static_cast<uint32_t>(record.key.size()));
  PutU32(&out, static_cast<uint32_t>(info.size()));
  PutU64(&out, record.payload.size());
  out += record.key;
  out += info;
  out += record.payload;
  const Sha256Digest digest = Sha256Of(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  if (!signing_key.empty()) {
    const Sha256Digest mac = HmacSha256(signing_key, out);
    out.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  }
  return out;
}

absl::StatusOr<CacheRecord> DecodeCacheRecord(absl::string_view bytes,
                                              absl::string_view expected_key,
                                              absl::string_view signing_key) {
  if (bytes.size() < kHeaderBytes) {
    return Problem(CacheRecordProblem::kTruncated,
                   absl::StrCat(bytes.size(), " bytes, shorter than the ",
                                kHeaderBytes, "-byte header"));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Problem(CacheRecordProblem::kCorrupt,
                   "not a guardjit cache record (bad magic)");
  }
  const char* p = bytes.data() + sizeof(kMagic);
  const uint32_t format = static_cast<uint32_t>(GetLe(p, 4));
  const uint32_t flags = static_cast<uint32_t>(GetLe(p + 4, 4));
  const uint64_t key_len = GetLe(p + 8, 4);
  const uint64_t info_len = GetLe(p + 12, 4);
  const uint64_t payload_len = GetLe(p + 16, 8);
  if (format != kCacheRecordFormat) {
    return Problem(CacheRecordProblem::kVersionSkew,
                   absl::StrCat("record format ", format,
                                ", this library reads ", kCacheRecordFormat));
  }
  const bool is_signed = (flags & kSigned) != 0;
  const uint64_t body = kHeaderBytes + key_len + info_len;
  const uint64_t need =
      body + payload_len + kDigestBytes + (is_signed ? kDigestBytes : 0);
  if (payload_len > bytes.size() || body > bytes.size() ||
      need != bytes.size()) {
    return Problem(need > bytes.size() || payload_len > bytes.size()
                       ? CacheRecordProblem::kTruncated
                       : CacheRecordProblem::kCorrupt,
                   absl::StrCat(bytes.size(), " bytes where the header says ",
                                payload_len > bytes.size() ? 0 : need));
  }
  const size_t digested = static_cast<size_t>(body + payload_len);
  const Sha256Digest digest = Sha256Of(bytes.substr(0, digested));
  if (!DigestsEqual(digest.data(), reinterpret_cast<const uint8_t*>(
                                       bytes.data() + digested))) {
    return Problem(CacheRecordProblem::kCorrupt, "digest mismatch");
  }
  if (!signing_key.empty()) {
    if (!is_signed) {
      return Problem(CacheRecordProblem::kUnsigned,
                     "the cache has a signing key and the record no signature");
    }
    const Sha256Digest mac =
        HmacSha256(signing_key, bytes.substr(0, digested + kDigestBytes));
    if (!DigestsEqual(mac.data(),
                      reinterpret_cast<const uint8_t*>(bytes.data() + digested +
                                                       kDigestBytes))) {
      return Problem(CacheRecordProblem::kBadSignature,
                     "the signature does not match the cache's signing key");
    }
  }
  CacheRecord record;
  record.key = std::string(bytes.substr(kHeaderBytes, key_len));
  if (!expected_key.empty() && record.key != expected_key) {
    return Problem(CacheRecordProblem::kForeign,
                   "the record was stored under another key");
  }
  record.info = DecodeInfo(bytes.substr(kHeaderBytes + key_len, info_len));
  record.payload = std::string(bytes.substr(body, payload_len));
  return record;
}

}  // namespace guardjit
