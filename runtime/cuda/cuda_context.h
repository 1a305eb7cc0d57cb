#ifndef GUARDJIT_RUNTIME_CUDA_CUDA_CONTEXT_H_
#define GUARDJIT_RUNTIME_CUDA_CUDA_CONTEXT_H_

// guardjit runs its work in each device's PRIMARY context, the one the CUDA
// runtime (and so PyTorch, CuPy, JAX) uses: device pointers, streams and
// events a host hands over are valid in it, and a host and guardjit sharing a
// device do not pay for two contexts. These RAII types hold a reference to it
// and make it current on the calling thread for a scope.

#include "absl/status/statusor.h"
#include "runtime/cuda/cuda_driver.h"

namespace guardjit {

// Makes a context current on the calling thread until the scope ends. If it
// already is (the common case in a host on the CUDA runtime) this costs one
// cuCtxGetCurrent and the destructor does nothing; otherwise it pushes the
// context and pops it at the end, restoring whatever was current. Move-only;
// must end on the thread that entered it.
class [[nodiscard]] CudaContextScope {
 public:
  static absl::StatusOr<CudaContextScope> Enter(const CudaDriver& driver,
                                                CUcontext context);
  CudaContextScope(CudaContextScope&& other) noexcept;
  CudaContextScope& operator=(CudaContextScope&&) = delete;
  CudaContextScope(const CudaContextScope&) = delete;
  ~CudaContextScope();

  // Whether entering pushed the context (it was not current).
  bool pushed() const { return driver_ != nullptr; }

 private:
  explicit CudaContextScope(const CudaDriver* driver) : driver_(driver) {}
  const CudaDriver* driver_;  // null when nothing was pushed
};

// A counted reference to a device's primary context: cuDevicePrimaryCtxRetain
// on creation, cuDevicePrimaryCtxRelease on destruction (the driver destroys
// the context when the last reference, the host's included, goes). Move-only.
class CudaPrimaryContext {
 public:
  static absl::StatusOr<CudaPrimaryContext> Retain(int ordinal);
  CudaPrimaryContext(CudaPrimaryContext&& other) noexcept;
  CudaPrimaryContext& operator=(CudaPrimaryContext&& other) noexcept;
  CudaPrimaryContext(const CudaPrimaryContext&) = delete;
  CudaPrimaryContext& operator=(const CudaPrimaryContext&) = delete;
  ~CudaPrimaryContext();

  CUcontext get() const { return context_; }
  int ordinal() const { return ordinal_; }

  // Makes this context current for the returned scope.
  absl::StatusOr<CudaContextScope> MakeCurrent() const;

 private:
  CudaPrimaryContext(const CudaDriver* driver, CUdevice device, int ordinal,
                     CUcontext context)
      : driver_(driver),
        device_(device),
        ordinal_(ordinal),
        context_(context) {}
  void Release();

  const CudaDriver* driver_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = -1;
  CUcontext context_ = nullptr;  // null once moved from
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_CUDA_CONTEXT_H_
