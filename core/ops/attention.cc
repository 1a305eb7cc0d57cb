// Scaled dot-product attention (aten.scaled_dot_product_attention): the
// shape and dtype rules. The reference kernel is runtime/kernels/attention.cc;
// compiled host programs run it as one attention step
// (jit/steps/attention_step.h), and jit/attention_fusion.h rewrites the
// decomposition torch.export writes for it back into this op.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/register_ops.h"
#include "core/shape_util.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

using MetaResult = absl::StatusOr<std::vector<TensorMeta>>;

absl::Status ArgError(absl::string_view arg, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument '", arg, "': ", what));
}

// query (N..., L, E), key (N..., S, E), value (N..., S, Ev), attn_mask
// (bool, or query's dtype) broadcastable to (N..., L, S) -> (N..., L, Ev).
// Inference only: dropout_p 0, and no grouped-query broadcast.
MetaResult ScaledDotProductAttentionMeta(const MetaArgs& args) {
  const TensorMeta q = args.tensor(0), k = args.tensor(1), v = args.tensor(2);
  const std::optional<TensorMeta> mask = args.optional_tensor(3);
  if (q.dim() < 2) {
    return ArgError(
        "query",
        absl::StrCat("expected at least 2 dims (..., L, E), got ", q.dim()));
  }
  for (const auto& [t, name] : {std::pair{&k, "key"}, {&v, "value"}}) {
    if (t->dim() != q.dim()) {
      return ArgError(name, absl::StrCat("expected ", q.dim(),
                                         " dims like query, got ", t->dim()));
    }
    if (t->dtype != q.dtype) {
      return ArgError(
          name, absl::StrCat("expected query's dtype ", DTypeName(q.dtype),
                             ", got ", DTypeName(t->dtype)));
    }
    for (int d = 0; d + 2 < q.dim(); ++d) {
      if (t->sizes[d] != q.sizes[d]) {
        return ArgError(
            name,
            absl::StrCat("batch dims ", ShapeToString(t->sizes),
                         " do not match query's ", ShapeToString(q.sizes)));
      }
    }
  }
  if (!IsFloating(q.dtype)) {
    return ArgError("query", absl::StrCat("expected a floating dtype, got ",
                                          DTypeName(q.dtype)));
  }
  const int r = q.dim();
  if (k.sizes[r - 1] != q.sizes[r - 1]) {
    return ArgError(
        "key",
        absl::StrCat("embedding size ", k.sizes[r - 1].ToString(),
                     " does not match query's ", q.sizes[r - 1].ToString()));
  }
  if (v.sizes[r - 2] != k.sizes[r - 2]) {
    return ArgError(
        "value",
        absl::StrCat("sequence length ", v.sizes[r - 2].ToString(),
                     " does not match key's ", k.sizes[r - 2].ToString()));
  }
  if (args.float_arg(4) != 0.0) {
    return ArgError("dropout_p",
                    absl::StrCat("only 0 is supported (inference), got ",
                                 args.float_arg(4)));
  }
  const bool causal = args.bool_arg(5);
  if (args.bool_arg(7)) {
    return ArgError("enable_gqa", "grouped-query attention is not supported");
  }
  if (mask.has_value()) {
    if (causal) {
      return ArgError("attn_mask",
                      "an explicit mask should not be set when is_causal");
    }
    if (mask->dtype != DType::kBool && mask->dtype != q.dtype) {
      return ArgError(
          "attn_mask",
          absl::StrCat("expected bool or query's dtype ", DTypeName(q.dtype),
                       ", got ", DTypeName(mask->dtype)));
    }
    SymShape scores(q.sizes.begin(), q.sizes.end() - 1);
    scores.push_back(k.sizes[r - 2]);
    absl::StatusOr<SymShape> b = BroadcastShapes(mask->sizes, scores);
    if (!b.ok() || *b != scores) {
      return ArgError("attn_mask",
                      absl::StrCat("shape ", ShapeToString(mask->sizes),
                                   " cannot be broadcast to the scores' shape ",
                                   ShapeToString(scores)));
    }
  }
  SymShape out(q.sizes.begin(), q.sizes.end() - 1);
  out.push_back(v.sizes[r - 1]);
  return std::vector<TensorMeta>{{q.dtype, out, q.device}};
}

}  // namespace

absl::Status RegisterAttentionOps(OpRegistry& registry) {
  return registry.Register(
      "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
      "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, "
      "float? scale=None, bool enable_gqa=False) -> Tensor",
      ScaledDotProductAttentionMeta);
}

}  // namespace guardjit
