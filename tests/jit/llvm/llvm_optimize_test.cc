// Checks OptimizeModule (jit/llvm/llvm_optimize.h): it stamps the target on
// the module and on every defined function (not on declarations), runs the O3
// pipeline (folding, loop vectorization, libmvec calls for vectorized math),
// and reports a module the verifier rejects as INTERNAL.

#include "jit/llvm/llvm_optimize.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "jit/llvm/libmvec.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

std::unique_ptr<llvm::TargetMachine> HostMachine() {
  auto jit = OrcJit::Create();
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (!jit.ok()) return nullptr;
  auto machine = (*jit)->CreateTargetMachine();
  EXPECT_TRUE(machine.ok()) << machine.status();
  if (!machine.ok()) return nullptr;
  return std::move(*machine);
}

std::string Print(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return os.str();
}

// `void name(ptr noalias out, ptr noalias in, i64 n)`: for i < n,
// out[i] = f(in[i]) with `f` emitted by `body` on one element of `t`.
template <typename Body>
llvm::Function* AddMapLoop(llvm::Module& module, const char* name,
                           llvm::Type* t, Body body) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* i64 = b.getInt64Ty();
  auto* type = llvm::FunctionType::get(
      b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), i64}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name,
                                    module);
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(1, llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(context, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(context, "loop", fn);
  auto* exit = llvm::BasicBlock::Create(context, "exit", fn);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(fn->getArg(2), b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* x = b.CreateLoad(t, b.CreateGEP(t, fn->getArg(1), i));
  b.CreateStore(body(b, x), b.CreateGEP(t, fn->getArg(0), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, fn->getArg(2)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return fn;
}

TEST(LlvmOptimizeTest, StampsTargetOnModuleAndDefinedFunctionsOnly) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("stamp", context);
  llvm::IRBuilder<> b(context);
  auto* type =
      llvm::FunctionType::get(b.getDoubleTy(), {b.getDoubleTy()}, false);
  // An external declaration the defined function calls, so neither is
  // removed by the pipeline.
  auto* callee = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                        "gj_external", module);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    "gj_defined", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  b.CreateRet(b.CreateCall(callee, {fn->getArg(0)}));

  ASSERT_TRUE(OptimizeModule(module, *machine).ok());
  EXPECT_EQ(module.getTargetTriple(), machine->getTargetTriple().str());
  EXPECT_EQ(module.getDataLayout(), machine->createDataLayout());
  llvm::Function* defined = module.getFunction("gj_defined");
  llvm::Function* declared = module.getFunction("gj_external");
  ASSERT_NE(defined, nullptr);
  ASSERT_NE(declared, nullptr);
  EXPECT_EQ(defined->getFnAttribute("target-cpu").getValueAsString(),
            machine->getTargetCPU());
  EXPECT_EQ(defined->getFnAttribute("target-features").getValueAsString(),
            machine->getTargetFeatureString());
  EXPECT_FALSE(declared->hasFnAttribute("target-cpu"));
  EXPECT_FALSE(declared->hasFnAttribute("target-features"));
}

// `i32 gj_seven()`: a stack slot holding 3, then 3 + 4 through two loads
// (seven instructions as emitted).
llvm::Function* AddSeven(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  auto* type = llvm::FunctionType::get(b.getInt32Ty(), {}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    "gj_seven", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value* slot = b.CreateAlloca(b.getInt32Ty());
  b.CreateStore(b.getInt32(3), slot);
  llvm::Value* x = b.CreateLoad(b.getInt32Ty(), slot);
  b.CreateStore(b.CreateAdd(x, b.getInt32(4)), slot);
  b.CreateRet(b.CreateLoad(b.getInt32Ty(), slot));
  return fn;
}

TEST(LlvmOptimizeTest, FoldsMemoryTrafficAndArithmeticAway) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("fold", context);
  AddSeven(module);

  ASSERT_TRUE(OptimizeModule(module, *machine).ok());
  llvm::Function* seven = module.getFunction("gj_seven");
  ASSERT_NE(seven, nullptr);
  ASSERT_EQ(seven->size(), 1u);
  ASSERT_EQ(seven->getEntryBlock().size(), 1u) << Print(module);
  auto* ret = llvm::dyn_cast<llvm::ReturnInst>(&seven->getEntryBlock().front());
  ASSERT_NE(ret, nullptr);
  auto* value = llvm::dyn_cast<llvm::ConstantInt>(ret->getReturnValue());
  ASSERT_NE(value, nullptr) << Print(module);
  EXPECT_EQ(value->getSExtValue(), 7);
}

// IrPasses::kNone (packed products): the target stamped and the module
// verified, its instructions left as emitted for the code generator.
TEST(LlvmOptimizeTest, NoIrPassesLeavesTheIrAsEmitted) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("as_emitted", context);
  llvm::Function* fn = AddSeven(module);

  ASSERT_TRUE(OptimizeModule(module, *machine, IrPasses::kNone).ok());
  EXPECT_EQ(fn->getEntryBlock().size(), 7u) << Print(module);
  EXPECT_EQ(fn->getFnAttribute("target-cpu").getValueAsString(),
            machine->getTargetCPU());
  EXPECT_EQ(module.getTargetTriple(), machine->getTargetTriple().str());

  // Invalid IR is still caught.
  llvm::Module bad("bad", context);
  auto* broken = llvm::Function::Create(
      fn->getFunctionType(), llvm::Function::ExternalLinkage, "gj_broken", bad);
  llvm::BasicBlock::Create(context, "entry", broken);  // no terminator
  const absl::Status status = OptimizeModule(bad, *machine, IrPasses::kNone);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
}

TEST(LlvmOptimizeTest, VectorizesASimpleLoop) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("vectorize", context);
  llvm::Type* f32 = llvm::Type::getFloatTy(context);
  AddMapLoop(module, "gj_scale", f32,
             [&](llvm::IRBuilderBase& b, llvm::Value* x) {
               return b.CreateFMul(x, llvm::ConstantFP::get(f32, 2.0));
             });
  ASSERT_TRUE(OptimizeModule(module, *machine).ok());
  const std::string ir = Print(module);
  // x86-64 has at least SSE2: 4 floats a vector, or more with AVX.
  EXPECT_NE(ir.find("fmul <"), std::string::npos) << ir;
  EXPECT_NE(ir.find("x float> "), std::string::npos) << ir;
}

TEST(LlvmOptimizeTest, VectorizedMathCallsLibmvec) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "libmvec's variants are mapped on x86-64 only";
#endif
  if (!LoadLibmvec()) GTEST_SKIP() << "no libmvec on this host";
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("libmvec", context);
  llvm::Type* f64 = llvm::Type::getDoubleTy(context);
  AddMapLoop(module, "gj_log", f64,
             [&](llvm::IRBuilderBase& b, llvm::Value* x) {
               return b.CreateUnaryIntrinsic(llvm::Intrinsic::log, x);
             });
  ASSERT_TRUE(OptimizeModule(module, *machine).ok());
  const std::string ir = Print(module);
  // _ZGVbN2v_log (SSE) or _ZGVdN4v_log (AVX2), by the host's features.
  EXPECT_NE(ir.find("_ZGV"), std::string::npos) << ir;
  EXPECT_NE(ir.find("v_log("), std::string::npos) << ir;
}

TEST(LlvmOptimizeTest, InvalidModuleIsInternalError) {
  auto machine = HostMachine();
  ASSERT_NE(machine, nullptr);
  llvm::LLVMContext context;
  llvm::Module module("invalid", context);
  // A module flag with behavior 99, which the verifier rejects and the
  // passes leave alone.
  llvm::IRBuilder<> b(context);
  llvm::Metadata* flag[] = {llvm::ConstantAsMetadata::get(b.getInt32(99)),
                            llvm::MDString::get(context, "gj_flag"),
                            llvm::ConstantAsMetadata::get(b.getInt32(1))};
  module.getOrInsertNamedMetadata("llvm.module.flags")
      ->addOperand(llvm::MDNode::get(context, flag));
  const absl::Status status = OptimizeModule(module, *machine);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_NE(status.message().find("optimized IR invalid: "), std::string::npos)
      << status;
  EXPECT_NE(status.message().find("module flag"), std::string::npos) << status;
}

}  // namespace
}  // namespace guardjit
