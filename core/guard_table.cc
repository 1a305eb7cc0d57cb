#include "core/guard_table.h"

#include <algorithm>

#include "core/hash_mix.h"

namespace guardjit {
namespace {

constexpr int kMaxRank = 64;

void StaticDims(const GuardTree& guards, std::vector<int>& sizes,
                std::vector<int>& strides) {
  for (size_t i = 0; i < guards.tensors().size(); ++i) {
    const TensorGuard& t = guards.tensors()[i];
    for (int d = 0; d < t.rank(); ++d) {
      if (t.sizes[d]) sizes.push_back(static_cast<int>(i) * kMaxRank + d);
      if (t.strides[d]) strides.push_back(static_cast<int>(i) * kMaxRank + d);
    }
  }
}

uint64_t HashGuardValues(const GuardTree& guards,
                         const std::vector<int>& size_dims,
                         const std::vector<int>& stride_dims) {
  uint64_t h = 0;
  uint64_t j = 0;
  for (int k : size_dims) {
    h +=
        HashTerm(j++, static_cast<uint64_t>(
                          *guards.tensors()[k / kMaxRank].sizes[k % kMaxRank]));
  }
  for (int k : stride_dims) {
    h += HashTerm(j++,
                  static_cast<uint64_t>(
                      *guards.tensors()[k / kMaxRank].strides[k % kMaxRank]));
  }
  return h;
}

}  // namespace

GuardTable::GuardTable(std::vector<CacheEntry*> entries)
    : entries_(std::move(entries)) {
  for (CacheEntry* e : entries_) {
    Mask mask;
    StaticDims(e->guards, mask.size_dims, mask.stride_dims);
    size_t m = 0;
    while (m < masks_.size() && (masks_[m].size_dims != mask.size_dims ||
                                 masks_[m].stride_dims != mask.stride_dims)) {
      ++m;
    }
    if (m == masks_.size()) masks_.push_back(mask);
    const uint64_t key =
        HashMix(HashMix(e->guards.StaticKey(), m),
                HashGuardValues(e->guards, mask.size_dims, mask.stride_dims));
    index_[key].push_back(e);
  }
}

bool GuardTable::HashValues(const Mask& mask, const CallSignature& call,
                            uint64_t& hash) {
  uint64_t h = 0;
  uint64_t j = 0;
  const size_t n = call.inputs.size();
  for (int k : mask.size_dims) {
    const size_t i = k / kMaxRank;
    const int d = k % kMaxRank;
    if (i >= n || d >= call.inputs[i].rank) return false;
    h += HashTerm(j++, static_cast<uint64_t>(call.inputs[i].sizes[d]));
  }
  for (int k : mask.stride_dims) {
    const size_t i = k / kMaxRank;
    const int d = k % kMaxRank;
    if (i >= n || d >= call.inputs[i].rank) return false;
    h += HashTerm(j++, static_cast<uint64_t>(call.inputs[i].strides[d]));
  }
  hash = h;
  return true;
}

CacheEntry* GuardTable::Lookup(const CallSignature& call,
                               absl::Span<int64_t> bound) const {
  if (bound.size() > kMaxBoundSymbols) bound = absl::Span<int64_t>();
  CacheEntry* last = last_hit_.load(std::memory_order_relaxed);
  if (last != nullptr && last->guards.Check(call, bound)) return last;
  CacheEntry* found = LookupIndexed(call, bound);
  if (found != nullptr && found != last) {
    last_hit_.store(found, std::memory_order_relaxed);
  }
  return found;
}

CacheEntry* GuardTable::LookupIndexed(const CallSignature& call,
                                      absl::Span<int64_t> bound) const {
  if (entries_.empty()) return nullptr;
  for (const InputView& v : call.inputs) {
    if (v.rank > kMaxRank) return nullptr;
  }
  constexpr size_t kStackInputs = 64;
  int stack_alias[kStackInputs];
  std::vector<int> heap_alias;
  absl::Span<int> alias_of;
  if (call.inputs.size() <= kStackInputs) {
    alias_of = absl::Span<int>(stack_alias, call.inputs.size());
  } else {
    heap_alias.resize(call.inputs.size());
    alias_of = absl::MakeSpan(heap_alias);
  }
  ComputeAliasingInto(call.inputs, alias_of);
  const uint64_t static_key = GuardTree::StaticKeyOf(call, alias_of);
  CacheEntry* best = nullptr;
  uint64_t best_tick = 0;
  // Several entries may accept the call: each candidate binds into `trial`,
  // and the best one's values are swapped into `kept`.
  int64_t scratch[kMaxBoundSymbols];
  absl::Span<int64_t> kept = bound;
  absl::Span<int64_t> trial(scratch, bound.size());
  for (size_t m = 0; m < masks_.size(); ++m) {
    uint64_t values;
    if (!HashValues(masks_[m], call, values)) continue;
    auto candidates = index_.find(HashMix(HashMix(static_key, m), values));
    if (candidates == index_.end()) continue;
    for (CacheEntry* e : candidates->second) {
      uint64_t tick = e->last_used.load(std::memory_order_relaxed);
      if ((best == nullptr || tick > best_tick) &&
          e->guards.CheckWithAliasing(call, alias_of, trial)) {
        best = e;
        best_tick = tick;
        std::swap(kept, trial);
      }
    }
  }
  if (best != nullptr && kept.data() != bound.data() && !bound.empty()) {
    std::copy(kept.begin(), kept.end(), bound.begin());
  }
  return best;
}

}  // namespace guardjit
