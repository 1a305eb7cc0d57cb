// Kernels of the size ops (core/ops/sym.cc): each value is a 0-dim wrapped
// number, int64 for sizes and bool for comparisons. cond has no kernel of
// its own: the interpreter runs its branches.

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ops/control_flow.h"
#include "core/ops/sym_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"
#include "core/value_inputs.h"
#include "runtime/kernel_registry.h"
#include "runtime/kernels/register_kernels.h"
#include "runtime/kernels/storage_offset.h"

namespace guardjit {
namespace {

using Tensors = std::vector<Tensor>;
using Metas = absl::Span<const TensorMeta>;

int64_t IntOperand(const KernelArgs& args, int i) {
  const Arg& raw = args.raw(i);
  if (raw.is_int()) return raw.as_int();
  if (raw.is_bool()) return raw.as_bool() ? 1 : 0;
  return args.tensor(i).ItemAsInt64();
}

absl::StatusOr<Tensors> SymSizeKernel(const KernelArgs& args, Metas) {
  const Tensor self = args.tensor(0);
  ASSIGN_OR_RETURN(int dim, NormalizeDim(args.int_arg(1), self.dim()));
  return Tensors{Tensor::WrappedNumber(Scalar(self.sizes()[dim]))};
}

// The real tensor's stride and storage offset (a borrowed input is its own
// storage, at offset 0).
absl::StatusOr<Tensors> SymStrideKernel(const KernelArgs& args, Metas) {
  const Tensor self = args.tensor(0);
  if (self.dim() == 0) {
    return absl::InvalidArgumentError(
        "argument 'self': a 0-dim tensor has no strides");
  }
  auto dim = NormalizeDim(args.int_arg(1), self.dim());
  if (!dim.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 'dim': ", dim.status().message()));
  }
  return Tensors{Tensor::WrappedNumber(Scalar(self.stride(*dim)))};
}

absl::StatusOr<Tensors> SymStorageOffsetKernel(const KernelArgs& args, Metas) {
  return Tensors{
      Tensor::WrappedNumber(Scalar(StorageOffsetOf(args.tensor(0))))};
}

absl::StatusOr<Tensors> SymNumelKernel(const KernelArgs& args, Metas) {
  return Tensors{Tensor::WrappedNumber(Scalar(args.tensor(0).numel()))};
}

KernelFn SymOpKernel(const SymOpDef& def) {
  return [def](const KernelArgs& args, Metas) -> absl::StatusOr<Tensors> {
    const int64_t a = IntOperand(args, 0), b = IntOperand(args, 1);
    if ((def.op == SymOp::kFloorDiv || def.op == SymOp::kMod) && b == 0) {
      return absl::InvalidArgumentError(
          "argument 'b': integer division or modulo by zero");
    }
    const int64_t v = ApplySymOp<int64_t>(def.op, a, b);
    return Tensors{def.compare ? Tensor::WrappedNumber(Scalar(v != 0))
                               : Tensor::WrappedNumber(Scalar(v))};
  };
}

}  // namespace

absl::Status RegisterSymKernels(KernelRegistry& registry) {
  RETURN_IF_ERROR(registry.Register("aten.sym_size.int", SymSizeKernel));
  RETURN_IF_ERROR(registry.Register("aten.sym_numel.default", SymNumelKernel));
  RETURN_IF_ERROR(registry.Register("aten.sym_stride.int", SymStrideKernel));
  RETURN_IF_ERROR(registry.Register("aten.sym_storage_offset.default",
                                    SymStorageOffsetKernel));
  for (const SymOpDef& def : kSymOps) {
    RETURN_IF_ERROR(registry.Register(def.target, SymOpKernel(def)));
  }
  RETURN_IF_ERROR(registry.Register(
      kValueSpecializedTarget,
      [](const KernelArgs&, Metas) -> absl::StatusOr<Tensors> {
        return absl::FailedPreconditionError(
            "the graph runs only specialized to the values of its "
            "value-specialized inputs, which rebuild it: call it through a "
            "function");
      }));
  return registry.Register(
      kCondTarget, [](const KernelArgs&, Metas) -> absl::StatusOr<Tensors> {
        return absl::InternalError(
            "cond runs in the interpreter, which picks a branch");
      });
}

}  // namespace guardjit
