// A directory of host-compiled SIMT modules (runtime/simt/simt_emulator.h),
// so that a process, or the next one, that emulates the same CUDA source with
// the same compiler and flags loads the shared object instead of compiling
// it again (~60 ms of g++ per module; the emulated conformance suites compile
// thousands, and their two suites generate the same sources).
//
// An entry is one file, <dir>/<hash>.simt: a magic word, the whole key (the
// compiler's path, size and mtime, the flags, the emulation header and the
// module source) and the shared object. A lookup compares the stored key
// byte for byte, so a hash collision or a stale entry is a miss, never the
// wrong module. Entries are written to a temporary file and renamed, so
// processes may share a directory; a torn or corrupt file is a miss and is
// replaced by the next store. A hit refreshes the file's mtime; nothing
// prunes the directory (scripts/test.sh removes entries unused for days).
// Every failure is a miss: the cache never fails a compile.
#ifndef GUARDJIT_RUNTIME_SIMT_SIMT_MODULE_CACHE_H_
#define GUARDJIT_RUNTIME_SIMT_SIMT_MODULE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace guardjit {

class SimtModuleCache {
 public:
  // The cache in `dir` (created if missing); `dir` empty: $GJ_SIMT_CACHE_DIR,
  // and no cache when that is unset or empty too.
  static std::optional<SimtModuleCache> Open(const std::string& dir);

  // The key's identity of the program `compiler` names (looked up on PATH
  // when it has no '/'): its resolved path, size and modification time, so
  // that an upgraded compiler misses. Empty when it cannot be found.
  static std::string CompilerIdentity(const std::string& compiler);

  // Writes the shared object stored under `key` to `library_path` (a new
  // file each time: dlopen of one path twice would share the module's
  // statics). False on a miss.
  bool Fetch(absl::string_view key, const std::string& library_path) const;

  // Stores the shared object at `library_path` under `key`.
  void Store(absl::string_view key, const std::string& library_path) const;

  // The entry file for `key`.
  std::string EntryPath(absl::string_view key) const;

  const std::string& dir() const { return dir_; }

 private:
  explicit SimtModuleCache(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_SIMT_SIMT_MODULE_CACHE_H_
