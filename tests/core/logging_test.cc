// GJ_LOGS topics and the log sink (core/logging.h): the topic list's syntax
// ("all", spaces, unknown names ignored with one warning naming them,
// warnings always on), a host's sink
// receiving each message with its topic, and stderr's "[guardjit:<topic>]"
// lines once the sink is removed.

#include "core/logging.h"

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// Restores GJ_LOGS's topics and stderr after each test.
class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override {
    const char* env = std::getenv("GJ_LOGS");
    SetLogTopics(env != nullptr ? env : "");
    SetLogSink(nullptr);
  }
};

TEST_F(LoggingTest, TopicsParseLikeTorchLogs) {
  SetLogTopics(" guards ,cache");
  EXPECT_TRUE(LogEnabled(LogTopic::kGuards));
  EXPECT_TRUE(LogEnabled(LogTopic::kCache));
  EXPECT_FALSE(LogEnabled(LogTopic::kRecompiles));
  EXPECT_FALSE(LogEnabled(LogTopic::kCodegen));
  EXPECT_TRUE(LogEnabled(LogTopic::kWarnings)) << "always on";

  SetLogSink([](LogTopic, absl::string_view) {});  // the unknown's warning
  SetLogTopics("no_such_topic");
  EXPECT_FALSE(LogEnabled(LogTopic::kGuards));
  EXPECT_TRUE(LogEnabled(LogTopic::kWarnings));
  SetLogSink(nullptr);

  SetLogTopics("all");
  for (LogTopic t :
       {LogTopic::kGuards, LogTopic::kRecompiles, LogTopic::kGraphBreaks,
        LogTopic::kCodegen, LogTopic::kCudaGraphs, LogTopic::kCache}) {
    EXPECT_TRUE(LogEnabled(t)) << LogTopicName(t);
  }
  SetLogTopics("graph_breaks,recompiles,codegen,cudagraphs");
  EXPECT_TRUE(LogEnabled(LogTopic::kGraphBreaks));
  EXPECT_TRUE(LogEnabled(LogTopic::kRecompiles));
  EXPECT_TRUE(LogEnabled(LogTopic::kCodegen));
  EXPECT_TRUE(LogEnabled(LogTopic::kCudaGraphs));
  EXPECT_FALSE(LogEnabled(LogTopic::kCache));
}

TEST_F(LoggingTest, UnknownTopicsWarnOnceNamingThemAndTheKnownOnes) {
  std::vector<std::pair<LogTopic, std::string>> got;
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    got.emplace_back(topic, std::string(message));
  });
  SetLogTopics("guards,recompile, cache,,");
  EXPECT_TRUE(LogEnabled(LogTopic::kGuards)) << "known topics still apply";
  EXPECT_TRUE(LogEnabled(LogTopic::kCache));
  EXPECT_FALSE(LogEnabled(LogTopic::kRecompiles));
  ASSERT_EQ(got.size(), 1u) << "one warning; empty parts are not topics";
  EXPECT_EQ(got[0].first, LogTopic::kWarnings);
  EXPECT_EQ(got[0].second,
            "log topics: unknown topic 'recompile' ignored; known topics: "
            "guards, recompiles, graph_breaks, codegen, cudagraphs, cache, "
            "all (warnings always log)");
  // Checking topics afterwards warns no more.
  EXPECT_FALSE(LogEnabled(LogTopic::kCodegen));
  EXPECT_EQ(got.size(), 1u);

  // Several in one warning, at most four quoted, each cut to 32 characters.
  got.clear();
  SetLogTopics(std::string("a,b,") + std::string(100, 'x') + ",d,e,f");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.substr(0, got[0].second.find(" ignored")),
            "log topics: unknown topics 'a', 'b', '" + std::string(32, 'x') +
                "...', 'd' and 2 more");

  got.clear();
  SetLogTopics("all,guards");
  SetLogTopics("");
  EXPECT_TRUE(got.empty()) << "nothing unknown, nothing said";
}

TEST_F(LoggingTest, TopicNames) {
  EXPECT_STREQ(LogTopicName(LogTopic::kGuards), "guards");
  EXPECT_STREQ(LogTopicName(LogTopic::kGraphBreaks), "graph_breaks");
  EXPECT_STREQ(LogTopicName(LogTopic::kWarnings), "warning");
  EXPECT_STREQ(LogTopicName(LogTopic::kCudaGraphs), "cudagraphs");
}

TEST_F(LoggingTest, SinkReceivesMessagesThenStderrAgain) {
  std::vector<std::pair<LogTopic, std::string>> got;
  SetLogSink([&](LogTopic topic, absl::string_view message) {
    got.emplace_back(topic, std::string(message));
  });
  Log(LogTopic::kRecompiles, "entry 2 of 'f'");
  Log(LogTopic::kWarnings, "careful");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].first, LogTopic::kRecompiles);
  EXPECT_EQ(got[0].second, "entry 2 of 'f'");
  EXPECT_EQ(got[1].first, LogTopic::kWarnings);

  SetLogSink(nullptr);
  ::testing::internal::CaptureStderr();
  Log(LogTopic::kCache, "stored 1 kernel");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "[guardjit:cache] stored 1 kernel\n");
  EXPECT_EQ(got.size(), 2u) << "the removed sink is not called";
}

}  // namespace
}  // namespace guardjit
