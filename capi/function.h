#ifndef GUARDJIT_CAPI_FUNCTION_H_
#define GUARDJIT_CAPI_FUNCTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/function.h"
#include "core/tensor.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {

// The ambient state a call runs under (what a guard cache will key on).
struct CallState {
  bool grad_mode = true;
  bool deterministic = false;
  const uint8_t* requires_grad = nullptr;  // per input; null = none
  const int32_t* cancel = nullptr;         // the host's stop flag
  absl::Time deadline = absl::InfiniteFuture();
  // Where the call's tensors are (CallDevice in call.cc), and for a CUDA
  // call the CUstream it is enqueued on (null: the legacy default stream)
  // and whether it waits for the stream before returning.
  Device device;
  void* stream = nullptr;
  bool synchronize = false;
};

// gj_function is core's Function (guard cache, options, explain) plus the
// context's host allocator; these run it for the C API, which adds only
// what needs runtime/: entering a CUDA device's primary context and taking
// the call's memory from its stream-ordered allocator.

// Runs on validated inputs (borrowed for the call), writing the outputs into
// `results` (one per output). Results may alias the inputs, each other, or
// the graph's constants (Function::AliasesConstant). `destinations` (empty,
// or one per output, null = allocate) are the caller's output tensors
// (RunContext::destinations): a hit whose outputs are all written in place
// allocates nothing.
absl::Status RunFunctionInto(const gj_function& function,
                             absl::Span<const Tensor> inputs,
                             const CallState& state,
                             absl::Span<const Tensor* const> destinations,
                             absl::Span<Tensor> results);
// RunFunctionInto returning the results.
absl::StatusOr<std::vector<Tensor>> RunFunction(
    const gj_function& function, absl::Span<const Tensor> inputs,
    const CallState& state, absl::Span<const Tensor* const> destinations = {});
// Compiles the entry calls with these inputs' metadata would use.
absl::Status PrecompileFunction(const gj_function& function,
                                absl::Span<const Tensor> inputs,
                                const CallState& state);

}  // namespace guardjit::capi

struct gj_function {
  std::unique_ptr<guardjit::Function> impl;
  // Host memory for outputs and intermediates (the context's); null = the
  // executables' default.
  std::shared_ptr<guardjit::Allocator> allocator;
};

#endif  // GUARDJIT_CAPI_FUNCTION_H_
