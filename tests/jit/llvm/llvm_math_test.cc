// Checks the IR expansions of jit/llvm/llvm_math.h by compiling each into a
// small function with the ORC JIT and running it: float32 exp and tanh against
// libm within their documented ulp bounds (special values exactly), on
// scalars and on vectors, and the float16/bfloat16 <-> float32 conversions
// bit for bit on hand-picked values (rounding ties to even, NaN kept quiet).

#include "jit/llvm/llvm_math.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace {

// Emits the body of `void gj_test(const In* in, Out* out)`: `emit` maps the
// value loaded from `in` (of `in_type`) to the value stored to `out`.
using Emit = std::function<llvm::Value*(llvm::IRBuilderBase&, llvm::Value*)>;
using TypeOf = std::function<llvm::Type*(llvm::IRBuilderBase&)>;

// A compiled gj_test and the JIT that owns its code.
struct Compiled {
  std::unique_ptr<OrcJit> jit;
  void* address = nullptr;
};

Compiled Compile(const TypeOf& in_type, const Emit& emit) {
  Compiled compiled;
  auto jit = OrcJit::Create();
  EXPECT_TRUE(jit.ok()) << jit.status();
  if (!jit.ok()) return compiled;
  compiled.jit = std::move(*jit);
  auto machine = compiled.jit->CreateTargetMachine();
  EXPECT_TRUE(machine.ok()) << machine.status();
  if (!machine.ok()) return compiled;
  llvm::LLVMContext context;
  llvm::Module module("llvm_math_test", context);
  module.setDataLayout((*machine)->createDataLayout());
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false);
  auto* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                    "gj_test", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fn));
  llvm::Value* in = b.CreateLoad(in_type(b), fn->getArg(0));
  llvm::Value* out = emit(b, in);
  b.CreateStore(out, fn->getArg(1));
  b.CreateRetVoid();
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_FALSE(llvm::verifyModule(module, &os)) << os.str();
  auto object = compiled.jit->CompileToObject(module, **machine);
  EXPECT_TRUE(object.ok()) << object.status();
  if (!object.ok()) return compiled;
  auto dylib = compiled.jit->CreateDylib();
  EXPECT_TRUE(dylib.ok()) << dylib.status();
  if (!dylib.ok()) return compiled;
  EXPECT_TRUE(compiled.jit->AddObject(*dylib, std::move(*object)).ok());
  auto address = compiled.jit->Lookup(*dylib, "gj_test");
  EXPECT_TRUE(address.ok()) << address.status();
  if (address.ok()) compiled.address = *address;
  return compiled;
}

template <typename In, typename Out>
Out Call(const Compiled& compiled, In in) {
  Out out{};
  reinterpret_cast<void (*)(const In*, Out*)>(compiled.address)(&in, &out);
  return out;
}
// float -> float, 16-bit pattern -> float, float -> 16-bit pattern.
float CallFF(const Compiled& c, float x) { return Call<float, float>(c, x); }
float CallHF(const Compiled& c, uint16_t x) {
  return Call<uint16_t, float>(c, x);
}
uint16_t CallFH(const Compiled& c, float x) {
  return Call<float, uint16_t>(c, x);
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// The distance in units in the last place between two finite floats of the
// same sign.
int64_t UlpDistance(float a, float b) {
  return std::abs(static_cast<int64_t>(Bits(a)) -
                  static_cast<int64_t>(Bits(b)));
}

llvm::Type* FloatType(llvm::IRBuilderBase& b) { return b.getFloatTy(); }

TEST(LlvmMathTest, ExpF32IsWithinTwoUlpOfLibmAndExactAtSpecialValues) {
  Compiled exp = Compile(FloatType, [](llvm::IRBuilderBase& b, llvm::Value* x) {
    return EmitExpF32(b, x);
  });
  ASSERT_NE(exp.address, nullptr);
  for (float x : {-100.0f, -87.5f, -20.0f, -1.0f, -0.25f, 1e-6f, 0.5f, 1.0f,
                  2.0f, 10.0f, 50.0f, 88.5f}) {
    const float expected = std::exp(x);
    const float actual = CallFF(exp, x);
    EXPECT_LE(UlpDistance(actual, expected), 2)
        << "exp(" << x << ") = " << actual << ", libm " << expected;
  }
  // Hand-known values: e^0 = 1, the denormal range, overflow and underflow.
  EXPECT_EQ(CallFF(exp, 0.0f), 1.0f);
  EXPECT_EQ(CallFF(exp, -0.0f), 1.0f);
  const float denormal = CallFF(exp, -100.0f);
  EXPECT_GT(denormal, 0.0f);
  EXPECT_LT(denormal, std::numeric_limits<float>::min());
  EXPECT_EQ(CallFF(exp, 89.0f), INFINITY);
  EXPECT_EQ(CallFF(exp, 1000.0f), INFINITY);
  EXPECT_EQ(CallFF(exp, INFINITY), INFINITY);
  EXPECT_EQ(CallFF(exp, -110.0f), 0.0f);
  EXPECT_EQ(CallFF(exp, -INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(CallFF(exp, NAN)));
}

TEST(LlvmMathTest, TanhF32IsWithinThreeUlpOfLibmAndKeepsSignsAndNan) {
  Compiled tanh = Compile(
      FloatType,
      [](llvm::IRBuilderBase& b, llvm::Value* x) { return EmitTanhF32(b, x); });
  ASSERT_NE(tanh.address, nullptr);
  // Below |x| = 0.625 (the polynomial), 1 ulp.
  for (float x : {1e-5f, 0.1f, -0.3f, 0.6f}) {
    EXPECT_LE(UlpDistance(CallFF(tanh, x), std::tanh(x)), 1) << x;
  }
  // At and above it (through exp), 3 ulp.
  for (float x : {0.625f, -0.7f, 1.0f, -2.5f, 5.0f, 9.0f}) {
    EXPECT_LE(UlpDistance(CallFF(tanh, x), std::tanh(x)), 3) << x;
  }
  EXPECT_EQ(CallFF(tanh, 60.0f), 1.0f);
  EXPECT_EQ(CallFF(tanh, -60.0f), -1.0f);
  EXPECT_EQ(CallFF(tanh, INFINITY), 1.0f);
  EXPECT_EQ(CallFF(tanh, -INFINITY), -1.0f);
  EXPECT_EQ(Bits(CallFF(tanh, 0.0f)), 0u);
  EXPECT_EQ(Bits(CallFF(tanh, -0.0f)), 0x80000000u);
  EXPECT_TRUE(std::isnan(CallFF(tanh, NAN)));
}

// Below -104, e^x < 2^-150 rounds to 0: those lanes are set to 0 without
// computing through the denormal range (which takes a microcode assist per
// multiply on x86). Between about -103.97 and -87.3 the results are
// denormals, still correctly rounded; the boundary is where libm's is.
TEST(LlvmMathTest, ExpF32UnderflowsToZeroAtLibmsBoundaryAndKeepsDenormals) {
  Compiled exp = Compile(FloatType, [](llvm::IRBuilderBase& b, llvm::Value* x) {
    return EmitExpF32(b, x);
  });
  ASSERT_NE(exp.address, nullptr);
  for (float x = -105.0f; x <= -86.0f; x += 0.0625f) {
    const float expected = std::exp(x);
    const float actual = CallFF(exp, x);
    // Denormals have fewer bits: 2 units of 2^-149 apart at most.
    EXPECT_LE(UlpDistance(actual, expected), 2)
        << "exp(" << x << ") = " << actual << ", libm " << expected;
  }
  for (float x : {-104.0f, -104.5f, -1000.0f,
                  -std::numeric_limits<float>::max(), -INFINITY}) {
    EXPECT_EQ(Bits(CallFF(exp, x)), Bits(0.0f)) << "exp(" << x << ")";
    EXPECT_EQ(std::exp(x), 0.0f) << "libm's exp(" << x << ")";
  }
}

TEST(LlvmMathTest, ExpAndTanhWorkOnVectorsLaneByLane) {
  struct Vec4 {
    float v[4];
  };
  auto vec4 = [](llvm::IRBuilderBase& b) -> llvm::Type* {
    return llvm::FixedVectorType::get(b.getFloatTy(), 4);
  };
  Compiled exp = Compile(vec4, [](llvm::IRBuilderBase& b, llvm::Value* x) {
    return EmitExpF32(b, x);
  });
  Compiled tanh = Compile(vec4, [](llvm::IRBuilderBase& b, llvm::Value* x) {
    return EmitTanhF32(b, x);
  });
  ASSERT_NE(exp.address, nullptr);
  ASSERT_NE(tanh.address, nullptr);
  const Vec4 in = {{0.0f, 1.0f, -2.0f, 200.0f}};
  const Vec4 e = Call<Vec4, Vec4>(exp, in);
  EXPECT_EQ(e.v[0], 1.0f);
  EXPECT_LE(UlpDistance(e.v[1], std::exp(1.0f)), 2);
  EXPECT_LE(UlpDistance(e.v[2], std::exp(-2.0f)), 2);
  EXPECT_EQ(e.v[3], INFINITY);
  // A masked lane (-inf) beside live ones: 0 there, the others unchanged.
  const Vec4 masked =
      Call<Vec4, Vec4>(exp, Vec4{{-INFINITY, -1.0f, NAN, -95.0f}});
  EXPECT_EQ(masked.v[0], 0.0f);
  EXPECT_LE(UlpDistance(masked.v[1], std::exp(-1.0f)), 2);
  EXPECT_TRUE(std::isnan(masked.v[2]));
  EXPECT_LE(UlpDistance(masked.v[3], std::exp(-95.0f)), 2);
  const Vec4 t = Call<Vec4, Vec4>(tanh, in);
  EXPECT_EQ(t.v[0], 0.0f);
  EXPECT_LE(UlpDistance(t.v[1], std::tanh(1.0f)), 3);
  EXPECT_LE(UlpDistance(t.v[2], std::tanh(-2.0f)), 3);
  EXPECT_EQ(t.v[3], 1.0f);
}

TEST(LlvmMathTest, BFloat16ToFloatShiftsTheBitsUp) {
  Compiled widen = Compile(
      [](llvm::IRBuilderBase& b) -> llvm::Type* { return b.getBFloatTy(); },
      [](llvm::IRBuilderBase& b, llvm::Value* x) {
        return EmitReducedToFloat(b, x, DType::kBFloat16);
      });
  ASSERT_NE(widen.address, nullptr);
  EXPECT_EQ(CallHF(widen, 0x3FC0), 1.5f);
  EXPECT_EQ(CallHF(widen, 0xC000), -2.0f);
  EXPECT_EQ(Bits(CallHF(widen, 0x8000)), 0x80000000u);
  EXPECT_EQ(CallHF(widen, 0x7F80), INFINITY);
  // A NaN keeps its payload bits.
  EXPECT_EQ(Bits(CallHF(widen, 0x7FC1)), 0x7FC10000u);
}

TEST(LlvmMathTest, FloatToBFloat16RoundsToNearestEvenAndKeepsNanQuiet) {
  Compiled narrow =
      Compile(FloatType, [](llvm::IRBuilderBase& b, llvm::Value* x) {
        return EmitFloatToReduced(b, x, DType::kBFloat16);
      });
  ASSERT_NE(narrow.address, nullptr);
  auto to_bf16 = [&](uint32_t bits) { return CallFH(narrow, FromBits(bits)); };
  EXPECT_EQ(to_bf16(0x3F800000), 0x3F80);  // 1.0 exactly
  EXPECT_EQ(to_bf16(0x3F807FFF), 0x3F80);  // below the half: down
  EXPECT_EQ(to_bf16(0x3F808001), 0x3F81);  // above the half: up
  EXPECT_EQ(to_bf16(0x3F808000), 0x3F80);  // tie, even below: down
  EXPECT_EQ(to_bf16(0x3F818000), 0x3F82);  // tie, odd below: up to even
  EXPECT_EQ(to_bf16(0xBF818000), 0xBF82);  // the same for negatives
  EXPECT_EQ(to_bf16(0x7F7FFFFF), 0x7F80);  // the largest float rounds to inf
  EXPECT_EQ(to_bf16(0xFF800000), 0xFF80);  // -inf stays -inf
  // NaNs stay NaN (rounding up would carry a low payload into inf or into
  // the sign) and come out quiet.
  EXPECT_EQ(to_bf16(0x7F800001), 0x7FC0);
  EXPECT_EQ(to_bf16(0x7FFFFFFF), 0x7FFF);
  EXPECT_EQ(to_bf16(0xFF800001), 0xFFC0);
}

TEST(LlvmMathTest, Float16ConvertsBothWaysAsIeeeHalf) {
  Compiled narrow =
      Compile(FloatType, [](llvm::IRBuilderBase& b, llvm::Value* x) {
        return EmitFloatToReduced(b, x, DType::kFloat16);
      });
  Compiled widen = Compile(
      [](llvm::IRBuilderBase& b) -> llvm::Type* { return b.getHalfTy(); },
      [](llvm::IRBuilderBase& b, llvm::Value* x) {
        return EmitReducedToFloat(b, x, DType::kFloat16);
      });
  ASSERT_NE(narrow.address, nullptr);
  ASSERT_NE(widen.address, nullptr);
  EXPECT_EQ(CallFH(narrow, 1.0f), 0x3C00);
  EXPECT_EQ(CallFH(narrow, -2.5f), 0xC100);
  EXPECT_EQ(CallFH(narrow, 65504.0f), 0x7BFF);  // the largest
  // Halfway between 65504 and 65536: ties to even, which is inf.
  EXPECT_EQ(CallFH(narrow, 65520.0f), 0x7C00);
  EXPECT_EQ(CallHF(widen, 0x3C00), 1.0f);
  EXPECT_EQ(CallHF(widen, 0xC100), -2.5f);
  EXPECT_EQ(CallHF(widen, 0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(CallHF(widen, 0xFC00), -INFINITY);
}

}  // namespace
}  // namespace guardjit
