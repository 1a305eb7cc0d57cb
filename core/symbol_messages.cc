#include "core/symbol_messages.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

absl::Status WithSymbolSources(const absl::Status& status,
                               absl::Span<const std::string> sources,
                               absl::Span<const int64_t> values) {
  if (status.ok()) return status;
  std::vector<std::string> named;
  const std::string message(status.message());
  for (size_t i = 0; i < sources.size(); ++i) {
    const std::string name = absl::StrCat("s", i);
    for (size_t at = message.find(name); at != std::string::npos;
         at = message.find(name, at + 1)) {
      const size_t end = at + name.size();
      // "s0xs1" (a matrix's sizes) names s1 too.
      const bool starts = at == 0 || !absl::ascii_isalnum(message[at - 1]) ||
                          message[at - 1] == 'x';
      const bool ends =
          end == message.size() || !absl::ascii_isdigit(message[end]);
      if (starts && ends) {
        named.push_back(absl::StrCat(name, " = ", sources[i], ", ", values[i],
                                     " in this call"));
        break;
      }
    }
  }
  if (named.empty()) return status;
  return absl::Status(
      status.code(),
      absl::StrCat(message, " (", absl::StrJoin(named, "; "), ")"));
}

absl::Status WithSymbolSources(const absl::Status& status,
                               const ShapeEnv& env) {
  std::vector<std::string> sources;
  std::vector<int64_t> hints;
  for (const SymbolInfo& info : env.symbols()) {
    sources.push_back(info.source);
    hints.push_back(info.hint);
  }
  return WithSymbolSources(status, sources, hints);
}

absl::Status WithCallSymbols(const absl::Status& status,
                             const CacheEntry* entry,
                             const CallSignature& call) {
  if (status.ok() || entry == nullptr) return status;
  const SymbolicGuards& symbolic = entry->guards.symbolic();
  if (symbolic.num_symbols() == 0) return status;
  std::vector<int64_t> values(symbolic.num_symbols(), -1);
  for (const SymbolicGuards::DimBinding& b : symbolic.dims) {
    if (values[b.symbol] < 0 &&
        b.input < static_cast<int>(call.inputs.size()) &&
        b.dim < call.inputs[b.input].rank) {
      values[b.symbol] = call.inputs[b.input].sizes[b.dim];
    }
  }
  return WithSymbolSources(status, symbolic.symbol_names, values);
}

}  // namespace guardjit
