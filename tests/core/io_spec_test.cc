#include "core/io_spec.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

TEST(IoSpecTest, DefaultKnowsNothing) {
  IoSpec spec;
  EXPECT_EQ(spec.rank(), -1);
  EXPECT_FALSE(spec.IsFullyStatic());
  EXPECT_EQ(spec.ToString(), "?[*]");
  EXPECT_TRUE(ValidateIoSpec(spec, "input 'x'").ok());
}

TEST(IoSpecTest, ToStringShowsSymbolsAndUnnamedDims) {
  IoSpec spec{DType::kFloat32,
              std::vector<IoDim>{IoDim::Dynamic("batch"), IoDim::Static(3),
                                 IoDim::Dynamic()}};
  EXPECT_EQ(spec.rank(), 3);
  EXPECT_FALSE(spec.IsFullyStatic());
  EXPECT_EQ(spec.ToString(), "float32[batch, 3, ?]");
  IoSpec scalar{DType::kInt64, std::vector<IoDim>{}};
  EXPECT_TRUE(scalar.IsFullyStatic());
  EXPECT_EQ(scalar.ToString(), "int64[]");
}

TEST(IoSpecTest, SymbolNames) {
  EXPECT_TRUE(IsValidSymbolName("batch"));
  EXPECT_TRUE(IsValidSymbolName("_s0"));
  EXPECT_TRUE(IsValidSymbolName("seq.len_2"));
  EXPECT_FALSE(IsValidSymbolName(""));
  EXPECT_FALSE(IsValidSymbolName("0batch"));
  EXPECT_FALSE(IsValidSymbolName("batch + 1"));
  EXPECT_FALSE(IsValidSymbolName(std::string(kMaxSymbolLength + 1, 'a')));
  EXPECT_TRUE(IsValidSymbolName(std::string(kMaxSymbolLength, 'a')));
}

TEST(IoSpecTest, ValidateNamesTheCulpritAndBoundsTheMessage) {
  IoSpec bad_symbol{std::nullopt, std::vector<IoDim>{IoDim::Static(2),
                                                     IoDim::Dynamic("a b")}};
  absl::Status s = ValidateIoSpec(bad_symbol, "input 'x'");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("input 'x': dim 1: symbol 'a b'"));

  IoSpec long_symbol{
      std::nullopt,
      std::vector<IoDim>{IoDim::Dynamic(std::string(10000, '\x01'))}};
  s = ValidateIoSpec(long_symbol, "output 0");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 400u);
  EXPECT_THAT(s.message(), HasSubstr("'???"));

  IoSpec negative{std::nullopt, std::vector<IoDim>{IoDim{-5, ""}}};
  EXPECT_THAT(ValidateIoSpec(negative, "output 0").message(),
              HasSubstr("output 0: declared size -5 at dim 0 is negative"));

  IoSpec static_with_symbol{std::nullopt, std::vector<IoDim>{{4, "n"}}};
  EXPECT_THAT(ValidateIoSpec(static_with_symbol, "input 'y'").message(),
              HasSubstr("dim 0 has both the static size 4 and the symbol 'n'"));

  IoSpec too_deep{std::nullopt,
                  std::vector<IoDim>(kMaxIoRank + 1, IoDim::Static(1))};
  EXPECT_THAT(ValidateIoSpec(too_deep, "input 'z'").message(),
              HasSubstr("declared rank 65 is more than 64"));
}

}  // namespace
}  // namespace guardjit
