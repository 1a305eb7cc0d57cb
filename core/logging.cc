#include "core/logging.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace guardjit {
namespace {

constexpr unsigned Bit(LogTopic t) { return 1u << static_cast<unsigned>(t); }

constexpr struct {
  const char* name;
  unsigned bits;
} kTopicNames[] = {
    {"guards", Bit(LogTopic::kGuards)},
    {"recompiles", Bit(LogTopic::kRecompiles)},
    {"graph_breaks", Bit(LogTopic::kGraphBreaks)},
    {"codegen", Bit(LogTopic::kCodegen)},
    {"cudagraphs", Bit(LogTopic::kCudaGraphs)},
    {"cache", Bit(LogTopic::kCache)},
    {"all", ~0u},
};

// At most this many unknown names, each cut to kMaxNameChars, are quoted in
// the warning, so a long or garbled spec gives a bounded line.
constexpr int kMaxQuotedNames = 4;
constexpr size_t kMaxNameChars = 32;

// The topics `spec` turns on. Names it does not know are reported in one
// warning that quotes them and lists the known topics (`source` says where
// the spec came from), so a misspelled topic does not silently log nothing.
unsigned ParseTopics(absl::string_view spec, absl::string_view source) {
  unsigned bits = Bit(LogTopic::kWarnings);
  std::vector<std::string> unknown;
  for (absl::string_view part : absl::StrSplit(spec, ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    bool known = false;
    for (const auto& topic : kTopicNames) {
      if (part == topic.name) bits |= topic.bits, known = true;
    }
    if (!known) unknown.emplace_back(part);
  }
  if (!unknown.empty()) {
    std::string quoted;
    for (int i = 0; i < static_cast<int>(unknown.size()); ++i) {
      if (i == kMaxQuotedNames) {
        absl::StrAppend(&quoted, " and ", unknown.size() - i, " more");
        break;
      }
      const std::string& name = unknown[i];
      absl::StrAppend(&quoted, i > 0 ? ", '" : "'",
                      absl::string_view(name).substr(0, kMaxNameChars),
                      name.size() > kMaxNameChars ? "...'" : "'");
    }
    std::string known;
    for (const auto& topic : kTopicNames) {
      absl::StrAppend(&known, known.empty() ? "" : ", ", topic.name);
    }
    Log(LogTopic::kWarnings,
        absl::StrCat(source, ": unknown topic", unknown.size() > 1 ? "s " : " ",
                     quoted, " ignored; known topics: ", known,
                     " (warnings always log)"));
  }
  return bits;
}

std::atomic<unsigned>& Topics() {
  static std::atomic<unsigned> topics{[] {
    const char* env = std::getenv("GJ_LOGS");
    return ParseTopics(env ? env : "", "GJ_LOGS");
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

void SetLogTopics(absl::string_view spec) {
  Topics().store(ParseTopics(spec, "log topics"));
}

}  // namespace guardjit
