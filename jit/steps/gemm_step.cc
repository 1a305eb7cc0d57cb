#include "jit/steps/gemm_step.h"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"
#include "jit/lowering/lowering.h"
#include "runtime/blas_panels.h"
#include "runtime/kernels/gemm.h"
#include "runtime/tensor_copy.h"
#include "runtime/thread_pool.h"

namespace guardjit {
namespace {

// A panel of output this size stays in L2 (2 MiB and up on current x86
// server cores) beside the blocks of a and b that BLAS packs.
constexpr int64_t kPanelBytes = int64_t{1} << 20;

// One operand as BLAS reads it: its [B, R, C] view (a contiguous copy when
// its strides have no BLAS layout, kept alive here) and the layout.
struct Operand {
  Tensor view;
  BlasMatrix layout;
};

absl::StatusOr<Operand> PrepareOperand(const FixedRef& ref, bool batched,
                                       absl::Span<const Tensor> slots) {
  Tensor view = slots[ref.slot].AsStrided(ref.sizes, ref.strides, ref.offset);
  if (!batched) view = AsBatchOfOne(view);
  std::optional<BlasMatrix> layout =
      BlasLayout(view.size(1), view.size(2), view.stride(1), view.stride(2));
  if (!layout.has_value()) {
    ASSIGN_OR_RETURN(view, Contiguous(view));
    layout =
        BlasLayout(view.size(1), view.size(2), view.stride(1), view.stride(2));
    if (!layout.has_value()) {
      return absl::InternalError("a contiguous copy has no BLAS layout");
    }
  }
  return Operand{std::move(view), *layout};
}

// c = alpha * a @ b for one [m, n] block of row-major c.
void Gemm(const Operand& a, int64_t a_offset, const Operand& b,
          int64_t b_offset, int64_t m, int64_t n, int64_t k, double alpha,
          DType dtype, void* c, int64_t ldc = -1) {
  const auto bldc = static_cast<blasint>(ldc < 0 ? n : ldc);
  const auto bm = static_cast<blasint>(m), bn = static_cast<blasint>(n),
             bk = static_cast<blasint>(k);
  if (m == 1) {
    // One row (batch-1 linear layers, a classifier head): a matrix-vector
    // product, which streams b once; OpenBLAS's sgemm at m = 1 ran the
    // 1280x1000 head of mobilenet_v2 at half the memory bandwidth.
    const blasint incx =
        a.layout.trans == CblasNoTrans ? 1 : static_cast<blasint>(a.layout.ld);
    // b is [k, n] row-major (NoTrans: y = b^T x) or its transpose stored
    // [n, k] (Trans: y = b x).
    const CBLAS_TRANSPOSE t =
        b.layout.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
    const blasint rows = b.layout.trans == CblasNoTrans ? bk : bn;
    const blasint cols = b.layout.trans == CblasNoTrans ? bn : bk;
    if (dtype == DType::kFloat32) {
      cblas_sgemv(CblasRowMajor, t, rows, cols, static_cast<float>(alpha),
                  b.view.data_as<float>() + b_offset, b.layout.ld,
                  a.view.data_as<float>() + a_offset, incx, 0.0f,
                  static_cast<float*>(c), 1);
    } else {
      cblas_dgemv(CblasRowMajor, t, rows, cols, alpha,
                  b.view.data_as<double>() + b_offset, b.layout.ld,
                  a.view.data_as<double>() + a_offset, incx, 0.0,
                  static_cast<double*>(c), 1);
    }
    return;
  }
  if (dtype == DType::kFloat32) {
    cblas_sgemm(CblasRowMajor, a.layout.trans, b.layout.trans, bm, bn, bk,
                static_cast<float>(alpha), a.view.data_as<float>() + a_offset,
                a.layout.ld, b.view.data_as<float>() + b_offset, b.layout.ld,
                0.0f, static_cast<float*>(c), bldc);
  } else {
    cblas_dgemm(CblasRowMajor, a.layout.trans, b.layout.trans, bm, bn, bk,
                alpha, a.view.data_as<double>() + a_offset, a.layout.ld,
                b.view.data_as<double>() + b_offset, b.layout.ld, 0.0,
                static_cast<double*>(c), bldc);
  }
}

// " with cuBLASLt's epilogue relu+bias" (bare: "none"), then " and C * 0.5"
// for a bias read as cuBLASLt's C.
std::string DeviceEpilogueText(const GemmStep::DeviceEpilogue& e) {
  using Activation = GemmStep::DeviceEpilogue::Activation;
  const char* activation = e.activation == Activation::kRelu       ? "relu"
                           : e.activation == Activation::kGeluTanh ? "gelu_tanh"
                                                                   : "";
  std::string text = activation;
  if (e.bias.has_value()) text += text.empty() ? "bias" : "+bias";
  if (text.empty()) text = "none";
  return absl::StrCat(" with cuBLASLt's epilogue ", text,
                      e.c.has_value() ? absl::StrCat(" and C * ", e.beta) : "");
}

}  // namespace

absl::StatusOr<GemmStep> GemmStep::Bind(
    absl::Span<const int64_t> symbols) const {
  if (!symbolic.has_value()) return *this;
  GemmStep bound = *this;
  bound.symbolic.reset();
  bound.batch = symbolic->batch.Evaluate(symbols);
  bound.m = symbolic->m.Evaluate(symbols);
  bound.n = symbolic->n.Evaluate(symbols);
  bound.k = symbolic->k.Evaluate(symbols);
  constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
  for (int64_t extent : {bound.batch, bound.m, bound.n, bound.k}) {
    if (extent < 1 || extent > kMaxExtent) {
      return absl::InvalidArgumentError(absl::StrCat(
          ToString(), ": extent ", extent, " outside [1, ", kMaxExtent, "]"));
    }
  }
  bound.a = BindRef(symbolic->a, symbols);
  bound.b = BindRef(symbolic->b, symbols);
  if (symbolic->bias.has_value() && bound.device_epilogue.has_value()) {
    bound.device_epilogue->bias = BindRef(*symbolic->bias, symbols);
  }
  return bound;
}

std::string GemmStep::Packed::Pointwise::ToString() const {
  const std::string rest = ops.ToString();
  if (!bias.has_value()) return rest;
  return rest == "a copy" ? "bias" : absl::StrCat("bias + ", rest);
}

std::string GemmStep::ToString() const {
  // "[AxB]", with ^T when the last dim is not the unit-stride one.
  const auto matrix = [](std::vector<std::string> sizes, bool transposed) {
    return absl::StrCat("[", absl::StrJoin(sizes, "x"), "]",
                        transposed ? "^T" : "");
  };
  const auto fixed = [&](const FixedRef& r) {
    const size_t d = r.sizes.size();
    std::vector<std::string> sizes;
    for (int64_t v : r.sizes) sizes.push_back(absl::StrCat(v));
    return matrix(sizes, r.sizes[d - 1] > 1 && r.strides[d - 1] != 1);
  };
  const auto symbolic_ref = [&](const TensorRef& r) {
    const size_t d = r.sizes.size();
    std::vector<std::string> sizes;
    for (const IndexExpr& v : r.sizes) sizes.push_back(SizeText(v));
    return matrix(sizes,
                  !r.sizes[d - 1].is_const(1) && !r.strides[d - 1].is_const(1));
  };
  return absl::StrCat(
      "gemm ", target, " ", DTypeName(dtype), " ",
      symbolic ? symbolic_ref(symbolic->a) : fixed(a), " @ ",
      symbolic ? symbolic_ref(symbolic->b) : fixed(b),
      alpha != 1 ? absl::StrCat(" * ", alpha) : "",
      device_epilogue ? DeviceEpilogueText(*device_epilogue) : "",
      packed.has_value() && packed->pointwise.has_value()
          ? absl::StrCat(" with ", packed->pointwise->ToString(),
                         " by the library")
          : "");
}

namespace {

// Column splits of a product with few rows: fewer rows than this, at least
// this many multiply-adds, chunks of whole multiples of this many columns.
constexpr int64_t kMaxColumnSplitRows = 256;
constexpr int64_t kMinColumnSplitMacs = int64_t{1} << 20;
constexpr int64_t kColumnAlign = 16;

// Splitting across threads costs wake-ups (and OpenBLAS's thread count
// switched twice): a part of a parallel split gets at least this much work,
// so small products (an MLP at batch 256) run on the calling thread.
constexpr int64_t kMinParallelMacs = int64_t{1} << 20;

// out (row-major [M, N], row stride N) = alpha * a @ b, ranges of whole
// multiples of kColumnAlign columns split across `pool`, one per thread.
void GemmByColumns(const GemmStep& step, const Operand& a, const Operand& b,
                   char* out, ThreadPool& pool) {
  const int64_t item = ItemSize(step.dtype);
  const int64_t columns = (step.n + pool.num_threads() - 1) /
                          pool.num_threads();  // rounded up to kColumnAlign
  pool.ParallelFor(step.n,
                   (columns + kColumnAlign - 1) / kColumnAlign * kColumnAlign,
                   [&](int64_t n0, int64_t n1) {
                     const int64_t b_offset =
                         b.layout.trans == CblasNoTrans ? n0 : n0 * b.layout.ld;
                     Gemm(a, 0, b, b_offset, step.m, n1 - n0, step.k,
                          step.alpha, step.dtype, out + n0 * item, step.n);
                   });
}

// A bare product written straight into `result` (contiguous [B,] M, N):
// with more than one pool thread, products of a batch or row ranges (column
// ranges for few rows) in parallel, each with at least kMinParallelMacs of
// work; OpenBLAS on one thread throughout (see RunGemmStep).
absl::Status RunIntoResult(const GemmStep& step, const Operand& a,
                           const Operand& b, void* result, ThreadPool& pool) {
  char* const out = static_cast<char*>(result);
  const int64_t item = ItemSize(step.dtype);
  const int threads = pool.num_threads();
  SingleThreadedBlas one_thread;
  if (step.batched) {
    const int64_t per_product = std::max<int64_t>(1, step.m * step.n * step.k);
    const int64_t grain = std::max<int64_t>(1, kMinParallelMacs / per_product);
    const auto run = [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        Gemm(a, i * a.view.stride(0), b, i * b.view.stride(0), step.m, step.n,
             step.k, step.alpha, step.dtype, out + i * step.m * step.n * item);
      }
    };
    if (threads > 1 && step.batch > grain) {
      pool.ParallelFor(step.batch, grain, run);
    } else {
      run(0, step.batch);
    }
    return absl::OkStatus();
  }
  const int64_t macs = step.m * step.n * step.k;
  if (threads < 2 || macs < 2 * kMinParallelMacs) {
    Gemm(a, 0, b, 0, step.m, step.n, step.k, step.alpha, step.dtype, out);
    return absl::OkStatus();
  }
  if (step.m < kMaxColumnSplitRows && step.n >= 2 * kColumnAlign) {
    GemmByColumns(step, a, b, out, pool);
    return absl::OkStatus();
  }
  pool.ParallelFor(
      step.m, (step.m + threads - 1) / threads, [&](int64_t m0, int64_t m1) {
        Gemm(a, m0 * a.view.stride(1), b, 0, m1 - m0, step.n, step.k,
             step.alpha, step.dtype, out + m0 * step.n * item);
      });
  return absl::OkStatus();
}

}  // namespace

int64_t GemmPanelUnits(const GemmStep& step, int num_threads) {
  const int64_t row_macs = std::max<int64_t>(1, step.n * step.k);
  if (step.batched) {
    const int64_t per_thread =
        (step.batch + num_threads - 1) / std::max(num_threads, 1);
    const int64_t min_batches =
        kMinParallelMacs / std::max<int64_t>(1, step.m * row_macs);
    return std::clamp<int64_t>(std::max(per_thread, min_batches), 1,
                               std::max<int64_t>(1, step.batch));
  }
  const int64_t row_bytes = step.n * ItemSize(step.dtype);
  // BLAS packs all of b (k x n) again on every call, while a panel of r
  // rows saves the epilogue a pass over r x n of product: panels of fewer
  // than k rows would repack more than they save. (Measured on 1024^3
  // float32, one thread: 128-row panels reach 0.83 of one sgemm call,
  // 256 rows 0.93, 512 rows 0.96, 1024 rows 0.995.)
  int64_t rows = std::max(kPanelBytes / row_bytes, step.k);
  if (num_threads > 1) {
    rows = std::min(rows, std::max((step.m + num_threads - 1) / num_threads,
                                   kMinParallelMacs / row_macs));
  }
  return std::clamp<int64_t>(rows, 1, step.m);
}

absl::Status RunGemmStep(const GemmStep& dynamic_or_static,
                         CompiledKernelFn epilogue,
                         absl::Span<void* const> params,
                         absl::Span<const Tensor> slots,
                         absl::Span<const int64_t> symbols, ThreadPool& pool) {
  std::optional<GemmStep> bound;
  if (dynamic_or_static.symbolic.has_value()) {
    ASSIGN_OR_RETURN(bound, dynamic_or_static.Bind(symbols));
  }
  const GemmStep& step = bound.has_value() ? *bound : dynamic_or_static;
  ASSIGN_OR_RETURN(const Operand a,
                   PrepareOperand(step.a, step.batched, slots));
  ASSIGN_OR_RETURN(const Operand b,
                   PrepareOperand(step.b, step.batched, slots));
  const int threads = pool.num_threads();
  if (step.result_param >= 0) {
    return RunIntoResult(step, a, b, params[step.result_param], pool);
  }
  // Every product runs on this pool with OpenBLAS held to one thread: its
  // own workers spin after each threaded call, competing with the pool's
  // threads for the cores, and wait for each other with sched_yield, which
  // on a loaded machine costs a time slice per wait (an MLP at batch 8 on
  // two threads beside a busy loop on each core took 292x its unloaded
  // time that way; perf/models).
  const int64_t units = step.batched ? step.batch : step.m;
  const int64_t unit_elems = step.batched ? step.m * step.n : step.n;
  const int64_t item = ItemSize(step.dtype);
  const int64_t panel = GemmPanelUnits(step, threads);
  const int64_t num_panels = (units + panel - 1) / panel;
  const size_t scratch_bytes = static_cast<size_t>(panel * unit_elems * item);
  // A product of few rows (a serving batch) is split by columns instead:
  // row panels would each pack all of b, which costs about what their few
  // rows of multiply-adds do. The epilogue then runs over all of it.
  if (!step.batched && threads > 1 && step.m < kMaxColumnSplitRows &&
      step.m * step.n * step.k >= kMinColumnSplitMacs &&
      step.n >= 2 * kColumnAlign) {
    SingleThreadedBlas one_thread;
    PanelScratch scratch;
    char* const out = static_cast<char*>(
        scratch.Get(static_cast<size_t>(step.m * step.n * item)));
    GemmByColumns(step, a, b, out, pool);
    absl::InlinedVector<void*, 16> args(params.begin(), params.end());
    args[step.product_param] = out;
    epilogue(args.data(), symbols.data(), 0, step.m);
    return absl::OkStatus();
  }

  const auto run_panels = [&](int64_t first, int64_t last) {
    PanelScratch scratch;
    char* const out = static_cast<char*>(scratch.Get(scratch_bytes));
    absl::InlinedVector<void*, 16> args(params.begin(), params.end());
    for (int64_t p = first; p < last; ++p) {
      const int64_t begin = p * panel;
      const int64_t end = std::min(units, begin + panel);
      if (step.batched) {
        for (int64_t i = begin; i < end; ++i) {
          Gemm(a, i * a.view.stride(0), b, i * b.view.stride(0), step.m, step.n,
               step.k, step.alpha, step.dtype,
               out + (i - begin) * unit_elems * item);
        }
      } else {
        Gemm(a, begin * a.view.stride(1), b, 0, end - begin, step.n, step.k,
             step.alpha, step.dtype, out);
      }
      // The epilogue indexes the product as the whole output: point it
      // `begin` units before the panel. Integer arithmetic, since that
      // address lies outside the scratch allocation.
      args[step.product_param] = reinterpret_cast<void*>(
          reinterpret_cast<uintptr_t>(out) -
          static_cast<uintptr_t>(begin * unit_elems * item));
      epilogue(args.data(), symbols.data(), begin, end);
    }
  };
  SingleThreadedBlas one_thread;
  if (threads > 1 && num_panels > 1) {
    pool.ParallelFor(num_panels, 1, run_panels);
  } else {
    run_panels(0, num_panels);
  }
  return absl::OkStatus();
}

absl::Status CheckServingProduct(const GemmStep& gemm, const Plan& plan) {
  if (gemm.dtype != DType::kFloat32 || gemm.batched ||
      gemm.symbolic.has_value()) {
    return absl::UnimplementedError("not a static float32 product");
  }
  if (gemm.m >= kServingMaxRows) {
    return absl::UnimplementedError(absl::StrCat(
        gemm.m, " rows: BLAS row panels keep the product in cache"));
  }
  if (gemm.b.slot < 0 || gemm.b.slot >= static_cast<int>(plan.slots.size()) ||
      plan.slots[gemm.b.slot].source != Slot::Source::kConstant) {
    return absl::UnimplementedError("b is not a graph constant");
  }
  return absl::OkStatus();
}

}  // namespace guardjit
