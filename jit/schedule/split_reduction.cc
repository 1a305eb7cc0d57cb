#include "jit/schedule/split_reduction.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {
namespace {

// Chunks of the reduced extent: about 1/64 of it (partials for 16 threads
// several times over), at least 2^16 elements (one chunk's loop and store
// stay negligible against its work) and at most 2^22 (a few milliseconds:
// how long a stop request may wait for the chunks already running), unless
// that would make more than 2^20 partials.
constexpr int64_t kTargetPartials = 64;
constexpr int64_t kMinChunk = kSplitMinReduced;
constexpr int64_t kMaxChunk = int64_t{1} << 22;
constexpr int64_t kMaxPartials = int64_t{1} << 20;

IndexExpr CeilDiv(const IndexExpr& a, const IndexExpr& b) {
  return IndexExpr::FloorDiv(a + b + IndexExpr::Const(-1), b);
}

IndexExpr Minus(const IndexExpr& a, const IndexExpr& b) {
  return a + IndexExpr::Const(-1) * b;
}

IndexExpr Product(const std::vector<LoopRange>& loops, size_t begin,
                  size_t end) {
  IndexExpr p = IndexExpr::Const(1);
  for (size_t i = begin; i < end; ++i) p = p * loops[i].extent;
  return p;
}

bool ReadsLocal(const ValueExpr& e, absl::flat_hash_set<const void*>& seen) {
  if (!seen.insert(e.id()).second) return false;
  if (e.kind() == ValueExpr::Kind::kLocal) return true;
  for (int i = 0; i < e.num_operands(); ++i) {
    if (ReadsLocal(e.operand(i), seen)) return true;
  }
  return false;
}

// Rebuilds a value with its loop variables substituted, its buffer
// parameters renumbered and some locals widened to float64, keeping shared
// nodes shared.
class Rewriter {
 public:
  Rewriter(absl::flat_hash_map<int, IndexExpr> vars,
           std::function<int(int)> buffer,
           absl::flat_hash_set<int> widened_locals)
      : vars_(std::move(vars)),
        buffer_(std::move(buffer)),
        widened_(std::move(widened_locals)) {}

  ValueExpr Run(const ValueExpr& e) {
    auto it = memo_.find(e.id());
    if (it != memo_.end()) return it->second;
    ValueExpr r = e;
    switch (e.kind()) {
      case ValueExpr::Kind::kLoad:
        r = ValueExpr::Load(buffer_(e.buffer()), e.dtype(), Sub(e.index()));
        break;
      case ValueExpr::Kind::kConst:
        break;
      case ValueExpr::Kind::kLocal:
        if (widened_.contains(e.local())) {
          r = ValueExpr::Cast(ValueExpr::Local(e.local(), DType::kFloat64),
                              e.dtype());
        }
        break;
      case ValueExpr::Kind::kIndex:
        r = ValueExpr::Index(Sub(e.index()));
        break;
      case ValueExpr::Kind::kUnary:
        r = ValueExpr::Unary(e.unary_op(), Run(e.operand(0)));
        break;
      case ValueExpr::Kind::kBinary:
        r = ValueExpr::Binary(e.binary_op(), Run(e.operand(0)),
                              Run(e.operand(1)));
        break;
      case ValueExpr::Kind::kWhere:
        r = ValueExpr::Where(Run(e.operand(0)), Run(e.operand(1)),
                             Run(e.operand(2)));
        break;
      case ValueExpr::Kind::kCast:
        r = ValueExpr::Cast(Run(e.operand(0)), e.dtype());
        break;
      case ValueExpr::Kind::kGather:
        r = ValueExpr::Gather(buffer_(e.buffer()), e.dtype(), Sub(e.index()),
                              Run(e.operand(0)), Sub(e.stride()),
                              Sub(e.bound()), e.check());
        break;
    }
    memo_.emplace(e.id(), r);
    return r;
  }

  IndexExpr Sub(const IndexExpr& e) const { return SubstituteVars(e, vars_); }

 private:
  absl::flat_hash_map<int, IndexExpr> vars_;
  std::function<int(int)> buffer_;
  absl::flat_hash_set<int> widened_;
  absl::flat_hash_map<const void*, ValueExpr> memo_;
};

// Buffer parameters of a new kernel, taken from the old one's on first use.
class Params {
 public:
  Params(const KernelStep& old, KernelStep& step) : old_(old), step_(step) {}

  int Of(int old_param) {
    auto [it, fresh] = map_.try_emplace(
        old_param, static_cast<int>(step_.kernel.buffers.size()));
    if (fresh) {
      step_.kernel.buffers.push_back(old_.kernel.buffers[old_param]);
      step_.buffer_slots.push_back(old_.buffer_slots[old_param]);
    }
    return it->second;
  }
  int Add(int slot, DType dtype, bool output) {
    step_.kernel.buffers.push_back({"", dtype, output});
    step_.buffer_slots.push_back(slot);
    return static_cast<int>(step_.kernel.buffers.size()) - 1;
  }

 private:
  const KernelStep& old_;
  KernelStep& step_;
  absl::flat_hash_map<int, int> map_;
};

void NameBuffers(Kernel& k) {
  int inputs = 0, outputs = 0;
  for (BufferParam& b : k.buffers) {
    b.name = b.is_output ? absl::StrCat("out", outputs++)
                         : absl::StrCat("in", inputs++);
  }
}

}  // namespace

bool SplitReductionsEnabled() {
  const char* env = std::getenv("GJ_SPLIT_REDUCTIONS");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

std::optional<SplitKernels> SplitReduction(
    const KernelStep& step, const std::vector<std::string>& reductions,
    std::vector<Slot>& slots) {
  const Kernel& k = step.kernel;
  // The outer points: a small constant count.
  int64_t outer_count = 1;
  for (const LoopRange& l : k.outer) {
    if (!l.extent.is_const()) return std::nullopt;
    outer_count *= l.extent.value();
  }
  if (outer_count >= kSplitMaxOuter) return std::nullopt;
  // Independent reductions over the same loops, then row stores.
  const Stage* first = nullptr;
  bool stores_started = false;
  for (const Stage& s : k.stages) {
    if (s.kind == Stage::Kind::kStore) {
      if (!s.loops.empty()) return std::nullopt;
      stores_started = true;
      continue;
    }
    if (stores_started || s.buffer >= 0 || s.loops.empty()) return std::nullopt;
    if (s.combine != CombineOp::kSum && s.combine != CombineOp::kProd &&
        s.combine != CombineOp::kMax && s.combine != CombineOp::kMin) {
      return std::nullopt;
    }
    absl::flat_hash_set<const void*> seen;
    if (ReadsLocal(s.value, seen)) return std::nullopt;
    if (first == nullptr) {
      first = &s;
    } else {
      if (s.loops.size() != first->loops.size()) return std::nullopt;
      for (size_t i = 0; i < s.loops.size(); ++i) {
        if (s.loops[i].var != first->loops[i].var ||
            s.loops[i].extent != first->loops[i].extent) {
          return std::nullopt;
        }
      }
    }
  }
  if (first == nullptr) return std::nullopt;
  const std::vector<LoopRange>& loops = first->loops;
  const size_t rank = loops.size();
  const IndexExpr n = Product(loops, 0, rank);
  if (n.is_const() && n.value() < kSplitMinReduced) return std::nullopt;

  // Chunks of m consecutive indices of reduced loop d: loops before d are
  // covered by the partials too (B of them), loops after d run whole inside
  // each chunk, so the innermost loop keeps its contiguous, vectorizable
  // body. A symbolic extent splits loop 0.
  const IndexExpr target = IndexExpr::Max(
      IndexExpr::Min(
          IndexExpr::Max(CeilDiv(n, IndexExpr::Const(kTargetPartials)),
                         IndexExpr::Const(kMinChunk)),
          IndexExpr::Const(kMaxChunk)),
      CeilDiv(n, IndexExpr::Const(kMaxPartials)));
  size_t d = 0;
  if (n.is_const()) {
    while (Product(loops, d + 1, rank).value() > target.value()) ++d;
  }
  const IndexExpr after = Product(loops, d + 1, rank);
  const IndexExpr before = Product(loops, 0, d);
  const IndexExpr m =
      IndexExpr::Max(IndexExpr::Const(1), IndexExpr::FloorDiv(target, after));
  const IndexExpr chunks_d = CeilDiv(loops[d].extent, m);
  const IndexExpr partials = before * chunks_d;
  if (partials.is_const() && partials.value() < 2) return std::nullopt;

  int next_var = 0;
  for (const LoopRange& l : k.outer) next_var = std::max(next_var, l.var + 1);
  for (const Stage& s : k.stages) {
    for (const LoopRange& l : s.loops) next_var = std::max(next_var, l.var + 1);
  }
  const int c_var = next_var;
  const IndexExpr c = IndexExpr::Var(c_var);
  const IndexExpr b = before.is_const(1) ? IndexExpr::Const(0)
                                         : IndexExpr::FloorDiv(c, chunks_d);
  const IndexExpr kc = before.is_const(1) ? c : IndexExpr::Mod(c, chunks_d);
  absl::flat_hash_map<int, IndexExpr> vars;
  {
    IndexExpr q = b;
    for (size_t e = d; e-- > 0;) {
      vars[loops[e].var] = e == 0 ? q : IndexExpr::Mod(q, loops[e].extent);
      q = IndexExpr::FloorDiv(q, loops[e].extent);
    }
  }
  vars[loops[d].var] = kc * m + IndexExpr::Var(loops[d].var);
  std::vector<LoopRange> chunk_loops = {
      {loops[d].var, IndexExpr::Min(m, Minus(loops[d].extent, kc * m))}};
  chunk_loops.insert(chunk_loops.end(), loops.begin() + d + 1, loops.end());

  std::vector<IndexExpr> outer_vars, outer_sizes;
  for (const LoopRange& l : k.outer) {
    outer_vars.push_back(IndexExpr::Var(l.var));
    outer_sizes.push_back(l.extent);
  }
  const IndexExpr outer_at = Linearize(outer_vars, outer_sizes);

  SplitKernels out;
  KernelStep& p1 = out.partials;
  KernelStep& p2 = out.combine;
  Params params1(step, p1), params2(step, p2);
  p1.kernel.num_size_params = p2.kernel.num_size_params = k.num_size_params;
  p1.kernel.num_locals = p2.kernel.num_locals = k.num_locals;
  p1.kernel.num_checks = p2.kernel.num_checks = k.num_checks;
  p1.checks = p2.checks = step.checks;
  p1.kernel.outer = {{c_var, partials}};
  p1.kernel.outer.insert(p1.kernel.outer.end(), k.outer.begin(), k.outer.end());
  p2.kernel.outer = k.outer;

  Rewriter chunk(vars, [&](int p) { return params1.Of(p); }, {});
  absl::flat_hash_set<int> widened;
  std::vector<Stage> combine_stages;
  const IndexExpr partial_at = c * IndexExpr::Const(outer_count) + outer_at;
  std::vector<IndexExpr> partial_sizes = {partials};
  partial_sizes.insert(partial_sizes.end(), outer_sizes.begin(),
                       outer_sizes.end());
  for (const Stage& s : k.stages) {
    if (s.kind != Stage::Kind::kReduce) continue;
    // float32 sums accumulate in float64 (chunks and partials): the split
    // sum is no less accurate than the unsplit one's float blocks.
    const bool widen =
        s.combine == CombineOp::kSum && s.value.dtype() == DType::kFloat32;
    const DType dtype = widen ? DType::kFloat64 : s.value.dtype();
    Stage reduce = s;
    reduce.loops = chunk_loops;
    reduce.value = chunk.Run(s.value);
    if (widen) reduce.value = ValueExpr::Cast(reduce.value, dtype);
    p1.kernel.stages.push_back(std::move(reduce));

    Slot slot;
    slot.source = Slot::Source::kKernel;
    slot.dtype = dtype;
    slot.sizes = partial_sizes;
    slots.push_back(slot);
    const int partial_slot = static_cast<int>(slots.size()) - 1;
    Stage store;
    store.kind = Stage::Kind::kStore;
    store.value = ValueExpr::Local(s.local, dtype);
    store.buffer = params1.Add(partial_slot, dtype, true);
    store.index = partial_at;
    p1.allocate.push_back(partial_slot);

    Stage combine = s;
    combine.loops = {{c_var, partials}};
    combine.value = ValueExpr::Load(params2.Add(partial_slot, dtype, false),
                                    dtype, partial_at);
    if (widen) widened.insert(s.local);
    combine_stages.push_back(std::move(combine));
    p1.kernel.stages.push_back(std::move(store));
  }
  p1.computes.push_back(
      absl::StrCat("partials of ", absl::StrJoin(reductions, ", ")));

  Rewriter row(
      {}, [&](int p) { return params2.Of(p); }, widened);
  p2.kernel.stages = std::move(combine_stages);
  for (const Stage& s : k.stages) {
    if (s.kind != Stage::Kind::kStore) continue;
    Stage store = s;
    store.value = row.Run(s.value);
    store.buffer = params2.Of(s.buffer);
    p2.kernel.stages.push_back(std::move(store));
  }
  p2.allocate = step.allocate;
  p2.computes = step.computes;
  NameBuffers(p1.kernel);
  NameBuffers(p2.kernel);

  std::vector<std::string> quoted;
  for (const std::string& r : reductions) {
    quoted.push_back(absl::StrCat("'", r, "'"));
  }
  out.description = absl::StrCat(
      reductions.size() == 1 ? "reduction " : "reductions ",
      absl::StrJoin(quoted, ", "), " split into ",
      partials.is_const() ? absl::StrCat(partials.value(), " partials")
                          : std::string("partials sized per call"));
  return out;
}

}  // namespace guardjit
