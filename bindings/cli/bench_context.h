#ifndef GUARDJIT_BINDINGS_CLI_BENCH_CONTEXT_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_CONTEXT_H_

// The machine a benchmark ran on: Google Benchmark's "context" block.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace guardjit_cli {

struct CpuCache {
  std::string type;  // "Data", "Instruction", "Unified"
  int64_t level = 0;
  int64_t size = 0;  // bytes
  int64_t num_sharing = 0;
};

struct BenchContext {
  std::string date;  // local time, "2024-05-01T09:04:04+00:00"
  std::string host_name;
  std::string executable;
  int64_t num_cpus = 0;
  int64_t mhz_per_cpu = 0;  // 0 where the system does not say
  bool cpu_scaling_enabled = false;
  std::vector<CpuCache> caches;
  std::vector<double> load_avg;
  std::string library_build_type;  // "release" (NDEBUG) or "debug"
  // What guardjit adds, written after library_build_type as strings, as
  // Google Benchmark's --benchmark_context=key=value pairs are.
  std::vector<std::pair<std::string, std::string>> extra;
};

// Reads the clock, host name, CPUs and caches (Linux sysfs / procfs).
BenchContext HostContext(const std::string& executable);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_CONTEXT_H_
