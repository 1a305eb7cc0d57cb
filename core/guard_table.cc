#include "core/guard_table.h"

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
  for (int k : size_dims)
    h = HashMix(h, static_cast<uint64_t>(
                       *guards.tensors()[k / kMaxRank].sizes[k % kMaxRank]));
  for (int k : stride_dims)
    h = HashMix(h, static_cast<uint64_t>(
                       *guards.tensors()[k / kMaxRank].strides[k % kMaxRank]));
  return h;
}

}  // namespace

GuardTable::GuardTable(std::vector<CacheEntry*> entries)
    : entries_(std::move(entries)) {
  for (CacheEntry* e : entries_) {
    std::vector<int> size_dims, stride_dims;
    StaticDims(e->guards, size_dims, stride_dims);
    std::vector<Group>& groups = groups_[e->guards.StaticKey()];
    Group* group = nullptr;
    for (Group& g : groups) {
      if (g.size_dims == size_dims && g.stride_dims == stride_dims) group = &g;
    }
    if (group == nullptr) {
      groups.push_back(Group{size_dims, stride_dims, {}});
      group = &groups.back();
    }
    group->by_values[HashGuardValues(e->guards, size_dims, stride_dims)]
        .push_back(e);
  }
}

uint64_t GuardTable::HashValues(const Group& group, const CallSignature& call) {
  uint64_t h = 0;
  for (int k : group.size_dims)
    h = HashMix(h, static_cast<uint64_t>(
                       call.inputs[k / kMaxRank].sizes[k % kMaxRank]));
  for (int k : group.stride_dims) {
    h = HashMix(h, static_cast<uint64_t>(
                       call.inputs[k / kMaxRank].strides[k % kMaxRank]));
  }
  return h;
}

CacheEntry* GuardTable::Lookup(const CallSignature& call) const {
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
  auto it = groups_.find(GuardTree::StaticKeyOf(call, alias_of));
  if (it == groups_.end()) return nullptr;
  CacheEntry* best = nullptr;
  uint64_t best_tick = 0;
  for (const Group& group : it->second) {
    auto candidates = group.by_values.find(HashValues(group, call));
    if (candidates == group.by_values.end()) continue;
    for (CacheEntry* e : candidates->second) {
      uint64_t tick = e->last_used.load(std::memory_order_relaxed);
      if ((best == nullptr || tick > best_tick) &&
          e->guards.CheckWithAliasing(call, alias_of)) {
        best = e;
        best_tick = tick;
      }
    }
  }
  return best;
}

}  // namespace guardjit
