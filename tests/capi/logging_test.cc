// Checks gj_set_log_callback and gj_set_log_topics (capi/logging.cc): the
// callback receives the topic's name, the message (NUL-terminated, no
// prefix) and its user data; NULL restores stderr; the topic spec turns
// topics on and off, and unknown names come back as one bounded warning.

#include "core/logging.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guardjit/guardjit.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

using Lines = std::vector<std::pair<std::string, std::string>>;

void Collect(void* user_data, const char* topic, const char* message) {
  static_cast<Lines*>(user_data)->emplace_back(topic, message);
}

constexpr char kKnown[] =
    "known topics: guards, recompiles, graph_breaks, codegen, cudagraphs, "
    "cache, all (warnings always log)";

class LoggingTest : public ::testing::Test {
 protected:
  void TearDown() override {
    gj_set_log_callback(nullptr, nullptr);
    gj_set_log_topics("");
  }
};

TEST_F(LoggingTest, CallbackGetsTopicMessageAndUserData) {
  Lines lines;
  gj_set_log_callback(&Collect, &lines);
  gj_set_log_topics("bogus");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].first, "warning");
  EXPECT_EQ(
      lines[0].second,
      std::string("log topics: unknown topic 'bogus' ignored; ") + kKnown);
}

TEST_F(LoggingTest, MessageIsCutAtItsLengthForC) {
  Lines lines;
  gj_set_log_callback(&Collect, &lines);
  // A view into a longer buffer: the callback sees only its characters.
  const std::string buffer = "codegen message and more";
  guardjit::Log(guardjit::LogTopic::kCodegen,
                absl::string_view(buffer).substr(0, 15));
  guardjit::Log(guardjit::LogTopic::kCache, "");
  EXPECT_THAT(lines, ::testing::ElementsAre(Pair("codegen", "codegen message"),
                                            Pair("cache", "")));
}

TEST_F(LoggingTest, NullCallbackRestoresStderr) {
  Lines lines;
  gj_set_log_callback(&Collect, &lines);
  gj_set_log_callback(nullptr, &lines);
  ::testing::internal::CaptureStderr();
  gj_set_log_topics("nope");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(lines.empty());
  EXPECT_THAT(err, HasSubstr("[guardjit:warning] log topics: unknown topic "
                             "'nope' ignored"));
}

TEST_F(LoggingTest, ANewCallbackReplacesTheOld) {
  Lines first;
  Lines second;
  gj_set_log_callback(&Collect, &first);
  gj_set_log_callback(&Collect, &second);
  gj_set_log_topics("x");
  EXPECT_TRUE(first.empty());
  ASSERT_EQ(second.size(), 1u);
  EXPECT_THAT(second[0].second, HasSubstr("unknown topic 'x'"));
}

TEST_F(LoggingTest, TopicsTurnOnAndOffAndWarningsStayOn) {
  Lines lines;
  gj_set_log_callback(&Collect, &lines);
  // Spaces and empty parts are ignored.
  gj_set_log_topics(" guards , ,codegen ");
  EXPECT_TRUE(lines.empty()) << lines.size();
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kGuards));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kCodegen));
  EXPECT_FALSE(guardjit::LogEnabled(guardjit::LogTopic::kRecompiles));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kWarnings));
  // The spec replaces the previous one.
  gj_set_log_topics("cache");
  EXPECT_FALSE(guardjit::LogEnabled(guardjit::LogTopic::kGuards));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kCache));
  gj_set_log_topics("all");
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kGraphBreaks));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kCudaGraphs));
  // NULL is the empty spec: everything off but warnings, no warning.
  gj_set_log_topics(nullptr);
  EXPECT_FALSE(guardjit::LogEnabled(guardjit::LogTopic::kGuards));
  EXPECT_FALSE(guardjit::LogEnabled(guardjit::LogTopic::kCache));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kWarnings));
  EXPECT_TRUE(lines.empty()) << lines.size();
}

TEST_F(LoggingTest, UnknownTopicsAreQuotedBoundedInOneWarning) {
  Lines lines;
  gj_set_log_callback(&Collect, &lines);
  // Known names around the unknown ones still take effect.
  gj_set_log_topics("guards,a,b,c,recompiles,d,e,f");
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kGuards));
  EXPECT_TRUE(guardjit::LogEnabled(guardjit::LogTopic::kRecompiles));
  // Four are quoted, the rest counted; a long name is cut at 32 characters.
  const std::string long_name(40, 'z');
  gj_set_log_topics(long_name.c_str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].second,
            std::string("log topics: unknown topics 'a', 'b', 'c', 'd' and 2 "
                        "more ignored; ") +
                kKnown);
  EXPECT_EQ(lines[1].second, "log topics: unknown topic '" +
                                 std::string(32, 'z') + "...' ignored; " +
                                 kKnown);
}

}  // namespace
