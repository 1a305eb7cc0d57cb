#include "jit/steps/extern_epilogue.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "jit/lowering/lowering.h"

namespace guardjit {
namespace {

// The coefficients of loop variables 0..num_vars-1 and the constant term
// (last) of `e`, when it is affine in them.
bool AddAffine(const IndexExpr& e, int64_t scale, std::vector<int64_t>& coef) {
  switch (e.kind()) {
    case IndexExpr::Kind::kConst:
      coef.back() += scale * e.value();
      return true;
    case IndexExpr::Kind::kVar:
      if (e.id() >= static_cast<int>(coef.size()) - 1) return false;
      coef[e.id()] += scale;
      return true;
    case IndexExpr::Kind::kAdd:
      return AddAffine(e.lhs(), scale, coef) && AddAffine(e.rhs(), scale, coef);
    case IndexExpr::Kind::kMul:
      if (e.lhs().is_const()) {
        return AddAffine(e.rhs(), scale * e.lhs().value(), coef);
      }
      if (e.rhs().is_const()) {
        return AddAffine(e.lhs(), scale * e.rhs().value(), coef);
      }
      return false;
    default:
      return false;
  }
}

// Visits every node of `e` once.
void VisitExpr(const ValueExpr& e, absl::flat_hash_set<const void*>& seen,
               const std::function<void(const ValueExpr&)>& fn) {
  if (!seen.insert(e.id()).second) return;
  fn(e);
  for (int i = 0; i < e.num_operands(); ++i) VisitExpr(e.operand(i), seen, fn);
}

// `e` with every load of `buffer` replaced by with(load), DAG sharing kept.
ValueExpr RewriteLoads(const ValueExpr& e, int buffer,
                       const std::function<ValueExpr(const ValueExpr&)>& with,
                       absl::flat_hash_map<const void*, ValueExpr>& memo) {
  if (auto it = memo.find(e.id()); it != memo.end()) return it->second;
  const auto operand = [&](int i) {
    return RewriteLoads(e.operand(i), buffer, with, memo);
  };
  ValueExpr result = e;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad:
      if (e.buffer() == buffer) result = with(e);
      break;
    case ValueExpr::Kind::kConst:
    case ValueExpr::Kind::kLocal:
    case ValueExpr::Kind::kIndex:
      break;
    case ValueExpr::Kind::kUnary:
      result = ValueExpr::Unary(e.unary_op(), operand(0));
      break;
    case ValueExpr::Kind::kBinary:
      result = ValueExpr::Binary(e.binary_op(), operand(0), operand(1));
      break;
    case ValueExpr::Kind::kWhere:
      result = ValueExpr::Where(operand(0), operand(1), operand(2));
      break;
    case ValueExpr::Kind::kCast:
      result = ValueExpr::Cast(operand(0), e.dtype());
      break;
    case ValueExpr::Kind::kGather:
      // Epilogues have no gathers (IsPointwiseEpilogue); the index may still
      // read `buffer`.
      result = ValueExpr::Gather(e.buffer(), e.dtype(), e.index(), operand(0),
                                 e.stride(), e.bound(), e.check());
      break;
  }
  memo.emplace(e.id(), result);
  return result;
}

// Whether kernel `k`, run over a subrange of its outer loop 0, computes
// exactly those points, reading `param` (a tensor of `sizes` laid out at
// `strides`, empty: contiguous) only at the point it computes: a pointwise
// kernel over `sizes`.
bool IsPointwiseEpilogue(const Kernel& k, int param,
                         const std::vector<IndexExpr>& sizes,
                         const std::vector<IndexExpr>& strides) {
  // The extern steps run epilogues without looking for failed index checks.
  if (k.num_size_params != 0 || k.num_checks != 0 ||
      k.outer.size() != sizes.size()) {
    return false;
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (k.outer[d].var != static_cast<int>(d) ||
        k.outer[d].extent != sizes[d]) {
      return false;
    }
  }
  bool ok = true;
  absl::flat_hash_set<const void*> seen;
  for (const Stage& stage : k.stages) {
    if (stage.kind != Stage::Kind::kStore || !stage.loops.empty()) {
      return false;
    }
    VisitExpr(stage.value, seen, [&](const ValueExpr& e) {
      if (e.kind() == ValueExpr::Kind::kLoad && e.buffer() == param) {
        ok =
            ok && (strides.empty() ? IsPointIndex(e.index(), sizes)
                                   : IsPointIndexAt(e.index(), sizes, strides));
      }
    });
  }
  return ok;
}

// The kernel parameter of slot `slot` that `k` reads, or -1.
int InputParam(const KernelStep& k, int slot) {
  for (size_t p = 0; p < k.buffer_slots.size(); ++p) {
    if (k.buffer_slots[p] == slot && !k.kernel.buffers[p].is_output) {
      return static_cast<int>(p);
    }
  }
  return -1;
}

// A kernel storing the product into its slot.
KernelStep StoreProductKernel(const ExternProduct& product,
                              int* product_param) {
  KernelStep k;
  const std::vector<IndexExpr>& sizes = product.sizes;
  std::vector<IndexExpr> idx;
  for (size_t d = 0; d < sizes.size(); ++d) {
    k.kernel.outer.push_back({static_cast<int>(d), sizes[d]});
    idx.push_back(IndexExpr::Var(static_cast<int>(d)));
  }
  const IndexExpr point = Linearize(idx, sizes);
  *product_param = AddParam(k, product.slot, product.dtype, /*output=*/false);
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.value = ValueExpr::Load(*product_param, product.dtype, point);
  store.buffer = AddParam(k, product.slot, product.dtype, /*output=*/true);
  store.index = point;
  if (!product.strides.empty()) {
    store.index = IndexExpr::Const(0);
    for (size_t d = 0; d < sizes.size(); ++d) {
      store.index = store.index + idx[d] * product.strides[d];
    }
  }
  k.kernel.stages.push_back(std::move(store));
  k.allocate.push_back(product.slot);
  k.computes.push_back(product.label);
  return k;
}

// `e` with every index (of loads, gathers and index values) rebuilt with
// its loop variables substituted by `vars`, DAG sharing kept.
ValueExpr SubstituteIndexVars(
    const ValueExpr& e, const absl::flat_hash_map<int, IndexExpr>& vars,
    absl::flat_hash_map<const void*, ValueExpr>& memo) {
  if (auto it = memo.find(e.id()); it != memo.end()) return it->second;
  const auto operand = [&](int i) {
    return SubstituteIndexVars(e.operand(i), vars, memo);
  };
  const auto sub = [&](const IndexExpr& x) { return SubstituteVars(x, vars); };
  ValueExpr result = e;
  switch (e.kind()) {
    case ValueExpr::Kind::kLoad:
      result = ValueExpr::Load(e.buffer(), e.dtype(), sub(e.index()));
      break;
    case ValueExpr::Kind::kIndex:
      result = ValueExpr::Index(sub(e.index()));
      break;
    case ValueExpr::Kind::kConst:
    case ValueExpr::Kind::kLocal:
      break;
    case ValueExpr::Kind::kUnary:
      result = ValueExpr::Unary(e.unary_op(), operand(0));
      break;
    case ValueExpr::Kind::kBinary:
      result = ValueExpr::Binary(e.binary_op(), operand(0), operand(1));
      break;
    case ValueExpr::Kind::kWhere:
      result = ValueExpr::Where(operand(0), operand(1), operand(2));
      break;
    case ValueExpr::Kind::kCast:
      result = ValueExpr::Cast(operand(0), e.dtype());
      break;
    case ValueExpr::Kind::kGather:
      result =
          ValueExpr::Gather(e.buffer(), e.dtype(), sub(e.index()), operand(0),
                            sub(e.stride()), sub(e.bound()), e.check());
      break;
  }
  memo.emplace(e.id(), result);
  return result;
}

// `k` with its outer loops of extent 1 dropped (their variables 0 wherever
// they are read) and the others renumbered 0, 1, ... in order: a pointwise
// kernel over a view of a product that adds or moves unit dims (a linear
// layer's [64, 1024] product read as [1, 64, 1024] by the gelu or residual
// add after it) then loops over the product's own dims. nullopt when it has
// no such loop, or stages with loops of their own.
std::optional<Kernel> WithoutUnitLoops(const Kernel& k) {
  absl::flat_hash_map<int, IndexExpr> vars;
  std::vector<LoopRange> outer;
  for (const LoopRange& loop : k.outer) {
    if (loop.extent.is_const(1)) {
      vars[loop.var] = IndexExpr::Const(0);
    } else {
      const int var = static_cast<int>(outer.size());
      vars[loop.var] = IndexExpr::Var(var);
      outer.push_back({var, loop.extent});
    }
  }
  if (outer.size() == k.outer.size()) return std::nullopt;
  Kernel result = k;
  result.outer = std::move(outer);
  absl::flat_hash_map<const void*, ValueExpr> memo;
  for (Stage& stage : result.stages) {
    if (!stage.loops.empty()) return std::nullopt;
    stage.value = SubstituteIndexVars(stage.value, vars, memo);
    stage.index = SubstituteVars(stage.index, vars);
  }
  return result;
}

// How many steps read `slot`, and whether the graph outputs it.
int Readers(const Plan& plan, int slot) {
  int n = 0;
  for (const PlanStep& s : plan.steps) {
    bool reads = false;
    for (size_t p = 0; p < s.kernel.buffer_slots.size(); ++p) {
      reads = reads || (s.is_kernel && s.kernel.buffer_slots[p] == slot &&
                        !s.kernel.kernel.buffers[p].is_output);
    }
    for (const auto& arg : s.extern_args)
      reads = reads || arg.second.slot == slot;
    n += reads;
  }
  for (const TensorRef& out : plan.outputs) n += out.slot == slot;
  return n;
}

}  // namespace

// Whether `index` addresses, at every point of loops over `sizes` (loop
// variable d over dim d), that point's element of a contiguous tensor of
// `sizes`. Size-1 dims may use any coefficient: their variable is 0. A
// dynamic entry's sizes may be symbolic where the contiguous strides are
// still constants (a symbolic batch: dim 0).
bool IsPointIndex(const IndexExpr& index, const std::vector<IndexExpr>& sizes) {
  return IsPointIndexAt(index, sizes, ContiguousStrideExprs(sizes));
}

bool IsPointIndexAt(const IndexExpr& index, const std::vector<IndexExpr>& sizes,
                    const std::vector<IndexExpr>& strides) {
  std::vector<int64_t> coef(sizes.size() + 1, 0);
  if (!AddAffine(index, 1, coef) || coef.back() != 0) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d].is_const(1)) continue;
    if (!strides[d].is_const() || coef[d] != strides[d].value()) return false;
  }
  return true;
}

std::optional<FixedRef> FixedRefOf(const TensorRef& ref) {
  std::optional<Shape> sizes = ConcreteShape(ref.sizes);
  std::optional<Shape> strides = ConcreteShape(ref.strides);
  if (!sizes || !strides || !ref.offset.is_const()) return std::nullopt;
  return FixedRef{ref.slot, *std::move(sizes), *std::move(strides),
                  ref.offset.value()};
}

std::string SizeText(const IndexExpr& size) {
  std::string text = size.ToString();
  if (size.kind() == IndexExpr::Kind::kConst ||
      size.kind() == IndexExpr::Kind::kSize || text.front() == '(') {
    return text;
  }
  return absl::StrCat("(", text, ")");
}

FixedRef BindRef(const TensorRef& ref, absl::Span<const int64_t> symbols) {
  return FixedRef{ref.slot, EvaluateShape(ref.sizes, symbols),
                  EvaluateShape(ref.strides, symbols),
                  ref.offset.Evaluate(symbols)};
}

std::optional<TensorRef> ArgRef(const Graph& graph, const Plan& plan,
                                const PlanStep& step, int arg, DType dtype) {
  const Node& node = graph.node(step.node);
  if (arg >= static_cast<int>(node.args.size()) || !node.args[arg].is_value()) {
    return std::nullopt;
  }
  const ValueRef v = node.args[arg].as_value();
  const int64_t key = (int64_t{v.node} << 16) + v.index;
  for (const auto& [k, ref] : step.extern_args) {
    if (k == key && plan.slots[ref.slot].dtype == dtype) return ref;
  }
  return std::nullopt;
}

std::optional<FixedRef> FixedArg(const Graph& graph, const Plan& plan,
                                 const PlanStep& step, int arg, DType dtype) {
  std::optional<TensorRef> ref = ArgRef(graph, plan, step, arg, dtype);
  if (!ref.has_value()) return std::nullopt;
  return FixedRefOf(*ref);
}

int ExternOutputSlot(const Plan& plan, const PlanStep& step) {
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& slot = plan.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == step.node &&
        slot.output == 0) {
      return static_cast<int>(s);
    }
  }
  return -1;
}

std::optional<Epilogue> TakeEpilogue(Plan& plan, size_t* i,
                                     const ExternProduct& product,
                                     bool store_bare) {
  PlanStep& step = plan.steps[*i];
  Epilogue epilogue;
  PlanStep& fused = epilogue.step;
  fused.is_kernel = true;
  fused.node = step.node;
  fused.release = step.release;
  PlanStep* next = *i + 1 < plan.steps.size() ? &plan.steps[*i + 1] : nullptr;
  const int param = next != nullptr && next->is_kernel
                        ? InputParam(next->kernel, product.slot)
                        : -1;
  bool pointwise = false;
  if (param >= 0 && Readers(plan, product.slot) == 1) {
    pointwise = IsPointwiseEpilogue(next->kernel.kernel, param, product.sizes,
                                    product.strides);
    // Through a view that only adds or moves unit dims, for a product
    // without any.
    const bool unit_free =
        std::none_of(product.sizes.begin(), product.sizes.end(),
                     [](const IndexExpr& s) { return s.is_const(1); });
    if (!pointwise && unit_free) {
      if (std::optional<Kernel> k = WithoutUnitLoops(next->kernel.kernel);
          k.has_value() &&
          IsPointwiseEpilogue(*k, param, product.sizes, product.strides)) {
        next->kernel.kernel = *std::move(k);
        pointwise = true;
      }
    }
  }
  if (pointwise) {
    fused.kernel = std::move(next->kernel);
    if (!product.strides.empty()) {
      // It read the result where the slot's layout puts it; the product it
      // now reads is contiguous.
      std::vector<IndexExpr> idx;
      for (size_t d = 0; d < product.sizes.size(); ++d) {
        idx.push_back(IndexExpr::Var(static_cast<int>(d)));
      }
      ReindexLoads(fused.kernel.kernel, param, Linearize(idx, product.sizes));
    }
    fused.release.insert(fused.release.end(), next->release.begin(),
                         next->release.end());
    epilogue.product_param = param;
    ++*i;
  } else if (store_bare) {
    fused.kernel = StoreProductKernel(product, &epilogue.product_param);
    epilogue.bare_store_param = fused.kernel.kernel.stages[0].buffer;
  } else {
    return std::nullopt;
  }
  return epilogue;
}

int AddParam(KernelStep& k, int slot, DType dtype, bool output) {
  if (!output) {
    if (int p = InputParam(k, slot); p >= 0) return p;
  }
  k.kernel.buffers.push_back({"", dtype, output});
  k.buffer_slots.push_back(slot);
  return static_cast<int>(k.buffer_slots.size()) - 1;
}

void NameParams(Kernel& k) {
  int inputs = 0, outputs = 0;
  for (BufferParam& b : k.buffers) {
    b.name = b.is_output ? absl::StrCat("out", outputs++)
                         : absl::StrCat("in", inputs++);
  }
}

void AddToProduct(Epilogue& epilogue, const ValueExpr& term) {
  absl::flat_hash_map<const void*, ValueExpr> memo;
  for (Stage& stage : epilogue.step.kernel.kernel.stages) {
    stage.value = RewriteLoads(
        stage.value, epilogue.product_param,
        [&](const ValueExpr& load) {
          return ValueExpr::Binary(BinaryOp::kAdd, load, term);
        },
        memo);
  }
}

void ReindexLoads(Kernel& kernel, int param, const IndexExpr& index) {
  absl::flat_hash_map<const void*, ValueExpr> memo;
  for (Stage& stage : kernel.stages) {
    stage.value = RewriteLoads(
        stage.value, param,
        [&](const ValueExpr& load) {
          return ValueExpr::Load(load.buffer(), load.dtype(), index);
        },
        memo);
  }
}

}  // namespace guardjit
