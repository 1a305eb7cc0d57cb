#ifndef GUARDJIT_JIT_STEPS_PACKED_GEMM_KERNELS_H_
#define GUARDJIT_JIT_STEPS_PACKED_GEMM_KERNELS_H_

// Ahead-of-time micro-kernels for packed products (packed_gemm.h): the same
// register tiles as the LLVM code jit/llvm/packed_gemm_codegen.h generates
// per shape (tile_rows x panel_width accumulators, one broadcast of A per
// tile row into multiply-adds with the panel's row of B), compiled into the
// library once per instruction set (AVX-512, AVX2 with FMA, SSE2) and tile,
// with every size an argument. A product then compiles nothing: the LLVM
// code of one cost 15-20 ms of a process's first call (the GPT-2-style
// model's five: 96-102 ms of its 250).
//
// Sizes at run time cost the generated code its constant row strides of A:
// the tiles read A's rows in groups of three from one pointer each, the
// stride in a register, as MLAS's kernels do, so that a tile of 13 rows
// keeps its pointers in registers.

#include <cstddef>
#include <cstdint>

#include "jit/lowering/loop_ir.h"

namespace guardjit {

// Runs panels [begin, end) of `g` (every panel's rows, k blocks, alpha):
// A's g.m rows of g.k contiguous floats `lda` apart at `a` (a product whose
// A has a column stride other than 1 copies it first: CopyGemmRows), the
// weight packed by PackGemmPanels, C ([g.m, g.n] row-major).
using PackedGemmKernel = void (*)(const PackedGemm& g, const float* a,
                                  int64_t lda, const float* packed_b, float* c,
                                  int64_t begin, int64_t end);

// The kernel for g's vector width and tile on this host, or null: a width
// the host's instruction set lacks (checked with the CPU's own feature
// bits), a tile outside what ChoosePackedGemm picks, or not x86-64.
PackedGemmKernel FindPackedGemmKernel(const PackedGemm& g);

// Copies A (element (i, k) at a[i * g.lda + k * g.a_col_stride]) to `out`
// as [g.m, g.k] row-major: g.m * g.k floats.
void CopyGemmRows(const PackedGemm& g, const float* a, float* out);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_PACKED_GEMM_KERNELS_H_
