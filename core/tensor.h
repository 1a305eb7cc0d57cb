#ifndef GUARDJIT_CORE_TENSOR_H_
#define GUARDJIT_CORE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/allocator.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/scalar.h"

namespace guardjit {

using Shape = absl::InlinedVector<int64_t, 6>;
using IntSpan = absl::Span<const int64_t>;

// Memory a tensor may own. Borrowed tensors (host inputs) have none.
class Storage {
 public:
  // 64-byte aligned, uninitialized; from `allocator` (kept alive by the
  // storage, so memory may outlive whoever made the allocator) or, when
  // null, from the system.
  static absl::StatusOr<std::shared_ptr<Storage>> Allocate(
      size_t nbytes, std::shared_ptr<Allocator> allocator = nullptr);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

 private:
  Storage(void* data, size_t nbytes, std::shared_ptr<Allocator> allocator)
      : data_(data), nbytes_(nbytes), allocator_(std::move(allocator)) {}
  void* data_;
  size_t nbytes_;
  std::shared_ptr<Allocator> allocator_;
};

// Product of `sizes`, or an error if it overflows int64.
absl::StatusOr<int64_t> CheckedNumel(IntSpan sizes);
// Row-major strides for `sizes`, in elements.
Shape ContiguousStrides(IntSpan sizes);

// A strided view of typed memory: PyTorch's Tensor without autograd. Strides
// are in elements; `data` points at element [0, ..., 0] (storage offset
// already applied). Copying a Tensor copies the view, not the data.
class Tensor {
 public:
  Tensor() = default;

  // A new contiguous tensor; fails on overflow-sized shapes or negative dims.
  static absl::StatusOr<Tensor> Empty(DType dtype, IntSpan sizes,
                                      Device device = Device::Cpu());
  // The same with memory from `allocator` (null: the system's host memory).
  // A tensor on a device needs that device's allocator (its blocks are
  // device addresses the host never dereferences).
  static absl::StatusOr<Tensor> Empty(DType dtype, IntSpan sizes,
                                      std::shared_ptr<Allocator> allocator,
                                      Device device = Device::Cpu());
  static absl::StatusOr<Tensor> Zeros(DType dtype, IntSpan sizes);
  // A view of memory the caller owns and keeps alive.
  static Tensor Borrow(void* data, DType dtype, IntSpan sizes, IntSpan strides,
                       Device device = Device::Cpu());
  // A 0-dim tensor holding `value` converted to `dtype`.
  static Tensor FromScalar(const Scalar& value, DType dtype);
  // A 0-dim tensor from a Python number literal (a "wrapped number").
  static Tensor WrappedNumber(const Scalar& value);
  // The same holding `value` converted to `dtype`: the number a
  // data-dependent op read from a `dtype` tensor (tensor.item()).
  static Tensor WrappedNumber(const Scalar& value, DType dtype);

  DType dtype() const { return dtype_; }
  const Device& device() const { return device_; }
  int dim() const { return static_cast<int>(sizes_.size()); }
  IntSpan sizes() const { return sizes_; }
  IntSpan strides() const { return strides_; }
  int64_t size(int d) const { return sizes_[d]; }
  int64_t stride(int d) const { return strides_[d]; }
  int64_t numel() const { return numel_; }
  int item_size() const { return ItemSize(dtype_); }
  bool is_contiguous() const;
  bool is_wrapped_number() const { return wrapped_number_; }
  // The single element of a one-element integer or bool tensor (a computed
  // size), as int64; 0 for anything else.
  int64_t ItemAsInt64() const;

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // A view sharing this tensor's memory. `offset` is in elements relative to
  // data(). The caller guarantees the view stays inside the memory.
  Tensor AsStrided(IntSpan sizes, IntSpan strides, int64_t offset = 0) const;

  // Value of element 0 of a one-element tensor, as a Scalar of the tensor's
  // category.
  Scalar Item() const;

  // "float32[2, 3]" (strides appended when not contiguous).
  std::string DebugString() const;

 private:
  std::shared_ptr<Storage> storage_;
  void* data_ = nullptr;
  DType dtype_ = DType::kFloat32;
  Device device_;
  Shape sizes_;
  Shape strides_;
  int64_t numel_ = 0;
  bool wrapped_number_ = false;
};

// The bytes a tensor's elements span; empty for numel 0.
struct ByteRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool Overlaps(const ByteRange& other) const {
    return begin < other.end && other.begin < end;
  }
};
ByteRange MemoryRange(const Tensor& tensor);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_TENSOR_H_
