#ifndef GUARDJIT_JIT_STEPS_GEMM_EPILOGUE_H_
#define GUARDJIT_JIT_STEPS_GEMM_EPILOGUE_H_

// Fuses pointwise consumers into extern matrix products. An eager step for
// mm, addmm or bmm (float32/float64, every extent >= 1, alpha != 0) whose
// output only the next kernel reads, and reads element by element (at the
// point it computes: relu, gelu, a bias broadcast over rows, a residual of
// the same shape, scalar ops, ...), becomes one GemmStep (gemm_step.h) with
// that kernel as its epilogue. addmm's bias (times beta) joins the epilogue
// too, so a bare addmm gets an epilogue of its own. Everything else (other
// dtypes, empty or too-large extents, outputs read elsewhere, reductions
// over the product) stays an eager step. In a dynamic entry the product's
// extents and operands may be expressions over the entry's symbols (the
// step binds them per call, and its epilogue takes the symbols as size
// parameters); addmm's bias must have fixed sizes.
//
// With `device` (a plan whose kernels run on a CUDA device, the product on
// cuBLASLt: jit/cuda/device_gemm_step.h), float16 and bfloat16 products
// match too, a bare product gets a GEMM step with a kernel that only stores
// it, and an epilogue that is only relu or tanh-gelu of the product, plus
// addmm's bias of n contiguous values at beta 1, is marked as one cuBLASLt
// computes itself (GemmStep::device_epilogue).

#include "core/graph.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

void FuseGemmEpilogues(const Graph& graph, Plan& plan, bool device = false);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_GEMM_EPILOGUE_H_
