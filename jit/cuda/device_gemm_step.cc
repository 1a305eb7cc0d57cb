#include "jit/cuda/device_gemm_step.h"

#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_transfer.h"

namespace guardjit {
namespace {

// An operand as cuBLASLt reads it: the view of the slot, or a contiguous
// device copy of it when cuBLASLt cannot read its strides (kept alive here
// until the product is enqueued; the allocator is stream-ordered).
struct Operand {
  Tensor storage;
  GemmMatrix matrix;
};

absl::StatusOr<Operand> OperandOf(const FixedRef& ref,
                                  absl::Span<const Tensor> slots,
                                  const std::shared_ptr<Allocator>& allocator,
                                  void* stream) {
  Operand operand;
  operand.storage =
      slots[ref.slot].AsStrided(ref.sizes, ref.strides, ref.offset);
  const int d = operand.storage.dim();
  if (!CublasLtGemm::ReadsInPlace(
          operand.storage.size(d - 2), operand.storage.size(d - 1),
          operand.storage.stride(d - 2), operand.storage.stride(d - 1))) {
    ASSIGN_OR_RETURN(operand.storage,
                     CudaContiguous(operand.storage, allocator, stream));
  }
  const Tensor& t = operand.storage;
  operand.matrix = GemmMatrix{t.data(), t.stride(d - 2), t.stride(d - 1),
                              d == 3 && t.size(0) > 1 ? t.stride(0) : 0};
  return operand;
}

GemmActivation ActivationOf(GemmStep::DeviceEpilogue::Activation activation) {
  switch (activation) {
    case GemmStep::DeviceEpilogue::Activation::kRelu:
      return GemmActivation::kRelu;
    case GemmStep::DeviceEpilogue::Activation::kGeluTanh:
      return GemmActivation::kGeluTanh;
    default:
      return GemmActivation::kNone;
  }
}

absl::StatusOr<int64_t> Run(const GemmStep& unbound, const KernelModule& module,
                            int kernel, const DeviceFaultWords* faults,
                            absl::Span<void* const> params,
                            absl::Span<const Tensor> slots,
                            absl::Span<const int64_t> symbols, Device device,
                            const std::shared_ptr<Allocator>& allocator,
                            const RunContext& ctx) {
  ASSIGN_OR_RETURN(const GemmStep step, unbound.Bind(symbols));
  ASSIGN_OR_RETURN(const CudaDevice* cuda, CudaDevice::Get(device.index));
  ASSIGN_OR_RETURN(CublasLtGemm * gemm, CublasLtGemm::ForDevice(*cuda));
  ASSIGN_OR_RETURN(CudaContextScope scope, cuda->MakeCurrent());
  ASSIGN_OR_RETURN(const Operand a,
                   OperandOf(step.a, slots, allocator, ctx.stream));
  ASSIGN_OR_RETURN(const Operand b,
                   OperandOf(step.b, slots, allocator, ctx.stream));
  CublasLtGemmArgs args;
  args.dtype = step.dtype;
  args.batch = step.batch;
  args.m = step.m;
  args.n = step.n;
  args.k = step.k;
  args.a = a.matrix;
  args.b = b.matrix;
  args.alpha = step.alpha;
  // The product: straight into the step's output when cuBLASLt computes
  // the whole epilogue, else into a buffer the epilogue kernel reads.
  Tensor product;
  if (step.device_epilogue.has_value()) {
    const GemmStep::DeviceEpilogue& epilogue = *step.device_epilogue;
    product = slots[epilogue.out_slot];
    args.activation = ActivationOf(epilogue.activation);
    if (epilogue.bias.has_value()) {
      const FixedRef& bias = *epilogue.bias;
      args.bias = static_cast<const char*>(slots[bias.slot].data()) +
                  bias.offset * ItemSize(step.dtype);
    }
    if (epilogue.c.has_value()) {
      const FixedRef& c = *epilogue.c;
      args.beta = epilogue.beta;
      args.c = GemmMatrix{static_cast<const char*>(slots[c.slot].data()) +
                              c.offset * ItemSize(step.dtype),
                          c.strides[0], c.strides[1], 0};
    }
  } else {
    absl::InlinedVector<int64_t, 3> sizes;
    if (step.batched) sizes.push_back(step.batch);
    sizes.push_back(step.m);
    sizes.push_back(step.n);
    ASSIGN_OR_RETURN(product,
                     Tensor::Empty(step.dtype, sizes, allocator, device));
  }
  const int rank = product.dim();
  args.d = GemmMatrix{product.data(), product.stride(rank - 2),
                      product.stride(rank - 1),
                      step.batched ? product.stride(0) : 0};
  RETURN_IF_ERROR(gemm->Run(args, ctx.stream, *allocator));
  if (step.device_epilogue.has_value()) return 0;
  absl::InlinedVector<void*, 8> pointers(params.begin(), params.end());
  pointers[step.product_param] = product.data();
  return module.Launch(kernel, pointers.data(), symbols, faults, ctx);
}

}  // namespace

absl::StatusOr<CublasLtGemmArgs> GraphedGemmArgs(
    const GemmStep& step, absl::Span<const Tensor> slots, const void* product,
    absl::FunctionRef<const void*(int slot, const void* address)> where) {
  auto matrix = [&](const FixedRef& ref,
                    const char* name) -> absl::StatusOr<GemmMatrix> {
    const Tensor view =
        slots[ref.slot].AsStrided(ref.sizes, ref.strides, ref.offset);
    const int d = view.dim();
    if (!CublasLtGemm::ReadsInPlace(view.size(d - 2), view.size(d - 1),
                                    view.stride(d - 2), view.stride(d - 1))) {
      return absl::FailedPreconditionError(absl::StrCat(
          "cuBLASLt reads its operand ", name,
          " through a contiguous copy from the call's allocator, which a CUDA "
          "graph does not record"));
    }
    return GemmMatrix{where(ref.slot, view.data()), view.stride(d - 2),
                      view.stride(d - 1),
                      d == 3 && view.size(0) > 1 ? view.stride(0) : 0};
  };
  CublasLtGemmArgs args;
  args.dtype = step.dtype;
  args.batch = step.batch;
  args.m = step.m;
  args.n = step.n;
  args.k = step.k;
  ASSIGN_OR_RETURN(args.a, matrix(step.a, "A"));
  ASSIGN_OR_RETURN(args.b, matrix(step.b, "B"));
  args.alpha = step.alpha;
  if (step.device_epilogue.has_value()) {
    const GemmStep::DeviceEpilogue& epilogue = *step.device_epilogue;
    args.activation = ActivationOf(epilogue.activation);
    if (epilogue.bias.has_value()) {
      const FixedRef& bias = *epilogue.bias;
      args.bias =
          where(bias.slot, static_cast<const char*>(slots[bias.slot].data()) +
                               bias.offset * ItemSize(step.dtype));
    }
    if (epilogue.c.has_value()) {
      const FixedRef& c = *epilogue.c;
      args.beta = epilogue.beta;
      args.c = GemmMatrix{
          where(c.slot, static_cast<const char*>(slots[c.slot].data()) +
                            c.offset * ItemSize(step.dtype)),
          c.strides[0], c.strides[1], 0};
    }
  }
  // The product: contiguous [B,] M, N.
  args.d = GemmMatrix{product, step.n, 1, step.batched ? step.m * step.n : 0};
  return args;
}

absl::StatusOr<int64_t> RunDeviceGemmStep(
    const GemmStep& step, const Node& node, const KernelModule& module,
    int kernel, const DeviceFaultWords* faults, absl::Span<void* const> params,
    absl::Span<const Tensor> slots, absl::Span<const int64_t> symbols,
    Device device, const std::shared_ptr<Allocator>& allocator,
    const RunContext& ctx) {
  absl::StatusOr<int64_t> failed = Run(step, module, kernel, faults, params,
                                       slots, symbols, device, allocator, ctx);
  if (failed.ok()) return failed;
  return absl::Status(
      failed.status().code(),
      absl::StrCat("node '", node.name, "' (", node.target,
                   ") on cuBLASLt: ", failed.status().message()));
}

}  // namespace guardjit
