#include "runtime/blas_panels.h"

#include <limits>
#include <new>

namespace guardjit {
namespace {

constexpr size_t kMaxCachedScratch = size_t{32} << 20;
constexpr std::align_val_t kAlign{64};

// A thread's cached scratch, freed when the thread ends.
class ThreadScratch {
 public:
  ThreadScratch() = default;
  ThreadScratch(const ThreadScratch&) = delete;
  ThreadScratch& operator=(const ThreadScratch&) = delete;
  ~ThreadScratch() { ::operator delete(data_, kAlign); }

  void* Get(size_t bytes) {
    if (bytes > bytes_) {
      ::operator delete(data_, kAlign);
      data_ = nullptr;
      data_ = ::operator new(bytes, kAlign);
      bytes_ = bytes;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace

std::optional<BlasMatrix> BlasLayout(int64_t rows, int64_t cols,
                                     int64_t row_stride, int64_t col_stride) {
  constexpr int64_t kMax = std::numeric_limits<blasint>::max();
  if (cols == 1 || col_stride == 1) {
    const int64_t ld = rows == 1 ? cols : row_stride;
    if (ld >= cols && ld >= 1 && ld <= kMax) {
      return BlasMatrix{CblasNoTrans, static_cast<blasint>(ld)};
    }
  }
  if (rows == 1 || row_stride == 1) {
    const int64_t ld = cols == 1 ? rows : col_stride;
    if (ld >= rows && ld >= 1 && ld <= kMax) {
      return BlasMatrix{CblasTrans, static_cast<blasint>(ld)};
    }
  }
  return std::nullopt;
}

PanelScratch::~PanelScratch() {
  if (uncached_ != nullptr) ::operator delete(uncached_, kAlign);
}

void* PanelScratch::Get(size_t bytes) {
  if (bytes <= kMaxCachedScratch) {
    thread_local ThreadScratch cached;
    return cached.Get(bytes);
  }
  if (uncached_ != nullptr) ::operator delete(uncached_, kAlign);
  uncached_ = nullptr;
  uncached_ = ::operator new(bytes, kAlign);
  return uncached_;
}

SingleThreadedBlas::SingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_++ == 0) {
    saved_ = openblas_get_num_threads();
    if (saved_ != 1) openblas_set_num_threads(1);
  }
}

SingleThreadedBlas::~SingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--depth_ == 0 && saved_ != 1) openblas_set_num_threads(saved_);
}

}  // namespace guardjit
