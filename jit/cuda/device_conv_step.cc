#include "jit/cuda/device_conv_step.h"

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering.h"
#include "jit/steps/extern_epilogue.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_transfer.h"

namespace guardjit {
namespace {

// The input as the im2col kernel reads it: sizes, strides and offset over
// the entry's symbols (a dynamic entry's batch is one).
TensorRef InputRef(const ConvStep& conv) {
  if (conv.symbolic.has_value()) return conv.symbolic->input;
  TensorRef ref;
  ref.slot = conv.input.slot;
  ref.sizes = ConstExprs(conv.input.sizes);
  ref.strides = ConstExprs(conv.input.strides);
  ref.offset = IndexExpr::Const(conv.input.offset);
  return ref;
}

// Whether cuBLASLt reads each group's [in_channels, positions] slice of an
// image of `input` as it is: the column matrix of a pointwise convolution.
bool ReadsInputInPlace(const ConvStep& conv, const FixedRef& input) {
  if (!conv.pointwise()) return false;
  const std::optional<int64_t> unit = FlatStride(input.sizes, input.strides, 2);
  return unit.has_value() &&
         CublasLtGemm::ReadsInPlace(conv.in_channels, conv.cols(),
                                    input.strides[1], *unit);
}

ValueExpr IndexValue(const IndexExpr& e) { return ValueExpr::Index(e); }

// The im2col kernel: at every point (n, c, k..., o...) of the column
// matrices, input[n, c, o * stride - padding + k * dilation] (zero in the
// padding), stored contiguously, so that point (n, g * in_channels + c', k,
// o) lands at row (c', k) and column o of image n's group g matrix.
KernelStep Im2ColKernel(const ConvStep& conv, int cols_slot,
                        const std::string& label) {
  KernelStep k;
  const TensorRef input = InputRef(conv);
  const int in_param = AddParam(k, input.slot, conv.dtype, /*output=*/false);
  const int out_param = AddParam(k, cols_slot, conv.dtype, /*output=*/true);
  std::vector<IndexExpr> extents, vars;
  const auto loop = [&](const IndexExpr& extent) {
    const int var = static_cast<int>(k.kernel.outer.size());
    k.kernel.outer.push_back({var, extent});
    extents.push_back(extent);
    vars.push_back(IndexExpr::Var(var));
    return vars.back();
  };
  const IndexExpr batch = conv.symbolic.has_value()
                              ? conv.symbolic->batch
                              : IndexExpr::Const(conv.batch);
  const IndexExpr n = loop(batch);
  const IndexExpr c = loop(IndexExpr::Const(conv.groups * conv.in_channels));
  const int first = 3 - conv.spatial;
  std::array<IndexExpr, 3> kv, ov;
  for (int d = first; d < 3; ++d) {
    kv[d] = loop(IndexExpr::Const(conv.kernel[d]));
  }
  for (int d = first; d < 3; ++d) {
    ov[d] = loop(IndexExpr::Const(conv.out[d]));
  }

  IndexExpr at = input.offset + n * input.strides[0] + c * input.strides[1];
  std::vector<ValueExpr> inside;
  for (int d = first; d < 3; ++d) {
    IndexExpr i = ov[d] * IndexExpr::Const(conv.stride[d]) +
                  kv[d] * IndexExpr::Const(conv.dilation[d]) +
                  IndexExpr::Const(-conv.padding[d]);
    if (conv.padding[d] > 0) {
      // Padding reads zero; the load itself stays inside the image.
      inside.push_back(ValueExpr::Binary(BinaryOp::kGe, IndexValue(i),
                                         IndexValue(IndexExpr::Const(0))));
      inside.push_back(
          ValueExpr::Binary(BinaryOp::kLt, IndexValue(i),
                            IndexValue(IndexExpr::Const(conv.in[d]))));
      i = IndexExpr::Min(IndexExpr::Max(i, IndexExpr::Const(0)),
                         IndexExpr::Const(conv.in[d] - 1));
    }
    at = at + i * input.strides[2 + d - first];
  }
  const DType compute = ComputeDType(conv.dtype);
  ValueExpr value = ValueExpr::Load(in_param, conv.dtype, at);
  if (compute != conv.dtype) value = ValueExpr::Cast(value, compute);
  if (!inside.empty()) {
    ValueExpr cond = inside[0];
    for (size_t j = 1; j < inside.size(); ++j) {
      cond = ValueExpr::Binary(BinaryOp::kAnd, cond, inside[j]);
    }
    value = ValueExpr::Where(cond, value, ValueExpr::Const(compute, 0));
  }
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.value = std::move(value);
  store.buffer = out_param;
  store.index = Linearize(vars, extents);
  k.kernel.stages.push_back(std::move(store));
  NameParams(k.kernel);
  k.allocate.push_back(cols_slot);
  k.computes.push_back(absl::StrCat(label, " (im2col)"));
  return k;
}

// The slot `epilogue` stores the product into when that is all it does (a
// bare convolution's kernel: conv_epilogue.h), else -1.
int BareStoreSlot(const KernelStep& epilogue, int product_param) {
  const Kernel& k = epilogue.kernel;
  if (k.stages.size() != 1 || k.num_checks != 0) return -1;
  const Stage& store = k.stages[0];
  if (store.kind != Stage::Kind::kStore || !store.loops.empty() ||
      store.value.kind() != ValueExpr::Kind::kLoad ||
      store.value.buffer() != product_param ||
      store.value.index() != store.index) {
    return -1;
  }
  std::vector<IndexExpr> sizes;
  for (const LoopRange& loop : k.outer) sizes.push_back(loop.extent);
  if (!IsPointIndex(store.index, sizes)) return -1;
  const int slot = epilogue.buffer_slots[store.buffer];
  return slot == epilogue.buffer_slots[product_param] &&
                 k.buffers[store.buffer].dtype == store.value.dtype()
             ? slot
             : -1;
}

// Element offsets of the operands of group g of image n, linear in both:
// base + n * per_image + g * per_group.
struct OperandWalk {
  const char* base;
  int64_t per_image, per_group;
  int64_t row_stride, col_stride;
};

// The cuBLASLt products of `step` (bound) over weight walk `a`, column
// walk `b` and product walk `d`: strided-batched over the longer of images
// and groups, one call per index of the other.
absl::InlinedVector<CublasLtGemmArgs, 4> ProductArgs(const ConvStep& step,
                                                     const OperandWalk& a,
                                                     const OperandWalk& b,
                                                     const OperandWalk& d) {
  const int64_t item = ItemSize(step.dtype);
  const bool over_images = step.batch >= step.groups;
  const int64_t calls = over_images ? step.groups : step.batch;
  const int64_t batch = over_images ? step.batch : step.groups;
  const auto matrix = [&](const OperandWalk& o, int64_t i) {
    const int64_t n = over_images ? 0 : i, g = over_images ? i : 0;
    const int64_t batch_stride =
        batch == 1 ? 0 : (over_images ? o.per_image : o.per_group);
    return GemmMatrix{o.base + (n * o.per_image + g * o.per_group) * item,
                      o.row_stride, o.col_stride, batch_stride};
  };
  absl::InlinedVector<CublasLtGemmArgs, 4> out;
  for (int64_t i = 0; i < calls; ++i) {
    CublasLtGemmArgs& args = out.emplace_back();
    args.dtype = step.dtype;
    args.batch = batch;
    args.m = step.out_channels;
    args.n = step.cols();
    args.k = step.rows();
    args.a = matrix(a, i);
    args.b = matrix(b, i);
    args.d = matrix(d, i);
  }
  return out;
}

absl::StatusOr<int64_t> Run(const ConvStep& unbound, const KernelModule& module,
                            int kernel, const DeviceFaultWords* faults,
                            absl::Span<void* const> params,
                            absl::Span<const Tensor> slots,
                            absl::Span<const int64_t> symbols, Device device,
                            const std::shared_ptr<Allocator>& allocator,
                            const RunContext& ctx) {
  ASSIGN_OR_RETURN(const ConvStep step, unbound.Bind(symbols));
  if (!step.device.has_value()) {
    return absl::InternalError("a host conv step in a device program");
  }
  ASSIGN_OR_RETURN(const CudaDevice* cuda, CudaDevice::Get(device.index));
  ASSIGN_OR_RETURN(CublasLtGemm * gemm, CublasLtGemm::ForDevice(*cuda));
  ASSIGN_OR_RETURN(CudaContextScope scope, cuda->MakeCurrent());
  const int64_t item = ItemSize(step.dtype);
  const int64_t rows = step.rows(), cols = step.cols();
  const int64_t out_channels = step.out_channels, groups = step.groups;

  // The weight: [groups * out_channels, rows] per group block.
  const FixedRef& w = step.weight;
  Tensor weight = slots[w.slot].AsStrided(w.sizes, w.strides, w.offset);
  std::optional<int64_t> unit = FlatStride(w.sizes, w.strides, 1);
  if (!unit.has_value() ||
      !CublasLtGemm::ReadsInPlace(out_channels, rows, w.strides[0], *unit)) {
    ASSIGN_OR_RETURN(weight, CudaContiguous(weight, allocator, ctx.stream));
    unit = 1;
  }
  const OperandWalk a{static_cast<const char*>(weight.data()), 0,
                      out_channels * weight.stride(0), weight.stride(0), *unit};

  // The column matrices: the im2col kernel's, or the input in place.
  OperandWalk b;
  if (step.device->cols_slot >= 0) {
    b = {static_cast<const char*>(slots[step.device->cols_slot].data()),
         groups * rows * cols, rows * cols, cols, 1};
  } else {
    const FixedRef& x = step.input;
    const std::optional<int64_t> x_unit = FlatStride(x.sizes, x.strides, 2);
    if (!ReadsInputInPlace(step, x) || !x_unit.has_value()) {
      return absl::InternalError(
          "the input of a pointwise convolution is not readable in place");
    }
    b = {static_cast<const char*>(slots[x.slot].data()) + x.offset * item,
         x.strides[0], step.in_channels * x.strides[1], x.strides[1], *x_unit};
  }

  // The product: the whole result, contiguous: the step's output when the
  // epilogue would only store it there, else a buffer the epilogue reads.
  const int64_t numel = step.batch * groups * out_channels * cols;
  const int out_slot = step.device->out_slot;
  const bool into_output = out_slot >= 0 && slots[out_slot].is_contiguous() &&
                           slots[out_slot].numel() == numel;
  Tensor product;
  if (into_output) {
    product = slots[out_slot];
  } else {
    ASSIGN_OR_RETURN(product,
                     Tensor::Empty(step.dtype, {numel}, allocator, device));
  }
  const OperandWalk d{static_cast<const char*>(product.data()),
                      groups * out_channels * cols, out_channels * cols, cols,
                      1};

  for (const CublasLtGemmArgs& args : ProductArgs(step, a, b, d)) {
    RETURN_IF_ERROR(gemm->Run(args, ctx.stream, *allocator));
  }
  if (into_output) return 0;
  absl::InlinedVector<void*, 8> pointers(params.begin(), params.end());
  pointers[step.product_param] = product.data();
  return module.Launch(kernel, pointers.data(), symbols, faults, ctx);
}

}  // namespace

std::optional<PlanStep> PlanDeviceConv(ConvStep& conv,
                                       const KernelStep& epilogue, Plan& plan,
                                       const std::string& label) {
  conv.device = ConvStep::Device{};
  conv.device->out_slot = BareStoreSlot(epilogue, conv.product_param);
  if (ReadsInputInPlace(conv, conv.input)) return std::nullopt;
  Slot slot;
  slot.source = Slot::Source::kKernel;
  slot.dtype = conv.dtype;
  slot.sizes = {conv.symbolic.has_value() ? conv.symbolic->batch
                                          : IndexExpr::Const(conv.batch),
                IndexExpr::Const(conv.groups), IndexExpr::Const(conv.rows()),
                IndexExpr::Const(conv.cols())};
  const int cols_slot = static_cast<int>(plan.slots.size());
  plan.slots.push_back(std::move(slot));
  // Its own allocation, not a buffer shared by liveness: device plans keep
  // the buffers Schedule assigned (PlanBuffers, which would count the conv
  // step's read of this slot, is not rerun for them).
  if (plan.slot_buffer.size() + 1 == plan.slots.size()) {
    plan.slot_buffer.push_back(-1);
  }
  conv.device->cols_slot = cols_slot;
  PlanStep step;
  step.is_kernel = true;
  step.node = -1;
  step.kernel = Im2ColKernel(conv, cols_slot, label);
  return step;
}

absl::StatusOr<absl::InlinedVector<CublasLtGemmArgs, 4>> GraphedConvArgs(
    const ConvStep& step, absl::Span<const Tensor> slots, const void* product,
    absl::FunctionRef<const void*(int slot, const void* address)> where) {
  if (!step.device.has_value()) {
    return absl::InternalError("a host conv step in a device program");
  }
  const int64_t item = ItemSize(step.dtype);
  const int64_t rows = step.rows(), cols = step.cols();
  const int64_t out_channels = step.out_channels, groups = step.groups;
  const FixedRef& w = step.weight;
  const std::optional<int64_t> unit = FlatStride(w.sizes, w.strides, 1);
  if (!unit.has_value() ||
      !CublasLtGemm::ReadsInPlace(out_channels, rows, w.strides[0], *unit)) {
    return absl::FailedPreconditionError(
        "cuBLASLt reads its operand A (the weight) through a contiguous copy "
        "from the call's allocator, which a CUDA graph does not record");
  }
  const char* weight = static_cast<const char*>(
      where(w.slot,
            static_cast<const char*>(slots[w.slot].data()) + w.offset * item));
  const OperandWalk a{weight, 0, out_channels * w.strides[0], w.strides[0],
                      *unit};
  OperandWalk b;
  if (step.device->cols_slot >= 0) {
    const int s = step.device->cols_slot;
    b = {static_cast<const char*>(where(s, slots[s].data())),
         groups * rows * cols, rows * cols, cols, 1};
  } else {
    const FixedRef& x = step.input;
    const std::optional<int64_t> x_unit = FlatStride(x.sizes, x.strides, 2);
    if (!ReadsInputInPlace(step, x) || !x_unit.has_value()) {
      return absl::FailedPreconditionError(
          "cuBLASLt cannot read operand B (the input of a pointwise "
          "convolution) in place at this call's strides");
    }
    b = {static_cast<const char*>(where(
             x.slot,
             static_cast<const char*>(slots[x.slot].data()) + x.offset * item)),
         x.strides[0], step.in_channels * x.strides[1], x.strides[1], *x_unit};
  }
  const OperandWalk d{static_cast<const char*>(product),
                      groups * out_channels * cols, out_channels * cols, cols,
                      1};
  return ProductArgs(step, a, b, d);
}

absl::StatusOr<int64_t> RunDeviceConvStep(
    const ConvStep& step, const Node& node, const KernelModule& module,
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
