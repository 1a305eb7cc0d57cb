#ifndef GUARDJIT_JIT_STEPS_ONEDNN_CONV_H_
#define GUARDJIT_JIT_STEPS_ONEDNN_CONV_H_

// Float32 convolution steps on oneDNN (Debian's libdnnl 2.6, OpenMP
// runtime): direct convolutions (brgconv, jit depthwise, 1x1, ... whatever
// oneDNN picks for the machine) in place of im2col + BLAS per image.
//
// Planning (conv_epilogue.h) picks the layout the result is left in:
// channels last where oneDNN has a primitive for it, oneDNN's blocked layout
// (nChw8c) for the convolutions PrefersBlockedResult names, else the one
// its best primitive picks (nChw16c on AVX-512, nChw8c on AVX2, ...); the
// step's epilogue kernel reads the result in that layout, so the epilogue is
// also the reorder back to the graph's layout; the bias of a graph constant
// is added by oneDNN. Building the program creates the primitives and
// reorders a constant weight into their layout once (kept by the step for
// the entry's life). A call reorders the input into the primitives' layout
// where it differs (a strided input included), runs the primitives, parts
// of the convolution on the pool's threads with one OpenMP thread each
// (onednn_conv_step.cc), then the epilogue split over channels on the pool.
// A dynamic entry's batch gets primitives per batch size, made on first
// use.
//
// GJ_ONEDNN=0 in the environment plans convolutions as im2col + BLAS
// instead (conv_step.h), for comparisons; GJ_ONEDNN_LAYOUT picks the
// result's layout (OneDnnLayoutSetting below).

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "jit/schedule/fusion.h"
#include "jit/steps/conv_step.h"
#include "runtime/index_expr.h"
#include "runtime/program/kernel_module.h"
#include "runtime/program/step_runner.h"
#include "runtime/thread_pool.h"

namespace guardjit {

// Whether convolutions and matrix products may be planned on oneDNN
// (GJ_ONEDNN is not "0"; onednn_gemm.h for the products).
bool OneDnnEnabled();

// The layout a oneDNN convolution leaves its result in: GJ_ONEDNN_LAYOUT
// "channels_last" or "blocked" (oneDNN's channel blocks, where it has a
// primitive for them) for every convolution, else (unset) chosen per
// convolution by PrefersBlockedResult.
enum class OneDnnLayout { kAuto, kChannelsLast, kBlocked };
OneDnnLayout OneDnnLayoutSetting();

// Whether `conv`'s result is planned in oneDNN's blocked layout before
// channels last, `best_block` being the channel block of the layout
// oneDNN's best primitive picks for it (8 on AVX2 hosts, 16 on AVX-512
// ones; 0 when not blocked): under kAuto, dense convolutions wider than 1x1
// over 16 channels or more where that block is 8.
bool PrefersBlockedResult(const ConvStep& conv, int best_block,
                          OneDnnLayout setting);

// Plans `conv` (float32, its fields set by the matcher) on oneDNN, the bias
// `bias` included when it is a graph constant: what ConvStep::onednn holds.
// UNIMPLEMENTED saying why when oneDNN cannot run it as planned.
absl::StatusOr<ConvStep::OneDnn> PlanOneDnnConv(
    const ConvStep& conv, const std::optional<FixedRef>& bias,
    const Plan& plan);

// The element offset of the result's point (loop variable 0 over the
// batch, 1 over channels, 2... over spatial dims) in the planned layout.
IndexExpr OneDnnResultIndex(const ConvStep& conv);

// The runner of a plan step whose conv has `onednn` set, with `fn` (the
// step's kernel) as its epilogue.
absl::StatusOr<std::unique_ptr<const StepRunner>> MakeOneDnnConvStep(
    const PlanStep& step, const Graph& graph, HostKernelFn fn,
    std::shared_ptr<ThreadPool> pool);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_STEPS_ONEDNN_CONV_H_
