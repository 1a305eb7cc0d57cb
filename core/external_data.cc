#include "core/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace guardjit {
namespace {

absl::Status ShortData(absl::string_view what, const std::string& path,
                       int64_t available, int64_t offset, int64_t length) {
  return absl::DataLossError(
      absl::StrCat(what, ": external data '", path, "' has ", available,
                   " bytes at offset ", offset, ", expected ", length));
}

// Reads up to `length` bytes from `fd` (at `offset` when `positioned`, else
// at its current position), retrying short reads and EINTR; returns how many
// it read (fewer only at the end of the data) or -1 on an error.
int64_t ReadFully(int fd, char* dst, int64_t length, int64_t offset,
                  bool positioned) {
  int64_t done = 0;
  while (done < length) {
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(length - done, int64_t{1} << 30));
    const ssize_t got = positioned ? pread(fd, dst + done, want, offset + done)
                                   : read(fd, dst + done, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

absl::Status NegativeRange(absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": negative external data offset or length"));
}

}  // namespace

ExternalDataReader::ExternalDataReader(std::string dir)
    : dir_(std::move(dir)) {}

ExternalDataReader::~ExternalDataReader() {
  for (auto& [path, file] : files_) close(file.fd);
}

absl::StatusOr<ExternalDataReader::File> ExternalDataReader::Open(
    const std::string& path, absl::string_view what) {
  auto it = files_.find(path);
  if (it != files_.end()) return it->second;
  File file;
  file.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    return absl::NotFoundError(
        absl::StrCat(what, ": cannot open external data '", path, "'"));
  }
  struct stat st;
  if (fstat(file.fd, &st) == 0 && S_ISREG(st.st_mode)) {
    file.regular = true;
    file.size = static_cast<int64_t>(
        std::min<uintmax_t>(static_cast<uintmax_t>(st.st_size),
                            std::numeric_limits<int64_t>::max()));
  }
  if (file.regular) files_.emplace(path, file);
  return file;
}

absl::StatusOr<ExternalDataReader::Range> ExternalDataReader::Locate(
    const std::string& path, int64_t offset, int64_t length,
    absl::string_view what) {
  std::filesystem::path resolved(path);
  if (resolved.is_relative() && !dir_.empty())
    resolved = std::filesystem::path(dir_) / resolved;
  Range range;
  range.path = resolved.string();
  absl::StatusOr<File> file = Open(range.path, what);
  if (!file.ok()) return file.status();
  range.offset = offset;
  range.length = length;
  if (file->regular) {
    if (offset < 0 || length < 0) return NegativeRange(what);
    range.fd = file->fd;
    const int64_t size = file->size;
    const int64_t available = offset < size ? size - offset : 0;
    if (available < length)
      return ShortData(what, range.path, available, offset, length);
    return range;
  }
  // Not a regular file: opened for this range alone (as a stream it is read
  // from its start each time), the offset skipped, the bytes read in bounded
  // chunks.
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{file->fd};
  if (offset < 0 || length < 0) return NegativeRange(what);
  const int fd = file->fd;
  constexpr int64_t kChunk = int64_t{1} << 20;
  std::vector<char> skip(static_cast<size_t>(std::min(offset, kChunk)));
  int64_t skipped = 0;
  while (skipped < offset) {
    const int64_t got = ReadFully(fd, skip.data(),
                                  std::min(offset - skipped, kChunk), 0, false);
    if (got <= 0) break;
    skipped += got;
  }
  if (skipped < offset) return ShortData(what, range.path, 0, offset, length);
  auto bytes = std::make_shared<std::string>();
  while (static_cast<int64_t>(bytes->size()) < length) {
    const size_t old = bytes->size();
    const int64_t want = std::min(length - static_cast<int64_t>(old), kChunk);
    bytes->resize(old + static_cast<size_t>(want));
    const int64_t got = ReadFully(fd, bytes->data() + old, want, 0, false);
    bytes->resize(old + static_cast<size_t>(std::max<int64_t>(got, 0)));
    if (got < want) break;
  }
  if (static_cast<int64_t>(bytes->size()) != length) {
    return ShortData(what, range.path, static_cast<int64_t>(bytes->size()),
                     offset, length);
  }
  range.bytes = std::move(bytes);
  return range;
}

absl::Status ExternalDataReader::Read(const Range& range, char* dst,
                                      absl::string_view what) {
  if (range.bytes != nullptr) {
    if (range.length > 0) std::memcpy(dst, range.bytes->data(), range.length);
    return absl::OkStatus();
  }
  const int64_t got =
      ReadFully(range.fd, dst, range.length, range.offset, /*positioned=*/true);
  if (got < 0) {
    return absl::DataLossError(absl::StrCat(what, ": reading external data '",
                                            range.path,
                                            "': ", std::strerror(errno)));
  }
  if (got != range.length)
    return ShortData(what, range.path, got, range.offset, range.length);
  return absl::OkStatus();
}

}  // namespace guardjit
