#ifndef GUARDJIT_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_
#define GUARDJIT_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace guardjit {

// A shared library opened with dlopen, for the CUDA libraries guardjit loads
// at run time instead of linking (driver, NVRTC, cuBLASLt): linking them would
// make every host need a GPU driver to start. Opened libraries are never
// closed: the CUDA libraries start threads and register exit handlers, and
// their symbol tables are process-wide singletons anyway.
class DynamicLibrary {
 public:
  // Tries each candidate (a bare soname searches the loader's path; one with
  // a '/' is a file) with dlopen(RTLD_NOW | RTLD_LOCAL) and keeps the first
  // that opens. If none does: UNAVAILABLE naming `what` and every candidate
  // with its dlerror().
  static absl::StatusOr<DynamicLibrary> Open(
      absl::Span<const std::string> candidates, absl::string_view what);

  // The symbol's address, or nullptr when the library does not define it.
  void* Symbol(const char* name) const;
  // The symbol's address, or UNAVAILABLE naming the symbol and the library.
  absl::StatusOr<void*> RequiredSymbol(const char* name) const;

  // The file the loader opened (absolute, symlinks resolved where possible).
  const std::string& path() const { return path_; }

 private:
  DynamicLibrary(void* handle, std::string path)
      : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

// Where a CUDA toolkit library may be, in search order: each soname on the
// loader's path, then in $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64 (the toolkit's lib64 is often not on the loader's
// path). Not for the driver: the toolkit ships a stub libcuda there.
std::vector<std::string> CudaToolkitLibraryCandidates(
    absl::Span<const absl::string_view> sonames);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_CUDA_DYNAMIC_LIBRARY_H_
