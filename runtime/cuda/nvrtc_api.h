#ifndef GUARDJIT_RUNTIME_CUDA_NVRTC_API_H_
#define GUARDJIT_RUNTIME_CUDA_NVRTC_API_H_

// NVRTC, the CUDA C++ runtime compiler, loaded at run time like the driver
// (see cuda_driver.h): a host that never compiles for a GPU never loads it,
// and guardjit builds without it. NVRTC needs no GPU, so CUDA code generation
// is compiled and checked on any machine with the toolkit.
//
// The first NvrtcApi::Get() dlopens libnvrtc.so.13 (then libnvrtc.so) from
// the loader's path, $CUDA_HOME/lib64, $CUDA_PATH/lib64 or
// /usr/local/cuda/lib64 and resolves the functions below.
//
// Like the driver's, NVRTC's types and signatures are declared here, as CUDA
// 13's nvrtc.h declares them, so the build needs no CUDA headers.

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

// nvrtc.h's result codes (the ones guardjit names; NVRTC may return others).
enum nvrtcResult : int {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
};

typedef struct _nvrtcProgram* nvrtcProgram;

// The NVRTC functions guardjit calls, one X(name, signature) each (NVRTC's
// symbols are unversioned: the name is the symbol).
// clang-format off
#define GJ_NVRTC_FUNCTIONS(X) \
  X(nvrtcGetErrorString, const char*(nvrtcResult)) \
  X(nvrtcVersion, nvrtcResult(int*, int*)) \
  X(nvrtcGetNumSupportedArchs, nvrtcResult(int*)) \
  X(nvrtcGetSupportedArchs, nvrtcResult(int*)) \
  X(nvrtcCreateProgram, nvrtcResult(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*)) \
  X(nvrtcCompileProgram, nvrtcResult(nvrtcProgram, int, const char* const*)) \
  X(nvrtcGetProgramLogSize, nvrtcResult(nvrtcProgram, size_t*)) \
  X(nvrtcGetProgramLog, nvrtcResult(nvrtcProgram, char*)) \
  X(nvrtcGetCUBINSize, nvrtcResult(nvrtcProgram, size_t*)) \
  X(nvrtcGetCUBIN, nvrtcResult(nvrtcProgram, char*)) \
  X(nvrtcGetPTXSize, nvrtcResult(nvrtcProgram, size_t*)) \
  X(nvrtcGetPTX, nvrtcResult(nvrtcProgram, char*)) \
  X(nvrtcDestroyProgram, nvrtcResult(nvrtcProgram*))
// clang-format on

// The loaded NVRTC: one function pointer per GJ_NVRTC_FUNCTIONS entry, all
// non-null, plus what every compile needs to know about the library.
// Immutable after loading; NVRTC itself is thread-safe.
struct NvrtcApi {
  // The process-wide table, loaded on the first call (thread-safe).
  // UNAVAILABLE when libnvrtc is not found (naming the libraries tried and
  // dlerror()) or lacks a function.
  static absl::StatusOr<const NvrtcApi*> Get();

#define GJ_NVRTC_MEMBER(name, signature) \
  std::add_pointer_t<signature> name = nullptr;
  GJ_NVRTC_FUNCTIONS(GJ_NVRTC_MEMBER)
#undef GJ_NVRTC_MEMBER

  int major = 0;  // nvrtcVersion: 13, 0
  int minor = 0;
  // nvrtcGetSupportedArchs, ascending: {75, 80, 86, ..., 120, 121}.
  std::vector<int> supported_archs;
  std::string library_path;  // the libnvrtc the loader opened

  // major * 1000 + minor * 10, as CUDA_VERSION counts: 13000.
  int version() const { return major * 1000 + minor * 10; }
};

// `what` failed with `result`: the message carries nvrtcGetErrorString's
// name ("nvrtcCompileProgram: NVRTC_ERROR_INVALID_OPTION"); OK for
// NVRTC_SUCCESS. An invalid option is INVALID_ARGUMENT, out of memory
// RESOURCE_EXHAUSTED, anything else INTERNAL.
absl::Status NvrtcStatus(nvrtcResult result, absl::string_view what);

}  // namespace guardjit

// Returns the NVRTC call's error, described by the call's text, from the
// enclosing function: RETURN_IF_NVRTC_ERROR(api->nvrtcGetPTX(program, ptx));
#define RETURN_IF_NVRTC_ERROR(expr)                            \
  do {                                                         \
    const ::guardjit::nvrtcResult gj_nvrtc_result_ = (expr);   \
    if (gj_nvrtc_result_ != ::guardjit::NVRTC_SUCCESS) {       \
      return ::guardjit::NvrtcStatus(gj_nvrtc_result_, #expr); \
    }                                                          \
  } while (0)

#endif  // GUARDJIT_RUNTIME_CUDA_NVRTC_API_H_
