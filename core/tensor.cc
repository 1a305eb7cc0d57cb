#include "core/tensor.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/half.h"
#include "core/host_memory.h"

namespace guardjit {

absl::StatusOr<std::shared_ptr<Storage>> Storage::Allocate(
    size_t nbytes, std::shared_ptr<Allocator> allocator) {
  constexpr size_t kAlign = 64;
  size_t rounded = (nbytes + kAlign - 1) / kAlign * kAlign;
  if (rounded < nbytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate ", nbytes, " bytes"));
  }
  void* p = allocator != nullptr ? allocator->Allocate(nbytes)
                                 : AllocateHostMemory(rounded);
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", nbytes, " bytes"));
  }
  return std::shared_ptr<Storage>(new Storage(p, nbytes, std::move(allocator)));
}

Storage::~Storage() {
  if (allocator_ != nullptr) {
    allocator_->Free(data_, nbytes_);
  } else {
    FreeHostMemory(data_);
  }
}

absl::StatusOr<int64_t> CheckedNumel(IntSpan sizes) {
  // The product of the nonzero sizes must fit even when a dim is 0: strides
  // and size arithmetic downstream multiply them regardless.
  int64_t n = 1;
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative size ", sizes[i], " at dim ", i));
    }
    if (sizes[i] == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(n, sizes[i], &n)) {
      return absl::OutOfRangeError(
          absl::StrCat("shape [", absl::StrJoin(sizes, ", "),
                       "] has more than 2^63 elements"));
    }
  }
  return empty ? 0 : n;
}

Shape ContiguousStrides(IntSpan sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

absl::StatusOr<Tensor> Tensor::Empty(DType dtype, IntSpan sizes,
                                     Device device) {
  if (!device.is_cpu()) {
    return absl::UnimplementedError(
        absl::StrCat("allocation on ", device.ToString(), " is not supported"));
  }
  return Empty(dtype, sizes, std::shared_ptr<Allocator>());
}

absl::StatusOr<Tensor> Tensor::Empty(DType dtype, IntSpan sizes,
                                     std::shared_ptr<Allocator> allocator,
                                     Device device) {
  if (!device.is_cpu() && allocator == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "allocation on ", device.ToString(), " needs that device's allocator"));
  }
  auto numel = CheckedNumel(sizes);
  if (!numel.ok()) return numel.status();
  int64_t nbytes;
  if (__builtin_mul_overflow(*numel, static_cast<int64_t>(ItemSize(dtype)),
                             &nbytes)) {
    return absl::OutOfRangeError(
        absl::StrCat("shape [", absl::StrJoin(sizes, ", "), "] of ",
                     DTypeName(dtype), " overflows the address space"));
  }
  auto storage =
      Storage::Allocate(static_cast<size_t>(nbytes), std::move(allocator));
  if (!storage.ok()) return storage.status();
  Tensor t;
  t.storage_ = *std::move(storage);
  t.data_ = t.storage_->data();
  t.dtype_ = dtype;
  t.device_ = device;
  t.sizes_.assign(sizes.begin(), sizes.end());
  t.strides_ = ContiguousStrides(sizes);
  t.numel_ = *numel;
  return t;
}

absl::StatusOr<Tensor> Tensor::Zeros(DType dtype, IntSpan sizes) {
  auto t = Empty(dtype, sizes);
  if (t.ok()) std::memset(t->data(), 0, t->storage()->nbytes());
  return t;
}

Tensor Tensor::Borrow(void* data, DType dtype, IntSpan sizes, IntSpan strides,
                      Device device) {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  t.device_ = device;
  t.sizes_.assign(sizes.begin(), sizes.end());
  t.strides_.assign(strides.begin(), strides.end());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  t.numel_ = n;
  return t;
}

namespace {

template <typename T>
void StoreScalar(void* p, const Scalar& v) {
  T x;
  if constexpr (std::is_same_v<T, bool>) {
    x = v.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    x = static_cast<T>(v.to_int());  // floats truncate, saturating at int64
  } else {
    x = static_cast<T>(static_cast<float>(v.to_double()));
    if constexpr (std::is_same_v<T, double>) x = v.to_double();
  }
  std::memcpy(p, &x, sizeof(T));
}

}  // namespace

Tensor Tensor::FromScalar(const Scalar& value, DType dtype) {
  Tensor t = *Empty(dtype, {});
  void* p = t.data();
  switch (dtype) {
    case DType::kBool:
      StoreScalar<bool>(p, value);
      break;
    case DType::kUInt8:
      StoreScalar<uint8_t>(p, value);
      break;
    case DType::kInt8:
      StoreScalar<int8_t>(p, value);
      break;
    case DType::kInt16:
      StoreScalar<int16_t>(p, value);
      break;
    case DType::kInt32:
      StoreScalar<int32_t>(p, value);
      break;
    case DType::kInt64:
      StoreScalar<int64_t>(p, value);
      break;
    case DType::kFloat16:
      StoreScalar<Half>(p, value);
      break;
    case DType::kBFloat16:
      StoreScalar<BFloat16>(p, value);
      break;
    case DType::kFloat32:
      StoreScalar<float>(p, value);
      break;
    case DType::kFloat64:
      StoreScalar<double>(p, value);
      break;
  }
  return t;
}

Tensor Tensor::WrappedNumber(const Scalar& value) {
  return WrappedNumber(value, value.dtype());
}

Tensor Tensor::WrappedNumber(const Scalar& value, DType dtype) {
  Tensor t = FromScalar(value, dtype);
  t.wrapped_number_ = true;
  return t;
}

int64_t Tensor::ItemAsInt64() const {
  if (numel_ != 1 || data_ == nullptr) return 0;
  switch (dtype_) {
    case DType::kBool:
      return *static_cast<const bool*>(data_) ? 1 : 0;
    case DType::kUInt8:
      return *static_cast<const uint8_t*>(data_);
    case DType::kInt8:
      return *static_cast<const int8_t*>(data_);
    case DType::kInt16:
      return *static_cast<const int16_t*>(data_);
    case DType::kInt32:
      return *static_cast<const int32_t*>(data_);
    case DType::kInt64:
      return *static_cast<const int64_t*>(data_);
    default:
      return 0;
  }
}

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

Tensor Tensor::AsStrided(IntSpan sizes, IntSpan strides, int64_t offset) const {
  Tensor t = *this;
  t.data_ = static_cast<char*>(data_) + offset * item_size();
  t.sizes_.assign(sizes.begin(), sizes.end());
  t.strides_.assign(strides.begin(), strides.end());
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  t.numel_ = n;
  t.wrapped_number_ = false;
  return t;
}

Scalar Tensor::Item() const {
  const void* p = data_;
  switch (dtype_) {
    case DType::kBool:
      return Scalar(*static_cast<const bool*>(p));
    case DType::kUInt8:
      return Scalar(int64_t{*static_cast<const uint8_t*>(p)});
    case DType::kInt8:
      return Scalar(int64_t{*static_cast<const int8_t*>(p)});
    case DType::kInt16:
      return Scalar(int64_t{*static_cast<const int16_t*>(p)});
    case DType::kInt32:
      return Scalar(int64_t{*static_cast<const int32_t*>(p)});
    case DType::kInt64:
      return Scalar(*static_cast<const int64_t*>(p));
    case DType::kFloat16:
      return Scalar(double{static_cast<float>(*static_cast<const Half*>(p))});
    case DType::kBFloat16:
      return Scalar(
          double{static_cast<float>(*static_cast<const BFloat16*>(p))});
    case DType::kFloat32:
      return Scalar(double{*static_cast<const float*>(p)});
    case DType::kFloat64:
      return Scalar(*static_cast<const double*>(p));
  }
  return Scalar();
}

std::string Tensor::DebugString() const {
  std::string s =
      absl::StrCat(DTypeName(dtype_), "[", absl::StrJoin(sizes_, ", "), "]");
  if (!is_contiguous())
    absl::StrAppend(&s, " strides [", absl::StrJoin(strides_, ", "), "]");
  return s;
}

ByteRange MemoryRange(const Tensor& tensor) {
  if (tensor.numel() == 0) return {};
  intptr_t lo = 0, hi = 0;
  for (int d = 0; d < tensor.dim(); ++d) {
    if (tensor.size(d) <= 1) continue;
    intptr_t span = tensor.stride(d) * (tensor.size(d) - 1);
    (span >= 0 ? hi : lo) += span;
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(tensor.data());
  const intptr_t item = tensor.item_size();
  return {base + lo * item, base + (hi + 1) * item};
}

}  // namespace guardjit
