#include "capi/dlpack_convert.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace guardjit::capi {
namespace {

// DLPack allows any rank; ours stops where a shape could still be printed in
// an error message and a stack array of sizes is cheap.
constexpr int kMaxRank = 64;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

const char* DeviceTypeName(int type) {
  switch (type) {
    case kDLCPU:
      return "CPU";
    case kDLCUDA:
      return "CUDA";
    case kDLCUDAHost:
      return "CUDAHost";
    case kDLOpenCL:
      return "OpenCL";
    case kDLVulkan:
      return "Vulkan";
    case kDLMetal:
      return "Metal";
    case kDLVPI:
      return "VPI";
    case kDLROCM:
      return "ROCM";
    case kDLROCMHost:
      return "ROCMHost";
    case kDLExtDev:
      return "ExtDev";
    case kDLCUDAManaged:
      return "CUDAManaged";
  }
  return "unknown";
}

// The device a DLTensor's memory is on, or why guardjit cannot read it.
// Pinned host memory (kDLCUDAHost) is host memory to every kernel.
absl::StatusOr<Device> CheckDevice(DLDevice device, absl::string_view what) {
  // A host may store any int in the enum field: read it as one (loading an
  // out-of-range value as DLDeviceType is undefined).
  int type = 0;
  std::memcpy(&type, &device.device_type, sizeof(type));
  if (type == kDLCPU) {
    // There is one host: PyTorch, NumPy and DLPack's own docs use id 0.
    if (device.device_id == 0) return Device::Cpu();
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": CPU tensor with device_id ", device.device_id,
                     "; CPU tensors have device_id 0"));
  }
  if (type == kDLCUDAHost) {
    if (device.device_id >= 0) return Device::Cpu();
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": CUDAHost tensor with device_id ", device.device_id,
        "; expected a CUDA device ordinal (0 or more)"));
  }
  if (type == kDLCUDA) {
    if (device.device_id >= 0)
      return Device{DeviceType::kCUDA, device.device_id};
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": CUDA tensor with device_id ", device.device_id,
                     "; expected a CUDA device ordinal (0 or more)"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": tensor is on device ", DeviceTypeName(type), " (type ", type,
      ", id ", device.device_id,
      "); supported: CPU, CUDAHost (pinned host memory) and CUDA"));
}

// Lowest and highest element offsets the tensor touches, relative to its
// first element, or OUT_OF_RANGE. Sizes are non-negative and numel > 0.
absl::Status ElementSpan(absl::Span<const int64_t> sizes,
                         absl::Span<const int64_t> strides,
                         absl::string_view what, int64_t* lo, int64_t* hi) {
  __int128 low = 0, high = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] <= 1) continue;
    __int128 span = static_cast<__int128>(strides[d]) * (sizes[d] - 1);
    (span >= 0 ? high : low) += span;
    if (high > kInt64Max || -low > kInt64Max) {
      return absl::OutOfRangeError(absl::StrCat(
          what, ": strides [", absl::StrJoin(strides, ", "), "] for sizes [",
          absl::StrJoin(sizes, ", "), "] reach past 2^63 elements"));
    }
  }
  *lo = static_cast<int64_t>(low);
  *hi = static_cast<int64_t>(high);
  return absl::OkStatus();
}

}  // namespace

DLDataType ToDLDataType(DType dtype) {
  const uint8_t bits = static_cast<uint8_t>(ItemSize(dtype) * 8);
  switch (dtype) {
    case DType::kBool:
      return {GJ_DL_BOOL, 8, 1};
    case DType::kUInt8:
      return {kDLUInt, bits, 1};
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
      return {kDLInt, bits, 1};
    case DType::kBFloat16:
      return {kDLBfloat, bits, 1};
    case DType::kFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      return {kDLFloat, bits, 1};
  }
  return {kDLFloat, 32, 1};
}

absl::StatusOr<DType> FromDLDataType(DLDataType type, absl::string_view what) {
  if (type.lanes == 1) {
    switch (type.code) {
      case kDLFloat:
        if (type.bits == 16) return DType::kFloat16;
        if (type.bits == 32) return DType::kFloat32;
        if (type.bits == 64) return DType::kFloat64;
        break;
      case kDLBfloat:
        if (type.bits == 16) return DType::kBFloat16;
        break;
      case kDLInt:
        if (type.bits == 8) return DType::kInt8;
        if (type.bits == 16) return DType::kInt16;
        if (type.bits == 32) return DType::kInt32;
        if (type.bits == 64) return DType::kInt64;
        break;
      case kDLUInt:
        if (type.bits == 8) return DType::kUInt8;
        break;
      case GJ_DL_BOOL:
        if (type.bits == 8) return DType::kBool;
        break;
      default:
        break;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      what, ": unsupported dtype (code ", static_cast<int>(type.code),
      ", bits ", static_cast<int>(type.bits), ", lanes ",
      static_cast<int>(type.lanes),
      "); supported: float16/32/64, bfloat16, int8/16/32/64, uint8, bool "
      "(code ",
      GJ_DL_BOOL, ", bits 8), all with lanes 1"));
}

absl::StatusOr<Tensor> BorrowDLTensor(const DLTensor* tensor,
                                      absl::string_view what) {
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is NULL"));
  }
  const DLTensor& t = *tensor;
  if (t.ndim < 0 || t.ndim > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ndim is ", t.ndim, "; expected 0 to ", kMaxRank));
  }
  if (t.shape == nullptr && t.ndim > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape is NULL with ndim ", t.ndim));
  }
  const IntSpan sizes(t.shape, t.ndim);
  for (int d = 0; d < t.ndim; ++d) {
    if (sizes[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": negative size ", sizes[d], " at dim ", d,
                       " of shape [", absl::StrJoin(sizes, ", "), "]"));
    }
  }
  ASSIGN_OR_RETURN(DType dtype, FromDLDataType(t.dtype, what));
  ASSIGN_OR_RETURN(const Device device, CheckDevice(t.device, what));
  auto numel = CheckedNumel(sizes);
  if (!numel.ok()) {
    return absl::Status(numel.status().code(),
                        absl::StrCat(what, ": ", numel.status().message()));
  }
  const int64_t item_size = ItemSize(dtype);
  const Shape strides = t.strides == nullptr
                            ? ContiguousStrides(sizes)
                            : Shape(t.strides, t.strides + t.ndim);
  if (*numel == 0) {
    // Hosts may pass NULL data for empty tensors. Nothing is read through
    // it, but kernels may still hand it to memcpy with a size of 0, which
    // must not see NULL.
    alignas(8) static char empty_data[8];
    return Tensor::Borrow(t.data != nullptr ? t.data : empty_data, dtype, sizes,
                          strides, device);
  }
  int64_t lo = 0, hi = 0;
  RETURN_IF_ERROR(ElementSpan(sizes, strides, what, &lo, &hi));
  // Bytes from the lowest to the end of the highest element, then the same
  // measured from `data`: both must stay below 2^63.
  __int128 extent = (static_cast<__int128>(hi) - lo + 1) * item_size;
  __int128 end = static_cast<__int128>(t.byte_offset) +
                 (static_cast<__int128>(hi) + 1) * item_size;
  if (extent > kInt64Max || end > kInt64Max) {
    return absl::OutOfRangeError(
        absl::StrCat(what, ": ", DTypeName(dtype), " tensor of shape [",
                     absl::StrJoin(sizes, ", "), "] with strides [",
                     absl::StrJoin(strides, ", "), "] and byte_offset ",
                     t.byte_offset, " spans more than 2^63 bytes"));
  }
  if (t.data == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": data is NULL for a tensor of ", *numel, " elements"));
  }
  const uintptr_t first = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  if (first < reinterpret_cast<uintptr_t>(t.data) ||
      static_cast<__int128>(first) + static_cast<__int128>(lo) * item_size <
          0 ||
      static_cast<__int128>(first) +
              (static_cast<__int128>(hi) + 1) * item_size >
          static_cast<__int128>(std::numeric_limits<uintptr_t>::max())) {
    return absl::OutOfRangeError(
        absl::StrCat(what, ": elements lie outside the address space"));
  }
  if (first % item_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": data + byte_offset is not aligned to the ",
                     item_size, "-byte item size of ", DTypeName(dtype)));
  }
  return Tensor::Borrow(reinterpret_cast<void*>(first), dtype, sizes, strides,
                        device);
}

bool IsNonOverlapping(const Tensor& tensor) {
  if (tensor.numel() <= 1) return true;
  absl::InlinedVector<std::pair<uint64_t, int64_t>, 6> dims;  // |stride|, size
  for (int d = 0; d < tensor.dim(); ++d) {
    if (tensor.size(d) <= 1) continue;
    int64_t s = tensor.stride(d);
    dims.push_back(
        {s < 0 ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s),
         tensor.size(d)});
  }
  std::sort(dims.begin(), dims.end());
  // The validated extent stays below 2^63, so the span cannot overflow.
  uint64_t span = 0;
  bool dense_rule = true;
  for (const auto& [stride, size] : dims) {
    if (stride <= span) {
      dense_rule = false;
      break;
    }
    span += stride * static_cast<uint64_t>(size - 1);
  }
  if (dense_rule) return true;
  // Layouts the rule cannot decide (interleaved strides such as [4, 3] for
  // sizes [10, 4]) are decided exactly, element by element, up to
  // kMaxExactOverlapCheck elements; larger ones count as overlapping.
  if (tensor.numel() > kMaxExactOverlapCheck) return false;
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(tensor.numel()));
  std::vector<int64_t> index(tensor.dim(), 0);
  for (int64_t n = 0; n < tensor.numel(); ++n) {
    int64_t offset = 0;
    for (int d = 0; d < tensor.dim(); ++d)
      offset += index[d] * tensor.stride(d);
    offsets.push_back(offset);
    for (int d = tensor.dim() - 1; d >= 0; --d) {
      if (++index[d] < tensor.size(d)) break;
      index[d] = 0;
    }
  }
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

namespace {

// What a DLManagedTensor's manager_ctx owns.
struct ExportedTensor {
  Tensor tensor;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed;
};

void DeleteExported(DLManagedTensor* self) {
  delete static_cast<ExportedTensor*>(self->manager_ctx);
}

}  // namespace

DLManagedTensor* ExportDLManagedTensor(Tensor tensor) {
  auto exported = std::make_unique<ExportedTensor>();
  exported->shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  exported->strides.assign(tensor.strides().begin(), tensor.strides().end());
  DLTensor& dl = exported->managed.dl_tensor;
  dl.data = tensor.data();
  dl.device = tensor.device().is_cpu()
                  ? DLDevice{kDLCPU, 0}
                  : DLDevice{kDLCUDA, tensor.device().index};
  dl.ndim = tensor.dim();
  dl.dtype = ToDLDataType(tensor.dtype());
  dl.shape = exported->shape.data();
  dl.strides = exported->strides.data();
  dl.byte_offset = 0;
  exported->tensor = std::move(tensor);
  exported->managed.manager_ctx = exported.get();
  exported->managed.deleter = &DeleteExported;
  return &exported.release()->managed;
}

}  // namespace guardjit::capi
