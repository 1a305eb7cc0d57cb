#include "jit/llvm/llvm_codegen.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "jit/llvm/column_reductions.h"
#include "jit/llvm/kernel_emitter.h"
#include "jit/llvm/llvm_element_ops.h"
#include "jit/llvm/packed_gemm_codegen.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace guardjit {
namespace codegen_internal {

absl::Status KernelEmitter::EmitStage(const Stage& stage) {
  memo_.clear();
  if (stage.kind == Stage::Kind::kStore) {
    return Loops(stage.loops, 0, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(llvm::Value * v, Value(stage.value));
      const DType d = k_.buffers[stage.buffer].dtype;
      if (d == DType::kBool) v = b_.CreateZExt(v, b_.getInt8Ty());
      llvm::Value* ptr = b_.CreateInBoundsGEP(
          MemTypeOf(d), buffers_[stage.buffer], Index(stage.index));
      b_.CreateStore(v, ptr);
      memo_.clear();
      return absl::OkStatus();
    });
  }
  const DType d = stage.value.dtype();
  llvm::Type* t = TypeOf(d);
  const bool fp = IsFloating(d);
  if (stage.combine == CombineOp::kArgMax ||
      stage.combine == CombineOp::kArgMin) {
    return EmitArgReduction(stage);
  }
  llvm::Value* init = nullptr;
  switch (stage.combine) {
    case CombineOp::kSum:
      init = llvm::Constant::getNullValue(t);
      break;
    case CombineOp::kProd:
      init = fp ? FConst(t, 1.0) : llvm::ConstantInt::get(t, 1);
      break;
    case CombineOp::kMax:
      init =
          fp ? FConst(t, -INFINITY)
          : IsUnsignedInt(d)
              ? llvm::ConstantInt::get(t, 0)
              : llvm::ConstantInt::get(
                    t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
      break;
    case CombineOp::kArgMax:
    case CombineOp::kArgMin:
    case CombineOp::kMin:
      init =
          fp ? FConst(t, INFINITY)
          : IsUnsignedInt(d)
              ? llvm::ConstantInt::get(
                    t, llvm::APInt::getMaxValue(t->getIntegerBitWidth()))
              : llvm::ConstantInt::get(
                    t, llvm::APInt::getSignedMaxValue(t->getIntegerBitWidth()));
      break;
  }
  // Floating sums are blocked: the innermost loop is cut into blocks of
  // kSumBlock iterations, each summed in a float accumulator (vectorized: 16
  // partial lanes with AVX2 and interleave 2), and the blocks' partial sums
  // are added in double, rounded once at the end. A float accumulator over a
  // whole reduction stops growing once the sum is 2^24 times its addends
  // (sum(ones[2^30]) gave 2^29); a double accumulator per element halves the
  // vector width (softmax 2.1 -> 3.4 ms). float16/bfloat16 accumulate in
  // float. Error bound (README "Numerics"): each lane adds at most kSumBlock /
  // 16 values, so |sum - exact| <= (kSumBlock / 16 + 1) * 2^-24 * sum|x|
  // + n/kSumBlock * 2^-53 * sum|x| + one rounding to the result dtype.
  const bool widen_sum = fp && stage.combine == CombineOp::kSum &&
                         !t->isDoubleTy() && !stage.loops.empty();
  llvm::Type* acc_t = widen_sum ? b_.getFloatTy() : t;
  if (widen_sum) init = llvm::Constant::getNullValue(acc_t);
  llvm::Value* total = nullptr;  // widen_sum: the blocks' sum, in double
  if (widen_sum) {
    total = Alloca(b_.getDoubleTy());
    b_.CreateStore(llvm::Constant::getNullValue(b_.getDoubleTy()), total);
  }
  llvm::Value* acc = Alloca(acc_t);
  b_.CreateStore(init, acc);
  // Floating max/min combine with maxnum/minnum under nnan nsz (a plain
  // vmaxps the vectorizer keeps in partial accumulators; llvm.maximum's NaN
  // and signed-zero handling is a serial blend chain) and track NaN on the
  // side: any NaN input makes the result NaN, as in eager amax/amin. The sign
  // of a zero result is unspecified.
  const bool fp_min_max = fp && (stage.combine == CombineOp::kMax ||
                                 stage.combine == CombineOp::kMin);
  // The flag ORs the bit patterns of the NaN inputs (never zero): an integer
  // as wide as the element keeps it one vandps/vorps per vector (an i1 flag
  // is packed to bytes every vector; a sign-extended compare is narrowed
  // back to one).
  llvm::Type* nan_flag_t = b_.getIntNTy(t->getPrimitiveSizeInBits());
  llvm::Value* saw_nan = nullptr;
  if (fp_min_max) {
    saw_nan = Alloca(nan_flag_t);
    b_.CreateStore(llvm::Constant::getNullValue(nan_flag_t), saw_nan);
  }
  no_unroll_ = true;
  auto element = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(llvm::Value * x, Value(stage.value));
    if (stage.buffer >= 0) {
      const DType bd = k_.buffers[stage.buffer].dtype;
      b_.CreateStore(bd == DType::kBool ? b_.CreateZExt(x, b_.getInt8Ty()) : x,
                     b_.CreateInBoundsGEP(MemTypeOf(bd), buffers_[stage.buffer],
                                          Index(stage.index)));
    }
    llvm::Value* a = b_.CreateLoad(acc_t, acc);
    if (x->getType() != acc_t) x = b_.CreateFPExt(x, acc_t);
    llvm::Value* r = nullptr;
    switch (stage.combine) {
      case CombineOp::kSum:
      case CombineOp::kProd: {
        const bool sum = stage.combine == CombineOp::kSum;
        if (fp) {
          // Reassociation lets the vectorizer keep partial accumulators.
          r = sum ? b_.CreateFAdd(a, x) : b_.CreateFMul(a, x);
          llvm::FastMathFlags flags;
          flags.setAllowReassoc();
          llvm::cast<llvm::Instruction>(r)->setFastMathFlags(flags);
        } else {
          r = sum ? b_.CreateAdd(a, x) : b_.CreateMul(a, x);
        }
        break;
      }
      case CombineOp::kArgMax:
      case CombineOp::kArgMin:
      case CombineOp::kMax:
      case CombineOp::kMin: {
        if (fp_min_max) {
          r = b_.CreateBinaryIntrinsic(stage.combine == CombineOp::kMax
                                           ? llvm::Intrinsic::maxnum
                                           : llvm::Intrinsic::minnum,
                                       a, x);
          if (auto* inst = llvm::dyn_cast<llvm::Instruction>(r)) {
            llvm::FastMathFlags flags;
            flags.setNoNaNs();
            flags.setNoSignedZeros();
            inst->setFastMathFlags(flags);
          }
          llvm::Value* seen = b_.CreateLoad(nan_flag_t, saw_nan);
          llvm::Value* is_nan = b_.CreateFCmpUNO(x, x);
          llvm::Value* bits = b_.CreateBitCast(x, nan_flag_t);
          llvm::Value* flag = b_.CreateSelect(
              is_nan, bits, b_.getIntN(nan_flag_t->getIntegerBitWidth(), 0));
          b_.CreateStore(b_.CreateOr(seen, flag), saw_nan);
          break;
        }
        ASSIGN_OR_RETURN(
            r, EmitBinary(b_,
                          stage.combine == CombineOp::kMax ? BinaryOp::kMaximum
                                                           : BinaryOp::kMinimum,
                          d, a, x));
        break;
      }
    }
    b_.CreateStore(r, acc);
    memo_.clear();
    return absl::OkStatus();
  };
  absl::Status status;
  if (std::optional<int64_t> steps = ConstantVolume(stage.loops);
      !widen_sum && steps.has_value() && *steps <= kMaxInlineReduction) {
    status = Inline(stage.loops, 0, element);
  } else if (!widen_sum) {
    status = Loops(stage.loops, 0, element);
  } else {
    const std::vector<LoopRange> outer(stage.loops.begin(),
                                       stage.loops.end() - 1);
    const LoopRange& inner = stage.loops.back();
    status = Loops(outer, 0, [&]() -> absl::Status {
      llvm::Value* extent = Index(inner.extent);
      llvm::Value* blocks =
          b_.CreateSDiv(b_.CreateNSWAdd(extent, b_.getInt64(kSumBlock - 1)),
                        b_.getInt64(kSumBlock));
      return Loop(kSumBlockVar, b_.getInt64(0), blocks, [&]() -> absl::Status {
        llvm::Value* begin =
            b_.CreateNSWMul(vars_.at(kSumBlockVar), b_.getInt64(kSumBlock));
        llvm::Value* end = b_.CreateBinaryIntrinsic(
            llvm::Intrinsic::smin,
            b_.CreateNSWAdd(begin, b_.getInt64(kSumBlock)), extent);
        b_.CreateStore(init, acc);
        RETURN_IF_ERROR(Loop(inner.var, begin, end, element));
        llvm::Value* sum = b_.CreateLoad(b_.getDoubleTy(), total);
        llvm::Value* block = b_.CreateLoad(acc_t, acc);
        b_.CreateStore(
            b_.CreateFAdd(sum, b_.CreateFPExt(block, b_.getDoubleTy())), total);
        return absl::OkStatus();
      });
    });
  }
  no_unroll_ = false;
  RETURN_IF_ERROR(status);
  locals_.resize(std::max<size_t>(locals_.size(), stage.local + 1));
  llvm::Value* result =
      widen_sum ? b_.CreateFPTrunc(b_.CreateLoad(b_.getDoubleTy(), total), t)
                : b_.CreateLoad(acc_t, acc);
  if (fp_min_max) {
    // maxnum under nnan is poison once it met a NaN; the select discards it.
    result =
        b_.CreateSelect(b_.CreateIsNotNull(b_.CreateLoad(nan_flag_t, saw_nan)),
                        FConst(t, NAN), result);
  }
  locals_[stage.local] = result;
  return absl::OkStatus();
}

// argmax/argmin as the eager kernel finds them: a strictly better value
// moves the position, so ties keep the first; once a NaN is found it stays.
absl::Status KernelEmitter::EmitArgReduction(const Stage& stage) {
  const DType d = stage.value.dtype();
  llvm::Type* t = TypeOf(d);
  const bool fp = IsFloating(d);
  const bool max = stage.combine == CombineOp::kArgMax;
  llvm::Value* start =
      fp ? FConst(t, max ? -INFINITY : INFINITY)
         : llvm::ConstantInt::get(
               t,
               IsUnsignedInt(d)
                   ? (max ? llvm::APInt::getMinValue(t->getIntegerBitWidth())
                          : llvm::APInt::getMaxValue(t->getIntegerBitWidth()))
                   : (max ? llvm::APInt::getSignedMinValue(
                                t->getIntegerBitWidth())
                          : llvm::APInt::getSignedMaxValue(
                                t->getIntegerBitWidth())));
  llvm::Value* best = Alloca(t);
  llvm::Value* position = Alloca(b_.getInt64Ty());
  b_.CreateStore(start, best);
  b_.CreateStore(b_.getInt64(0), position);
  no_unroll_ = true;
  absl::Status status = Loops(stage.loops, 0, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(llvm::Value * x, Value(stage.value));
    llvm::Value* b = b_.CreateLoad(t, best);
    llvm::Value* better;
    if (fp) {
      llvm::Value* b_ordered = b_.CreateFCmpORD(b, b);
      llvm::Value* x_nan = b_.CreateFCmpUNO(x, x);
      llvm::Value* x_beyond =
          max ? b_.CreateFCmpOGT(x, b) : b_.CreateFCmpOLT(x, b);
      better = b_.CreateAnd(b_ordered, b_.CreateOr(x_nan, x_beyond));
    } else if (IsUnsignedInt(d)) {
      better = max ? b_.CreateICmpUGT(x, b) : b_.CreateICmpULT(x, b);
    } else {
      better = max ? b_.CreateICmpSGT(x, b) : b_.CreateICmpSLT(x, b);
    }
    llvm::Value* here = b_.getInt64(0);
    for (const LoopRange& l : stage.loops) {
      here = b_.CreateNSWAdd(b_.CreateNSWMul(here, Index(l.extent)),
                             vars_.at(l.var));
    }
    b_.CreateStore(b_.CreateSelect(better, x, b), best);
    b_.CreateStore(
        b_.CreateSelect(better, here, b_.CreateLoad(b_.getInt64Ty(), position)),
        position);
    memo_.clear();
    return absl::OkStatus();
  });
  no_unroll_ = false;
  RETURN_IF_ERROR(status);
  locals_.resize(std::max<size_t>(locals_.size(), stage.local + 1));
  locals_[stage.local] = b_.CreateLoad(b_.getInt64Ty(), position);
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitColumnStages() {
  const LoopRange& column = k_.outer.back();
  const int64_t columns = column.extent.value();
  // Each local's array and its element type (what the reduction accumulates
  // in); a local reads as its value's type.
  std::vector<llvm::Value*> arrays(k_.num_locals, nullptr);
  std::vector<llvm::Type*> acc_types(k_.num_locals, nullptr);
  std::vector<llvm::Type*> types(k_.num_locals, nullptr);
  // Inside a column loop: locals_ as this column's elements.
  auto load_locals = [&] {
    locals_.assign(k_.num_locals, nullptr);
    for (int j = 0; j < k_.num_locals; ++j) {
      if (arrays[j] == nullptr) continue;
      llvm::Value* v = b_.CreateLoad(
          acc_types[j],
          b_.CreateInBoundsGEP(acc_types[j], arrays[j], vars_.at(column.var)));
      if (acc_types[j] != types[j]) v = b_.CreateFPTrunc(v, types[j]);
      locals_[j] = v;
    }
  };
  auto each_column = [&](const std::function<absl::Status()>& body) {
    return Loop(column.var, b_.getInt64(0), b_.getInt64(columns),
                [&]() -> absl::Status {
                  load_locals();
                  RETURN_IF_ERROR(body());
                  memo_.clear();
                  return absl::OkStatus();
                });
  };
  for (const Stage& stage : k_.stages) {
    memo_.clear();
    if (stage.kind == Stage::Kind::kStore) {
      RETURN_IF_ERROR(each_column([&]() -> absl::Status {
        ASSIGN_OR_RETURN(llvm::Value * v, Value(stage.value));
        const DType d = k_.buffers[stage.buffer].dtype;
        if (d == DType::kBool) v = b_.CreateZExt(v, b_.getInt8Ty());
        b_.CreateStore(
            v, b_.CreateInBoundsGEP(MemTypeOf(d), buffers_[stage.buffer],
                                    Index(stage.index)));
        return absl::OkStatus();
      }));
      continue;
    }
    const DType d = stage.value.dtype();
    llvm::Type* t = TypeOf(d);
    const bool fp = IsFloating(d);
    llvm::Type* acc_t =
        fp && stage.combine == CombineOp::kSum ? b_.getDoubleTy() : t;
    llvm::Value* init = nullptr;
    if (stage.combine == CombineOp::kSum) {
      init = llvm::Constant::getNullValue(acc_t);
    } else if (fp) {
      init = FConst(t, stage.combine == CombineOp::kMax ? -INFINITY : INFINITY);
    } else {
      const unsigned bits = t->getIntegerBitWidth();
      init =
          llvm::ConstantInt::get(t, stage.combine == CombineOp::kMax
                                        ? llvm::APInt::getSignedMinValue(bits)
                                        : llvm::APInt::getSignedMaxValue(bits));
    }
    llvm::Value* array = Alloca(llvm::ArrayType::get(acc_t, columns));
    auto element_ptr = [&] {
      return b_.CreateInBoundsGEP(llvm::ArrayType::get(acc_t, columns), array,
                                  {b_.getInt64(0), vars_.at(column.var)});
    };
    auto combine = [&](llvm::Value* a,
                       llvm::Value* x) -> absl::StatusOr<llvm::Value*> {
      if (stage.combine == CombineOp::kSum) {
        return fp ? b_.CreateFAdd(a, b_.CreateFPExt(x, acc_t))
                  : b_.CreateAdd(a, x);
      }
      if (fp) {
        return b_.CreateBinaryIntrinsic(stage.combine == CombineOp::kMax
                                            ? llvm::Intrinsic::maximum
                                            : llvm::Intrinsic::minimum,
                                        a, x);
      }
      return EmitBinary(b_,
                        stage.combine == CombineOp::kMax ? BinaryOp::kMaximum
                                                         : BinaryOp::kMinimum,
                        d, a, x);
    };
    if (std::optional<int64_t> steps = ConstantVolume(stage.loops);
        k_.num_checks == 0 && steps.has_value() &&
        *steps <= kMaxInlineReduction) {
      // A small constant window (a channels-last pool's 2x2): one column
      // loop, the window's steps inline in it, so each column's value stays
      // in a register, where a loop over the window around the column loop
      // went through the array at every step (the BN convnet's first
      // max-pool: 75 us per call). Not with gathers: each step's bounds
      // check selects its row pointer inside the column loop, which LLVM
      // then vectorizes into gathers (an embedding bag's 7 tokens), where a
      // column loop per step is unswitched into plain vector loads.
      RETURN_IF_ERROR(each_column([&]() -> absl::Status {
        llvm::Value* acc = init;
        RETURN_IF_ERROR(Inline(stage.loops, 0, [&]() -> absl::Status {
          ASSIGN_OR_RETURN(llvm::Value * x, Value(stage.value));
          ASSIGN_OR_RETURN(acc, combine(acc, x));
          memo_.clear();
          return absl::OkStatus();
        }));
        b_.CreateStore(acc, element_ptr());
        return absl::OkStatus();
      }));
    } else {
      RETURN_IF_ERROR(each_column([&]() -> absl::Status {
        b_.CreateStore(init, element_ptr());
        return absl::OkStatus();
      }));
      RETURN_IF_ERROR(Loops(stage.loops, 0, [&]() -> absl::Status {
        return each_column([&]() -> absl::Status {
          ASSIGN_OR_RETURN(llvm::Value * x, Value(stage.value));
          llvm::Value* ptr = element_ptr();
          ASSIGN_OR_RETURN(llvm::Value * r,
                           combine(b_.CreateLoad(acc_t, ptr), x));
          b_.CreateStore(r, ptr);
          return absl::OkStatus();
        });
      }));
    }
    arrays[stage.local] = array;
    acc_types[stage.local] = acc_t;
    types[stage.local] = t;
  }
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitStages() {
  for (const Stage& stage : k_.stages) RETURN_IF_ERROR(EmitStage(stage));
  return absl::OkStatus();
}

absl::Status KernelEmitter::Emit(const std::string& name) {
  for (const BufferParam& p : k_.buffers) {
    if (TypeOf(p.dtype) == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("no CPU codegen for ", DTypeName(p.dtype)));
    }
  }
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  // The body takes each buffer as its own noalias argument; the exported
  // wrapper unpacks the arrays and inlines it.
  std::vector<llvm::Type*> params(k_.buffers.size(), ptr);
  params.insert(params.end(), k_.num_size_params + 2, i64);
  fn_ = llvm::Function::Create(llvm::FunctionType::get(i64, params, false),
                               llvm::Function::InternalLinkage, name + ".body",
                               m_);
  fn_->addFnAttr(llvm::Attribute::AlwaysInline);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t i = 0; i < k_.buffers.size(); ++i) {
    fn_->addParamAttr(i, llvm::Attribute::NoAlias);
    if (!k_.buffers[i].is_output) {
      fn_->addParamAttr(i, llvm::Attribute::ReadOnly);
    }
  }
  auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry);
  if (k_.num_checks > 0) {
    faults_ = b_.CreateAlloca(i64);
    b_.CreateStore(b_.getInt64(0), faults_);
  }
  auto arg = fn_->arg_begin();
  for (size_t i = 0; i < k_.buffers.size(); ++i) buffers_.push_back(&*arg++);
  for (int i = 0; i < k_.num_size_params; ++i) sizes_.push_back(&*arg++);
  llvm::Value* begin = &*arg++;
  llvm::Value* end = &*arg++;
  if (k_.outer.empty()) {
    auto* run = llvm::BasicBlock::Create(ctx_, "run", fn_);
    auto* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), run, done);
    b_.SetInsertPoint(run);
    RETURN_IF_ERROR(EmitStages());
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  } else {
    if (ColumnReductions(k_)) {
      const std::vector<LoopRange> rows(k_.outer.begin(), k_.outer.end() - 1);
      RETURN_IF_ERROR(Loop(k_.outer[0].var, begin, end, [&] {
        return Loops(rows, 1, [&] { return EmitColumnStages(); });
      }));
    } else {
      RETURN_IF_ERROR(Loop(k_.outer[0].var, begin, end, [&] {
        return Loops(k_.outer, 1, [&] { return EmitStages(); });
      }));
    }
  }
  b_.CreateRet(faults_ != nullptr
                   ? static_cast<llvm::Value*>(b_.CreateLoad(i64, faults_))
                   : b_.getInt64(0));

  auto* wrapper = llvm::Function::Create(
      llvm::FunctionType::get(i64, {ptr, ptr, i64, i64}, false),
      llvm::Function::ExternalLinkage, name, m_);
  wrapper->addFnAttr(llvm::Attribute::NoUnwind);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
  auto w = wrapper->arg_begin();
  llvm::Value* buffer_array = &*w++;
  llvm::Value* size_array = &*w++;
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < k_.buffers.size(); ++i) {
    args.push_back(b_.CreateLoad(
        ptr, b_.CreateConstInBoundsGEP1_64(ptr, buffer_array, i)));
  }
  for (int i = 0; i < k_.num_size_params; ++i) {
    args.push_back(
        b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, size_array, i)));
  }
  args.push_back(&*w++);
  args.push_back(&*w++);
  b_.CreateRet(b_.CreateCall(fn_, args));

  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyFunction(*fn_, &os) || llvm::verifyFunction(*wrapper, &os)) {
    return absl::InternalError(absl::StrCat("invalid kernel IR: ", os.str()));
  }
  return absl::OkStatus();
}

}  // namespace codegen_internal

absl::Status EmitKernel(const Kernel& kernel, const std::string& name,
                        llvm::Module* module) {
  if (kernel.packed_gemm.has_value()) {
    return EmitPackedGemm(kernel, name, module);
  }
  return codegen_internal::KernelEmitter(kernel, module).Emit(name);
}

}  // namespace guardjit
