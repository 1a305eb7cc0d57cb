#ifndef GUARDJIT_JIT_LLVM_PACKED_GEMM_CODEGEN_H_
#define GUARDJIT_JIT_LLVM_PACKED_GEMM_CODEGEN_H_

// The code of a packed product (loop_ir.h's PackedGemm): register tiles of
// tile_rows x panel_width accumulators, each k step loading the panel's row
// of B as panel_width / vector_width vectors and broadcasting one value of A
// per tile row into multiply-adds (fused where the CPU has FMA), as BLIS-style
// micro-kernels do. Every size is a constant in the code (LLVM sees the trip
// counts); the last panel's columns past n are masked on loads and stores of C,
// and the rows past the last whole tile get a tile of their own height.

#include <string>

#include "absl/status/status.h"
#include "jit/lowering/loop_ir.h"
#include "llvm/IR/Module.h"

namespace guardjit {

// Adds `kernel` (with packed_gemm set) to `module` as an external function
// `name` of the CompiledKernelFn signature (llvm_codegen.h), running panels
// [begin, end).
absl::Status EmitPackedGemm(const Kernel& kernel, const std::string& name,
                            llvm::Module* module);

// The host's float32 vector width (16 with AVX-512, 8 with AVX, else 4) and
// its number of vector registers (32 with AVX-512, else 16): what the
// planner sizes tiles for.
struct VectorTarget {
  int width = 4;
  int registers = 16;
};
VectorTarget HostVectorTarget();

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_PACKED_GEMM_CODEGEN_H_
