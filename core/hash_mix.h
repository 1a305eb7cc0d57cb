#ifndef GUARDJIT_CORE_HASH_MIX_H_
#define GUARDJIT_CORE_HASH_MIX_H_

#include <cstdint>

namespace guardjit {

// A cheap multiplicative mix for the guard lookup's keys: they only need to
// spread over a handful of entries, and the full guards confirm every hit.
inline uint64_t HashMix(uint64_t h, uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

// Term `k` of a positional hash. A key sums its terms and finishes with one
// HashMix, so the terms' multiplies run in parallel instead of as a serial
// chain of HashMix calls (the guard lookup hashes up to a few dozen values).
inline uint64_t HashTerm(uint64_t k, uint64_t v) {
  return (v ^ (k * 0xbf58476d1ce4e5b9ull)) *
         (0x9e3779b97f4a7c15ull + 2 * k * 0x94d049bb133111ebull);
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_HASH_MIX_H_
