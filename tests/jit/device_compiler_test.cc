// The per-device compiler (jit/device_compiler.h) over fake compilers: CPU
// entries go to the host compiler, CUDA entries to their device's compiler
// made once per device on first use (a failed make fails that compile
// only), executables that cannot read the call's device are wrapped to run
// on host copies and say so, the fallback is always wrapped, and what the
// wrapper forwards. No GPU is needed: device tensors here are never read.

#include "jit/device_compiler.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace guardjit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Device kCuda0{DeviceType::kCUDA, 0};
const Device kCuda1{DeviceType::kCUDA, 1};

// Writes `tag` as an int64 scalar into each of its `outputs` outputs.
class TagExecutable : public Executable {
 public:
  TagExecutable(int64_t tag, Device device, size_t outputs = 1)
      : tag_(tag), device_(device), outputs_(outputs) {}
  absl::Status Run(const RunContext&, absl::Span<const Tensor> inputs,
                   absl::Span<Tensor> outputs) const override {
    ++runs;
    last_inputs = inputs.size();
    for (Tensor& t : outputs) {
      t = Tensor::FromScalar(Scalar(tag_), DType::kInt64);
    }
    return absl::OkStatus();
  }
  size_t num_outputs() const override { return outputs_; }
  std::string Describe() const override {
    return absl::StrCat("tag ", tag_, " on ", device_.ToString());
  }
  Device device() const override { return device_; }
  CodeOrigin origin() const override {
    CodeOrigin o;
    o.compiled = 2;
    o.loaded = 3;
    return o;
  }
  mutable int runs = 0;
  mutable size_t last_inputs = 0;

 private:
  int64_t tag_;
  Device device_;
  size_t outputs_;
};

// A compiler whose executables run on `device` (tags: 1 for compiles, -1
// for the fallback).
class FakeCompiler : public Compiler {
 public:
  FakeCompiler(std::string name, Device device)
      : name_(std::move(name)), device_(device) {}
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      std::shared_ptr<const Graph>, const Specialization& spec) override {
    ++compiles;
    last_inputs = spec.inputs.size();
    return std::make_unique<TagExecutable>(1, device_, 2);
  }
  absl::StatusOr<std::unique_ptr<Executable>> Fallback(
      std::shared_ptr<const Graph>) override {
    ++fallbacks;
    return std::make_unique<TagExecutable>(-1, Device::Cpu(), 2);
  }
  std::string name() const override { return name_; }
  int compiles = 0;
  int fallbacks = 0;
  size_t last_inputs = 0;

 private:
  std::string name_;
  Device device_;
};

// A DeviceCompiler over a CPU host compiler and a factory making compilers
// whose executables run on the device asked for (or on the CPU where
// `device_kernels` is false), recording the devices asked for.
struct Devices {
  explicit Devices(bool device_kernels = true) {
    host = std::make_shared<FakeCompiler>("llvm", Device::Cpu());
    compiler = std::make_unique<DeviceCompiler>(
        host,
        [this, device_kernels](
            Device device) -> absl::StatusOr<std::shared_ptr<Compiler>> {
          asked.push_back(device);
          if (fail_next) {
            fail_next = false;
            return absl::FailedPreconditionError("no CUDA driver");
          }
          auto made = std::make_shared<FakeCompiler>(
              "cuda", device_kernels ? device : Device::Cpu());
          made_compilers.push_back(made);
          return made;
        });
  }
  std::shared_ptr<FakeCompiler> host;
  std::unique_ptr<DeviceCompiler> compiler;
  std::vector<Device> asked;
  std::vector<std::shared_ptr<FakeCompiler>> made_compilers;
  bool fail_next = false;
};

Specialization SpecOn(std::vector<Device> devices) {
  Specialization spec;
  for (const Device& d : devices) {
    spec.inputs.push_back(TensorMeta(DType::kFloat32, Shape{4}, d));
  }
  return spec;
}

TEST(DeviceCompilerTest, CpuEntriesGoToTheHostCompiler) {
  Devices s;
  auto exe = s.compiler->Compile(nullptr, SpecOn({Device::Cpu()}));
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ(s.host->compiles, 1);
  EXPECT_TRUE(s.asked.empty());  // no device compiler made
  // The host's executable itself, not wrapped.
  EXPECT_EQ((*exe)->Describe(), "tag 1 on cpu");
  EXPECT_EQ(s.compiler->name(), "llvm");
  EXPECT_EQ(&s.compiler->host(), s.host.get());
  auto cpu = s.compiler->ForDevice(Device::Cpu());
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->get(), s.host.get());
  EXPECT_TRUE(s.asked.empty());
}

TEST(DeviceCompilerTest, EachDevicesCompilerIsMadeOnceOnFirstUse) {
  Devices s;
  // The device is the first input not on the CPU (a CPU scalar beside it).
  ASSERT_TRUE(
      s.compiler->Compile(nullptr, SpecOn({Device::Cpu(), kCuda1})).ok());
  ASSERT_TRUE(s.compiler->Compile(nullptr, SpecOn({kCuda1})).ok());
  ASSERT_TRUE(s.compiler->Compile(nullptr, SpecOn({kCuda0})).ok());
  ASSERT_EQ(s.asked.size(), 2u);
  EXPECT_TRUE(s.asked[0] == kCuda1);
  EXPECT_TRUE(s.asked[1] == kCuda0);
  ASSERT_EQ(s.made_compilers.size(), 2u);
  EXPECT_EQ(s.made_compilers[0]->compiles, 2);
  EXPECT_EQ(s.made_compilers[0]->last_inputs, 1u);
  EXPECT_EQ(s.made_compilers[1]->compiles, 1);
  EXPECT_EQ(s.host->compiles, 0);
  auto again = s.compiler->ForDevice(kCuda1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), s.made_compilers[0].get());
  EXPECT_EQ(s.asked.size(), 2u);
}

TEST(DeviceCompilerTest, AFailedFactoryFailsThatCompileOnly) {
  Devices s;
  s.fail_next = true;
  auto failed = s.compiler->Compile(nullptr, SpecOn({kCuda0}));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(failed.status().message(), HasSubstr("no CUDA driver"));
  // The next compile for the device asks the factory again.
  auto ok = s.compiler->Compile(nullptr, SpecOn({kCuda0}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(s.asked.size(), 2u);
  // CPU entries never needed it.
  s.fail_next = true;
  EXPECT_TRUE(s.compiler->Compile(nullptr, SpecOn({Device::Cpu()})).ok());
}

TEST(DeviceCompilerTest, DeviceExecutablesAreReturnedAsTheyAre) {
  Devices s;
  auto exe = s.compiler->Compile(nullptr, SpecOn({kCuda0}));
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->Describe(), "tag 1 on cuda:0");
  EXPECT_TRUE((*exe)->device() == kCuda0);
}

TEST(DeviceCompilerTest, HostPlansForADeviceRunOnHostCopiesAndSaySo) {
  Devices s(/*device_kernels=*/false);
  auto exe = s.compiler->Compile(nullptr, SpecOn({kCuda0}));
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->Describe(),
            "tag 1 on cpu; CUDA calls run on host copies (its plan has no "
            "device kernels for this graph)");
  // What the wrapper forwards.
  EXPECT_EQ((*exe)->num_outputs(), 2u);
  EXPECT_EQ((*exe)->origin().compiled, 2);
  EXPECT_EQ((*exe)->origin().loaded, 3);
}

TEST(DeviceCompilerTest, TheFallbackIsTheHostsOnHostCopies) {
  Devices s;
  auto fallback = s.compiler->Fallback(nullptr);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ(s.host->fallbacks, 1);
  EXPECT_TRUE(s.asked.empty());
  EXPECT_EQ((*fallback)->Describe(),
            "tag -1 on cpu; CUDA calls run on host copies (eager fallback)");
  EXPECT_EQ((*fallback)->num_outputs(), 2u);
  // CPU calls run it directly.
  float data[4] = {1, 2, 3, 4};
  const Tensor x = Tensor::Borrow(data, DType::kFloat32, {4}, {1});
  auto out = RunToVector(**fallback, {x, x});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].Item().to_int(), -1);
  EXPECT_EQ((*out)[1].Item().to_int(), -1);
}

TEST(OnHostCopiesTest, CpuCallsRunTheInnerExecutableDirectly) {
  auto inner = std::make_unique<TagExecutable>(7, Device::Cpu(), 3);
  const TagExecutable* raw = inner.get();
  auto wrapped = OnHostCopies(std::move(inner), "testing");
  EXPECT_EQ(wrapped->Describe(),
            "tag 7 on cpu; CUDA calls run on host copies (testing)");
  EXPECT_EQ(wrapped->num_outputs(), 3u);
  float data[2] = {1, 2};
  const Tensor x = Tensor::Borrow(data, DType::kFloat32, {2}, {1});
  std::vector<Tensor> out(3);
  ASSERT_TRUE(wrapped->Run(RunContext(), {x}, absl::MakeSpan(out)).ok());
  EXPECT_EQ(raw->runs, 1);
  EXPECT_EQ(raw->last_inputs, 1u);
  for (const Tensor& t : out) EXPECT_EQ(t.Item().to_int(), 7);
}

TEST(OnHostCopiesTest, ADeviceCallNeedsTheDevicesAllocator) {
  auto inner = std::make_unique<TagExecutable>(7, Device::Cpu());
  const TagExecutable* raw = inner.get();
  auto wrapped = OnHostCopies(std::move(inner), "testing");
  float data[2] = {1, 2};
  const Tensor x = Tensor::Borrow(data, DType::kFloat32, {2}, {1}, kCuda1);
  std::vector<Tensor> out(1);
  const absl::Status status =
      wrapped->Run(RunContext(), {x}, absl::MakeSpan(out));
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(),
              HasSubstr("a cuda:1 call without that device's allocator"));
  EXPECT_EQ(raw->runs, 0);
}

TEST(DeviceCompilerTest, ToHostReturnsCpuTensorsAsTheyAre) {
  Devices s;
  float data[6] = {};
  const Tensor t = Tensor::Borrow(data, DType::kFloat32, {2, 3}, {1, 2});
  auto host = s.compiler->ToHost(t, RunContext());
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->data(), t.data());
  EXPECT_THAT(host->strides(), ElementsAre(1, 2));
}

}  // namespace
}  // namespace guardjit
