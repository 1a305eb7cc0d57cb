#include "jit/attention_fusion.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph_builder.h"
#include "core/graph_rewriter.h"
#include "core/status_macros.h"

namespace guardjit {
namespace {

constexpr char kSdpa[] = "aten.scaled_dot_product_attention.default";

// One attention chain and what replaces it.
struct Match {
  int bmm2 = -1;             // the node whose value the fused op takes over
  std::vector<int> removed;  // every node of the chain, bmm2 included
  Arg q, k, v;
  bool transpose_k = false;   // k holds k^T: transposed by a new node
  std::optional<Arg> bias;    // a float mask, added
  std::optional<Arg> cond;    // a bool mask: where(cond, -inf, .) ...
  bool keep_is_cond = false;  // ... or where(cond, ., -inf): cond keeps
  double scale = 1;
  bool view_out = false;  // q is [B, H, L, E]: the result is viewed as bmm2's
  Shape out_shape;
  int rank = 0;  // of q, k and v
};

class Matcher {
 public:
  Matcher(const Graph& graph, const GraphMeta& metas)
      : g_(graph), metas_(metas), consumers_(graph.nodes().size()) {
    for (size_t i = 0; i < graph.nodes().size(); ++i) {
      for (const Arg& a : graph.node(i).args) Visit(a, static_cast<int>(i));
    }
  }

  std::optional<Match> At(int softmax) const {
    Match m;
    const Node& s = g_.node(softmax);
    const int x = NodeOf(s.args[0]);
    if (x < 0 || s.args.size() != 3 || !s.args[1].is_int() ||
        !s.args[2].is_bool() || s.args[2].as_bool()) {
      return std::nullopt;
    }
    const int rank = Rank(x);
    if (rank < 3 ||
        (s.args[1].as_int() != -1 && s.args[1].as_int() != rank - 1)) {
      return std::nullopt;
    }
    // The safe softmax: where(!any(x != -inf, -1, keepdim), 0, softmax).
    // The softmax is read by that where and by the zeros it selects
    // (full_like(softmax, 0)), which only the where reads.
    int fix = -1;
    for (int c : consumers_[softmax]) {
      if (Is(c, "aten.where.self") && NodeOf(g_.node(c).args[2]) == softmax) {
        fix = c;
      }
    }
    if (fix < 0) return std::nullopt;
    const Node& w = g_.node(fix);
    const int zero = NodeOf(w.args[1]);
    if (!IsZero(zero)) return std::nullopt;
    for (int c : consumers_[softmax]) {
      if (c != fix && !(c == zero && Single(zero))) return std::nullopt;
    }
    const int not_any = NodeOf(w.args[0]);
    if (!Is(not_any, "aten.logical_not.default") || !Single(not_any)) {
      return std::nullopt;
    }
    const int any = NodeOf(g_.node(not_any).args[0]);
    if (!Is(any, "aten.any.dim") || !Single(any) ||
        !g_.node(any).args[2].is_bool() || !g_.node(any).args[2].as_bool()) {
      return std::nullopt;
    }
    const int64_t any_dim = g_.node(any).args[1].as_int();
    if (any_dim != -1 && any_dim != rank - 1) return std::nullopt;
    const int not_equal = NodeOf(g_.node(any).args[0]);
    if (!Is(not_equal, "aten.logical_not.default") || !Single(not_equal)) {
      return std::nullopt;
    }
    const int eq = NodeOf(g_.node(not_equal).args[0]);
    if (!Is(eq, "aten.eq.Scalar") || !Single(eq) ||
        NodeOf(g_.node(eq).args[0]) != x ||
        !IsNumber(g_.node(eq).args[1], -INFINITY)) {
      return std::nullopt;
    }
    if (consumers_[x].size() != 2) return std::nullopt;  // softmax and eq
    m.removed = {x, softmax, fix, not_any, any, not_equal, eq};
    if (Single(zero)) m.removed.push_back(zero);
    // Up from the scores to the first product.
    int cur = x;
    int bmm1 = -1;
    for (int depth = 0; depth < 8 && bmm1 < 0; ++depth) {
      if (cur < 0) return std::nullopt;
      if (cur != x) {
        if (!Single(cur)) return std::nullopt;
        m.removed.push_back(cur);
      }
      const Node& n = g_.node(cur);
      double c = 0;
      if (n.target == "aten.bmm.default") {
        bmm1 = cur;
      } else if (n.target == "aten.view.default") {
        const int in = NodeOf(n.args[0]);
        if (in < 0 || !SameLastTwo(cur, in)) return std::nullopt;
        cur = in;
      } else if ((n.target == "aten.mul.Scalar" ||
                  n.target == "aten.mul.Tensor") &&
                 Number(n.args[1], &c)) {
        m.scale *= c;
        cur = NodeOf(n.args[0]);
      } else if ((n.target == "aten.div.Scalar" ||
                  n.target == "aten.div.Tensor") &&
                 Number(n.args[1], &c) && c != 0) {
        m.scale /= c;
        cur = NodeOf(n.args[0]);
      } else if (n.target == "aten.add.Tensor" && IsNumber(n.args[2], 1) &&
                 !m.bias && !m.cond) {
        const int a = NodeOf(n.args[0]), b = NodeOf(n.args[1]);
        if (LeadsToBmm(a) && b >= 0 && !LeadsToBmm(b)) {
          m.bias = n.args[1];
          cur = a;
        } else if (LeadsToBmm(b) && a >= 0 && !LeadsToBmm(a)) {
          m.bias = n.args[0];
          cur = b;
        } else {
          return std::nullopt;
        }
        if (DTypeOf(NodeOf(*m.bias)) != DTypeOf(x)) return std::nullopt;
      } else if (n.target == "aten.where.self" && !m.bias && !m.cond) {
        const int a = NodeOf(n.args[1]), b = NodeOf(n.args[2]);
        if (IsNegInf(a) && LeadsToBmm(b)) {
          cur = b;
        } else if (IsNegInf(b) && LeadsToBmm(a)) {
          m.keep_is_cond = true;
          cur = a;
        } else {
          return std::nullopt;
        }
        m.cond = n.args[0];
        if (NodeOf(*m.cond) < 0 || DTypeOf(NodeOf(*m.cond)) != DType::kBool) {
          return std::nullopt;
        }
      } else {
        return std::nullopt;
      }
    }
    if (bmm1 < 0) return std::nullopt;
    m.removed.push_back(bmm1);
    // The operands: q and k^T behind views, no-op expands and scalings.
    double cq = 1, ck = 1;
    const int q = Strip(NodeOf(g_.node(bmm1).args[0]), &cq);
    const int kt = Strip(NodeOf(g_.node(bmm1).args[1]), &ck);
    if (q < 0 || kt < 0) return std::nullopt;
    m.scale *= cq * ck;
    m.q = Value(q);
    if (const Node& p = g_.node(kt);
        p.target == "aten.permute.default" && SwapsLastTwo(p.args[1])) {
      m.k = p.args[0];
    } else {
      m.k = Value(kt);
      m.transpose_k = true;
    }
    // Down from the safe softmax to the second product.
    cur = fix;
    int bmm2 = -1;
    while (bmm2 < 0) {
      if (consumers_[cur].size() != 1) return std::nullopt;
      const int next = consumers_[cur][0];
      const Node& n = g_.node(next);
      if (n.target == "aten.bmm.default" && NodeOf(n.args[0]) == cur) {
        bmm2 = next;
      } else if ((n.target == "aten.expand.default" &&
                  ShapeOf(next) == ShapeOf(cur)) ||
                 (n.target == "aten.view.default" && SameLastTwo(next, cur))) {
        m.removed.push_back(next);
        cur = next;
      } else {
        return std::nullopt;
      }
    }
    double cv = 1;
    const int v = Strip(NodeOf(g_.node(bmm2).args[1]), &cv);
    if (v < 0 || cv != 1) return std::nullopt;
    m.v = Value(v);
    m.bmm2 = bmm2;
    m.removed.push_back(bmm2);
    const int r = Rank(q);
    if (r < 3 || Rank(kt) != r || Rank(v) != r || !IsFloating(DTypeOf(q))) {
      return std::nullopt;
    }
    m.out_shape = ShapeOf(bmm2);
    m.view_out = r != 3;
    m.rank = r;
    return m;
  }

  // The nodes that read node `i`'s values.
  const std::vector<int>& consumers(int i) const { return consumers_[i]; }

 private:
  void Visit(const Arg& a, int user) {
    if (a.is_list()) {
      for (const Arg& item : a.as_list()) Visit(item, user);
    } else if (a.is_value()) {
      consumers_[a.as_value().node].push_back(user);
    }
  }
  // The call node whose only output `a` is, or -1.
  int NodeOf(const Arg& a) const {
    if (!a.is_value() || a.as_value().index != 0) return -1;
    const int n = a.as_value().node;
    return g_.node(n).kind == NodeKind::kOutput ? -1 : n;
  }
  static Arg Value(int node) { return Arg::Value(ValueRef{node, 0}); }
  bool Is(int node, const char* target) const {
    return node >= 0 && g_.node(node).target == target;
  }
  bool Single(int node) const {
    return node >= 0 && consumers_[node].size() == 1;
  }
  int Rank(int node) const { return metas_[node][0].dim(); }
  DType DTypeOf(int node) const { return metas_[node][0].dtype; }
  Shape ShapeOf(int node) const { return metas_[node][0].shape(); }
  bool SameLastTwo(int a, int b) const {
    const Shape sa = ShapeOf(a), sb = ShapeOf(b);
    return sa.size() >= 2 && sb.size() >= 2 &&
           sa[sa.size() - 1] == sb[sb.size() - 1] &&
           sa[sa.size() - 2] == sb[sb.size() - 2];
  }
  static bool Number(const Arg& a, double* v) {
    if (!a.is_number() || a.is_bool()) return false;
    *v = a.as_scalar().to_double();
    return std::isfinite(*v);
  }
  static bool IsNumber(const Arg& a, double want) {
    return a.is_number() && !a.is_bool() && a.as_scalar().to_double() == want;
  }
  // A tensor filled with -inf, or with 0: scalar_tensor or full_like.
  bool IsFill(int node, double value) const {
    if (node < 0) return false;
    const Node& n = g_.node(node);
    if (n.target == "aten.scalar_tensor.default") {
      return IsNumber(n.args[0], value);
    }
    if (n.target == "aten.full_like.default") return IsNumber(n.args[1], value);
    return false;
  }
  bool IsNegInf(int node) const { return IsFill(node, -INFINITY); }
  bool IsZero(int node) const { return IsFill(node, 0); }
  // Whether `node` reaches a bmm through the ops a score chain has.
  bool LeadsToBmm(int node) const {
    for (int depth = 0; depth < 8 && node >= 0; ++depth) {
      const Node& n = g_.node(node);
      if (n.target == "aten.bmm.default") return true;
      if (n.target != "aten.view.default" && n.target != "aten.mul.Scalar" &&
          n.target != "aten.mul.Tensor" && n.target != "aten.div.Scalar" &&
          n.target != "aten.div.Tensor") {
        return false;
      }
      node = NodeOf(n.args[0]);
    }
    return false;
  }
  // The value behind views that merge leading dims, no-op expands and (with
  // `factor`) scalings by constants.
  int Strip(int node, double* factor) const {
    for (int depth = 0; depth < 8 && node >= 0; ++depth) {
      const Node& n = g_.node(node);
      const int in = NodeOf(n.args.empty() ? Arg() : n.args[0]);
      double c = 0;
      if (n.target == "aten.view.default" && in >= 0 && SameLastTwo(node, in)) {
        node = in;
      } else if (n.target == "aten.expand.default" && in >= 0 &&
                 ShapeOf(node) == ShapeOf(in)) {
        node = in;
      } else if (n.target == "aten.mul.Scalar" && in >= 0 &&
                 Number(n.args[1], &c)) {
        *factor *= c;
        node = in;
      } else {
        return node;
      }
    }
    return -1;
  }
  bool SwapsLastTwo(const Arg& dims) const {
    if (!dims.is_list()) return false;
    const int r = static_cast<int>(dims.as_list().size());
    if (r < 2) return false;
    for (int d = 0; d < r; ++d) {
      const Arg& a = dims.as_list()[d];
      if (!a.is_int()) return false;
      int64_t want = d == r - 2 ? r - 1 : d == r - 1 ? r - 2 : d;
      const int64_t got = a.as_int() < 0 ? a.as_int() + r : a.as_int();
      if (got != want) return false;
    }
    return true;
  }

  const Graph& g_;
  const GraphMeta& metas_;
  std::vector<std::vector<int>> consumers_;
};

}  // namespace

absl::StatusOr<FusedAttention> FuseAttention(std::shared_ptr<const Graph> graph,
                                             const GraphMeta& metas) {
  FusedAttention out;
  const int n = static_cast<int>(graph->nodes().size());
  if (!graph->subgraphs().empty() || metas.size() != graph->nodes().size()) {
    out.graph = std::move(graph);
    return out;
  }
  const Matcher matcher(*graph, metas);
  std::vector<std::optional<Match>> at(n);  // by bmm2
  std::vector<bool> removed(n, false);
  for (int i = 0; i < n; ++i) {
    if (graph->node(i).target != "aten._softmax.default") continue;
    std::optional<Match> m = matcher.At(i);
    if (!m.has_value()) continue;
    bool overlaps = false;
    for (int r : m->removed) overlaps = overlaps || removed[r];
    if (overlaps) continue;
    for (int r : m->removed) removed[r] = true;
    const int bmm2 = m->bmm2;
    at[bmm2] = std::move(m);
    ++out.fused;
  }
  if (out.fused == 0) {
    out.graph = std::move(graph);
    return out;
  }
  // Nodes the rewrite leaves unread are dropped: what the outputs read
  // before (`was_live`) and no longer (through the fused ops' operands in
  // place of their chains). Nodes nothing read before stay as they were.
  const auto liveness = [&](bool fused) {
    std::vector<bool> live(n, false);
    live[n - 1] = true;
    const auto mark = [&](const Arg& a, auto&& self) -> void {
      if (a.is_list()) {
        for (const Arg& item : a.as_list()) self(item, self);
      } else if (a.is_value()) {
        live[a.as_value().node] = true;
      }
    };
    for (int i = n - 1; i >= 0; --i) {
      if (!live[i]) continue;
      if (fused && at[i].has_value()) {
        const Match& m = *at[i];
        for (const Arg* a : {&m.q, &m.k, &m.v}) mark(*a, mark);
        if (m.bias) mark(*m.bias, mark);
        if (m.cond) mark(*m.cond, mark);
        continue;
      }
      for (const Arg& a : graph->node(i).args) mark(a, mark);
    }
    return live;
  };
  const std::vector<bool> was_live = liveness(false);
  const std::vector<bool> live = liveness(true);
  for (int i = 0; i < n; ++i) {
    if (removed[i] && !at[i].has_value() && live[i]) {
      return absl::InternalError(
          absl::StrCat("attention fusion: node '", graph->node(i).name,
                       "' of a fused chain is still read"));
    }
  }
  GraphRewriter rw(*graph);
  GraphBuilder& builder = rw.builder();
  for (int i = 0; i < n; ++i) {
    const Node& node = graph->node(i);
    if (node.kind != NodeKind::kPlaceholder && node.kind != NodeKind::kOutput &&
        ((removed[i] && !at[i].has_value()) || (was_live[i] && !live[i]))) {
      continue;
    }
    if (!at[i].has_value()) {
      RETURN_IF_ERROR(rw.Copy(i));
      continue;
    }
    const Match& m = *at[i];
    Arg k = rw.Remap(m.k);
    if (m.transpose_k) {
      std::vector<Arg> dims;
      for (int d = 0; d < m.rank; ++d) {
        dims.push_back(Arg::Int(d == m.rank - 2   ? m.rank - 1
                                : d == m.rank - 1 ? m.rank - 2
                                                  : d));
      }
      ASSIGN_OR_RETURN(
          ValueRef t,
          builder.AddNode(rw.UniqueName(absl::StrCat(node.name, "_key")),
                          "aten.permute.default", {k, Arg::OfList(dims)}));
      k = Arg::Value(t);
    }
    Arg mask = Arg::None();
    if (m.bias) mask = rw.Remap(*m.bias);
    if (m.cond) {
      mask = rw.Remap(*m.cond);
      if (!m.keep_is_cond) {
        ASSIGN_OR_RETURN(
            ValueRef keep,
            builder.AddNode(rw.UniqueName(absl::StrCat(node.name, "_keep")),
                            "aten.logical_not.default", {mask}));
        mask = Arg::Value(keep);
      }
    }
    ASSIGN_OR_RETURN(
        ValueRef sdpa,
        builder.AddNode(
            rw.UniqueName(m.view_out ? absl::StrCat(node.name, "_attention")
                                     : node.name),
            kSdpa,
            {rw.Remap(m.q), k, rw.Remap(m.v), mask, Arg::Float(0.0),
             Arg::Bool(false)},
            {{"scale", Arg::Float(m.scale)}}));
    Arg result = Arg::Value(sdpa);
    if (m.view_out) {
      std::vector<Arg> sizes;
      for (int64_t d : m.out_shape) sizes.push_back(Arg::Int(d));
      ASSIGN_OR_RETURN(ValueRef view,
                       builder.AddNode(node.name, "aten.view.default",
                                       {result, Arg::OfList(sizes)}));
      result = Arg::Value(view);
    }
    rw.Map(i, {result});
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> fused, rw.Finish());
  out.graph = std::move(fused);
  return out;
}

}  // namespace guardjit
