#ifndef GUARDJIT_RUNTIME_EAGER_COMPILER_H_
#define GUARDJIT_RUNTIME_EAGER_COMPILER_H_

#include <memory>
#include <string>

#include "core/compiler.h"

namespace guardjit {

// The backend until the JIT lands: a "compiled" entry is a specialized eager
// plan (every node's output shape and dtype resolved once at compile time, so
// a hit runs the reference kernels without shape inference).
class EagerCompiler : public Compiler {
 public:
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override;
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override;
  std::string name() const override { return "eager"; }
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_EAGER_COMPILER_H_
