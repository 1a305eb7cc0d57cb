#ifndef GUARDJIT_RUNTIME_BLAS_PANELS_H_
#define GUARDJIT_RUNTIME_BLAS_PANELS_H_

// What code that calls BLAS shares: how BLAS reads a strided matrix (the
// reference GEMM kernels in runtime/kernels/gemm.cc and the JIT's extern
// steps), and for the steps that run BLAS on panels of their output
// (jit/steps/gemm_step.h, jit/steps/conv_step.h) per-thread scratch for the
// panels and OpenBLAS held at one thread while panels run in parallel.

#include <cblas.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>

namespace guardjit {

// How BLAS reads a [rows, cols] matrix: row by row (CblasNoTrans) or column
// by column (CblasTrans), `ld` apart.
struct BlasMatrix {
  CBLAS_TRANSPOSE trans;
  blasint ld;
};

// The layout of a [rows, cols] matrix with these strides, if BLAS can read
// it in place (its leading dimension at least 1 and within blasint). The
// stride of a size-1 dim is never read, so any value is fine there.
std::optional<BlasMatrix> BlasLayout(int64_t rows, int64_t cols,
                                     int64_t row_stride, int64_t col_stride);

// Scratch for one thread's panels, 64-byte aligned. Up to 32 MiB lives on
// in the thread between calls (one buffer per thread, shared by all steps);
// a larger request gets memory that this object frees.
class PanelScratch {
 public:
  PanelScratch() = default;
  PanelScratch(const PanelScratch&) = delete;
  PanelScratch& operator=(const PanelScratch&) = delete;
  ~PanelScratch();

  // At least `bytes` of memory, valid until the next Get on this thread or
  // this object's end.
  void* Get(size_t bytes);

 private:
  void* uncached_ = nullptr;
};

// Holds OpenBLAS at one thread while panels run in parallel on the pool
// (OpenBLAS's own threads would oversubscribe the cores, and its pthread
// build serializes concurrent callers), restoring the count when the last
// such region ends.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  static inline std::mutex mu_;
  static inline int depth_ = 0;
  static inline int saved_ = 1;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_BLAS_PANELS_H_
