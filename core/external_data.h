#ifndef GUARDJIT_CORE_EXTERNAL_DATA_H_
#define GUARDJIT_CORE_EXTERNAL_DATA_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace guardjit {

// Reads constants' external data (a byte range of a file beside the graph)
// for one graph load. Each file is opened once, however many constants it
// holds, and a range is read straight into the constant's tensor:
//
//   ASSIGN_OR_RETURN(ExternalDataReader::Range range,
//                    reader.Locate(path, offset, length, what));
//   ... allocate `length` bytes ...
//   RETURN_IF_ERROR(reader.Read(range, dst));
//
// Locate checks the range against the file before anything is allocated, so
// a few bytes of graph declaring terabytes fail with DATA_LOSS instead of
// allocating them. Errors name `what` (e.g. "constant 'w'") and the file:
// NOT_FOUND when it cannot be opened, INVALID_ARGUMENT for a negative offset
// or length, DATA_LOSS when it holds fewer bytes than the range.
class ExternalDataReader {
 public:
  // Relative paths resolve against `dir` ("" = the working directory).
  explicit ExternalDataReader(std::string dir);
  ~ExternalDataReader();
  ExternalDataReader(const ExternalDataReader&) = delete;
  ExternalDataReader& operator=(const ExternalDataReader&) = delete;

  struct Range {
    int fd = -1;
    int64_t offset = 0;
    int64_t length = 0;
    std::string path;  // as resolved, for messages
    // A file that is not a regular one (a pipe, a device) cannot be sized or
    // read at an offset: its bytes are read by Locate, in bounded chunks so
    // memory grows with what is there, not with the declared length.
    std::shared_ptr<const std::string> bytes;
  };

  absl::StatusOr<Range> Locate(const std::string& path, int64_t offset,
                               int64_t length, absl::string_view what);
  // Copies the range's `length` bytes to `dst`.
  absl::Status Read(const Range& range, char* dst, absl::string_view what);

 private:
  struct File {
    int fd = -1;
    bool regular = false;
    int64_t size = 0;
  };
  // A regular file is opened once and kept for later ranges; another kind
  // is returned without being kept (the caller closes it).
  absl::StatusOr<File> Open(const std::string& path, absl::string_view what);

  std::string dir_;
  absl::flat_hash_map<std::string, File> files_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_EXTERNAL_DATA_H_
