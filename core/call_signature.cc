#include "core/call_signature.h"

#include <algorithm>
#include <utility>

namespace guardjit {

namespace {
bool CanAlias(const InputView& v) { return v.data != nullptr && !v.empty(); }
}  // namespace

int FirstAlias(absl::Span<const InputView> inputs, size_t i) {
  if (!CanAlias(inputs[i])) return static_cast<int>(i);
  for (size_t j = 0; j < i; ++j) {
    if (inputs[j].data == inputs[i].data && CanAlias(inputs[j])) {
      return static_cast<int>(j);
    }
  }
  return static_cast<int>(i);
}

void ComputeAliasing(absl::Span<const InputView> inputs,
                     std::vector<int>& alias_of) {
  alias_of.resize(inputs.size());
  ComputeAliasingInto(inputs, absl::MakeSpan(alias_of));
}

void ComputeAliasingInto(absl::Span<const InputView> inputs,
                         absl::Span<int> alias_of) {
  // Inputs that cannot alias get a null key, so the inner loop only compares
  // pointers.
  constexpr size_t kStack = 64;
  const void* stack_keys[kStack];
  std::vector<const void*> heap_keys;
  const void** keys = stack_keys;
  if (inputs.size() > kStack) {
    heap_keys.resize(inputs.size());
    keys = heap_keys.data();
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    keys[i] = CanAlias(inputs[i]) ? inputs[i].data : nullptr;
    alias_of[i] = static_cast<int>(i);
    if (keys[i] == nullptr) continue;
    for (size_t j = 0; j < i; ++j) {
      if (keys[j] == keys[i]) {
        alias_of[i] = static_cast<int>(j);
        break;
      }
    }
  }
}

bool AliasingMatches(absl::Span<const InputView> inputs,
                     absl::Span<const int> alias_of) {
  // Pairwise for a few inputs; above that, sorting the addresses (with their
  // positions, so each group's first input comes first) is O(n log n).
  constexpr size_t kPairwiseMax = 8;
  constexpr size_t kStack = 64;
  if (inputs.size() <= kPairwiseMax || inputs.size() > kStack) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (FirstAlias(inputs, i) != alias_of[i]) return false;
    }
    return true;
  }
  std::pair<const void*, int> keys[kStack];
  size_t n = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (CanAlias(inputs[i])) {
      keys[n++] = {inputs[i].data, static_cast<int>(i)};
    } else if (alias_of[i] != static_cast<int>(i)) {
      return false;
    }
  }
  std::sort(keys, keys + n);
  for (size_t k = 0; k < n; ++k) {
    const int first = k > 0 && keys[k - 1].first == keys[k].first
                          ? alias_of[keys[k - 1].second]
                          : keys[k].second;
    if (alias_of[keys[k].second] != first) return false;
  }
  return true;
}

}  // namespace guardjit
