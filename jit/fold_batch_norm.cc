#include "jit/fold_batch_norm.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/constant_arena.h"
#include "core/graph_builder.h"
#include "core/graph_rewriter.h"
#include "core/status_macros.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

constexpr const char* kConvolution = "aten.convolution.default";
constexpr const char* kBatchNorm =
    "aten._native_batch_norm_legit_no_training.default";

// The constant node an argument names, or null (None, a literal, a computed
// value).
const Node* ConstantOf(const Graph& graph, const Arg& arg) {
  if (!arg.is_value()) return nullptr;
  const Node& node = graph.node(arg.as_value().node);
  return node.kind == NodeKind::kConstant ? &node : nullptr;
}

// Values of a constant as doubles, in row-major order.
absl::StatusOr<std::vector<double>> Values(const Tensor& t) {
  ASSIGN_OR_RETURN(const Tensor c, Contiguous(t));
  std::vector<double> out(static_cast<size_t>(c.numel()));
  if (c.dtype() == DType::kFloat32) {
    const float* p = c.data_as<float>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  } else {
    const double* p = c.data_as<double>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i];
  }
  return out;
}

absl::StatusOr<Tensor> TensorOf(DType dtype, const Shape& sizes,
                                const std::vector<double>& values,
                                const std::shared_ptr<Allocator>& arena) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, sizes, arena));
  if (dtype == DType::kFloat32) {
    float* p = t.data_as<float>();
    for (size_t i = 0; i < values.size(); ++i) {
      p[i] = static_cast<float>(values[i]);
    }
  } else {
    double* p = t.data_as<double>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  }
  return t;
}

// A batch norm to fold and the convolution it follows.
struct Fold {
  int conv = -1, norm = -1, getitem = -1;
  Tensor weight, bias;  // folded
};

// How many times each value (node << 16 | output) is referenced, getitems
// counted as references to their selected output.
absl::flat_hash_map<int64_t, int> References(const Graph& graph) {
  absl::flat_hash_map<int64_t, int> refs;
  std::function<void(const Arg&)> visit = [&](const Arg& a) {
    if (a.is_list()) {
      for (const Arg& item : a.as_list()) visit(item);
    } else if (a.is_value()) {
      ++refs[(int64_t{a.as_value().node} << 16) + a.as_value().index];
    }
  };
  for (const Node& node : graph.nodes()) {
    if (node.kind == NodeKind::kGetItem) {
      ++refs[(int64_t{node.args[0].as_value().node} << 16) +
             node.args[1].as_int()];
      continue;
    }
    for (const Arg& a : node.args) visit(a);
  }
  return refs;
}

// The fold of batch norm node `i`, when it can be folded; its weight and
// bias from `arena`.
absl::StatusOr<std::optional<Fold>> FoldOf(
    const Graph& graph, int i, const absl::flat_hash_map<int64_t, int>& refs,
    const std::shared_ptr<Allocator>& arena) {
  const Node& norm = graph.node(i);
  const auto count = [&](int node, int output) {
    auto it = refs.find((int64_t{node} << 16) + output);
    return it == refs.end() ? 0 : it->second;
  };
  if (norm.args.size() != 7 || !norm.args[0].is_value() ||
      !norm.args[6].is_number() || norm.args[6].is_bool() || count(i, 1) != 0 ||
      count(i, 2) != 0) {
    return std::nullopt;
  }
  const int c = norm.args[0].as_value().node;
  const Node& conv = graph.node(c);
  if (conv.target != kConvolution || conv.args.size() != 9 ||
      !conv.args[6].is_bool() || conv.args[6].as_bool() || count(c, 0) != 1) {
    return std::nullopt;
  }
  const Node* weight = ConstantOf(graph, conv.args[1]);
  const Node* bias = ConstantOf(graph, conv.args[2]);
  const Node* gamma = ConstantOf(graph, norm.args[1]);
  const Node* beta = ConstantOf(graph, norm.args[2]);
  const Node* mean = ConstantOf(graph, norm.args[3]);
  const Node* var = ConstantOf(graph, norm.args[4]);
  if (weight == nullptr || mean == nullptr || var == nullptr ||
      (bias == nullptr && !conv.args[2].is_none()) ||
      (gamma == nullptr && !norm.args[1].is_none()) ||
      (beta == nullptr && !norm.args[2].is_none())) {
    return std::nullopt;
  }
  const DType dtype = weight->constant.dtype();
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return std::nullopt;
  const int64_t channels = weight->constant.sizes()[0];
  for (const Node* p : {bias, gamma, beta, mean, var}) {
    if (p != nullptr &&
        (p->constant.dtype() != dtype || p->constant.dim() != 1 ||
         p->constant.sizes()[0] != channels)) {
      return std::nullopt;
    }
  }
  const double eps = norm.args[6].is_int()
                         ? static_cast<double>(norm.args[6].as_int())
                         : norm.args[6].as_float();
  ASSIGN_OR_RETURN(const std::vector<double> m, Values(mean->constant));
  ASSIGN_OR_RETURN(const std::vector<double> v, Values(var->constant));
  std::vector<double> g(channels, 1.0), bt(channels, 0.0), b(channels, 0.0);
  if (gamma != nullptr) {
    ASSIGN_OR_RETURN(g, Values(gamma->constant));
  }
  if (beta != nullptr) {
    ASSIGN_OR_RETURN(bt, Values(beta->constant));
  }
  if (bias != nullptr) {
    ASSIGN_OR_RETURN(b, Values(bias->constant));
  }
  std::vector<double> scale(channels);
  for (int64_t o = 0; o < channels; ++o) {
    scale[o] = g[o] / std::sqrt(v[o] + eps);
    b[o] = (b[o] - m[o]) * scale[o] + bt[o];
  }
  Fold fold;
  fold.conv = c;
  fold.norm = i;
  // The weight scaled per output channel straight into its new tensor (in
  // double, rounded once): no double copy of a large weight.
  ASSIGN_OR_RETURN(const Tensor w, Contiguous(weight->constant));
  const Shape sizes(w.sizes().begin(), w.sizes().end());
  ASSIGN_OR_RETURN(fold.weight, Tensor::Empty(dtype, sizes, arena));
  const int64_t per_channel = channels == 0 ? 0 : w.numel() / channels;
  auto scale_into = [&](const auto* in, auto* out) {
    using T = std::remove_pointer_t<decltype(out)>;
    for (int64_t o = 0; o < channels; ++o) {
      for (int64_t k = 0; k < per_channel; ++k) {
        const int64_t at = o * per_channel + k;
        out[at] = static_cast<T>(static_cast<double>(in[at]) * scale[o]);
      }
    }
  };
  if (dtype == DType::kFloat32) {
    scale_into(w.data_as<float>(), fold.weight.data_as<float>());
  } else {
    scale_into(w.data_as<double>(), fold.weight.data_as<double>());
  }
  ASSIGN_OR_RETURN(fold.bias, TensorOf(dtype, {channels}, b, arena));
  return fold;
}

// One block for the folded weights and biases of batch norms `norms`; null
// when none follows a convolution with a constant weight.
std::shared_ptr<Allocator> ArenaFor(const Graph& graph,
                                    const std::vector<int>& norms) {
  size_t capacity = 0;
  for (const int i : norms) {
    const Node& norm = graph.node(i);
    if (norm.args.empty() || !norm.args[0].is_value()) continue;
    const Node& conv = graph.node(norm.args[0].as_value().node);
    if (conv.target != kConvolution || conv.args.size() < 2) continue;
    const Node* weight = ConstantOf(graph, conv.args[1]);
    if (weight == nullptr || weight->constant.dim() == 0) continue;
    const Tensor& w = weight->constant;
    const size_t item = static_cast<size_t>(w.item_size());
    capacity +=
        ConstantArena::Rounded(static_cast<size_t>(w.numel()) * item) +
        ConstantArena::Rounded(static_cast<size_t>(w.sizes()[0]) * item);
  }
  if (capacity == 0) return nullptr;
  return ConstantArena::Create(capacity);
}

}  // namespace

absl::StatusOr<FoldedGraph> FoldBatchNorms(std::shared_ptr<const Graph> graph,
                                           ThreadPool* pool) {
  FoldedGraph out;
  const int n = static_cast<int>(graph->nodes().size());
  if (!graph->subgraphs().empty()) {
    out.graph = std::move(graph);
    return out;
  }
  const absl::flat_hash_map<int64_t, int> refs = References(*graph);
  std::vector<std::optional<Fold>> fold_at(n);  // by convolution node
  std::vector<int> norm_conv(n, -1);            // batch norm -> its conv
  std::vector<int> norms;
  for (int i = 0; i < n; ++i) {
    if (graph->node(i).target == kBatchNorm) norms.push_back(i);
  }
  // Scaling a model's weights is most of the fold: the batch norms are
  // split across the pool's threads, writing into one block
  // (core/constant_arena.h) sized for every convolution a batch norm follows
  // (the slices of those that do not fold are never touched).
  const std::shared_ptr<Allocator> arena = ArenaFor(*graph, norms);
  std::vector<absl::StatusOr<std::optional<Fold>>> folds(norms.size());
  const auto fold_range = [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      folds[k] = FoldOf(*graph, norms[k], refs, arena);
    }
  };
  if (pool != nullptr && norms.size() > 1) {
    pool->ParallelFor(static_cast<int64_t>(norms.size()), 1, fold_range);
  } else {
    fold_range(0, static_cast<int64_t>(norms.size()));
  }
  for (absl::StatusOr<std::optional<Fold>>& folded : folds) {
    ASSIGN_OR_RETURN(std::optional<Fold> fold, std::move(folded));
    if (!fold.has_value()) continue;
    norm_conv[fold->norm] = fold->conv;
    fold_at[fold->conv] = *std::move(fold);
    ++out.folded;
  }
  if (out.folded == 0) {
    out.graph = std::move(graph);
    return out;
  }
  GraphRewriter rw(*graph);
  for (int i = 0; i < n; ++i) {
    const Node& node = graph->node(i);
    const bool getitem_of_norm = node.kind == NodeKind::kGetItem &&
                                 norm_conv[node.args[0].as_value().node] >= 0;
    if (norm_conv[i] >= 0 || getitem_of_norm) {
      // The folded convolution stands for the batch norm's output 0.
      const int norm = norm_conv[i] >= 0 ? i : node.args[0].as_value().node;
      rw.Map(i, {rw.Remap(Arg::Value(ValueRef{norm_conv[norm], 0}))});
      continue;
    }
    if (!fold_at[i].has_value()) {
      RETURN_IF_ERROR(rw.Copy(i));
      continue;
    }
    auto [args, kwargs] =
        UnbindArgs(node, [&](const Arg& a) { return rw.Remap(a); });
    ASSIGN_OR_RETURN(ValueRef w,
                     rw.builder().AddConstant(
                         rw.UniqueName(absl::StrCat(node.name, "_weight")),
                         fold_at[i]->weight));
    ASSIGN_OR_RETURN(
        ValueRef b,
        rw.builder().AddConstant(
            rw.UniqueName(absl::StrCat(node.name, "_bias")), fold_at[i]->bias));
    args[1] = Arg::Value(w);
    args[2] = Arg::Value(b);
    ASSIGN_OR_RETURN(ValueRef ref,
                     rw.builder().AddNode(node.name, node.target,
                                          std::move(args), std::move(kwargs)));
    rw.Map(i, {Arg::Value(ref)}, /*copy_of_node=*/true);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> folded, rw.Finish());
  out.source_node = rw.source_node();
  out.graph = std::move(folded);
  return out;
}

}  // namespace guardjit
