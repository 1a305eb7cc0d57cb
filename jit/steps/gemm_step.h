#ifndef GUARDJIT_JIT_STEPS_GEMM_STEP_H_
#define GUARDJIT_JIT_STEPS_GEMM_STEP_H_

// An extern matrix product (mm, addmm, bmm) run by BLAS on panels of its
// output, each panel handed to a compiled epilogue kernel right after BLAS
// wrote it, while it is still in cache. The product never exists in memory
// as a whole: BLAS writes each panel into per-thread scratch, and the
// epilogue (bias, activation, residual add, ... fused by gemm_epilogue.h)
// reads it from there and stores the step's real outputs.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/tensor.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/extern_epilogue.h"
#include "jit/steps/pointwise_epilogue.h"
#include "runtime/index_expr.h"
#include "runtime/thread_pool.h"

namespace guardjit {

struct GemmStep {
  std::string target;             // the graph node's op, for plans and logs
  DType dtype = DType::kFloat32;  // float32 or float64 (device plans: also
                                  // float16 and bfloat16)
  bool batched = false;           // bmm: [B, M, K] @ [B, K, N]
  int64_t batch = 1, m = 0, n = 0, k = 0;  // all >= 1
  FixedRef a, b;     // [M, K] and [K, N], or [B, M, K] and [B, K, N]
  double alpha = 1;  // the product is scaled by alpha (addmm), never 0
  // The epilogue kernel's buffer parameter that reads the product, indexed
  // as the contiguous [B,] M, N tensor; its outer loop 0 runs over M (over B
  // when batched).
  int product_param = -1;
  // Host plans: a bare product (no bias or consumer fused after it) is
  // written by BLAS or oneDNN straight into the epilogue's output parameter
  // `result_param` (the contiguous [B,] M, N tensor), and the epilogue kernel,
  // a plain store, is not run. -1: the epilogue stores the outputs.
  int result_param = -1;

  // A dynamic entry's product: its extents and operands as expressions over
  // the entry's symbols, which Bind evaluates per call (the concrete fields
  // above are then unset).
  struct Symbolic {
    IndexExpr batch, m, n, k;
    TensorRef a, b;
    // device_epilogue->bias over the symbols (a GJ_DYNAMIC_DYNAMIC entry's
    // addmm bias, whose extent is a symbol), which Bind evaluates.
    std::optional<TensorRef> bias;
  };
  std::optional<Symbolic> symbolic;

  // Device plans (FuseGemmEpilogues with `device`): an epilogue that is only
  // act(product + beta * bias) stored contiguous, which cuBLASLt computes in
  // its place (the epilogue kernel is then not launched): addmm's bias either
  // as the fused epilogue's bias vector (n contiguous values, beta 1) or as
  // cuBLASLt's C matrix, D = act(alpha * A @ B + beta * C) (an [M, N] bias
  // with unit column stride, any beta). Other biases keep the kernel.
  struct DeviceEpilogue {
    enum class Activation { kNone, kRelu, kGeluTanh };
    Activation activation = Activation::kNone;
    // n contiguous values (addmm's, beta 1); in a dynamic step only its
    // slot until Bind fills it from Symbolic::bias.
    std::optional<FixedRef> bias;
    std::optional<FixedRef> c;  // [M, N], row stride >= N, column stride 1
    double beta = 0;            // C's scale (with c)
    int out_slot = -1;          // written as the contiguous [B,] M, N tensor
  };
  std::optional<DeviceEpilogue> device_epilogue;

  // Host plans (onednn_gemm.h): a float32 product of few rows whose b is a
  // graph constant (a linear layer's weight) runs on oneDNN's matmul with b
  // packed once, and a small batched product of two values on its batched
  // matmul (weight_node -1); `impl` is oneDNN's name for the implementation
  // ("brg:avx512_core").
  struct OneDnn {
    int weight_node = -1;  // the packed weight's constant node, or -1
    std::string impl;
  };
  std::optional<OneDnn> onednn;

  // Host plans (packed_gemm.h): the same products on code generated for
  // this product, b packed once into `kernel`'s panels. The step's code is
  // two kernels of the program's module, this one and then its epilogue
  // (where the epilogue runs).
  struct Packed {
    int weight_node = -1;
    Kernel kernel;  // packed_gemm set
    // The epilogue as the library's loop (pointwise_epilogue.h), when it is
    // act(product + bias + residual) (bias and residual optional) stored at
    // the element computed: the product is written straight into the
    // output (result_param) and the loop runs over each part's columns of
    // it right after them; the epilogue kernel is neither compiled nor run.
    struct Pointwise {
      // residual_param: the epilogue's parameter read at the element.
      PointwiseEpilogue ops;
      std::optional<FixedRef> bias;  // addmm's n contiguous values, beta 1
      // "bias + relu", for plans and explain.
      std::string ToString() const;
    };
    std::optional<Pointwise> pointwise;
  };
  std::optional<Packed> packed;

  // The step at a call's symbol values (a copy of a dynamic step, with its
  // extents checked as MatchProduct checks a static step's).
  absl::StatusOr<GemmStep> Bind(absl::Span<const int64_t> symbols) const;

  // "gemm aten.addmm.default f32 [1024x512] @ [512x256]^T", and for a
  // dynamic step "gemm aten.addmm.default f32 [(s0*16)x64] @ [64x192]^T".
  std::string ToString() const;
};

// Runs `step` (bound to the call's `symbols` when dynamic). With a
// `result_param`, BLAS writes the product there: products of a batch, or
// row ranges, split across `pool`. Else for each panel of
// the epilogue's outer loop 0, BLAS computes the panel's product into scratch
// and `epilogue` runs over the panel with `params` (its buffer pointers; the
// product's entry is replaced by the scratch) and the call's `symbols` as its
// size parameters. `slots` holds the program's memory, where the operands live.
// OpenBLAS always runs one thread here: with more than one `pool` thread,
// panels (row ranges, or products of a batch) run in parallel on the pool,
// and a product of few rows (fewer than 256: a serving batch) is split by
// column ranges across the pool instead, its epilogue then run once over
// the whole product. OpenBLAS's own workers spin after a threaded call and
// wait for each other with sched_yield, which on a loaded machine costs a
// time slice per wait.
absl::Status RunGemmStep(const GemmStep& step, CompiledKernelFn epilogue,
                         absl::Span<void* const> params,
                         absl::Span<const Tensor> slots,
                         absl::Span<const int64_t> symbols, ThreadPool& pool);

// Linear layers at a serving batch, which run on their weight packed once
// (packed_gemm.h, onednn_gemm.h): static float32 products, not batched, of
// fewer than kServingMaxRows rows (more stay BLAS, whose row panels keep
// each panel's product in cache for the epilogue), whose b is a graph
// constant. OK for such a product, else UNIMPLEMENTED saying why not.
inline constexpr int64_t kServingMaxRows = 256;
absl::Status CheckServingProduct(const GemmStep& gemm, const Plan& plan);

// Epilogue outer-loop iterations per panel: a panel of output that stays in
// L2, or k rows where that is more (BLAS repacks b on every call), split so
// that every thread gets one.
int64_t GemmPanelUnits(const GemmStep& step, int num_threads);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_GEMM_STEP_H_
