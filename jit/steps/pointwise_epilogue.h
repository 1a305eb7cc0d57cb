#ifndef GUARDJIT_JIT_STEPS_POINTWISE_EPILOGUE_H_
#define GUARDJIT_JIT_STEPS_POINTWISE_EPILOGUE_H_

// The commonest epilogues of a convolution or a packed product
// (jit/steps/packed_gemm.h: a linear layer's bias, activation and
// residual, row by row), run by the library's own loop
// instead of a compiled kernel: act(result) or act(result + residual), act
// none, relu, a maximum with a constant or a clamp (relu6, hardtanh), over a
// result whose elements the epilogue stores where it reads them (a oneDNN
// convolution's channels-last result written straight into the epilogue's
// output: ConvStep::OneDnn::pointwise). A model's convolutions then compile
// nothing (mobilenet_v2 has 44 such epilogues). The loop follows the loop
// IR's semantics exactly (relu of NaN is NaN; maximum and minimum propagate
// NaN and order -0 below +0), which oneDNN's own post-ops do not (its relu
// and clip give 0 for NaN), so it is not handed to oneDNN. Its tanh-GELU
// evaluates the compiled kernels' expansion of tanh (the same polynomial,
// exponential and FMAs), so within a rounding or two of theirs.

#include <cstdint>
#include <optional>
#include <string>

#include "jit/lowering/loop_ir.h"

namespace guardjit {

struct PointwiseEpilogue {
  // The epilogue kernel's parameter added to the result (read at the
  // element stored), or -1.
  int residual_param = -1;
  // A second one added to the first before their sum joins the result,
  // act(result + (residual + residual2)) (a transformer's residual stream
  // recomputed in the epilogue of its next product), or -1. Its runner
  // adds the two first (RunPointwiseEpilogue takes one).
  int residual2_param = -1;
  enum class Act {
    kNone,
    kRelu,     // x < 0 ? 0 : x
    kMaximum,  // maximum(x, lo)
    kClamp,    // minimum(maximum(x, lo), hi)
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), tanh as the
    // compiled kernels expand it (jit/llvm/llvm_math.h): GPT-2's MLP.
    kGeluTanh,
  };
  Act act = Act::kNone;
  float lo = 0, hi = 0;

  // "residual add + clamp to [0, 6]", for plans and explain.
  std::string ToString() const;
};

// `v` as act(x) for an activation PointwiseEpilogue runs: relu(x),
// maximum(x, c), or minimum(maximum(x, lo), hi) (relu6, hardtanh), with
// float constants, or gelu_tanh(x), all of float32; sets *x. nullopt for
// anything else.
std::optional<PointwiseEpilogue> MatchPointwiseActivation(const ValueExpr& v,
                                                          ValueExpr* x);

// Whether epilogues may be planned as PointwiseEpilogues
// (GJ_POINTWISE_EPILOGUES is not "0"; with "0" they stay compiled kernels,
// for comparisons).
bool PointwiseEpiloguesEnabled();

// The vector widths the loop is compiled for: the widest the host has
// (kBest), or one of them for tests (the host must have it).
enum class PointwiseIsa { kBest, kAvx512, kAvx2, kBaseline };

// Whether the host runs `isa`'s loop.
bool HostHasPointwiseIsa(PointwiseIsa isa);

// out[i] = act(in[i] + residual[i]) (without the add where `residual` is
// null) for i in [0, n); `out` may be `in`.
void RunPointwiseEpilogue(const PointwiseEpilogue& e, const float* in,
                          const float* residual, float* out, int64_t n,
                          PointwiseIsa isa = PointwiseIsa::kBest);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_POINTWISE_EPILOGUE_H_
