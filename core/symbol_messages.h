#ifndef GUARDJIT_CORE_SYMBOL_MESSAGES_H_
#define GUARDJIT_CORE_SYMBOL_MESSAGES_H_

// Error messages of dynamic entries name size symbols ("s0"), which the
// caller never sees otherwise: these helpers append each named symbol's
// source and value ("... not broadcastable (s0 = x.size()[0], 7 in this
// call)").

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/cache_entry.h"
#include "core/call_signature.h"
#include "core/shape_env.h"

namespace guardjit {

// `status` with "sI = sources[I], values[I] in this call" appended for each
// symbol sI its message names. OK stays OK.
absl::Status WithSymbolSources(const absl::Status& status,
                               absl::Span<const std::string> sources,
                               absl::Span<const int64_t> values);

// The same for a specialization's symbols (their example values).
absl::Status WithSymbolSources(const absl::Status& status, const ShapeEnv& env);

// An error of a dynamic entry's run (a kernel's index check, a GEMM's
// extents) with the sources and this call's values of the size symbols it
// names. `entry` may be null (the eager fallback ran).
absl::Status WithCallSymbols(const absl::Status& status,
                             const CacheEntry* entry,
                             const CallSignature& call);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_SYMBOL_MESSAGES_H_
