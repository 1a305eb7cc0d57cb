#ifndef GUARDJIT_CORE_AMBIENT_STATE_H_
#define GUARDJIT_CORE_AMBIENT_STATE_H_

#include <cstdint>
#include <string>

#include "core/device.h"

namespace guardjit {

// Global state a compiled entry depends on besides its inputs, as TorchDynamo
// guards it: grad mode, deterministic algorithms, the default device. The
// host passes it with each call (gj_call_options).
struct AmbientState {
  bool grad_mode = true;
  bool deterministic_algorithms = false;
  Device default_device;

  // Packed for hashing and the guard program.
  uint64_t Bits() const {
    return (grad_mode ? 1u : 0u) | (deterministic_algorithms ? 2u : 0u) |
           (static_cast<uint64_t>(default_device.type) << 8) |
           (static_cast<uint64_t>(static_cast<uint32_t>(default_device.index))
            << 16);
  }
  friend bool operator==(const AmbientState& a, const AmbientState& b) {
    return a.Bits() == b.Bits();
  }
};

}  // namespace guardjit

#endif  // GUARDJIT_CORE_AMBIENT_STATE_H_
