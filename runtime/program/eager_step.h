#ifndef GUARDJIT_RUNTIME_PROGRAM_EAGER_STEP_H_
#define GUARDJIT_RUNTIME_PROGRAM_EAGER_STEP_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/program/program.h"

namespace guardjit {

// The step of a graph node that no backend compiled: its reference kernel
// (runtime/kernels/) on the slots holding its arguments. `args` pairs each
// graph value the node reads ((node << 16) | output) with where it lives.
// The node's outputs fill the program's extern slots of the node; an output
// of the graph it writes goes straight into the caller's destination where
// OutputPlacement allows, and the others are made contiguous for the
// kernels after it. On a device program the kernel runs on host copies of
// its arguments (correct and slow: each copy waits for the stream).
// UNIMPLEMENTED when the node has no reference kernel.
absl::StatusOr<ProgramStep> MakeEagerStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args);

}  // namespace guardjit

#endif  // GUARDJIT_RUNTIME_PROGRAM_EAGER_STEP_H_
