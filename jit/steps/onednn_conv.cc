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
    // Channels last where oneDNN has a primitive for it: the epilogue reads
    // it with channels innermost, and a channels-last input is read in
    // place (channels_last.h keeps intermediates so). Else the layout
    // oneDNN's best primitive picks, when the epilogue can read it; else
    // the first of the others a primitive accepts.
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
    try_layout(0);
    if (!found) {
      pd = OneDnnConvPd(conv, whole, dnn.bias.has_value(),
                        memory::desc(dims, kF32, memory::format_tag::any));
      for (int block : {16, 8, 1}) {
        if (!IsReferenceImpl(*pd) &&
            pd->dst_desc() ==
                memory::desc(dims, kF32, OneDnnTag(conv.spatial, block))) {
          dnn.block = block;
          found = true;
          break;
        }
      }
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
