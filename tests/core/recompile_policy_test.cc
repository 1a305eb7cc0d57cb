#include "core/recompile_policy.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

// A call on float32 inputs of `shapes` (contiguous strides; no data).
class Call {
 public:
  explicit Call(std::vector<std::vector<int64_t>> shapes)
      : sizes_(std::move(shapes)) {
    for (const auto& s : sizes_) {
      std::vector<int64_t> strides(s.size(), 1);
      for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) {
        strides[d] = strides[d + 1] * s[d + 1];
      }
      strides_.push_back(std::move(strides));
    }
    for (size_t i = 0; i < sizes_.size(); ++i) {
      InputView v;
      v.rank = static_cast<int>(sizes_[i].size());
      v.sizes = sizes_[i].data();
      v.strides = strides_[i].data();
      views_.push_back(v);
    }
  }
  CallSignature signature() const { return {views_, AmbientState()}; }

 private:
  std::vector<std::vector<int64_t>> sizes_, strides_;
  std::vector<InputView> views_;
};

std::vector<std::pair<int, int>> Dims(const std::vector<DynamicDim>& dims) {
  std::vector<std::pair<int, int>> out;
  for (const DynamicDim& d : dims) out.push_back({d.input, d.dim});
  return out;
}

RecompilePolicy Policy(DynamicMode mode, std::vector<DynamicDim> marked = {},
                       int limit = kDefaultRecompileLimit) {
  FunctionOptions options;
  options.dynamic = mode;
  options.mark_dynamic = std::move(marked);
  options.recompile_limit = limit;
  return RecompilePolicy(options, {"x", "y"});
}

TEST(RecompilePolicyTest, CompilesUpToTheLimitThenWarnsOnce) {
  RecompilePolicy policy = Policy(DynamicMode::kAuto, {}, 2);
  std::optional<std::string> warning;
  EXPECT_TRUE(policy.OnMiss(0, "first call", warning, "f"));
  EXPECT_TRUE(policy.OnMiss(1, "0/0: x.size()[0] == 4", warning, "f"));
  EXPECT_FALSE(warning.has_value());
  EXPECT_FALSE(policy.run_only());
  EXPECT_FALSE(policy.OnMiss(2, "0/1: x.size()[0] == 5", warning, "f"));
  ASSERT_TRUE(warning.has_value());
  EXPECT_THAT(*warning, HasSubstr("function 'f' hit the recompile limit (2)"));
  EXPECT_THAT(*warning, HasSubstr("last reason: 0/1: x.size()[0] == 5"));
  EXPECT_TRUE(policy.run_only());
  EXPECT_FALSE(policy.OnMiss(2, "again", warning, "f"));
  EXPECT_FALSE(warning.has_value());  // said once
  // The first call is no recompile; the second is.
  EXPECT_THAT(policy.recompile_reasons(),
              ::testing::ElementsAre("0/0: x.size()[0] == 4"));
}

TEST(RecompilePolicyTest, AutomaticDynamicMakesChangedDimsSymbolicForGood) {
  RecompilePolicy policy = Policy(DynamicMode::kAuto);
  const Call first({{4, 8}, {8}});
  auto dims = policy.DynamicDims(first.signature());
  ASSERT_TRUE(dims.ok()) << dims.status();
  EXPECT_TRUE(dims->empty());  // static first
  const Call second({{5, 8}, {8}});
  dims = policy.DynamicDims(second.signature());
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(Dims(*dims), (std::vector<std::pair<int, int>>{{0, 0}}));
  // Back at the first size, and another dim changing: x's dim 0 stays.
  const Call third({{4, 8}, {9}});
  dims = policy.DynamicDims(third.signature());
  ASSERT_TRUE(dims.ok());
  EXPECT_EQ(Dims(*dims), (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}}));
}

TEST(RecompilePolicyTest, MarkedDimsKeepTheirRangeAndComeFirst) {
  RecompilePolicy policy = Policy(DynamicMode::kAuto, {{1, 0, 2, 64}});
  const Call call({{4, 8}, {8}});
  auto dims = policy.DynamicDims(call.signature());
  ASSERT_TRUE(dims.ok());
  ASSERT_EQ(dims->size(), 1u);
  EXPECT_EQ((*dims)[0].input, 1);
  EXPECT_EQ((*dims)[0].max, 64);
}

TEST(RecompilePolicyTest, DynamicModeMakesEveryDimSymbolicAndStaticNone) {
  const Call call({{4, 8}, {8}});
  RecompilePolicy dynamic = Policy(DynamicMode::kDynamic, {{0, 1, 2, 16}});
  auto dims = dynamic.DynamicDims(call.signature());
  ASSERT_TRUE(dims.ok());
  // The marked dim once, with its range; then the rest.
  EXPECT_EQ(Dims(*dims),
            (std::vector<std::pair<int, int>>{{0, 1}, {0, 0}, {1, 0}}));
  EXPECT_EQ((*dims)[0].max, 16);
  RecompilePolicy fixed = Policy(DynamicMode::kStatic, {{0, 0, 2, 16}});
  dims = fixed.DynamicDims(call.signature());
  ASSERT_TRUE(dims.ok());
  EXPECT_TRUE(dims->empty());
}

TEST(RecompilePolicyTest, AMarkedDimTheInputLacksNamesTheInput) {
  RecompilePolicy policy = Policy(DynamicMode::kAuto, {{1, 3, 2, 16}});
  const Call call({{4, 8}, {8}});
  auto dims = policy.DynamicDims(call.signature());
  EXPECT_EQ(dims.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dims.status().message(),
              HasSubstr("mark_dynamic names dim 3 of input 'y', which has "
                        "rank 1"));
}

}  // namespace
}  // namespace guardjit
