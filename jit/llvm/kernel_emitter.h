#ifndef GUARDJIT_JIT_LLVM_KERNEL_EMITTER_H_
#define GUARDJIT_JIT_LLVM_KERNEL_EMITTER_H_

// Internal to the CPU backend's code generation (llvm_codegen.h's EmitKernel):
// the emitter of one loop-IR kernel as an LLVM function. Its values, indices
// and loops are emitted in kernel_emitter.cc; its stages (stores, reductions,
// column mode) and the function around them in llvm_codegen.cc.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "jit/llvm/llvm_element_ops.h"
#include "jit/lowering/loop_ir.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace guardjit {
namespace codegen_internal {

// Vectors a reduction loop keeps in flight (llvm.loop.interleave.count).
constexpr int kInterleave = 2;
// Floating sums add blocks of this many inner iterations in float, then the
// blocks in double (EmitStage); the block loop's variable id.
constexpr int64_t kSumBlock = 2048;
constexpr int kSumBlockVar = -1;
// Loops of at most this many constant iterations are kept rolled.
constexpr int64_t kMaxUnrolledTrip = 64;
// Reductions of at most this many constant steps (a pooling window) are
// emitted step by step: the loop around them (channels, in a channels-last
// pool) is then an innermost loop the vectorizer takes, where a rolled
// 2x2 window was a scalar loop of two inside it.
constexpr int64_t kMaxInlineReduction = 16;

// The product of `loops`' extents when all are constant and the product is
// at most 2^20 (a reduction small enough to emit step by step), else none.
std::optional<int64_t> ConstantVolume(const std::vector<LoopRange>& loops);

class KernelEmitter {
 public:
  KernelEmitter(const Kernel& kernel, llvm::Module* module)
      : k_(kernel), m_(module), ctx_(module->getContext()), b_(ctx_) {}

  absl::Status Emit(const std::string& name);

 private:
  llvm::Type* TypeOf(DType d) { return LlvmType(b_, d); }
  llvm::Type* MemTypeOf(DType d) { return LlvmMemType(b_, d); }

  llvm::Value* Index(const IndexExpr& e);
  // The terms of a sum, left to right, through nested sums.
  static void AddTerms(const IndexExpr& e, std::vector<const IndexExpr*>* out);
  // How deep in the loop nest the innermost loop variable `e` reads is
  // (0: none, or only variables fixed to constants).
  int Depth(const IndexExpr& e) const;
  absl::StatusOr<llvm::Value*> Value(const ValueExpr& e);
  absl::StatusOr<llvm::Value*> Gather(const ValueExpr& e);
  llvm::Value* FConst(llvm::Type* t, double v) {
    return llvm::ConstantFP::get(t, v);
  }
  llvm::Value* Alloca(llvm::Type* t) {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(),
                            fn_->getEntryBlock().begin());
    return entry.CreateAlloca(t);
  }
  // Emits for (var = begin; var < end; ++var) body().
  absl::Status Loop(int var, llvm::Value* begin, llvm::Value* end,
                    const std::function<absl::Status()>& body);
  absl::Status Loops(const std::vector<LoopRange>& loops, size_t first,
                     const std::function<absl::Status()>& body);
  // `body` once per point of `loops` (constant extents), the loop
  // variables constants: no loop is emitted.
  absl::Status Inline(const std::vector<LoopRange>& loops, size_t first,
                      const std::function<absl::Status()>& body);
  absl::Status EmitStages();
  absl::Status EmitStage(const Stage& stage);
  absl::Status EmitArgReduction(const Stage& stage);
  // Column mode (ColumnReductions): the last outer loop innermost in every
  // stage, each local an array over it.
  absl::Status EmitColumnStages();

  const Kernel& k_;
  llvm::Module* m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> buffers_;
  std::vector<llvm::Value*> sizes_;
  absl::flat_hash_map<int, llvm::Value*> vars_;
  absl::flat_hash_map<int, int> var_depth_;  // see Depth
  int depth_ = 0;  // loops around the code being emitted
  std::vector<llvm::Value*> locals_;
  absl::flat_hash_map<const void*, llvm::Value*> memo_;
  // The failed-check mask the kernel returns: OR-ed per gather, promoted to
  // a loop-carried value (an or-reduction the vectorizer keeps in vectors).
  llvm::Value* faults_ = nullptr;
  llvm::GlobalVariable* zeros_ = nullptr;  // what a failed gather reads
  bool no_unroll_ = false;  // set while emitting a reduction's loops
};

}  // namespace codegen_internal
}  // namespace guardjit

#endif  // GUARDJIT_JIT_LLVM_KERNEL_EMITTER_H_
