#ifndef GUARDJIT_RUNTIME_PROGRAM_STEP_PROFILE_H_
#define GUARDJIT_RUNTIME_PROGRAM_STEP_PROFILE_H_

// Host time per step of a compiled program, summed over its calls while
// GJ_PROFILE is set in the environment (read once): where a call's time
// goes, kernel by kernel and extern step by extern step, and how much of it
// is between steps (slot set-up, allocation, the runner's own work).
// explain() lists it under "Step Times". Device programs' steps are timed
// on the host: their launches, not the device's work (which CUDA graphs and
// streams overlap).
//
// A profiled call costs two clock reads per step; an unprofiled program
// holds no profile and pays one branch per call.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/program/program.h"

namespace guardjit {

// Whether GJ_PROFILE=1 (any value but "" or "0").
bool StepProfilingEnabled();

// How many of the slowest steps explain() lists: GJ_PROFILE=N for a number
// N >= 2, else 12.
int StepProfileTopSteps();

class StepProfile {
 public:
  explicit StepProfile(size_t num_steps);

  // Adds one call: `step_ns[i]` the time of step i, `call_ns` the whole.
  // Concurrent calls may add at once.
  void AddCall(const int64_t* step_ns, int64_t call_ns);

  // "120 calls, 8.412 ms per call: steps 8.120 ms (96.5%), between steps
  // 292.0 us", the time per step kind, then the `top` steps by time, each
  // with its mean, share, kind and label. Empty before the first call.
  std::string Describe(const Program& program, int top = 12) const;

 private:
  const size_t num_steps_;
  std::unique_ptr<std::atomic<int64_t>[]> step_ns_;
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> call_ns_{0};
};

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_STEP_PROFILE_H_
