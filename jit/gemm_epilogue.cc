#include "jit/gemm_epilogue.h"

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "jit/gemm_step.h"
#include "jit/lowering.h"

namespace guardjit {
namespace {

constexpr const char* kMm = "aten.mm.default";
constexpr const char* kAddmm = "aten.addmm.default";
constexpr const char* kBmm = "aten.bmm.default";

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

// Whether `index` addresses, at every point of loops over `sizes` (loop
// variable d over dim d), that point's element of a contiguous tensor of
// `sizes`. Size-1 dims may use any coefficient: their variable is 0.
bool IsPointIndex(const IndexExpr& index, const Shape& sizes) {
  std::vector<int64_t> coef(sizes.size() + 1, 0);
  if (!AddAffine(index, 1, coef) || coef.back() != 0) return false;
  const Shape strides = ContiguousStrides(sizes);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && coef[d] != strides[d]) return false;
  }
  return true;
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
  }
  memo.emplace(e.id(), result);
  return result;
}

// Whether kernel `k`, run over a subrange of its outer loop 0, computes
// exactly those points, reading `param` (a tensor of `sizes`) only at the
// point it computes: a pointwise kernel over `sizes`.
bool IsPointwiseEpilogue(const Kernel& k, int param, const Shape& sizes) {
  if (k.num_size_params != 0 || k.outer.size() != sizes.size()) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (k.outer[d].var != static_cast<int>(d) ||
        !k.outer[d].extent.is_const(sizes[d])) {
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
        ok = ok && IsPointIndex(e.index(), sizes);
      }
    });
  }
  return ok;
}

// Whether `value` converts to a finite T without overflow, and is not 0
// there.
template <typename T>
bool FitsNonZero(double value) {
  return std::isfinite(value) &&
         std::fabs(value) <= std::numeric_limits<T>::max() &&
         static_cast<T>(value) != 0;
}

bool FitsNonZero(DType dtype, double value) {
  return dtype == DType::kFloat32 ? FitsNonZero<float>(value)
                                  : FitsNonZero<double>(value);
}

double ScalarArg(const Arg& arg) {
  return arg.is_float() ? arg.as_float()
         : arg.is_int() ? static_cast<double>(arg.as_int())
                        : static_cast<double>(arg.as_bool());
}

// What a matched product step needs: its GemmStep, and addmm's bias term.
struct Match {
  std::shared_ptr<GemmStep> gemm;
  int out_slot = -1;
  Shape out_sizes;
  std::optional<FixedRef> bias;  // addmm with beta != 0
  double beta = 1;
};

std::optional<Match> MatchProduct(const Graph& graph, const Plan& plan,
                                  const PlanStep& step) {
  const Node& node = graph.node(step.node);
  const bool mm = node.target == kMm, addmm = node.target == kAddmm,
             bmm = node.target == kBmm;
  if (!mm && !addmm && !bmm) return std::nullopt;
  Match match;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const Slot& slot = plan.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == step.node) {
      match.out_slot = static_cast<int>(s);
    }
  }
  if (match.out_slot < 0) return std::nullopt;
  const Slot& out = plan.slots[match.out_slot];
  if (out.dtype != DType::kFloat32 && out.dtype != DType::kFloat64) {
    return std::nullopt;
  }
  const auto ref_of = [&](int arg) -> std::optional<FixedRef> {
    if (arg >= static_cast<int>(node.args.size()) ||
        !node.args[arg].is_value()) {
      return std::nullopt;
    }
    const ValueRef v = node.args[arg].as_value();
    const int64_t key = (int64_t{v.node} << 16) + v.index;
    for (const auto& [k, ref] : step.extern_args) {
      if (k == key && plan.slots[ref.slot].dtype == out.dtype) {
        return FixedRefOf(ref);
      }
    }
    return std::nullopt;
  };
  const int first = addmm ? 1 : 0;
  std::optional<FixedRef> a = ref_of(first), b = ref_of(first + 1);
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  const size_t rank = bmm ? 3 : 2;
  const std::optional<Shape> out_sizes = ConcreteShape(out.sizes);
  if (a->sizes.size() != rank || b->sizes.size() != rank ||
      !out_sizes.has_value() || out_sizes->size() != rank) {
    return std::nullopt;
  }
  auto gemm = std::make_shared<GemmStep>();
  gemm->target = node.target;
  gemm->dtype = out.dtype;
  gemm->batched = bmm;
  gemm->batch = bmm ? (*out_sizes)[0] : 1;
  gemm->m = (*out_sizes)[rank - 2];
  gemm->n = (*out_sizes)[rank - 1];
  gemm->k = a->sizes[rank - 1];
  constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
  for (int64_t extent : {gemm->batch, gemm->m, gemm->n, gemm->k}) {
    if (extent < 1 || extent > kMaxExtent) return std::nullopt;
  }
  gemm->a = *a;
  gemm->b = *b;
  if (addmm) {
    gemm->alpha = ScalarArg(node.args[4]);
    match.beta = ScalarArg(node.args[3]);
    if (!std::isfinite(match.beta)) return std::nullopt;
    if (FitsNonZero(out.dtype, match.beta)) {
      match.bias = ref_of(0);
      if (!match.bias.has_value() || match.bias->sizes.size() > 2) {
        return std::nullopt;
      }
    } else if (match.beta != 0) {
      return std::nullopt;  // rounds to 0 or overflows: the eager kernel's
    }
  }
  if (!FitsNonZero(out.dtype, gemm->alpha)) return std::nullopt;
  match.gemm = std::move(gemm);
  match.out_sizes = *out_sizes;
  return match;
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

// Adds beta * bias (broadcast over the [M, N] product) to every load of the
// product in `k`.
void AddBias(const Match& match, KernelStep& k) {
  const FixedRef& bias = *match.bias;
  const DType dtype = match.gemm->dtype;
  const int param = AddParam(k, bias.slot, dtype, /*output=*/false);
  const int rank = static_cast<int>(bias.sizes.size());
  IndexExpr index = IndexExpr::Const(bias.offset);
  for (int d = 0; d < rank; ++d) {
    if (bias.sizes[d] != 1) {
      index = index +
              IndexExpr::Var(2 - rank + d) * IndexExpr::Const(bias.strides[d]);
    }
  }
  ValueExpr term = ValueExpr::Load(param, dtype, index);
  if (match.beta != 1) {
    term = ValueExpr::Binary(BinaryOp::kMul,
                             ValueExpr::Const(dtype, match.beta), term);
  }
  absl::flat_hash_map<const void*, ValueExpr> memo;
  for (Stage& stage : k.kernel.stages) {
    stage.value = RewriteLoads(
        stage.value, match.gemm->product_param,
        [&](const ValueExpr& load) {
          return ValueExpr::Binary(BinaryOp::kAdd, load, term);
        },
        memo);
  }
}

// An epilogue storing the product into the step's output slot (to which
// AddBias then adds addmm's bias).
KernelStep StoreProductKernel(const Match& match, const std::string& label) {
  KernelStep k;
  const DType dtype = match.gemm->dtype;
  const Shape& sizes = match.out_sizes;
  std::vector<IndexExpr> idx, extents;
  for (size_t d = 0; d < sizes.size(); ++d) {
    k.kernel.outer.push_back({static_cast<int>(d), IndexExpr::Const(sizes[d])});
    idx.push_back(IndexExpr::Var(static_cast<int>(d)));
    extents.push_back(IndexExpr::Const(sizes[d]));
  }
  const IndexExpr point = Linearize(idx, extents);
  match.gemm->product_param = AddParam(k, match.out_slot, dtype, false);
  Stage store;
  store.kind = Stage::Kind::kStore;
  store.value = ValueExpr::Load(match.gemm->product_param, dtype, point);
  store.buffer = AddParam(k, match.out_slot, dtype, /*output=*/true);
  store.index = point;
  k.kernel.stages.push_back(std::move(store));
  k.allocate.push_back(match.out_slot);
  k.computes.push_back(label);
  return k;
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

void FuseGemmEpilogues(const Graph& graph, Plan& plan) {
  std::vector<PlanStep> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep& step = plan.steps[i];
    std::optional<Match> match;
    if (!step.is_kernel) match = MatchProduct(graph, plan, step);
    if (!match.has_value()) {
      steps.push_back(std::move(step));
      continue;
    }
    PlanStep fused;
    fused.is_kernel = true;
    fused.node = step.node;
    fused.release = step.release;
    PlanStep* next = i + 1 < plan.steps.size() ? &plan.steps[i + 1] : nullptr;
    const int param = next != nullptr && next->is_kernel
                          ? InputParam(next->kernel, match->out_slot)
                          : -1;
    if (param >= 0 && Readers(plan, match->out_slot) == 1 &&
        IsPointwiseEpilogue(next->kernel.kernel, param, match->out_sizes)) {
      fused.kernel = std::move(next->kernel);
      fused.release.insert(fused.release.end(), next->release.begin(),
                           next->release.end());
      match->gemm->product_param = param;
      ++i;
    } else if (match->bias.has_value()) {
      fused.kernel = StoreProductKernel(*match, graph.node(step.node).name);
    } else {
      // A bare product: the eager kernel calls the same BLAS.
      steps.push_back(std::move(step));
      continue;
    }
    if (match->bias.has_value()) AddBias(*match, fused.kernel);
    NameParams(fused.kernel.kernel);
    fused.gemm = std::move(match->gemm);
    steps.push_back(std::move(fused));
  }
  plan.steps = std::move(steps);
}

}  // namespace guardjit
