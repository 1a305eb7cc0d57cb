// Checks jit/llvm/llvm_element_ops.h: the LLVM types of dtypes, the INTERNAL
// errors of ops a dtype does not support, and (compiled with the ORC JIT and
// run on hand-picked values) casts with the eager conversions' rules and the
// signed/unsigned and NaN behavior of unary and binary ops.

#include "jit/llvm/llvm_element_ops.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

using Emit = std::function<llvm::Value*(llvm::IRBuilderBase&,
                                        const std::vector<llvm::Value*>&)>;

// `void gj_test(const void* a, const void* b, void* out)`: loads one value of
// each of `inputs` (their memory dtypes), stores what `emit` makes of them
// as `output`. Owns the JIT that holds its code.
class Compiled {
 public:
  Compiled(const std::vector<DType>& inputs, DType output, const Emit& emit) {
    Build(inputs, output, emit);
  }

  bool ok() const { return fn_ != nullptr; }

  // Runs gj_test on `a` (and `b`, for binary ops) as their memory types,
  // returning what it stored as `Out`.
  template <typename Out, typename A, typename B = A>
  Out Call(A a, B b = B{}) const {
    Out out{};
    fn_(&a, &b, &out);
    return out;
  }

 private:
  // Leaves fn_ null (and the test failed) on an error.
  void Build(const std::vector<DType>& inputs, DType output, const Emit& emit) {
    auto jit = OrcJit::Create();
    ASSERT_TRUE(jit.ok()) << jit.status();
    jit_ = std::move(*jit);
    auto machine = jit_->CreateTargetMachine();
    ASSERT_TRUE(machine.ok()) << machine.status();
    llvm::LLVMContext context;
    llvm::Module module("llvm_element_ops_test", context);
    module.setDataLayout((*machine)->createDataLayout());
    llvm::IRBuilder<> b(context);
    llvm::Type* ptr = b.getPtrTy();
    auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr}, false);
    auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                      "gj_test", module);
    b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
    std::vector<llvm::Value*> values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      llvm::Value* v = b.CreateLoad(LlvmMemType(b, inputs[i]), fn->getArg(i));
      if (inputs[i] == DType::kBool) v = b.CreateTrunc(v, b.getInt1Ty());
      values.push_back(v);
    }
    llvm::Value* result = emit(b, values);
    ASSERT_NE(result, nullptr);
    if (output == DType::kBool) result = b.CreateZExt(result, b.getInt8Ty());
    b.CreateStore(result, fn->getArg(2));
    b.CreateRetVoid();
    std::string errors;
    llvm::raw_string_ostream os(errors);
    ASSERT_FALSE(llvm::verifyModule(module, &os)) << os.str();
    auto object = jit_->CompileToObject(module, **machine);
    ASSERT_TRUE(object.ok()) << object.status();
    auto dylib = jit_->CreateDylib();
    ASSERT_TRUE(dylib.ok()) << dylib.status();
    ASSERT_TRUE(jit_->AddObject(*dylib, std::move(*object)).ok());
    auto address = jit_->Lookup(*dylib, "gj_test");
    ASSERT_TRUE(address.ok()) << address.status();
    fn_ = reinterpret_cast<void (*)(const void*, const void*, void*)>(*address);
  }

  std::unique_ptr<OrcJit> jit_;
  void (*fn_)(const void*, const void*, void*) = nullptr;
};

Compiled Cast(DType from, DType to) {
  return Compiled(
      {from}, to,
      [=](llvm::IRBuilderBase& b, const std::vector<llvm::Value*>& v) {
        return EmitCast(b, v[0], from, to);
      });
}

Compiled Unary(UnaryOp op, DType d, DType out) {
  return Compiled(
      {d}, out,
      [=](llvm::IRBuilderBase& b, const std::vector<llvm::Value*>& v) {
        auto r = EmitUnary(b, op, d, v[0]);
        EXPECT_TRUE(r.ok()) << r.status();
        return r.ok() ? *r : nullptr;
      });
}

Compiled Binary(BinaryOp op, DType d, DType out) {
  return Compiled(
      {d, d}, out,
      [=](llvm::IRBuilderBase& b, const std::vector<llvm::Value*>& v) {
        auto r = EmitBinary(b, op, d, v[0], v[1]);
        EXPECT_TRUE(r.ok()) << r.status();
        return r.ok() ? *r : nullptr;
      });
}

TEST(LlvmElementOpsTest, TypesOfDTypes) {
  llvm::LLVMContext context;
  llvm::IRBuilder<> b(context);
  EXPECT_EQ(LlvmType(b, DType::kBool), b.getInt1Ty());
  EXPECT_EQ(LlvmMemType(b, DType::kBool), b.getInt8Ty());
  EXPECT_EQ(LlvmType(b, DType::kUInt8), b.getInt8Ty());
  EXPECT_EQ(LlvmType(b, DType::kInt8), b.getInt8Ty());
  EXPECT_EQ(LlvmType(b, DType::kInt16), b.getInt16Ty());
  EXPECT_EQ(LlvmType(b, DType::kInt32), b.getInt32Ty());
  EXPECT_EQ(LlvmMemType(b, DType::kInt64), b.getInt64Ty());
  EXPECT_EQ(LlvmType(b, DType::kFloat16), b.getHalfTy());
  EXPECT_EQ(LlvmType(b, DType::kBFloat16), b.getBFloatTy());
  EXPECT_EQ(LlvmType(b, DType::kFloat32), b.getFloatTy());
  EXPECT_EQ(LlvmMemType(b, DType::kFloat64), b.getDoubleTy());
  EXPECT_TRUE(IsUnsignedInt(DType::kUInt8));
  EXPECT_TRUE(IsUnsignedInt(DType::kBool));
  EXPECT_FALSE(IsUnsignedInt(DType::kInt8));
}

TEST(LlvmElementOpsTest, UnsupportedOpsAreInternalErrorsNamingOpAndDType) {
  llvm::LLVMContext context;
  llvm::Module module("errors", context);
  llvm::IRBuilder<> b(context);
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), false),
      llvm::Function::ExternalLinkage, "gj_errors", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value* i = b.getInt32(3);
  llvm::Value* f = llvm::ConstantFP::get(b.getFloatTy(), 3.0);
  auto expect_internal = [](const absl::StatusOr<llvm::Value*>& r,
                            const std::string& message) {
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
    EXPECT_EQ(r.status().message(), message);
  };
  expect_internal(EmitUnary(b, UnaryOp::kExp, DType::kInt32, i),
                  "exp of int32");
  expect_internal(EmitUnary(b, UnaryOp::kSqrt, DType::kInt32, i),
                  "sqrt of int32");
  expect_internal(EmitUnary(b, UnaryOp::kTanh, DType::kBool, b.getTrue()),
                  "tanh of bool");
  expect_internal(EmitBinary(b, BinaryOp::kDiv, DType::kInt32, i, i),
                  "div of int32");
  expect_internal(EmitBinary(b, BinaryOp::kPow, DType::kInt32, i, i),
                  "pow of int32");
  expect_internal(EmitBinary(b, BinaryOp::kAnd, DType::kFloat32, f, f),
                  "and of float32");
  expect_internal(EmitBinary(b, BinaryOp::kXor, DType::kFloat32, f, f),
                  "xor of float32");
  expect_internal(EmitBinary(b, BinaryOp::kFmod, DType::kInt32, i, i),
                  "fmod of int32");
  // Integer-valued ops on integers are fine.
  EXPECT_TRUE(EmitUnary(b, UnaryOp::kFloor, DType::kInt32, i).ok());
  EXPECT_TRUE(EmitUnary(b, UnaryOp::kIsNan, DType::kInt32, i).ok());
  EXPECT_TRUE(EmitBinary(b, BinaryOp::kMaximum, DType::kInt32, i, i).ok());
}

TEST(LlvmElementOpsTest, FloatToIntegerCastsTruncateAndSaturateToInt64Min) {
  Compiled to_i32 = Cast(DType::kFloat32, DType::kInt32);
  Compiled to_i64 = Cast(DType::kFloat64, DType::kInt64);
  ASSERT_TRUE(to_i32.ok());
  ASSERT_TRUE(to_i64.ok());
  EXPECT_EQ((to_i32.Call<int32_t, float>(2.7f)), 2);
  EXPECT_EQ((to_i32.Call<int32_t, float>(-2.7f)), -2);
  EXPECT_EQ((to_i64.Call<int64_t, double>(-1e15)), -1000000000000000);
  // Out of range or NaN: INT64_MIN, whose low 32 bits are 0.
  EXPECT_EQ((to_i64.Call<int64_t, double>(1e19)), INT64_MIN);
  EXPECT_EQ((to_i64.Call<int64_t, double>(-1e19)), INT64_MIN);
  EXPECT_EQ((to_i64.Call<int64_t, double>(NAN)), INT64_MIN);
  EXPECT_EQ((to_i32.Call<int32_t, float>(NAN)), 0);
  // Past int32's range but within int64's: the low 32 bits of the int64.
  EXPECT_EQ((to_i32.Call<int32_t, float>(4294967296.0f + 512.0f)), 512);
}

TEST(LlvmElementOpsTest, CastsHonorSignednessAndBool) {
  Compiled u8_to_f32 = Cast(DType::kUInt8, DType::kFloat32);
  Compiled i8_to_f32 = Cast(DType::kInt8, DType::kFloat32);
  Compiled i8_to_i32 = Cast(DType::kInt8, DType::kInt32);
  Compiled u8_to_i32 = Cast(DType::kUInt8, DType::kInt32);
  Compiled i32_to_u8 = Cast(DType::kInt32, DType::kUInt8);
  Compiled f32_to_bool = Cast(DType::kFloat32, DType::kBool);
  Compiled i32_to_bool = Cast(DType::kInt32, DType::kBool);
  Compiled bool_to_i32 = Cast(DType::kBool, DType::kInt32);
  Compiled bool_to_f64 = Cast(DType::kBool, DType::kFloat64);
  for (const Compiled* c :
       {&u8_to_f32, &i8_to_f32, &i8_to_i32, &u8_to_i32, &i32_to_u8,
        &f32_to_bool, &i32_to_bool, &bool_to_i32, &bool_to_f64}) {
    ASSERT_TRUE(c->ok());
  }
  EXPECT_EQ((u8_to_f32.Call<float, uint8_t>(200)), 200.0f);
  EXPECT_EQ((i8_to_f32.Call<float, int8_t>(-56)), -56.0f);
  EXPECT_EQ((i8_to_i32.Call<int32_t, int8_t>(-56)), -56);
  EXPECT_EQ((u8_to_i32.Call<int32_t, uint8_t>(200)), 200);
  EXPECT_EQ((i32_to_u8.Call<uint8_t, int32_t>(300)), 44);
  EXPECT_EQ((i32_to_u8.Call<uint8_t, int32_t>(-1)), 255);
  EXPECT_EQ((f32_to_bool.Call<uint8_t, float>(0.0f)), 0);
  EXPECT_EQ((f32_to_bool.Call<uint8_t, float>(-0.0f)), 0);
  EXPECT_EQ((f32_to_bool.Call<uint8_t, float>(0.25f)), 1);
  EXPECT_EQ((f32_to_bool.Call<uint8_t, float>(NAN)), 1);
  EXPECT_EQ((i32_to_bool.Call<uint8_t, int32_t>(256)), 1);
  EXPECT_EQ((i32_to_bool.Call<uint8_t, int32_t>(0)), 0);
  EXPECT_EQ((bool_to_i32.Call<int32_t, uint8_t>(1)), 1);
  EXPECT_EQ((bool_to_f64.Call<double, uint8_t>(1)), 1.0);
}

TEST(LlvmElementOpsTest, ReducedFloatCastsGoThroughFloat32) {
  Compiled bf16_to_i32 = Cast(DType::kBFloat16, DType::kInt32);
  Compiled i32_to_bf16 = Cast(DType::kInt32, DType::kBFloat16);
  Compiled f16_to_bf16 = Cast(DType::kFloat16, DType::kBFloat16);
  ASSERT_TRUE(bf16_to_i32.ok());
  ASSERT_TRUE(i32_to_bf16.ok());
  ASSERT_TRUE(f16_to_bf16.ok());
  EXPECT_EQ((bf16_to_i32.Call<int32_t, uint16_t>(0x4020)), 2);   // 2.5
  EXPECT_EQ((bf16_to_i32.Call<int32_t, uint16_t>(0xC020)), -2);  // -2.5
  EXPECT_EQ((i32_to_bf16.Call<uint16_t, int32_t>(3)), 0x4040);
  // 257 = 0x43808000 in float32: a tie, rounded to the even 256.
  EXPECT_EQ((i32_to_bf16.Call<uint16_t, int32_t>(257)), 0x4380);
  EXPECT_EQ((f16_to_bf16.Call<uint16_t, uint16_t>(0x3E00)),
            0x3FC0);  // 1.5
}

TEST(LlvmElementOpsTest, IntegerUnaryOps) {
  Compiled abs_i8 = Unary(UnaryOp::kAbs, DType::kInt8, DType::kInt8);
  Compiled relu_i32 = Unary(UnaryOp::kRelu, DType::kInt32, DType::kInt32);
  Compiled sign_i32 = Unary(UnaryOp::kSign, DType::kInt32, DType::kInt32);
  Compiled sign_u8 = Unary(UnaryOp::kSign, DType::kUInt8, DType::kUInt8);
  Compiled neg_u8 = Unary(UnaryOp::kNeg, DType::kUInt8, DType::kUInt8);
  Compiled not_bool = Unary(UnaryOp::kLogicalNot, DType::kBool, DType::kBool);
  Compiled isnan_i32 = Unary(UnaryOp::kIsNan, DType::kInt32, DType::kBool);
  for (const Compiled* c : {&abs_i8, &relu_i32, &sign_i32, &sign_u8, &neg_u8,
                            &not_bool, &isnan_i32}) {
    ASSERT_TRUE(c->ok());
  }
  EXPECT_EQ((abs_i8.Call<int8_t, int8_t>(-5)), 5);
  EXPECT_EQ((abs_i8.Call<int8_t, int8_t>(-128)), -128);  // wraps
  EXPECT_EQ((relu_i32.Call<int32_t, int32_t>(-7)), 0);
  EXPECT_EQ((relu_i32.Call<int32_t, int32_t>(7)), 7);
  EXPECT_EQ((sign_i32.Call<int32_t, int32_t>(-9)), -1);
  EXPECT_EQ((sign_i32.Call<int32_t, int32_t>(0)), 0);
  EXPECT_EQ((sign_i32.Call<int32_t, int32_t>(9)), 1);
  // uint8 is unsigned: 200 is positive.
  EXPECT_EQ((sign_u8.Call<uint8_t, uint8_t>(200)), 1);
  EXPECT_EQ((neg_u8.Call<uint8_t, uint8_t>(1)), 255);
  EXPECT_EQ((not_bool.Call<uint8_t, uint8_t>(1)), 0);
  EXPECT_EQ((not_bool.Call<uint8_t, uint8_t>(0)), 1);
  EXPECT_EQ((isnan_i32.Call<uint8_t, int32_t>(5)), 0);
}

TEST(LlvmElementOpsTest, FloatUnaryOps) {
  Compiled round = Unary(UnaryOp::kRound, DType::kFloat32, DType::kFloat32);
  Compiled sign = Unary(UnaryOp::kSign, DType::kFloat64, DType::kFloat64);
  Compiled isinf = Unary(UnaryOp::kIsInf, DType::kFloat32, DType::kBool);
  Compiled sigmoid = Unary(UnaryOp::kSigmoid, DType::kFloat32, DType::kFloat32);
  Compiled erf = Unary(UnaryOp::kErf, DType::kFloat64, DType::kFloat64);
  Compiled tanh = Unary(UnaryOp::kTanh, DType::kFloat64, DType::kFloat64);
  Compiled gelu = Unary(UnaryOp::kGeluErf, DType::kFloat64, DType::kFloat64);
  for (const Compiled* c :
       {&round, &sign, &isinf, &sigmoid, &erf, &tanh, &gelu}) {
    ASSERT_TRUE(c->ok());
  }
  // Half to even.
  EXPECT_EQ((round.Call<float, float>(2.5f)), 2.0f);
  EXPECT_EQ((round.Call<float, float>(3.5f)), 4.0f);
  EXPECT_EQ((round.Call<float, float>(-2.5f)), -2.0f);
  EXPECT_EQ((sign.Call<double, double>(-3.0)), -1.0);
  EXPECT_EQ((sign.Call<double, double>(0.0)), 0.0);
  EXPECT_EQ((sign.Call<double, double>(0.1)), 1.0);
  EXPECT_EQ((isinf.Call<uint8_t, float>(-INFINITY)), 1);
  EXPECT_EQ((isinf.Call<uint8_t, float>(NAN)), 0);
  EXPECT_EQ((isinf.Call<uint8_t, float>(3e38f)), 0);
  EXPECT_EQ((sigmoid.Call<float, float>(0.0f)), 0.5f);
  EXPECT_EQ((sigmoid.Call<float, float>(-200.0f)), 0.0f);
  EXPECT_EQ((sigmoid.Call<float, float>(200.0f)), 1.0f);
  // float64 erf and tanh call libm.
  EXPECT_EQ((erf.Call<double, double>(0.5)), std::erf(0.5));
  EXPECT_EQ((tanh.Call<double, double>(0.5)), std::tanh(0.5));
  EXPECT_EQ((gelu.Call<double, double>(0.0)), 0.0);
  EXPECT_NEAR((gelu.Call<double, double>(1.0)), 0.8413447460685429, 1e-15);
}

TEST(LlvmElementOpsTest, BinaryOpsHonorSignednessAndNan) {
  Compiled max_u8 = Binary(BinaryOp::kMaximum, DType::kUInt8, DType::kUInt8);
  Compiled max_i8 = Binary(BinaryOp::kMaximum, DType::kInt8, DType::kInt8);
  Compiled lt_u8 = Binary(BinaryOp::kLt, DType::kUInt8, DType::kBool);
  Compiled lt_i8 = Binary(BinaryOp::kLt, DType::kInt8, DType::kBool);
  Compiled max_f32 =
      Binary(BinaryOp::kMaximum, DType::kFloat32, DType::kFloat32);
  Compiled min_f32 =
      Binary(BinaryOp::kMinimum, DType::kFloat32, DType::kFloat32);
  Compiled ne_f32 = Binary(BinaryOp::kNe, DType::kFloat32, DType::kBool);
  Compiled eq_f32 = Binary(BinaryOp::kEq, DType::kFloat32, DType::kBool);
  Compiled fmod = Binary(BinaryOp::kFmod, DType::kFloat64, DType::kFloat64);
  Compiled atan2 = Binary(BinaryOp::kAtan2, DType::kFloat64, DType::kFloat64);
  Compiled and_bool = Binary(BinaryOp::kAnd, DType::kBool, DType::kBool);
  for (const Compiled* c :
       {&max_u8, &max_i8, &lt_u8, &lt_i8, &max_f32, &min_f32, &ne_f32, &eq_f32,
        &fmod, &atan2, &and_bool}) {
    ASSERT_TRUE(c->ok());
  }
  EXPECT_EQ((max_u8.Call<uint8_t, uint8_t>(200, 100)), 200);
  EXPECT_EQ((max_i8.Call<int8_t, int8_t>(-56, 100)), 100);
  EXPECT_EQ((lt_u8.Call<uint8_t, uint8_t>(200, 100)), 0);
  EXPECT_EQ((lt_i8.Call<uint8_t, int8_t>(-56, 100)), 1);
  EXPECT_TRUE(std::isnan(max_f32.Call<float, float>(NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(min_f32.Call<float, float>(1.0f, NAN)));
  EXPECT_EQ((max_f32.Call<float, float>(-0.0f, 0.0f)), 0.0f);
  EXPECT_FALSE(std::signbit(max_f32.Call<float, float>(-0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(min_f32.Call<float, float>(0.0f, -0.0f)));
  EXPECT_EQ((ne_f32.Call<uint8_t, float>(NAN, NAN)), 1);
  EXPECT_EQ((eq_f32.Call<uint8_t, float>(NAN, NAN)), 0);
  EXPECT_EQ((fmod.Call<double, double>(-7.0, 3.0)), -1.0);
  EXPECT_EQ((fmod.Call<double, double>(7.0, -3.0)), 1.0);
  EXPECT_EQ((atan2.Call<double, double>(1.0, 1.0)), std::atan2(1.0, 1.0));
  EXPECT_EQ((and_bool.Call<uint8_t, uint8_t>(1, 0)), 0);
  EXPECT_EQ((and_bool.Call<uint8_t, uint8_t>(1, 1)), 1);
}

TEST(LlvmElementOpsTest, LibmCallsAreDeclaredWithoutSideEffects) {
  llvm::LLVMContext context;
  llvm::Module module("libm", context);
  llvm::IRBuilder<> b(context);
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), false),
      llvm::Function::ExternalLinkage, "gj_libm", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value* f = llvm::ConstantFP::get(b.getFloatTy(), 0.5);
  llvm::Value* d = llvm::ConstantFP::get(b.getDoubleTy(), 0.5);
  ASSERT_TRUE(EmitUnary(b, UnaryOp::kLog1p, DType::kFloat32, f).ok());
  ASSERT_TRUE(EmitUnary(b, UnaryOp::kTanh, DType::kFloat64, d).ok());
  // float32 tanh and exp are expanded inline: no call.
  ASSERT_TRUE(EmitUnary(b, UnaryOp::kTanh, DType::kFloat32, f).ok());
  ASSERT_TRUE(EmitUnary(b, UnaryOp::kExp, DType::kFloat32, f).ok());
  EXPECT_EQ(module.getFunction("tanhf"), nullptr);
  EXPECT_EQ(module.getFunction("expf"), nullptr);
  for (const char* name : {"log1pf", "tanh"}) {
    llvm::Function* callee = module.getFunction(name);
    ASSERT_NE(callee, nullptr) << name;
    EXPECT_TRUE(callee->doesNotAccessMemory()) << name;
    EXPECT_TRUE(callee->doesNotThrow()) << name;
    EXPECT_TRUE(callee->willReturn()) << name;
  }
}

}  // namespace
}  // namespace guardjit
