#include "core/proto_io_spec.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

proto::TensorMeta Meta(const std::string& text) {
  proto::TensorMeta meta;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &meta));
  return meta;
}

TEST(ProtoIoSpecTest, OldFilesSizesAreStatic) {
  auto spec = IoSpecFromProto(Meta("dtype: FLOAT32 sizes: [2, 3]"), "x");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->has_value());
  EXPECT_EQ((*spec)->ToString(), "float32[2, 3]");
  EXPECT_TRUE((*spec)->IsFullyStatic());
}

TEST(ProtoIoSpecTest, DimsCarrySymbolsAndUnnamedDynamicDims) {
  auto spec = IoSpecFromProto(
      Meta("dtype: INT64 dims { symbol: 'batch' } dims { size: 7 } dims {}"),
      "x");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->has_value());
  EXPECT_EQ((*spec)->ToString(), "int64[batch, 7, ?]");
}

TEST(ProtoIoSpecTest, NothingDeclaredIsNullopt) {
  auto spec = IoSpecFromProto(Meta(""), "x");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_value());
  spec = IoSpecFromProto(Meta("dtype: BOOL unknown_rank: true"), "x");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(spec->has_value());
  EXPECT_EQ((*spec)->ToString(), "bool[*]");
  // A dtype alone declares rank 0, as before `dims`.
  spec = IoSpecFromProto(Meta("dtype: FLOAT64"), "x");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ((*spec)->ToString(), "float64[]");
}

TEST(ProtoIoSpecTest, ErrorsNameTheValue) {
  struct Case {
    const char* text;
    const char* message;
  } cases[] = {
      {"sizes: 2 dims { size: 2 }", "placeholder 'x': meta has both sizes"},
      {"unknown_rank: true sizes: 2", "unknown_rank and 1 dims"},
      {"sizes: [1, -2]", "meta size -2 at dim 1 is negative"},
      {"dims { size: -1 }", "meta size -1 at dim 0 is negative"},
      {"dims { symbol: '' }", "dim 0 has an empty symbol"},
      {"dims { symbol: 'batch + 1' }", "symbol 'batch + 1' is not an"},
      {"dtype: 77", "dtype 77 is not a guardjit dtype"},
  };
  for (const Case& c : cases) {
    auto spec = IoSpecFromProto(Meta(c.text), "placeholder 'x'");
    ASSERT_FALSE(spec.ok()) << c.text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), HasSubstr(c.message)) << c.text;
  }
}

TEST(ProtoIoSpecTest, RoundTrips) {
  for (const char* text :
       {"dtype: FLOAT32 sizes: [2, 3]", "dtype: INT32 dims { symbol: 'n' }",
        "dims { size: 4 } dims {}", "dtype: BFLOAT16 unknown_rank: true",
        "dtype: UINT8"}) {
    auto spec = IoSpecFromProto(Meta(text), "x");
    ASSERT_TRUE(spec.ok() && spec->has_value()) << text;
    auto again = IoSpecFromProto(IoSpecToProto(**spec), "x");
    ASSERT_TRUE(again.ok() && again->has_value()) << text;
    EXPECT_EQ(**again, **spec) << text;
  }
  // Fully static specs keep the old `sizes` form.
  IoSpec spec{DType::kFloat32,
              std::vector<IoDim>{IoDim::Static(2), IoDim::Static(5)}};
  EXPECT_EQ(IoSpecToProto(spec).sizes_size(), 2);
  EXPECT_EQ(IoSpecToProto(spec).dims_size(), 0);
}

}  // namespace
}  // namespace guardjit
