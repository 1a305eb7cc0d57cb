#ifndef GUARDJIT_CORE_GUARD_TABLE_H_
#define GUARDJIT_CORE_GUARD_TABLE_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/cache_entry.h"
#include "core/call_signature.h"

namespace guardjit {

// An immutable index over a function's cache entries. Lookup hashes what
// entries guard exactly (GuardTree::StaticKey), then, per group of entries
// with the same static dims, the call's values at those dims, so its cost
// does not grow with the number of entries; the candidates' full guards
// confirm. A Function publishes a new table after each compile, so lookups
// take no lock.
class GuardTable {
 public:
  GuardTable() = default;
  explicit GuardTable(std::vector<CacheEntry*> entries);

  // The most recently used entry whose guards accept `call`, or null.
  CacheEntry* Lookup(const CallSignature& call) const;

  // Entries in insertion order.
  const std::vector<CacheEntry*>& entries() const { return entries_; }

 private:
  // Entries sharing a static key and the same set of static dims.
  struct Group {
    std::vector<int>
        size_dims;  // flattened (input, dim) pairs, as input*64+dim
    std::vector<int> stride_dims;
    absl::flat_hash_map<uint64_t, std::vector<CacheEntry*>> by_values;
  };
  static uint64_t HashValues(const Group& group, const CallSignature& call);

  std::vector<CacheEntry*> entries_;
  absl::flat_hash_map<uint64_t, std::vector<Group>> groups_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GUARD_TABLE_H_
