#ifndef GUARDJIT_JIT_STEPS_CONV_EPILOGUE_H_
#define GUARDJIT_JIT_STEPS_CONV_EPILOGUE_H_

// Turns eager convolution steps into ConvSteps (conv_step.h) with fused
// epilogues. A non-transposed aten.convolution.default of float32 or float64
// at fixed sizes but for the batch, which a dynamic entry may leave symbolic
// (1 to 3 spatial dims, any groups, stride, padding and dilation, no empty
// extents) becomes one ConvStep whose epilogue is the
// next kernel when only that kernel reads the result, and reads it element
// by element (relu, gelu, a residual of the same shape, scalar ops, ...),
// else a kernel storing the result. The convolution's bias joins the
// epilogue. Everything else stays an eager step: transposed convolutions,
// other dtypes, symbolic channels or spatial sizes, empty or too-large
// extents.
//
// With `device` (a plan whose kernels run on a CUDA device), float16 and
// bfloat16 convolutions match too, and each ConvStep runs as im2col + cuBLASLt
// (jit/cuda/device_conv_step.h): an im2col kernel step goes right before
// it unless the input is its own column matrix, and its epilogue kernel
// runs once over the whole result.

#include <string>
#include <vector>

#include "core/graph.h"
#include "jit/schedule/fusion.h"

namespace guardjit {

// `eager_reasons` holds Lower's fallback reasons, one
// "name (target): reason" line per node it left eager: the lines of
// convolutions that became ConvSteps are removed, and those of convolutions
// that stay eager say why.
void FuseConvSteps(const Graph& graph, Plan& plan,
                   std::vector<std::string>* eager_reasons,
                   bool device = false);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_CONV_EPILOGUE_H_
