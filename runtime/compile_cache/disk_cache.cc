#include "runtime/compile_cache/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kSuffix = ".gjc";
constexpr absl::string_view kTempMarker = ".tmp.";

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

int64_t MtimeNs(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

bool IsRecordName(absl::string_view name) {
  return absl::EndsWith(name, kSuffix) && !absl::StrContains(name, kTempMarker);
}

// Record files (and with `temporaries`, leftover temporary files) under
// `dir`'s two-digit subdirectories.
std::vector<DiskCache::FileInfo> Scan(const std::string& dir,
                                      bool temporaries) {
  std::vector<DiskCache::FileInfo> files;
  std::error_code ec;
  for (const fs::directory_entry& sub : fs::directory_iterator(dir, ec)) {
    const std::string sub_name = sub.path().filename().string();
    if (sub_name.size() != 2 || !sub.is_directory(ec)) continue;
    for (const fs::directory_entry& f :
         fs::directory_iterator(sub.path(), ec)) {
      const std::string name = f.path().filename().string();
      const bool temporary = absl::StrContains(name, kTempMarker);
      if (!(IsRecordName(name) || (temporaries && temporary))) continue;
      struct stat st;
      const std::string path = f.path().string();
      if (::stat(path.c_str(), &st) != 0) continue;  // removed meanwhile
      files.push_back({path, static_cast<int64_t>(st.st_size), MtimeNs(st)});
    }
  }
  std::sort(files.begin(), files.end(),
            [](const DiskCache::FileInfo& a, const DiskCache::FileInfo& b) {
              return a.mtime_ns < b.mtime_ns;
            });
  return files;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(std::string dir,
                                                           int64_t max_bytes) {
  if (dir.empty()) return absl::InvalidArgumentError("empty cache directory");
  if (max_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max cache bytes is ", max_bytes, "; expected 0 (unbounded) or more"));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir, ec)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot create the cache directory ", dir, ": ", ec.message()));
  }
  if (::access(dir.c_str(), R_OK | W_OK | X_OK) != 0) {
    return Errno("cannot write to the cache directory", dir);
  }
  return std::unique_ptr<DiskCache>(new DiskCache(std::move(dir), max_bytes));
}

std::string DiskCache::PathOf(absl::string_view key_hash) const {
  return absl::StrCat(dir_, "/", key_hash.substr(0, 2), "/", key_hash, kSuffix);
}

absl::StatusOr<std::string> DiskCache::Read(absl::string_view key_hash) const {
  const std::string path = PathOf(key_hash);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(path);
    return Errno("cannot open", path);
  }
  std::string bytes;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    bytes.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status error = Errno("cannot read", path);
      ::close(fd);
      return error;
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  // Most recently used now (the eviction order). Best effort.
  (void)::futimens(fd, nullptr);
  ::close(fd);
  return bytes;
}

absl::Status DiskCache::Write(absl::string_view key_hash,
                              absl::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = PathOf(key_hash);
  const std::string sub = absl::StrCat(dir_, "/", key_hash.substr(0, 2));
  if (::mkdir(sub.c_str(), 0777) != 0 && errno != EEXIST) {
    return Errno("cannot create", sub);
  }
  const std::string temp =
      absl::StrCat(path, kTempMarker, ::getpid(), ".",
                   std::hash<std::thread::id>()(std::this_thread::get_id()),
                   ".", counter.fetch_add(1));
  const int fd =
      ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", temp);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status error = Errno("cannot write", temp);
      ::close(fd);
      ::unlink(temp.c_str());
      return error;
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    absl::Status error = Errno("cannot write", temp);
    ::unlink(temp.c_str());
    return error;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status error = Errno("cannot rename a record to", path);
    ::unlink(temp.c_str());
    return error;
  }
  if (max_bytes_ > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (approx_bytes_ >= 0) approx_bytes_ += static_cast<int64_t>(bytes.size());
    if (approx_bytes_ < 0 || approx_bytes_ > max_bytes_) EvictLocked();
  }
  return absl::OkStatus();
}

void DiskCache::EvictLocked() {
  std::vector<FileInfo> files = Scan(dir_, /*temporaries=*/false);
  int64_t total = 0;
  for (const FileInfo& f : files) total += f.bytes;
  if (total > max_bytes_) {
    const int64_t target = max_bytes_ / 10 * 9;
    for (const FileInfo& f : files) {  // oldest first
      if (total <= target) break;
      if (::unlink(f.path.c_str()) == 0) {
        total -= f.bytes;
        ++evictions_;
      }
    }
  }
  approx_bytes_ = total;
}

void DiskCache::Remove(absl::string_view key_hash) const {
  (void)::unlink(PathOf(key_hash).c_str());
}

std::vector<DiskCache::FileInfo> DiskCache::List() const {
  return Scan(dir_, /*temporaries=*/false);
}

int64_t DiskCache::Clear() const {
  int64_t removed = 0;
  for (const FileInfo& f : Scan(dir_, /*temporaries=*/true)) {
    if (::unlink(f.path.c_str()) == 0) ++removed;
  }
  return removed;
}

int64_t DiskCache::evictions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evictions_;
}

std::vector<DiskCache::FileInfo> ListCacheFiles(const std::string& dir) {
  return Scan(dir, /*temporaries=*/false);
}

}  // namespace guardjit
