// gj_graph_compile_report: the generated code for a target, and with
// `emulate` the target's kernels checked against eager (jit/target_report.h).

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capi/c_string.h"
#include "capi/dlpack_convert.h"
#include "capi/error.h"
#include "capi/graph.h"
#include "capi/options.h"
#include "core/status_macros.h"
#include "core/tensor_meta.h"
#include "jit/target_report.h"

namespace guardjit::capi {
namespace {

constexpr absl::string_view kFn = "gj_graph_compile_report";
constexpr int kMaxRank = 64;

// The dtype and sizes of input `i` (data, strides and device are not read).
absl::StatusOr<TensorMeta> MetaOf(const Graph& graph, const DLTensor* t,
                                  size_t i) {
  const std::string what = absl::StrCat(
      kFn, ": input ", i, " ('", graph.node(graph.inputs()[i]).name, "')");
  if (t == nullptr) return absl::InvalidArgumentError(what + " is NULL");
  if (t->ndim < 0 || t->ndim > kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ndim is ", t->ndim, "; expected 0 to ", kMaxRank));
  }
  if (t->shape == nullptr && t->ndim > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape is NULL with ndim ", t->ndim));
  }
  ASSIGN_OR_RETURN(DType dtype, FromDLDataType(t->dtype, what));
  const Shape sizes(t->shape, t->shape + t->ndim);
  for (int d = 0; d < t->ndim; ++d) {
    if (sizes[d] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": size ", sizes[d], " at dim ", d));
    }
  }
  absl::StatusOr<int64_t> numel = CheckedNumel(sizes);
  if (!numel.ok()) {
    return absl::Status(numel.status().code(),
                        absl::StrCat(what, ": ", numel.status().message()));
  }
  return TensorMeta(dtype, sizes);
}

absl::Status CompileReport(const gj_graph* graph, const DLTensor* const* inputs,
                           size_t num_inputs,
                           const gj_compile_report_options* options,
                           char** out_text, gj_compile_check* out_check) {
  if (out_text == nullptr) return NullArgument(kFn, "out_text");
  if (graph == nullptr) return NullArgument(kFn, "graph");
  gj_compile_report_options opts;
  gj_compile_report_options_init(&opts);
  if (options != nullptr) {
    RETURN_IF_ERROR(CheckStructSize(options->struct_size, kFn, "options",
                                    "gj_compile_report_options_init"));
    GJ_READ_OPTION(opts, options, target);
    GJ_READ_OPTION(opts, options, emulate);
    GJ_READ_OPTION(opts, options, seed);
  }
  if (out_check != nullptr) {
    RETURN_IF_ERROR(CheckStructSize(out_check->struct_size, kFn, "out_check",
                                    "gj_compile_check_init"));
  }
  const Graph& g = *graph->graph;
  const size_t expected = g.inputs().size();
  if (num_inputs != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": graph '", g.name(), "' has ", expected,
                     " inputs, got ", num_inputs));
  }
  if (inputs == nullptr && num_inputs > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(kFn, ": inputs is NULL with num_inputs ", num_inputs));
  }
  std::vector<TensorMeta> metas;
  for (size_t i = 0; i < num_inputs; ++i) {
    ASSIGN_OR_RETURN(TensorMeta meta, MetaOf(g, inputs[i], i));
    metas.push_back(std::move(meta));
  }
  TargetReportOptions report_options;
  report_options.target = opts.target != nullptr ? opts.target : "cpu";
  report_options.emulate = opts.emulate != 0;
  report_options.seed = opts.seed;
  absl::StatusOr<TargetReport> report =
      MakeTargetReport(graph->graph, metas, report_options);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat(kFn, ": graph '", g.name(),
                                     "': ", report.status().message()));
  }
  ASSIGN_OR_RETURN(char* text, NewCString(report->text));
  *out_text = text;
  if (out_check != nullptr) {
    gj_compile_check full;
    gj_compile_check_init(&full);
    full.checked = report->emulated ? 1 : 0;
    full.run_code = static_cast<gj_error_code>(report->run_status.code());
    full.max_abs_error = report->max_abs_error;
    full.within_tolerance = report->within_tolerance ? 1 : 0;
    // An older host's struct is shorter: write only what it has.
    const size_t size = out_check->struct_size < sizeof(full)
                            ? out_check->struct_size
                            : sizeof(full);
    full.struct_size = out_check->struct_size;
    std::memcpy(out_check, &full, size);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace guardjit::capi

extern "C" {

// The defaults of every field this library knows;
// gj_compile_report_options_init_v and the legacy
// gj_compile_report_options_init symbol (legacy_init.cc) copy what fits.
static void CompileReportOptionsDefaults(gj_compile_report_options* options) {
  if (options == nullptr) return;
  *options = gj_compile_report_options{};
  options->struct_size = sizeof(gj_compile_report_options);
}

void gj_compile_report_options_init_v(gj_compile_report_options* options,
                                      size_t struct_size) {
  guardjit::capi::InitSized(options, struct_size,
                            &CompileReportOptionsDefaults);
}

// The defaults of every field this library knows; gj_compile_check_init_v and
// the legacy gj_compile_check_init symbol (legacy_init.cc) copy what fits.
static void CompileCheckDefaults(gj_compile_check* check) {
  if (check == nullptr) return;
  *check = gj_compile_check{};
  check->struct_size = sizeof(gj_compile_check);
}

void gj_compile_check_init_v(gj_compile_check* check, size_t struct_size) {
  guardjit::capi::InitSized(check, struct_size, &CompileCheckDefaults);
}

gj_error* gj_graph_compile_report(const gj_graph* graph,
                                  const DLTensor* const* inputs,
                                  size_t num_inputs,
                                  const gj_compile_report_options* options,
                                  char** out_text,
                                  gj_compile_check* out_check) {
  if (out_text != nullptr) *out_text = nullptr;
  if (out_check != nullptr && out_check->struct_size >= sizeof(size_t)) {
    // Zeroed on entry, as far as the host's struct reaches.
    gj_compile_check zero{};
    zero.struct_size = out_check->struct_size;
    std::memcpy(out_check, &zero,
                out_check->struct_size < sizeof(zero) ? out_check->struct_size
                                                      : sizeof(zero));
  }
  return guardjit::capi::Guarded([&] {
    return guardjit::capi::CompileReport(graph, inputs, num_inputs, options,
                                         out_text, out_check);
  });
}

}  // extern "C"
