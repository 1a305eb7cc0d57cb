// The global state a compiled entry depends on (core/ambient_state.h): its
// packed bits, which hashing and the guards compare, and equality.

#include "core/ambient_state.h"

#include <set>
#include <vector>

#include "core/call_signature.h"
#include "core/guard_tree.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

AmbientState Make(bool grad, bool deterministic, Device device) {
  AmbientState s;
  s.grad_mode = grad;
  s.deterministic_algorithms = deterministic;
  s.default_device = device;
  return s;
}

const Device kCuda0{DeviceType::kCUDA, 0};
const Device kCuda1{DeviceType::kCUDA, 1};

TEST(AmbientStateTest, DefaultsAreTorchDefaults) {
  const AmbientState s;
  EXPECT_TRUE(s.grad_mode);
  EXPECT_FALSE(s.deterministic_algorithms);
  EXPECT_EQ(s.default_device, Device::Cpu());
  EXPECT_EQ(s.Bits(), 1u);
}

TEST(AmbientStateTest, BitsPackEachField) {
  EXPECT_EQ(Make(false, false, Device::Cpu()).Bits(), 0u);
  EXPECT_EQ(Make(false, true, Device::Cpu()).Bits(), 2u);
  EXPECT_EQ(Make(true, true, Device::Cpu()).Bits(), 3u);
  EXPECT_EQ(Make(false, false, kCuda0).Bits(), 1u << 8);
  EXPECT_EQ(Make(true, false, Device{DeviceType::kCUDA, 3}).Bits(),
            1u | (1u << 8) | (3u << 16));
  // A large device index stays clear of the low fields.
  EXPECT_EQ(Make(false, false, Device{DeviceType::kCPU, 0xFFFF}).Bits(),
            uint64_t{0xFFFF} << 16);
}

TEST(AmbientStateTest, EveryDifferenceChangesTheBits) {
  const std::vector<AmbientState> states = {
      Make(true, false, Device::Cpu()),
      Make(false, false, Device::Cpu()),
      Make(true, true, Device::Cpu()),
      Make(true, false, kCuda0),
      Make(true, false, kCuda1),
      Make(false, true, kCuda1),
      Make(true, false, Device{DeviceType::kCUDA, -1})};
  std::set<uint64_t> bits;
  for (const AmbientState& s : states) bits.insert(s.Bits());
  EXPECT_EQ(bits.size(), states.size());
}

TEST(AmbientStateTest, EqualityFollowsTheFields) {
  EXPECT_TRUE(Make(true, false, kCuda1) == Make(true, false, kCuda1));
  EXPECT_FALSE(Make(true, false, kCuda1) == Make(true, false, kCuda0));
  EXPECT_FALSE(Make(true, false, kCuda0) == Make(true, false, Device::Cpu()));
  EXPECT_FALSE(Make(true, false, Device::Cpu()) ==
               Make(false, false, Device::Cpu()));
  EXPECT_FALSE(Make(true, true, Device::Cpu()) ==
               Make(true, false, Device::Cpu()));
}

TEST(AmbientStateTest, AnEntryGuardsTheStateItWasMadeUnder) {
  const AmbientState made = Make(true, false, kCuda0);
  const GuardTree tree = GuardTree(made, {}, {});
  EXPECT_TRUE(tree.Check({{}, made}));
  // Each field on its own fails the entry, naming the field.
  const struct {
    AmbientState call;
    const char* reason;
  } cases[] = {
      {Make(false, false, kCuda0),
       "GLOBAL_STATE changed: grad_mode. expected True, actual False"},
      {Make(true, true, kCuda0),
       "GLOBAL_STATE changed: deterministic_algorithms. expected False, "
       "actual True"},
      {Make(true, false, kCuda1),
       "DEFAULT_DEVICE changed. expected cuda:0, actual cuda:1"},
      {Make(true, false, Device::Cpu()),
       "DEFAULT_DEVICE changed. expected cuda:0, actual cpu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.reason);
    EXPECT_FALSE(tree.Check({{}, c.call}));
    EXPECT_EQ(tree.FailureReason({{}, c.call}).value_or(""), c.reason);
  }
}

}  // namespace
}  // namespace guardjit
