#include "jit/llvm/orc_jit.h"

#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

namespace guardjit {
namespace {

absl::Status ToStatus(llvm::Error error, absl::string_view what) {
  std::string message = llvm::toString(std::move(error));
  return absl::InternalError(absl::StrCat(what, ": ", message));
}

}  // namespace

namespace {

// The host's target, CPU and features and the data layout, detected once per
// process: detection and the subtarget tables it builds cost about a
// millisecond, which every context's warm start would otherwise pay.
struct HostTarget {
  std::optional<llvm::orc::JITTargetMachineBuilder> builder;
  std::optional<llvm::DataLayout> layout;
  std::string error;
};

const HostTarget& Host() {
  static const HostTarget* host = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto* h = new HostTarget;
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      h->error = llvm::toString(jtmb.takeError());
      return h;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto layout = jtmb->getDefaultDataLayoutForTarget();
    if (!layout) {
      h->error = llvm::toString(layout.takeError());
      return h;
    }
    h->builder = *jtmb;
    h->layout = *layout;
    return h;
  }();
  return *host;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OrcJit>> OrcJit::Create() {
  const HostTarget& host = Host();
  if (!host.builder.has_value()) {
    return absl::InternalError(
        absl::StrCat("detecting the host CPU: ", host.error));
  }
  // Code arrives as object files (CompileToObject, the compile cache): the
  // JIT's own IR compile layer is never used, so its target machine is made
  // only if it ever is (ConcurrentIRCompiler makes one per compile).
  auto jit =
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(*host.builder)
          .setDataLayout(*host.layout)
          .setCompileFunctionCreator(
              [](llvm::orc::JITTargetMachineBuilder jtmb)
                  -> llvm::Expected<
                      std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                return std::make_unique<llvm::orc::ConcurrentIRCompiler>(
                    std::move(jtmb));
              })
          .create();
  if (!jit) return ToStatus(jit.takeError(), "creating the ORC LLJIT");
  return std::unique_ptr<OrcJit>(new OrcJit(std::move(*jit), *host.builder));
}

absl::StatusOr<llvm::orc::JITDylib*> OrcJit::CreateDylib() {
  const std::string name = absl::StrCat(
      "gj_dylib_", next_dylib_.fetch_add(1, std::memory_order_relaxed));
  auto dylib = jit_->createJITDylib(name);
  if (!dylib) return ToStatus(dylib.takeError(), "creating a JITDylib");
  // Runtime helpers and libm resolve against the host process.
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          jit_->getDataLayout().getGlobalPrefix());
  if (!generator) return ToStatus(generator.takeError(), "process symbols");
  dylib->addGenerator(std::move(*generator));
  return &*dylib;
}

absl::Status OrcJit::RemoveDylib(llvm::orc::JITDylib* dylib) {
  if (llvm::Error e = jit_->getExecutionSession().removeJITDylib(*dylib)) {
    return ToStatus(std::move(e), "removing a module's code");
  }
  return absl::OkStatus();
}

absl::Status OrcJit::AddObject(llvm::orc::JITDylib* dylib,
                               std::unique_ptr<llvm::MemoryBuffer> object) {
  if (llvm::Error e = jit_->addObjectFile(*dylib, std::move(object))) {
    return ToStatus(std::move(e), "linking an object file");
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> OrcJit::Lookup(llvm::orc::JITDylib* dylib,
                                     absl::string_view name) {
  auto address =
      jit_->lookup(*dylib, llvm::StringRef(name.data(), name.size()));
  if (!address) {
    return ToStatus(address.takeError(),
                    absl::StrCat("looking up '", name, "'"));
  }
  return address->toPtr<void*>();
}

absl::StatusOr<std::unique_ptr<llvm::MemoryBuffer>> OrcJit::CompileToObject(
    llvm::Module& module, llvm::TargetMachine& machine) const {
  llvm::orc::SimpleCompiler compiler(machine);
  auto object = compiler(module);
  if (!object) return ToStatus(object.takeError(), "compiling to an object");
  return std::move(*object);
}

std::string OrcJit::TargetDescription() const {
  return absl::StrCat(jit_->getTargetTriple().str(), " ", builder_.getCPU());
}

std::string OrcJit::TargetFingerprint() const {
  return absl::StrCat("triple=", jit_->getTargetTriple().str(),
                      " cpu=", builder_.getCPU(),
                      " features=", builder_.getFeatures().getString(),
                      " llvm=", LLVM_VERSION_STRING);
}

}  // namespace guardjit

namespace guardjit {

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>>
OrcJit::CreateTargetMachine() const {
  llvm::orc::JITTargetMachineBuilder builder = builder_;
  auto machine = builder.createTargetMachine();
  if (!machine)
    return ToStatus(machine.takeError(), "creating a TargetMachine");
  return std::move(*machine);
}

}  // namespace guardjit
