// gj_set_log_callback and gj_set_log_topics: guardjit's logs (core/logging.h)
// delivered to the host.

#include "core/logging.h"

#include <string>

#include "guardjit/guardjit.h"

extern "C" {

void gj_set_log_callback(gj_log_callback callback, void* user_data) {
  if (callback == nullptr) {
    guardjit::SetLogSink(nullptr);
    return;
  }
  guardjit::SetLogSink([callback, user_data](guardjit::LogTopic topic,
                                             absl::string_view message) {
    const std::string text(message);  // NUL-terminated for C
    callback(user_data, guardjit::LogTopicName(topic), text.c_str());
  });
}

void gj_set_log_topics(const char* spec) {
  guardjit::SetLogTopics(spec == nullptr ? "" : spec);
}

}  // extern "C"
