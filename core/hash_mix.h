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

}  // namespace guardjit

#endif  // GUARDJIT_CORE_HASH_MIX_H_
