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

// Where an executable's compiled code came from, kernel by kernel (each
// distinct kernel once): compiled for it, loaded from the persistent compile
// cache (runtime/compile_cache/), or already in this process's memory.
struct CodeOrigin {
  int compiled = 0;
  int loaded = 0;         // from the disk or the remote tier
  int loaded_remote = 0;  // of `loaded`, from the remote tier
  int reused = 0;
  // What compiling the loaded kernels took where they were compiled, and
  // the process that compiled the first of them.
  double original_compile_ms = 0;
  int64_t original_pid = 0;

  // Whether all of the code came from the persistent cache: nothing was
  // compiled, something was loaded.
  bool all_loaded() const { return compiled == 0 && loaded > 0; }
  void Add(const CodeOrigin& other) {
    if (original_pid == 0) original_pid = other.original_pid;
    compiled += other.compiled;
    loaded += other.loaded;
    loaded_remote += other.loaded_remote;
    reused += other.reused;
    original_compile_ms += other.original_compile_ms;
  }
};

// What a compile produces for one cache entry (an eager plan, JIT kernels, a
// CUDA graph). Implemented outside core (runtime/, jit/).
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on inputs that passed the entry's guards, writing one tensor per
  // graph output into `outputs` (num_outputs() of them). Thread-safe. For an
  // output with a destination in `ctx`, outputs[k] is either a view of the
  // destination (written in place) or a tensor the caller copies into it.
  // A destination that does not match its output is INVALID_ARGUMENT before
  // anything runs. Whatever fails (a bad index found by a kernel, a stop
  // request) leaves every destination unwritten. `ctx.symbols` may carry the
  // entry's symbol values its guards bound (empty: read from the inputs).
  // An executable whose outputs all have destinations written in place
  // allocates nothing on the host heap for a hit.
  virtual absl::Status Run(const RunContext& ctx,
                           absl::Span<const Tensor> inputs,
                           absl::Span<Tensor> outputs) const = 0;
  // How many tensors Run writes: the graph's outputs.
  virtual size_t num_outputs() const = 0;
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
  // Where its compiled code came from (default: nothing compiled).
  virtual CodeOrigin origin() const { return {}; }
  // One line for explain(): "eager plan, 5 kernels".
  virtual std::string Describe() const = 0;
  // Where its calls' time went, step by step, when the process profiles
  // them (GJ_PROFILE=1: runtime/program/step_profile.h); else empty.
  virtual std::string DescribeProfile() const { return ""; }
  // The memory its kernels read and write: inputs on another device must be
  // moved before it can run them (jit/device_compiler.h does).
  virtual Device device() const { return Device::Cpu(); }
};

// Executable::Run into a new vector (tools, tests, executables wrapping
// others).
inline absl::StatusOr<std::vector<Tensor>> RunToVector(
    const Executable& executable, const RunContext& ctx,
    absl::Span<const Tensor> inputs) {
  std::vector<Tensor> outputs(executable.num_outputs());
  absl::Status status = executable.Run(ctx, inputs, absl::MakeSpan(outputs));
  if (!status.ok()) return status;
  return outputs;
}
inline absl::StatusOr<std::vector<Tensor>> RunToVector(
    const Executable& executable, absl::Span<const Tensor> inputs) {
  return RunToVector(executable, RunContext(), inputs);
}

}  // namespace guardjit

#endif  // GUARDJIT_CORE_EXECUTABLE_H_
