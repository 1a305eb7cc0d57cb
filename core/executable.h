#ifndef GUARDJIT_CORE_EXECUTABLE_H_
#define GUARDJIT_CORE_EXECUTABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/device.h"
#include "core/run_context.h"
#include "core/tensor.h"

namespace guardjit {

// A bound a compiled executable relies on: symbol `symbol` (in the order of
// Specialization::symbols) is at most `max`.
struct SymbolBound {
  int symbol = 0;
  int64_t max = 0;
};

// What a compile produces for one cache entry (an eager plan, JIT kernels, a
// CUDA graph). Implemented outside core (runtime/, jit/).
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on inputs that passed the entry's guards. Thread-safe. Returns one
  // tensor per graph output: for an output with a destination in `ctx`,
  // either a view of the destination (written in place) or a tensor the
  // caller copies into it. A destination that does not match its output is
  // INVALID_ARGUMENT before anything runs. Whatever fails (a bad index found
  // by a kernel, a stop request) leaves every destination unwritten.
  virtual absl::StatusOr<std::vector<Tensor>> Run(
      const RunContext& ctx, absl::Span<const Tensor> inputs) const = 0;
  // Run, writing the outputs into `results` (one per graph output) instead
  // of returning a vector: executables that implement it allocate nothing on
  // the host heap for a hit whose outputs all have destinations written in
  // place. The default calls Run.
  virtual absl::Status RunInto(const RunContext& ctx,
                               absl::Span<const Tensor> inputs,
                               absl::Span<Tensor> results) const;
  // Run and RunInto for a call whose guards already bound the entry's
  // symbols: `symbols` holds their values in the order of
  // Specialization::symbols (empty: read them from the inputs). The
  // defaults ignore them.
  virtual absl::StatusOr<std::vector<Tensor>> RunBound(
      const RunContext& ctx, absl::Span<const Tensor> inputs,
      absl::Span<const int64_t> symbols) const {
    return Run(ctx, inputs);
  }
  virtual absl::Status RunBoundInto(const RunContext& ctx,
                                    absl::Span<const Tensor> inputs,
                                    absl::Span<const int64_t> symbols,
                                    absl::Span<Tensor> results) const {
    return RunInto(ctx, inputs, results);
  }
  // Run with no destinations and no stop conditions.
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const {
    return Run(RunContext(), inputs);
  }
  // Bounds on the entry's symbols that the code relies on beyond
  // Specialization::symbol_max, picked by the compiler from the call that
  // made the entry (only with Specialization::may_choose_bounds; each at
  // least that call's value). The entry must guard every one (Function adds
  // "symbol <= max" to its guards), since a call beyond one would run code
  // that is wrong for it. Default: none.
  virtual absl::Span<const SymbolBound> chosen_bounds() const { return {}; }
  // Why the chosen bounds exist, completing "x.size()[0] = 3000000 exceeds
  // 1048576, the bound under which ...": "the entry's CUDA kernels index in
  // 32 bits". Empty when there are none.
  virtual std::string chosen_bounds_purpose() const { return ""; }
  // One line for explain(): "eager plan, 5 kernels".
  virtual std::string Describe() const = 0;
  // The memory its kernels read and write: inputs on another device must be
  // moved before it can run them (jit/device_compiler.h does).
  virtual Device device() const { return Device::Cpu(); }
};

inline absl::Status Executable::RunInto(const RunContext& ctx,
                                        absl::Span<const Tensor> inputs,
                                        absl::Span<Tensor> results) const {
  absl::StatusOr<std::vector<Tensor>> out = Run(ctx, inputs);
  if (!out.ok()) return out.status();
  if (out->size() != results.size()) {
    return absl::InternalError("executable returned a wrong output count");
  }
  for (size_t i = 0; i < results.size(); ++i) results[i] = (*out)[i];
  return absl::OkStatus();
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_EXECUTABLE_H_
