#ifndef GUARDJIT_JIT_LOWERING_OP_SUPPORT_H_
#define GUARDJIT_JIT_LOWERING_OP_SUPPORT_H_

// What runs each registered op: its reference kernel (the eager
// interpreter), a loop-IR lowering (fused CPU kernels through LLVM, and CUDA
// kernels: the CUDA C generator reads the same loop IR), or an extern step
// of the CPU JIT (BLAS GEMM, im2col + GEMM). A lowering may still leave a
// node to its reference kernel for some dtypes or arguments (the compile's
// fallback reasons say which).

#include <string>
#include <vector>

namespace guardjit {

struct OpSupport {
  std::string target;  // "aten.add.Tensor"
  std::string schema;  // ATen syntax
  bool reference_kernel = false;
  bool jit_lowering = false;  // CPU and CUDA
  bool extern_step = false;   // CPU JIT only
};

// Every registered op, sorted by target.
std::vector<OpSupport> ListOpSupport();

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LOWERING_OP_SUPPORT_H_
