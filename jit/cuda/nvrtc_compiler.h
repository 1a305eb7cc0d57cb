#ifndef GUARDJIT_JIT_CUDA_NVRTC_COMPILER_H_
#define GUARDJIT_JIT_CUDA_NVRTC_COMPILER_H_

// Compiles one CUDA C++ translation unit (all kernels of a cache entry) with
// NVRTC for a GPU architecture, and remembers the result. NVRTC needs no GPU,
// so generated CUDA is compiled and checked on any machine with the toolkit.
//
// What every compile gets, so results do not depend on who asked:
//   -arch=sm_XY     the device's arch; for an arch newer than every arch this
//                   NVRTC supports, -arch=compute_YZ PTX of the newest it does
//                   (the driver JIT-compiles PTX for newer GPUs at load) and
//                   the result says so;
//   --std=c++17;
//   precise math    NVRTC's defaults (-ftz=false -prec-div=true
//                   -prec-sqrt=true): no --use_fast_math, results match the
//                   eager reference within the usual float tolerances;
//                   --fmad=true is NVRTC's default too (as nvcc's, which
//                   PyTorch's CUDA kernels use): a * b + c is one fused
//                   multiply-add, one rounding fewer than the eager kernels,
//                   so results can differ from them in the last bits (an
//                   H200 gave 0.35 for -1 + 25 * 0.054 in float64, the CPU
//                   0.35000000000000009);
//   -Xptxas=-v      ptxas reports registers and spills per kernel in the log;
//   -I<toolkit>     the toolkit's include dir, for cuda_fp16.h / cuda_bf16.h
//                   (NVRTC does not carry them built in);
//   -lineinfo       only with Options::line_info (profilers map SASS to
//                   source; costs compile time).
//
// Results are cached in memory, keyed by (source, every option passed, NVRTC
// version): one compiler is shared (shared_ptr) by the functions of a context
// so identical kernels compile once. Concurrent requests for the same key
// wait for the one compile in flight. Least recently used entries go past
// Options::cache_capacity. With Options::persistent, results also go to and
// come from the compile cache on disk or in Redis, under the same key: the
// next process loads the CUBIN instead of running NVRTC. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "jit/cuda/ptxas_log.h"
#include "runtime/compile_cache/compile_cache.h"
#include "runtime/cuda/cuda_arch.h"

namespace guardjit {

struct NvrtcApi;

// What NVRTC is asked to produce for a requested arch.
struct NvrtcTarget {
  CudaArch arch;     // the arch compiled for
  bool ptx = false;  // compute_XY PTX rather than an sm_XY CUBIN
  // Empty when `arch` is the requested one; else why it is not.
  std::string note;
};

// The target for `requested` given NVRTC's supported archs (ascending, as
// nvrtcGetSupportedArchs lists them: 75 for sm_75): the arch itself if listed;
// past the newest, PTX for the newest; an unlisted arch in range, the CUBIN of
// the newest listed arch of the same major at or below it (CUBINs run on
// later minors of their major), else PTX for the newest listed below it.
// INVALID_ARGUMENT for an arch older than the oldest listed.
absl::StatusOr<NvrtcTarget> SelectNvrtcTarget(CudaArch requested,
                                              absl::Span<const int> supported);

struct CudaCompileRequest {
  absl::string_view source;  // CUDA C++; C-linkage kernels keep their names
  CudaArch arch;             // the device's
  // The program's name in the log and errors.
  std::string name = "guardjit.cu";
  // Appended to the compiler's own options (-D..., -maxrregcount=N, ...).
  // A failed compile with caller options is INVALID_ARGUMENT, not INTERNAL.
  std::vector<std::string> options;
};

struct CudaCompileResult {
  // CUBIN (an ELF image, for cuModuleLoadData) or, when `ptx`, PTX text
  // (NUL-terminated inside the string's size, as cuModuleLoadData wants it).
  std::string image;
  bool ptx = false;
  CudaArch arch;     // what `image` is for
  std::string note;  // why `arch` differs from the request; else empty
  std::string log;   // NVRTC's program log (ptxas -v info on success)
  std::vector<CudaKernelResources> kernels;  // empty for PTX
  std::vector<std::string> options;          // every option NVRTC got
  absl::Duration compile_time;               // nvrtcCompileProgram and fetch
  int nvrtc_version = 0;                     // 13000 for NVRTC 13.0
};

class NvrtcCompiler {
 public:
  struct Options {
    size_t cache_capacity = 512;  // compiled TUs kept; 0 keeps none
    bool line_info = false;       // -lineinfo
    // Where cuda_fp16.h and friends are. Empty: the first of
    // $CUDA_HOME/include, $CUDA_PATH/include, libnvrtc's ../include and
    // /usr/local/cuda/include that has cuda_fp16.h.
    std::vector<std::string> include_dirs;
    // The persistent compile cache (runtime/compile_cache/): a miss in
    // memory is looked up there before NVRTC runs, and what NVRTC compiles
    // is stored (the image and the log, under the same key as in memory).
    // Null: none.
    std::shared_ptr<CompileCache> persistent;
  };

  // UNAVAILABLE when NVRTC cannot be loaded (see NvrtcApi::Get).
  static absl::StatusOr<std::shared_ptr<NvrtcCompiler>> Create(Options options);
  static absl::StatusOr<std::shared_ptr<NvrtcCompiler>> Create() {
    return Create(Options());
  }

  // The cached result for the request, compiling on a miss. A failed compile
  // is INTERNAL (guardjit generated code NVRTC rejects) or INVALID_ARGUMENT
  // (the request carries caller options, or NVRTC refused an option); its
  // message names the program and arch and holds the log's first 4 KiB.
  // Failures are not cached.
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> Compile(
      const CudaCompileRequest& request);

  // NVRTC compilations run (including failed ones), requests served
  // without one (from the cache, or by waiting for the same compile), and
  // results loaded from the persistent cache instead of compiling.
  int64_t compiled() const;
  int64_t cache_hits() const;
  int64_t loaded() const;
  size_t cache_size() const;

  int nvrtc_version() const;                        // 13000 for 13.0
  const std::vector<int>& supported_archs() const;  // ascending: 75, 80...
  const std::vector<std::string>& include_dirs() const {
    return options_.include_dirs;
  }

 private:
  struct Pending;
  struct Cached {
    std::string key;  // every option, then the source: see Compile
    std::shared_ptr<const CudaCompileResult> result;
  };

  NvrtcCompiler(const NvrtcApi* api, Options options)
      : api_(api), options_(std::move(options)) {}
  absl::StatusOr<std::shared_ptr<const CudaCompileResult>> CompileUncached(
      const CudaCompileRequest& request, const NvrtcTarget& target,
      std::vector<std::string> options) const;
  void Insert(std::string key, std::shared_ptr<const CudaCompileResult> result);
  // The persistent cache's result for `key`, or null.
  std::shared_ptr<const CudaCompileResult> LoadPersistent(
      const std::string& key, const NvrtcTarget& target,
      const std::vector<std::string>& options) const;
  void StorePersistent(const std::string& key,
                       const CudaCompileResult& result) const;

  const NvrtcApi* const api_;
  const Options options_;

  mutable std::mutex mu_;
  std::list<Cached> lru_;  // most recently used first
  // Keys view the strings in lru_ (list nodes do not move).
  absl::flat_hash_map<absl::string_view, std::list<Cached>::iterator> cache_;
  absl::flat_hash_map<std::string, std::shared_ptr<Pending>> pending_;
  int64_t compiled_ = 0;
  int64_t cache_hits_ = 0;
  int64_t loaded_ = 0;
};

}  // namespace guardjit

#endif  // GUARDJIT_JIT_CUDA_NVRTC_COMPILER_H_
