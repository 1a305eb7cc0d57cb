// The ops whose output sizes depend on input values: nonzero, masked_select,
// unique and item (_local_scalar_dense). Each ends a compiled segment (a
// graph break, DESIGN.md); their shape rules answer UNIMPLEMENTED and the
// reference kernels (runtime/kernels/data_dependent.cc) size their results.

#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/status_macros.h"

namespace guardjit {

absl::Status RegisterDataDependentOps(OpRegistry& registry) {
  for (const char* schema : {
           "nonzero(Tensor self) -> Tensor",
           "masked_select(Tensor self, Tensor mask) -> Tensor",
           "_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
           "bool return_counts=False) -> (Tensor, Tensor, Tensor)",
           "unique_consecutive(Tensor self, bool return_inverse=False, "
           "bool return_counts=False, int? dim=None) -> (Tensor, Tensor, "
           "Tensor)",
           "_local_scalar_dense(Tensor self) -> Scalar",
       }) {
    RETURN_IF_ERROR(registry.RegisterDataDependent(schema));
  }
  return absl::OkStatus();
}

}  // namespace guardjit
