#ifndef GUARDJIT_JIT_CUDA_CUDA_VECTORIZE_H_
#define GUARDJIT_JIT_CUDA_CUDA_VECTORIZE_H_

// Whether a pointwise kernel can move its data in 16-byte vectors, for the
// CUDA C generator (cuda_codegen.h). A thread then computes `width`
// consecutive points of the last outer loop: every load reads either
// `width` consecutive elements (its index is base + i, base a multiple of
// `width` whatever the other loops' values) or one element for all of them
// (its index does not depend on i), and every store writes `width`
// consecutive elements. The generated kernel checks the buffers' alignment
// at run time and takes the scalar path when a pointer is not aligned to
// its vector, so correctness never depends on alignment.

#include <vector>

#include "jit/lowering/loop_ir.h"

namespace guardjit {

struct CudaVectorPlan {
  // Points per vector: 16 bytes of the widest buffer moved as vectors
  // (4 float32, 2 float64, 8 float16); 1 when the kernel has no vector path.
  int width = 1;
  // The variable of the last outer loop, which vectors run along.
  int var = -1;
  // The buffers moved as vectors (ascending): the kernel checks that each
  // is aligned to its vector (ItemSize * width bytes).
  std::vector<int> buffers;
};

// The plan for `kernel`: vectors when its stages are all single stores
// (pointwise: no inner loops, no reductions), the last outer loop has a
// static extent that `width` divides, no stage reads an output buffer
// (stores then may move after the computation), every access is as above
// and at least one load or store is a vector. Gathers stay scalar loads.
CudaVectorPlan PlanVectorAccess(const Kernel& kernel);

// `index` is base + i<var> with base a multiple of `width` at every value of
// the other variables and sizes.
bool IsVectorIndex(const IndexExpr& index, int var, int width);

// `index` does not use i<var>.
bool IndependentOf(const IndexExpr& index, int var);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_CUDA_VECTORIZE_H_
