#include "bindings/triton/json.h"

#include <string>

#include "gtest/gtest.h"

namespace guardjit_triton {
namespace {

TEST(JsonTest, ParsesWhatTritonWrites) {
  Json j;
  std::string error;
  ASSERT_TRUE(Json::Parse(
      R"({"name":"m","max_batch_size":8,"input":[{"name":"x","data_type":)"
      R"("TYPE_FP32","dims":["-1","32"]}],"ok":true,"none":null,)"
      R"("f":-1.5e3,"s":"a\"b\\c\n\u00e9"})",
      &j, &error))
      << error;
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.Find("name")->AsString(), "m");
  int64_t v = 0;
  ASSERT_TRUE(j.Find("max_batch_size")->AsInt(&v));
  EXPECT_EQ(v, 8);
  const Json& dims = *(*j.Find("input"))[0].Find("dims");
  ASSERT_TRUE(dims[0].AsInt(&v));
  EXPECT_EQ(v, -1);
  EXPECT_TRUE(j.Find("ok")->AsBool());
  EXPECT_EQ(j.Find("none")->kind(), Json::Kind::kNull);
  EXPECT_DOUBLE_EQ(j.Find("f")->AsDouble(), -1500);
  EXPECT_FALSE(j.Find("f")->AsInt(&v));
  EXPECT_EQ(j.Find("s")->AsString(), "a\"b\\c\n\xc3\xa9");
  EXPECT_EQ(j.Find("missing"), nullptr);
}

TEST(JsonTest, RoundTripsAndKeepsLargeIntegersExact) {
  Json j;
  std::string error;
  const std::string text =
      R"({"a":[1,2,{"b":"c\"d"}],"big":9007199254740993,"e":{}})";
  ASSERT_TRUE(Json::Parse(text, &j, &error)) << error;
  EXPECT_EQ(j.Serialize(), text);
  j.Member("added") = Json::Int(-3);
  EXPECT_NE(j.Serialize().find(R"("added":-3)"), std::string::npos);
}

TEST(JsonTest, MalformedInputSaysWhere) {
  Json j;
  std::string error;
  for (const char* bad : {"{", "[1,]", R"({"a" 1})", "tru", R"("open)", "[1] 2",
                          R"({"a":"\q"})"}) {
    EXPECT_FALSE(Json::Parse(bad, &j, &error)) << bad;
    EXPECT_NE(error.find("offset "), std::string::npos) << error;
  }
  std::string deep(100, '[');
  EXPECT_FALSE(Json::Parse(deep, &j, &error));
  EXPECT_NE(error.find("nested too deeply"), std::string::npos) << error;
}

}  // namespace
}  // namespace guardjit_triton
