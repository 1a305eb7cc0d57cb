#ifndef GUARDJIT_CORE_LOGGING_H_
#define GUARDJIT_CORE_LOGGING_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace guardjit {

// Topics of GJ_LOGS (comma-separated, like TORCH_LOGS): "guards",
// "recompiles", "graph_breaks", "codegen", "cudagraphs", "cache" (the
// compile cache's hits and stores), or "all".
enum class LogTopic {
  kGuards,
  kRecompiles,
  kGraphBreaks,
  kCodegen,
  kWarnings,
  kCudaGraphs,
  kCache,
};

// Whether `topic` is on (read from GJ_LOGS once; warnings are always on).
bool LogEnabled(LogTopic topic);
// Writes "[guardjit:<topic>] <message>" to stderr or the host's sink.
void Log(LogTopic topic, absl::string_view message);

// "guards", "recompiles", "graph_breaks", "codegen", "warning",
// "cudagraphs", "cache".
const char* LogTopicName(LogTopic topic);

// Replaces stderr with `sink` (null restores stderr); for hosts and tests.
// The sink runs under the log's lock, one message at a time.
using LogSink = std::function<void(LogTopic, absl::string_view)>;
void SetLogSink(LogSink sink);
// Overrides GJ_LOGS (tests); the same syntax.
void SetLogTopics(absl::string_view spec);

}  // namespace guardjit

#endif  // GUARDJIT_CORE_LOGGING_H_
