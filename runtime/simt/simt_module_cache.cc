#include "runtime/simt/simt_module_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <random>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace guardjit {
namespace {

// The file starts with this word, then the key's length (8 bytes in the
// host's byte order: entries never leave the machine, the compiler identity
// pins it), the key, the shared object's length and FNV-1a hash (8 bytes
// each), the shared object.
constexpr char kMagic[8] = {'G', 'J', 'S', 'I', 'M', 'T', '0', '2'};

// FNV-1a, 64 bits: the file name (the stored key decides a hit) and the
// shared object's check (a file damaged in place is a miss).
uint64_t Fnv1a(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

bool ReadAll(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  return !in.bad();
}

// Writes `parts` to `path` through a temporary file in the same directory
// and a rename, so a reader sees the whole file or none of it.
bool WriteAtomically(const std::string& path,
                     std::initializer_list<absl::string_view> parts) {
  std::random_device random;
  const std::string tmp =
      absl::StrCat(path, ".", getpid(), ".", random(), ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    for (absl::string_view part : parts) {
      out.write(part.data(), static_cast<std::streamsize>(part.size()));
    }
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

std::optional<SimtModuleCache> SimtModuleCache::Open(const std::string& dir) {
  std::string path = dir;
  if (path.empty()) {
    const char* env = std::getenv("GJ_SIMT_CACHE_DIR");
    if (env == nullptr || *env == '\0') return std::nullopt;
    path = env;
  }
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (!std::filesystem::is_directory(path, ec)) return std::nullopt;
  return SimtModuleCache(std::move(path));
}

std::string SimtModuleCache::CompilerIdentity(const std::string& compiler) {
  std::string found;
  if (compiler.find('/') != std::string::npos) {
    found = compiler;
  } else {
    const char* path_env = std::getenv("PATH");
    for (absl::string_view dir :
         absl::StrSplit(path_env == nullptr ? "" : path_env, ':')) {
      if (dir.empty()) continue;
      const std::string candidate = absl::StrCat(dir, "/", compiler);
      if (access(candidate.c_str(), X_OK) == 0) {
        found = candidate;
        break;
      }
    }
  }
  if (found.empty()) return "";
  std::error_code ec;
  const std::filesystem::path resolved = std::filesystem::canonical(found, ec);
  if (ec) return "";
  struct stat st;
  if (stat(resolved.c_str(), &st) != 0) return "";
  return absl::StrCat(resolved.string(), " (", found, ") size ", st.st_size,
                      " mtime ", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
}

std::string SimtModuleCache::EntryPath(absl::string_view key) const {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx",
                static_cast<unsigned long long>(Fnv1a(key)));
  return absl::StrCat(dir_, "/", name, ".simt");
}

bool SimtModuleCache::Fetch(absl::string_view key,
                            const std::string& library_path) const {
  const std::string entry = EntryPath(key);
  std::string bytes;
  if (!ReadAll(entry, &bytes)) return false;
  const size_t header = sizeof kMagic + sizeof(uint64_t);
  if (bytes.size() < header ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return false;
  }
  uint64_t key_size = 0;
  std::memcpy(&key_size, bytes.data() + sizeof kMagic, sizeof key_size);
  if (key_size != key.size() || bytes.size() - header < key_size ||
      absl::string_view(bytes).substr(header, key_size) != key) {
    return false;
  }
  const size_t library_header = header + key_size + 2 * sizeof(uint64_t);
  if (bytes.size() < library_header) return false;
  uint64_t library_size = 0, library_hash = 0;
  std::memcpy(&library_size, bytes.data() + header + key_size,
              sizeof library_size);
  std::memcpy(&library_hash,
              bytes.data() + header + key_size + sizeof library_size,
              sizeof library_hash);
  const absl::string_view library =
      absl::string_view(bytes).substr(library_header);
  if (library.empty() || library.size() != library_size ||
      Fnv1a(library) != library_hash) {
    return false;
  }
  {
    std::ofstream out(library_path, std::ios::binary | std::ios::trunc);
    out.write(library.data(), static_cast<std::streamsize>(library.size()));
    out.close();
    if (!out) return false;
  }
  // Recently used entries stay when old ones are pruned by mtime.
  utimensat(AT_FDCWD, entry.c_str(), nullptr, 0);
  return true;
}

void SimtModuleCache::Store(absl::string_view key,
                            const std::string& library_path) const {
  std::string library;
  if (!ReadAll(library_path, &library) || library.empty()) return;
  const uint64_t key_size = key.size();
  const uint64_t library_size = library.size();
  const uint64_t library_hash = Fnv1a(library);
  auto bytes_of = [](const uint64_t& v) {
    return absl::string_view(reinterpret_cast<const char*>(&v), sizeof v);
  };
  WriteAtomically(
      EntryPath(key),
      {absl::string_view(kMagic, sizeof kMagic), bytes_of(key_size), key,
       bytes_of(library_size), bytes_of(library_hash), library});
}

}  // namespace guardjit
