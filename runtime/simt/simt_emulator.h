#ifndef GUARDJIT_RUNTIME_SIMT_SIMT_EMULATOR_H_
#define GUARDJIT_RUNTIME_SIMT_SIMT_EMULATOR_H_

// The SIMT emulator: generated CUDA C run on the CPU, for machines and CI
// without a GPU (numba's CUDA simulator and tinygrad's emulated backend do the
// same). The source is compiled by the host C++ compiler against an emulation
// header (simt_emulation_header.cc lists the CUDA subset it models: what
// generated code must stay inside), loaded with dlopen, and launched with
// each block's threads as real threads: __syncthreads is a real barrier, warp
// shuffles and votes meet in a per-warp exchange, atomics are host atomics.
// Not modelled: memory ordering between threads beyond barriers, shuffles and
// atomics; timing; warp-synchronous code without __syncwarp; textures and
// surfaces, dynamic parallelism, cooperative groups.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/simt/simt_emulation_header.h"

namespace guardjit {

class SimtCrew;

struct SimtDim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct SimtOptions {
  // The compiler, a program looked up on PATH (no arguments); empty:
  // $GJ_HOST_CXX, else $CXX, else "c++".
  std::string host_compiler;
  // After the defaults (-std=c++17 -O1 -fno-math-errno -w), so an -O here
  // wins.
  std::vector<std::string> extra_flags;
  // A directory of compiled modules shared by processes
  // (runtime/simt/simt_module_cache.h); empty: $GJ_SIMT_CACHE_DIR, and none
  // when that is unset.
  std::string cache_dir;
};

// CUDA C source compiled for the host against the emulation header.
class SimtModule {
 public:
  // `kernel_names`: the C-linkage __global__ functions to make launchable.
  // A name that is not an identifier is INVALID_ARGUMENT; one the source
  // does not mention is NOT_FOUND. A compile error is INTERNAL with the
  // compiler's first diagnostics (at most 4 KiB; the source is "kernel.cu",
  // its lines as given); a compiler that cannot be run is UNAVAILABLE naming
  // it. Thread-safe; takes the compiler's time (~0.1 s for small modules).
  static absl::StatusOr<std::unique_ptr<SimtModule>> Compile(
      absl::string_view cuda_source, absl::Span<const std::string> kernel_names,
      const SimtOptions& options = {});

  ~SimtModule();  // joins the launch threads, dlclose
  SimtModule(const SimtModule&) = delete;
  SimtModule& operator=(const SimtModule&) = delete;

  // Like cuLaunchKernel: params[i] points at the i-th kernel argument's
  // value. Runs to completion before returning: blocks one after another,
  // each block's threads concurrently. Launches of one module run one at a
  // time (which makes `static` __shared__ arrays per block); launches of
  // different modules run concurrently. NOT_FOUND for a kernel not given to
  // Compile; INVALID_ARGUMENT for a zero dimension, a block over 1024
  // threads (x, y <= 1024, z <= 64), a grid over (2^31 - 1, 65535, 65535),
  // or null params for a kernel with parameters. Thread-safe.
  absl::Status Launch(absl::string_view kernel, SimtDim3 grid, SimtDim3 block,
                      void* const* params) const;
  // The number of parameters `kernel` takes, or -1 for a kernel not given to
  // Compile.
  int Arity(absl::string_view kernel) const;

 private:
  struct Kernel {
    void (*entry)(SimtThreadState*, void* const*) = nullptr;
    int arity = 0;
  };

  SimtModule(void* handle, absl::flat_hash_map<std::string, Kernel> kernels);

  void* handle_;
  absl::flat_hash_map<std::string, Kernel> kernels_;
  mutable std::mutex launch_mu_;
  std::unique_ptr<SimtCrew> crew_;  // runs under launch_mu_
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_SIMT_SIMT_EMULATOR_H_
