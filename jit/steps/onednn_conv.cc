#include "jit/steps/onednn_conv.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/steps/onednn_primitives.h"

namespace guardjit {
namespace {

using dnnl::memory;
constexpr auto kF32 = memory::data_type::f32;

int ConstantNode(const Plan& plan, int slot) {
  const Slot& s = plan.slots[slot];
  return s.source == Slot::Source::kConstant ? s.node : -1;
}

}  // namespace

bool OneDnnEnabled() {
  const char* env = std::getenv("GJ_ONEDNN");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

OneDnnLayout OneDnnLayoutSetting() {
  const char* env = std::getenv("GJ_ONEDNN_LAYOUT");
  if (env == nullptr) return OneDnnLayout::kAuto;
  if (std::strcmp(env, "channels_last") == 0) {
    return OneDnnLayout::kChannelsLast;
  }
  if (std::strcmp(env, "blocked") == 0) return OneDnnLayout::kBlocked;
  return OneDnnLayout::kAuto;
}

bool PrefersBlockedResult(const ConvStep& conv, int best_block,
                          OneDnnLayout setting) {
  switch (setting) {
    case OneDnnLayout::kChannelsLast:
      return false;
    case OneDnnLayout::kBlocked:
      return true;
    case OneDnnLayout::kAuto:
      break;
  }
  // Where oneDNN's own best layout has blocks of 8 (AVX2 hosts), its direct
  // kernels for them beat its channels-last ones on dense convolutions
  // wider than 1x1 over more than a few channels: resnet18's 3x3 layers at
  // batch 1 took 0.66-0.84x the time (the input reorder included), its 1x1
  // and 3-channel 7x7 ones 1.05-1.47x, and mobilenet_v2's depthwise and
  // 1x1 ones 1.1-4x (GJ_PROFILE per step, both layouts, one thread, Zen 3).
  if (best_block != 8 || conv.groups != 1 || conv.in_channels < 16) {
    return false;
  }
  int64_t window = 1;
  for (int64_t k : conv.kernel) window *= k;
  return window > 1;
}

absl::StatusOr<ConvStep::OneDnn> PlanOneDnnConv(
    const ConvStep& conv, const std::optional<FixedRef>& bias,
    const Plan& plan) {
  if (conv.dtype != DType::kFloat32) {
    return absl::UnimplementedError("oneDNN conv steps take float32");
  }
  ConvStep::OneDnn dnn;
  dnn.weight_node = ConstantNode(plan, conv.weight.slot);
  if (bias.has_value() && bias->sizes.size() == 1) {
    dnn.bias_node = ConstantNode(plan, bias->slot);
    if (dnn.bias_node >= 0) dnn.bias = bias;
  }
  const ConvGeometry whole = ConvGeometry::Of(conv, conv.batch);
  const memory::dims dims = OneDnnDstDims(conv, whole);
  std::optional<dnnl::convolution_forward::primitive_desc> pd;
  try {
    // oneDNN's blocked layout where PrefersBlockedResult. Else channels
    // last where oneDNN has a primitive for it: the epilogue reads it with
    // channels innermost, and a channels-last input is read in place
    // (channels_last.h keeps intermediates so). Else the layout oneDNN's
    // best primitive picks, when the epilogue can read it; else the first
    // of the others a primitive accepts.
    bool found = false;
    // oneDNN's reference implementations are slower than im2col + BLAS.
    const auto try_layout = [&](int block) {
      try {
        auto with = OneDnnConvPd(
            conv, whole, dnn.bias.has_value(),
            memory::desc(dims, kF32, OneDnnTag(conv.spatial, block)));
        if (!!IsReferenceImpl(with)) return;
        pd = std::move(with);
        dnn.block = block;
        found = true;
      } catch (const dnnl::error&) {
        // Not with that layout.
      }
    };
    // The layout oneDNN's best primitive picks, when the epilogue can read
    // it (0 when it cannot).
    const auto best_layout = [&]() {
      auto any =
          OneDnnConvPd(conv, whole, dnn.bias.has_value(),
                       memory::desc(dims, kF32, memory::format_tag::any));
      if (IsReferenceImpl(any)) return 0;
      for (int block : {16, 8, 1}) {
        if (any.dst_desc() ==
            memory::desc(dims, kF32, OneDnnTag(conv.spatial, block))) {
          pd = std::move(any);
          return block;
        }
      }
      return 0;
    };
    const int best = best_layout();
    const OneDnnLayout setting = OneDnnLayoutSetting();
    if (PrefersBlockedResult(conv, best, setting)) {
      if (best == 8 || best == 16) {
        dnn.block = best;
        found = true;
      }
      for (int block : {16, 8}) {
        if (!found) try_layout(block);
      }
    }
    if (!found) try_layout(0);
    if (!found && best != 0) {  // `pd` is still best_layout's
      dnn.block = best;
      found = true;
    }
    for (int block : {16, 8, 1}) {
      if (!found) try_layout(block);
    }
    if (!found) {
      return absl::UnimplementedError(
          "no oneDNN primitive writes a layout conv steps read");
    }
    dnn.impl = pd->impl_info_str();
  } catch (const dnnl::error& e) {
    return absl::UnimplementedError(absl::StrCat("oneDNN: ", e.what()));
  }
  return dnn;
}

IndexExpr OneDnnResultIndex(const ConvStep& conv) {
  const ConvStep::OneDnn& dnn = *conv.onednn;
  const int64_t channels = conv.groups * conv.out_channels;
  const int64_t positions = conv.cols();
  // The position in the (contiguous) spatial dims.
  IndexExpr position = IndexExpr::Const(0);
  int64_t stride = 1;
  for (int i = conv.spatial - 1; i >= 0; --i) {
    position = position + IndexExpr::Var(2 + i) * IndexExpr::Const(stride);
    stride *= conv.out[3 - conv.spatial + i];
  }
  const IndexExpr n = IndexExpr::Var(0), c = IndexExpr::Var(1);
  const auto k = [](int64_t v) { return IndexExpr::Const(v); };
  switch (dnn.block) {
    case 1:
      return n * k(channels * positions) + c * k(positions) + position;
    case 0:
      return n * k(channels * positions) + position * k(channels) + c;
    default: {
      const IndexExpr block = k(dnn.block);
      // Blocked layouts pad the channels to whole blocks.
      const int64_t padded = (channels + dnn.block - 1) / dnn.block * dnn.block;
      return n * k(padded * positions) +
             IndexExpr::FloorDiv(c, block) * k(positions * dnn.block) +
             position * block + IndexExpr::Mod(c, block);
    }
  }
}

}  // namespace guardjit
