#ifndef GUARDJIT_JIT_CUDA_PTXAS_LOG_H_
#define GUARDJIT_JIT_CUDA_PTXAS_LOG_H_

// What ptxas says about each kernel it compiled. NVRTC runs ptxas in-process
// when it compiles to CUBIN, and with -Xptxas=-v ptxas writes one block per
// entry function into NVRTC's program log:
//
//   ptxas info    : Compiling entry function 'add' for 'sm_90'
//   ptxas info    : Function properties for add
//   ptxas  .  0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 10 registers, used 0 barriers, 128 bytes smem
//
// Registers and spills decide a kernel's occupancy and whether its launch
// configuration or tiling needs to change, so the CLI prints them and tests
// bound them. Parsing the log (rather than the CUBIN's .nv.info section) uses
// the form NVIDIA documents for humans and works for every arch NVRTC knows.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace guardjit {

struct CudaKernelResources {
  std::string name;  // entry function name (C++-mangled without C linkage)
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int stack_frame_bytes = 0;
  int shared_memory_bytes = 0;  // static __shared__ (dynamic comes at launch)
};

// One entry per "Compiling entry function" block, in log order. Lines it
// does not recognize are skipped; a kernel whose block lacks a field keeps 0.
std::vector<CudaKernelResources> ParsePtxasLog(absl::string_view log);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_PTXAS_LOG_H_
