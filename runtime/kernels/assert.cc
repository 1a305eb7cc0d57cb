// Reference kernels of _assert_tensor_metadata (the shape rule's dtype and
// size checks, on the tensor the call has; core/ops/assert.cc says what is
// not checked and why) and _assert_scalar. They return no tensors.

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"

namespace guardjit {
namespace {

absl::StatusOr<std::vector<Tensor>> AssertTensorMetadataKernel(
    const KernelArgs& args, absl::Span<const TensorMeta>) {
  const Tensor a = args.tensor(0);
  if (std::optional<DType> dtype = args.optional_dtype(3);
      dtype.has_value() && *dtype != a.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'dtype': Tensor dtype mismatch! Expected: ",
                     DTypeName(*dtype), ", Got: ", DTypeName(a.dtype())));
  }
  if (std::optional<std::vector<int64_t>> size = args.optional_int_list(1);
      size.has_value() && !std::equal(size->begin(), size->end(),
                                      a.sizes().begin(), a.sizes().end())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'size': Tensor sizes mismatch! Expected: ",
        ShapeToString(*size), ", Got: ", ShapeToString(a.sizes())));
  }
  return std::vector<Tensor>{};
}

// _assert_scalar on the value the call computed.
absl::StatusOr<std::vector<Tensor>> AssertScalarKernel(
    const KernelArgs& args, absl::Span<const TensorMeta>) {
  if (!args.scalar(0).to_bool()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "argument 'self': ", args.optional_string(1).value_or("assertion")));
  }
  return std::vector<Tensor>{};
}

}  // namespace

absl::Status RegisterAssertKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten._assert_tensor_metadata.default",
                                    AssertTensorMetadataKernel));
  return registry.Register("aten._assert_scalar.default", AssertScalarKernel);
}

}  // namespace guardjit
