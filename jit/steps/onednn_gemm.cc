#include "jit/steps/onednn_gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/status_macros.h"
#include "jit/steps/kernel_steps.h"
#include "jit/steps/onednn_conv.h"
#include "jit/steps/onednn_primitives.h"
#include "runtime/blas_panels.h"

namespace guardjit {
namespace {

using dnnl::memory;
constexpr auto kF32 = memory::data_type::f32;
constexpr int64_t kItem = sizeof(float);
constexpr size_t kAlign = 64;
// Row parts across the pool: at least this many multiply-adds in all.
constexpr int64_t kMinSplitMacs = int64_t{1} << 20;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Column parts: at least this many columns each, a multiple of it (a
// vector register of floats), for products of fewer rows than threads.
constexpr int64_t kColumnAlign = 16;

// A matmul's attributes: the caller's scratchpad, the product scaled by
// `alpha`.
dnnl::primitive_attr MatmulAttr(double alpha) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (alpha != 1) attr.set_output_scales(0, {static_cast<float>(alpha)});
  return attr;
}

// The matmul of rows [r0, r1) and columns [c0, c1) of `g`: a strided a, the
// weight's columns in the layout oneDNN picks (the same for any row count),
// the part's share of the product inside the dense [M, N] product.
dnnl::matmul::primitive_desc MatmulPd(const GemmStep& g, int64_t r0, int64_t r1,
                                      int64_t c0, int64_t c1) {
  const memory::desc src({r1 - r0, g.k}, kF32,
                         {g.a.strides[0], g.a.strides[1]});
  const memory::desc weights({g.k, c1 - c0}, kF32, memory::format_tag::any);
  const memory::desc dst({r1 - r0, c1 - c0}, kF32, {g.n, 1});
  const dnnl::primitive_attr attr = MatmulAttr(g.alpha);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst),
                                      attr, OneDnnEngine());
}

// The matmul of batch entries [0, count) of a batched `g` whose operands are
// both values of the call, on dense copies of them ([count, M, K] and
// [count, K, N], row-major; an operand already laid out so is read in place):
// on those oneDNN picks its brgemm matmul, which generates only the small
// kernels it needs. On strided operands (attention's views of one
// projection) it picks gemm:jit, whose first use in a process generates
// its kernels: 26 ms, a third of a GPT-2 model's warm start.
dnnl::matmul::primitive_desc BatchedMatmulPd(const GemmStep& g, int64_t count) {
  const memory::desc src({count, g.m, g.k}, kF32, {g.m * g.k, g.k, 1});
  const memory::desc weights({count, g.k, g.n}, kF32, {g.k * g.n, g.n, 1});
  const memory::desc dst({count, g.m, g.n}, kF32, {g.m * g.n, g.n, 1});
  const dnnl::primitive_attr attr = MatmulAttr(g.alpha);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, dst),
                                      attr, OneDnnEngine());
}

// Whether `r` ([B, R, C]) is the dense row-major tensor of its sizes.
bool IsDense3(const FixedRef& r) {
  return r.strides[2] == 1 && r.strides[1] == r.sizes[2] &&
         (r.sizes[0] == 1 || r.strides[0] == r.sizes[1] * r.sizes[2]);
}

// Batch entries [b0, b1) of `r` (at `base`) copied dense to `to`.
void CopyDense3(const FixedRef& r, const float* base, int64_t b0, int64_t b1,
                float* to) {
  const int64_t rows = r.sizes[1], cols = r.sizes[2];
  for (int64_t b = b0; b < b1; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      const float* from = base + b * r.strides[0] + i * r.strides[1];
      if (r.strides[2] == 1) {
        std::memcpy(to, from, sizeof(float) * cols);
      } else {
        for (int64_t j = 0; j < cols; ++j) to[j] = from[j * r.strides[2]];
      }
      to += cols;
    }
  }
}

// One primitive of a call: the whole product, a range of its rows, or (a
// product of fewer rows than the pool has threads, a classifier at batch 1)
// a range of its columns with that range of the weight packed apart.
struct Part {
  dnnl::matmul matmul;
  memory::desc src, dst, scratchpad;
  memory::desc weights_desc;        // b as the primitive reads it
  std::shared_ptr<memory> weights;  // null: b is a value of the call
  int64_t r0 = 0, c0 = 0;
  int64_t b0 = 0;  // batched: the part's first batch entry

  // The primitive of `pd` and its memory descriptors.
  static Part Of(const dnnl::matmul::primitive_desc& pd) {
    Part part;
    part.matmul = dnnl::matmul(pd);
    part.src = pd.src_desc();
    part.dst = pd.dst_desc();
    part.scratchpad = pd.scratchpad_desc();
    part.weights_desc = pd.weights_desc();
    return part;
  }
};

class OneDnnGemmStep : public StepRunner {
 public:
  OneDnnGemmStep(const PlanStep& step, HostKernelFn fn,
                 std::shared_ptr<ThreadPool> pool)
      : gemm_(step.gemm),
        pool_(std::move(pool)),
        epilogue_(step.kernel, fn, pool_),
        buffer_slots_(step.kernel.buffer_slots) {}

  // Builds the parts' primitives and packs the weight.
  absl::Status Init(const Graph& graph) {
    const GemmStep& g = *gemm_;
    if (g.batched) return InitBatched();
    const Tensor weight =
        graph.node(g.onednn->weight_node)
            .constant.AsStrided(g.b.sizes, g.b.strides, g.b.offset);
    const int threads = pool_->num_threads();
    const bool split = threads > 1 && g.m * g.n * g.k >= kMinSplitMacs;
    // Rows when there are enough, else columns.
    bool by_columns = split && g.m < threads && g.n >= 2 * kColumnAlign;
    // A column range is a strided result: where oneDNN has only its
    // reference matmul for that, rows it is.
    try {
      if (by_columns &&
          absl::StartsWith(
              MatmulPd(g, 0, g.m, 0, g.n / 2 / kColumnAlign * kColumnAlign)
                  .impl_info_str(),
              "ref")) {
        by_columns = false;
      }
    } catch (const dnnl::error&) {
      by_columns = false;
    }
    const int64_t parts = !split ? 1
                          : by_columns
                              ? std::min<int64_t>(threads, g.n / kColumnAlign)
                              : std::min<int64_t>(threads, g.m);
    try {
      size_t pad_bytes = 0;
      dnnl::stream& stream = OneDnnStream();
      const ScopedOpenMpThreads one_thread(1);
      std::shared_ptr<memory> packed;  // row parts share one packed weight
      for (int64_t i = 0; i < parts; ++i) {
        int64_t r0 = 0, r1 = g.m, c0 = 0, c1 = g.n;
        if (by_columns) {
          const int64_t blocks = g.n / kColumnAlign;
          c0 = blocks * i / parts * kColumnAlign;
          c1 = i + 1 == parts ? g.n : blocks * (i + 1) / parts * kColumnAlign;
        } else {
          r0 = g.m * i / parts;
          r1 = g.m * (i + 1) / parts;
        }
        const dnnl::matmul::primitive_desc pd = MatmulPd(g, r0, r1, c0, c1);
        if (by_columns || packed == nullptr) {
          memory from(memory::desc({g.k, c1 - c0}, kF32,
                                   {g.b.strides[0], g.b.strides[1]}),
                      OneDnnEngine(),
                      const_cast<float*>(weight.data_as<float>()) +
                          c0 * g.b.strides[1]);
          packed = std::make_shared<memory>(pd.weights_desc(), OneDnnEngine());
          dnnl::reorder(from, *packed).execute(stream, from, *packed);
          stream.wait();
          packed_bytes_ += static_cast<int64_t>(pd.weights_desc().get_size());
        } else if (pd.weights_desc() != packed->get_desc()) {
          return absl::InternalError(absl::StrCat(
              g.ToString(), ": oneDNN wants the weight in another layout for ",
              r1 - r0, " rows"));
        }
        Part part = Part::Of(pd);
        part.weights = packed;
        part.r0 = r0;
        part.c0 = c0;
        pad_bytes = std::max(pad_bytes, pd.scratchpad_desc().get_size());
        parts_.push_back(std::move(part));
      }
      product_bytes_ = AlignUp(static_cast<size_t>(g.m * g.n * kItem));
      pad_stride_ = AlignUp(pad_bytes);
      scratch_bytes_ = product_bytes_ + pad_stride_ * parts_.size();
      // A primitive's first run costs several of its later ones (0.23 ms
      // against 0.03 ms measured at 8x784x256): run each part once on zeros
      // here, so that building the program (gj_function_precompile) pays it
      // rather than the first call.
      std::vector<float> zeros(
          static_cast<size_t>((g.m - 1) * g.a.strides[0] +
                              (g.k - 1) * g.a.strides[1] + 1),
          0.0f);
      PanelScratch scratch;
      char* const base = static_cast<char*>(scratch.Get(scratch_bytes_));
      for (size_t i = 0; i < parts_.size(); ++i) {
        RunPart(static_cast<int64_t>(i), reinterpret_cast<char*>(zeros.data()),
                base, base);
      }
    } catch (const dnnl::error& e) {
      return Failed(e);
    }
    return absl::OkStatus();
  }

  // A batched product of two values: the batch entries split across the
  // pool (at most two primitives, for the two part sizes), nothing packed.
  absl::Status InitBatched() {
    const GemmStep& g = *gemm_;
    const int threads = pool_->num_threads();
    const bool split =
        threads > 1 && g.batch * g.m * g.n * g.k >= kMinSplitMacs;
    const int64_t parts = split ? std::min<int64_t>(threads, g.batch) : 1;
    try {
      size_t pad_bytes = 0;
      const ScopedOpenMpThreads one_thread(1);
      std::unordered_map<int64_t, dnnl::matmul::primitive_desc> by_count;
      for (int64_t i = 0; i < parts; ++i) {
        const int64_t b0 = g.batch * i / parts, b1 = g.batch * (i + 1) / parts;
        auto it = by_count.find(b1 - b0);
        if (it == by_count.end()) {
          it = by_count.emplace(b1 - b0, BatchedMatmulPd(g, b1 - b0)).first;
        }
        const dnnl::matmul::primitive_desc& pd = it->second;
        Part part = Part::Of(pd);
        part.b0 = b0;
        pad_bytes = std::max(pad_bytes, pd.scratchpad_desc().get_size());
        parts_.push_back(std::move(part));
      }
      product_bytes_ =
          AlignUp(static_cast<size_t>(g.batch * g.m * g.n * kItem));
      pad_stride_ = AlignUp(pad_bytes);
      // Each part's dense copies of its a and b entries (where not dense).
      const int64_t most = (g.batch + parts - 1) / parts;
      a_dense_ = IsDense3(g.a);
      b_dense_ = IsDense3(g.b);
      a_copy_bytes_ =
          a_dense_ ? 0 : AlignUp(static_cast<size_t>(most * g.m * g.k * kItem));
      b_copy_bytes_ =
          b_dense_ ? 0 : AlignUp(static_cast<size_t>(most * g.k * g.n * kItem));
      copy_stride_ = a_copy_bytes_ + b_copy_bytes_;
      scratch_bytes_ =
          product_bytes_ + (pad_stride_ + copy_stride_) * parts_.size();
      // Each part's first run here, on zeros (see Init).
      const auto extent = [](const FixedRef& r) {
        int64_t last = 0;
        for (size_t d = 0; d < r.sizes.size(); ++d) {
          last += (r.sizes[d] - 1) * r.strides[d];
        }
        return static_cast<size_t>(last + 1);
      };
      std::vector<float> a(extent(g.a), 0.0f), b(extent(g.b), 0.0f);
      PanelScratch scratch;
      char* const base = static_cast<char*>(scratch.Get(scratch_bytes_));
      for (size_t i = 0; i < parts_.size(); ++i) {
        RunBatchedPart(static_cast<int64_t>(i),
                       reinterpret_cast<char*>(a.data()),
                       reinterpret_cast<char*>(b.data()), base, base);
      }
    } catch (const dnnl::error& e) {
      return Failed(e);
    }
    return absl::OkStatus();
  }

  int64_t packed_bytes() const override { return packed_bytes_; }

  absl::Status Run(StepCall& call) const override {
    const GemmStep& g = *gemm_;
    char* const a =
        static_cast<char*>(call.slots[g.a.slot].data()) + g.a.offset * kItem;
    char* const b = g.batched
                        ? static_cast<char*>(call.slots[g.b.slot].data()) +
                              g.b.offset * kItem
                        : nullptr;
    PanelScratch scratch;
    char* const base = static_cast<char*>(scratch.Get(scratch_bytes_));
    absl::InlinedVector<void*, 16> pointers = KernelParams(call, buffer_slots_);
    // A bare product goes straight to its output.
    char* const dst = g.result_param >= 0
                          ? static_cast<char*>(pointers[g.result_param])
                          : base;
    absl::Status status;
    absl::Mutex mu;
    const auto run = [&](int64_t first, int64_t last) {
      const ScopedOpenMpThreads one_thread(1);
      for (int64_t i = first; i < last; ++i) {
        try {
          if (g.batched) {
            RunBatchedPart(i, a, b, dst, base);
          } else {
            RunPart(i, a, dst, base);
          }
        } catch (const dnnl::error& e) {
          absl::MutexLock lock(&mu);
          status.Update(Failed(e));
        }
      }
    };
    const int64_t parts = static_cast<int64_t>(parts_.size());
    if (parts > 1) {
      pool_->ParallelFor(parts, 1, run);
    } else {
      run(0, 1);
    }
    RETURN_IF_ERROR(status);
    if (g.result_param >= 0) return absl::OkStatus();
    pointers[g.product_param] = base;
    return epilogue_.RunWith(call, pointers);
  }

 private:
  absl::Status Failed(const dnnl::error& e) const {
    return absl::InternalError(
        absl::StrCat(gemm_->ToString(), ": oneDNN failed: ", e.what()));
  }

  // Part `i` on the calling thread: its rows of the product into `dst`,
  // its scratchpad in `base`.
  void RunPart(int64_t i, char* a, char* dst, char* base) const {
    const GemmStep& g = *gemm_;
    const Part& part = parts_[i];
    const dnnl::engine& engine = OneDnnEngine();
    dnnl::stream& stream = OneDnnStream();
    part.matmul.execute(
        stream,
        {{DNNL_ARG_SRC,
          memory(part.src, engine, a + part.r0 * g.a.strides[0] * kItem)},
         {DNNL_ARG_WEIGHTS, *part.weights},
         {DNNL_ARG_DST,
          memory(part.dst, engine, dst + (part.r0 * g.n + part.c0) * kItem)},
         {DNNL_ARG_SCRATCHPAD,
          memory(part.scratchpad, engine,
                 base + product_bytes_ + i * pad_stride_)}});
    stream.wait();
  }

  // Batched part `i`: its batch entries of a and b into its entries of the
  // contiguous product at `dst`.
  void RunBatchedPart(int64_t i, char* a, char* b, char* dst,
                      char* base) const {
    const GemmStep& g = *gemm_;
    const Part& part = parts_[i];
    const dnnl::engine& engine = OneDnnEngine();
    dnnl::stream& stream = OneDnnStream();
    const int64_t count = part.src.dims()[0];
    char* const copies =
        base + product_bytes_ + parts_.size() * pad_stride_ + i * copy_stride_;
    char* src = a + part.b0 * g.a.strides[0] * kItem;
    char* weights = b + part.b0 * g.b.strides[0] * kItem;
    if (!a_dense_) {
      CopyDense3(g.a, reinterpret_cast<const float*>(a), part.b0,
                 part.b0 + count, reinterpret_cast<float*>(copies));
      src = copies;
    }
    if (!b_dense_) {
      CopyDense3(g.b, reinterpret_cast<const float*>(b), part.b0,
                 part.b0 + count,
                 reinterpret_cast<float*>(copies + a_copy_bytes_));
      weights = copies + a_copy_bytes_;
    }
    part.matmul.execute(
        stream, {{DNNL_ARG_SRC, memory(part.src, engine, src)},
                 {DNNL_ARG_WEIGHTS, memory(part.weights_desc, engine, weights)},
                 {DNNL_ARG_DST,
                  memory(part.dst, engine, dst + part.b0 * g.m * g.n * kItem)},
                 {DNNL_ARG_SCRATCHPAD,
                  memory(part.scratchpad, engine,
                         base + product_bytes_ + i * pad_stride_)}});
    stream.wait();
  }

  const std::shared_ptr<const GemmStep> gemm_;
  const std::shared_ptr<ThreadPool> pool_;
  const HostKernelStep epilogue_;
  const std::vector<int> buffer_slots_;
  std::vector<Part> parts_;
  size_t product_bytes_ = 0, pad_stride_ = 0, scratch_bytes_ = 0;
  // Batched: whether a and b are read in place, else each part's copies.
  bool a_dense_ = true, b_dense_ = true;
  size_t a_copy_bytes_ = 0, b_copy_bytes_ = 0, copy_stride_ = 0;
  int64_t packed_bytes_ = 0;
};

// Batched products of at most this many multiply-adds per batch entry run on
// oneDNN (128x128x128); larger ones stay on BLAS's panels.
constexpr int64_t kMaxSmallBatchedMacs = int64_t{1} << 21;

// OK for a static float32 batched product small enough for oneDNN (above),
// else UNIMPLEMENTED saying why not.
absl::Status CheckSmallBatchedProduct(const GemmStep& gemm) {
  if (gemm.dtype != DType::kFloat32 || !gemm.batched ||
      gemm.symbolic.has_value()) {
    return absl::UnimplementedError("not a static float32 batched product");
  }
  if (gemm.m * gemm.n * gemm.k > kMaxSmallBatchedMacs) {
    return absl::UnimplementedError(absl::StrCat(
        gemm.m, "x", gemm.k, "x", gemm.n,
        " per batch entry: BLAS panels keep large products in cache"));
  }
  if (gemm.a.strides.size() != 3 || gemm.b.strides.size() != 3) {
    return absl::InternalError("a batched product's operands are not 3-d");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GemmStep::OneDnn> PlanOneDnnGemm(const GemmStep& gemm,
                                                const Plan& plan) {
  GemmStep::OneDnn dnn;
  if (gemm.batched) {
    RETURN_IF_ERROR(CheckSmallBatchedProduct(gemm));
  } else {
    RETURN_IF_ERROR(CheckServingProduct(gemm, plan));
    dnn.weight_node = plan.slots[gemm.b.slot].node;
  }
  try {
    const dnnl::matmul::primitive_desc pd =
        gemm.batched ? BatchedMatmulPd(gemm, gemm.batch)
                     : MatmulPd(gemm, 0, gemm.m, 0, gemm.n);
    dnn.impl = pd.impl_info_str();
  } catch (const dnnl::error& e) {
    return absl::UnimplementedError(
        absl::StrCat("oneDNN has no matmul for it: ", e.what()));
  }
  if (gemm.batched && !absl::StartsWith(dnn.impl, "brg")) {
    return absl::UnimplementedError(absl::StrCat(
        "oneDNN's batched matmul for it is ", dnn.impl,
        ", not brgemm (gemm:jit generates its kernels at a process's first "
        "use)"));
  }
  if (absl::StartsWith(dnn.impl, "ref")) {
    return absl::UnimplementedError(absl::StrCat(
        "oneDNN's matmul for it is its reference one (", dnn.impl, ")"));
  }
  return dnn;
}

absl::StatusOr<std::unique_ptr<const StepRunner>> MakeOneDnnGemmStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool) {
  if (step.gemm == nullptr || !step.gemm->onednn.has_value()) {
    return absl::InternalError("a oneDNN matmul step without a oneDNN plan");
  }
  auto runner = std::make_unique<OneDnnGemmStep>(step, fn, std::move(pool));
  RETURN_IF_ERROR(runner->Init(graph));
  return std::unique_ptr<const StepRunner>(std::move(runner));
}

}  // namespace guardjit
