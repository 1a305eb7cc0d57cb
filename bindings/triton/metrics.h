#ifndef GUARDJIT_BINDINGS_TRITON_METRICS_H_
#define GUARDJIT_BINDINGS_TRITON_METRICS_H_

// guardjit's counters (gj_function_stats) as Triton custom metrics on the
// server's /metrics, labelled by model and instance:
// guardjit_cache_hits_total, guardjit_cache_misses_total,
// guardjit_compiles_total, guardjit_recompiles_total,
// guardjit_compile_seconds_total, guardjit_fallback_calls_total (counters),
// guardjit_cache_entries and guardjit_guard_lookup_seconds (gauges).

#include <array>
#include <memory>
#include <string>

#include "bindings/triton/triton_api.h"
#include "guardjit/guardjit.h"

namespace guardjit_triton {

class InstanceMetrics {
 public:
  // The families, made once per backend. Where the server has metrics off
  // they are not made (a log line says why) and instances report none.
  static void CreateFamilies();
  static void DeleteFamilies();

  // NULL when the families do not exist.
  static std::unique_ptr<InstanceMetrics> Create(const std::string& model,
                                                 const std::string& instance);
  ~InstanceMetrics();
  InstanceMetrics(const InstanceMetrics&) = delete;
  InstanceMetrics& operator=(const InstanceMetrics&) = delete;

  // Brings the metrics to `stats`: counters by their growth since the last
  // update, gauges to the value.
  void Update(const gj_function_stats& stats);

  static constexpr int kNumMetrics = 9;

 private:
  InstanceMetrics() = default;

  std::array<TRITONSERVER_Metric*, kNumMetrics> metrics_{};
  std::array<double, kNumMetrics> last_{};
};

}  // namespace guardjit_triton

#endif  // GUARDJIT_BINDINGS_TRITON_METRICS_H_
