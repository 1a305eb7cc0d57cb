#ifndef GUARDJIT_JIT_LLVM_LIBMVEC_H_
#define GUARDJIT_JIT_LLVM_LIBMVEC_H_

// glibc's vector math library (libmvec) for the loop vectorizer: with these
// mappings a loop calling log, log1p, tanh, erf, sin, cos, pow or (float64)
// exp is vectorized into calls of their SIMD variants instead of staying a
// scalar loop of libm calls. libmvec's documented error is at most 4 ulp
// (glibc's libm-test-ulps; 1-2 for these functions on x86-64).

#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Target/TargetMachine.h"

namespace guardjit {

// Loads libmvec.so.1 into the process (once; the JIT resolves its symbols
// there) and adds to `tlii` each vector variant that the library exports and
// `machine` can call: the SSE variants (_ZGVb, 4 floats or 2 doubles) on any
// x86-64, the AVX2 ones (_ZGVd, 8 floats or 4 doubles) when the target has
// AVX2, whose vectors travel in ymm registers. Returns how many were added:
// 0 where there is no libmvec (another libc, not x86-64), and every loop
// then keeps its scalar calls.
int AddLibmvecFunctions(const llvm::TargetMachine& machine,
                        llvm::TargetLibraryInfoImpl& tlii);

// Loads libmvec.so.1 into the process (once), so that code compiled by
// another process, which may call its variants, links here (KernelCompiler
// calls it before loading objects from the compile cache). Whether it
// loaded.
bool LoadLibmvec();

}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_LIBMVEC_H_
