#include "bindings/triton/instance_state.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "bindings/triton/dtypes.h"
#include "bindings/triton/errors.h"

namespace guardjit_triton {

// One request on its way through Execute.
struct PendingRequest {
  struct Input {
    const DTypeInfo* dtype = nullptr;
    std::vector<int64_t> shape;
    std::vector<Chunk> chunks;
  };
  TRITONBACKEND_Request* request = nullptr;
  TRITONBACKEND_Response* response = nullptr;
  TRITONSERVER_Error* error = nullptr;  // sent with the response
  int64_t rows = 0;                     // batch rows (max_batch_size > 0)
  std::vector<Input> inputs;            // in the graph's input order
};

namespace {

// The compile cache's signing key from `path`: its bytes, a trailing newline
// dropped (an empty file: no key).
bool ReadKeyFile(const std::string& path, std::string* key,
                 std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::string("cannot be read: ") + std::strerror(errno);
    return false;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  *key = bytes.str();
  while (!key->empty() && (key->back() == '\n' || key->back() == '\r')) {
    key->pop_back();
  }
  return true;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string ShapeText(const int64_t* shape, size_t n) {
  std::string out = "[";
  for (size_t i = 0; i < n; ++i) {
    out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return out + "]";
}

const DTypeInfo* FromDl(DLDataType t) {
  for (gj_dtype d :
       {GJ_DTYPE_FLOAT32, GJ_DTYPE_FLOAT64, GJ_DTYPE_FLOAT16, GJ_DTYPE_BFLOAT16,
        GJ_DTYPE_INT8, GJ_DTYPE_UINT8, GJ_DTYPE_INT16, GJ_DTYPE_INT32,
        GJ_DTYPE_INT64, GJ_DTYPE_BOOL}) {
    const DTypeInfo* info = FromGj(d);
    if (info->dl.code == t.code && info->dl.bits == t.bits && t.lanes == 1) {
      return info;
    }
  }
  return nullptr;
}

// Elements of `shape`, or -1 past int64.
int64_t Numel(const int64_t* shape, size_t n) {
  int64_t total = 1;
  for (size_t i = 0; i < n; ++i) {
    if (shape[i] < 0) return -1;
    if (shape[i] != 0 &&
        total > std::numeric_limits<int64_t>::max() / shape[i]) {
      return -1;
    }
    total *= shape[i];
  }
  return total;
}

void ReportError(TRITONSERVER_Error* err) {
  if (err == nullptr) return;
  Log(TRITONSERVER_LOG_ERROR, TRITONSERVER_ErrorMessage(err));
  TRITONSERVER_ErrorDelete(err);
}

}  // namespace

TRITONSERVER_Error* InstanceState::Create(const ModelState* model,
                                          TRITONBACKEND_ModelInstance* instance,
                                          std::unique_ptr<InstanceState>* out) {
  std::unique_ptr<InstanceState> state(new InstanceState(model, instance));
  const char* name = nullptr;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceName(instance, &name));
  state->name_ = name;
  const std::string what = "instance '" + state->name_ + "': ";
  TRITONSERVER_InstanceGroupKind kind;
  GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ModelInstanceKind(instance, &kind));
  if (kind == TRITONSERVER_INSTANCEGROUPKIND_GPU) {
    int32_t device = 0;
    GJ_TRITON_RETURN_IF_ERROR(
        TRITONBACKEND_ModelInstanceDeviceId(instance, &device));
    TRITONSERVER_Error* err = CudaDevice::Open(device, &state->device_);
    if (err != nullptr) {
      TRITONSERVER_Error* named =
          Error(TRITONSERVER_ErrorCode(err),
                what + "KIND_GPU (device " + std::to_string(device) +
                    "): " + TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
      return named;
    }
  } else if (kind != TRITONSERVER_INSTANCEGROUPKIND_CPU) {
    return Error(TRITONSERVER_ERROR_UNSUPPORTED,
                 what + "instance_group kind KIND_" + std::to_string(kind) +
                     " is not served by the guardjit backend: use KIND_CPU "
                     "or KIND_GPU");
  }
  const ModelConfig& config = model->config();
  gj_context_options context_options;
  gj_context_options_init(&context_options);
  context_options.num_threads = config.num_threads;
  if (config.cache_dir.has_value()) {
    context_options.cache_dir = config.cache_dir->c_str();
  }
  if (config.remote_cache.has_value()) {
    context_options.remote_cache = config.remote_cache->c_str();
  }
  if (config.max_cache_bytes >= 0) {
    context_options.max_cache_bytes = config.max_cache_bytes;
  }
  std::string cache_key;
  if (config.cache_key_file.has_value()) {
    std::string error;
    if (!ReadKeyFile(*config.cache_key_file, &cache_key, &error)) {
      return TRITONSERVER_ErrorNew(TRITONSERVER_ERROR_INVALID_ARG,
                                   (what + "parameter 'cache_key_file' = '" +
                                    *config.cache_key_file + "': " + error)
                                       .c_str());
    }
    context_options.cache_key = cache_key.c_str();
  }
  GJ_TRITON_RETURN_IF_ERROR(
      FromGjError(gj_context_create(&context_options, &state->context_), what));

  const size_t num_inputs = gj_graph_num_inputs(model->graph());
  std::vector<gj_dynamic_dim> marks;
  if (config.max_batch_size > 0 && config.dynamic != GJ_DYNAMIC_STATIC) {
    for (size_t i = 0; i < num_inputs; ++i) {
      marks.push_back(
          {static_cast<int32_t>(i), 0, 2, std::numeric_limits<int64_t>::max()});
    }
  }
  gj_function_options options;
  gj_function_options_init(&options);
  options.name = model->name().c_str();
  options.dynamic = config.dynamic;
  if (config.recompile_limit > 0) {
    options.recompile_limit = config.recompile_limit;
  }
  options.compile = config.compile;
  options.mode = config.mode;
  options.mark_dynamic = marks.empty() ? nullptr : marks.data();
  options.num_mark_dynamic = marks.size();
  GJ_TRITON_RETURN_IF_ERROR(
      FromGjError(gj_function_create(state->context_, model->graph(), &options,
                                     &state->function_),
                  what));
  state->pool_.resize(num_inputs);
  state->metrics_ = InstanceMetrics::Create(model->name(), state->name_);
  for (int64_t batch : config.warmup) {
    GJ_TRITON_RETURN_IF_ERROR(state->Warmup(batch));
  }
  state->UpdateMetrics();
  *out = std::move(state);
  return nullptr;
}

InstanceState::~InstanceState() {
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  gj_error* stats_error =
      function_ == nullptr ? nullptr : gj_function_get_stats(function_, &stats);
  if (function_ != nullptr && stats_error == nullptr) {
    Log(TRITONSERVER_LOG_INFO,
        "model '" + model_->name() + "' instance '" + name_ +
            "': " + std::to_string(stats.calls) + " calls, " +
            std::to_string(stats.hits) + " hits, " +
            std::to_string(stats.misses) + " misses, " +
            std::to_string(stats.compiles) + " compiles, " +
            std::to_string(stats.cache_entries) + " cache entries");
  }
  gj_error_destroy(stats_error);
  gj_function_destroy(function_);
  gj_context_destroy(context_);
}

TRITONSERVER_Error* InstanceState::Warmup(int64_t batch) {
  const ModelConfig& config = model_->config();
  const gj_graph* graph = model_->graph();
  const std::string what =
      "instance '" + name_ + "': warmup " + std::to_string(batch) + ": ";
  const bool batching = config.max_batch_size > 0;
  if (batching && batch > config.max_batch_size) {
    return Error(
        TRITONSERVER_ERROR_INVALID_ARG,
        what + "past max_batch_size " + std::to_string(config.max_batch_size));
  }
  const size_t n = gj_graph_num_inputs(graph);
  std::vector<std::vector<int64_t>> shapes(n);
  std::vector<std::vector<char>> data(n);
  std::vector<DLTensor> tensors(n);
  std::vector<const DLTensor*> ptrs(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string input = gj_graph_input_name(graph, i);
    const TensorConfig* tc = nullptr;
    for (const TensorConfig& t : config.inputs) {
      if (t.name == input) tc = &t;
    }
    if (batching) shapes[i].push_back(batch);
    for (int64_t d : tc->dims) {
      if (d < 0) {
        return Error(TRITONSERVER_ERROR_INVALID_ARG,
                     what + "input '" + input +
                         "' has a dynamic dim in the config; warmup runs "
                         "static shapes only");
      }
      shapes[i].push_back(d);
    }
    const int64_t numel = Numel(shapes[i].data(), shapes[i].size());
    data[i].assign(static_cast<size_t>(numel) * tc->dtype->item_size, 0);
    void* where = data[i].data();
    if (device_ != nullptr) {
      // Zeros on the device, in the buffer requests are gathered into.
      GJ_TRITON_RETURN_IF_ERROR(Stage(
          i,
          {Chunk{data[i].data(), data[i].size(), TRITONSERVER_MEMORY_CPU, 0}},
          tc->dtype->item_size, false, &where));
    }
    tensors[i] = DLTensor{where,
                          dl_device(),
                          static_cast<int32_t>(shapes[i].size()),
                          tc->dtype->dl,
                          shapes[i].data(),
                          nullptr,
                          0};
    ptrs[i] = &tensors[i];
  }
  const size_t num_outputs = gj_graph_num_outputs(graph);
  std::vector<DLManagedTensor*> outs(num_outputs, nullptr);
  const gj_call_options call_options = CallOptions();
  TRITONSERVER_Error* err = FromGjError(
      gj_function_call_alloc(function_, ptrs.data(), n, &call_options,
                             outs.data(), num_outputs),
      what);
  if (err == nullptr && device_ != nullptr) err = device_->Synchronize();
  for (DLManagedTensor* t : outs) gj_tensor_release(t);
  if (err == nullptr && batching && batch == 1) batch_of_one_compiled_ = true;
  return err;
}

void InstanceState::ReadRequest(PendingRequest* p) const {
  const ModelConfig& config = model_->config();
  const gj_graph* graph = model_->graph();
  const bool batching = config.max_batch_size > 0;
  uint32_t count = 0;
  p->error = TRITONBACKEND_RequestInputCount(p->request, &count);
  if (p->error != nullptr) return;
  const size_t n = gj_graph_num_inputs(graph);
  p->inputs.resize(n);
  for (size_t i = 0; i < n && p->error == nullptr; ++i) {
    const std::string name = gj_graph_input_name(graph, i);
    const std::string what = "input '" + name + "'";
    TRITONBACKEND_Input* input = nullptr;
    TRITONSERVER_DataType datatype = TRITONSERVER_TYPE_INVALID;
    const int64_t* shape = nullptr;
    uint32_t dims = 0, buffers = 0;
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < count && input == nullptr; ++k) {
      TRITONBACKEND_Input* candidate = nullptr;
      const char* candidate_name = nullptr;
      p->error = TRITONBACKEND_RequestInputByIndex(p->request, k, &candidate);
      if (p->error == nullptr) {
        p->error =
            TRITONBACKEND_InputProperties(candidate, &candidate_name, &datatype,
                                          &shape, &dims, &bytes, &buffers);
      }
      if (p->error != nullptr) return;
      if (name == candidate_name) input = candidate;
    }
    if (input == nullptr) {
      p->error =
          Error(TRITONSERVER_ERROR_INVALID_ARG, "the request has no " + what);
      return;
    }
    const TensorConfig* tc = nullptr;
    for (const TensorConfig& t : config.inputs) {
      if (t.name == name) tc = &t;
    }
    PendingRequest::Input& in = p->inputs[i];
    in.dtype = FromTriton(datatype);
    if (in.dtype != tc->dtype) {
      p->error = Error(TRITONSERVER_ERROR_INVALID_ARG,
                       what + ": data type " + TritonTypeName(datatype) +
                           ", the model takes " + tc->dtype->config_name);
      return;
    }
    in.shape.assign(shape, shape + dims);
    if (batching) {
      if (dims < 1 || shape[0] < 1 || shape[0] > config.max_batch_size) {
        p->error = Error(TRITONSERVER_ERROR_INVALID_ARG,
                         what + ": shape " + ShapeText(shape, dims) +
                             " has no batch dim of 1 to max_batch_size " +
                             std::to_string(config.max_batch_size));
        return;
      }
      if (i > 0 && shape[0] != p->rows) {
        p->error = Error(TRITONSERVER_ERROR_INVALID_ARG,
                         what + ": batch " + std::to_string(shape[0]) +
                             ", other inputs have " + std::to_string(p->rows));
        return;
      }
      p->rows = shape[0];
    }
    const int64_t numel = Numel(shape, dims);
    if (numel < 0 ||
        static_cast<uint64_t>(numel) * in.dtype->item_size != bytes) {
      p->error = Error(TRITONSERVER_ERROR_INVALID_ARG,
                       what + ": " + std::to_string(bytes) +
                           " bytes for shape " + ShapeText(shape, dims));
      return;
    }
    for (uint32_t b = 0; b < buffers; ++b) {
      const void* data = nullptr;
      uint64_t size = 0;
      TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
      int64_t memory_id = 0;
      p->error = TRITONBACKEND_InputBuffer(input, b, &data, &size, &memory,
                                           &memory_id);
      if (p->error != nullptr) return;
      if (memory == TRITONSERVER_MEMORY_GPU && device_ == nullptr) {
        p->error = Error(TRITONSERVER_ERROR_INVALID_ARG,
                         what +
                             " is in GPU memory; this instance runs on "
                             "the CPU");
        return;
      }
      in.chunks.push_back(Chunk{data, size, memory, memory_id});
    }
  }
}

void InstanceState::Execute(TRITONBACKEND_Request** requests, uint32_t count) {
  const uint64_t exec_start = NowNs();
  std::vector<PendingRequest> pending(count);
  std::vector<PendingRequest*> valid;
  for (uint32_t r = 0; r < count; ++r) {
    PendingRequest& p = pending[r];
    p.request = requests[r];
    p.error = TRITONBACKEND_ResponseNew(&p.response, p.request);
    if (p.error == nullptr) ReadRequest(&p);
    if (p.error == nullptr) valid.push_back(&p);
  }
  if (model_->config().max_batch_size > 0) {
    if (!valid.empty()) RunGroup(valid);
  } else {
    for (PendingRequest* p : valid) RunGroup({p});
  }
  const uint64_t exec_end = NowNs();
  for (PendingRequest& p : pending) {
    const bool success = p.error == nullptr;
    if (p.response != nullptr) {
      ReportError(TRITONBACKEND_ResponseSend(
          p.response, TRITONSERVER_RESPONSE_COMPLETE_FINAL, p.error));
    } else if (p.error != nullptr) {
      ReportError(p.error);
    }
    // Whole-execution times: the gathered call serves every request.
    ReportError(TRITONBACKEND_ModelInstanceReportStatistics(
        instance_, p.request, success, exec_start, exec_start, exec_end,
        exec_end));
    ReportError(TRITONBACKEND_RequestRelease(p.request,
                                             TRITONSERVER_REQUEST_RELEASE_ALL));
  }
  UpdateMetrics();
}

void InstanceState::UpdateMetrics() {
  if (metrics_ == nullptr) return;
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  gj_error* err = gj_function_get_stats(function_, &stats);
  if (err == nullptr) metrics_->Update(stats);
  gj_error_destroy(err);
}

DLDevice InstanceState::dl_device() const {
  return device_ == nullptr ? DLDevice{kDLCPU, 0}
                            : DLDevice{kDLCUDA, device_->id()};
}

gj_call_options InstanceState::CallOptions() const {
  gj_call_options options;
  gj_call_options_init(&options);
  if (device_ != nullptr) options.stream = device_->stream();
  return options;
}

TRITONSERVER_Error* InstanceState::Stage(size_t i,
                                         const std::vector<Chunk>& chunks,
                                         uint64_t item_size, bool pad,
                                         void** data) {
  // In place when one chunk (a request's tensor in one buffer) is aligned
  // for its type (HTTP bodies need not be) and where the call runs.
  if (chunks.size() == 1 && !pad &&
      reinterpret_cast<uintptr_t>(chunks[0].data) % item_size == 0) {
    const bool on_device = chunks[0].memory == TRITONSERVER_MEMORY_GPU;
    if (device_ == nullptr
            ? !on_device
            : on_device && chunks[0].memory_id == device_->id()) {
      *data = const_cast<void*>(chunks[0].data);  // read only
      return nullptr;
    }
  }
  uint64_t total = 0;
  for (const Chunk& chunk : chunks) total += chunk.bytes;
  const uint64_t needed = total * (pad ? 2 : 1);
  if (device_ != nullptr) {
    void* buffer = nullptr;
    GJ_TRITON_RETURN_IF_ERROR(device_->Buffer(i, needed, &buffer));
    char* dst = static_cast<char*>(buffer);
    for (int copy = 0; copy < (pad ? 2 : 1); ++copy) {
      for (const Chunk& chunk : chunks) {
        GJ_TRITON_RETURN_IF_ERROR(
            device_->CopyIn(dst, chunk.data, chunk.bytes, chunk.memory));
        dst += chunk.bytes;
      }
    }
    *data = buffer;
    return nullptr;
  }
  std::vector<char>& buffer = pool_[i];
  if (buffer.size() < needed) buffer.resize(needed);
  char* dst = buffer.data();
  for (const Chunk& chunk : chunks) {
    // A CPU instance's chunks are host memory (ReadRequest).
    if (chunk.bytes > 0) std::memcpy(dst, chunk.data, chunk.bytes);
    dst += chunk.bytes;
  }
  if (pad) std::memcpy(dst, buffer.data(), total);
  *data = buffer.data();
  return nullptr;
}

void InstanceState::RunGroup(const std::vector<PendingRequest*>& group) {
  const ModelConfig& config = model_->config();
  const gj_graph* graph = model_->graph();
  const bool batching = config.max_batch_size > 0;
  const size_t n = gj_graph_num_inputs(graph);
  // Requests batched together share every non-batch dim; if they do not,
  // they run one by one.
  int64_t rows = 0;
  for (PendingRequest* p : group) {
    rows += p->rows;
    for (size_t i = 0; i < n && group.size() > 1; ++i) {
      const auto& a = group[0]->inputs[i].shape;
      const auto& b = p->inputs[i].shape;
      if (!std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end())) {
        for (PendingRequest* q : group) RunGroup({q});
        return;
      }
    }
  }
  // A batch of one runs as two identical rows, unless a warmup of 1 compiled
  // its entry: guardjit specializes size 1, which would compile an entry of
  // its own on the request's path.
  const bool pad = batching && rows == 1 &&
                   config.dynamic != GJ_DYNAMIC_STATIC &&
                   !batch_of_one_compiled_;
  const int64_t call_rows = pad ? 2 : rows;
  const uint64_t compute_start = NowNs();
  std::vector<std::vector<int64_t>> shapes(n);
  std::vector<DLTensor> tensors(n);
  std::vector<const DLTensor*> ptrs(n);
  for (size_t i = 0; i < n; ++i) {
    const PendingRequest::Input& first = group[0]->inputs[i];
    shapes[i] = first.shape;
    if (batching) shapes[i][0] = call_rows;
    std::vector<Chunk> chunks;
    for (PendingRequest* p : group) {
      chunks.insert(chunks.end(), p->inputs[i].chunks.begin(),
                    p->inputs[i].chunks.end());
    }
    void* data = nullptr;
    if (TRITONSERVER_Error* err =
            Stage(i, chunks, first.dtype->item_size, pad, &data)) {
      for (PendingRequest* p : group) {
        p->error = p == group[0] ? err
                                 : Error(TRITONSERVER_ErrorCode(err),
                                         TRITONSERVER_ErrorMessage(err));
      }
      return;
    }
    tensors[i] = DLTensor{data,
                          dl_device(),
                          static_cast<int32_t>(shapes[i].size()),
                          first.dtype->dl,
                          shapes[i].data(),
                          nullptr,
                          0};
    ptrs[i] = &tensors[i];
  }
  const size_t num_outputs = gj_graph_num_outputs(graph);
  std::vector<DLManagedTensor*> outs(num_outputs, nullptr);
  const gj_call_options call_options = CallOptions();
  gj_error* call_error = gj_function_call_alloc(
      function_, ptrs.data(), n, &call_options, outs.data(), num_outputs);
  // A GPU call's compute ends when its stream has run it.
  TRITONSERVER_Error* sync_error = nullptr;
  if (call_error == nullptr && device_ != nullptr) {
    sync_error = device_->Synchronize();
  }
  const uint64_t compute_end = NowNs();
  if (sync_error != nullptr) {
    for (DLManagedTensor* t : outs) gj_tensor_release(t);
    for (PendingRequest* p : group) {
      p->error = p == group[0] ? sync_error
                               : Error(TRITONSERVER_ErrorCode(sync_error),
                                       TRITONSERVER_ErrorMessage(sync_error));
    }
    return;
  }
  if (call_error != nullptr && group.size() > 1) {
    // One request may be at fault: each gets its own answer.
    gj_error_destroy(call_error);
    for (PendingRequest* p : group) RunGroup({p});
    return;
  }
  if (call_error != nullptr) {
    // The library names the node; the prefix names the request's inputs.
    std::string prefix = "inputs";
    for (size_t i = 0; i < n; ++i) {
      const PendingRequest::Input& in = group[0]->inputs[i];
      prefix += std::string(i > 0 ? ", " : " ") +
                gj_graph_input_name(graph, i) + " " + in.dtype->config_name +
                " " + ShapeText(in.shape.data(), in.shape.size());
    }
    group[0]->error = FromGjError(call_error, prefix + ": ");
    return;
  }
  int64_t offset = 0;
  for (PendingRequest* p : group) {
    p->error = Respond(p, outs.data(), offset, call_rows);
    offset += p->rows;
  }
  if (device_ != nullptr) {
    // The copies into the responses are done before they are sent.
    if (TRITONSERVER_Error* err = device_->Synchronize()) {
      for (PendingRequest* p : group) {
        if (p->error == nullptr) {
          p->error = Error(TRITONSERVER_ErrorCode(err),
                           TRITONSERVER_ErrorMessage(err));
        }
      }
      TRITONSERVER_ErrorDelete(err);
    }
  }
  for (DLManagedTensor* t : outs) gj_tensor_release(t);
  ReportError(TRITONBACKEND_ModelInstanceReportBatchStatistics(
      instance_, batching ? rows : 1, compute_start, compute_start, compute_end,
      compute_end));
}

TRITONSERVER_Error* InstanceState::Respond(PendingRequest* p,
                                           DLManagedTensor** outs,
                                           int64_t row_offset,
                                           int64_t total_rows) const {
  const gj_graph* graph = model_->graph();
  const bool batching = model_->config().max_batch_size > 0;
  uint32_t requested = 0;
  GJ_TRITON_RETURN_IF_ERROR(
      TRITONBACKEND_RequestOutputCount(p->request, &requested));
  for (uint32_t r = 0; r < requested; ++r) {
    const char* name = nullptr;
    GJ_TRITON_RETURN_IF_ERROR(
        TRITONBACKEND_RequestOutputName(p->request, r, &name));
    size_t index = gj_graph_num_outputs(graph);
    for (size_t k = 0; k < gj_graph_num_outputs(graph); ++k) {
      if (std::strcmp(gj_graph_output_name(graph, k), name) == 0) index = k;
    }
    if (index == gj_graph_num_outputs(graph)) {
      return Error(TRITONSERVER_ERROR_INVALID_ARG,
                   std::string("the model has no output '") + name + "'");
    }
    const DLTensor& out = outs[index]->dl_tensor;
    const DTypeInfo* dtype = FromDl(out.dtype);
    if (dtype == nullptr) {
      return Error(
          TRITONSERVER_ERROR_INTERNAL,
          std::string("output '") + name + "' has a type Triton lacks");
    }
    std::vector<int64_t> shape(out.shape, out.shape + out.ndim);
    int64_t row_elements = Numel(out.shape, out.ndim);
    int64_t first_row = 0;
    if (batching) {
      if (out.ndim < 1 || out.shape[0] != total_rows) {
        return Error(TRITONSERVER_ERROR_INVALID_ARG,
                     std::string("output '") + name + "' has shape " +
                         ShapeText(out.shape, out.ndim) +
                         ", not the batch of " + std::to_string(total_rows) +
                         " as dim 0");
      }
      row_elements = Numel(out.shape + 1, out.ndim - 1);
      shape[0] = p->rows;
      first_row = row_offset;
    }
    const uint64_t bytes =
        static_cast<uint64_t>(row_elements * (batching ? p->rows : 1)) *
        dtype->item_size;
    TRITONBACKEND_Output* output = nullptr;
    GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_ResponseOutput(
        p->response, &output, name, dtype->triton, shape.data(),
        static_cast<uint32_t>(shape.size())));
    void* buffer = nullptr;
    TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
    int64_t memory_id = 0;
    GJ_TRITON_RETURN_IF_ERROR(TRITONBACKEND_OutputBuffer(output, &buffer, bytes,
                                                         &memory, &memory_id));
    // Library outputs are row-major and contiguous (gj_function_call_alloc).
    const char* src = static_cast<const char*>(out.data) + out.byte_offset +
                      first_row * row_elements * dtype->item_size;
    if (device_ != nullptr) {
      GJ_TRITON_RETURN_IF_ERROR(device_->CopyOut(buffer, memory, src, bytes));
      continue;
    }
    if (memory == TRITONSERVER_MEMORY_GPU) {
      return Error(TRITONSERVER_ERROR_UNSUPPORTED,
                   std::string("output '") + name +
                       ": Triton gave a GPU buffer to a CPU instance");
    }
    if (bytes > 0) std::memcpy(buffer, src, bytes);
  }
  return nullptr;
}

}  // namespace guardjit_triton
