#include "core/protobuf_diagnostics.h"

#include <string>
#include <thread>

#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(ProtobufDiagnosticsTest, CapturesWhatLibprotobufLogsAndTakeClears) {
  ProtobufDiagnostics capture;
  EXPECT_EQ(capture.Take(), "");
  GOOGLE_LOG(ERROR) << "reached maximum recursion depth";
  GOOGLE_LOG(WARNING) << "message too big";
  EXPECT_EQ(capture.Take(), "reached maximum recursion depth; message too big");
  EXPECT_EQ(capture.Take(), "");
  GOOGLE_LOG(ERROR) << "again";
  EXPECT_EQ(capture.Take(), "again");
}

TEST(ProtobufDiagnosticsTest, InnerCaptureWinsUntilItEnds) {
  ProtobufDiagnostics outer;
  {
    ProtobufDiagnostics inner;
    GOOGLE_LOG(ERROR) << "inner";
    EXPECT_EQ(inner.Take(), "inner");
  }
  GOOGLE_LOG(ERROR) << "outer";
  EXPECT_EQ(outer.Take(), "outer");
}

TEST(ProtobufDiagnosticsTest, OtherThreadsAreNotCaptured) {
  ProtobufDiagnostics capture;
  std::string seen_there = "unset";
  std::thread other([&] {
    // No capture on this thread: the message goes to the handler that was
    // there before (stderr), not to the capture of the main thread.
    GOOGLE_LOG(WARNING) << "from another thread (expected in the log)";
    ProtobufDiagnostics own;
    GOOGLE_LOG(ERROR) << "own";
    seen_there = own.Take();
  });
  other.join();
  EXPECT_EQ(seen_there, "own");
  EXPECT_EQ(capture.Take(), "");
}

TEST(ProtobufDiagnosticsTest, TextIsBoundedAtOneKilobyte) {
  ProtobufDiagnostics capture;
  GOOGLE_LOG(ERROR) << std::string(600, 'a');
  GOOGLE_LOG(ERROR) << std::string(600, 'b');
  GOOGLE_LOG(ERROR) << "dropped";
  const std::string text = capture.Take();
  EXPECT_EQ(text.size(), 1024u);
  EXPECT_EQ(text.substr(0, 602), std::string(600, 'a') + "; ");
  EXPECT_EQ(text.find("dropped"), std::string::npos);
  EXPECT_EQ(text.back(), 'b');
}

}  // namespace
}  // namespace guardjit
