#ifndef GUARDJIT_CORE_COMPILER_H_
#define GUARDJIT_CORE_COMPILER_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/executable.h"
#include "core/graph.h"
#include "core/run_context.h"
#include "core/shape_inference.h"
#include "core/tensor.h"
#include "core/tensor_meta.h"

namespace guardjit {

// Where a call supplies a symbol's value: inputs[input].sizes[dim].
struct SymbolSource {
  int input = 0;
  int dim = 0;
};

// The graph specialized to one cache entry: each input's dtype and sizes,
// which are symbols s0, s1, ... where the entry is dynamic. `meta` is every
// value's metadata over those symbols (empty: the compiler infers it from
// `inputs`). A dynamic entry's executable serves every call its guards
// accept: it reads symbol i from symbols[i] on each call.
struct Specialization {
  std::vector<TensorMeta> inputs;
  GraphMeta meta;
  std::vector<SymbolSource> symbols;
  // The sizes and strides of the call that made the entry, per input (empty:
  // contiguous inputs of `inputs`' sizes). A backend plans for this layout
  // at compile time; the entry's guards accept only calls laid out alike
  // (static strides, or for symbolic sizes the same dim order).
  std::vector<Shape> example_sizes;
  std::vector<Shape> example_strides;
  // Per symbol, the largest value a call the entry's guards accept can give
  // it: the mark_dynamic max, or what the entry's shape guards imply
  // (INT64_MAX: unbounded; empty: all unbounded). A backend may rely on
  // these (the CUDA backend's 32-bit index math) without guarding them.
  std::vector<int64_t> symbol_max;
  // Whether the backend may also rely on bounds it picks itself from the
  // call that made the entry (Executable::chosen_bounds), which the caller
  // then adds to the entry's guards (Function does; it clears this when the
  // call missed an entry by exceeding such a bound, so that entry's
  // successor serves every size). Off by default: an executable compiled
  // for a caller that guards nothing relies on nothing it was not told.
  bool may_choose_bounds = false;

  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

  bool dynamic() const { return !symbols.empty(); }
};

// How core reaches a backend (DESIGN.md: core talks to a Compiler interface
// implemented in runtime/ or jit/). Implementations are thread-safe.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // Compiles `graph` (already specialized: no cond nodes left) for `spec`;
  // errors name the node (unsupported op, shapes the graph rejects).
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) = 0;
  // The eager interpreter, for calls past the recompile limit.
  virtual absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) = 0;
  virtual std::string name() const = 0;
  // `tensor` in host memory, once the work writing it on ctx's stream is
  // done: a graph break's predicate read (the one synchronization of a break
  // on a GPU). CPU tensors come back as they are; the default refuses
  // others.
  virtual absl::StatusOr<Tensor> ToHost(const Tensor& tensor,
                                        const RunContext& ctx) {
    (void)ctx;
    if (tensor.device().is_cpu()) return tensor;
    return absl::UnimplementedError(
        absl::StrCat("backend ", name(), " cannot read a ",
                     tensor.device().ToString(), " tensor on the host"));
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_COMPILER_H_
