#ifndef GUARDJIT_JIT_STEPS_CONV_STEP_H_
#define GUARDJIT_JIT_STEPS_CONV_STEP_H_

// An extern convolution (aten.convolution.default, not transposed): on the
// CPU a float32 one runs on oneDNN (`onednn` below, onednn_conv.h); the
// others (float64, or all with GJ_ONEDNN=0) run here as im2col + BLAS GEMM
// per batch image and group, each image's output handed to a compiled
// epilogue kernel while it is still in cache. As in
// gemm_step.h, the convolution's result never exists in memory as a whole:
// BLAS writes one image of it into per-thread scratch, and the epilogue
// (the bias broadcast over channels, activations, a residual add, ... fused
// by conv_epilogue.h) reads it from there and stores the step's outputs.
// A CUDA device runs the same plan differently (ConvStep::device,
// jit/cuda/device_conv_step.h): an im2col kernel over the whole batch,
// cuBLASLt products, then the epilogue once over the whole result.

#include <array>
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

struct ConvStep {
  // Spatial extents as 3-D ones: a 1-D or 2-D convolution has leading
  // spatial dims of size 1 (stride 1, no padding, dilation 1).
  using Dims3 = std::array<int64_t, 3>;

  std::string target;             // the graph node's op, for plans and logs
  DType dtype = DType::kFloat32;  // float32 or float64
  int spatial = 2;                // spatial dims: 1 to 3
  int64_t batch = 1, groups = 1;
  int64_t in_channels = 1, out_channels = 1;  // per group
  Dims3 in = {1, 1, 1}, out = {1, 1, 1}, kernel = {1, 1, 1};
  Dims3 stride = {1, 1, 1}, padding = {0, 0, 0}, dilation = {1, 1, 1};
  FixedRef input;   // [N, groups * in_channels, in...]
  FixedRef weight;  // [groups * out_channels, in_channels, kernel...]
  // The epilogue kernel's buffer parameter that reads the convolution's
  // result, indexed as the contiguous [N, groups * out_channels, out...]
  // tensor; its outer loop 0 runs over N.
  int product_param = -1;

  // A dynamic entry's convolution: its batch and input as expressions over
  // the entry's symbols (every other extent is fixed), which Bind evaluates
  // per call (`batch` and `input` above then hold a batch of 1).
  struct Symbolic {
    IndexExpr batch;
    TensorRef input;
  };
  std::optional<Symbolic> symbolic;

  // A device plan's convolution (jit/cuda/device_conv_step.h): its GEMMs run
  // on cuBLASLt, over the column matrices that the kernel step before it (an
  // im2col kernel) wrote into slot `cols_slot` ([N, groups, rows(), cols()],
  // contiguous), or over the input itself where `cols_slot` is -1 (a
  // pointwise convolution whose input cuBLASLt reads in place). The
  // epilogue then runs once over the whole result, unless it only stores
  // it (no bias, no consumer): then `out_slot` is the step's output, which
  // cuBLASLt writes itself.
  struct Device {
    int cols_slot = -1;
    int out_slot = -1;
  };
  std::optional<Device> device;

  // A host plan's float32 convolution that oneDNN computes
  // (jit/steps/onednn_conv.h): into scratch in oneDNN's layout for it, which
  // the epilogue kernel reads (its product loads indexed for that layout,
  // its outer loops over channels first so that the pool splits them even at
  // batch 1), instead of im2col and BLAS per image.
  struct OneDnn {
    // The result's layout: channel blocks of `block` (8 or 16: nChw8c,
    // nChw16c), 0 for channels last (nhwc), 1 for plain (nchw).
    int block = 1;
    // Graph nodes of the weight and the bias when they are graph constants:
    // the weight is then reordered into the primitive's layout once, when
    // the program is built, and the bias is added by oneDNN (else by the
    // epilogue); -1 otherwise.
    int weight_node = -1;
    int bias_node = -1;
    std::optional<FixedRef> bias;
    std::string impl;  // oneDNN's implementation: "brgconv:avx512_core"
    // The epilogue kernel's parameter of the result when oneDNN writes the
    // result straight into it (channels last, and the epilogue only a copy,
    // which then does not run); -1: the epilogue stores it.
    int result_param = -1;
    // The epilogue kernel's output parameter it stores at the very element
    // it reads the result from (one pointwise store stage, channels last):
    // oneDNN then writes the result into that output and the epilogue runs
    // over it in place, part by part while the part is in cache; -1: the
    // result goes to scratch first.
    int in_place_param = -1;
    // The epilogue as the library's own loop (pointwise_epilogue.h), when
    // it is act(result) or act(result + residual) stored in place: oneDNN
    // writes the result into `result_param` (the epilogue's output), the
    // loop runs over each part of it right after the part, and the epilogue
    // kernel is neither compiled nor run.
    std::optional<PointwiseEpilogue> pointwise;
  };
  std::optional<OneDnn> onednn;

  // The step at a call's symbol values (a copy of a dynamic step).
  absl::StatusOr<ConvStep> Bind(absl::Span<const int64_t> symbols) const;

  // Rows of an image's column matrix per group: in_channels x kernel volume.
  int64_t rows() const;
  // Its columns: the output positions of one image.
  int64_t cols() const;
  // A 1x1 kernel at stride 1 without padding reads the image as it is: its
  // column matrix is the input itself (when BLAS can read it in place).
  bool pointwise() const;

  // "conv aten.convolution.default float32 [8x64x56x56] * [64x64x3x3]
  // stride 1x1 padding 1x1 dilation 1x1 groups 1", [s0x64x56x56] * ...
  // when dynamic; a device step adds " on cuBLASLt over im2col columns in
  // slot 7" or " on cuBLASLt reading the input in place", and " into slot
  // 3" when cuBLASLt writes the output itself; a oneDNN step adds " on
  // oneDNN brgconv:avx512_core into nChw16c".
  std::string ToString() const;
};

// The stride of dims [first, sizes.size()) of a tensor read as one dim,
// when they can be (each dim of size > 1 steps over all later ones).
std::optional<int64_t> FlatStride(const Shape& sizes, const Shape& strides,
                                  size_t first);

// Runs `step` (bound to the call's `symbols` when dynamic): for each batch
// image, im2col into scratch, one GEMM per group into the image's slice of
// the result (in scratch), then `epilogue` over that image with `params` (its
// buffer pointers; the result's entry is replaced by the scratch) and
// `symbols` as its size parameters. `slots` holds the program's memory, where
// the input and weight live. With more than one `pool` thread and enough
// work, images run in parallel on the pool with one BLAS thread inside each;
// with fewer images than threads (a serving call at batch 1) each large
// image's work is split across the pool instead (im2col by channels, the
// GEMM by output channels, or whole groups per chunk), so OpenBLAS's own
// threads, which spin after each call and then compete with the pool's, are
// not woken; with a one-thread pool OpenBLAS runs one thread too.
absl::Status RunConvStep(const ConvStep& step, CompiledKernelFn epilogue,
                         absl::Span<void* const> params,
                         absl::Span<const Tensor> slots,
                         absl::Span<const int64_t> symbols, ThreadPool& pool);

// Images per chunk of a parallel run: chunks of at least 2^20 multiply-adds.
// A step whose batch is no more than this runs on the calling thread.
int64_t ConvImagesPerChunk(const ConvStep& step);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_CONV_STEP_H_
