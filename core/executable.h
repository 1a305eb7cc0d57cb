#ifndef GUARDJIT_CORE_EXECUTABLE_H_
#define GUARDJIT_CORE_EXECUTABLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/tensor.h"

namespace guardjit {

// What a compile produces for one cache entry (an eager plan, JIT kernels, a
// CUDA graph). Implemented outside core (runtime/, jit/).
class Executable {
 public:
  virtual ~Executable() = default;
  // Runs on inputs that passed the entry's guards. Thread-safe.
  virtual absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs) const = 0;
  // One line for explain(): "eager plan, 5 kernels".
  virtual std::string Describe() const = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_EXECUTABLE_H_
