#include "core/device.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace guardjit {

std::string Device::ToString() const {
  if (type == DeviceType::kCPU) return "cpu";
  return absl::StrCat("cuda:", index);
}

std::optional<Device> Device::Parse(absl::string_view text) {
  if (text == "cpu") return Device::Cpu();
  if (text == "cuda") return Device{DeviceType::kCUDA, 0};
  if (text.substr(0, 5) == "cuda:") {
    int index;
    if (absl::SimpleAtoi(text.substr(5), &index) && index >= 0) {
      return Device{DeviceType::kCUDA, index};
    }
  }
  return std::nullopt;
}

}  // namespace guardjit
