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

TEST(OrcJitTest, CompilesAndRunsOneFunction) {
  auto jit = OrcJit::Create();
  ASSERT_TRUE(jit.ok()) << jit.status();
  ASSERT_TRUE((*jit)->AddModule(BuildAxpyModule()).ok());
  auto address = (*jit)->Lookup("gj_smoke_axpy");
  ASSERT_TRUE(address.ok()) << address.status();
  auto* axpy =
      reinterpret_cast<int64_t (*)(int64_t, int64_t, int64_t)>(*address);
  EXPECT_EQ(axpy(3, 7, 5), 26);
  EXPECT_EQ(axpy(-2, 1 << 20, 1), -(2 << 20) + 1);
  EXPECT_NE((*jit)->TargetDescription().find("x86_64"), std::string::npos);
}

TEST(OrcJitTest, MissingSymbolIsAnError) {
  auto jit = OrcJit::Create();
  ASSERT_TRUE(jit.ok());
  auto address = (*jit)->Lookup("gj_no_such_function");
  EXPECT_FALSE(address.ok());
  EXPECT_NE(address.status().message().find("gj_no_such_function"),
            std::string::npos);
}

}  // namespace
}  // namespace guardjit
