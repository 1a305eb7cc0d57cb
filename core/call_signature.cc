#include "core/call_signature.h"

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
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (FirstAlias(inputs, i) != alias_of[i]) return false;
  }
  return true;
}

}  // namespace guardjit
