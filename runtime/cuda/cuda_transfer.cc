#include "runtime/cuda/cuda_transfer.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/tensor_copy.h"

namespace guardjit {

namespace {

CUstream Stream(void* stream) { return static_cast<CUstream>(stream); }
CUdeviceptr Address(uintptr_t p) { return static_cast<CUdeviceptr>(p); }

// `t`'s elements as one byte span and the offset of element 0 in it.
struct Span {
  uintptr_t begin = 0;
  size_t bytes = 0;
  int64_t first_element = 0;  // elements from `begin` to element 0
};
Span SpanOf(const Tensor& t) {
  const ByteRange range = MemoryRange(t);
  Span span;
  span.begin = range.begin;
  span.bytes = range.end - range.begin;
  span.first_element = static_cast<int64_t>(
      (reinterpret_cast<uintptr_t>(t.data()) - range.begin) / t.item_size());
  return span;
}

}  // namespace

absl::StatusOr<Tensor> CudaToHost(const Tensor& t, void* stream) {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  // No elements, no span: an empty host tensor of the same sizes (the
  // span's element-0 offset would be computed from an empty range).
  if (t.numel() == 0) return Tensor::Empty(t.dtype(), t.sizes());
  const Span span = SpanOf(t);
  const int64_t elements = static_cast<int64_t>(span.bytes) / t.item_size();
  ASSIGN_OR_RETURN(Tensor host, Tensor::Empty(t.dtype(), {elements}));
  RETURN_IF_CUDA_ERROR(driver->cuMemcpyDtoHAsync(
      host.data(), Address(span.begin), span.bytes, Stream(stream)));
  RETURN_IF_CUDA_ERROR(driver->cuStreamSynchronize(Stream(stream)));
  return host.AsStrided(t.sizes(), t.strides(), span.first_element);
}

absl::StatusOr<Tensor> CudaToDevice(const Tensor& t, Device device,
                                    std::shared_ptr<Allocator> allocator,
                                    void* stream) {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  if (t.numel() == 0) {
    return Tensor::Empty(t.dtype(), t.sizes(), std::move(allocator), device);
  }
  // The element span, so the device copy keeps `t`'s strides (kernels were
  // planned for the input's layout).
  const Span span = SpanOf(t);
  const int64_t elements = static_cast<int64_t>(span.bytes) / t.item_size();
  ASSIGN_OR_RETURN(Tensor dev, Tensor::Empty(t.dtype(), {elements},
                                             std::move(allocator), device));
  RETURN_IF_CUDA_ERROR(driver->cuMemcpyHtoDAsync(
      Address(reinterpret_cast<uintptr_t>(dev.data())),
      reinterpret_cast<const void*>(span.begin), span.bytes, Stream(stream)));
  // The driver stages pageable memory before returning; pinned memory it
  // reads later, and `t` may be a temporary: wait so it outlives the copy.
  RETURN_IF_CUDA_ERROR(driver->cuStreamSynchronize(Stream(stream)));
  return dev.AsStrided(t.sizes(), t.strides(), span.first_element);
}

absl::Status CudaCopyInto(const Tensor& dst, const Tensor& src, void* stream) {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  if (dst.numel() == 0) return absl::OkStatus();
  if (dst.dtype() != src.dtype()) {
    return absl::InternalError("CudaCopyInto: dtypes differ");
  }
  if (dst.is_contiguous() && src.is_contiguous()) {
    RETURN_IF_CUDA_ERROR(driver->cuMemcpyDtoDAsync(
        Address(reinterpret_cast<uintptr_t>(dst.data())),
        Address(reinterpret_cast<uintptr_t>(src.data())),
        static_cast<size_t>(dst.numel()) * dst.item_size(), Stream(stream)));
    return absl::OkStatus();
  }
  // Strided: both spans to the host, the elements copied there, the
  // destination's span back (bytes between its elements are written back
  // unchanged).
  ASSIGN_OR_RETURN(Tensor host_src, CudaToHost(src, stream));
  ASSIGN_OR_RETURN(Tensor host_dst, CudaToHost(dst, stream));
  CopyInto(host_dst, host_src);
  const Span span = SpanOf(dst);
  const uintptr_t host_begin = reinterpret_cast<uintptr_t>(host_dst.data()) -
                               span.first_element * dst.item_size();
  RETURN_IF_CUDA_ERROR(driver->cuMemcpyHtoDAsync(
      Address(span.begin), reinterpret_cast<const void*>(host_begin),
      span.bytes, Stream(stream)));
  RETURN_IF_CUDA_ERROR(driver->cuStreamSynchronize(Stream(stream)));
  return absl::OkStatus();
}

absl::StatusOr<Tensor> CudaContiguous(const Tensor& src,
                                      std::shared_ptr<Allocator> allocator,
                                      void* stream) {
  ASSIGN_OR_RETURN(Tensor dst,
                   Tensor::Empty(src.dtype(), src.sizes(), std::move(allocator),
                                 src.device()));
  RETURN_IF_ERROR(CudaCopyInto(dst, src, stream));
  return dst;
}

}  // namespace guardjit
