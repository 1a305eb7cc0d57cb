#include "jit/llvm/orc_jit.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
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

absl::StatusOr<std::unique_ptr<OrcJit>> OrcJit::Create() {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return ToStatus(jtmb.takeError(), "detecting the host CPU");
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit) return ToStatus(jit.takeError(), "creating the ORC LLJIT");
  // Runtime helpers and libm resolve against the host process.
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
          (*jit)->getDataLayout().getGlobalPrefix());
  if (!generator) return ToStatus(generator.takeError(), "process symbols");
  (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
  return std::unique_ptr<OrcJit>(new OrcJit(std::move(*jit), *jtmb));
}

absl::StatusOr<llvm::orc::ResourceTrackerSP> OrcJit::AddModule(
    llvm::orc::ThreadSafeModule module) {
  llvm::orc::ResourceTrackerSP tracker =
      jit_->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = jit_->addIRModule(tracker, std::move(module))) {
    return ToStatus(std::move(e), "adding an IR module");
  }
  return tracker;
}

absl::Status OrcJit::Remove(const llvm::orc::ResourceTrackerSP& tracker) {
  if (llvm::Error e = tracker->remove()) {
    return ToStatus(std::move(e), "removing a module's code");
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> OrcJit::Lookup(absl::string_view name) {
  auto address = jit_->lookup(llvm::StringRef(name.data(), name.size()));
  if (!address) {
    return ToStatus(address.takeError(),
                    absl::StrCat("looking up '", name, "'"));
  }
  return address->toPtr<void*>();
}

std::string OrcJit::TargetDescription() const {
  return absl::StrCat(jit_->getTargetTriple().str(), " ",
                      llvm::sys::getHostCPUName().str());
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
