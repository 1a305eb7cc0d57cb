#ifndef GUARDJIT_CORE_DEVICE_H_
#define GUARDJIT_CORE_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace guardjit {

enum class DeviceType : uint8_t { kCPU, kCUDA };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  static Device Cpu() { return {}; }
  bool is_cpu() const { return type == DeviceType::kCPU; }

  // "cpu", "cuda:0".
  std::string ToString() const;
  // Parses "cpu", "cuda", "cuda:N".
  static std::optional<Device> Parse(absl::string_view text);

  friend bool operator==(const Device& a, const Device& b) {
    return a.type == b.type && a.index == b.index;
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_DEVICE_H_
