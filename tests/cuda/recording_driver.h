#ifndef GUARDJIT_TESTS_CUDA_RECORDING_DRIVER_H_
#define GUARDJIT_TESTS_CUDA_RECORDING_DRIVER_H_

// A driver table for tests of CUDA graph bookkeeping (runtime/cuda/
// cuda_graph.h): the emulated device's table (runtime/cuda/
// emulated_driver.h) with the launch and graph functions wrapped so that
// every call is recorded, with its key arguments, in order. Tests install it
// with CudaDriver::InstallForTesting and assert the exact sequence a call
// made (plain launches, a capture, patches, a replay).

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_driver.h"

namespace guardjit {

struct RecordedCall {
  // "cuLaunchKernel", "cuStreamBeginCapture", "cuStreamEndCapture",
  // "cuGraphInstantiate", "cuGraphLaunch", "cuGraphExecKernelNodeSetParams",
  // "cuGraphExecMemcpyNodeSetParams", "cuGraphExecDestroy", "cuGraphDestroy",
  // and "cuMemcpyDtoDAsync" on a capturing stream (a memcpy node; copies
  // outside captures are not recorded).
  std::string name;
  CUstream stream = nullptr;      // launches, captures, graph launches
  CUfunction function = nullptr;  // launches and node patches
  CUgraphNode node = nullptr;     // node patches
  // Launches and node patches: every parameter's value (8 bytes each, as
  // guardjit's kernels take them); copies and copy patches: dst, src, bytes.
  std::vector<uint64_t> params;
};

class RecordingCudaDriver {
 public:
  // The process-wide table (the emulated driver's, wrapped).
  static const CudaDriver* Get();
  // The calls recorded since the last Take, in order, and clears them.
  static std::vector<RecordedCall> Take();
  // Just the names of `calls`.
  static std::vector<std::string> Names(const std::vector<RecordedCall>& calls);
  // Tests that must see a stale pointer fail: while set, node patches are
  // recorded and reported successful but not passed to the device.
  static void DropNodePatches(bool drop);
};

}  // namespace guardjit

#endif  // GUARDJIT_TESTS_CUDA_RECORDING_DRIVER_H_
