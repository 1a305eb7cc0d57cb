#include "tests/cuda/recording_driver.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "testing/cuda/emulated_driver.h"

namespace guardjit {
namespace {

const CudaDriver* g_inner = nullptr;
std::atomic<bool> g_drop_patches{false};

struct Log {
  std::mutex mu;
  std::vector<RecordedCall> calls;
};

Log& log() {
  static Log* const kLog = new Log;
  return *kLog;
}

void Record(RecordedCall call) {
  std::lock_guard<std::mutex> lock(log().mu);
  log().calls.push_back(std::move(call));
}

// 8 bytes per parameter, as the emulated device copies them.
std::vector<uint64_t> Values(void** params, size_t count) {
  std::vector<uint64_t> values;
  for (size_t i = 0; params != nullptr && i < count; ++i) {
    values.push_back(*static_cast<const uint64_t*>(params[i]));
  }
  return values;
}

size_t ArityOf(CUfunction f) {
  const int arity = EmulatedCudaDriver::Arity(f);
  return arity < 0 ? 0 : static_cast<size_t>(arity);
}

CudaDriver* Build() {
  g_inner = EmulatedCudaDriver::Get();
  auto* d = new CudaDriver(*g_inner);
  d->library_path = "(recording: guardjit's emulated device)";
  d->cuLaunchKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned shm,
                         CUstream stream, void** params,
                         void** extra) -> CUresult {
    Record({"cuLaunchKernel", stream, f, nullptr, Values(params, ArityOf(f))});
    return g_inner->cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shm, stream,
                                   params, extra);
  };
  d->cuStreamBeginCapture = [](CUstream stream,
                               CUstreamCaptureMode mode) -> CUresult {
    Record({"cuStreamBeginCapture", stream, nullptr, nullptr, {}});
    return g_inner->cuStreamBeginCapture(stream, mode);
  };
  d->cuStreamEndCapture = [](CUstream stream, CUgraph* graph) -> CUresult {
    Record({"cuStreamEndCapture", stream, nullptr, nullptr, {}});
    return g_inner->cuStreamEndCapture(stream, graph);
  };
  d->cuGraphInstantiate = [](CUgraphExec* exec, CUgraph graph,
                             unsigned long long flags) -> CUresult {
    Record({"cuGraphInstantiate", nullptr, nullptr, nullptr, {}});
    return g_inner->cuGraphInstantiate(exec, graph, flags);
  };
  d->cuGraphLaunch = [](CUgraphExec exec, CUstream stream) -> CUresult {
    Record({"cuGraphLaunch", stream, nullptr, nullptr, {}});
    return g_inner->cuGraphLaunch(exec, stream);
  };
  d->cuGraphExecKernelNodeSetParams =
      [](CUgraphExec exec, CUgraphNode node,
         const CUDA_KERNEL_NODE_PARAMS* p) -> CUresult {
    Record({"cuGraphExecKernelNodeSetParams", nullptr, p->func, node,
            Values(p->kernelParams, ArityOf(p->func))});
    if (g_drop_patches.load()) return CUDA_SUCCESS;
    return g_inner->cuGraphExecKernelNodeSetParams(exec, node, p);
  };
  // Copies only while captured (a memcpy node of the graph): plain calls'
  // copies are not graph bookkeeping.
  d->cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                            CUstream stream) -> CUresult {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream != nullptr) (void)g_inner->cuStreamIsCapturing(stream, &status);
    if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
      Record(
          {"cuMemcpyDtoDAsync", stream, nullptr, nullptr, {dst, src, bytes}});
    }
    return g_inner->cuMemcpyDtoDAsync(dst, src, bytes, stream);
  };
  d->cuGraphExecMemcpyNodeSetParams = [](CUgraphExec exec, CUgraphNode node,
                                         const CUDA_MEMCPY3D* p,
                                         CUcontext context) -> CUresult {
    Record({"cuGraphExecMemcpyNodeSetParams",
            nullptr,
            nullptr,
            node,
            {p->dstDevice, p->srcDevice, p->WidthInBytes}});
    if (g_drop_patches.load()) return CUDA_SUCCESS;
    return g_inner->cuGraphExecMemcpyNodeSetParams(exec, node, p, context);
  };
  d->cuGraphExecDestroy = [](CUgraphExec exec) -> CUresult {
    Record({"cuGraphExecDestroy", nullptr, nullptr, nullptr, {}});
    return g_inner->cuGraphExecDestroy(exec);
  };
  d->cuGraphDestroy = [](CUgraph graph) -> CUresult {
    Record({"cuGraphDestroy", nullptr, nullptr, nullptr, {}});
    return g_inner->cuGraphDestroy(graph);
  };
  return d;
}

}  // namespace

const CudaDriver* RecordingCudaDriver::Get() {
  static const CudaDriver* const kDriver = Build();
  return kDriver;
}

std::vector<RecordedCall> RecordingCudaDriver::Take() {
  std::lock_guard<std::mutex> lock(log().mu);
  return std::exchange(log().calls, {});
}

std::vector<std::string> RecordingCudaDriver::Names(
    const std::vector<RecordedCall>& calls) {
  std::vector<std::string> names;
  for (const RecordedCall& c : calls) names.push_back(c.name);
  return names;
}

void RecordingCudaDriver::DropNodePatches(bool drop) {
  g_drop_patches.store(drop);
}

}  // namespace guardjit
