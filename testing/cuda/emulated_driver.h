#ifndef GUARDJIT_TESTING_CUDA_EMULATED_DRIVER_H_
#define GUARDJIT_TESTING_CUDA_EMULATED_DRIVER_H_

// A software CUDA device behind the driver table: what tests install with
// CudaDriver::InstallForTesting on machines without a GPU, so the whole
// device path (kDLCUDA calls, the primary context, device allocations and
// copies, module loads, launches on the caller's stream, device-side fault
// flags) runs in CI exactly as it would against libcuda, with the SIMT
// emulator (simt_emulator.h) in place of the GPU.
//
// What it models: one device ("guardjit emulated sm_90", 132 SMs, 1024
// threads per block, 48 KiB shared memory per block); "device memory" is
// host memory from the emulator's own heap (so a kernel reading a pointer the
// emulator did not hand out still reads host memory: it checks nothing about
// address spaces); cuModuleLoadData takes a module's CUDA C source
// (CudaDriver::loads_cuda_source) and compiles it with the host compiler;
// every stream operation runs to completion when it is enqueued, so streams,
// events and the asynchrony of a real device are bookkeeping only.
//
// Stream capture and CUDA graphs (what reduce-overhead mode records;
// runtime/cuda/cuda_graph.h): while a stream is captured, cuLaunchKernel on
// it records a kernel node with a copy of its parameter values (arity x 8
// bytes: guardjit's kernels take only 8-byte parameters) instead of running;
// cuMemcpyDtoDAsync records a memcpy node; the emulated cuBLASLt's matmul
// records a foreign kernel node (CaptureForeignWork: a real cuBLASLt's
// kernels are captured as kernel nodes of functions that are not ours).
// Other copies and memsets on a capturing stream fail with
// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (not recorded), as does capturing
// the legacy default stream. cuGraphInstantiate copies the nodes;
// cuGraphExecKernelNodeSetParams and cuGraphExecMemcpyNodeSetParams patch
// the exec's copy (a foreign node cannot be patched); cuGraphLaunch runs the
// exec's nodes in capture order with the values they hold then, so a
// pointer that was not patched still reads the buffer it was captured with.
// Other node types, cuGraphExecUpdate and dependencies other than the
// capture's chain are not modelled (CUDA_ERROR_NOT_SUPPORTED).
//
// It counts what a test may want to check: launches, the stream of the last
// launch, live device bytes, graph launches and node patches.

#include <cstddef>
#include <cstdint>
#include <functional>

#include "runtime/cuda/cuda_driver.h"

namespace guardjit {

class EmulatedCudaDriver {
 public:
  // The process-wide table (created on the first call; never destroyed).
  static const CudaDriver* Get();

  struct Counters {
    int64_t launches = 0;
    int64_t module_loads = 0;
    int64_t device_allocations = 0;      // cuMemAlloc(Async) calls
    int64_t live_device_bytes = 0;       // allocated and not yet freed
    int64_t memcpy_calls = 0;            // every cuMemcpy* call
    void* last_launch_stream = nullptr;  // of cuLaunchKernel or cuGraphLaunch
    int64_t captured_launches = 0;       // cuLaunchKernel calls recorded
    int64_t graph_launches = 0;          // cuGraphLaunch calls
    int64_t graph_kernel_runs = 0;       // kernel nodes those ran
    int64_t node_param_updates = 0;  // cuGraphExec{Kernel,Memcpy}NodeSetParams
    int64_t captured_copies = 0;     // cuMemcpyDtoDAsync calls recorded
    int64_t captured_foreign = 0;    // foreign work recorded (cuBLASLt)
    int64_t graph_foreign_runs = 0;  // foreign nodes graph launches ran
    int64_t event_records = 0;       // cuEventRecord calls
  };
  static Counters counters();
  // The number of parameters kernel `function` (from this table's
  // cuModuleGetFunction) takes, for tests that read launch parameters; -1
  // for null.
  static int Arity(CUfunction function);
  // For a library emulated beside this driver (the emulated cuBLASLt): when
  // `stream` is being captured, records `work` as a foreign kernel node of
  // the capture (run by each launch of the graph, at its place in the
  // chain) and returns true; otherwise returns false and the caller runs
  // the work now.
  static bool CaptureForeignWork(CUstream stream, std::function<void()> work);
};

}  // namespace guardjit

#endif  // GUARDJIT_TESTING_CUDA_EMULATED_DRIVER_H_
