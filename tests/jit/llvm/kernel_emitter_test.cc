#include "jit/llvm/kernel_emitter.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "jit/llvm/kernel_compiler.h"
#include "jit/llvm/llvm_codegen.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

// Values, indices and loops of a kernel (kernel_emitter.cc), through
// EmitKernel: gathers' checks, the loop metadata that keeps short and
// reduction loops rolled, and reductions emitted step by step.

namespace guardjit {
namespace {

using E = IndexExpr;
using codegen_internal::ConstantVolume;

// The kernel's LLVM IR as emitted, before any pass.
std::string EmittedIr(const Kernel& k) {
  llvm::LLVMContext context;
  llvm::Module module("m", context);
  const absl::Status emitted = EmitKernel(k, "k", &module);
  EXPECT_TRUE(emitted.ok()) << emitted;
  std::string ir;
  llvm::raw_string_ostream os(ir);
  module.print(os, nullptr);
  return ir;
}

int Occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// out[i] = table[ids[i]] over s0 ids, a table of `rows` floats; the
// gather's check is number `check` of `checks`.
Kernel Lookup(int64_t rows, int check, int checks) {
  Kernel k;
  k.buffers = {{"in0", DType::kInt64, false},
               {"in1", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 1;
  k.outer = {{0, E::Size(0)}};
  Stage store;
  store.buffer = 2;
  store.index = E::Var(0);
  store.value = ValueExpr::Gather(1, DType::kFloat32, E::Const(0),
                                  ValueExpr::Load(0, DType::kInt64, E::Var(0)),
                                  E::Const(1), E::Const(rows), check);
  k.stages = {store};
  k.num_checks = checks;
  return k;
}

TEST(KernelEmitterTest, GathersOutOfRangeReadZeroAndSetTheirCheckBit) {
  auto compiler = KernelCompiler::Create();
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const std::vector<float> table = {10, 11, 12, 13};
  for (const auto& [check, bit] :
       std::vector<std::pair<int, int>>{{0, 0}, {5, 5}, {69, 63}}) {
    SCOPED_TRACE(check);
    Kernel k = Lookup(4, check, check + 1);
    auto fns = (*compiler)->Compile({&k});
    ASSERT_TRUE(fns.ok()) << fns.status();
    std::vector<int64_t> ids = {3, 0, 2};
    std::vector<float> out(3, -1);
    const int64_t n = static_cast<int64_t>(ids.size());
    void* buffers[] = {ids.data(), const_cast<float*>(table.data()),
                       out.data()};
    EXPECT_EQ((*fns)[0](buffers, &n, 0, n), 0);
    EXPECT_EQ(out, (std::vector<float>{13, 10, 12}));
    // Past the end and negative (a huge unsigned index): zero read from a
    // constant, never from the table, and the check's bit set.
    ids = {4, 1, -1};
    EXPECT_EQ((*fns)[0](buffers, &n, 0, n), int64_t(uint64_t{1} << bit));
    EXPECT_EQ(out, (std::vector<float>{0, 11, 0}));
    // A range of the outer loop reads only its ids.
    EXPECT_EQ((*fns)[0](buffers, &n, 1, 2), 0);
  }
}

// out[i] = max of in[i, j] over j < extent (s0 rows).
Kernel RowMaxes(const E& extent) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 2;
  k.outer = {{0, E::Size(0)}};
  Stage sum;
  sum.kind = Stage::Kind::kReduce;
  sum.combine = CombineOp::kMax;
  sum.loops = {{1, extent}};
  sum.value =
      ValueExpr::Load(0, DType::kFloat32, E::Var(0) * extent + E::Var(1));
  sum.local = 0;
  Stage store;
  store.buffer = 1;
  store.index = E::Var(0);
  store.value = ValueExpr::Local(0, DType::kFloat32);
  k.stages = {sum, store};
  k.num_locals = 1;
  return k;
}

TEST(KernelEmitterTest, ReductionLoopsStayRolledWithTwoVectorsInFlight) {
  // A reduction over a size: a rolled loop with an interleave count (a
  // float sum's loops too, in blocks: EmitStage).
  const std::string loop = EmittedIr(RowMaxes(E::Size(1)));
  EXPECT_EQ(Occurrences(loop, "!\"llvm.loop.interleave.count\", i32 2"), 1)
      << loop;
  EXPECT_GE(Occurrences(loop, "llvm.loop.unroll.disable"), 1);
  // A window of four constant steps (a pooling window): emitted step by
  // step, no loop at all (the loop around it is then innermost for the
  // vectorizer).
  const std::string inlined = EmittedIr(RowMaxes(E::Const(4)));
  EXPECT_EQ(Occurrences(inlined, "llvm.loop"), 0) << inlined;
  EXPECT_EQ(Occurrences(inlined, "@llvm.maxnum.f32(float %"), 4) << inlined;
}

// out[i, j] = in[i, j] * 2 over j < extent.
Kernel Scale(const E& extent) {
  Kernel k;
  k.buffers = {{"in0", DType::kFloat32, false},
               {"out0", DType::kFloat32, true}};
  k.num_size_params = 1;
  k.outer = {{0, E::Size(0)}};
  Stage store;
  store.loops = {{1, extent}};
  store.buffer = 1;
  store.index = E::Var(0) * extent + E::Var(1);
  store.value = ValueExpr::Binary(
      BinaryOp::kMul, ValueExpr::Load(0, DType::kFloat32, store.index),
      ValueExpr::Const(DType::kFloat32, 2.0));
  k.stages = {store};
  return k;
}

TEST(KernelEmitterTest, ShortConstantLoopsAreKeptRolled) {
  // At most 64 constant iterations: unrolling disabled (the SLP vectorizer
  // spent 4x the compile time on such bodies); longer or sized loops are
  // left to O3.
  EXPECT_EQ(
      Occurrences(EmittedIr(Scale(E::Const(64))), "llvm.loop.unroll.disable"),
      1);
  EXPECT_EQ(
      Occurrences(EmittedIr(Scale(E::Const(65))), "llvm.loop.unroll.disable"),
      0);
  EXPECT_EQ(
      Occurrences(EmittedIr(Scale(E::Size(0))), "llvm.loop.unroll.disable"), 0);
}

TEST(KernelEmitterTest, ConstantVolumeOfLoops) {
  EXPECT_EQ(ConstantVolume({}), 1);
  EXPECT_EQ(ConstantVolume({{0, E::Const(3)}, {1, E::Const(5)}}), 15);
  EXPECT_EQ(ConstantVolume({{0, E::Const(3)}, {1, E::Const(0)}}), 0);
  EXPECT_EQ(ConstantVolume({{0, E::Const(3)}, {1, E::Size(0)}}), std::nullopt);
  // Past 2^20 steps: not one to emit step by step.
  EXPECT_EQ(ConstantVolume({{0, E::Const(1 << 10)}, {1, E::Const(1 << 10)}}),
            int64_t{1} << 20);
  EXPECT_EQ(ConstantVolume({{0, E::Const(1 << 10)}, {1, E::Const(1025)}}),
            std::nullopt);
}

}  // namespace
}  // namespace guardjit
