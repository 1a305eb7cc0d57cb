// Checks runtime/program/kernel_module.h's defaults, what a backend that
// implements only the required methods gets: no fault words, no launch
// descriptions (UNIMPLEMENTED), no host functions, an empty code origin,
// and a DeviceTransfer that does not block on launches.

#include "runtime/program/kernel_module.h"

#include <cstdint>
#include <memory>
#include <type_traits>

#include "absl/status/status.h"
#include "core/run_context.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

// A module of one host kernel, b[i] = a[i] + sizes[0] for i in [0, 4),
// overriding only Launch.
class AddModule : public KernelModule {
 public:
  absl::StatusOr<int64_t> Launch(int index, void* const* buffers,
                                 absl::Span<const int64_t> sizes,
                                 const DeviceFaultWords* faults,
                                 const RunContext& ctx) const override {
    (void)faults;
    (void)ctx;
    if (index != 0) return absl::OutOfRangeError("one kernel");
    const auto* a = static_cast<const float*>(buffers[0]);
    auto* b = static_cast<float*>(buffers[1]);
    for (int i = 0; i < 4; ++i) b[i] = a[i] + static_cast<float>(sizes[0]);
    return 0;
  }
};

class NullTransfer : public DeviceTransfer {
 public:
  Device device() const override { return Device::Cpu(); }
  absl::StatusOr<Tensor> ToHost(const Tensor& t,
                                const RunContext& ctx) const override {
    (void)ctx;
    return t;
  }
  absl::StatusOr<Tensor> ToDevice(const Tensor& t,
                                  const RunContext& ctx) const override {
    (void)ctx;
    return t;
  }
  absl::StatusOr<std::shared_ptr<Allocator>> DefaultAllocator(
      const RunContext& ctx) const override {
    (void)ctx;
    return std::shared_ptr<Allocator>();
  }
  absl::Status Synchronize(const RunContext& ctx) const override {
    (void)ctx;
    return absl::OkStatus();
  }
};

// The signature host kernels are compiled with (jit/llvm/llvm_codegen.h's
// CompiledKernelFn, spelled out: runtime/ does not see LLVM's headers).
static_assert(
    std::is_same_v<HostKernelFn, int64_t (*)(void* const*, const int64_t*,
                                             int64_t, int64_t)>);

TEST(KernelModuleTest, DefaultsHaveNoFaultWordsHostFunctionsOrOrigin) {
  const AddModule module;
  auto words = module.NewFaultWords();
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(*words, nullptr);
  EXPECT_EQ(module.host_functions(), nullptr);
  const CodeOrigin origin = module.origin();
  EXPECT_EQ(origin.compiled, 0);
  EXPECT_EQ(origin.loaded, 0);
  EXPECT_EQ(origin.reused, 0);
  EXPECT_FALSE(origin.all_loaded());
}

TEST(KernelModuleTest, DescribeLaunchIsUnimplementedByDefault) {
  const AddModule module;
  float a[4] = {};
  void* buffers[] = {a, a};
  const int64_t sizes[] = {1};
  const absl::Status status =
      module.DescribeLaunch(0, buffers, sizes, nullptr, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(), "the backend does not record launches");
}

TEST(KernelModuleTest, DeviceTransferDoesNotBlockByDefault) {
  const NullTransfer transfer;
  EXPECT_FALSE(transfer.launch_blocking());
}

}  // namespace
}  // namespace guardjit
