#include "core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace guardjit {
namespace {

constexpr unsigned Bit(LogTopic t) { return 1u << static_cast<unsigned>(t); }

unsigned ParseTopics(absl::string_view spec) {
  unsigned bits = Bit(LogTopic::kWarnings);
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part == "guards") bits |= Bit(LogTopic::kGuards);
    if (part == "recompiles") bits |= Bit(LogTopic::kRecompiles);
    if (part == "graph_breaks") bits |= Bit(LogTopic::kGraphBreaks);
    if (part == "codegen") bits |= Bit(LogTopic::kCodegen);
    if (part == "cudagraphs") bits |= Bit(LogTopic::kCudaGraphs);
    if (part == "cache") bits |= Bit(LogTopic::kCache);
    if (part == "all") bits = ~0u;
  }
  return bits;
}

std::atomic<unsigned>& Topics() {
  static std::atomic<unsigned> topics{[] {
    const char* env = std::getenv("GJ_LOGS");
    return ParseTopics(env ? env : "");
  }()};
  return topics;
}

struct Sink {
  std::mutex mu;
  LogSink sink;
};

Sink& GlobalSink() {
  static Sink* sink = new Sink();
  return *sink;
}

}  // namespace

const char* LogTopicName(LogTopic t) {
  switch (t) {
    case LogTopic::kGuards:
      return "guards";
    case LogTopic::kRecompiles:
      return "recompiles";
    case LogTopic::kGraphBreaks:
      return "graph_breaks";
    case LogTopic::kCodegen:
      return "codegen";
    case LogTopic::kWarnings:
      return "warning";
    case LogTopic::kCudaGraphs:
      return "cudagraphs";
    case LogTopic::kCache:
      return "cache";
  }
  return "?";
}

bool LogEnabled(LogTopic topic) {
  return (Topics().load(std::memory_order_relaxed) & Bit(topic)) != 0;
}

void Log(LogTopic topic, absl::string_view message) {
  Sink& s = GlobalSink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.sink) {
    s.sink(topic, message);
    return;
  }
  std::fprintf(stderr, "[guardjit:%s] %.*s\n", LogTopicName(topic),
               static_cast<int>(message.size()), message.data());
}

void SetLogSink(LogSink sink) {
  Sink& s = GlobalSink();
  std::lock_guard<std::mutex> lock(s.mu);
  s.sink = std::move(sink);
}

void SetLogTopics(absl::string_view spec) { Topics().store(ParseTopics(spec)); }

}  // namespace guardjit
