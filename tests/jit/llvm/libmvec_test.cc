// Checks jit/llvm/libmvec.h: libmvec loads once and its variants resolve in
// the process; AddLibmvecFunctions maps the scalar libm names and LLVM
// intrinsics to the SSE variants on any x86-64 and adds the AVX2 ones only
// for a target with AVX2.

#include "jit/llvm/libmvec.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "jit/llvm/orc_jit.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Target/TargetOptions.h"

namespace guardjit {
namespace {

constexpr char kTriple[] = "x86_64-pc-linux-gnu";

// The variant names below are x86-64's vector ABI; elsewhere the library
// adds none (and x86 is not the JIT's registered target).
#if defined(__x86_64__)
constexpr bool kX86_64 = true;
#else
constexpr bool kX86_64 = false;
#endif

// An x86-64 TargetMachine for `cpu` with `features` ("+avx2" or "").
std::unique_ptr<llvm::TargetMachine> X86Machine(const std::string& cpu,
                                                const std::string& features) {
  // OrcJit::Create initializes the native target, which registers x86.
  EXPECT_TRUE(OrcJit::Create().ok());
  std::string error;
  const llvm::Target* target =
      llvm::TargetRegistry::lookupTarget(kTriple, error);
  EXPECT_NE(target, nullptr) << error;
  if (target == nullptr) return nullptr;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      kTriple, cpu, features, llvm::TargetOptions(), std::nullopt));
}

std::string Vectorized(const llvm::TargetLibraryInfoImpl& tlii,
                       const char* scalar, int lanes) {
  return tlii
      .getVectorizedFunction(scalar, llvm::ElementCount::getFixed(lanes),
                             /*Masked=*/false)
      .str();
}

TEST(LibmvecTest, LoadsOnceAndItsVariantsResolve) {
  const bool loaded = LoadLibmvec();
  EXPECT_EQ(LoadLibmvec(), loaded);
  if (!kX86_64 || !loaded) GTEST_SKIP() << "no x86-64 libmvec here";
  EXPECT_NE(llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("_ZGVbN2v_log"),
            nullptr);
  EXPECT_NE(
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol("_ZGVbN4v_sinf"),
      nullptr);
}

TEST(LibmvecTest, SseTargetGetsTheSseVariantsOfFunctionsAndIntrinsics) {
  if (!kX86_64 || !LoadLibmvec()) GTEST_SKIP() << "no x86-64 libmvec here";
  auto machine = X86Machine("x86-64", "");
  ASSERT_NE(machine, nullptr);
  llvm::TargetLibraryInfoImpl tlii(machine->getTargetTriple());
  const int added = AddLibmvecFunctions(*machine, tlii);
  // 8 functions in float32 and float64; the 5 with an intrinsic twice. An
  // older libmvec may lack some.
  EXPECT_GT(added, 0);
  EXPECT_LE(added, 2 * (8 + 5));
  EXPECT_EQ(Vectorized(tlii, "log", 2), "_ZGVbN2v_log");
  EXPECT_EQ(Vectorized(tlii, "logf", 4), "_ZGVbN4v_logf");
  EXPECT_EQ(Vectorized(tlii, "llvm.log.f64", 2), "_ZGVbN2v_log");
  EXPECT_EQ(Vectorized(tlii, "llvm.sin.f32", 4), "_ZGVbN4v_sinf");
  EXPECT_EQ(Vectorized(tlii, "pow", 2), "_ZGVbN2vv_pow");
  EXPECT_EQ(Vectorized(tlii, "tanhf", 4), "_ZGVbN4v_tanhf");
  // tanh, erf and log1p have no intrinsic; no AVX2 widths without AVX2.
  EXPECT_EQ(Vectorized(tlii, "llvm.tanh.f32", 4), "");
  EXPECT_EQ(Vectorized(tlii, "log", 4), "");
  EXPECT_EQ(Vectorized(tlii, "logf", 8), "");
  // Functions outside the table are not mapped.
  EXPECT_EQ(Vectorized(tlii, "atan2", 2), "");
}

TEST(LibmvecTest, Avx2TargetAlsoGetsTheYmmVariants) {
  if (!kX86_64 || !LoadLibmvec()) GTEST_SKIP() << "no x86-64 libmvec here";
  auto sse = X86Machine("x86-64", "");
  auto avx2 = X86Machine("haswell", "+avx2");
  ASSERT_NE(sse, nullptr);
  ASSERT_NE(avx2, nullptr);
  llvm::TargetLibraryInfoImpl sse_tlii(sse->getTargetTriple());
  llvm::TargetLibraryInfoImpl avx2_tlii(avx2->getTargetTriple());
  const int sse_added = AddLibmvecFunctions(*sse, sse_tlii);
  const int avx2_added = AddLibmvecFunctions(*avx2, avx2_tlii);
  EXPECT_GT(avx2_added, sse_added);
  EXPECT_EQ(Vectorized(avx2_tlii, "log", 2), "_ZGVbN2v_log");
  EXPECT_EQ(Vectorized(avx2_tlii, "log", 4), "_ZGVdN4v_log");
  EXPECT_EQ(Vectorized(avx2_tlii, "llvm.cos.f32", 8), "_ZGVdN8v_cosf");
  EXPECT_EQ(Vectorized(avx2_tlii, "erff", 8), "_ZGVdN8v_erff");
}

TEST(LibmvecTest, CountsOneMappingPerNameAndExportedVariant) {
  if (!kX86_64 || !LoadLibmvec()) GTEST_SKIP() << "no x86-64 libmvec here";
  auto machine = X86Machine("haswell", "+avx2");
  ASSERT_NE(machine, nullptr);
  // Each exported variant maps its libm name, and the intrinsic's name too
  // for log, sin, cos, exp and pow.
  struct Variant {
    const char* name;
    int names;
  };
  constexpr Variant kVariants[] = {
      {"_ZGVbN4v_logf", 2},  {"_ZGVbN2v_log", 2},    {"_ZGVbN4v_sinf", 2},
      {"_ZGVbN2v_sin", 2},   {"_ZGVbN4v_cosf", 2},   {"_ZGVbN2v_cos", 2},
      {"_ZGVbN4v_expf", 2},  {"_ZGVbN2v_exp", 2},    {"_ZGVbN4vv_powf", 2},
      {"_ZGVbN2vv_pow", 2},  {"_ZGVbN4v_log1pf", 1}, {"_ZGVbN2v_log1p", 1},
      {"_ZGVbN4v_tanhf", 1}, {"_ZGVbN2v_tanh", 1},   {"_ZGVbN4v_erff", 1},
      {"_ZGVbN2v_erf", 1},   {"_ZGVdN8v_logf", 2},   {"_ZGVdN4v_log", 2},
      {"_ZGVdN8v_sinf", 2},  {"_ZGVdN4v_sin", 2},    {"_ZGVdN8v_cosf", 2},
      {"_ZGVdN4v_cos", 2},   {"_ZGVdN8v_expf", 2},   {"_ZGVdN4v_exp", 2},
      {"_ZGVdN8vv_powf", 2}, {"_ZGVdN4vv_pow", 2},   {"_ZGVdN8v_log1pf", 1},
      {"_ZGVdN4v_log1p", 1}, {"_ZGVdN8v_tanhf", 1},  {"_ZGVdN4v_tanh", 1},
      {"_ZGVdN8v_erff", 1},  {"_ZGVdN4v_erf", 1},
  };
  int expected = 0;
  for (const Variant& v : kVariants) {
    if (llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(v.name) !=
        nullptr) {
      expected += v.names;
    }
  }
  llvm::TargetLibraryInfoImpl first(machine->getTargetTriple());
  EXPECT_EQ(AddLibmvecFunctions(*machine, first), expected);
  // The table is built once; a second call adds the same mappings again.
  llvm::TargetLibraryInfoImpl second(machine->getTargetTriple());
  EXPECT_EQ(AddLibmvecFunctions(*machine, second), expected);
  EXPECT_EQ(Vectorized(second, "llvm.exp.f64", 4), "_ZGVdN4v_exp");
}

}  // namespace
}  // namespace guardjit
