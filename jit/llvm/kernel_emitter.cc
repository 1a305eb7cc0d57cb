#include "jit/llvm/kernel_emitter.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/status_macros.h"
#include "llvm/IR/Intrinsics.h"

namespace guardjit {
namespace codegen_internal {

void KernelEmitter::AddTerms(const IndexExpr& e,
                             std::vector<const IndexExpr*>* out) {
  if (e.kind() == IndexExpr::Kind::kAdd) {
    AddTerms(e.lhs(), out);
    AddTerms(e.rhs(), out);
  } else {
    out->push_back(&e);
  }
}

int KernelEmitter::Depth(const IndexExpr& e) const {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
    case IndexExpr::Kind::kSize:
      return 0;
    case IndexExpr::Kind::kVar: {
      auto it = var_depth_.find(e.id());
      return it == var_depth_.end() ? 0 : it->second;
    }
    default:
      return std::max(Depth(e.lhs()), Depth(e.rhs()));
  }
}

llvm::Value* KernelEmitter::Index(const IndexExpr& e) {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
      return b_.getInt64(e.value());
    case IndexExpr::Kind::kVar:
      return vars_.at(e.id());
    case IndexExpr::Kind::kSize:
      return sizes_[e.id()];
    // Operands emitted into locals first, left to right: as call arguments
    // their order would be the host compiler's (g++ and clang differ), and
    // so would the generated IR (tests/jit/golden).
    case IndexExpr::Kind::kAdd: {
      // A sum in loop order: the terms of outer loops (and loop-invariant
      // ones) first, the innermost loop's last, each sum of the terms before
      // it invariant in the loops inside. However the index was built (a
      // load's ((i1*4096 + i2*64) + i3), a store's (i1*4096 + (i2*64 +
      // i3))), the vectorizer then sees a base plus the induction variable.
      // Built the other way, InstCombine rewrote the inner sum to an `or`
      // (the terms' bits do not overlap) and LLVM 19 lost the fact that it
      // is an add on the way: the loop's loads and stores became gathers and
      // scatters (a causal softmax ran 4x slower than a plain one).
      std::vector<const IndexExpr*> terms;
      AddTerms(e, &terms);
      // Terms no loop changes (constants, sizes, variables fixed to a
      // constant) last: `i + -1`, as LLVM writes it.
      const auto order = [&](const IndexExpr* t) {
        const int depth = Depth(*t);
        return depth == 0 ? std::numeric_limits<int>::max() : depth;
      };
      std::stable_sort(terms.begin(), terms.end(),
                       [&](const IndexExpr* a, const IndexExpr* b) {
                         return order(a) < order(b);
                       });
      llvm::Value* sum = Index(*terms[0]);
      for (size_t t = 1; t < terms.size(); ++t) {
        sum = b_.CreateNSWAdd(sum, Index(*terms[t]));
      }
      return sum;
    }
    case IndexExpr::Kind::kMul: {
      llvm::Value* a = Index(e.lhs());
      return b_.CreateNSWMul(a, Index(e.rhs()));
    }
    case IndexExpr::Kind::kFloorDiv: {
      // Kernel indices are non-negative, where C division floors.
      llvm::Value* a = Index(e.lhs());
      return b_.CreateSDiv(a, Index(e.rhs()));
    }
    case IndexExpr::Kind::kMod: {
      llvm::Value* a = Index(e.lhs());
      return b_.CreateSRem(a, Index(e.rhs()));
    }
    case IndexExpr::Kind::kMax:
    case IndexExpr::Kind::kMin: {
      llvm::Value* a = Index(e.lhs());
      llvm::Value* c = Index(e.rhs());
      return b_.CreateBinaryIntrinsic(e.kind() == IndexExpr::Kind::kMax
                                          ? llvm::Intrinsic::smax
                                          : llvm::Intrinsic::smin,
                                      a, c);
    }
  }
  return nullptr;
}

absl::StatusOr<llvm::Value*> KernelEmitter::Value(const ValueExpr& e) {
  auto it = memo_.find(e.id());
  if (it != memo_.end()) return it->second;
  llvm::Value* v = nullptr;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad: {
      llvm::Type* mem = MemTypeOf(e.dtype());
      llvm::Value* ptr =
          b_.CreateInBoundsGEP(mem, buffers_[e.buffer()], Index(e.index()));
      v = b_.CreateLoad(mem, ptr);
      if (e.dtype() == DType::kBool) v = b_.CreateICmpNE(v, b_.getInt8(0));
      break;
    }
    case ValueExpr::Kind::kConst:
      v = e.is_int_const()
              ? llvm::ConstantInt::get(TypeOf(e.dtype()), e.int_value(), true)
              : FConst(TypeOf(e.dtype()), e.float_value());
      break;
    case ValueExpr::Kind::kLocal:
      if (e.local() < 0 || e.local() >= static_cast<int>(locals_.size())) {
        return absl::InternalError("local read before its reduction");
      }
      v = locals_[e.local()];
      break;
    case ValueExpr::Kind::kUnary: {
      ASSIGN_OR_RETURN(llvm::Value * x, Value(e.operand(0)));
      ASSIGN_OR_RETURN(v, EmitUnary(b_, e.unary_op(), e.operand(0).dtype(), x));
      break;
    }
    case ValueExpr::Kind::kBinary: {
      ASSIGN_OR_RETURN(llvm::Value * a, Value(e.operand(0)));
      ASSIGN_OR_RETURN(llvm::Value * c, Value(e.operand(1)));
      ASSIGN_OR_RETURN(
          v, EmitBinary(b_, e.binary_op(), e.operand(0).dtype(), a, c));
      break;
    }
    case ValueExpr::Kind::kWhere: {
      ASSIGN_OR_RETURN(llvm::Value * cond, Value(e.operand(0)));
      ASSIGN_OR_RETURN(llvm::Value * a, Value(e.operand(1)));
      ASSIGN_OR_RETURN(llvm::Value * c, Value(e.operand(2)));
      v = b_.CreateSelect(cond, a, c);
      break;
    }
    case ValueExpr::Kind::kCast: {
      ASSIGN_OR_RETURN(llvm::Value * x, Value(e.operand(0)));
      v = EmitCast(b_, x, e.operand(0).dtype(), e.dtype());
      break;
    }
    case ValueExpr::Kind::kIndex:
      v = Index(e.index());
      break;
    case ValueExpr::Kind::kGather:
      ASSIGN_OR_RETURN(v, Gather(e));
      break;
  }
  memo_[e.id()] = v;
  return v;
}

// An index outside [0, bound) (negative ones are huge unsigned) sets the
// check's bit and reads a zero from a constant instead of the buffer, so
// nothing out of bounds is touched, even when the dim is empty.
absl::StatusOr<llvm::Value*> KernelEmitter::Gather(const ValueExpr& e) {
  ASSIGN_OR_RETURN(llvm::Value * index, Value(e.operand(0)));
  if (faults_ == nullptr || !index->getType()->isIntegerTy(64)) {
    return absl::InternalError(
        "gather in a kernel without index checks, or of a non-int64 index");
  }
  llvm::Type* mem = MemTypeOf(e.dtype());
  llvm::Value* in_range = b_.CreateICmpULT(index, Index(e.bound()));
  llvm::Value* base = Index(e.index());
  llvm::Value* safe_index = b_.CreateSelect(in_range, index, b_.getInt64(0));
  llvm::Value* offset =
      b_.CreateNSWAdd(base, b_.CreateNSWMul(safe_index, Index(e.stride())));
  if (zeros_ == nullptr) {
    auto* type = llvm::ArrayType::get(b_.getInt64Ty(), 1);
    zeros_ = new llvm::GlobalVariable(*m_, type, /*isConstant=*/true,
                                      llvm::GlobalValue::PrivateLinkage,
                                      llvm::ConstantAggregateZero::get(type));
    zeros_->setAlignment(llvm::Align(8));
  }
  llvm::Value* ptr = b_.CreateSelect(
      in_range, b_.CreateInBoundsGEP(mem, buffers_[e.buffer()], offset),
      zeros_);
  llvm::Value* v = b_.CreateLoad(mem, ptr);
  if (e.dtype() == DType::kBool) v = b_.CreateICmpNE(v, b_.getInt8(0));
  const int bit = std::min(e.check(), 63);
  llvm::Value* faults = b_.CreateLoad(b_.getInt64Ty(), faults_);
  llvm::Value* fault = b_.CreateSelect(in_range, b_.getInt64(0),
                                       b_.getInt64(uint64_t{1} << bit));
  b_.CreateStore(b_.CreateOr(faults, fault), faults_);
  return v;
}

absl::Status KernelEmitter::Loop(int var, llvm::Value* begin, llvm::Value* end,
                                 const std::function<absl::Status()>& body) {
  llvm::Value* iv = Alloca(b_.getInt64Ty());
  b_.CreateStore(begin, iv);
  auto* header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  auto* inside = llvm::BasicBlock::Create(ctx_, "body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::Value* i = b_.CreateLoad(b_.getInt64Ty(), iv);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), inside, exit);
  b_.SetInsertPoint(inside);
  vars_[var] = i;
  var_depth_[var] = ++depth_;
  absl::Status status = body();
  --depth_;
  RETURN_IF_ERROR(status);
  b_.CreateStore(
      b_.CreateNSWAdd(b_.CreateLoad(b_.getInt64Ty(), iv), b_.getInt64(1)), iv);
  llvm::BranchInst* latch = b_.CreateBr(header);
  if (no_unroll_) {
    // Fully unrolled reductions keep two accumulators and spill every load;
    // left rolled, the vectorizer keeps partial accumulators instead. Unroll
    // disabled also disables interleaving, so its count is given explicitly:
    // two vectors in flight hide the accumulator's add/max latency.
    llvm::MDNode* disable = llvm::MDNode::get(
        ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
    llvm::MDNode* interleave = llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
               llvm::ConstantAsMetadata::get(b_.getInt32(kInterleave))});
    llvm::MDNode* id =
        llvm::MDNode::getDistinct(ctx_, {nullptr, disable, interleave});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  } else if (auto* trip = llvm::dyn_cast<llvm::ConstantInt>(end);
             trip != nullptr && trip->getSExtValue() <= kMaxUnrolledTrip) {
    // A short constant loop is fully unrolled at O3, and under the host's
    // cost model the SLP vectorizer and load elimination then spend 4x the
    // compile time on the unrolled body (a 4x16 GEMM epilogue: 150 ms); the
    // loop vectorizer covers it as well rolled.
    llvm::MDNode* disable = llvm::MDNode::get(
        ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, {nullptr, disable});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

std::optional<int64_t> ConstantVolume(const std::vector<LoopRange>& loops) {
  int64_t volume = 1;
  for (const LoopRange& loop : loops) {
    if (!loop.extent.is_const() || loop.extent.value() < 0) {
      return std::nullopt;
    }
    volume *= loop.extent.value();
    if (volume > (int64_t{1} << 20)) return std::nullopt;
  }
  return volume;
}

absl::Status KernelEmitter::Inline(const std::vector<LoopRange>& loops,
                                   size_t first,
                                   const std::function<absl::Status()>& body) {
  if (first == loops.size()) return body();
  for (int64_t i = 0; i < loops[first].extent.value(); ++i) {
    vars_[loops[first].var] = b_.getInt64(i);
    var_depth_[loops[first].var] = 0;
    RETURN_IF_ERROR(Inline(loops, first + 1, body));
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::Loops(const std::vector<LoopRange>& loops,
                                  size_t first,
                                  const std::function<absl::Status()>& body) {
  if (first == loops.size()) return body();
  return Loop(loops[first].var, b_.getInt64(0), Index(loops[first].extent),
              [&] { return Loops(loops, first + 1, body); });
}

}  // namespace codegen_internal
}  // namespace guardjit
