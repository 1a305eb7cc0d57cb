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
  // Per captured op: its node (null for extern calls: theirs are not ours)
  // and the op as the exec holds it now (parameters patched in place; an
  // extern call's enqueue and context are not kept).
  std::vector<CUgraphNode> nodes;
  std::vector<CudaGraphOp> ops;
  int externs = 0;  // extern calls in the captured graph
  // cuBLASLt's workspace (its own allocation, kept like the pool).
  CUdeviceptr workspace = 0;
  int64_t workspace_bytes = 0;
  // Inputs and outputs whose extern operands are staged through the pool
  // (sticky), each with what it is ("input 0 of node 'fc1'").
  struct Staging {
    CudaGraphBuffer buffer;
    std::string what;
  };
  std::vector<Staging> staged;
  bool refused = false;
};

namespace {

std::string KeyText(const std::vector<int64_t>& key) {
  return absl::StrCat("[", absl::StrJoin(key, ", "), "]");
}

bool SameBuffer(const CudaGraphBuffer& a, const CudaGraphBuffer& b) {
  return a.kind == b.kind && a.index == b.index;
}

const char* KindName(CudaGraphBuffer::Kind kind) {
  switch (kind) {
    case CudaGraphBuffer::Kind::kInput:
      return "input";
    case CudaGraphBuffer::Kind::kOutput:
      return "output";
    case CudaGraphBuffer::Kind::kPool:
      return "pool region";
    case CudaGraphBuffer::Kind::kConstant:
      return "constant";
    default:
      return "value";
  }
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
      int externs = 0;
      std::vector<std::string> staged;
      for (const auto& r : records_) {
        externs = std::max(externs, r->externs);
        for (const Record::Staging& st : r->staged) {
          if (std::find(staged.begin(), staged.end(), st.what) ==
              staged.end()) {
            staged.push_back(st.what);
          }
        }
      }
      if (externs > 0 || !staged.empty()) {
        absl::StrAppend(&text, "; ", externs, " cuBLASLt step",
                        externs == 1 ? "" : "s", " captured, ", staged.size(),
                        staged.size() == 1 ? " operand" : " operands",
                        " staged through the pool");
        if (!staged.empty()) {
          absl::StrAppend(&text, " (", absl::StrJoin(staged, ", "), ")");
        }
      }
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
  r.ops.clear();
  r.externs = 0;
  if (r.workspace != 0) {
    (void)driver.cuMemFree(r.workspace);
    totals_.pool_bytes -= r.workspace_bytes;
    Count(&CudaGraphCounters::pool_bytes, -r.workspace_bytes);
  }
  r.workspace = 0;
  r.workspace_bytes = 0;
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

absl::StatusOr<CUdeviceptr> CudaGraphSet::Lease::Workspace(int64_t bytes) {
  Record& r = *record_;
  if (r.workspace != 0 && r.workspace_bytes >= bytes) return r.workspace;
  const CudaDriver& driver = set_->device_->driver();
  if (r.workspace != 0) {
    // The graph holds the old address: it is captured again.
    if (r.exec != nullptr) (void)driver.cuGraphExecDestroy(r.exec);
    if (r.graph != nullptr) (void)driver.cuGraphDestroy(r.graph);
    r.exec = nullptr;
    r.graph = nullptr;
    r.ops.clear();
    r.nodes.clear();
    (void)driver.cuMemFree(r.workspace);
    set_->totals_.pool_bytes -= r.workspace_bytes;
    set_->Count(&CudaGraphCounters::pool_bytes, -r.workspace_bytes);
    r.workspace = 0;
    r.workspace_bytes = 0;
  }
  RETURN_IF_CUDA_ERROR(driver.cuMemAlloc(
      &r.workspace, static_cast<size_t>(std::max<int64_t>(bytes, 1))));
  r.workspace_bytes = bytes;
  set_->totals_.pool_bytes += bytes;
  set_->Count(&CudaGraphCounters::pool_bytes, bytes);
  return r.workspace;
}

bool CudaGraphSet::Lease::Staged(CudaGraphBuffer buffer) const {
  for (const Record::Staging& st : record_->staged) {
    if (SameBuffer(st.buffer, buffer)) return true;
  }
  return false;
}

void CudaGraphSet::Lease::Stage(CudaGraphBuffer buffer, std::string why) {
  if (Staged(buffer)) return;
  if (LogEnabled(LogTopic::kCudaGraphs)) {
    Log(LogTopic::kCudaGraphs,
        absl::StrCat("size key ", KeyText(record_->key), ": staging ", why,
                     " through the private pool"));
  }
  record_->staged.push_back({buffer, std::move(why)});
}

int64_t CudaGraphSet::Lease::max_staged_bytes() const {
  return set_->policy_->max_staged_bytes;
}

absl::Status CudaGraphSet::Capture(Record& r,
                                   absl::Span<const CudaGraphOp> ops) {
  const CudaDriver& driver = device_->driver();
  if (capture_stream_ == nullptr) {
    RETURN_IF_CUDA_ERROR(
        driver.cuStreamCreate(&capture_stream_, CU_STREAM_NON_BLOCKING));
  }
  RETURN_IF_CUDA_ERROR(driver.cuStreamBeginCapture(
      capture_stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  absl::Status launched;
  int externs = 0;
  size_t ours = 0;
  for (const CudaGraphOp& op : ops) {
    switch (op.kind) {
      case CudaGraphOp::Kind::kKernel:
        launched = LaunchKernel(driver, op.launch, capture_stream_);
        ++ours;
        break;
      case CudaGraphOp::Kind::kCopy:
        launched =
            CudaStatus(driver.cuMemcpyDtoDAsync(
                           op.copy.dst, op.copy.src,
                           static_cast<size_t>(op.copy.bytes), capture_stream_),
                       "cuMemcpyDtoDAsync");
        ++ours;
        break;
      case CudaGraphOp::Kind::kExtern:
        launched = op.call.enqueue(op.call.context, capture_stream_);
        ++externs;
        break;
    }
    if (!launched.ok()) break;
  }
  CUgraph graph = nullptr;
  const CUresult ended = driver.cuStreamEndCapture(capture_stream_, &graph);
  if (graph != nullptr) r.graph = graph;
  RETURN_IF_ERROR(launched);
  RETURN_IF_CUDA_ERROR(ended);
  // The captured nodes, matched to the ops that made them (a chain captured
  // from one stream; cuGraphGetNodes promises no order). Each of our
  // launches and copies must match exactly one node; nodes matching none
  // are the extern calls' (cuBLASLt's kernels, and the memsets it may
  // make), tolerated only when the ops have extern calls.
  size_t count = 0;
  RETURN_IF_CUDA_ERROR(driver.cuGraphGetNodes(graph, nullptr, &count));
  std::vector<CUgraphNode> nodes(count);
  RETURN_IF_CUDA_ERROR(driver.cuGraphGetNodes(graph, nodes.data(), &count));
  if (count < ours || (externs == 0 && count != ours)) {
    return absl::InternalError(absl::StrCat(
        "the captured graph has ", count, " nodes for ", ours,
        " launches and copies", externs > 0 ? " and extern calls" : ""));
  }
  r.nodes.assign(ops.size(), nullptr);
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type;
    RETURN_IF_CUDA_ERROR(driver.cuGraphNodeGetType(node, &type));
    bool matched = false;
    if (type == CU_GRAPH_NODE_TYPE_KERNEL) {
      CUDA_KERNEL_NODE_PARAMS p{};
      RETURN_IF_CUDA_ERROR(driver.cuGraphKernelNodeGetParams(node, &p));
      for (size_t i = 0; i < ops.size() && !matched; ++i) {
        if (ops[i].kind != CudaGraphOp::Kind::kKernel) continue;
        const CudaKernelLaunch& l = ops[i].launch;
        if (r.nodes[i] != nullptr || p.func != l.function ||
            p.gridDimX != l.grid_x || p.blockDimX != l.block_x) {
          continue;
        }
        bool same = p.kernelParams != nullptr || l.params.empty();
        for (size_t k = 0; same && k < l.params.size(); ++k) {
          same =
              *static_cast<const uint64_t*>(p.kernelParams[k]) == l.params[k];
        }
        if (same) {
          r.nodes[i] = node;
          matched = true;
        }
      }
    } else if (type == CU_GRAPH_NODE_TYPE_MEMCPY) {
      CUDA_MEMCPY3D p{};
      RETURN_IF_CUDA_ERROR(driver.cuGraphMemcpyNodeGetParams(node, &p));
      for (size_t i = 0; i < ops.size() && !matched; ++i) {
        if (ops[i].kind != CudaGraphOp::Kind::kCopy) continue;
        const CudaGraphCopy& c = ops[i].copy;
        if (r.nodes[i] == nullptr && p.srcDevice == c.src &&
            p.dstDevice == c.dst &&
            p.WidthInBytes == static_cast<size_t>(c.bytes)) {
          r.nodes[i] = node;
          matched = true;
        }
      }
    } else if ((type != CU_GRAPH_NODE_TYPE_MEMSET &&
                type != CU_GRAPH_NODE_TYPE_EMPTY) ||
               externs == 0) {
      return absl::InternalError(absl::StrCat(
          "the captured graph has a node of type ", type,
          externs > 0 ? " where kernels, copies and cuBLASLt ran"
                      : " where only kernels and copies were enqueued"));
    }
    if (!matched && externs == 0) {
      return absl::InternalError(
          "a captured node matches none of the launches and copies");
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != CudaGraphOp::Kind::kExtern && r.nodes[i] == nullptr) {
      return absl::InternalError(absl::StrCat(
          ops[i].kind == CudaGraphOp::Kind::kKernel ? "launch " : "copy ", i,
          " matches no captured node"));
    }
  }
  RETURN_IF_CUDA_ERROR(driver.cuGraphInstantiate(&r.exec, graph, 0));
  r.ops.assign(ops.begin(), ops.end());
  for (CudaGraphOp& op : r.ops) {
    op.call.enqueue = nullptr;
    op.call.context = nullptr;
  }
  r.externs = externs;
  return absl::OkStatus();
}

namespace {

bool Patchable(const CudaGraphBuffer& b) {
  return b.kind == CudaGraphBuffer::Kind::kInput ||
         b.kind == CudaGraphBuffer::Kind::kOutput;
}

}  // namespace

absl::StatusOr<CudaGraphSet::Lease::Outcome> CudaGraphSet::Lease::Replay(
    absl::Span<const CudaGraphOp> ops, CUstream stream) {
  CudaGraphSet& set = *set_;
  Record& r = *record_;
  if (r.refused) return Outcome::kPlainLaunches;
  const CudaDriver& driver = set.device_->driver();
  // Patches for the nodes whose buffer pointers moved; anything else that
  // moved needs a new capture (why, for the log).
  bool recapture = r.exec == nullptr || r.ops.size() != ops.size();
  std::string why;
  bool restage = false;
  absl::InlinedVector<size_t, 8> patch;
  for (size_t i = 0; i < ops.size() && !recapture; ++i) {
    const CudaGraphOp& op = ops[i];
    const CudaGraphOp& held = r.ops[i];
    if (op.kind != held.kind) {
      recapture = true;
      break;
    }
    if (op.kind == CudaGraphOp::Kind::kCopy) {
      const CudaGraphCopy& now = op.copy;
      const CudaGraphCopy& was = held.copy;
      if (now.bytes != was.bytes ||
          (now.src != was.src && !Patchable(now.src_buffer)) ||
          (now.dst != was.dst && !Patchable(now.dst_buffer))) {
        recapture = true;
        break;
      }
      if (now.src != was.src || now.dst != was.dst) patch.push_back(i);
      continue;
    }
    if (op.kind == CudaGraphOp::Kind::kExtern) {
      const CudaExternCall& now = op.call;
      const CudaExternCall& was = held.call;
      if (now.operands.size() != was.operands.size()) {
        recapture = true;
        break;
      }
      for (size_t k = 0; k < now.operands.size() && !recapture; ++k) {
        const CudaGraphOperand& o = now.operands[k];
        if (o.address == was.operands[k].address &&
            o.bytes == was.operands[k].bytes) {
          continue;
        }
        const std::string what = absl::StrCat(
            KindName(o.buffer.kind), " ", o.buffer.index, " of node '",
            now.node != nullptr ? *now.node : std::string("?"), "'");
        if (Patchable(o.buffer) && o.bytes <= set.policy_->max_staged_bytes &&
            !Staged(o.buffer)) {
          // Every such operand of this call at once: one re-capture.
          Stage(o.buffer, what);
          restage = true;
          continue;
        }
        recapture = true;
        why = absl::StrCat(
            "cuBLASLt operand ", o.name, " (", what, ", ", Bytes(o.bytes), ")",
            Patchable(o.buffer)
                ? absl::StrCat(" moved; it is over max_staged_bytes (",
                               Bytes(set.policy_->max_staged_bytes),
                               "), so it stays direct")
                : " moved");
      }
      continue;
    }
    const CudaKernelLaunch& now = op.launch;
    const CudaKernelLaunch& was = held.launch;
    if (now.function != was.function || now.grid_x != was.grid_x ||
        now.block_x != was.block_x || now.shared_bytes != was.shared_bytes ||
        now.params.size() != was.params.size()) {
      recapture = true;
      break;
    }
    bool moved = false;
    for (size_t k = 0; k < now.params.size(); ++k) {
      if (now.params[k] == was.params[k]) continue;
      if (!Patchable(now.buffers[k])) {
        recapture = true;
        break;
      }
      moved = true;
    }
    if (moved) patch.push_back(i);
  }
  if (restage) return Outcome::kRestage;
  if (!recapture && !patch.empty()) {
    CUcontext context = nullptr;
    for (size_t i : patch) {
      CudaGraphOp& held = r.ops[i];
      CUresult patched;
      const char* call;
      if (held.kind == CudaGraphOp::Kind::kCopy) {
        // The context first: an error here must leave the held copy as the
        // node has it, so the next call still sees the move.
        if (context == nullptr) {
          ASSIGN_OR_RETURN(context, set.device_->PrimaryContext());
        }
        held.copy = ops[i].copy;
        CUDA_MEMCPY3D m{};
        m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        m.srcDevice = held.copy.src;
        m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        m.dstDevice = held.copy.dst;
        m.WidthInBytes = static_cast<size_t>(held.copy.bytes);
        m.Height = 1;
        m.Depth = 1;
        patched = driver.cuGraphExecMemcpyNodeSetParams(r.exec, r.nodes[i], &m,
                                                        context);
        call = "cuGraphExecMemcpyNodeSetParams";
      } else {
        held.launch.params = ops[i].launch.params;
        absl::InlinedVector<void*, 12> params;
        for (uint64_t& v : held.launch.params) params.push_back(&v);
        CUDA_KERNEL_NODE_PARAMS p{};
        p.func = held.launch.function;
        p.gridDimX = held.launch.grid_x;
        p.gridDimY = 1;
        p.gridDimZ = 1;
        p.blockDimX = held.launch.block_x;
        p.blockDimY = 1;
        p.blockDimZ = 1;
        p.sharedMemBytes = held.launch.shared_bytes;
        p.kernelParams = params.data();
        patched = driver.cuGraphExecKernelNodeSetParams(r.exec, r.nodes[i], &p);
        call = "cuGraphExecKernelNodeSetParams";
      }
      if (patched != CUDA_SUCCESS) {
        why = std::string(CudaStatus(patched, call).message());
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
    if (seen && !why.empty() && LogEnabled(LogTopic::kCudaGraphs)) {
      Log(LogTopic::kCudaGraphs,
          absl::StrCat("re-capturing size key ", KeyText(r.key), ": ", why));
    }
    const CudaDriver& d = driver;
    if (r.exec != nullptr) (void)d.cuGraphExecDestroy(r.exec);
    if (r.graph != nullptr) (void)d.cuGraphDestroy(r.graph);
    r.exec = nullptr;
    r.graph = nullptr;
    r.ops.clear();
    r.nodes.clear();
    const absl::Status captured = set.Capture(r, ops);
    if (!captured.ok()) {
      if (r.exec != nullptr) (void)d.cuGraphExecDestroy(r.exec);
      if (r.graph != nullptr) (void)d.cuGraphDestroy(r.graph);
      r.exec = nullptr;
      r.graph = nullptr;
      r.ops.clear();
      r.refused = true;
      set.Refuse(absl::StrCat("size key ", KeyText(r.key),
                              " could not be captured: ", captured.message()));
      return Outcome::kPlainLaunches;
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
                       ops.size(), " ops (", r.externs,
                       " cuBLASLt calls) for size key ", KeyText(r.key)));
    }
  }
  RETURN_IF_CUDA_ERROR(driver.cuGraphLaunch(r.exec, stream));
  ++set.totals_.replays;
  set.Count(&CudaGraphCounters::replays, 1);
  return Outcome::kReplayed;
}

}  // namespace guardjit
