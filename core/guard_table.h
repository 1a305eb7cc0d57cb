#ifndef GUARDJIT_CORE_GUARD_TABLE_H_
#define GUARDJIT_CORE_GUARD_TABLE_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/cache_entry.h"
#include "core/call_signature.h"

namespace guardjit {

// An immutable index over a function's cache entries. Lookup hashes what
// entries guard exactly (GuardTree::StaticKey) with the call's values at the
// dims a set of entries guards statically (one probe per distinct set, not
// per entry), so its cost does not grow with the number of entries; the
// candidates' full guards confirm. Before that, the entry of the table's last
// hit is checked directly: calls mostly repeat one specialization, and when
// that entry accepts the call it is the most recently used one that does. A
// Function publishes a new table after each compile, so lookups take no lock.
class GuardTable {
 public:
  GuardTable() = default;
  explicit GuardTable(std::vector<CacheEntry*> entries);

  // The largest `bound` Lookup fills.
  static constexpr size_t kMaxBoundSymbols = 16;

  // The most recently used entry whose guards accept `call`, or null. With
  // `bound` (at most kMaxBoundSymbols) as large as the entry's symbol count,
  // the symbol values its guards bound are left there (GuardTree::Check).
  CacheEntry* Lookup(const CallSignature& call,
                     absl::Span<int64_t> bound = absl::Span<int64_t>()) const;

  // Entries in insertion order.
  const std::vector<CacheEntry*>& entries() const { return entries_; }

 private:
  // The dims a set of entries guards statically, as input * 64 + dim.
  struct Mask {
    std::vector<int> size_dims;
    std::vector<int> stride_dims;
  };
  // Sets `hash` to the hash of the call's values at `mask`; false if the call
  // lacks one of its dims. (Not an optional: returning one through memory
  // stalled the lookup on a store-to-load forward.)
  static bool HashValues(const Mask& mask, const CallSignature& call,
                         uint64_t& hash);

  // The slow path: one hash probe per mask.
  CacheEntry* LookupIndexed(const CallSignature& call,
                            absl::Span<int64_t> bound) const;

  std::vector<CacheEntry*> entries_;
  // The entry the last successful lookup returned (a hint: racing lookups
  // may overwrite each other's; any value is one of entries_ or null).
  mutable std::atomic<CacheEntry*> last_hit_{nullptr};
  std::vector<Mask> masks_;  // few: one per distinct set of static dims
  // (static key, mask, values at the mask) -> entries, in insertion order.
  absl::flat_hash_map<uint64_t, absl::InlinedVector<CacheEntry*, 2>> index_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_GUARD_TABLE_H_
