#ifndef GUARDJIT_BINDINGS_TRITON_INSTANCE_STATE_H_
#define GUARDJIT_BINDINGS_TRITON_INSTANCE_STATE_H_

// One model instance: a guardjit context (its own thread count) and a
// function over the model's graph, and what Triton's scheduler hands it.
//
// With max_batch_size > 0 the requests of one execution run as one call:
// each input's rows are gathered into a pooled buffer (a single request
// with one contiguous buffer is used in place), dim 0 is marked dynamic so
// one cache entry serves every batch size (a batch of one runs as two
// copies of its row, since guardjit specializes sizes 0 and 1), and each
// request's rows of each output are copied into its response. A request
// that does not fit the model (data type, rank, shape, memory) gets
// INVALID_ARG naming the input; when a gathered call fails, its requests
// run one by one, so each gets its own answer.

#include <memory>
#include <string>
#include <vector>

#include "bindings/triton/cuda_device.h"
#include "bindings/triton/metrics.h"
#include "bindings/triton/model_state.h"
#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

struct PendingRequest;

// A piece of a request's input as Triton holds it.
struct Chunk {
  const void* data = nullptr;
  uint64_t bytes = 0;
  TRITONSERVER_MemoryType memory = TRITONSERVER_MEMORY_CPU;
  int64_t memory_id = 0;
};

class InstanceState {
 public:
  // KIND_CPU, or KIND_GPU on the instance's device (inputs gathered into
  // device buffers on the instance's stream, outputs copied back to
  // Triton's buffers); warmup shapes run before this returns.
  static TRITONSERVER_Error* Create(const ModelState* model,
                                    TRITONBACKEND_ModelInstance* instance,
                                    std::unique_ptr<InstanceState>* out);
  ~InstanceState();
  InstanceState(const InstanceState&) = delete;
  InstanceState& operator=(const InstanceState&) = delete;

  // Answers and releases every request.
  void Execute(TRITONBACKEND_Request** requests, uint32_t count);

 private:
  InstanceState(const ModelState* model, TRITONBACKEND_ModelInstance* instance)
      : model_(model), instance_(instance) {}

  TRITONSERVER_Error* Warmup(int64_t batch);
  // Input `i` of a call: `chunks` one after another (twice with `pad`), in
  // place where one aligned chunk is already where the call runs, else
  // gathered into pool slot `i` (host) or device buffer `i`.
  TRITONSERVER_Error* Stage(size_t i, const std::vector<Chunk>& chunks,
                            uint64_t item_size, bool pad, void** data);
  DLDevice dl_device() const;
  gj_call_options CallOptions() const;
  void UpdateMetrics();
  void ReadRequest(PendingRequest* p) const;
  // Runs `group` (valid requests) as one call and fills their responses.
  void RunGroup(const std::vector<PendingRequest*>& group);
  TRITONSERVER_Error* Respond(PendingRequest* p, DLManagedTensor** outs,
                              int64_t row_offset, int64_t total_rows) const;

  const ModelState* model_;
  TRITONBACKEND_ModelInstance* instance_;
  std::string name_;
  gj_context* context_ = nullptr;
  gj_function* function_ = nullptr;
  std::unique_ptr<InstanceMetrics> metrics_;  // NULL with metrics off
  std::unique_ptr<CudaDevice> device_;        // KIND_GPU; NULL for KIND_CPU
  // Host gather buffers, one per input, grown as batches need.
  std::vector<std::vector<char>> pool_;
  // A warmup of batch 1 compiled the entry guardjit specializes for a batch
  // of one: batches of one then run as they are instead of padded to two.
  bool batch_of_one_compiled_ = false;
};

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_INSTANCE_STATE_H_
