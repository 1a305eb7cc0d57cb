#ifndef GUARDJIT_BINDINGS_CLI_BENCH_WORKLOAD_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_WORKLOAD_H_

// The buffers of one benchmarked call, one set per calling thread: inputs
// filled as their --input specs say, outputs preallocated by the caller.

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "bindings/cli/input_spec.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {

// "x=float32[4,8]".
std::string SpecText(const InputSpec& spec);

// Bytes of a tensor's elements.
int64_t TensorBytes(const DLTensor& tensor);

class Workload {
 public:
  // Inputs in the graph's order; each thread gets its own copies, drawn in
  // turn from one generator seeded with `seed`.
  Workload(const std::vector<const InputSpec*>& specs, int threads,
           unsigned long long seed);
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;
  ~Workload();

  const DLTensor* const* inputs(int thread) const {
    return threads_[thread].inputs.data();
  }
  size_t num_inputs() const { return threads_[0].inputs.size(); }

  // gj_function_call_alloc on thread 0's inputs, which tells the outputs'
  // dtypes and shapes (the C API has no other way): then every thread's
  // outputs are allocated. *wall_ms is the call's wall time. False after
  // printing the error.
  bool FirstCall(gj_function* function, double* wall_ms);

  // gj_function_call on thread `thread`'s inputs into its preallocated
  // outputs. Safe to call from the threads concurrently; on failure keeps
  // the first error for PrintError.
  bool Call(gj_function* function, int thread);

  // Prints the kept error, if any; true if there was one.
  bool PrintError();

  // Bytes one call reads and writes: its inputs plus its outputs.
  int64_t bytes_moved() const;
  // "float32[4, 4]" per output, comma-separated.
  std::string OutputsText() const;

 private:
  struct Buffer {
    std::vector<int64_t> shape;
    std::vector<uint64_t> storage;  // 8-byte aligned for every dtype
    DLTensor dl{};
  };
  struct PerThread {
    std::vector<std::unique_ptr<HostTensor>> owned_inputs;
    std::vector<std::unique_ptr<Buffer>> owned_outputs;
    std::vector<const DLTensor*> inputs;
    std::vector<const DLTensor*> outputs;
  };
  std::vector<PerThread> threads_;
  std::mutex error_mu_;
  gj_error* error_ = nullptr;
};

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_WORKLOAD_H_
