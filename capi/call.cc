// gj_function_call and gj_function_call_alloc: DLPack in, DLPack out, around
// RunFunction / RunFunctionInto (capi/function.h), which run core's
// Function::Call on the call's device and allocator.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "capi/dlpack_convert.h"
#include "capi/error.h"
#include "capi/function.h"
#include "capi/options.h"
#include "core/status_macros.h"
#include "core/tensor_meta.h"
#include "runtime/cuda/cuda_allocator.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_transfer.h"
#include "runtime/tensor_copy.h"

namespace guardjit::capi {
namespace {

absl::StatusOr<CallState> ReadCallOptions(const gj_call_options* options,
                                          absl::string_view fn) {
  gj_call_options opts;
  gj_call_options_init(&opts);
  if (options != nullptr) {
    RETURN_IF_ERROR(CheckStructSize(options->struct_size, fn, "options",
                                    "gj_call_options_init"));
    GJ_READ_OPTION(opts, options, grad_mode);
    GJ_READ_OPTION(opts, options, deterministic);
    GJ_READ_OPTION(opts, options, requires_grad);
    GJ_READ_OPTION(opts, options, cancel);
    GJ_READ_OPTION(opts, options, timeout_us);
    GJ_READ_OPTION(opts, options, stream);
    GJ_READ_OPTION(opts, options, synchronize);
  }
  if (opts.timeout_us < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": options->timeout_us is ", opts.timeout_us,
                     "; expected 0 (no limit) or more"));
  }
  CallState state{opts.grad_mode != 0, opts.deterministic != 0,
                  opts.requires_grad};
  state.cancel = opts.cancel;
  state.stream = opts.stream;
  state.synchronize = opts.synchronize != 0;
  if (opts.timeout_us > 0) {
    state.deadline = absl::Now() + absl::Microseconds(opts.timeout_us);
  }
  return state;
}

// Whether `result` is `dest` itself: the executable wrote it in place.
bool SameView(const Tensor& result, const Tensor& dest) {
  return result.data() == dest.data() && result.dtype() == dest.dtype() &&
         std::equal(result.sizes().begin(), result.sizes().end(),
                    dest.sizes().begin(), dest.sizes().end()) &&
         std::equal(result.strides().begin(), result.strides().end(),
                    dest.strides().begin(), dest.strides().end());
}

// Up to 4 inputs or outputs live inline: a hit allocates nothing for them.
using Tensors = absl::InlinedVector<Tensor, 4>;

// BorrowDLTensor with the label for messages made only on an error (a
// valid call builds no strings).
template <typename Label>
absl::StatusOr<Tensor> BorrowLabeled(const DLTensor* tensor,
                                     const Label& label) {
  absl::StatusOr<Tensor> t = BorrowDLTensor(tensor, "");
  if (t.ok()) return t;
  return BorrowDLTensor(tensor, label());
}

absl::StatusOr<Tensors> BorrowInputs(const Function& function,
                                     const DLTensor* const* inputs,
                                     size_t num_inputs, absl::string_view fn) {
  const Graph& graph = function.graph();
  if (inputs == nullptr && num_inputs > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": inputs is NULL with num_inputs ", num_inputs));
  }
  if (num_inputs != graph.inputs().size()) {
    std::vector<std::string> names;
    for (int i : graph.inputs()) names.push_back(graph.node(i).name);
    return absl::InvalidArgumentError(absl::StrCat(
        fn, ": function '", function.name(), "' takes ", names.size(),
        " inputs (", absl::StrJoin(names, ", "), "), got ", num_inputs));
  }
  Tensors tensors;
  tensors.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    ASSIGN_OR_RETURN(Tensor t, BorrowLabeled(inputs[i], [&] {
                       return absl::StrCat(fn, ": ", function.InputLabel(i));
                     }));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// The device a call runs on: its inputs' and outputs' device, all one,
// except 0-dim CPU inputs, which act as scalars beside CUDA tensors (as in
// PyTorch). A CUDA device must exist: UNAVAILABLE without a usable driver.
absl::StatusOr<Device> CallDevice(const Function& function,
                                  absl::Span<const Tensor> inputs,
                                  absl::Span<const Tensor> outputs,
                                  absl::string_view fn) {
  int first = -1;  // the input that decided the device
  Device device = Device::Cpu();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].device().is_cpu()) {
      first = static_cast<int>(i);
      device = inputs[i].device();
      break;
    }
  }
  auto where = [&](int input) {
    return input < 0 ? std::string("the inputs are on cpu")
                     : absl::StrCat(function.InputLabel(input), " is on ",
                                    inputs[input].device().ToString());
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.device() == device || (t.device().is_cpu() && t.dim() == 0)) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        fn, ": function '", function.name(), "': ", where(first), " and ",
        function.InputLabel(i), " on ", t.device().ToString(),
        "; a call's tensors must be on one device (0-dim CPU tensors "
        "excepted: they act as scalars)"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].device() == device) continue;
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": function '", function.name(), "': output ", i,
                     " is on ", outputs[i].device().ToString(), " but ",
                     where(first), "; outputs must be on the inputs' device"));
  }
  if (device.is_cpu()) return device;
  absl::StatusOr<int> count = CudaDevice::Count();
  if (!count.ok()) {
    return absl::Status(
        count.status().code(),
        absl::StrCat(
            fn, ": function '", function.name(), "': ", where(first),
            ", but CUDA is not usable here: ", count.status().message()));
  }
  if (device.index >= *count) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": function '", function.name(), "': ", where(first),
                     ", but the driver sees ", *count, " CUDA device",
                     *count == 1 ? "" : "s"));
  }
  return device;
}

absl::Status CheckOutputCount(const Function& function, size_t num_outputs,
                              absl::string_view fn) {
  const size_t expected = function.graph().num_outputs();
  if (num_outputs != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": function '", function.name(), "' returns ",
                     expected, " outputs, got num_outputs ", num_outputs));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Run(const gj_function& function,
                                        absl::Span<const Tensor> inputs,
                                        const CallState& state,
                                        absl::string_view fn) {
  auto results = RunFunction(function, inputs, state);
  if (!results.ok()) {
    return absl::Status(results.status().code(),
                        absl::StrCat(fn, ": function '", function.impl->name(),
                                     "': ", results.status().message()));
  }
  return results;
}

// Caller-provided outputs: valid DLTensors whose elements are distinct and
// which share no memory with one another.
absl::StatusOr<Tensors> BorrowOutputs(const DLTensor* const* outputs,
                                      size_t num_outputs,
                                      absl::string_view fn) {
  if (outputs == nullptr && num_outputs > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": outputs is NULL with num_outputs ", num_outputs));
  }
  Tensors tensors;
  for (size_t i = 0; i < num_outputs; ++i) {
    auto what = [&] { return absl::StrCat(fn, ": output ", i); };
    ASSIGN_OR_RETURN(Tensor t, BorrowLabeled(outputs[i], what));
    if (!IsNonOverlapping(t)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what(), ": strides [", absl::StrJoin(t.strides(), ", "),
                       "] for sizes [", absl::StrJoin(t.sizes(), ", "),
                       "] may make elements share memory"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (MemoryRange(tensors[j]).Overlaps(MemoryRange(t))) {
        return absl::InvalidArgumentError(absl::StrCat(
            fn, ": outputs ", j, " and ", i, " overlap in memory"));
      }
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// For a CUDA call: its device's primary context, current until the call
// returns (copies into outputs included).
absl::StatusOr<std::optional<CudaContextScope>> EnterDevice(
    const CallState& state) {
  std::optional<CudaContextScope> scope;
  if (state.device.is_cpu()) return scope;
  ASSIGN_OR_RETURN(const CudaDevice* device,
                   CudaDevice::Get(state.device.index));
  ASSIGN_OR_RETURN(CudaContextScope entered, device->MakeCurrent());
  scope.emplace(std::move(entered));
  return scope;
}

// A contiguous copy of `t` in memory of its own, on t's device.
absl::StatusOr<Tensor> OwnedCopy(const Tensor& t, const CallState& state) {
  if (t.device().is_cpu()) return CopyAs(t, t.dtype());
  ASSIGN_OR_RETURN(CudaCachingAllocator * pool,
                   CudaCachingAllocator::ForDevice(t.device().index));
  return CudaContiguous(t, pool->OnStream(state.stream), state.stream);
}

// A result that is a view of an input (host or device memory); copying it
// into an output it overlaps would read values already overwritten.
template <typename Results>
absl::Status DetachFromOutputs(Results& results,
                               absl::Span<const Tensor> outputs,
                               const CallState& state) {
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor& result = results[i];
    if (result.storage() != nullptr || SameView(result, outputs[i])) continue;
    ByteRange range = MemoryRange(result);
    for (const Tensor& out : outputs) {
      if (range.Overlaps(MemoryRange(out))) {
        ASSIGN_OR_RETURN(result, OwnedCopy(result, state));
        break;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Call(gj_function* function, const DLTensor* const* inputs,
                  size_t num_inputs, const DLTensor* const* outputs,
                  size_t num_outputs, const gj_call_options* options) {
  constexpr absl::string_view kFn = "gj_function_call";
  if (function == nullptr) return NullArgument(kFn, "function");
  Function& f = *function->impl;
  ASSIGN_OR_RETURN(CallState state, ReadCallOptions(options, kFn));
  ASSIGN_OR_RETURN(Tensors in, BorrowInputs(f, inputs, num_inputs, kFn));
  RETURN_IF_ERROR(CheckOutputCount(f, num_outputs, kFn));
  ASSIGN_OR_RETURN(Tensors out, BorrowOutputs(outputs, num_outputs, kFn));
  ASSIGN_OR_RETURN(state.device, CallDevice(f, in, out, kFn));
  ASSIGN_OR_RETURN(std::optional<CudaContextScope> scope, EnterDevice(state));
  absl::InlinedVector<const Tensor*, 4> destinations;
  for (const Tensor& t : out) destinations.push_back(&t);
  Tensors results(out.size());
  absl::Status run = RunFunctionInto(*function, in, state, destinations,
                                     absl::MakeSpan(results));
  if (!run.ok()) {
    return absl::Status(run.code(), absl::StrCat(kFn, ": function '", f.name(),
                                                 "': ", run.message()));
  }
  // Executables check destinations before running; the eager fallback past
  // the recompile limit cannot, so check every output again before writing
  // any, so a mismatch leaves all untouched.
  for (size_t i = 0; i < out.size(); ++i) {
    if (results[i].dtype() != out[i].dtype() ||
        !std::equal(results[i].sizes().begin(), results[i].sizes().end(),
                    out[i].sizes().begin(), out[i].sizes().end())) {
      return absl::InvalidArgumentError(
          absl::StrCat(kFn, ": output ", i, ": expected ",
                       TensorMeta::Of(results[i]).ToString(), ", got ",
                       TensorMeta::Of(out[i]).ToString()));
    }
  }
  RETURN_IF_ERROR(DetachFromOutputs(results, out, state));
  for (size_t i = 0; i < out.size(); ++i) {
    if (SameView(results[i], out[i])) continue;
    if (state.device.is_cpu()) {
      CopyInto(out[i], results[i]);
    } else {
      RETURN_IF_ERROR(CudaCopyInto(out[i], results[i], state.stream));
    }
  }
  return absl::OkStatus();
}

absl::Status Precompile(gj_function* function, const DLTensor* const* inputs,
                        size_t num_inputs, const gj_call_options* options) {
  constexpr absl::string_view kFn = "gj_function_precompile";
  if (function == nullptr) return NullArgument(kFn, "function");
  Function& f = *function->impl;
  ASSIGN_OR_RETURN(CallState state, ReadCallOptions(options, kFn));
  if (inputs == nullptr && num_inputs > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": inputs is NULL with num_inputs ", num_inputs));
  }
  // Only metadata is read: inputs without data get distinct made-up
  // addresses (never dereferenced), so they do not alias one another.
  std::vector<DLTensor> described;
  std::vector<const DLTensor*> pointers;
  described.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (inputs[i] != nullptr && inputs[i]->data == nullptr) {
      DLTensor t = *inputs[i];
      t.data = reinterpret_cast<void*>((uintptr_t{1} << 44) +
                                       i * (uintptr_t{1} << 36));
      t.byte_offset = 0;
      described.push_back(t);
      pointers.push_back(&described.back());
    } else {
      pointers.push_back(inputs[i]);
    }
  }
  ASSIGN_OR_RETURN(Tensors in,
                   BorrowInputs(f, pointers.data(), num_inputs, kFn));
  ASSIGN_OR_RETURN(state.device, CallDevice(f, in, {}, kFn));
  absl::Status status = PrecompileFunction(*function, in, state);
  if (!status.ok()) {
    return absl::Status(
        status.code(),
        absl::StrCat(kFn, ": function '", f.name(), "': ", status.message()));
  }
  return status;
}

// A result the host may own and write: contiguous, in memory of its own.
absl::StatusOr<Tensor> OwnedResult(
    const Function& function, Tensor result, const CallState& state,
    absl::flat_hash_set<const Storage*>& handed_out) {
  // A device result whose memory someone else also holds (a program's
  // device copy of a constant) is not the host's to write either.
  const bool shared_device_memory = !result.device().is_cpu() &&
                                    result.storage() != nullptr &&
                                    result.storage().use_count() > 1;
  if (result.storage() == nullptr || !result.is_contiguous() ||
      function.AliasesConstant(result) || shared_device_memory ||
      handed_out.contains(result.storage().get())) {
    ASSIGN_OR_RETURN(result, OwnedCopy(result, state));
  }
  handed_out.insert(result.storage().get());
  return result;
}

absl::Status CallAlloc(gj_function* function, const DLTensor* const* inputs,
                       size_t num_inputs, const gj_call_options* options,
                       DLManagedTensor** out_outputs, size_t num_outputs) {
  constexpr absl::string_view kFn = "gj_function_call_alloc";
  if (out_outputs == nullptr) return NullArgument(kFn, "out_outputs");
  if (function == nullptr) return NullArgument(kFn, "function");
  Function& f = *function->impl;
  ASSIGN_OR_RETURN(CallState state, ReadCallOptions(options, kFn));
  ASSIGN_OR_RETURN(Tensors in, BorrowInputs(f, inputs, num_inputs, kFn));
  RETURN_IF_ERROR(CheckOutputCount(f, num_outputs, kFn));
  ASSIGN_OR_RETURN(state.device, CallDevice(f, in, {}, kFn));
  ASSIGN_OR_RETURN(std::optional<CudaContextScope> scope, EnterDevice(state));
  ASSIGN_OR_RETURN(std::vector<Tensor> results, Run(*function, in, state, kFn));
  absl::flat_hash_set<const Storage*> handed_out;
  for (Tensor& result : results) {
    ASSIGN_OR_RETURN(result,
                     OwnedResult(f, std::move(result), state, handed_out));
  }
  // Only allocation can fail from here on; it throws, and
  // gj_function_call_alloc releases whatever was already exported.
  for (size_t i = 0; i < num_outputs; ++i) {
    out_outputs[i] = ExportDLManagedTensor(std::move(results[i]));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

// The defaults of every field this library knows; gj_call_options_init_v and
// the legacy gj_call_options_init symbol (legacy_init.cc) copy what fits.
static void CallOptionsDefaults(gj_call_options* options) {
  if (options == nullptr) return;
  options->struct_size = sizeof(gj_call_options);
  options->grad_mode = 1;
  options->deterministic = 0;
  options->requires_grad = nullptr;
  options->cancel = nullptr;
  options->timeout_us = 0;
  options->stream = nullptr;
  options->synchronize = 0;
}

void gj_call_options_init_v(gj_call_options* options, size_t struct_size) {
  guardjit::capi::InitSized(options, struct_size, &CallOptionsDefaults);
}

gj_error* gj_function_call(gj_function* function, const DLTensor* const* inputs,
                           size_t num_inputs, const DLTensor* const* outputs,
                           size_t num_outputs, const gj_call_options* options) {
  return guardjit::capi::Guarded([&] {
    return guardjit::capi::Call(function, inputs, num_inputs, outputs,
                                num_outputs, options);
  });
}

gj_error* gj_function_call_alloc(gj_function* function,
                                 const DLTensor* const* inputs,
                                 size_t num_inputs,
                                 const gj_call_options* options,
                                 DLManagedTensor** out_outputs,
                                 size_t num_outputs) {
  if (out_outputs != nullptr) {
    for (size_t i = 0; i < num_outputs; ++i) out_outputs[i] = nullptr;
  }
  gj_error* error = guardjit::capi::Guarded([&] {
    return guardjit::capi::CallAlloc(function, inputs, num_inputs, options,
                                     out_outputs, num_outputs);
  });
  if (error != nullptr && out_outputs != nullptr) {
    for (size_t i = 0; i < num_outputs; ++i) {
      gj_tensor_release(out_outputs[i]);
      out_outputs[i] = nullptr;
    }
  }
  return error;
}

gj_error* gj_function_precompile(gj_function* function,
                                 const DLTensor* const* inputs,
                                 size_t num_inputs,
                                 const gj_call_options* options) {
  return guardjit::capi::Guarded([&] {
    return guardjit::capi::Precompile(function, inputs, num_inputs, options);
  });
}

void gj_tensor_release(DLManagedTensor* tensor) {
  if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);
}

}  // extern "C"
