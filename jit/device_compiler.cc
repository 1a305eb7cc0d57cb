#include "jit/device_compiler.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/cuda_transfer.h"

namespace guardjit {
namespace {

// The device of a specialization: its first input not on the CPU.
Device DeviceOf(const Specialization& spec) {
  for (const TensorMeta& m : spec.inputs) {
    if (!m.device.is_cpu()) return m.device;
  }
  return Device::Cpu();
}

class HostCopyExecutable : public Executable {
 public:
  HostCopyExecutable(std::unique_ptr<Executable> inner, std::string why)
      : inner_(std::move(inner)), why_(std::move(why)) {}

  absl::Status Run(const RunContext& ctx, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    Device device = Device::Cpu();
    for (const Tensor& t : inputs) {
      if (!t.device().is_cpu()) {
        device = t.device();
        break;
      }
    }
    if (device.is_cpu()) return inner_->Run(ctx, inputs, outputs);
    if (ctx.allocator == nullptr) {
      return absl::InternalError(absl::StrCat(
          "a ", device.ToString(), " call without that device's allocator"));
    }
    ASSIGN_OR_RETURN(const CudaDevice* cuda, CudaDevice::Get(device.index));
    ASSIGN_OR_RETURN(CudaContextScope scope, cuda->MakeCurrent());
    std::call_once(logged_, [&] {
      Log(LogTopic::kCodegen,
          absl::StrCat("cuda: ", device.ToString(),
                       " call runs on host copies (", why_, ")"));
    });
    std::vector<Tensor> host;
    host.reserve(inputs.size());
    for (const Tensor& t : inputs) {
      if (t.device().is_cpu()) {
        host.push_back(t);
      } else {
        ASSIGN_OR_RETURN(Tensor h, CudaToHost(t, ctx.stream));
        host.push_back(std::move(h));
      }
    }
    RunContext host_ctx;
    host_ctx.cancel = ctx.cancel;
    host_ctx.deadline = ctx.deadline;
    ASSIGN_OR_RETURN(std::vector<Tensor> out,
                     RunToVector(*inner_, host_ctx, host));
    // Every output must be checked against its destination before any is
    // written; the caller copies results into destinations.
    for (size_t k = 0; k < out.size(); ++k) {
      RETURN_IF_ERROR(CheckDestination(ctx, k, out[k].dtype(), out[k].sizes()));
    }
    for (size_t k = 0; k < out.size(); ++k) {
      ASSIGN_OR_RETURN(outputs[k],
                       CudaToDevice(out[k], device, ctx.allocator, ctx.stream));
    }
    return absl::OkStatus();
  }
  size_t num_outputs() const override { return inner_->num_outputs(); }
  CodeOrigin origin() const override { return inner_->origin(); }

  std::string Describe() const override {
    return absl::StrCat(inner_->Describe(), "; CUDA calls run on host copies (",
                        why_, ")");
  }

 private:
  const std::unique_ptr<Executable> inner_;
  const std::string why_;
  mutable std::once_flag logged_;
};

}  // namespace

std::unique_ptr<Executable> OnHostCopies(std::unique_ptr<Executable> inner,
                                         std::string why) {
  return std::make_unique<HostCopyExecutable>(std::move(inner), std::move(why));
}

absl::StatusOr<std::shared_ptr<Compiler>> DeviceCompiler::ForDevice(
    Device device) {
  if (device.is_cpu()) return host_;
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Compiler>& slot = devices_[device.index];
  if (slot == nullptr) {
    ASSIGN_OR_RETURN(slot, factory_(device));
  }
  return slot;
}

absl::StatusOr<std::unique_ptr<Executable>> DeviceCompiler::Compile(
    std::shared_ptr<const Graph> graph, const Specialization& spec) {
  const Device device = DeviceOf(spec);
  ASSIGN_OR_RETURN(std::shared_ptr<Compiler> compiler, ForDevice(device));
  ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                   compiler->Compile(std::move(graph), spec));
  if (executable->device() == device) return executable;
  return OnHostCopies(std::move(executable),
                      "its plan has no device kernels for this graph");
}

absl::StatusOr<std::unique_ptr<Executable>> DeviceCompiler::Fallback(
    std::shared_ptr<const Graph> graph) {
  ASSIGN_OR_RETURN(std::unique_ptr<Executable> fallback,
                   host_->Fallback(std::move(graph)));
  return OnHostCopies(std::move(fallback), "eager fallback");
}

absl::StatusOr<Tensor> DeviceCompiler::ToHost(const Tensor& tensor,
                                              const RunContext& ctx) {
  if (tensor.device().is_cpu()) return tensor;
  if (tensor.device().type != DeviceType::kCUDA) {
    return Compiler::ToHost(tensor, ctx);
  }
  ASSIGN_OR_RETURN(const CudaDevice* cuda,
                   CudaDevice::Get(tensor.device().index));
  ASSIGN_OR_RETURN(CudaContextScope scope, cuda->MakeCurrent());
  if (!logged_read_.exchange(true) && LogEnabled(LogTopic::kGraphBreaks)) {
    Log(LogTopic::kGraphBreaks,
        absl::StrCat("graph break: reading a ", tensor.DebugString(), " on ",
                     tensor.device().ToString(),
                     " on the host synchronizes the call's stream (logged "
                     "once)"));
  }
  return CudaToHost(tensor, ctx.stream);
}

}  // namespace guardjit
