#include "jit/steps/gemm_epilogue.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "jit/lowering/lowering.h"
#include "jit/steps/extern_epilogue.h"
#include "jit/steps/gemm_step.h"
#include "jit/steps/onednn_conv.h"
#include "jit/steps/onednn_gemm.h"
#include "jit/steps/packed_gemm.h"
#include "jit/steps/pointwise_epilogue.h"

namespace guardjit {
namespace {

constexpr const char* kMm = "aten.mm.default";
constexpr const char* kAddmm = "aten.addmm.default";
constexpr const char* kBmm = "aten.bmm.default";

// Whether `value` converts to a finite T without overflow, and is not 0
// there.
template <typename T>
bool FitsNonZero(double value) {
  return std::isfinite(value) &&
         std::fabs(value) <= std::numeric_limits<T>::max() &&
         static_cast<T>(value) != 0;
}

// Half-precision products scale in float32 (cuBLASLt's scale type).
bool FitsNonZero(DType dtype, double value) {
  return dtype == DType::kFloat64 ? FitsNonZero<double>(value)
                                  : FitsNonZero<float>(value);
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
  std::vector<IndexExpr> out_sizes;
  // addmm with beta != 0: fixed, or over the entry's symbols in a dynamic
  // entry (its symbolic extents are the product's own: see MatchProduct).
  std::optional<TensorRef> bias;
  double beta = 1;
};

std::optional<Match> MatchProduct(const Graph& graph, const Plan& plan,
                                  const PlanStep& step, bool device) {
  const Node& node = graph.node(step.node);
  const bool mm = node.target == kMm, addmm = node.target == kAddmm,
             bmm = node.target == kBmm;
  if (!mm && !addmm && !bmm) return std::nullopt;
  Match match;
  match.out_slot = ExternOutputSlot(plan, step);
  if (match.out_slot < 0) return std::nullopt;
  const Slot& out = plan.slots[match.out_slot];
  const bool half =
      out.dtype == DType::kFloat16 || out.dtype == DType::kBFloat16;
  if (out.dtype != DType::kFloat32 && out.dtype != DType::kFloat64 &&
      !(device && half)) {
    return std::nullopt;
  }
  const auto ref_of = [&](int arg) {
    return ArgRef(graph, plan, step, arg, out.dtype);
  };
  const int first = addmm ? 1 : 0;
  std::optional<TensorRef> a = ref_of(first), b = ref_of(first + 1);
  if (!a.has_value() || !b.has_value()) return std::nullopt;
  const size_t rank = bmm ? 3 : 2;
  if (a->sizes.size() != rank || b->sizes.size() != rank ||
      out.sizes.size() != rank) {
    return std::nullopt;
  }
  auto gemm = std::make_shared<GemmStep>();
  gemm->target = node.target;
  gemm->dtype = out.dtype;
  gemm->batched = bmm;
  GemmStep::Symbolic extents{bmm ? out.sizes[0] : IndexExpr::Const(1),
                             out.sizes[rank - 2],
                             out.sizes[rank - 1],
                             a->sizes[rank - 1],
                             *a,
                             *b};
  const std::optional<FixedRef> fixed_a = FixedRefOf(*a),
                                fixed_b = FixedRefOf(*b);
  const bool fixed = fixed_a && fixed_b && extents.batch.is_const() &&
                     extents.m.is_const() && extents.n.is_const() &&
                     extents.k.is_const();
  if (fixed) {
    gemm->batch = extents.batch.value();
    gemm->m = extents.m.value();
    gemm->n = extents.n.value();
    gemm->k = extents.k.value();
    constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
    for (int64_t extent : {gemm->batch, gemm->m, gemm->n, gemm->k}) {
      if (extent < 1 || extent > kMaxExtent) return std::nullopt;
    }
    gemm->a = *fixed_a;
    gemm->b = *fixed_b;
  } else {
    // A dynamic entry's product: Bind checks its extents per call.
    gemm->symbolic = std::move(extents);
  }
  if (addmm) {
    gemm->alpha = ScalarArg(node.args[4]);
    match.beta = ScalarArg(node.args[3]);
    if (!std::isfinite(match.beta)) return std::nullopt;
    if (FitsNonZero(out.dtype, match.beta)) {
      match.bias = ref_of(0);
      if (!match.bias.has_value() || match.bias->sizes.size() > 2) {
        return std::nullopt;
      }
      // With every size symbolic (GJ_DYNAMIC_DYNAMIC) the bias's extents
      // are symbols too. The epilogue indexes a dim that is not a constant
      // 1 by the product's loop over the dim it lines up with, which is
      // right only when the extents are the same expression (the shape
      // guards unify b.size(0) with the weight's): otherwise the bias stays
      // with the eager kernel, which broadcasts at run time.
      const size_t bias_rank = match.bias->sizes.size();
      for (size_t d = 0; d < bias_rank; ++d) {
        const IndexExpr& size = match.bias->sizes[d];
        if (!size.is_const() && !(size == out.sizes[rank - bias_rank + d])) {
          return std::nullopt;
        }
      }
    } else if (match.beta != 0) {
      return std::nullopt;  // rounds to 0 or overflows: the eager kernel's
    }
  }
  if (!FitsNonZero(out.dtype, gemm->alpha)) return std::nullopt;
  match.gemm = std::move(gemm);
  match.out_sizes = out.sizes;
  return match;
}

// Adds beta * bias (broadcast over the [M, N] product) to every load of the
// product in `epilogue`.
void AddBias(const Match& match, Epilogue& epilogue) {
  const TensorRef& bias = *match.bias;
  const DType dtype = match.gemm->dtype;
  const int param =
      AddParam(epilogue.step.kernel, bias.slot, dtype, /*output=*/false);
  const int rank = static_cast<int>(bias.sizes.size());
  IndexExpr index = bias.offset;
  for (int d = 0; d < rank; ++d) {
    if (!bias.sizes[d].is_const(1)) {
      index = index + IndexExpr::Var(2 - rank + d) * bias.strides[d];
    }
  }
  ValueExpr term = ValueExpr::Load(param, dtype, index);
  if (match.beta != 1) {
    term = ValueExpr::Binary(BinaryOp::kMul,
                             ValueExpr::Const(dtype, match.beta), term);
  }
  AddToProduct(epilogue, term);
}

// `e` without the float conversions around it (a half-precision epilogue
// computes in float32, as cuBLASLt's does).
const ValueExpr& WithoutFloatCasts(const ValueExpr& e) {
  const ValueExpr* v = &e;
  while (v->kind() == ValueExpr::Kind::kCast && IsFloating(v->dtype()) &&
         IsFloating(v->operand(0).dtype())) {
    v = &v->operand(0);
  }
  return *v;
}

// What cuBLASLt's own epilogue computes of `epilogue` (taken for `match`,
// before addmm's bias joins it): a kernel that only stores the product, or
// relu or tanh-gelu of it, at the point it computes, into an output of the
// product's dtype; with addmm's bias when that is n contiguous values at
// beta 1 (the epilogue's bias vector) or a full [M, N] matrix cuBLASLt reads
// in place (its C, at any beta). nullopt when the epilogue kernel is needed.
std::optional<GemmStep::DeviceEpilogue> DeviceEpilogueOf(
    const Match& match, const Epilogue& epilogue) {
  using Activation = GemmStep::DeviceEpilogue::Activation;
  const KernelStep& step = epilogue.step.kernel;
  const Kernel& kernel = step.kernel;
  const GemmStep& gemm = *match.gemm;
  if (kernel.stages.size() != 1 || kernel.buffers.size() != 2 ||
      kernel.num_checks != 0) {
    return std::nullopt;
  }
  const Stage& stage = kernel.stages[0];
  if (stage.kind != Stage::Kind::kStore || stage.buffer < 0 ||
      stage.buffer == epilogue.product_param ||
      !kernel.buffers[stage.buffer].is_output ||
      kernel.buffers[stage.buffer].dtype != gemm.dtype ||
      !IsPointIndex(stage.index, match.out_sizes)) {
    return std::nullopt;
  }
  GemmStep::DeviceEpilogue result;
  const ValueExpr* value = &WithoutFloatCasts(stage.value);
  if (value->kind() == ValueExpr::Kind::kUnary) {
    if (value->unary_op() == UnaryOp::kRelu) {
      result.activation = Activation::kRelu;
    } else if (value->unary_op() == UnaryOp::kGeluTanh) {
      result.activation = Activation::kGeluTanh;
    } else {
      return std::nullopt;
    }
    value = &WithoutFloatCasts(value->operand(0));
  }
  if (value->kind() != ValueExpr::Kind::kLoad ||
      value->buffer() != epilogue.product_param ||
      !IsPointIndex(value->index(), match.out_sizes)) {
    return std::nullopt;
  }
  if (match.bias.has_value()) {
    const TensorRef& symbolic_bias = *match.bias;
    const std::optional<FixedRef> fixed = FixedRefOf(symbolic_bias);
    const int rank = static_cast<int>(symbolic_bias.sizes.size());
    const IndexExpr n =
        gemm.symbolic ? gemm.symbolic->n : IndexExpr::Const(gemm.n);
    // n contiguous values: a dynamic entry's bias of n (the same
    // expression) values at unit stride too, bound per call (Bind).
    const bool row =
        (rank == 1 || (rank == 2 && symbolic_bias.sizes[0].is_const(1))) &&
        symbolic_bias.sizes.back() == n &&
        (n.is_const(1) || symbolic_bias.strides.back().is_const(1)) &&
        (fixed.has_value() || gemm.symbolic.has_value());
    // Else the whole [M, N] bias as cuBLASLt's C, at any beta: its rows
    // where cuBLASLt reads them in place (unit column stride).
    const bool matrix = fixed.has_value() && !gemm.batched && !gemm.symbolic &&
                        rank == 2 && fixed->sizes[0] == gemm.m &&
                        fixed->sizes[1] == gemm.n &&
                        (fixed->strides[1] == 1 || gemm.n == 1) &&
                        (fixed->strides[0] >= gemm.n || gemm.m == 1);
    if (match.beta == 1 && !gemm.batched && row) {
      // A symbolic one: its slot now, its offset and extent per call
      // (GemmStep::Symbolic::bias).
      result.bias =
          fixed.has_value() ? *fixed : FixedRef{symbolic_bias.slot, {}, {}, 0};
    } else if (matrix) {
      const FixedRef& bias = *fixed;
      result.c = bias;
      result.c->strides = {gemm.m == 1 ? gemm.n : bias.strides[0], 1};
      result.beta = match.beta;
    } else {
      return std::nullopt;
    }
  }
  // cuBLASLt's epilogues on float64 products are not relied on (beta * C is
  // the product's own term).
  if (gemm.dtype == DType::kFloat64 &&
      (result.bias.has_value() || result.activation != Activation::kNone)) {
    return std::nullopt;
  }
  result.out_slot = step.buffer_slots[stage.buffer];
  return result;
}

// The epilogue (taken for `match`, before addmm's bias joins it) as the
// library's pointwise loop after a packed product: one float32 store at the
// element computed, of act(product), act(product + residual) or
// act(product + (residual + residual2)), the residuals float32 inputs read
// at the same element; addmm's bias, if any,
// n contiguous fixed values at beta 1. nullopt when the kernel is needed.
std::optional<GemmStep::Packed::Pointwise> HostPointwiseOf(
    const Match& match, const Epilogue& epilogue, int* output) {
  const Kernel& kernel = epilogue.step.kernel.kernel;
  const GemmStep& gemm = *match.gemm;
  if (gemm.dtype != DType::kFloat32 || gemm.batched || gemm.symbolic ||
      kernel.stages.size() != 1 || kernel.num_checks != 0) {
    return std::nullopt;
  }
  const Stage& stage = kernel.stages[0];
  if (stage.kind != Stage::Kind::kStore || !stage.loops.empty() ||
      stage.buffer < 0 || stage.buffer == epilogue.product_param ||
      !kernel.buffers[stage.buffer].is_output ||
      kernel.buffers[stage.buffer].dtype != DType::kFloat32 ||
      !IsPointIndex(stage.index, match.out_sizes)) {
    return std::nullopt;
  }
  GemmStep::Packed::Pointwise result;
  ValueExpr core = stage.value;
  if (std::optional<PointwiseEpilogue> act =
          MatchPointwiseActivation(stage.value, &core)) {
    result.ops = *act;
  }
  const auto at_point = [&](const ValueExpr& e, int param) {
    return e.kind() == ValueExpr::Kind::kLoad && e.buffer() == param &&
           e.dtype() == DType::kFloat32 &&
           IsPointIndex(e.index(), match.out_sizes);
  };
  if (!at_point(core, epilogue.product_param)) {
    if (core.kind() != ValueExpr::Kind::kBinary ||
        core.binary_op() != BinaryOp::kAdd) {
      return std::nullopt;
    }
    // An input (not the product) read at the point.
    const auto residual = [&](const ValueExpr& r) {
      return r.kind() == ValueExpr::Kind::kLoad &&
             r.buffer() != epilogue.product_param &&
             !kernel.buffers[r.buffer()].is_output && at_point(r, r.buffer());
    };
    for (int i = 0; i < 2 && result.ops.residual_param < 0; ++i) {
      const ValueExpr& r = core.operand(1 - i);
      if (!at_point(core.operand(i), epilogue.product_param)) continue;
      if (residual(r)) {
        result.ops.residual_param = r.buffer();
      } else if (r.kind() == ValueExpr::Kind::kBinary &&
                 r.binary_op() == BinaryOp::kAdd &&
                 r.dtype() == DType::kFloat32 && residual(r.operand(0)) &&
                 residual(r.operand(1))) {
        // product + (r1 + r2), summed in that order.
        result.ops.residual_param = r.operand(0).buffer();
        result.ops.residual2_param = r.operand(1).buffer();
      }
    }
    if (result.ops.residual_param < 0) return std::nullopt;
  }
  if (match.bias.has_value()) {
    const std::optional<FixedRef> bias = FixedRefOf(*match.bias);
    const size_t rank = match.bias->sizes.size();
    if (!bias.has_value() || match.beta != 1 ||
        !(rank == 1 || (rank == 2 && bias->sizes[0] == 1)) ||
        bias->sizes.back() != gemm.n ||
        (gemm.n != 1 && bias->strides.back() != 1)) {
      return std::nullopt;
    }
    result.bias = *bias;
  }
  *output = stage.buffer;
  return result;
}

}  // namespace

void FuseGemmEpilogues(const Graph& graph, Plan& plan, bool device) {
  std::vector<PlanStep> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    std::optional<Match> match;
    if (!plan.steps[i].is_kernel)
      match = MatchProduct(graph, plan, plan.steps[i], device);
    // A bare product (no bias, no consumer to fuse) is a step too: on the
    // CPU BLAS writes it in place on the program's pool with OpenBLAS on one
    // thread (as the eager kernel's BLAS call would not: its threads spin
    // on the pool's cores) and without allocating; a device runs it on
    // cuBLASLt.
    std::optional<Epilogue> epilogue;
    if (match.has_value()) {
      const ExternProduct product{match->out_slot, match->gemm->dtype,
                                  match->out_sizes,
                                  graph.node(plan.steps[i].node).name};
      epilogue = TakeEpilogue(plan, &i, product, /*store_bare=*/true);
    }
    if (!epilogue.has_value()) {
      steps.push_back(std::move(plan.steps[i]));
      continue;
    }
    match->gemm->product_param = epilogue->product_param;
    if (!device && epilogue->bare_store_param >= 0 &&
        !match->bias.has_value() &&
        plan.slots[match->out_slot].strides.empty()) {
      match->gemm->result_param = epilogue->bare_store_param;
    }
    if (device) {
      GemmStep& gemm = *match->gemm;
      gemm.device_epilogue = DeviceEpilogueOf(*match, *epilogue);
      if (gemm.symbolic.has_value() && gemm.device_epilogue.has_value() &&
          gemm.device_epilogue->bias.has_value()) {
        gemm.symbolic->bias = *match->bias;
      }
    }
    // Before the bias joins the epilogue: whether the library's loop can
    // run it after a packed product.
    int pointwise_output = -1;
    std::optional<GemmStep::Packed::Pointwise> pointwise;
    if (!device && match->gemm->result_param < 0 &&
        PointwiseEpiloguesEnabled()) {
      pointwise = HostPointwiseOf(*match, *epilogue, &pointwise_output);
    }
    if (match->bias.has_value()) AddBias(*match, *epilogue);
    if (!device && PackedGemmEnabled()) {
      // Linear layers at a serving batch: code generated for the product on
      // the weight packed once (packed_gemm.h), else oneDNN's matmul
      // (onednn_gemm.h), else BLAS.
      absl::StatusOr<GemmStep::Packed> packed =
          PlanPackedGemm(*match->gemm, plan);
      if (packed.ok()) {
        match->gemm->packed = *std::move(packed);
        if (pointwise.has_value()) {
          match->gemm->packed->pointwise = *std::move(pointwise);
          match->gemm->result_param = pointwise_output;
        }
      }
    }
    if (!device && !match->gemm->packed.has_value() && OneDnnEnabled()) {
      absl::StatusOr<GemmStep::OneDnn> dnn = PlanOneDnnGemm(*match->gemm, plan);
      if (dnn.ok()) match->gemm->onednn = *std::move(dnn);
    }
    NameParams(epilogue->step.kernel.kernel);
    epilogue->step.gemm = std::move(match->gemm);
    steps.push_back(std::move(epilogue->step));
  }
  plan.steps = std::move(steps);
}

}  // namespace guardjit
