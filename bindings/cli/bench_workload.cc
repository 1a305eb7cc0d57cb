#include "bindings/cli/bench_workload.h"

#include <chrono>

#include "bindings/cli/cli_common.h"
#include "bindings/cli/dtype.h"
#include "bindings/cli/output_print.h"

namespace guardjit_cli {

std::string SpecText(const InputSpec& spec) {
  std::string text = spec.name + "=" + spec.dtype->name + "[";
  for (size_t d = 0; d < spec.shape.size(); ++d) {
    text += (d > 0 ? "," : "") + std::to_string(spec.shape[d]);
  }
  return text + "]";
}

int64_t TensorBytes(const DLTensor& tensor) {
  int64_t numel = 1;
  for (int d = 0; d < tensor.ndim; ++d) numel *= tensor.shape[d];
  return numel * ItemBytes(tensor.dtype);
}

Workload::Workload(const std::vector<const InputSpec*>& specs, int threads,
                   unsigned long long seed)
    : threads_(threads) {
  std::mt19937_64 rng(seed);
  for (PerThread& t : threads_) {
    for (const InputSpec* spec : specs) {
      t.owned_inputs.push_back(std::make_unique<HostTensor>(*spec, rng));
      t.inputs.push_back(t.owned_inputs.back()->dl());
    }
  }
}

Workload::~Workload() { gj_error_destroy(error_); }

bool Workload::FirstCall(gj_function* function, double* wall_ms) {
  const size_t num_outputs = gj_function_num_outputs(function);
  std::vector<DLManagedTensor*> results(num_outputs, nullptr);
  const auto start = std::chrono::steady_clock::now();
  gj_error* error = gj_function_call_alloc(
      function, inputs(0), num_inputs(), nullptr, results.data(), num_outputs);
  *wall_ms = std::chrono::duration<double, std::milli>(
                 std::chrono::steady_clock::now() - start)
                 .count();
  if (Failed(error)) return false;
  for (PerThread& t : threads_) {
    t.owned_outputs.clear();
    t.outputs.clear();
    for (DLManagedTensor* result : results) {
      const DLTensor& like = result->dl_tensor;
      auto buffer = std::make_unique<Buffer>();
      buffer->shape.assign(like.shape, like.shape + like.ndim);
      buffer->storage.resize(static_cast<size_t>(TensorBytes(like) + 7) / 8 +
                             1);
      buffer->dl.data = buffer->storage.data();
      buffer->dl.device = DLDevice{kDLCPU, 0};
      buffer->dl.ndim = like.ndim;
      buffer->dl.dtype = like.dtype;
      buffer->dl.shape = buffer->shape.data();
      t.outputs.push_back(&buffer->dl);
      t.owned_outputs.push_back(std::move(buffer));
    }
  }
  for (DLManagedTensor* result : results) gj_tensor_release(result);
  return true;
}

bool Workload::Call(gj_function* function, int thread) {
  const PerThread& t = threads_[thread];
  gj_error* error =
      gj_function_call(function, t.inputs.data(), t.inputs.size(),
                       t.outputs.data(), t.outputs.size(), nullptr);
  if (error == nullptr) return true;
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_ == nullptr) {
    error_ = error;
  } else {
    gj_error_destroy(error);
  }
  return false;
}

bool Workload::PrintError() {
  std::lock_guard<std::mutex> lock(error_mu_);
  gj_error* error = error_;
  error_ = nullptr;
  return Failed(error);
}

int64_t Workload::bytes_moved() const {
  int64_t bytes = 0;
  for (const DLTensor* t : threads_[0].inputs) bytes += TensorBytes(*t);
  for (const DLTensor* t : threads_[0].outputs) bytes += TensorBytes(*t);
  return bytes;
}

std::string Workload::OutputsText() const {
  std::string text;
  for (const DLTensor* t : threads_[0].outputs) {
    text += (text.empty() ? "" : ", ") + Describe(*t);
  }
  return text;
}

}  // namespace guardjit_cli
