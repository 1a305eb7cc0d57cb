#include "jit/llvm/packed_gemm_codegen.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

namespace guardjit {
namespace {

class PackedGemmEmitter {
 public:
  PackedGemmEmitter(const PackedGemm& g, llvm::Module* m)
      : g_(g),
        m_(m),
        ctx_(m->getContext()),
        b_(ctx_),
        f32_(b_.getFloatTy()),
        i64_(b_.getInt64Ty()),
        ptr_(b_.getPtrTy()),
        vec_(llvm::FixedVectorType::get(f32_, g.vector_width)),
        vectors_(g.panel_width / g.vector_width) {}

  absl::Status Emit(const std::string& name) {
    fn_ = llvm::Function::Create(
        llvm::FunctionType::get(i64_, {ptr_, ptr_, i64_, i64_}, false),
        llvm::Function::ExternalLinkage, name, m_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    auto arg = fn_->arg_begin();
    llvm::Value* buffers = &*arg++;
    ++arg;  // sizes: every size is static
    llvm::Value* begin = &*arg++;
    llvm::Value* end = &*arg++;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    a_ = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, buffers, 0));
    packed_ =
        b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, buffers, 1));
    c_ = b_.CreateLoad(ptr_, b_.CreateConstInBoundsGEP1_64(ptr_, buffers, 2));
    const int64_t tail_cols = g_.n % g_.panel_width;
    Loop(begin, end, [&](llvm::Value* panel) {
      if (tail_cols == 0) {
        Panel(panel, g_.panel_width);
        return;
      }
      auto* tail = llvm::BasicBlock::Create(ctx_, "tail_panel", fn_);
      auto* whole = llvm::BasicBlock::Create(ctx_, "panel", fn_);
      auto* done = llvm::BasicBlock::Create(ctx_, "panel_done", fn_);
      b_.CreateCondBr(b_.CreateICmpEQ(panel, I(g_.panels() - 1)), tail, whole);
      b_.SetInsertPoint(tail);
      Panel(panel, tail_cols);
      b_.CreateBr(done);
      b_.SetInsertPoint(whole);
      Panel(panel, g_.panel_width);
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    });
    b_.CreateRet(I(0));
    std::string error;
    llvm::raw_string_ostream os(error);
    if (llvm::verifyFunction(*fn_, &os)) {
      return absl::InternalError(
          absl::StrCat("invalid packed GEMM IR: ", os.str()));
    }
    return absl::OkStatus();
  }

 private:
  llvm::Value* I(int64_t v) { return b_.getInt64(v); }

  // Marks the loop whose latch branch is `br` as neither unrolled nor
  // vectorized: the code is vector code already, and unrolled copies of a
  // tile only cost compile time (about a third of it measured).
  void KeepLoop(llvm::Instruction* br) {
    llvm::Metadata* unroll = llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")});
    llvm::Metadata* vectorize = llvm::MDNode::get(
        ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
               llvm::ConstantAsMetadata::get(b_.getFalse())});
    llvm::MDNode* loop =
        llvm::MDNode::getDistinct(ctx_, {nullptr, unroll, vectorize});
    loop->replaceOperandWith(0, loop);
    br->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }

  // for (i = lo; i < hi; ++i) body(i).
  void Loop(llvm::Value* lo, llvm::Value* hi,
            const std::function<void(llvm::Value*)>& body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* after = llvm::BasicBlock::Create(ctx_, "after", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), loop, after);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2);
    i->addIncoming(lo, pre);
    body(i);
    llvm::Value* next = b_.CreateNSWAdd(i, I(1));
    i->addIncoming(next, b_.GetInsertBlock());
    KeepLoop(b_.CreateCondBr(b_.CreateICmpSLT(next, hi), loop, after));
    b_.SetInsertPoint(after);
  }

  // Valid lanes of vector `v` of a panel with `cols` columns.
  int Lanes(int v, int64_t cols) const {
    return static_cast<int>(std::clamp<int64_t>(
        cols - int64_t{v} * g_.vector_width, 0, g_.vector_width));
  }

  llvm::Constant* Mask(int lanes) {
    std::vector<llvm::Constant*> bits;
    for (int i = 0; i < g_.vector_width; ++i)
      bits.push_back(b_.getInt1(i < lanes));
    return llvm::ConstantVector::get(bits);
  }

  // Panel `panel` (its first `cols` columns real): every tile of rows, block
  // of k rows by block.
  void Panel(llvm::Value* panel, int64_t cols) {
    llvm::Value* panel_b = b_.CreateInBoundsGEP(
        f32_, packed_, b_.CreateNSWMul(panel, I(g_.k * g_.panel_width)));
    llvm::Value* col0 = b_.CreateNSWMul(panel, I(g_.panel_width));
    const int64_t blocks = (g_.k + g_.k_block - 1) / g_.k_block;
    const int64_t whole_tiles = g_.m / g_.tile_rows;
    const int tail_rows = static_cast<int>(g_.m % g_.tile_rows);
    Loop(I(0), I(blocks), [&](llvm::Value* block) {
      llvm::Value* k0 = b_.CreateNSWMul(block, I(g_.k_block));
      llvm::Value* k1 =
          b_.CreateSelect(b_.CreateICmpEQ(block, I(blocks - 1)), I(g_.k),
                          b_.CreateNSWAdd(k0, I(g_.k_block)));
      llvm::Value* first = b_.CreateICmpEQ(block, I(0));
      llvm::Value* last = b_.CreateICmpEQ(block, I(blocks - 1));
      if (whole_tiles > 0) {
        Loop(I(0), I(whole_tiles), [&](llvm::Value* tile) {
          Tile(panel_b, col0, b_.CreateNSWMul(tile, I(g_.tile_rows)),
               g_.tile_rows, cols, k0, k1, first, last);
        });
      }
      if (tail_rows > 0) {
        Tile(panel_b, col0, I(whole_tiles * g_.tile_rows), tail_rows, cols, k0,
             k1, first, last);
      }
    });
  }

  // Rows [row0, row0 + rows) by the panel's columns over k in [k0, k1):
  // accumulators start at zero in the first block and at C's partial sums
  // after it; the last block scales by alpha.
  void Tile(llvm::Value* panel_b, llvm::Value* col0, llvm::Value* row0,
            int rows, int64_t cols, llvm::Value* k0, llvm::Value* k1,
            llvm::Value* first, llvm::Value* last) {
    const llvm::Align c_align(4);
    const llvm::Align b_align(std::min(64, g_.vector_width * 4));
    llvm::Constant* zero = llvm::ConstantFP::get(vec_, 0.0);
    int live = 0;  // vectors with a real column
    while (live < vectors_ && Lanes(live, cols) > 0) ++live;
    std::vector<llvm::Value*> c_ptr(rows * live), init(rows * live);
    for (int r = 0; r < rows; ++r) {
      llvm::Value* row_start = b_.CreateNSWAdd(
          b_.CreateNSWMul(b_.CreateNSWAdd(row0, I(r)), I(g_.n)), col0);
      for (int v = 0; v < live; ++v) {
        llvm::Value* p = b_.CreateInBoundsGEP(
            f32_, c_,
            b_.CreateNSWAdd(row_start, I(int64_t{v} * g_.vector_width)));
        c_ptr[r * live + v] = p;
        const int lanes = Lanes(v, cols);
        llvm::Value* partial =
            lanes == g_.vector_width
                ? static_cast<llvm::Value*>(
                      b_.CreateAlignedLoad(vec_, p, c_align))
                : b_.CreateMaskedLoad(vec_, p, c_align, Mask(lanes), zero);
        init[r * live + v] = b_.CreateSelect(first, zero, partial);
      }
    }
    // Rows of A at k0: element (r, k) at a + (row0 + r) * lda + k * stride.
    std::vector<llvm::Value*> a_row(rows);
    for (int r = 0; r < rows; ++r) {
      a_row[r] = b_.CreateInBoundsGEP(
          f32_, a_, b_.CreateNSWMul(b_.CreateNSWAdd(row0, I(r)), I(g_.lda)));
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "k", fn_);
    auto* after = llvm::BasicBlock::Create(ctx_, "k_done", fn_);
    b_.CreateBr(loop);  // k0 < k1: blocks are never empty
    b_.SetInsertPoint(loop);
    llvm::PHINode* k = b_.CreatePHI(i64_, 2);
    k->addIncoming(k0, pre);
    std::vector<llvm::PHINode*> acc(rows * live);
    for (size_t i = 0; i < acc.size(); ++i) {
      acc[i] = b_.CreatePHI(vec_, 2);
      acc[i]->addIncoming(init[i], pre);
    }
    llvm::Value* b_row = b_.CreateInBoundsGEP(
        f32_, panel_b, b_.CreateNSWMul(k, I(g_.panel_width)));
    std::vector<llvm::Value*> bv(live);
    for (int v = 0; v < live; ++v) {
      bv[v] =
          b_.CreateAlignedLoad(vec_,
                               b_.CreateConstInBoundsGEP1_64(
                                   f32_, b_row, int64_t{v} * g_.vector_width),
                               b_align);
    }
    llvm::Value* a_offset = b_.CreateNSWMul(k, I(g_.a_col_stride));
    std::vector<llvm::Value*> next(rows * live);
    for (int r = 0; r < rows; ++r) {
      llvm::Value* a =
          b_.CreateLoad(f32_, b_.CreateInBoundsGEP(f32_, a_row[r], a_offset));
      llvm::Value* splat = b_.CreateVectorSplat(g_.vector_width, a);
      for (int v = 0; v < live; ++v) {
        next[r * live + v] =
            b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec_},
                               {splat, bv[v], acc[r * live + v]});
      }
    }
    llvm::Value* k_next = b_.CreateNSWAdd(k, I(1));
    k->addIncoming(k_next, loop);
    for (size_t i = 0; i < acc.size(); ++i) acc[i]->addIncoming(next[i], loop);
    KeepLoop(b_.CreateCondBr(b_.CreateICmpSLT(k_next, k1), loop, after));
    b_.SetInsertPoint(after);
    for (int r = 0; r < rows; ++r) {
      for (int v = 0; v < live; ++v) {
        llvm::Value* value = next[r * live + v];
        if (g_.alpha != 1) {
          value = b_.CreateSelect(
              last, b_.CreateFMul(value, llvm::ConstantFP::get(vec_, g_.alpha)),
              value);
        }
        const int lanes = Lanes(v, cols);
        if (lanes == g_.vector_width) {
          b_.CreateAlignedStore(value, c_ptr[r * live + v], c_align);
        } else {
          b_.CreateMaskedStore(value, c_ptr[r * live + v], c_align,
                               Mask(lanes));
        }
      }
    }
  }

  const PackedGemm& g_;
  llvm::Module* m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Type* f32_;
  llvm::IntegerType* i64_;
  llvm::PointerType* ptr_;
  llvm::FixedVectorType* vec_;
  const int vectors_;
  llvm::Function* fn_ = nullptr;
  llvm::Value* a_ = nullptr;
  llvm::Value* packed_ = nullptr;
  llvm::Value* c_ = nullptr;
};

}  // namespace

absl::Status EmitPackedGemm(const Kernel& kernel, const std::string& name,
                            llvm::Module* module) {
  if (!kernel.packed_gemm.has_value()) {
    return absl::InternalError("EmitPackedGemm: not a packed product");
  }
  const PackedGemm& g = *kernel.packed_gemm;
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.vector_width < 1 ||
      g.panel_width < g.vector_width || g.panel_width % g.vector_width != 0 ||
      g.tile_rows < 1 || g.k_block < 1 || g.k_block > g.k) {
    return absl::InternalError(
        absl::StrCat("malformed packed product: ", g.ToString()));
  }
  return PackedGemmEmitter(g, module).Emit(name);
}

VectorTarget HostVectorTarget() {
  static const VectorTarget target = [] {
    const llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    const auto has = [&](const char* f) {
      auto it = features.find(f);
      return it != features.end() && it->second;
    };
    if (has("avx512f")) return VectorTarget{16, 32};
    if (has("avx")) return VectorTarget{8, 16};
    return VectorTarget{4, 16};
  }();
  return target;
}

}  // namespace guardjit
