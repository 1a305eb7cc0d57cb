#include "jit/llvm/orc_jit.h"

#include "gtest/gtest.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"

namespace guardjit {
namespace {

// Builds `int64_t gj_smoke_axpy(int64_t a, int64_t x, int64_t y)` = a*x + y.
llvm::orc::ThreadSafeModule BuildAxpyModule() {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("smoke", *context);
  llvm::IRBuilder<> b(*context);
  llvm::Type* i64 = b.getInt64Ty();
  auto* type = llvm::FunctionType::get(i64, {i64, i64, i64}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    "gj_smoke_axpy", module.get());
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", fn));
  auto args = fn->arg_begin();
  llvm::Value* a = &*args++;
  llvm::Value* x = &*args++;
  llvm::Value* y = &*args;
  b.CreateRet(b.CreateAdd(b.CreateMul(a, x), y));
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
  return llvm::orc::ThreadSafeModule(std::move(module), std::move(context));
}

TEST(OrcJitTest, CompilesToAnObjectLinksAndRunsIt) {
  auto jit = OrcJit::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  auto machine = (*jit)->CreateTargetMachine();
  ASSERT_TRUE(machine.ok()) << machine.status();
  llvm::orc::ThreadSafeModule module = BuildAxpyModule();
  auto object = module.withModuleDo([&](llvm::Module& m) {
    m.setDataLayout((*machine)->createDataLayout());
    return (*jit)->CompileToObject(m, **machine);
  });
  ASSERT_TRUE(object.ok()) << object.status();
  const std::string bytes((*object)->getBuffer());
  EXPECT_EQ(bytes.substr(0, 4),
            "\x7f"
            "ELF");
  // The same object linked into two dylibs: no clash, both run.
  for (int copy = 0; copy < 2; ++copy) {
    auto dylib = (*jit)->CreateDylib();
    ASSERT_TRUE(dylib.ok()) << dylib.status();
    ASSERT_TRUE((*jit)
                    ->AddObject(*dylib, llvm::MemoryBuffer::getMemBufferCopy(
                                            bytes, "axpy"))
                    .ok());
    auto address = (*jit)->Lookup(*dylib, "gj_smoke_axpy");
    ASSERT_TRUE(address.ok()) << address.status();
    auto* axpy =
        reinterpret_cast<int64_t (*)(int64_t, int64_t, int64_t)>(*address);
    EXPECT_EQ(axpy(3, 7, 5), 26);
    EXPECT_EQ(axpy(-2, 1 << 20, 1), -(2 << 20) + 1);
    EXPECT_TRUE((*jit)->RemoveDylib(*dylib).ok());
  }
  EXPECT_NE((*jit)->TargetDescription().find("x86_64"), std::string::npos);
  // The cache key's target part names the CPU's features and LLVM.
  const std::string fingerprint = (*jit)->TargetFingerprint();
  EXPECT_NE(fingerprint.find("features=+"), std::string::npos) << fingerprint;
  EXPECT_NE(fingerprint.find("llvm=19"), std::string::npos) << fingerprint;
}

TEST(OrcJitTest, MissingSymbolAndBadObjectAreErrors) {
  auto jit = OrcJit::Create();
  ASSERT_TRUE(jit.ok());
  auto dylib = (*jit)->CreateDylib();
  ASSERT_TRUE(dylib.ok());
  auto address = (*jit)->Lookup(*dylib, "gj_no_such_function");
  EXPECT_FALSE(address.ok());
  EXPECT_NE(address.status().message().find("gj_no_such_function"),
            std::string::npos);
  EXPECT_FALSE((*jit)
                   ->AddObject(*dylib, llvm::MemoryBuffer::getMemBufferCopy(
                                           "not an object", "junk"))
                   .ok());
}

}  // namespace
}  // namespace guardjit
