#ifndef GUARDJIT_BINDINGS_CLI_BENCH_REPORT_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_REPORT_H_

// Benchmark results as Google Benchmark reports them: its JSON
// (tools/compare.py reads it) and its console table.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bindings/cli/bench_context.h"

namespace guardjit_cli {

struct BenchCounter {
  std::string name;
  double value = 0;
};

// One entry of the "benchmarks" array.
struct BenchRun {
  std::string name;      // "mlp/hit"; an aggregate: "mlp/hit_mean"
  std::string run_name;  // "mlp/hit" for the repetitions and their aggregates
  int64_t family_index = 0;
  int64_t per_family_instance_index = 0;
  bool aggregate = false;
  std::string aggregate_name;  // "mean", "median", "stddev", "cv"
  int64_t repetitions = 1;
  int64_t repetition_index = 0;
  int64_t threads = 1;
  // Calls on all threads together; an aggregate: the repetitions it covers.
  int64_t iterations = 0;
  // Per iteration, in time_unit: wall time / iterations (with threads, the
  // inverse of the aggregate throughput) and process CPU time / iterations.
  double real_time = 0;
  double cpu_time = 0;
  const char* time_unit = "ns";
  std::vector<BenchCounter> counters;

  // The counter's value; 0 if absent.
  double Counter(const std::string& counter) const;
};

// Google Benchmark's default aggregates of `runs` (the repetitions of one
// benchmark): mean, median, stddev (n - 1) and cv (stddev / mean, unit
// "percentage") of real_time, cpu_time and every counter. None for fewer
// than two repetitions.
std::vector<BenchRun> Aggregates(const std::vector<BenchRun>& runs);

void WriteJson(std::FILE* out, const BenchContext& context,
               const std::vector<BenchRun>& runs);

// The context lines and the table Google Benchmark's console reporter
// prints.
void WriteConsoleHeader(std::FILE* out, const BenchContext& context);
void WriteConsoleTable(std::FILE* out, const std::vector<BenchRun>& runs);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_REPORT_H_
