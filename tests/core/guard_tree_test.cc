#include "core/guard_tree.h"

#include "core/symbolic_inputs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::HasSubstr;

// Two float32 inputs x [3, 2] and y [2], distinct buffers.
struct Call {
  float xbuf[6] = {};
  float ybuf[2] = {};
  int64_t xs[2] = {3, 2}, xst[2] = {2, 1};
  int64_t ys[1] = {2}, yst[1] = {1};
  InputView in[2];
  AmbientState ambient;
  Call() {
    in[0] = {DType::kFloat32, Device::Cpu(), false, 2, xs, xst, xbuf};
    in[1] = {DType::kFloat32, Device::Cpu(), false, 1, ys, yst, ybuf};
  }
  CallSignature sig() const { return {in, ambient}; }
};

const std::vector<std::string> kNames = {"x", "y"};

uint64_t KeyOf(const CallSignature& call) {
  std::vector<int> alias_of;
  ComputeAliasing(call.inputs, alias_of);
  return GuardTree::StaticKeyOf(call, alias_of);
}

TEST(GuardTreeTest, StaticEntryAcceptsTheSameCall) {
  Call c;
  GuardTree g = StaticGuardTree(kNames, c.sig());
  EXPECT_TRUE(g.Check(c.sig()));
  EXPECT_EQ(g.FailureReason(c.sig()), std::nullopt);
  EXPECT_EQ(g.StaticKey(), KeyOf(c.sig()));
  // Different buffers with the same metadata still hit.
  Call other;
  EXPECT_TRUE(g.Check(other.sig()));
}

TEST(GuardTreeTest, EachMismatchFailsWithDynamoReason) {
  Call base;
  GuardTree g = StaticGuardTree(kNames, base.sig());
  struct Case {
    const char* reason;
    std::function<void(Call&)> change;
  };
  const Case cases[] = {
      {"tensor 'x' size mismatch at index 0. expected 3, actual 2",
       [](Call& c) { c.xs[0] = 2; }},
      {"tensor 'x' stride mismatch at index 0. expected 2, actual 1",
       [](Call& c) {
         c.xst[0] = 1;
         c.xst[1] = 3;
       }},
      {"tensor 'y' dtype mismatch. expected float32, actual int64",
       [](Call& c) { c.in[1].dtype = DType::kInt64; }},
      {"tensor 'y' device mismatch. expected cpu, actual cuda:0",
       [](Call& c) {
         c.in[1].device = Device{DeviceType::kCUDA, 0};
       }},
      {"tensor 'x' requires_grad mismatch. expected requires_grad=0",
       [](Call& c) { c.in[0].requires_grad = true; }},
      {"tensor 'y' rank mismatch. expected 1, actual 2",
       [](Call& c) {
         c.in[1] = c.in[0];
         c.in[1].data = c.ybuf;
       }},
      {"GLOBAL_STATE changed: grad_mode. expected True, actual False",
       [](Call& c) { c.ambient.grad_mode = false; }},
      {"GLOBAL_STATE changed: deterministic_algorithms",
       [](Call& c) { c.ambient.deterministic_algorithms = true; }},
      {"Duplicate tensors found: 'x' and 'y'",
       [](Call& c) {
         c.in[1] = c.in[0];  // same buffer twice
         c.in[1].rank = 1;
         c.in[1].sizes = c.ys;
         c.in[1].strides = c.yst;
       }},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.reason);
    Call c;
    k.change(c);
    EXPECT_FALSE(g.Check(c.sig()));
    auto reason = g.FailureReason(c.sig());
    ASSERT_TRUE(reason.has_value());
    EXPECT_THAT(*reason, HasSubstr(k.reason));
  }
}

TEST(GuardTreeTest, SymbolicDimsAcceptAnySize) {
  Call c;
  GuardTree stat = StaticGuardTree(kNames, c.sig());
  std::vector<TensorGuard> tensors = stat.tensors();
  tensors[0].sizes[0] = std::nullopt;  // x.size(0) dynamic
  GuardTree dyn(stat.ambient(), tensors, stat.alias_of());
  c.xs[0] = 17;
  EXPECT_FALSE(stat.Check(c.sig()));
  EXPECT_TRUE(dyn.Check(c.sig()));
  EXPECT_EQ(dyn.StaticKey(), stat.StaticKey());
}

TEST(GuardTreeTest, AliasedEntryRequiresTheSameAliasing) {
  Call c;
  c.in[1] = {DType::kFloat32, Device::Cpu(), false, 1, c.ys, c.yst, c.xbuf};
  GuardTree g = StaticGuardTree(kNames, c.sig());
  EXPECT_EQ(g.alias_of(), (std::vector<int>{0, 0}));
  EXPECT_TRUE(g.Check(c.sig()));
  Call distinct;
  EXPECT_FALSE(g.Check(distinct.sig()));
  EXPECT_THAT(*g.FailureReason(distinct.sig()),
              HasSubstr("tensor 'y' is no longer the same tensor as 'x'"));
  EXPECT_NE(g.StaticKey(), KeyOf(distinct.sig()));
  EXPECT_THAT(g.Dump(), HasSubstr("DUPLICATE_INPUT: y is x"));
}

TEST(GuardTreeTest, EmptyTensorsNeverAlias) {
  Call c;
  int64_t zero[1] = {0};
  c.in[1] = {DType::kFloat32, Device::Cpu(), false, 1, zero, c.yst, c.xbuf};
  std::vector<int> alias_of;
  ComputeAliasing(c.in, alias_of);
  EXPECT_EQ(alias_of, (std::vector<int>{0, 1}));
}

TEST(GuardTreeTest, DumpLooksLikeDynamo) {
  Call c;
  GuardTree g = StaticGuardTree(kNames, c.sig());
  EXPECT_EQ(g.Dump(),
            "TREE_GUARD_MANAGER:\n"
            "+- RootGuardManager\n"
            "| +- DEFAULT_DEVICE: utils_device.CURRENT_DEVICE == cpu\n"
            "| +- GLOBAL_STATE: ___check_global_state(grad_mode=True, "
            "deterministic_algorithms=False)\n"
            "| +- GuardManager: source=x, accessed_by=InputAccessor(0)\n"
            "| | +- TENSOR_MATCH: check_tensor(x, torch.float32, device=cpu, "
            "requires_grad=False, "
            "size=[3, 2], stride=[2, 1])\n"
            "| | +- NO_TENSOR_ALIASING: check_no_aliasing(x, y)\n"
            "| +- GuardManager: source=y, accessed_by=InputAccessor(1)\n"
            "| | +- TENSOR_MATCH: check_tensor(y, torch.float32, device=cpu, "
            "requires_grad=False, "
            "size=[2], stride=[1])\n"
            "| | +- NO_TENSOR_ALIASING: check_no_aliasing(x, y)\n");
}

}  // namespace
}  // namespace guardjit
