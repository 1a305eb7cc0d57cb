#include "jit/steps/conv_epilogue.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/logging.h"
#include "jit/cuda/device_conv_step.h"
#include "jit/lowering/lowering.h"
#include "jit/steps/conv_step.h"
#include "jit/steps/extern_epilogue.h"
#include "jit/steps/onednn_conv.h"

namespace guardjit {
namespace {

constexpr const char* kConvolution = "aten.convolution.default";
// BLAS takes int extents.
constexpr int64_t kMaxExtent = std::numeric_limits<int32_t>::max();
// A thread's scratch (one image's result and column matrix) beyond this
// runs eagerly rather than risk an allocation the call cannot survive.
constexpr int64_t kMaxScratchBytes = int64_t{1} << 30;

// A stride/padding/dilation argument: one value per spatial dim, or one for
// all of them (graph binding has made a bare int a list).
std::optional<ConvStep::Dims3> SpatialList(const Arg& arg, int spatial,
                                           int64_t fill) {
  if (!arg.is_list()) return std::nullopt;
  const Arg::List& list = arg.as_list();
  if (list.size() != 1 && static_cast<int>(list.size()) != spatial) {
    return std::nullopt;
  }
  ConvStep::Dims3 dims = {fill, fill, fill};
  for (int i = 0; i < spatial; ++i) {
    const Arg& v = list[list.size() == 1 ? 0 : i];
    if (!v.is_int()) return std::nullopt;
    dims[3 - spatial + i] = v.as_int();
  }
  return dims;
}

struct Match {
  std::shared_ptr<ConvStep> conv;
  ExternProduct product;
  std::optional<FixedRef> bias;  // [out channels]
};

// `sizes` with a symbolic dim 0 read as 1 (a dynamic entry's batch, bound
// per call), when every other dim is fixed.
std::optional<std::vector<IndexExpr>> BatchOfOne(
    const std::vector<IndexExpr>& sizes) {
  std::vector<IndexExpr> out = sizes;
  if (out.empty()) return std::nullopt;
  if (!out[0].is_const()) out[0] = IndexExpr::Const(1);
  return out;
}

absl::StatusOr<Match> MatchConv(const Graph& graph, const Plan& plan,
                                const PlanStep& step, bool device) {
  const Node& node = graph.node(step.node);
  const auto eager = [](absl::string_view why) {
    return absl::UnimplementedError(why);
  };
  if (node.args.size() != 9) return eager("unexpected arguments");
  if (!node.args[6].is_bool() || node.args[6].as_bool()) {
    return eager("transposed convolution");
  }
  Match match;
  match.product.slot = ExternOutputSlot(plan, step);
  if (match.product.slot < 0) return eager("no output slot");
  const Slot& out = plan.slots[match.product.slot];
  if (out.dtype != DType::kFloat32 && out.dtype != DType::kFloat64 &&
      !(device &&
        (out.dtype == DType::kFloat16 || out.dtype == DType::kBFloat16))) {
    return eager(absl::StrCat(DTypeName(out.dtype),
                              device
                                  ? ": device conv steps take float32, "
                                    "float64 and float16"
                                  : ": conv steps take float32 and float64"));
  }
  // A dynamic entry's batch may be symbolic: the checks below read it as 1,
  // and Bind evaluates it per call. Every other extent is fixed.
  std::optional<TensorRef> input_ref = ArgRef(graph, plan, step, 0, out.dtype);
  std::optional<Shape> out_sizes;
  std::optional<FixedRef> input;
  if (input_ref.has_value() && !out.sizes.empty() &&
      !input_ref->sizes.empty() &&
      out.sizes[0].is_const() == input_ref->sizes[0].is_const()) {
    std::optional<std::vector<IndexExpr>> out_batch_of_one =
        BatchOfOne(out.sizes);
    TensorRef input_batch_of_one = *input_ref;
    if (std::optional<std::vector<IndexExpr>> sizes =
            BatchOfOne(input_ref->sizes)) {
      input_batch_of_one.sizes = *std::move(sizes);
      input = FixedRefOf(input_batch_of_one);
    }
    if (out_batch_of_one.has_value()) {
      out_sizes = ConcreteShape(*out_batch_of_one);
    }
  }
  std::optional<FixedRef> weight = FixedArg(graph, plan, step, 1, out.dtype);
  if (!out_sizes.has_value() || !input.has_value() || !weight.has_value()) {
    return eager("operands without fixed sizes");
  }
  const int rank = static_cast<int>(out_sizes->size());
  if (rank < 3 || rank > 5 || static_cast<int>(input->sizes.size()) != rank ||
      static_cast<int>(weight->sizes.size()) != rank) {
    return eager("unexpected ranks");
  }
  auto conv = std::make_shared<ConvStep>();
  ConvStep& s = *conv;
  s.target = node.target;
  s.dtype = out.dtype;
  s.spatial = rank - 2;
  const std::optional<ConvStep::Dims3> stride =
      SpatialList(node.args[3], s.spatial, 1);
  const std::optional<ConvStep::Dims3> padding =
      SpatialList(node.args[4], s.spatial, 0);
  const std::optional<ConvStep::Dims3> dilation =
      SpatialList(node.args[5], s.spatial, 1);
  if (!stride || !padding || !dilation || !node.args[8].is_int()) {
    return eager("stride, padding, dilation or groups not literal ints");
  }
  s.stride = *stride;
  s.padding = *padding;
  s.dilation = *dilation;
  s.groups = node.args[8].as_int();
  s.batch = (*out_sizes)[0];
  if (s.groups < 1 || input->sizes[1] % s.groups != 0 ||
      (*out_sizes)[1] % s.groups != 0) {
    return eager("channels not divisible by groups");
  }
  s.in_channels = input->sizes[1] / s.groups;
  s.out_channels = (*out_sizes)[1] / s.groups;
  for (int i = 0; i < s.spatial; ++i) {
    const int d = 3 - s.spatial + i;
    s.in[d] = input->sizes[2 + i];
    s.out[d] = (*out_sizes)[2 + i];
    s.kernel[d] = weight->sizes[2 + i];
  }
  for (int64_t extent : {s.batch, s.in_channels, s.out_channels, s.rows(),
                         s.cols(), s.groups * s.out_channels}) {
    if (extent < 1) return eager("an empty extent");
    if (extent > kMaxExtent) return eager("extents beyond BLAS's int range");
  }
  const int64_t per_column = s.groups * s.out_channels + s.rows();
  if (s.cols() > kMaxScratchBytes / ItemSize(s.dtype) / per_column) {
    return eager("an image's column matrix takes over 1 GiB");
  }
  s.input = *std::move(input);
  s.weight = *std::move(weight);
  if (!out.sizes[0].is_const()) {
    s.symbolic = ConvStep::Symbolic{out.sizes[0], *std::move(input_ref)};
  }
  if (!node.args[2].is_none()) {
    match.bias = FixedArg(graph, plan, step, 2, out.dtype);
    if (!match.bias.has_value() || match.bias->sizes.size() != 1) {
      return eager("a bias without fixed sizes");
    }
  }
  match.product.dtype = s.dtype;
  match.product.sizes = out.sizes;
  match.product.strides = out.strides;
  match.product.label = node.name;
  match.conv = std::move(conv);
  return match;
}

// Adds the bias (over channels, outer loop 1) to every load of the result.
void AddBias(const FixedRef& bias, DType dtype, Epilogue& epilogue) {
  const int param =
      AddParam(epilogue.step.kernel, bias.slot, dtype, /*output=*/false);
  const IndexExpr index =
      IndexExpr::Var(1) * IndexExpr::Const(bias.strides[0]) +
      IndexExpr::Const(bias.offset);
  AddToProduct(epilogue, ValueExpr::Load(param, dtype, index));
}

// `e` as constant + sum of coefficient * loop variable, when it is that
// (sums and products by constants of loop variables); else nullopt.
std::optional<absl::flat_hash_map<int, int64_t>> AffineForm(
    const IndexExpr& e) {
  using Kind = IndexExpr::Kind;
  absl::flat_hash_map<int, int64_t> form;  // var -> coefficient; -1: const
  switch (e.kind()) {
    case Kind::kConst:
      form[-1] = e.value();
      return form;
    case Kind::kVar:
      form[e.id()] = 1;
      return form;
    case Kind::kAdd: {
      std::optional<absl::flat_hash_map<int, int64_t>> a = AffineForm(e.lhs());
      std::optional<absl::flat_hash_map<int, int64_t>> b = AffineForm(e.rhs());
      if (!a.has_value() || !b.has_value()) return std::nullopt;
      for (const auto& [var, k] : *b) (*a)[var] += k;
      return a;
    }
    case Kind::kMul: {
      const bool left = e.lhs().is_const();
      if (!left && !e.rhs().is_const()) return std::nullopt;
      const int64_t k = left ? e.lhs().value() : e.rhs().value();
      std::optional<absl::flat_hash_map<int, int64_t>> a =
          AffineForm(left ? e.rhs() : e.lhs());
      if (!a.has_value()) return std::nullopt;
      for (auto& [var, c] : *a) c *= k;
      return a;
    }
    default:
      return std::nullopt;
  }
}

// Whether `a` and `b` are the same affine form, loop variables in
// `unit_vars` (loops of one iteration: 0) left out.
bool SameAffine(const IndexExpr& a, const IndexExpr& b,
                const absl::flat_hash_set<int>& unit_vars) {
  std::optional<absl::flat_hash_map<int, int64_t>> fa = AffineForm(a);
  std::optional<absl::flat_hash_map<int, int64_t>> fb = AffineForm(b);
  if (!fa.has_value() || !fb.has_value()) return false;
  for (const auto* m : {&*fa, &*fb}) {
    for (const auto& [var, k] : *m) {
      if (unit_vars.contains(var)) continue;
      const auto ia = fa->find(var), ib = fb->find(var);
      if ((ia == fa->end() ? 0 : ia->second) !=
          (ib == fb->end() ? 0 : ib->second)) {
        return false;
      }
    }
  }
  return true;
}

// Whether every read of buffer `param` in `value` is at `index`.
bool ReadsOnlyAt(const ValueExpr& value, int param, const IndexExpr& index,
                 const absl::flat_hash_set<int>& unit_vars,
                 absl::flat_hash_set<const void*>& seen) {
  if (!seen.insert(value.id()).second) return true;
  if (value.kind() == ValueExpr::Kind::kLoad && value.buffer() == param) {
    return SameAffine(value.index(), index, unit_vars);
  }
  if (value.kind() == ValueExpr::Kind::kGather && value.buffer() == param) {
    return false;
  }
  for (int i = 0; i < value.num_operands(); ++i) {
    if (!ReadsOnlyAt(value.operand(i), param, index, unit_vars, seen)) {
      return false;
    }
  }
  return true;
}

// The output parameter of `epilogue` (after ReindexLoads) that it stores
// at exactly the element it reads product parameter `product` from, in its
// only stage, a pointwise store: there oneDNN may write the product and
// the epilogue run in place. -1 when there is none.
int InPlaceParam(const Kernel& epilogue, int product) {
  if (epilogue.stages.size() != 1) return -1;
  const Stage& stage = epilogue.stages[0];
  if (stage.kind != Stage::Kind::kStore || !stage.loops.empty() ||
      stage.buffer < 0 || stage.buffer == product ||
      !epilogue.buffers[stage.buffer].is_output) {
    return -1;
  }
  // The scheduler indexes a loop of one iteration with 0 where ReindexLoads
  // wrote its variable.
  absl::flat_hash_set<int> unit_vars;
  for (const LoopRange& loop : epilogue.outer) {
    if (loop.extent.is_const(1)) unit_vars.insert(loop.var);
  }
  absl::flat_hash_set<const void*> seen;
  return ReadsOnlyAt(stage.value, product, stage.index, unit_vars, seen)
             ? stage.buffer
             : -1;
}

// The epilogue of a channels-last oneDNN convolution as the library's
// pointwise loop, when it is act(product) or act(product + residual) stored
// in place (InPlaceParam: `output`), float32, the residual an input read at
// the element stored; else nullopt.
std::optional<PointwiseEpilogue> MatchPointwise(const Kernel& epilogue,
                                                int product, int output) {
  if (output < 0 || epilogue.stages.size() != 1) return std::nullopt;
  const Stage& stage = epilogue.stages[0];
  ValueExpr core = stage.value;
  PointwiseEpilogue ops;
  if (std::optional<PointwiseEpilogue> act =
          MatchPointwiseActivation(stage.value, &core)) {
    ops = *act;
  }
  const auto is_product = [&](const ValueExpr& e) {
    return e.kind() == ValueExpr::Kind::kLoad && e.buffer() == product;
  };
  if (is_product(core)) return ops;
  if (core.kind() != ValueExpr::Kind::kBinary ||
      core.binary_op() != BinaryOp::kAdd) {
    return std::nullopt;
  }
  for (int i = 0; i < 2; ++i) {
    const ValueExpr& r = core.operand(1 - i);
    if (!is_product(core.operand(i)) || r.kind() != ValueExpr::Kind::kLoad ||
        r.buffer() == product || r.dtype() != DType::kFloat32 ||
        epilogue.buffers[r.buffer()].is_output) {
      continue;
    }
    absl::flat_hash_set<int> unit_vars;
    for (const LoopRange& loop : epilogue.outer) {
      if (loop.extent.is_const(1)) unit_vars.insert(loop.var);
    }
    absl::flat_hash_set<const void*> seen;
    if (!ReadsOnlyAt(r, r.buffer(), stage.index, unit_vars, seen)) {
      return std::nullopt;
    }
    ops.residual_param = r.buffer();
    return ops;
  }
  return std::nullopt;
}

// Replaces Lower's reason for leaving `node` eager by `why`, or drops it
// when `why` is empty.
void SetReason(const Node& node, const std::string& why,
               std::vector<std::string>* reasons) {
  if (reasons == nullptr) return;
  const std::string prefix = absl::StrCat(node.name, " (", node.target, "): ");
  for (auto it = reasons->begin(); it != reasons->end(); ++it) {
    if (absl::StartsWith(*it, prefix)) {
      reasons->erase(it);
      break;
    }
  }
  if (!why.empty()) reasons->push_back(prefix + why);
}

}  // namespace

void FuseConvSteps(const Graph& graph, Plan& plan,
                   std::vector<std::string>* eager_reasons, bool device) {
  std::vector<PlanStep> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep& step = plan.steps[i];
    const Node* node = step.is_kernel ? nullptr : &graph.node(step.node);
    if (node == nullptr || node->target != kConvolution) {
      steps.push_back(std::move(step));
      continue;
    }
    absl::StatusOr<Match> match = MatchConv(graph, plan, step, device);
    if (!match.ok()) {
      SetReason(*node, absl::StrCat("no conv step: ", match.status().message()),
                eager_reasons);
      steps.push_back(std::move(step));
      continue;
    }
    SetReason(*node, "", eager_reasons);
    std::optional<Epilogue> epilogue =
        TakeEpilogue(plan, &i, match->product, /*store_bare=*/true);
    match->conv->product_param = epilogue->product_param;
    bool bias_in_epilogue = match->bias.has_value();
    if (!device && OneDnnEnabled() && match->conv->dtype == DType::kFloat32) {
      absl::StatusOr<ConvStep::OneDnn> onednn =
          PlanOneDnnConv(*match->conv, match->bias, plan);
      if (onednn.ok()) {
        bias_in_epilogue = bias_in_epilogue && !onednn->bias.has_value();
        // A result stored channels last is oneDNN's nhwc result as it is:
        // oneDNN writes it in place of a copy.
        if (epilogue->bare_store_param >= 0 && !bias_in_epilogue &&
            onednn->block == 0 && !match->product.strides.empty()) {
          onednn->result_param = epilogue->bare_store_param;
        }
        match->conv->onednn = *std::move(onednn);
        // Its loop order is OrderChannelsLastLoops' (channels_last.h).
        ReindexLoads(epilogue->step.kernel.kernel, epilogue->product_param,
                     OneDnnResultIndex(*match->conv));
        ConvStep::OneDnn& planned = *match->conv->onednn;
        if (planned.result_param < 0 && planned.block == 0) {
          planned.in_place_param = InPlaceParam(epilogue->step.kernel.kernel,
                                                epilogue->product_param);
        }
        // An epilogue the library's loop runs: no kernel to compile.
        if (std::optional<PointwiseEpilogue> ops =
                MatchPointwise(epilogue->step.kernel.kernel,
                               epilogue->product_param, planned.in_place_param);
            ops.has_value() && !bias_in_epilogue &&
            PointwiseEpiloguesEnabled()) {
          planned.pointwise = *ops;
          planned.result_param = planned.in_place_param;
          planned.in_place_param = -1;
        }
      } else {
        Log(LogTopic::kCodegen,
            absl::StrCat(
                "node '", node->name, "' (", node->target,
                "): im2col + BLAS, not oneDNN: ", onednn.status().message()));
      }
    }
    if (bias_in_epilogue) {
      AddBias(*match->bias, match->conv->dtype, *epilogue);
    }
    NameParams(epilogue->step.kernel.kernel);
    if (device) {
      // The im2col kernel runs right before the products.
      if (std::optional<PlanStep> im2col = PlanDeviceConv(
              *match->conv, epilogue->step.kernel, plan, node->name)) {
        epilogue->step.release.push_back(match->conv->device->cols_slot);
        steps.push_back(*std::move(im2col));
      }
    }
    epilogue->step.conv = std::move(match->conv);
    steps.push_back(std::move(epilogue->step));
  }
  plan.steps = std::move(steps);
}

}  // namespace guardjit
