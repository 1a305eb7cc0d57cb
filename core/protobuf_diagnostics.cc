#include "core/protobuf_diagnostics.h"

#include <mutex>
#include <utility>

#include "google/protobuf/stubs/logging.h"

namespace guardjit {
namespace {

thread_local ProtobufDiagnostics* active = nullptr;
google::protobuf::LogHandler* previous_handler = nullptr;

}  // namespace

struct ProtobufDiagnosticsSink {
  static void Handle(google::protobuf::LogLevel level, const char* filename,
                     int line, const std::string& message) {
    ProtobufDiagnostics* capture = active;
    if (capture == nullptr) {
      if (previous_handler != nullptr) {
        previous_handler(level, filename, line, message);
      }
      return;
    }
    // One diagnostic is enough to explain a failed parse; a hostile input
    // must not grow the error without bound.
    constexpr size_t kMaxBytes = 1024;
    if (capture->text_.size() >= kMaxBytes) return;
    if (!capture->text_.empty()) capture->text_ += "; ";
    capture->text_ += message.substr(0, kMaxBytes - capture->text_.size());
  }
};

ProtobufDiagnostics::ProtobufDiagnostics() : previous_(active) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    previous_handler =
        google::protobuf::SetLogHandler(&ProtobufDiagnosticsSink::Handle);
  });
  active = this;
}

ProtobufDiagnostics::~ProtobufDiagnostics() { active = previous_; }

std::string ProtobufDiagnostics::Take() { return std::exchange(text_, ""); }

}  // namespace guardjit
