#ifndef GUARDJIT_RUNTIME_COMPILE_CACHE_SHA256_H_
#define GUARDJIT_RUNTIME_COMPILE_CACHE_SHA256_H_

// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the compile cache:
// the digest every cache record carries and the signature of records
// written with a cache key. Self-contained so the library links no crypto
// library for two functions.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace guardjit {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256: Update any number of times, then Finish once.
class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  void Update(absl::string_view data) { Update(data.data(), data.size()); }
  Sha256Digest Finish();

 private:
  void Block(const uint8_t* block);

  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

Sha256Digest Sha256Of(absl::string_view data);
Sha256Digest HmacSha256(absl::string_view key, absl::string_view message);
// Lower-case hex of a digest.
std::string DigestHex(const Sha256Digest& digest);
// Whether two digests are equal, in time independent of where they differ
// (a signature check must not tell an attacker how much of a guess was
// right).
bool DigestsEqual(const uint8_t* a, const uint8_t* b);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_COMPILE_CACHE_SHA256_H_
