#ifndef GUARDJIT_JIT_ATTENTION_FUSION_H_
#define GUARDJIT_JIT_ATTENTION_FUSION_H_

// Attention back in one piece: torch.export writes
// F.scaled_dot_product_attention (and attention spelled out with matmul and
// softmax) as a chain of ATen ops, which the JIT would run as two batched
// products around three softmax kernels and copies of q and k^T scaled.
// FuseAttention finds each chain
//
//   scores = bmm(view(expand(q * c1)), view(expand(k^T * c2)))
//   scores = view(scores) [* or / constants] [+ float bias | where(m, -inf, .)]
//   p = _softmax(scores, -1), made safe (torch's _safe_softmax: where every
//       score of a row is -inf, zeros: where(!any(scores != -inf), 0, p))
//   out = bmm(view(expand(p)), view(expand(v)))
//
// and replaces it with aten.scaled_dot_product_attention(q, k, v, mask,
// scale = c1 * c2 * ...), which host programs run as one attention step
// (jit/steps/attention_step.h). The rewrite is exact up to rounding: the
// scale is applied once to the product instead of to q and k^T, a bool mask
// puts -inf where `where` would, a float bias is added after the scale as
// before. Chains whose softmax is not made safe (a fully masked row would be
// NaN there, zeros in the fused op) are left alone, as is anything whose
// intermediate values other nodes read.

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "core/shape_inference.h"

namespace guardjit {

struct FusedAttention {
  std::shared_ptr<const Graph> graph;  // the input graph when none fused
  int fused = 0;                       // attention chains replaced
};

// `metas`: the graph's node metadata (static shapes).
absl::StatusOr<FusedAttention> FuseAttention(std::shared_ptr<const Graph> graph,
                                             const GraphMeta& metas);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_ATTENTION_FUSION_H_
