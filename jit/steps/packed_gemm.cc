#include "jit/steps/packed_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/tensor.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/pointwise_epilogue.h"
#include "runtime/blas_panels.h"

namespace guardjit {
namespace {

// Panels split across the pool: at least this many multiply-adds in all.
constexpr int64_t kMinSplitMacs = int64_t{1} << 20;
// Rows of k a transposed weight is packed in at a time (PackGemmPanels).
constexpr int64_t kPackBlock = 64;
// A block of panel rows that stays in L1 beside a tile's rows of A.
constexpr int64_t kL1BlockBytes = 16 * 1024;
constexpr size_t kAlign = 64;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class PackedGemmStep : public StepRunner {
  using Pointwise = GemmStep::Packed::Pointwise;

 public:
  PackedGemmStep(const PlanStep& step, HostKernelFn gemm,
                 PackedGemmKernel ahead_of_time, HostKernelFn epilogue,
                 std::shared_ptr<ThreadPool> pool)
      : gemm_(step.gemm),
        fn_(gemm),
        ahead_of_time_(ahead_of_time),
        pool_(std::move(pool)),
        epilogue_(step.kernel, epilogue, pool_),
        buffer_slots_(step.kernel.buffer_slots) {}

  // Packs the weight, into memory from `allocator` (null: its own block).
  absl::Status Init(const Graph& graph, std::shared_ptr<Allocator> allocator) {
    const GemmStep& g = *gemm_;
    const PackedGemm& p = *g.packed->kernel.packed_gemm;
    const Tensor weight =
        graph.node(g.packed->weight_node)
            .constant.AsStrided(g.b.sizes, g.b.strides, g.b.offset);
    const size_t floats = PackedGemmFloats(p);
    absl::StatusOr<std::shared_ptr<Storage>> packed = Storage::Allocate(
        AlignUp(floats * sizeof(float)), std::move(allocator));
    if (!packed.ok()) {
      return absl::ResourceExhaustedError(
          absl::StrCat(g.ToString(), ": no memory for the packed weight (",
                       floats * sizeof(float), " bytes)"));
    }
    packed_ = *std::move(packed);
    const int64_t strides[2] = {g.b.strides[0], g.b.strides[1]};
    PackGemmPanels(p, weight.data_as<float>(), strides,
                   static_cast<float*>(packed_->data()));
    const int threads = pool_->num_threads();
    parts_ = threads > 1 && p.m * p.n * p.k >= kMinSplitMacs
                 ? std::min<int64_t>(threads, p.panels())
                 : 1;
    product_bytes_ = AlignUp(static_cast<size_t>(p.m * p.n) * sizeof(float));
    rows_bytes_ = ahead_of_time_ != nullptr && p.a_col_stride != 1
                      ? AlignUp(static_cast<size_t>(p.m * p.k) * sizeof(float))
                      : 0;
    packed_bytes_ = static_cast<int64_t>(AlignUp(floats * sizeof(float)));
    return absl::OkStatus();
  }

  int64_t packed_bytes() const override { return packed_bytes_; }

  absl::Status Run(StepCall& call) const override {
    const GemmStep& g = *gemm_;
    const PackedGemm& p = *g.packed->kernel.packed_gemm;
    absl::InlinedVector<void*, 16> pointers = KernelParams(call, buffer_slots_);
    PanelScratch scratch;
    // One block of scratch: the product (a bare product goes straight to
    // its output instead), then A's rows where the ahead-of-time kernel
    // needs them copied (a column stride other than 1).
    // With the library's epilogue the product goes to scratch too, which
    // the epilogue reads (as the kernel would: written straight into the
    // output, the MLP's 8x784x512 step took 4-35% longer in GJ_PROFILE
    // pairs).
    const bool bare = g.result_param >= 0 && !g.packed->pointwise.has_value();
    char* const block = static_cast<char*>(
        scratch.Get((bare ? 0 : product_bytes_) + rows_bytes_));
    void* const dst = bare ? pointers[g.result_param] : block;
    const float* const a = reinterpret_cast<const float*>(
        static_cast<char*>(call.slots[g.a.slot].data()) +
        g.a.offset * static_cast<int64_t>(sizeof(float)));
    const int64_t panels = p.panels();
    const float* rows = a;
    int64_t lda = p.lda;
    if (rows_bytes_ > 0) {
      float* const copy =
          reinterpret_cast<float*>(block + (bare ? 0 : product_bytes_));
      CopyGemmRows(p, a, copy);
      rows = copy;
      lda = p.k;
    }
    const float* const b = static_cast<const float*>(packed_->data());
    void* const params[3] = {const_cast<float*>(a), packed_->data(), dst};
    const int64_t* const sizes = call.symbols.data();
    const auto ahead_of_time = [&](int64_t first, int64_t last) {
      ahead_of_time_(p, rows, lda, b, static_cast<float*>(dst), first, last);
    };
    const auto generated = [&](int64_t first, int64_t last) {
      fn_(params, sizes, first, last);
    };
    // Panels [first, last) on whichever kernel the product runs on.
    const absl::FunctionRef<void(int64_t, int64_t)> product =
        ahead_of_time_ != nullptr
            ? absl::FunctionRef<void(int64_t, int64_t)>(ahead_of_time)
            : absl::FunctionRef<void(int64_t, int64_t)>(generated);
    // Then the library's epilogue over their columns, while in cache.
    const Pointwise* const pw =
        g.packed->pointwise.has_value() ? &*g.packed->pointwise : nullptr;
    const float* const bias =
        pw != nullptr && pw->bias.has_value()
            ? reinterpret_cast<const float*>(
                  static_cast<char*>(call.slots[pw->bias->slot].data())) +
                  pw->bias->offset
            : nullptr;
    const float* const residual =
        pw != nullptr && pw->ops.residual_param >= 0
            ? static_cast<const float*>(pointers[pw->ops.residual_param])
            : nullptr;
    const float* const residual2 =
        pw != nullptr && pw->ops.residual2_param >= 0
            ? static_cast<const float*>(pointers[pw->ops.residual2_param])
            : nullptr;
    // The output the library's epilogue writes from the product in
    // scratch.
    float* const out =
        pw != nullptr ? static_cast<float*>(pointers[g.result_param]) : nullptr;
    const auto run_panels = [&](int64_t first, int64_t last) {
      product(first, last);
      if (pw == nullptr) return;
      const int64_t c0 = first * p.panel_width;
      const int64_t c1 = std::min(last * p.panel_width, p.n);
      float* const c = static_cast<float*>(dst);
      for (int64_t r = 0; r < p.m; ++r) {
        const int64_t at = r * p.n + c0;
        if (residual2 != nullptr) {
          // act((product + bias) + (residual + residual2)): the residuals'
          // sum into the output, the bias onto the product in scratch,
          // then their sum.
          const int64_t n = c1 - c0;
          RunPointwiseEpilogue(PointwiseEpilogue{}, residual + at,
                               residual2 + at, out + at, n);
          if (bias != nullptr) {
            RunPointwiseEpilogue(PointwiseEpilogue{}, c + at, bias + c0, c + at,
                                 n);
          }
          PointwiseEpilogue ops = pw->ops;
          ops.residual2_param = -1;
          RunPointwiseEpilogue(ops, c + at, out + at, out + at, n);
        } else if (bias != nullptr && residual != nullptr) {
          RunPointwiseEpilogue(PointwiseEpilogue{}, c + at, bias + c0, out + at,
                               c1 - c0);
          RunPointwiseEpilogue(pw->ops, out + at, residual + at, out + at,
                               c1 - c0);
        } else {
          RunPointwiseEpilogue(pw->ops, c + at,
                               bias != nullptr       ? bias + c0
                               : residual != nullptr ? residual + at
                                                     : nullptr,
                               out + at, c1 - c0);
        }
      }
    };
    if (parts_ > 1) {
      pool_->ParallelFor(parts_, 1, [&](int64_t first, int64_t last) {
        for (int64_t i = first; i < last; ++i) {
          run_panels(panels * i / parts_, panels * (i + 1) / parts_);
        }
      });
    } else {
      run_panels(0, panels);
    }
    if (g.result_param >= 0) return absl::OkStatus();
    pointers[g.product_param] = dst;
    return epilogue_.RunWith(call, pointers);
  }

 private:
  const std::shared_ptr<const GemmStep> gemm_;
  const HostKernelFn fn_;                 // generated code, or
  const PackedGemmKernel ahead_of_time_;  // the library's own
  const std::shared_ptr<ThreadPool> pool_;
  const HostKernelStep epilogue_;
  const std::vector<int> buffer_slots_;
  // From the program's arena, or a block of its own (Storage frees it
  // where it came from).
  std::shared_ptr<Storage> packed_;
  int64_t parts_ = 1;
  size_t product_bytes_ = 0;
  size_t rows_bytes_ = 0;  // A's rows copied, for the ahead-of-time kernel
  int64_t packed_bytes_ = 0;
};

}  // namespace

bool PackedGemmEnabled() {
  const char* env = std::getenv("GJ_PACKED_GEMM");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

PackedGemmKernel AheadOfTimePackedGemm(const PackedGemm& g) {
  return g.ahead_of_time ? FindPackedGemmKernel(g) : nullptr;
}

PackedGemm ChoosePackedGemm(int64_t m, int64_t n, int64_t k, int64_t lda,
                            int64_t a_col_stride, double alpha,
                            const VectorTarget& target) {
  PackedGemm best;
  best.m = m;
  best.n = n;
  best.k = k;
  best.lda = lda;
  best.a_col_stride = a_col_stride;
  best.alpha = alpha;
  best.vector_width = target.width;
  // Cycles a k step takes at least: an accumulator's multiply-add waits
  // for its previous one (4 cycles on Zen 3 and Skylake-X, 5 on Zen 2).
  // Counted as 5: a tile with exactly latency x 2 ports accumulators (4x16
  // on AVX2) has no slack for a late load, and measured slower than one
  // with 12 (4x24: 8 x 784 -> 512 at 2.26x cblas_sgemm against 1.74-2.20x,
  // gemm_epilogue_benchmark, Zen 3).
  constexpr double kLatency = 5;
  constexpr double kTileCost = 10;  // a tile's set-up, per block
  // Cycles of one k step of a tile of `rows` rows by `vectors` vectors.
  const auto step = [&](int64_t rows, int vectors) {
    return std::max({rows * vectors / 2.0, (rows + vectors) / 2.0, kLatency});
  };
  double best_cost = std::numeric_limits<double>::infinity();
  for (int vectors = 1; vectors <= 4; ++vectors) {
    // Accumulators, the panel row's vectors and a broadcast in registers.
    const int max_rows = (target.registers - vectors - 1) / vectors;
    for (int rows = 1; rows <= max_rows; ++rows) {
      const int64_t width = int64_t{vectors} * target.width;
      const int64_t panels = (n + width - 1) / width;
      const int64_t whole = m / rows, tail = m % rows;
      const double per_panel =
          static_cast<double>(k) * (whole * step(rows, vectors) +
                                    (tail > 0 ? step(tail, vectors) : 0)) +
          (whole + (tail > 0)) * (kTileCost + 2.0 * rows * vectors);
      const double cost = panels * per_panel;
      if (cost < best_cost) {
        best_cost = cost;
        best.panel_width = static_cast<int>(width);
        best.tile_rows = rows;
      }
    }
  }
  // k blocks: one when a single tile covers the rows (nothing reuses a
  // block) or k is short, else the fewest blocks of at most kL1BlockBytes
  // of panel rows, evened out.
  const int64_t tiles = (m + best.tile_rows - 1) / best.tile_rows;
  const int64_t fit =
      std::max<int64_t>(16, kL1BlockBytes / (best.panel_width * 4));
  if (tiles <= 1 || k <= fit + fit / 2) {
    best.k_block = k;
  } else {
    const int64_t blocks = (k + fit - 1) / fit;
    best.k_block = (k + blocks - 1) / blocks;
  }
  return best;
}

absl::StatusOr<GemmStep::Packed> PlanPackedGemm(const GemmStep& gemm,
                                                const Plan& plan) {
  RETURN_IF_ERROR(CheckServingProduct(gemm, plan));
  GemmStep::Packed packed;
  packed.weight_node = plan.slots[gemm.b.slot].node;
  Kernel& kernel = packed.kernel;
  kernel.packed_gemm =
      ChoosePackedGemm(gemm.m, gemm.n, gemm.k, gemm.a.strides[0],
                       gemm.a.strides[1], gemm.alpha, HostVectorTarget());
  const char* env = std::getenv("GJ_PACKED_GEMM");
  kernel.packed_gemm->ahead_of_time =
      (env == nullptr || std::strcmp(env, "llvm") != 0) &&
      FindPackedGemmKernel(*kernel.packed_gemm) != nullptr;
  kernel.buffers = {{"a", DType::kFloat32, false},
                    {"b", DType::kFloat32, false},
                    {"c", DType::kFloat32, true}};
  kernel.outer = {{0, IndexExpr::Const(kernel.packed_gemm->panels())}};
  return packed;
}

void PackGemmPanels(const PackedGemm& g, const float* b,
                    const int64_t b_strides[2], float* out) {
  const int64_t width = g.panel_width;
  const int64_t row_stride = b_strides[0], col_stride = b_strides[1];
  for (int64_t p = 0; p < g.panels(); ++p) {
    const int64_t col0 = p * width;
    const int64_t cols = std::min(width, g.n - col0);
    float* panel = out + p * g.k * width;
    if (row_stride == 1 && col_stride != 1) {
      // A linear layer's weight, [n, k] row-major read as its transpose:
      // each column of the panel is a contiguous run of k. Blocks of
      // kPackBlock k read those runs in order and write a block of the
      // panel that stays in L1, where filling the panel's rows gathers an
      // element from another row of the weight per store (a 1024 x 256
      // weight in 32-wide panels, in cache: 0.22 ms instead of 0.26-0.33).
      for (int64_t k0 = 0; k0 < g.k; k0 += kPackBlock) {
        const int64_t rows = std::min(kPackBlock, g.k - k0);
        float* block = panel + k0 * width;
        for (int64_t j = 0; j < cols; ++j) {
          const float* src = b + (col0 + j) * col_stride + k0;
          for (int64_t k = 0; k < rows; ++k) block[k * width + j] = src[k];
        }
        for (int64_t k = 0; k < rows; ++k) {
          std::fill(block + k * width + cols, block + (k + 1) * width, 0.0f);
        }
      }
      continue;
    }
    for (int64_t k = 0; k < g.k; ++k) {
      float* row = panel + k * width;
      const float* src = b + k * row_stride + col0 * col_stride;
      if (col_stride == 1) {
        std::memcpy(row, src, static_cast<size_t>(cols) * sizeof(float));
      } else {
        for (int64_t j = 0; j < cols; ++j) row[j] = src[j * col_stride];
      }
      std::fill(row + cols, row + width, 0.0f);
    }
  }
}

size_t PackedGemmFloats(const PackedGemm& g) {
  return static_cast<size_t>(g.panels() * g.k * g.panel_width);
}

absl::StatusOr<std::unique_ptr<const StepRunner>> MakePackedGemmStep(
    const PlanStep& step, const Graph& graph, HostKernelFn gemm,
    HostKernelFn epilogue, std::shared_ptr<ThreadPool> pool,
    std::shared_ptr<Allocator> allocator) {
  if (step.gemm == nullptr || !step.gemm->packed.has_value() ||
      !step.gemm->packed->kernel.packed_gemm.has_value()) {
    return absl::InternalError("a packed product step without its plan");
  }
  const PackedGemmKernel ahead_of_time =
      gemm == nullptr
          ? AheadOfTimePackedGemm(*step.gemm->packed->kernel.packed_gemm)
          : nullptr;
  if (gemm == nullptr && ahead_of_time == nullptr) {
    return absl::InternalError(
        absl::StrCat(step.gemm->ToString(),
                     ": a packed product without generated code or an "
                     "ahead-of-time kernel"));
  }
  auto runner = std::make_unique<PackedGemmStep>(step, gemm, ahead_of_time,
                                                 epilogue, std::move(pool));
  RETURN_IF_ERROR(runner->Init(graph, std::move(allocator)));
  return std::unique_ptr<const StepRunner>(std::move(runner));
}

}  // namespace guardjit
