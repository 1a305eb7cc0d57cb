// Device names (core/device.h): "cpu", "cuda", "cuda:N" parse and print
// back; anything else is refused rather than guessed.

#include "core/device.h"

#include <optional>

#include "gtest/gtest.h"

namespace guardjit {
namespace {

TEST(DeviceTest, ParsesAndPrintsTheNames) {
  EXPECT_EQ(Device::Parse("cpu"), Device::Cpu());
  EXPECT_EQ(Device::Parse("cuda"), (Device{DeviceType::kCUDA, 0}));
  EXPECT_EQ(Device::Parse("cuda:3"), (Device{DeviceType::kCUDA, 3}));
  EXPECT_EQ(Device::Cpu().ToString(), "cpu");
  EXPECT_EQ((Device{DeviceType::kCUDA, 3}).ToString(), "cuda:3");
  for (const char* name : {"cpu", "cuda:0", "cuda:12"}) {
    const std::optional<Device> device = Device::Parse(name);
    ASSERT_TRUE(device.has_value()) << name;
    EXPECT_EQ(device->ToString(), name);
  }
  EXPECT_TRUE(Device::Cpu().is_cpu());
  EXPECT_FALSE((Device{DeviceType::kCUDA, 0}).is_cpu());
}

TEST(DeviceTest, RefusesOtherNames) {
  for (const char* name : {"", "CPU", "gpu", "cuda:", "cuda:-1", "cuda:x",
                           "cuda:1.5", "cuda:99999999999", "cuda0", " cpu"}) {
    EXPECT_EQ(Device::Parse(name), std::nullopt) << "'" << name << "'";
  }
}

}  // namespace
}  // namespace guardjit
