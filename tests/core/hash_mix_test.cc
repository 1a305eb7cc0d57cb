#include "core/hash_mix.h"

#include <cstdint>
#include <set>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(HashMixTest, IsTheDocumentedMultiplyXorShift) {
  // (h ^ v) * golden ratio, then folded by a 29-bit shift.
  const uint64_t m = (uint64_t{3} ^ uint64_t{5}) * 0x9e3779b97f4a7c15ull;
  EXPECT_EQ(HashMix(3, 5), m ^ (m >> 29));
  EXPECT_EQ(HashMix(0, 0), 0u);
}

TEST(HashMixTest, ChainedMixesDependOnOrder) {
  // A guard key chains the values it hashes: swapping two must change it.
  EXPECT_NE(HashMix(HashMix(0, 1), 2), HashMix(HashMix(0, 2), 1));
}

TEST(HashMixTest, SmallKeysSpreadOverLowBits) {
  // The lookup buckets by low bits: consecutive sizes must not collide there.
  std::set<uint64_t> low;
  for (uint64_t v = 0; v < 64; ++v) low.insert(HashMix(17, v) & 0xffff);
  EXPECT_EQ(low.size(), 64u);
}

TEST(HashTermTest, TermsArePositional) {
  // A key is a sum of terms, so only the position makes (a, b) and (b, a)
  // differ: the same value at another position must give another term.
  for (uint64_t v : {0ull, 1ull, 2ull, 1024ull, ~0ull}) {
    EXPECT_NE(HashTerm(0, v), HashTerm(1, v)) << v;
    EXPECT_NE(HashTerm(1, v), HashTerm(2, v)) << v;
  }
  EXPECT_NE(HashTerm(0, 3) + HashTerm(1, 7), HashTerm(0, 7) + HashTerm(1, 3));
}

TEST(HashTermTest, DistinctValuesGiveDistinctTerms) {
  // The multiplier is odd for every position, so a term is a bijection of v.
  for (uint64_t k = 0; k < 8; ++k) {
    std::set<uint64_t> terms;
    for (uint64_t v = 0; v < 256; ++v) terms.insert(HashTerm(k, v));
    EXPECT_EQ(terms.size(), 256u) << "position " << k;
  }
}

}  // namespace
}  // namespace guardjit
