#ifndef GUARDJIT_JIT_TARGET_REPORT_H_
#define GUARDJIT_JIT_TARGET_REPORT_H_

// What the JIT makes of a graph for a target, for people: `guardjit compile
// GRAPH --target cuda:sm_90 --input ... [--emulate]` and
// gj_graph_compile_report. The graph is specialized for static input
// metadata and fused as a compile would (JitCompiler::PlanFor), then:
// - "cuda:sm_XX": the CUDA C of the fused kernels (cuda_codegen.h), one line
//   per kernel (mapping, block threads, registers and spills as ptxas
//   reports them) and NVRTC's result (CUBIN or PTX bytes, compile time);
// - "cpu": the kernels' LLVM IR before optimization (what GJ_LOGS=codegen
//   shows for the compile).
// With `emulate` the graph also runs on random inputs through the target's
// kernels (cuda: the SIMT emulator, jit/simt/simt_backend.h; cpu: the LLVM
// JIT), strictly (no eager fallback for kernels the backend fails on), and
// is compared with the eager interpreter.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/graph.h"
#include "core/tensor_meta.h"

namespace guardjit {

struct TargetReportOptions {
  // "cpu", or a CUDA target as ParseCudaTarget reads it ("cuda:sm_90").
  std::string target = "cpu";
  bool emulate = false;
  // Seed of the random inputs: floats uniform in [-2, 2), integers in
  // [0, 8) (mostly valid as indices), bools 0 or 1.
  uint64_t seed = 0;
};

struct TargetReport {
  // The plan, then the generated code and the compile's summary.
  std::string text;
  // With emulate: the comparison was made (run_status ok) or the target's
  // run failed (run_status says why: a kernel the backend rejects, an index
  // out of range in the random inputs, ...).
  bool emulated = false;
  absl::Status run_status;
  // Largest |target - eager| over every output element (infinity where one
  // side is NaN or infinite and the other is not).
  double max_abs_error = 0;
  // Every element within EmulationTolerance of its dtype (atol and rtol
  // both), NaN where eager has NaN; false when the run failed.
  bool within_tolerance = false;
};

// The tolerance an emulated or compiled output meets against eager, as
// absolute and relative error: float32 2e-5, float64 1e-11, float16 2e-3,
// bfloat16 1.6e-2 (two units in the last place: fused chains round once
// where eager rounds per op), 0 (exact) for integers and bool.
double EmulationTolerance(DType dtype);

// The report for `graph` on inputs of exactly `inputs` (static sizes, one
// per graph input). Errors: INVALID_ARGUMENT for an unknown target (quoting
// it), a wrong input count, or shapes the graph rejects (naming the node);
// UNAVAILABLE when NVRTC cannot be loaded; UNIMPLEMENTED for loop IR the
// CUDA generator has no lowering for; INTERNAL when NVRTC rejects the
// generated code. A failure of the emulated run is not an error (see
// TargetReport::run_status).
absl::StatusOr<TargetReport> MakeTargetReport(
    std::shared_ptr<const Graph> graph, absl::Span<const TensorMeta> inputs,
    const TargetReportOptions& options);

}  // namespace guardjit

#endif  // GUARDJIT_JIT_TARGET_REPORT_H_
