#ifndef GUARDJIT_CAPI_FUNCTION_H_
#define GUARDJIT_CAPI_FUNCTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/compiler.h"
#include "core/cuda_graph_policy.h"
#include "core/function.h"
#include "core/graph.h"
#include "core/tensor.h"
#include "guardjit/guardjit.h"

namespace guardjit::capi {

// What gj_function_options says, read and checked.
struct FunctionOptions {
  std::string name;  // empty = the graph's name
  int32_t recompile_limit = 8;
  gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO;
  std::vector<gj_dynamic_dim> mark_dynamic;
  gj_function_mode mode = GJ_MODE_DEFAULT;
  int32_t max_graphs_per_entry = 8;
  bool fullgraph = false;
  // GJ_COMPILE_ASYNC: misses compile on the context's queue while the call
  // runs eagerly.
  bool compile_async = false;
  std::shared_ptr<CompileQueue> compile_queue;
};

// The ambient state a call runs under (what a guard cache will key on).
struct CallState {
  bool grad_mode = true;
  bool deterministic = false;
  const uint8_t* requires_grad = nullptr;  // per input; null = none
  const int32_t* cancel = nullptr;         // the host's stop flag
  absl::Time deadline = absl::InfiniteFuture();
  // Where the call's tensors are (CallDevice in call.cc), and for a CUDA
  // call the CUstream it is enqueued on (null: the legacy default stream)
  // and whether it waits for the stream before returning.
  Device device;
  void* stream = nullptr;
  bool synchronize = false;
};

// A callable graph: the C API's view of a function, in front of the guard
// cache (core/function.h) whose entries the context's compiler builds.
// Thread-safe.
class Function {
 public:
  // `allocator`: host memory for outputs and intermediates (the context's);
  // null = the executables' default.
  static absl::StatusOr<std::unique_ptr<Function>> Create(
      std::shared_ptr<const Graph> graph, std::shared_ptr<Compiler> compiler,
      FunctionOptions options, std::shared_ptr<Allocator> allocator = nullptr);

  // Runs on validated CPU inputs (borrowed for the call). Results may alias
  // the inputs, each other, or the graph's constants (see AliasesConstant).
  // `destinations` (empty, or one per output, null = allocate) are the
  // caller's output tensors (RunContext::destinations).
  absl::StatusOr<std::vector<Tensor>> Run(
      absl::Span<const Tensor> inputs, const CallState& state,
      absl::Span<const Tensor* const> destinations = {});
  // Run writing the outputs into `results` (one per output): a hit whose
  // outputs are all written in place allocates nothing.
  absl::Status RunInto(absl::Span<const Tensor> inputs, const CallState& state,
                       absl::Span<const Tensor* const> destinations,
                       absl::Span<Tensor> results);
  // Compiles the entry calls with these inputs' metadata would use.
  absl::Status Precompile(absl::Span<const Tensor> inputs,
                          const CallState& state);
  const guardjit::Function& cache() const { return *cache_; }

  const Graph& graph() const { return *graph_; }
  const std::string& name() const { return options_.name; }
  // Name of input `index` for messages: "input 1 ('b')".
  std::string InputLabel(size_t index) const;
  // True when `tensor` shares memory with a weight of the graph, which a host
  // must never be handed to write into.
  bool AliasesConstant(const Tensor& tensor) const;
  // What reduce-overhead mode's CUDA graphs did (gj_function_stats).
  const CudaGraphCounters& cuda_graph_counters() const {
    return cuda_graph_counters_;
  }

 private:
  Function(std::shared_ptr<const Graph> graph,
           std::unique_ptr<guardjit::Function> cache, FunctionOptions options);

  std::shared_ptr<const Graph> graph_;
  std::unique_ptr<guardjit::Function> cache_;
  FunctionOptions options_;
  absl::flat_hash_set<const Storage*> constant_storage_;
  std::shared_ptr<Allocator> allocator_;
  CudaGraphCounters cuda_graph_counters_;
  CudaGraphPolicy cuda_graph_policy_;  // what reduce-overhead calls carry
};

}  // namespace guardjit::capi

struct gj_function {
  std::unique_ptr<guardjit::capi::Function> impl;
};

#endif  // GUARDJIT_CAPI_FUNCTION_H_
