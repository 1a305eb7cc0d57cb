#ifndef GUARDJIT_CORE_PROTOBUF_DIAGNOSTICS_H_
#define GUARDJIT_CORE_PROTOBUF_DIAGNOSTICS_H_

#include <string>

namespace guardjit {

// While alive, captures what libprotobuf logs on this thread (its binary
// parser's "reached maximum recursion depth", "message too big") instead of
// letting it reach the host's stderr, so the loader can put it in its error.
// libprotobuf's log handler is process-wide: the first capture installs one
// that forwards to the capture active on the calling thread and, on threads
// with none, to the handler that was installed before it.
class ProtobufDiagnostics {
 public:
  ProtobufDiagnostics();
  ~ProtobufDiagnostics();
  ProtobufDiagnostics(const ProtobufDiagnostics&) = delete;
  ProtobufDiagnostics& operator=(const ProtobufDiagnostics&) = delete;

  // What was logged so far ("; "-separated), and clears it.
  std::string Take();

 private:
  friend struct ProtobufDiagnosticsSink;
  ProtobufDiagnostics* previous_;
  std::string text_;
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_PROTOBUF_DIAGNOSTICS_H_
