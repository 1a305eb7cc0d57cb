#ifndef GUARDJIT_CORE_CALL_SIGNATURE_H_
#define GUARDJIT_CORE_CALL_SIGNATURE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/ambient_state.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/tensor.h"

namespace guardjit {

// One tensor input as the guards see it, borrowed from the host for the call.
// Built without allocation on the call path (capi fills it from DLTensor).
struct InputView {
  DType dtype = DType::kFloat32;
  Device device;
  bool requires_grad = false;
  int rank = 0;
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;  // in elements; non-null when rank > 0
  const void* data = nullptr;        // element [0, ...]

  IntSpan size_span() const { return IntSpan(sizes, rank); }
  IntSpan stride_span() const { return IntSpan(strides, rank); }
  bool empty() const {
    for (int d = 0; d < rank; ++d) {
      if (sizes[d] == 0) return true;
    }
    return false;
  }
  static InputView Of(const Tensor& t, bool requires_grad = false) {
    return {t.dtype(),        t.device(),         requires_grad, t.dim(),
            t.sizes().data(), t.strides().data(), t.data()};
  }
};

// Everything a call's guards read.
struct CallSignature {
  absl::Span<const InputView> inputs;
  AmbientState ambient;
};

// The first input whose first element is at the same address as input i's,
// or i itself. Empty tensors never alias.
int FirstAlias(absl::Span<const InputView> inputs, size_t i);

// Inputs that share their first element's address with an earlier input:
// alias_of[i] is the first such input, or i itself. Empty tensors never alias.
// (TorchDynamo's NO_TENSOR_ALIASING / duplicate-input guards.)
void ComputeAliasing(absl::Span<const InputView> inputs,
                     std::vector<int>& alias_of);
// The same into caller-provided storage of inputs.size() (no allocation).
void ComputeAliasingInto(absl::Span<const InputView> inputs,
                         absl::Span<int> alias_of);
// The same check against a recorded pattern, without allocating.
bool AliasingMatches(absl::Span<const InputView> inputs,
                     absl::Span<const int> alias_of);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_CALL_SIGNATURE_H_
