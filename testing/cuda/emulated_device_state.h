// The emulated CUDA driver's shared state (testing/cuda/emulated_driver.h):
// modules, streams, graph nodes, the device's allocation and capture
// bookkeeping, and the helpers its function table is built from. For
// emulated_driver.cc and emulated_graphs.cc (stream capture and CUDA
// graphs) only.
#ifndef GUARDJIT_TESTING_CUDA_EMULATED_DEVICE_STATE_H_
#define GUARDJIT_TESTING_CUDA_EMULATED_DEVICE_STATE_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/simt/simt_emulator.h"
#include "testing/cuda/emulated_driver.h"

namespace guardjit::emulated {

// A loaded module and the kernels cuModuleGetFunction handed out.
struct EmuFunction;
struct EmuModule {
  std::unique_ptr<SimtModule> simt;
  absl::flat_hash_map<std::string, std::unique_ptr<EmuFunction>> functions;
};
struct EmuFunction {
  EmuModule* module = nullptr;
  std::string name;
};
struct EmuStream {
  unsigned int flags = 0;
};
struct EmuEvent {
  unsigned int flags = 0;
};

// A graph node: a kernel launch with its own copy of the parameter values
// (8 bytes each: the emulator copies arity x 8 bytes, which covers
// guardjit's kernels, whose parameters are pointers and int64 sizes), a
// device-to-device copy, or a foreign kernel: work a library enqueued on a
// capturing stream (the emulated cuBLASLt's matmul, EmulatedCudaDriver::
// CaptureForeignWork), reported as a kernel node whose function is none of
// the loaded modules' and whose parameters cannot be read or patched.
struct EmuKernelNode {
  enum class Kind { kKernel, kMemcpy, kForeign };
  Kind kind = Kind::kKernel;
  EmuFunction* function = nullptr;
  SimtDim3 grid;
  SimtDim3 block;
  unsigned int shared_bytes = 0;
  std::vector<uint64_t> values;
  std::vector<void*> params;     // &values[i], what GetParams hands out
  CUdeviceptr dst = 0, src = 0;  // kMemcpy
  size_t bytes = 0;              // kMemcpy
  std::function<void()> work;    // kForeign

  void SetValues(void* const* kernel_params, int arity) {
    values.assign(static_cast<size_t>(std::max(arity, 0)), 0);
    params.clear();
    for (size_t i = 0; i < values.size(); ++i) {
      std::memcpy(&values[i], kernel_params[i], sizeof(uint64_t));
      params.push_back(&values[i]);
    }
  }
};
struct EmuGraph {
  std::vector<std::unique_ptr<EmuKernelNode>> nodes;  // in capture order
};
// An instantiated graph: its own copy of the nodes, which
// cuGraphExecKernelNodeSetParams patches; cuGraphLaunch runs them in order
// with the values they hold then.
struct EmuGraphExec {
  std::vector<EmuKernelNode> nodes;
  absl::flat_hash_map<const EmuKernelNode*, size_t> index;  // graph node ->
};

struct State {
  std::mutex mu;
  absl::flat_hash_map<uintptr_t, size_t> device_blocks;  // guarded by mu
  absl::flat_hash_map<uintptr_t, size_t> host_blocks;    // guarded by mu
  // Streams being captured, and the graph each one records into.
  absl::flat_hash_map<CUstream, EmuGraph*> capturing;  // guarded by mu
  EmulatedCudaDriver::Counters counters;               // guarded by mu
};

// The process's emulated device.
State& state();
// Whether `stream` is being captured (its work is recorded, not run).
bool Capturing(CUstream stream);
// Returns `code`, keeping `why` for cuGetErrorString on this thread.
CUresult Fail(CUresult code, absl::string_view why);
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED for `what` on a capturing stream.
CUresult NotCaptured(absl::string_view what);
// What cuGraphKernelNodeGetParams reports as a foreign node's function.
CUfunction ForeignFunction();
// A device copy (host memory underneath), counted.
CUresult Copy(void* dst, const void* src, size_t bytes);
void* Ptr(CUdeviceptr p);

// Sets `d`'s stream-capture and graph functions (emulated_graphs.cc).
void InstallGraphFunctions(CudaDriver* d);

}  // namespace guardjit::emulated

#endif  // GUARDJIT_TESTING_CUDA_EMULATED_DEVICE_STATE_H_
