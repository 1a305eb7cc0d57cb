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

void ComputeAliasing(absl::Span<const InputView> inputs, std::vector<int>& alias_of) {
  alias_of.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) alias_of[i] = FirstAlias(inputs, i);
}

bool AliasingMatches(absl::Span<const InputView> inputs,
                     absl::Span<const int> alias_of) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (FirstAlias(inputs, i) != alias_of[i]) return false;
  }
  return true;
}

}  // namespace guardjit
