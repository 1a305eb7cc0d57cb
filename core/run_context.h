#ifndef GUARDJIT_CORE_RUN_CONTEXT_H_
#define GUARDJIT_CORE_RUN_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/cuda_graph_policy.h"
#include "core/tensor.h"

namespace guardjit {

// What one call hands an Executable beside its inputs (DESIGN.md, "Run
// contract"): where to write the outputs and when to stop.
struct RunContext {
  // Empty, or one per graph output: a caller-owned tensor to write that
  // output into (its elements do not overlap each other or another
  // destination), or null (the executable allocates). An executable checks
  // each destination's dtype and sizes against its output before running
  // anything, and returns for each output either a view of the destination
  // itself (written in place) or a tensor the caller copies into it.
  absl::Span<const Tensor* const> destinations;
  // The host's stop flag (gj_call_options.cancel): nonzero asks the run to
  // stop. Read with relaxed atomic loads; may be null.
  const int32_t* cancel = nullptr;
  // The run stops once this time passes (gj_call_options.timeout_us).
  absl::Time deadline = absl::InfiniteFuture();
  // Memory for outputs and intermediates: for a CPU call host memory (the
  // context's caching allocator; null: the executable's default), for a
  // CUDA call the device's stream-ordered allocator bound to `stream`.
  std::shared_ptr<Allocator> allocator;
  // CUDA calls: the CUstream work is enqueued on (null: the legacy default
  // stream), and whether the run waits for it and reports device-side check
  // failures of this call before returning (gj_call_options.synchronize).
  void* stream = nullptr;
  bool synchronize = false;
  // CUDA calls in reduce-overhead mode (gj_function_options.mode): record
  // each entry's launches into CUDA graphs and replay them; null: plain
  // launches. Owned by the function; CPU runs ignore it.
  const CudaGraphPolicy* cuda_graphs = nullptr;
  // The entry's symbol values its guards bound on a hit, in the order of
  // Specialization::symbols (Function sets them for the entry it runs);
  // empty: the executable reads them from the inputs.
  absl::Span<const int64_t> symbols;

  bool stoppable() const {
    return cancel != nullptr || deadline != absl::InfiniteFuture();
  }
  // CANCELLED or DEADLINE_EXCEEDED once the run should stop, else OK.
  // Executables check it before each step and each parallel chunk.
  absl::Status CheckStop() const {
    if (cancel != nullptr && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0) {
      return absl::CancelledError("cancelled by the host");
    }
    if (deadline != absl::InfiniteFuture() && absl::Now() >= deadline) {
      return absl::DeadlineExceededError("the call's timeout passed");
    }
    return absl::OkStatus();
  }
  // The destination of output `i`, or null.
  const Tensor* destination(size_t i) const {
    return i < destinations.size() ? destinations[i] : nullptr;
  }
};

// INVALID_ARGUMENT "output 1: expected float32[2, 3], got float32[3, 2]"
// unless output `output`'s destination, if it has one, has `dtype` and
// `sizes`. Executables call it for every output before running a step.
absl::Status CheckDestination(const RunContext& ctx, size_t output, DType dtype,
                              IntSpan sizes);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_RUN_CONTEXT_H_
