#include "jit/steps/pool_step.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"
#include "core/ops/pool_args.h"
#include "core/status_macros.h"
#include "jit/steps/onednn_conv.h"
#include "runtime/index_expr.h"
#include "runtime/program/call_sizes.h"
#include "runtime/program/step_runner.h"

namespace guardjit {
namespace {

constexpr const char* kMaxPool = "aten.max_pool2d_with_indices.default";
constexpr const char* kMean = "aten.mean.dim";

// NaN-propagating maximum, as the lowering's kMax combine and the reference
// kernel's scan: a NaN tap wins and stays.
inline float MaxNan(float m, float v) { return (v > m || v != v) ? v : m; }

// Channels innermost in input and output: each output pixel is a vector of
// C maxima over the window's taps inside the input.
inline __attribute__((always_inline)) void MaxPoolChannelsLast(
    const float* in, float* out, const PoolShape& s, const MaxPoolWindow& w,
    int64_t first, int64_t last) {
  const float lowest = -std::numeric_limits<float>::infinity();
  for (int64_t row = first; row < last; ++row) {
    const int64_t n = row / s.out_h, y = row % s.out_h;
    for (int64_t x = 0; x < s.out_w; ++x) {
      float* o = out + n * s.out_strides[0] + y * s.out_strides[2] +
                 x * s.out_strides[3];
      for (int64_t c = 0; c < s.c; ++c) o[c] = lowest;
      for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
        const int64_t iy = y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
        if (iy < 0 || iy >= s.h) continue;
        for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
          const int64_t ix =
              x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
          if (ix < 0 || ix >= s.w) continue;
          const float* i = in + n * s.in_strides[0] + iy * s.in_strides[2] +
                           ix * s.in_strides[3];
          for (int64_t c = 0; c < s.c; ++c) o[c] = MaxNan(o[c], i[c]);
        }
      }
    }
  }
}

// Any strides: each output element a scalar scan of its window.
void MaxPoolStrided(const float* in, float* out, const PoolShape& s,
                    const MaxPoolWindow& w, int64_t first, int64_t last) {
  const float lowest = -std::numeric_limits<float>::infinity();
  for (int64_t row = first; row < last; ++row) {
    const int64_t n = row / s.out_h, y = row % s.out_h;
    for (int64_t c = 0; c < s.c; ++c) {
      const float* plane = in + n * s.in_strides[0] + c * s.in_strides[1];
      for (int64_t x = 0; x < s.out_w; ++x) {
        float m = lowest;
        for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
          const int64_t iy =
              y * w.stride[0] - w.padding[0] + ky * w.dilation[0];
          if (iy < 0 || iy >= s.h) continue;
          for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
            const int64_t ix =
                x * w.stride[1] - w.padding[1] + kx * w.dilation[1];
            if (ix < 0 || ix >= s.w) continue;
            m = MaxNan(m, plane[iy * s.in_strides[2] + ix * s.in_strides[3]]);
          }
        }
        out[n * s.out_strides[0] + c * s.out_strides[1] + y * s.out_strides[2] +
            x * s.out_strides[3]] = m;
      }
    }
  }
}

// Channels innermost in the input: per image, C running sums over the
// plane's pixels, in pixel order.
inline __attribute__((always_inline)) void MeanChannelsLast(
    const float* in, float* out, const PoolShape& s, int64_t first,
    int64_t last, float* acc) {
  const float count = static_cast<float>(s.h * s.w);
  for (int64_t n = first; n < last; ++n) {
    for (int64_t c = 0; c < s.c; ++c) acc[c] = 0.0f;
    for (int64_t y = 0; y < s.h; ++y) {
      for (int64_t x = 0; x < s.w; ++x) {
        const float* i = in + n * s.in_strides[0] + y * s.in_strides[2] +
                         x * s.in_strides[3];
        for (int64_t c = 0; c < s.c; ++c) acc[c] += i[c];
      }
    }
    for (int64_t c = 0; c < s.c; ++c) {
      out[n * s.out_strides[0] + c * s.out_strides[1]] = acc[c] / count;
    }
  }
}

void MeanStrided(const float* in, float* out, const PoolShape& s, int64_t first,
                 int64_t last) {
  const float count = static_cast<float>(s.h * s.w);
  for (int64_t n = first; n < last; ++n) {
    for (int64_t c = 0; c < s.c; ++c) {
      const float* plane = in + n * s.in_strides[0] + c * s.in_strides[1];
      float sum = 0.0f;
      for (int64_t y = 0; y < s.h; ++y) {
        for (int64_t x = 0; x < s.w; ++x) {
          sum += plane[y * s.in_strides[2] + x * s.in_strides[3]];
        }
      }
      out[n * s.out_strides[0] + c * s.out_strides[1]] = sum / count;
    }
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void MaxPoolAvx512(
    const float* in, float* out, const PoolShape& s, const MaxPoolWindow& w,
    int64_t first, int64_t last) {
  MaxPoolChannelsLast(in, out, s, w, first, last);
}
__attribute__((target("avx2"))) void MaxPoolAvx2(const float* in, float* out,
                                                 const PoolShape& s,
                                                 const MaxPoolWindow& w,
                                                 int64_t first, int64_t last) {
  MaxPoolChannelsLast(in, out, s, w, first, last);
}
__attribute__((target("avx512f"))) void MeanAvx512(const float* in, float* out,
                                                   const PoolShape& s,
                                                   int64_t first, int64_t last,
                                                   float* acc) {
  MeanChannelsLast(in, out, s, first, last, acc);
}
__attribute__((target("avx2"))) void MeanAvx2(const float* in, float* out,
                                              const PoolShape& s, int64_t first,
                                              int64_t last, float* acc) {
  MeanChannelsLast(in, out, s, first, last, acc);
}

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

// Read at each plan (a compile, not a call), so tests can switch it.
bool Enabled() {
  const char* env = std::getenv("GJ_POOL_STEP");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

// Whether `graph` has a float32 convolution oneDNN may run.
bool HasOneDnnConvolution(const Graph& graph, const GraphMeta& metas) {
  if (!OneDnnEnabled()) return false;
  for (int n = 0; n < static_cast<int>(graph.nodes().size()); ++n) {
    const Node& node = graph.node(n);
    if (node.target == "aten.convolution.default" && node.args.size() == 9 &&
        node.args[6].is_bool() && !node.args[6].as_bool() &&
        !metas[n].empty() && metas[n][0].dtype == DType::kFloat32) {
      return true;
    }
  }
  return false;
}

bool ReadsValue(const Arg& arg, int node, int index) {
  if (arg.is_value()) {
    return arg.as_value().node == node && arg.as_value().index == index;
  }
  if (arg.is_list()) {
    for (const Arg& a : arg.as_list()) {
      if (ReadsValue(a, node, index)) return true;
    }
  }
  return false;
}

// Whether anything in `graph` reads output `index` of node `node`.
bool ReadsOutput(const Graph& graph, int node, int index) {
  for (const Node& n : graph.nodes()) {
    if (n.kind == NodeKind::kGetItem && n.args.size() == 2 &&
        n.args[0].is_value() && n.args[0].as_value().node == node &&
        n.args[1].is_int() && n.args[1].as_int() == index) {
      return true;
    }
    for (const Arg& a : n.args) {
      if (ReadsValue(a, node, index)) return true;
    }
  }
  return false;
}

bool IsFloat32Rank4(const TensorMeta& m) {
  return m.dtype == DType::kFloat32 && m.dim() == 4;
}

// The window of a max_pool2d_with_indices node.
absl::StatusOr<MaxPoolWindow> WindowOf(const Node& node,
                                       const GraphMeta& metas) {
  const MetaArgs args(
      node, [&metas](ValueRef v) { return metas[v.node][v.index]; },
      [](const Scalar& s) {
        return TensorMeta{s.dtype(), {}, Device::Cpu(), true};
      });
  ASSIGN_OR_RETURN(const PoolWindow w,
                   ReadPoolWindow(args, 2, "max_pool2d", 4, 5));
  MaxPoolWindow out;
  for (int d = 0; d < 2; ++d) {
    out.kernel[d] = w.kernel[d];
    out.stride[d] = w.stride[d];
    out.padding[d] = w.padding[d];
    out.dilation[d] = w.dilation[d];
  }
  return out;
}

// Whether a mean.dim node averages an [N, C, H, W] tensor over H and W.
bool IsSpatialMean(const Node& node, const GraphMeta& metas) {
  if (node.args.size() < 2 || !node.args[0].is_value() ||
      !node.args[1].is_list() || node.args[1].as_list().size() != 2) {
    return false;
  }
  if (node.args.size() > 3 && !node.args[3].is_none()) return false;  // dtype
  const ValueRef in = node.args[0].as_value();
  if (!IsFloat32Rank4(metas[in.node][in.index])) return false;
  bool h = false, w = false;
  for (const Arg& d : node.args[1].as_list()) {
    if (!d.is_int()) return false;
    const int64_t dim = d.as_int() < 0 ? d.as_int() + 4 : d.as_int();
    h = h || dim == 2;
    w = w || dim == 3;
  }
  return h && w;
}

class PoolStep : public StepRunner {
 public:
  PoolStep(const Program& program, int node,
           std::vector<std::pair<int64_t, TensorRef>> args, int out_slot,
           bool max_pool, MaxPoolWindow window,
           std::shared_ptr<ThreadPool> pool)
      : node_(node),
        args_(std::move(args)),
        out_slot_(out_slot),
        max_pool_(max_pool),
        window_(window),
        pool_(std::move(pool)) {
    const Node& n = program.graph->node(node);
    const ValueRef in = n.args[0].as_value();
    input_key_ = (int64_t{in.node} << 16) + in.index;
  }

  absl::Status Run(StepCall& call) const override {
    const TensorRef* in_ref = nullptr;
    for (const auto& [key, ref] : args_) {
      if (key == input_key_) in_ref = &ref;
    }
    if (in_ref == nullptr) {
      return absl::InternalError(
          absl::StrCat("node '", call.program.graph->node(node_).name,
                       "': its input is not among the step's arguments"));
    }
    ConcreteRef ref;
    EvaluateRef(*in_ref, call.symbols, ref);
    const Tensor in = ViewOf(call.slots, ref);
    const Tensor& out = call.slots[out_slot_];
    // The slot's planned strides (channels last between convolutions),
    // unless the call gave a destination of its own.
    const Slot& slot = call.program.slots[out_slot_];
    Shape out_strides = slot.strides.empty() || call.destination(out_slot_)
                            ? Shape(out.strides().begin(), out.strides().end())
                            : EvaluateShape(slot.strides, call.symbols);
    PoolShape s;
    s.n = in.sizes()[0];
    s.c = in.sizes()[1];
    s.h = in.sizes()[2];
    s.w = in.sizes()[3];
    for (int d = 0; d < 4; ++d) s.in_strides[d] = in.strides()[d];
    const float* src = in.data_as<float>();
    float* dst = out.data_as<float>();
    if (max_pool_) {
      s.out_h = out.sizes()[2];
      s.out_w = out.sizes()[3];
      for (int d = 0; d < 4; ++d) s.out_strides[d] = out_strides[d];
      const int64_t rows = s.n * s.out_h;
      // About 16k taps a chunk.
      const int64_t per_row = std::max<int64_t>(
          1, s.out_w * s.c * window_.kernel[0] * window_.kernel[1]);
      const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / per_row);
      const auto body = [&](int64_t first, int64_t last) {
        MaxPool2dRows(src, dst, s, window_, first, last);
      };
      if (pool_ != nullptr && rows > grain) {
        pool_->ParallelFor(rows, grain, body);
      } else {
        body(0, rows);
      }
    } else {
      // [N, C] or [N, C, 1, 1]: the first two strides.
      s.out_strides[0] = out_strides[0];
      s.out_strides[1] = out_strides[1];
      const int64_t per_image = std::max<int64_t>(1, s.c * s.h * s.w);
      const int64_t grain =
          std::max<int64_t>(1, (int64_t{1} << 15) / per_image);
      const auto body = [&](int64_t first, int64_t last) {
        SpatialMeanRows(src, dst, s, first, last);
      };
      if (pool_ != nullptr && s.n > grain) {
        pool_->ParallelFor(s.n, grain, body);
      } else {
        body(0, s.n);
      }
    }
    return absl::OkStatus();
  }

 private:
  const int node_;
  const std::vector<std::pair<int64_t, TensorRef>> args_;
  const int out_slot_;
  const bool max_pool_;
  const MaxPoolWindow window_;
  const std::shared_ptr<ThreadPool> pool_;
  int64_t input_key_ = 0;
};

}  // namespace

void MaxPool2dRows(const float* in, float* out, const PoolShape& s,
                   const MaxPoolWindow& w, int64_t first, int64_t last) {
  if (s.in_strides[1] != 1 || s.out_strides[1] != 1) {
    return MaxPoolStrided(in, out, s, w, first, last);
  }
#if defined(__x86_64__)
  if (kHasAvx512) return MaxPoolAvx512(in, out, s, w, first, last);
  if (kHasAvx2) return MaxPoolAvx2(in, out, s, w, first, last);
#endif
  MaxPoolChannelsLast(in, out, s, w, first, last);
}

void SpatialMeanRows(const float* in, float* out, const PoolShape& s,
                     int64_t first, int64_t last) {
  if (s.in_strides[1] != 1) return MeanStrided(in, out, s, first, last);
  std::vector<float> acc(static_cast<size_t>(s.c));
#if defined(__x86_64__)
  if (kHasAvx512) return MeanAvx512(in, out, s, first, last, acc.data());
  if (kHasAvx2) return MeanAvx2(in, out, s, first, last, acc.data());
#endif
  MeanChannelsLast(in, out, s, first, last, acc.data());
}

bool TakesPoolStep(const Graph& graph, const GraphMeta& metas, int node) {
  const Node& n = graph.node(node);
  if ((n.target != kMaxPool && n.target != kMean) || !Enabled() ||
      n.args.empty() || !n.args[0].is_value() || metas[node].empty() ||
      !HasOneDnnConvolution(graph, metas)) {
    return false;
  }
  if (n.target == kMean) {
    return IsSpatialMean(n, metas) && metas[node][0].dtype == DType::kFloat32;
  }
  const ValueRef in = n.args[0].as_value();
  return IsFloat32Rank4(metas[in.node][in.index]) &&
         IsFloat32Rank4(metas[node][0]) && WindowOf(n, metas).ok() &&
         !ReadsOutput(graph, node, 1);
}

absl::StatusOr<ProgramStep> MakePoolStep(
    const Program& program, int node,
    std::vector<std::pair<int64_t, TensorRef>> args,
    std::shared_ptr<ThreadPool> pool) {
  int out_slot = -1;
  for (size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    if (slot.source == Slot::Source::kExtern && slot.node == node &&
        slot.output == 0) {
      out_slot = static_cast<int>(s);
    }
  }
  const Node& n = program.graph->node(node);
  if (out_slot < 0) {
    return absl::InternalError(
        absl::StrCat("node '", n.name, "': no slot for its result"));
  }
  const bool max_pool = n.target == kMaxPool;
  MaxPoolWindow window;
  if (max_pool) {
    ASSIGN_OR_RETURN(window, WindowOf(n, program.metas));
  }
  ProgramStep step;
  step.kind = StepKind::kPool;
  step.node = node;
  // The runner gives the result memory (a destination, or an allocation of
  // the slot's size), which the loops write at the slot's strides.
  step.allocate = {out_slot};
  step.label =
      absl::StrCat(max_pool ? "max pool '" : "spatial mean '", n.name, "'");
  step.runner =
      std::make_unique<PoolStep>(program, node, std::move(args), out_slot,
                                 max_pool, window, std::move(pool));
  return step;
}

}  // namespace guardjit
