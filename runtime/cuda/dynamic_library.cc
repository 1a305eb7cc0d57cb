#include "runtime/cuda/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

namespace {

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_name == nullptr || map->l_name[0] == '\0') {
    return fallback;
  }
  std::error_code error;
  std::filesystem::path path = std::filesystem::canonical(map->l_name, error);
  return error ? std::string(map->l_name) : path.string();
}

}  // namespace

absl::StatusOr<DynamicLibrary> DynamicLibrary::Open(
    absl::Span<const std::string> candidates, absl::string_view what) {
  std::vector<std::string> failures;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      return DynamicLibrary(handle, LoadedPath(handle, candidate));
    }
    const char* error = dlerror();
    failures.push_back(error != nullptr ? std::string(error)
                                        : absl::StrCat(candidate, ": unknown"));
  }
  return absl::UnavailableError(
      absl::StrCat(what, " not found (tried ", absl::StrJoin(candidates, ", "),
                   "): ", absl::StrJoin(failures, "; ")));
}

void* DynamicLibrary::Symbol(const char* name) const {
  return dlsym(handle_, name);
}

absl::StatusOr<void*> DynamicLibrary::RequiredSymbol(const char* name) const {
  void* address = Symbol(name);
  if (address == nullptr) {
    return absl::UnavailableError(
        absl::StrCat(path_, " has no symbol ", name,
                     " (a library older than the headers guardjit was "
                     "built with?)"));
  }
  return address;
}

std::vector<std::string> CudaToolkitLibraryCandidates(
    absl::Span<const absl::string_view> sonames) {
  std::vector<std::string> dirs;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(variable);
    if (root != nullptr && root[0] != '\0') {
      dirs.push_back(absl::StrCat(root, "/lib64"));
    }
  }
  dirs.push_back("/usr/local/cuda/lib64");
  std::vector<std::string> candidates;
  for (absl::string_view soname : sonames) candidates.emplace_back(soname);
  for (const std::string& dir : dirs) {
    for (absl::string_view soname : sonames) {
      candidates.push_back(absl::StrCat(dir, "/", soname));
    }
  }
  return candidates;
}

}  // namespace guardjit
