#include "jit/target_report.h"

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "core/compiler.h"
#include "core/shape_env.h"
#include "core/specializer.h"
#include "core/status_macros.h"
#include "jit/cuda/cuda_codegen.h"
#include "jit/cuda/nvrtc_compiler.h"
#include "jit/jit_compiler.h"
#include "jit/llvm/llvm_codegen.h"
#include "jit/schedule/fusion.h"
#include "jit/simt/simt_backend.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "runtime/cuda/cuda_arch.h"
#include "runtime/eager_interpreter.h"
#include "runtime/tensor_copy.h"

namespace guardjit {
namespace {

const char* MappingName(CudaKernelInfo::Mapping mapping) {
  switch (mapping) {
    case CudaKernelInfo::Mapping::kRowPerThread:
      return "row per thread";
    case CudaKernelInfo::Mapping::kRowPerWarp:
      return "row per warp";
    case CudaKernelInfo::Mapping::kRowPerBlock:
      return "row per block";
  }
  return "?";
}

std::vector<const Kernel*> KernelsOf(const Plan& plan) {
  std::vector<const Kernel*> kernels;
  for (const PlanStep& step : plan.steps) {
    if (step.is_kernel) kernels.push_back(&step.kernel.kernel);
  }
  return kernels;
}

absl::StatusOr<Tensor> RandomInput(const TensorMeta& meta,
                                   std::mt19937_64& rng) {
  const Shape shape = meta.shape();
  ASSIGN_OR_RETURN(Tensor f64, Tensor::Empty(DType::kFloat64, shape));
  double* data = f64.data_as<double>();
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::uniform_int_distribution<int> small(0, 7);
  for (int64_t i = 0; i < f64.numel(); ++i) {
    if (meta.dtype == DType::kBool) {
      data[i] = small(rng) & 1;
    } else if (IsFloating(meta.dtype)) {
      data[i] = uniform(rng);
    } else {
      data[i] = small(rng);
    }
  }
  return CopyAs(f64, meta.dtype);
}

// Per output: `text` lines and the running maximum error; false when an
// element is out of tolerance.
absl::StatusOr<bool> CompareOutput(int index, const Tensor& actual,
                                   const Tensor& expected, double* max_error,
                                   std::string* text) {
  if (actual.dtype() != expected.dtype() ||
      Shape(actual.sizes().begin(), actual.sizes().end()) !=
          Shape(expected.sizes().begin(), expected.sizes().end())) {
    absl::StrAppend(text, "  output ", index, ": ", actual.DebugString(),
                    " but eager gives ", expected.DebugString(), "\n");
    *max_error = std::numeric_limits<double>::infinity();
    return false;
  }
  ASSIGN_OR_RETURN(Tensor a, CopyAs(actual, DType::kFloat64));
  ASSIGN_OR_RETURN(Tensor e, CopyAs(expected, DType::kFloat64));
  const double tol = EmulationTolerance(expected.dtype());
  double worst = 0;
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < e.numel(); ++i) {
    const double x = a.data_as<double>()[i];
    const double y = e.data_as<double>()[i];
    double err;
    bool ok;
    if (std::isnan(y) || std::isnan(x)) {
      ok = std::isnan(x) && std::isnan(y);
      err = ok ? 0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(y) || std::isinf(x)) {
      ok = x == y;
      err = ok ? 0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(x - y);
      ok = err <= tol + tol * std::fabs(y);
    }
    worst = std::max(worst, err);
    if (!ok) {
      if (bad++ == 0) first_bad = i;
    }
  }
  *max_error = std::max(*max_error, worst);
  absl::StrAppend(
      text, "  output ", index, ": ", expected.DebugString(),
      absl::StrFormat(", max abs error %g (tolerance %g)", worst, tol));
  if (bad > 0) {
    absl::StrAppend(
        text, absl::StrFormat(", %d elements out of tolerance, first at flat "
                              "index %d (%g vs eager %g)",
                              bad, first_bad, a.data_as<double>()[first_bad],
                              e.data_as<double>()[first_bad]));
  }
  absl::StrAppend(text, "\n");
  return bad == 0;
}

// Runs `compiler`'s executable for the graph and eager on random inputs and
// fills the report's comparison.
absl::Status Emulate(const std::shared_ptr<const Graph>& graph,
                     const std::shared_ptr<const Graph>& specialized,
                     const Specialization& spec, JitCompiler& compiler,
                     const TargetReportOptions& options, const char* what,
                     TargetReport& report) {
  report.emulated = true;
  std::mt19937_64 rng(options.seed);
  std::vector<Tensor> inputs;
  for (const TensorMeta& meta : spec.inputs) {
    ASSIGN_OR_RETURN(Tensor t, RandomInput(meta, rng));
    inputs.push_back(std::move(t));
  }
  absl::StatusOr<std::vector<Tensor>> actual =
      [&]() -> absl::StatusOr<std::vector<Tensor>> {
    ASSIGN_OR_RETURN(std::unique_ptr<Executable> executable,
                     compiler.Compile(specialized, spec));
    absl::StrAppend(&report.text, what, ": ", executable->Describe(), "\n");
    return RunToVector(*executable, inputs);
  }();
  if (!actual.ok()) {
    report.run_status = actual.status();
    absl::StrAppend(&report.text, what,
                    " run failed: ", actual.status().ToString(), "\n");
    return absl::OkStatus();
  }
  // Inputs the graph rejects at run time (a gather index out of range)
  // fail eager too: reported, not an error of the report.
  absl::StatusOr<std::vector<Tensor>> eager_result =
      [&]() -> absl::StatusOr<std::vector<Tensor>> {
    ASSIGN_OR_RETURN(std::unique_ptr<EagerInterpreter> eager,
                     EagerInterpreter::Create(graph));
    return eager->Run(inputs);
  }();
  if (!eager_result.ok()) {
    report.run_status = eager_result.status();
    absl::StrAppend(&report.text,
                    "eager run failed: ", eager_result.status().ToString(),
                    "\n");
    return absl::OkStatus();
  }
  const std::vector<Tensor>& expected = *eager_result;
  if (actual->size() != expected.size()) {
    report.run_status =
        absl::InternalError(absl::StrCat(what, " run returned ", actual->size(),
                                         " outputs, eager ", expected.size()));
    absl::StrAppend(&report.text, report.run_status.message(), "\n");
    return absl::OkStatus();
  }
  absl::StrAppend(&report.text, what, " vs eager (seed ", options.seed, "):\n");
  bool ok = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSIGN_OR_RETURN(
        bool within,
        CompareOutput(static_cast<int>(i), (*actual)[i], expected[i],
                      &report.max_abs_error, &report.text));
    ok &= within;
  }
  report.within_tolerance = ok;
  return absl::OkStatus();
}

absl::Status CudaReport(const std::shared_ptr<const Graph>& graph,
                        const std::shared_ptr<const Graph>& specialized,
                        const Specialization& spec, CudaArch arch,
                        const TargetReportOptions& options,
                        TargetReport& report) {
  SimtCudaBackend::Options simt;
  auto backend = std::make_shared<SimtCudaBackend>(simt);
  ASSIGN_OR_RETURN(std::unique_ptr<JitCompiler> compiler,
                   JitCompiler::Create(JitCompiler::Options{
                       .fail_instead_of_eager = true,
                       .kernel_backend = backend,
                   }));
  ASSIGN_OR_RETURN(Plan plan, compiler->PlanFor(*specialized, spec));
  absl::StrAppend(&report.text, "plan: ", plan.num_kernels(), " kernels\n",
                  plan.ToString());
  const std::vector<const Kernel*> kernels = KernelsOf(plan);
  if (kernels.empty()) {
    absl::StrAppend(&report.text, "no kernels to compile for ", arch.ToString(),
                    "\n");
  } else {
    ASSIGN_OR_RETURN(CudaModuleSource source,
                     RenderCudaModule(kernels, simt.codegen));
    absl::StrAppend(&report.text, "CUDA source (", source.source.size(),
                    " bytes):\n", source.source);
    if (!source.source.empty() && source.source.back() != '\n') {
      report.text += '\n';
    }
    ASSIGN_OR_RETURN(std::shared_ptr<NvrtcCompiler> nvrtc,
                     NvrtcCompiler::Create());
    ASSIGN_OR_RETURN(std::shared_ptr<const CudaCompileResult> compiled,
                     nvrtc->Compile({.source = source.source, .arch = arch}));
    absl::flat_hash_map<std::string, const CudaKernelResources*> resources;
    for (const CudaKernelResources& r : compiled->kernels) {
      resources[r.name] = &r;
    }
    absl::StrAppend(&report.text, "kernels:\n");
    for (const CudaKernelInfo& info : source.kernels) {
      absl::StrAppend(&report.text, "  ", info.name, ": ",
                      MappingName(info.mapping), ", ", info.block_threads,
                      " threads/block, ", info.rows_per_block,
                      " rows/block, rows ", info.rows.ToString());
      auto it = resources.find(info.name);
      if (it != resources.end()) {
        const CudaKernelResources& r = *it->second;
        absl::StrAppend(&report.text, ", ", r.registers, " registers, ",
                        r.spill_store_bytes, " bytes spill stores, ",
                        r.spill_load_bytes, " bytes spill loads, ",
                        r.shared_memory_bytes, " bytes smem");
      } else {
        absl::StrAppend(&report.text, ", registers unknown (PTX)");
      }
      report.text += '\n';
    }
    absl::StrAppend(
        &report.text,
        absl::StrFormat("NVRTC %d.%d: %s %s, %d bytes, compiled in %.1f ms\n",
                        compiled->nvrtc_version / 1000,
                        compiled->nvrtc_version % 1000 / 10,
                        compiled->arch.ToString(),
                        compiled->ptx ? "PTX" : "CUBIN", compiled->image.size(),
                        absl::ToDoubleMilliseconds(compiled->compile_time)));
    if (!compiled->note.empty()) {
      absl::StrAppend(&report.text, "note: ", compiled->note, "\n");
    }
  }
  if (options.emulate) {
    RETURN_IF_ERROR(Emulate(graph, specialized, spec, *compiler, options,
                            "emulated", report));
  }
  return absl::OkStatus();
}

absl::Status CpuReport(const std::shared_ptr<const Graph>& graph,
                       const std::shared_ptr<const Graph>& specialized,
                       const Specialization& spec,
                       const TargetReportOptions& options,
                       TargetReport& report) {
  ASSIGN_OR_RETURN(std::unique_ptr<JitCompiler> compiler,
                   JitCompiler::Create(JitCompiler::Options{
                       .fail_instead_of_eager = true,
                   }));
  // The graph a compile plans (batch norms folded, attention fused).
  ASSIGN_OR_RETURN(JitCompiler::RewrittenGraph rewritten,
                   compiler->RewriteForHost(specialized, spec));
  ASSIGN_OR_RETURN(Plan plan,
                   compiler->PlanFor(*rewritten.graph, rewritten.SpecOr(spec)));
  absl::StrAppend(&report.text, "plan: ", plan.num_kernels(), " kernels\n",
                  plan.ToString());
  const std::vector<const Kernel*> kernels = KernelsOf(plan);
  if (!kernels.empty()) {
    llvm::LLVMContext context;
    llvm::Module module("gj_report", context);
    for (size_t i = 0; i < kernels.size(); ++i) {
      RETURN_IF_ERROR(
          EmitKernel(*kernels[i], absl::StrCat("gj_kernel_", i), &module));
    }
    std::string ir;
    llvm::raw_string_ostream os(ir);
    module.print(os, nullptr);
    os.flush();
    absl::StrAppend(&report.text, "LLVM IR before O3:\n", ir);
  }
  if (options.emulate) {
    RETURN_IF_ERROR(Emulate(graph, specialized, spec, *compiler, options,
                            "compiled", report));
  }
  return absl::OkStatus();
}

}  // namespace

double EmulationTolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 2e-5;
    case DType::kFloat64:
      return 1e-11;
    case DType::kFloat16:
      return 2e-3;
    case DType::kBFloat16:
      return 1.6e-2;
    default:
      return 0;
  }
}

absl::StatusOr<TargetReport> MakeTargetReport(
    std::shared_ptr<const Graph> graph, absl::Span<const TensorMeta> inputs,
    const TargetReportOptions& options) {
  if (graph == nullptr) return absl::InvalidArgumentError("no graph");
  const bool cpu = options.target == "cpu";
  CudaArch arch;
  if (!cpu) {
    absl::StatusOr<CudaArch> parsed = ParseCudaTarget(options.target);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown target '", options.target,
                       "': expected 'cpu' or a CUDA target (",
                       parsed.status().message(), ")"));
    }
    arch = *parsed;
  }
  const std::vector<int>& placeholders = graph->inputs();
  if (inputs.size() != placeholders.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph '", graph->name(), "' has ", placeholders.size(),
                     " inputs, got metadata for ", inputs.size()));
  }
  Specialization spec;
  std::shared_ptr<const Graph> specialized;
  std::vector<std::string> described;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const SymInt& size : inputs[i].sizes) {
      if (size.is_symbolic() || size.hint() < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input ", i, " ('", graph->node(placeholders[i]).name,
                         "'): sizes must be concrete and non-negative, got ",
                         inputs[i].ToString()));
      }
    }
    spec.inputs.push_back(inputs[i]);
    described.push_back(absl::StrCat(graph->node(placeholders[i]).name, ": ",
                                     inputs[i].ToString()));
  }
  {
    ShapeEnv env;
    ShapeEnv::Scope scope(&env);
    ASSIGN_OR_RETURN(SpecializedGraph s, SpecializeGraph(graph, spec.inputs));
    specialized = std::move(s.graph);
    spec.meta = std::move(s.meta);
  }
  TargetReport report;
  absl::StrAppend(&report.text, "graph '", graph->name(), "' for ",
                  cpu ? "cpu" : absl::StrCat("cuda:", arch.ToString()), " (",
                  absl::StrJoin(described, ", "), ")\n");
  if (std::optional<std::string> why =
          JitCompiler::EagerOnlyReason(*specialized)) {
    // Nothing to generate: the compile gives the eager plan by design.
    absl::StrAppend(&report.text, "no kernels: the graph runs the eager plan (",
                    *why, ")\n");
    if (options.emulate) {
      ASSIGN_OR_RETURN(std::unique_ptr<JitCompiler> compiler,
                       JitCompiler::Create());
      RETURN_IF_ERROR(Emulate(graph, specialized, spec, *compiler, options,
                              cpu ? "compiled" : "emulated", report));
    }
    return report;
  }
  if (cpu) {
    RETURN_IF_ERROR(CpuReport(graph, specialized, spec, options, report));
  } else {
    RETURN_IF_ERROR(
        CudaReport(graph, specialized, spec, arch, options, report));
  }
  return report;
}

}  // namespace guardjit
