#include "runtime/cuda/cuda_graph.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace guardjit {

struct CudaGraphSet::Record {
  std::vector<int64_t> key;
  bool warm = false;
  CUdeviceptr pool = 0;
  int64_t pool_bytes = 0;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  // Per captured launch: its kernel node and the launch as the exec holds
  // it now (parameters patched in place).
  std::vector<CUgraphNode> nodes;
  std::vector<CudaKernelLaunch> launches;
  bool refused = false;
};

namespace {

std::string KeyText(const std::vector<int64_t>& key) {
  return absl::StrCat("[", absl::StrJoin(key, ", "), "]");
}

std::string Bytes(int64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  if (bytes < (int64_t{1} << 20)) {
    return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
  }
  return absl::StrFormat("%.1f MiB",
                         static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

CudaGraphSet::CudaGraphSet(const CudaDevice* device) : device_(device) {}

void CudaGraphSet::Refuse(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(refusal_mu_);
    if (std::find(refusals_.begin(), refusals_.end(), reason) !=
        refusals_.end()) {
      return;
    }
    refusals_.push_back(reason);
  }
  if (LogEnabled(LogTopic::kCudaGraphs)) {
    Log(LogTopic::kCudaGraphs, absl::StrCat("skipping cudagraphs due to ",
                                            reason, "; plain launches"));
  }
}

std::string CudaGraphSet::Describe() const {
  std::string text;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (totals_.recorded > 0 || !records_.empty()) {
      std::vector<std::string> keys;
      for (const auto& r : records_) {
        if (r->exec != nullptr) keys.push_back(KeyText(r->key));
      }
      text = absl::StrCat(
          "cuda graphs: ", totals_.recorded, " recorded (", keys.size(),
          " kept", keys.empty() ? "" : ": size keys ",
          absl::StrJoin(keys, ", "), "), ", totals_.replays, " replays, ",
          totals_.pointer_updates, " node pointer updates, ",
          totals_.recaptures, " re-captures, ", totals_.evictions,
          " evictions, private pool ", Bytes(totals_.pool_bytes));
    }
  }
  std::lock_guard<std::mutex> lock(refusal_mu_);
  if (!refusals_.empty()) {
    if (!text.empty()) absl::StrAppend(&text, "; ");
    absl::StrAppend(&text,
                    "cuda graphs refused: ", absl::StrJoin(refusals_, "; "));
  }
  return text;
}

void CudaGraphSet::Count(std::atomic<int64_t> CudaGraphCounters::*counter,
                         int64_t n) {
  if (policy_ != nullptr && policy_->counters != nullptr) {
    (policy_->counters->*counter).fetch_add(n, std::memory_order_relaxed);
  }
}

#ifdef GUARDJIT_HAVE_CUDA_HEADERS

absl::Status LaunchKernel(const CudaDriver& driver,
                          const CudaKernelLaunch& launch, CUstream stream) {
  absl::InlinedVector<void*, 12> params;
  for (const uint64_t& v : launch.params) {
    params.push_back(const_cast<uint64_t*>(&v));
  }
  RETURN_IF_CUDA_ERROR(driver.cuLaunchKernel(
      launch.function, launch.grid_x, 1, 1, launch.block_x, 1, 1,
      launch.shared_bytes, stream, params.data(), nullptr));
  return absl::OkStatus();
}

CudaGraphSet::~CudaGraphSet() {
  absl::StatusOr<CudaContextScope> scope = device_->MakeCurrent();
  if (!scope.ok()) return;
  for (auto& r : records_) Release(*r);
  if (capture_stream_ != nullptr) {
    (void)device_->driver().cuStreamDestroy(capture_stream_);
  }
}

void CudaGraphSet::Release(Record& r) {
  const CudaDriver& driver = device_->driver();
  if (r.exec != nullptr) (void)driver.cuGraphExecDestroy(r.exec);
  if (r.graph != nullptr) (void)driver.cuGraphDestroy(r.graph);
  r.exec = nullptr;
  r.graph = nullptr;
  r.nodes.clear();
  r.launches.clear();
  if (r.pool != 0) {
    // cuMemFree waits for the device work that may still read it.
    (void)driver.cuMemFree(r.pool);
    totals_.pool_bytes -= r.pool_bytes;
    Count(&CudaGraphCounters::pool_bytes, -r.pool_bytes);
  }
  r.pool = 0;
  r.pool_bytes = 0;
}

std::optional<CudaGraphSet::Lease> CudaGraphSet::TryAcquire(
    absl::Span<const int64_t> key, const CudaGraphPolicy& policy) {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  policy_ = &policy;
  for (auto it = records_.begin(); it != records_.end(); ++it) {
    if (absl::MakeConstSpan((*it)->key) == key) {
      records_.splice(records_.begin(), records_, it);
      return Lease(this, records_.front().get(), std::move(lock));
    }
  }
  auto record = std::make_unique<Record>();
  record->key.assign(key.begin(), key.end());
  records_.push_front(std::move(record));
  const size_t limit =
      static_cast<size_t>(std::max(1, policy.max_graphs_per_entry));
  while (records_.size() > limit) {
    Record& oldest = *records_.back();
    if (oldest.exec != nullptr) {
      ++totals_.evictions;
      Count(&CudaGraphCounters::evictions, 1);
      if (LogEnabled(LogTopic::kCudaGraphs)) {
        Log(LogTopic::kCudaGraphs,
            absl::StrCat("evicting the graph of size key ", KeyText(oldest.key),
                         " (max_graphs_per_entry ", limit, ")"));
      }
    }
    Release(oldest);
    records_.pop_back();
  }
  return Lease(this, records_.front().get(), std::move(lock));
}

bool CudaGraphSet::Lease::FirstCall() {
  if (record_->warm) return false;
  record_->warm = true;
  return true;
}

absl::StatusOr<CUdeviceptr> CudaGraphSet::Lease::Pool(int64_t bytes) {
  Record& r = *record_;
  if (r.pool != 0 && r.pool_bytes >= bytes) return r.pool;
  const int64_t cap = set_->policy_->max_pool_bytes;
  if (bytes > cap) {
    return absl::ResourceExhaustedError(
        absl::StrCat("its private pool would hold ", Bytes(bytes),
                     " of intermediates at size key ", KeyText(r.key),
                     ", over the cap of ", Bytes(cap)));
  }
  set_->Release(r);
  const CudaDriver& driver = set_->device_->driver();
  RETURN_IF_CUDA_ERROR(driver.cuMemAlloc(
      &r.pool, static_cast<size_t>(std::max<int64_t>(bytes, 1))));
  r.pool_bytes = bytes;
  set_->totals_.pool_bytes += bytes;
  set_->Count(&CudaGraphCounters::pool_bytes, bytes);
  return r.pool;
}

absl::Status CudaGraphSet::Capture(
    Record& r, absl::Span<const CudaKernelLaunch> launches) {
  const CudaDriver& driver = device_->driver();
  if (capture_stream_ == nullptr) {
    RETURN_IF_CUDA_ERROR(
        driver.cuStreamCreate(&capture_stream_, CU_STREAM_NON_BLOCKING));
  }
  RETURN_IF_CUDA_ERROR(driver.cuStreamBeginCapture(
      capture_stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  absl::Status launched;
  for (const CudaKernelLaunch& launch : launches) {
    launched = LaunchKernel(driver, launch, capture_stream_);
    if (!launched.ok()) break;
  }
  CUgraph graph = nullptr;
  const CUresult ended = driver.cuStreamEndCapture(capture_stream_, &graph);
  RETURN_IF_ERROR(launched);
  RETURN_IF_CUDA_ERROR(ended);
  r.graph = graph;
  // The captured nodes, matched to the launches that made them (a chain
  // captured from one stream; cuGraphGetNodes promises no order).
  size_t count = 0;
  RETURN_IF_CUDA_ERROR(driver.cuGraphGetNodes(graph, nullptr, &count));
  std::vector<CUgraphNode> nodes(count);
  RETURN_IF_CUDA_ERROR(driver.cuGraphGetNodes(graph, nodes.data(), &count));
  if (count != launches.size()) {
    return absl::InternalError(absl::StrCat("the captured graph has ", count,
                                            " nodes for ", launches.size(),
                                            " launches"));
  }
  r.nodes.assign(launches.size(), nullptr);
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type;
    RETURN_IF_CUDA_ERROR(driver.cuGraphNodeGetType(node, &type));
    if (type != CU_GRAPH_NODE_TYPE_KERNEL) {
      return absl::InternalError(
          absl::StrCat("the captured graph has a node of type ", type,
                       " where only kernels were launched"));
    }
    CUDA_KERNEL_NODE_PARAMS p{};
    RETURN_IF_CUDA_ERROR(driver.cuGraphKernelNodeGetParams(node, &p));
    bool matched = false;
    for (size_t i = 0; i < launches.size() && !matched; ++i) {
      const CudaKernelLaunch& l = launches[i];
      if (r.nodes[i] != nullptr || p.func != l.function ||
          p.gridDimX != l.grid_x || p.blockDimX != l.block_x) {
        continue;
      }
      bool same = p.kernelParams != nullptr || l.params.empty();
      for (size_t k = 0; same && k < l.params.size(); ++k) {
        same = *static_cast<const uint64_t*>(p.kernelParams[k]) == l.params[k];
      }
      if (same) {
        r.nodes[i] = node;
        matched = true;
      }
    }
    if (!matched) {
      return absl::InternalError(
          "a captured kernel node matches none of the launches");
    }
  }
  RETURN_IF_CUDA_ERROR(driver.cuGraphInstantiate(&r.exec, graph, 0));
  r.launches.assign(launches.begin(), launches.end());
  return absl::OkStatus();
}

absl::StatusOr<bool> CudaGraphSet::Lease::Replay(
    absl::Span<const CudaKernelLaunch> launches, CUstream stream) {
  CudaGraphSet& set = *set_;
  Record& r = *record_;
  if (r.refused) return false;
  const CudaDriver& driver = set.device_->driver();
  // Patches for the nodes whose buffer pointers moved; anything else that
  // moved needs a new capture.
  bool recapture = r.exec == nullptr || r.launches.size() != launches.size();
  absl::InlinedVector<size_t, 8> patch;
  for (size_t i = 0; i < launches.size() && !recapture; ++i) {
    const CudaKernelLaunch& now = launches[i];
    const CudaKernelLaunch& was = r.launches[i];
    if (now.function != was.function || now.grid_x != was.grid_x ||
        now.block_x != was.block_x || now.shared_bytes != was.shared_bytes ||
        now.params.size() != was.params.size()) {
      recapture = true;
      break;
    }
    bool moved = false;
    for (size_t k = 0; k < now.params.size(); ++k) {
      if (now.params[k] == was.params[k]) continue;
      const CudaGraphBuffer::Kind kind = now.buffers[k].kind;
      if (kind != CudaGraphBuffer::Kind::kInput &&
          kind != CudaGraphBuffer::Kind::kOutput) {
        recapture = true;
        break;
      }
      moved = true;
    }
    if (moved) patch.push_back(i);
  }
  if (!recapture && !patch.empty()) {
    for (size_t i : patch) {
      CudaKernelLaunch& held = r.launches[i];
      held.params = launches[i].params;
      absl::InlinedVector<void*, 12> params;
      for (uint64_t& v : held.params) params.push_back(&v);
      CUDA_KERNEL_NODE_PARAMS p{};
      p.func = held.function;
      p.gridDimX = held.grid_x;
      p.gridDimY = 1;
      p.gridDimZ = 1;
      p.blockDimX = held.block_x;
      p.blockDimY = 1;
      p.blockDimZ = 1;
      p.sharedMemBytes = held.shared_bytes;
      p.kernelParams = params.data();
      const CUresult patched =
          driver.cuGraphExecKernelNodeSetParams(r.exec, r.nodes[i], &p);
      if (patched != CUDA_SUCCESS) {
        if (LogEnabled(LogTopic::kCudaGraphs)) {
          Log(LogTopic::kCudaGraphs,
              absl::StrCat("re-capturing size key ", KeyText(r.key), ": ",
                           CudaStatus(patched, "cuGraphExecKernelNodeSetParams")
                               .message()));
        }
        recapture = true;
        break;
      }
      ++set.totals_.pointer_updates;
      set.Count(&CudaGraphCounters::pointer_updates, 1);
    }
  }
  if (recapture) {
    const bool seen = r.exec != nullptr ||
                      std::find(set.keys_seen_.begin(), set.keys_seen_.end(),
                                r.key) != set.keys_seen_.end();
    const CudaDriver& d = driver;
    if (r.exec != nullptr) (void)d.cuGraphExecDestroy(r.exec);
    if (r.graph != nullptr) (void)d.cuGraphDestroy(r.graph);
    r.exec = nullptr;
    r.graph = nullptr;
    const absl::Status captured = set.Capture(r, launches);
    if (!captured.ok()) {
      if (r.exec != nullptr) (void)d.cuGraphExecDestroy(r.exec);
      if (r.graph != nullptr) (void)d.cuGraphDestroy(r.graph);
      r.exec = nullptr;
      r.graph = nullptr;
      r.refused = true;
      set.Refuse(absl::StrCat("size key ", KeyText(r.key),
                              " could not be captured: ", captured.message()));
      return false;
    }
    ++set.totals_.recorded;
    set.Count(&CudaGraphCounters::recorded, 1);
    if (seen) {
      ++set.totals_.recaptures;
      set.Count(&CudaGraphCounters::recaptures, 1);
    } else {
      set.keys_seen_.push_back(r.key);
    }
    if (LogEnabled(LogTopic::kCudaGraphs)) {
      Log(LogTopic::kCudaGraphs,
          absl::StrCat(seen ? "re-recorded" : "recorded", " a CUDA graph of ",
                       launches.size(), " kernels for size key ",
                       KeyText(r.key)));
    }
  }
  RETURN_IF_CUDA_ERROR(driver.cuGraphLaunch(r.exec, stream));
  ++set.totals_.replays;
  set.Count(&CudaGraphCounters::replays, 1);
  return true;
}

#else  // !GUARDJIT_HAVE_CUDA_HEADERS

absl::Status LaunchKernel(const CudaDriver&, const CudaKernelLaunch&,
                          CUstream) {
  return absl::UnavailableError("guardjit was built without the CUDA headers");
}

CudaGraphSet::~CudaGraphSet() = default;
void CudaGraphSet::Release(Record&) {}
std::optional<CudaGraphSet::Lease> CudaGraphSet::TryAcquire(
    absl::Span<const int64_t>, const CudaGraphPolicy&) {
  return std::nullopt;
}
bool CudaGraphSet::Lease::FirstCall() { return true; }
absl::StatusOr<CUdeviceptr> CudaGraphSet::Lease::Pool(int64_t) {
  return absl::UnavailableError("guardjit was built without the CUDA headers");
}
absl::StatusOr<bool> CudaGraphSet::Lease::Replay(
    absl::Span<const CudaKernelLaunch>, CUstream) {
  return false;
}
absl::Status CudaGraphSet::Capture(Record&,
                                   absl::Span<const CudaKernelLaunch>) {
  return absl::UnavailableError("guardjit was built without the CUDA headers");
}

#endif  // GUARDJIT_HAVE_CUDA_HEADERS

}  // namespace guardjit
