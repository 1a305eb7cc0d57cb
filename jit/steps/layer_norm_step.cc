#include "jit/steps/layer_norm_step.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/step_runner.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

constexpr const char* kTarget = "aten.native_layer_norm.default";

// Partial sums per row: 16 lanes in every instruction set (one AVX-512
// vector, two AVX2 ones), so each sums in the same order and rounds alike.
constexpr int kLanes = 16;

// One row: the sums the lowering computes (sum, then the squared
// deviations from the mean), then the normalized row.
inline __attribute__((always_inline)) void Row(const float* x, const float* w,
                                               const float* b, float eps,
                                               int64_t n, float* y,
                                               float* mean_out,
                                               float* rstd_out) {
  std::array<float, kLanes> acc{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) acc[l] += x[i + l];
  }
  float sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += acc[l];
  for (; i < n; ++i) sum += x[i];
  const float count = static_cast<float>(n);
  const float mean = sum / count;
  std::array<float, kLanes> acc2{};
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      const float d = x[i + l] - mean;
      acc2[l] += d * d;
    }
  }
  float m2 = 0;
  for (int l = 0; l < kLanes; ++l) m2 += acc2[l];
  for (; i < n; ++i) {
    const float d = x[i] - mean;
    m2 += d * d;
  }
  const float rstd = 1.0f / std::sqrt(m2 / count + eps);
  // ((x - mean) * rstd) * weight + bias, in the lowering's order.
  if (w != nullptr && b != nullptr) {
    for (i = 0; i < n; ++i) y[i] = ((x[i] - mean) * rstd) * w[i] + b[i];
  } else if (w != nullptr) {
    for (i = 0; i < n; ++i) y[i] = ((x[i] - mean) * rstd) * w[i];
  } else if (b != nullptr) {
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd + b[i];
  } else {
    for (i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd;
  }
  if (mean_out != nullptr) *mean_out = mean;
  if (rstd_out != nullptr) *rstd_out = rstd;
}

// Rows [first, last) of the arrays.
inline __attribute__((always_inline)) void Rows(const float* x, const float* w,
                                                const float* b, float eps,
                                                int64_t n, float* y,
                                                float* mean, float* rstd,
                                                int64_t first, int64_t last) {
  for (int64_t r = first; r < last; ++r) {
    Row(x + r * n, w, b, eps, n, y + r * n, mean ? mean + r : nullptr,
        rstd ? rstd + r : nullptr);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void RowsAvx512(
    const float* x, const float* w, const float* b, float eps, int64_t n,
    float* y, float* mean, float* rstd, int64_t first, int64_t last) {
  Rows(x, w, b, eps, n, y, mean, rstd, first, last);
}

__attribute__((target("avx2"))) void RowsAvx2(const float* x, const float* w,
                                              const float* b, float eps,
                                              int64_t n, float* y, float* mean,
                                              float* rstd, int64_t first,
                                              int64_t last) {
  Rows(x, w, b, eps, n, y, mean, rstd, first, last);
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

void RunRows(const float* x, const float* w, const float* b, float eps,
             int64_t n, float* y, float* mean, float* rstd, int64_t first,
             int64_t last) {
#if defined(__x86_64__)
  if (kHasAvx512)
    return RowsAvx512(x, w, b, eps, n, y, mean, rstd, first, last);
  if (kHasAvx2) return RowsAvx2(x, w, b, eps, n, y, mean, rstd, first, last);
#endif
  Rows(x, w, b, eps, n, y, mean, rstd, first, last);
}

// Read at each plan (a compile, not a call), so tests can switch it.
bool Enabled() {
  const char* env = std::getenv("GJ_LAYER_NORM_STEP");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

bool IsFloat32(const GraphMeta& metas, const Arg& arg) {
  if (!arg.is_value()) return false;
  const ValueRef v = arg.as_value();
  return metas[v.node][v.index].dtype == DType::kFloat32;
}

class LayerNormStep : public StepRunner {
 public:
  LayerNormStep(const Program& program, int node,
                std::vector<std::pair<int64_t, TensorRef>> args,
                std::array<int, 3> produces, std::shared_ptr<ThreadPool> pool)
      : node_(node),
        args_(std::move(args)),
        produces_(produces),
        pool_(std::move(pool)) {
    static_args_.resize(args_.size());
    for (size_t a = 0; a < args_.size(); ++a) {
      EvaluateRef(args_[a].second, {}, static_args_[a]);
    }
    const Node& n = program.graph->node(node);
    for (int k = 0; k < 3; ++k) shapes_[k] = program.metas[node][k].shape();
    const Shape& in = shapes_[0];
    const int64_t normalized = static_cast<int64_t>(
        n.args[1].is_list() ? n.args[1].as_list().size() : 1);
    n_ = 1;
    for (int64_t d = static_cast<int64_t>(in.size()) - normalized;
         d < static_cast<int64_t>(in.size()); ++d) {
      n_ *= in[d];
    }
    int64_t numel = 1;
    for (int64_t size : in) numel *= size;
    rows_ = n_ == 0 ? 0 : numel / n_;
    eps_ = static_cast<float>(n.args[4].as_scalar().to_double());
  }

  absl::Status Run(StepCall& call) const override {
    const Node& node = call.program.graph->node(node_);
    const auto operand = [&](int i) -> absl::StatusOr<std::optional<Tensor>> {
      const Arg& arg = node.args[i];
      if (!arg.is_value()) return std::optional<Tensor>();
      const ValueRef v = arg.as_value();
      const int64_t key = (int64_t{v.node} << 16) + v.index;
      for (size_t a = 0; a < args_.size(); ++a) {
        if (args_[a].first == key) {
          ASSIGN_OR_RETURN(Tensor t,
                           Contiguous(ViewOf(call.slots, static_args_[a])));
          return std::optional<Tensor>(std::move(t));
        }
      }
      return absl::InternalError(
          absl::StrCat("node '", node.name, "': argument ", i, " not found"));
    };
    ASSIGN_OR_RETURN(const std::optional<Tensor> x, operand(0));
    ASSIGN_OR_RETURN(const std::optional<Tensor> w, operand(2));
    ASSIGN_OR_RETURN(const std::optional<Tensor> b, operand(3));
    if (!x.has_value()) {
      return absl::InternalError(
          absl::StrCat("node '", node.name, "': no input"));
    }
    std::array<Tensor, 3> out;
    for (int k = 0; k < 3; ++k) {
      if (produces_[k] < 0) continue;
      // A destination is contiguous (OutputPlacement).
      if (const Tensor* dest = call.destination(produces_[k])) {
        out[k] = *dest;
      } else {
        ASSIGN_OR_RETURN(out[k], Tensor::Empty(DType::kFloat32, shapes_[k]));
      }
    }
    const float* xd = x->data_as<float>();
    const float* wd = w.has_value() ? w->data_as<float>() : nullptr;
    const float* bd = b.has_value() ? b->data_as<float>() : nullptr;
    float* y = out[0].data_as<float>();
    float* mean = out[1].data_as<float>();
    float* rstd = out[2].data_as<float>();
    // Rows of about 16k elements a chunk: small norms stay on one thread.
    const int64_t grain =
        std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(n_, 1));
    const auto rows = [&](int64_t first, int64_t last) {
      RunRows(xd, wd, bd, eps_, n_, y, mean, rstd, first, last);
    };
    if (pool_ != nullptr && rows_ > grain) {
      pool_->ParallelFor(rows_, grain, rows);
    } else {
      rows(0, rows_);
    }
    for (int k = 0; k < 3; ++k) {
      if (produces_[k] >= 0) call.slots[produces_[k]] = std::move(out[k]);
    }
    return absl::OkStatus();
  }

 private:
  const int node_;
  const std::vector<std::pair<int64_t, TensorRef>> args_;
  std::vector<ConcreteRef> static_args_;
  const std::array<int, 3> produces_;  // the outputs' slots, or -1
  const std::shared_ptr<ThreadPool> pool_;
  std::array<Shape, 3> shapes_;
  int64_t n_ = 1, rows_ = 0;
  float eps_ = 0;
};

}  // namespace

bool TakesLayerNormStep(const Graph& graph, const GraphMeta& metas, int node,
                        int num_symbols) {
  const Node& n = graph.node(node);
  if (n.target != kTarget || num_symbols > 0 || n.args.size() < 5 ||
      !Enabled() || !n.args[4].is_number()) {
    return false;
  }
  if (!IsFloat32(metas, n.args[0])) return false;
  for (int i : {2, 3}) {
    if (!n.args[i].is_none() && !IsFloat32(metas, n.args[i])) return false;
  }
  if (metas[node].size() != 3) return false;
  for (const TensorMeta& m : metas[node]) {
    if (m.dtype != DType::kFloat32) return false;
  }
  return true;
}

absl::StatusOr<ProgramStep> MakeLayerNormStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool) {
  std::array<int, 3> produces = {-1, -1, -1};
  for (size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == node &&
        slot.output >= 0 && slot.output < 3) {
      produces[slot.output] = static_cast<int>(s);
    }
  }
  const Node& n = program.graph->node(node);
  if (produces[0] < 0) {
    return absl::InternalError(
        absl::StrCat("node '", n.name, "': no slot for its result"));
  }
  ProgramStep step;
  step.kind = StepKind::kLayerNorm;
  step.node = node;
  step.can_fail = true;
  step.writes_destinations = true;
  step.label = absl::StrCat("layer norm '", n.name, "'");
  step.runner = std::make_unique<LayerNormStep>(program, node, std::move(args),
                                                produces, std::move(pool));
  return step;
}

void LayerNormRows(const float* x, const float* weight, const float* bias,
                   float eps, int64_t rows, int64_t n, float* y, float* mean,
                   float* rstd) {
  RunRows(x, weight, bias, eps, n, y, mean, rstd, 0, rows);
}

}  // namespace guardjit
