#ifndef GUARDJIT_JIT_DEVICE_COMPILER_H_
#define GUARDJIT_JIT_DEVICE_COMPILER_H_

// The compiler a context's functions use: entries for CPU calls go to the
// host compiler (the LLVM JIT or the eager interpreter), entries for calls
// on a CUDA device to that device's compiler (the JIT with the CUDA kernel
// backend, created on the first such call). Cache entries already key on the
// device (it is part of every tensor guard), so each device's entries are
// compiled by its own compiler.
//
// An executable that cannot read the call's device (the eager plan of a
// graph the JIT does not take, the eager fallback past the recompile limit)
// is wrapped to run on host copies: the device inputs are downloaded, the
// graph runs on the host and its outputs are uploaded to the call's device
// on the call's stream. Correct and slow, and said so: explain() shows "on
// host copies" and GJ_LOGS=codegen logs it once per entry.

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/compiler.h"
#include "core/device.h"

namespace guardjit {

class DeviceCompiler : public Compiler {
 public:
  // Makes the compiler for a device (called once per device, on its first
  // entry); its errors fail that compile.
  using DeviceFactory =
      std::function<absl::StatusOr<std::shared_ptr<Compiler>>(Device)>;
  DeviceCompiler(std::shared_ptr<Compiler> host, DeviceFactory factory)
      : host_(std::move(host)), factory_(std::move(factory)) {}

  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph> graph, const Specialization& spec) override;
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph> graph) override;
  std::string name() const override { return host_->name(); }
  // A CUDA tensor is copied to the host on ctx.stream, after the work
  // enqueued before it (GJ_LOGS=graph_breaks names the read).
  absl::StatusOr<Tensor> ToHost(const Tensor& tensor,
                                const RunContext& ctx) override;

  Compiler& host() { return *host_; }
  // The device's compiler, made on first use.
  absl::StatusOr<std::shared_ptr<Compiler>> ForDevice(Device device);

 private:
  const std::shared_ptr<Compiler> host_;
  const DeviceFactory factory_;
  std::mutex mu_;
  absl::flat_hash_map<int, std::shared_ptr<Compiler>> devices_;  // CUDA ordinal
  std::atomic<bool> logged_read_{false};
};

// `inner` run on host copies of a call's device inputs (see above); calls
// with only CPU inputs run it directly.
std::unique_ptr<Executable> OnHostCopies(std::unique_ptr<Executable> inner,
                                         std::string why);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_DEVICE_COMPILER_H_
