// The emulated driver's stream capture and CUDA graphs
// (testing/cuda/emulated_driver.h says what is modelled): while a stream is
// captured, launches and device copies on it are recorded as nodes; an
// instantiated graph holds its own copy of the nodes, which the
// *SetParams calls patch and cuGraphLaunch runs in order.

#include <algorithm>
#include <cstring>
#include <mutex>

#include "absl/status/status.h"
#include "testing/cuda/emulated_device_state.h"

namespace guardjit::emulated {

void InstallGraphFunctions(CudaDriver* d) {
  d->cuStreamIsCapturing = [](CUstream stream,
                              CUstreamCaptureStatus* status) -> CUresult {
    if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *status = Capturing(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  };
  d->cuStreamBeginCapture = [](CUstream stream,
                               CUstreamCaptureMode) -> CUresult {
    // As on a device: the legacy default stream cannot be captured.
    if (stream == nullptr) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    std::lock_guard<std::mutex> lock(state().mu);
    if (state().capturing.contains(stream)) return CUDA_ERROR_ILLEGAL_STATE;
    state().capturing[stream] = new EmuGraph;
    return CUDA_SUCCESS;
  };
  d->cuStreamEndCapture = [](CUstream stream, CUgraph* graph) -> CUresult {
    if (graph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(state().mu);
    auto it = state().capturing.find(stream);
    if (it == state().capturing.end()) return CUDA_ERROR_ILLEGAL_STATE;
    *graph = reinterpret_cast<CUgraph>(it->second);
    state().capturing.erase(it);
    return CUDA_SUCCESS;
  };
  d->cuGraphGetNodes = [](CUgraph graph, CUgraphNode* nodes,
                          size_t* count) -> CUresult {
    auto* g = reinterpret_cast<EmuGraph*>(graph);
    if (g == nullptr || count == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (nodes != nullptr) {
      for (size_t i = 0; i < std::min(*count, g->nodes.size()); ++i) {
        nodes[i] = reinterpret_cast<CUgraphNode>(g->nodes[i].get());
      }
    }
    *count = g->nodes.size();
    return CUDA_SUCCESS;
  };
  d->cuGraphNodeGetType = [](CUgraphNode node,
                             CUgraphNodeType* type) -> CUresult {
    if (node == nullptr || type == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *type = reinterpret_cast<EmuKernelNode*>(node)->kind ==
                    EmuKernelNode::Kind::kMemcpy
                ? CU_GRAPH_NODE_TYPE_MEMCPY
                : CU_GRAPH_NODE_TYPE_KERNEL;
    return CUDA_SUCCESS;
  };
  d->cuGraphKernelNodeGetParams = [](CUgraphNode node,
                                     CUDA_KERNEL_NODE_PARAMS* p) -> CUresult {
    auto* n = reinterpret_cast<EmuKernelNode*>(node);
    if (n == nullptr || p == nullptr ||
        n->kind == EmuKernelNode::Kind::kMemcpy) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *p = CUDA_KERNEL_NODE_PARAMS{};
    if (n->kind == EmuKernelNode::Kind::kForeign) {
      p->func = ForeignFunction();
      p->gridDimX = p->gridDimY = p->gridDimZ = 1;
      p->blockDimX = p->blockDimY = p->blockDimZ = 1;
      return CUDA_SUCCESS;
    }
    p->func = reinterpret_cast<CUfunction>(n->function);
    p->gridDimX = n->grid.x;
    p->gridDimY = n->grid.y;
    p->gridDimZ = n->grid.z;
    p->blockDimX = n->block.x;
    p->blockDimY = n->block.y;
    p->blockDimZ = n->block.z;
    p->sharedMemBytes = n->shared_bytes;
    p->kernelParams = n->params.data();
    return CUDA_SUCCESS;
  };
  d->cuGraphInstantiate = [](CUgraphExec* exec, CUgraph graph,
                             unsigned long long) -> CUresult {
    auto* g = reinterpret_cast<EmuGraph*>(graph);
    if (exec == nullptr || g == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto* e = new EmuGraphExec;
    e->nodes.reserve(g->nodes.size());
    for (const auto& node : g->nodes) {
      e->index[node.get()] = e->nodes.size();
      EmuKernelNode copy = *node;
      copy.params.clear();
      e->nodes.push_back(std::move(copy));
    }
    for (EmuKernelNode& n : e->nodes) {
      for (uint64_t& v : n.values) n.params.push_back(&v);
    }
    *exec = reinterpret_cast<CUgraphExec>(e);
    return CUDA_SUCCESS;
  };
  d->cuGraphExecKernelNodeSetParams =
      [](CUgraphExec exec, CUgraphNode node,
         const CUDA_KERNEL_NODE_PARAMS* p) -> CUresult {
    auto* e = reinterpret_cast<EmuGraphExec*>(exec);
    if (e == nullptr || p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto it = e->index.find(reinterpret_cast<const EmuKernelNode*>(node));
    if (it == e->index.end()) return CUDA_ERROR_INVALID_VALUE;
    EmuKernelNode& n = e->nodes[it->second];
    if (n.kind != EmuKernelNode::Kind::kKernel) return CUDA_ERROR_INVALID_VALUE;
    // A device allows no other function in an instantiated node's context.
    if (reinterpret_cast<EmuFunction*>(p->func) != n.function) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int arity = n.function->module->simt->Arity(n.function->name);
    if (arity > 0 && p->kernelParams == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    n.grid = SimtDim3{p->gridDimX, p->gridDimY, p->gridDimZ};
    n.block = SimtDim3{p->blockDimX, p->blockDimY, p->blockDimZ};
    n.shared_bytes = p->sharedMemBytes;
    n.SetValues(p->kernelParams, arity);
    std::lock_guard<std::mutex> lock(state().mu);
    ++state().counters.node_param_updates;
    return CUDA_SUCCESS;
  };
  d->cuGraphMemcpyNodeGetParams = [](CUgraphNode node,
                                     CUDA_MEMCPY3D* p) -> CUresult {
    auto* n = reinterpret_cast<EmuKernelNode*>(node);
    if (n == nullptr || p == nullptr ||
        n->kind != EmuKernelNode::Kind::kMemcpy) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *p = CUDA_MEMCPY3D{};
    p->srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p->srcDevice = n->src;
    p->dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p->dstDevice = n->dst;
    p->WidthInBytes = n->bytes;
    p->Height = 1;
    p->Depth = 1;
    return CUDA_SUCCESS;
  };
  d->cuGraphExecMemcpyNodeSetParams = [](CUgraphExec exec, CUgraphNode node,
                                         const CUDA_MEMCPY3D* p,
                                         CUcontext) -> CUresult {
    auto* e = reinterpret_cast<EmuGraphExec*>(exec);
    if (e == nullptr || p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto it = e->index.find(reinterpret_cast<const EmuKernelNode*>(node));
    if (it == e->index.end()) return CUDA_ERROR_INVALID_VALUE;
    EmuKernelNode& n = e->nodes[it->second];
    // One-dimensional device-to-device copies of the captured extent, as a
    // device requires of an instantiated memcpy node.
    if (n.kind != EmuKernelNode::Kind::kMemcpy ||
        p->srcMemoryType != CU_MEMORYTYPE_DEVICE ||
        p->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
        p->WidthInBytes != n.bytes || p->Height > 1 || p->Depth > 1) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    n.src = p->srcDevice;
    n.dst = p->dstDevice;
    std::lock_guard<std::mutex> lock(state().mu);
    ++state().counters.node_param_updates;
    return CUDA_SUCCESS;
  };
  d->cuGraphLaunch = [](CUgraphExec exec, CUstream stream) -> CUresult {
    auto* e = reinterpret_cast<EmuGraphExec*>(exec);
    if (e == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (Capturing(stream)) return NotCaptured("cuGraphLaunch");
    {
      std::lock_guard<std::mutex> lock(state().mu);
      ++state().counters.graph_launches;
      state().counters.last_launch_stream = stream;
    }
    // The nodes in capture order (a chain), each with its current values:
    // a pointer never patched still reads the buffer it was captured with.
    for (const EmuKernelNode& n : e->nodes) {
      if (n.kind == EmuKernelNode::Kind::kMemcpy) {
        const CUresult copied = Copy(Ptr(n.dst), Ptr(n.src), n.bytes);
        if (copied != CUDA_SUCCESS) return copied;
        continue;
      }
      if (n.kind == EmuKernelNode::Kind::kForeign) {
        n.work();
        std::lock_guard<std::mutex> lock(state().mu);
        ++state().counters.graph_foreign_runs;
        continue;
      }
      const absl::Status launched = n.function->module->simt->Launch(
          n.function->name, n.grid, n.block, n.params.data());
      if (!launched.ok()) {
        return Fail(CUDA_ERROR_LAUNCH_FAILED, launched.ToString());
      }
      std::lock_guard<std::mutex> lock(state().mu);
      ++state().counters.graph_kernel_runs;
    }
    return CUDA_SUCCESS;
  };
  d->cuGraphExecDestroy = [](CUgraphExec exec) -> CUresult {
    delete reinterpret_cast<EmuGraphExec*>(exec);
    return CUDA_SUCCESS;
  };
  d->cuGraphDestroy = [](CUgraph graph) -> CUresult {
    delete reinterpret_cast<EmuGraph*>(graph);
    return CUDA_SUCCESS;
  };
}

}  // namespace guardjit::emulated
