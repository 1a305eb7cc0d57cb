#include "core/call_signature.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

// `n` rank-1 float32 views over `buffers`, input i reading buffer pick[i]
// (size 0 where empty[i]).
struct Views {
  Views(const std::vector<int>& pick, const std::vector<bool>& empty)
      : sizes(pick.size()), strides(pick.size(), 1), buffers(64) {
    for (size_t i = 0; i < pick.size(); ++i) {
      sizes[i] = empty[i] ? 0 : 4;
      views.push_back({DType::kFloat32, Device::Cpu(), false, 1, &sizes[i],
                       &strides[i], &buffers[pick[i]]});
    }
  }
  std::vector<int64_t> sizes, strides;
  std::vector<float> buffers;
  std::vector<InputView> views;
};

// The sorted check used above 8 inputs must agree with the pairwise
// definition (FirstAlias) on every pattern, matching or not.
TEST(CallSignatureTest, AliasingMatchesAgreesWithFirstAliasAtEverySize) {
  std::mt19937 rng(7);
  for (int n : {1, 2, 5, 8, 9, 16, 32, 64, 65}) {
    for (int trial = 0; trial < 50; ++trial) {
      // Few distinct buffers so that aliasing is common.
      std::uniform_int_distribution<int> buffer(0, trial % 2 ? n - 1 : 3);
      std::vector<int> pick(n);
      std::vector<bool> empty(n);
      for (int i = 0; i < n; ++i) {
        pick[i] = buffer(rng) % 64;
        empty[i] = rng() % 13 == 0;
      }
      Views v(pick, empty);
      std::vector<int> expected(n);
      for (int i = 0; i < n; ++i) expected[i] = FirstAlias(v.views, i);
      std::vector<int> computed;
      ComputeAliasing(v.views, computed);
      EXPECT_EQ(computed, expected);
      EXPECT_TRUE(AliasingMatches(v.views, expected)) << "n=" << n;
      // Any single change to the pattern must be rejected.
      for (int i = 0; i < n; ++i) {
        std::vector<int> wrong = expected;
        wrong[i] = wrong[i] == i ? (i + 1) % n : i;
        if (wrong == expected) continue;
        EXPECT_FALSE(AliasingMatches(v.views, wrong))
            << "n=" << n << " changed " << i;
      }
    }
  }
}

TEST(CallSignatureTest, EmptyTensorsNeverAlias) {
  Views v({0, 0, 0}, {false, true, false});
  EXPECT_EQ(FirstAlias(v.views, 1), 1);
  EXPECT_EQ(FirstAlias(v.views, 2), 0);
  EXPECT_TRUE(AliasingMatches(v.views, {0, 1, 0}));
  EXPECT_FALSE(AliasingMatches(v.views, {0, 0, 0}));
}

}  // namespace
}  // namespace guardjit
