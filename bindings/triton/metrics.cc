#include "bindings/triton/metrics.h"

#include "bindings/triton/errors.h"

namespace guardjit_triton {
namespace {

struct MetricSpec {
  const char* name;
  TRITONSERVER_MetricKind kind;
  const char* description;
};

constexpr MetricSpec kSpecs[InstanceMetrics::kNumMetrics] = {
    {"guardjit_cache_hits_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Calls served by an existing guardjit cache entry"},
    {"guardjit_cache_misses_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Calls no cache entry's guards accepted"},
    {"guardjit_compiles_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Cache entries compiled"},
    {"guardjit_recompiles_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Compiles after the first (each with a recompile reason)"},
    {"guardjit_compile_seconds_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Time spent compiling"},
    {"guardjit_fallback_calls_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Eager runs past the recompile limit"},
    {"guardjit_cache_entries", TRITONSERVER_METRIC_KIND_GAUGE,
     "Cache entries held"},
    {"guardjit_guard_lookup_seconds", TRITONSERVER_METRIC_KIND_GAUGE,
     "Mean guard lookup on hits, sampled"},
    {"guardjit_entries_loaded_total", TRITONSERVER_METRIC_KIND_COUNTER,
     "Cache entries whose code was loaded from the compile cache, not "
     "compiled"},
};

TRITONSERVER_MetricFamily* families[InstanceMetrics::kNumMetrics] = {};

void Discard(TRITONSERVER_Error* err) {
  if (err != nullptr) TRITONSERVER_ErrorDelete(err);
}

}  // namespace

void InstanceMetrics::CreateFamilies() {
  for (int i = 0; i < kNumMetrics; ++i) {
    TRITONSERVER_Error* err = TRITONSERVER_MetricFamilyNew(
        &families[i], kSpecs[i].kind, kSpecs[i].name, kSpecs[i].description);
    if (err != nullptr) {
      Log(TRITONSERVER_LOG_WARN, std::string("guardjit metrics are off: ") +
                                     TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
      DeleteFamilies();
      return;
    }
  }
}

void InstanceMetrics::DeleteFamilies() {
  for (TRITONSERVER_MetricFamily*& family : families) {
    if (family != nullptr) Discard(TRITONSERVER_MetricFamilyDelete(family));
    family = nullptr;
  }
}

std::unique_ptr<InstanceMetrics> InstanceMetrics::Create(
    const std::string& model, const std::string& instance) {
  if (families[0] == nullptr) return nullptr;
  std::unique_ptr<InstanceMetrics> out(new InstanceMetrics());
  TRITONSERVER_Parameter* labels[] = {
      TRITONSERVER_ParameterNew("model", TRITONSERVER_PARAMETER_STRING,
                                model.c_str()),
      TRITONSERVER_ParameterNew("instance", TRITONSERVER_PARAMETER_STRING,
                                instance.c_str())};
  bool ok = labels[0] != nullptr && labels[1] != nullptr;
  for (int i = 0; i < kNumMetrics && ok; ++i) {
    TRITONSERVER_Error* err = TRITONSERVER_MetricNew(
        &out->metrics_[i], families[i],
        const_cast<const TRITONSERVER_Parameter**>(labels), 2);
    if (err != nullptr) {
      Log(TRITONSERVER_LOG_WARN, std::string("guardjit metrics for model '") +
                                     model +
                                     "': " + TRITONSERVER_ErrorMessage(err));
      TRITONSERVER_ErrorDelete(err);
      ok = false;
    }
  }
  for (TRITONSERVER_Parameter* label : labels) {
    if (label != nullptr) TRITONSERVER_ParameterDelete(label);
  }
  return ok ? std::move(out) : nullptr;
}

InstanceMetrics::~InstanceMetrics() {
  for (TRITONSERVER_Metric* metric : metrics_) {
    if (metric != nullptr) Discard(TRITONSERVER_MetricDelete(metric));
  }
}

void InstanceMetrics::Update(const gj_function_stats& stats) {
  const double values[kNumMetrics] = {
      static_cast<double>(stats.hits),
      static_cast<double>(stats.misses),
      static_cast<double>(stats.compiles),
      static_cast<double>(stats.recompiles),
      stats.compile_ms_total / 1e3,
      static_cast<double>(stats.fallback_calls),
      static_cast<double>(stats.cache_entries),
      stats.guard_ns_mean / 1e9,
      static_cast<double>(stats.entries_loaded),
  };
  for (int i = 0; i < kNumMetrics; ++i) {
    if (kSpecs[i].kind == TRITONSERVER_METRIC_KIND_COUNTER) {
      if (values[i] > last_[i]) {
        Discard(
            TRITONSERVER_MetricIncrement(metrics_[i], values[i] - last_[i]));
      }
    } else {
      Discard(TRITONSERVER_MetricSet(metrics_[i], values[i]));
    }
    last_[i] = values[i];
  }
}

}  // namespace guardjit_triton
