// Reference kernels of the matrix products (mm, bmm, addmm); convolution is
// in convolution.cc. The shape rules in core/ops/linalg.cc have checked ranks,
// shapes and dtypes.

#include "core/status_macros.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/convolution.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

// Where output 0 goes: the caller's destination (KernelArgs::destination),
// which BatchedGemm writes with any strides, or a new tensor. BatchedGemm
// fails only before its first write (a bool dtype, out of memory for a
// contiguous copy of an operand), so these kernels write destinations.
absl::StatusOr<Tensor> Result(const KernelArgs& args, const TensorMeta& out) {
  if (const Tensor* dest = args.destination(0)) return *dest;
  return Tensor::Empty(out.dtype, out.shape());
}

absl::StatusOr<std::vector<Tensor>> MmKernel(const KernelArgs& args,
                                             absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(Tensor result, Result(args, out[0]));
  RETURN_IF_ERROR(BatchedGemm(
      AsBatchOfOne(args.tensor(0)), AsBatchOfOne(args.tensor(1)),
      AsBatchOfOne(result), Scalar(int64_t{1}), Scalar(int64_t{0})));
  return std::vector<Tensor>{result};
}

absl::StatusOr<std::vector<Tensor>> BmmKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  ASSIGN_OR_RETURN(Tensor result, Result(args, out[0]));
  RETURN_IF_ERROR(BatchedGemm(args.tensor(0), args.tensor(1), result,
                              Scalar(int64_t{1}), Scalar(int64_t{0})));
  return std::vector<Tensor>{result};
}

absl::StatusOr<std::vector<Tensor>> AddmmKernel(
    const KernelArgs& args, absl::Span<const TensorMeta> out) {
  const Scalar beta = args.scalar(3);
  const Scalar alpha = args.scalar(4);
  ASSIGN_OR_RETURN(Tensor result, Result(args, out[0]));
  // Nothing is written before a failure: the bool check BatchedGemm would
  // make after self is copied in comes first.
  if (out[0].dtype == DType::kBool) {
    return absl::InvalidArgumentError(
        "matrix products are not defined for bool");
  }
  // With beta == 0 self is not read at all (its NaNs do not propagate).
  if (beta.to_double() != 0.0) CopyInto(result, args.tensor(0));
  RETURN_IF_ERROR(BatchedGemm(AsBatchOfOne(args.tensor(1)),
                              AsBatchOfOne(args.tensor(2)),
                              AsBatchOfOne(result), alpha, beta));
  return std::vector<Tensor>{result};
}

}  // namespace

absl::Status RegisterLinalgKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.mm.default", MmKernel));
  RETURN_IF_ERROR(registry.Register("aten.bmm.default", BmmKernel));
  RETURN_IF_ERROR(registry.Register("aten.addmm.default", AddmmKernel));
  RETURN_IF_ERROR(registry.AllowDestinations(
      {"aten.mm.default", "aten.bmm.default", "aten.addmm.default"}));
  return RegisterConvolutionKernels(registry);
}

}  // namespace guardjit
