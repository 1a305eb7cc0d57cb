#include "core/onnx/onnx_detect.h"

#include <cstdint>
#include <limits>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace guardjit {

bool IsOnnxModel(absl::string_view bytes) {
  using google::protobuf::internal::WireFormatLite;
  if (bytes.empty() ||
      bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return false;
  }
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t*>(bytes.data()),
      static_cast<int>(bytes.size()));
  // Top-level fields only: length-delimited ones are skipped whole, so this
  // reads a few bytes per field whatever the model's size.
  while (true) {
    const uint32_t tag = input.ReadTag();
    if (tag == 0) return false;
    if (WireFormatLite::GetTagFieldNumber(tag) == 1 &&
        WireFormatLite::GetTagWireType(tag) ==
            WireFormatLite::WIRETYPE_VARINT) {
      return true;
    }
    if (WireFormatLite::GetTagWireType(tag) ==
            WireFormatLite::WIRETYPE_START_GROUP ||
        !WireFormatLite::SkipField(&input, tag)) {
      return false;
    }
  }
}

}  // namespace guardjit
