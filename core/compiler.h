#ifndef GUARDJIT_CORE_COMPILER_H_
#define GUARDJIT_CORE_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/executable.h"
#include "core/graph.h"
#include "core/tensor_meta.h"

namespace guardjit {

// The graph specialized to one cache entry: each input's dtype and sizes.
// (Symbolic dims arrive with dynamic shapes; a static entry fixes them all.)
struct Specialization {
  std::vector<TensorMeta> inputs;
};

// How core reaches a backend (DESIGN.md: core talks to a Compiler interface
// implemented in runtime/ or jit/). Implementations are thread-safe.
class Compiler {
 public:
  virtual ~Compiler() = default;
  // Compiles `graph` for `spec`; errors name the node (unsupported op,
  // shapes the graph rejects).
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) = 0;
  // The eager interpreter, for calls past the recompile limit.
  virtual absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) = 0;
  virtual std::string name() const = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_COMPILER_H_
