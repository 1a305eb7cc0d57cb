#include "bindings/cli/bench.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "bindings/cli/bench_context.h"
#include "bindings/cli/bench_flags.h"
#include "bindings/cli/bench_measure.h"
#include "bindings/cli/bench_report.h"
#include "bindings/cli/bench_workload.h"
#include "bindings/cli/cli_common.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {
namespace {

using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// "examples/mlp.pbtxt" -> "mlp": the benchmarks' name prefix.
std::string GraphStem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

std::string JoinSpecs(const std::vector<const InputSpec*>& specs) {
  std::string text;
  for (const InputSpec* spec : specs) {
    text += (text.empty() ? "" : " ") + SpecText(*spec);
  }
  return text;
}

std::string Duration(double ns) {
  char buffer[32];
  if (ns < 1e3) {
    std::snprintf(buffer, sizeof(buffer), "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buffer, sizeof(buffer), "%.2f us", ns / 1e3);
  } else if (ns < 1e9) {
    std::snprintf(buffer, sizeof(buffer), "%.3f ms", ns / 1e6);
  } else {
    std::snprintf(buffer, sizeof(buffer), "%.3f s", ns / 1e9);
  }
  return buffer;
}

std::string Bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), unit == 0 ? "%.0f %s" : "%.2f %s",
                bytes, kUnits[unit]);
  return buffer;
}

gj_function_stats Stats(const gj_function* function) {
  gj_function_stats stats;
  gj_function_stats_init(&stats);
  Failed(gj_function_get_stats(function, &stats));
  return stats;
}

bool Load(const BenchFlags& flags, Handles* h) {
  gj_function_options options;
  gj_function_options_init(&options);
  options.dynamic = flags.dynamic;
  return !Failed(gj_context_create(nullptr, &h->context)) &&
         !Failed(gj_graph_from_file(h->context, flags.graph.c_str(), nullptr,
                                    &h->graph)) &&
         !Failed(
             gj_function_create(h->context, h->graph, &options, &h->function));
}

// A repetition as Google Benchmark reports one: times per call in ns over
// the calls of every thread, latency percentiles and calls per second.
BenchRun RunOf(const std::string& name, int64_t family, const Trial& trial,
               int repetitions, int index) {
  BenchRun run;
  run.name = run.run_name = name;
  run.family_index = family;
  run.repetitions = repetitions;
  run.repetition_index = index;
  run.threads = trial.threads;
  run.iterations = trial.calls();
  const double calls = static_cast<double>(trial.calls());
  run.real_time = trial.wall_s * 1e9 / calls;
  run.cpu_time = trial.cpu_s * 1e9 / calls;
  const Percentiles p = LatencyPercentiles(trial.latency_ns);
  run.counters = {{"p50_ns", p.p50},
                  {"p90_ns", p.p90},
                  {"p99_ns", p.p99},
                  {"items_per_second", calls / std::max(trial.wall_s, 1e-12)}};
  return run;
}

// The median over repetitions of a counter (or real_time for "").
double MedianOf(const std::vector<BenchRun>& runs, const std::string& counter) {
  std::vector<double> values;
  for (const BenchRun& r : runs) {
    values.push_back(counter.empty() ? r.real_time : r.Counter(counter));
  }
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Clock reads and the loop, without a call: part of every per-call time.
double TimerOverheadNs(const BenchFlags& flags) {
  Trial trial;
  Calibrate(
      1, std::min(flags.min_time_s, 0.05), flags.fixed_iterations,
      [](int) { return true; }, &trial);
  return trial.wall_s * 1e9 / static_cast<double>(trial.calls());
}

void AddContext(BenchContext* context, const BenchFlags& flags) {
  context->extra = {{"guardjit_version", gj_version()},
                    {"graph", flags.graph},
                    {"dynamic", flags.dynamic_name}};
}

void Emit(const BenchFlags& flags, const BenchContext& context,
          const std::vector<BenchRun>& runs) {
  if (flags.format == BenchFlags::Format::kJson) {
    WriteJson(stdout, context, runs);
  } else {
    WriteConsoleTable(stdout, runs);
  }
}

// The first call, split as the C API allows: it times a compile
// (specialization included) but has no separate specialize time, so
// precompile's wall time is specialize + compile, and the first call after
// it runs the fresh entry.
bool TimeFirstCall(const std::string& stem, gj_function* function,
                   Workload* work, BenchRun* first) {
  const double cpu_start = ProcessCpuSeconds();
  const Clock::time_point start = Clock::now();
  if (Failed(gj_function_precompile(function, work->inputs(0),
                                    work->num_inputs(), nullptr))) {
    return false;
  }
  const double precompile_ms = MillisecondsSince(start);
  const double compile_ms = Stats(function).compile_ms_total;
  double run_ms = 0;
  if (!work->FirstCall(function, &run_ms)) return false;
  first->name = first->run_name = stem + "/first_call";
  first->iterations = 1;
  first->real_time = precompile_ms + run_ms;
  first->cpu_time = (ProcessCpuSeconds() - cpu_start) * 1e3;
  first->time_unit = "ms";
  first->counters = {{"specialize_compile_ms", precompile_ms},
                     {"library_compile_ms", compile_ms},
                     {"first_run_ms", run_ms}};
  return true;
}

void PrintFirstCall(const BenchRun& first) {
  std::printf(
      "\nfirst call (one sample, cold):\n"
      "  specialize+compile %12s  wall time of gj_function_precompile\n"
      "    library compile  %12s  gj_function_stats.compile_ms_total: its "
      "timer\n"
      "                                   covers specialize + codegen + "
      "guards\n"
      "  first run          %12s  first gj_function_call_alloc after it (a "
      "hit on\n"
      "                                   the fresh entry, outputs "
      "allocated)\n"
      "  total              %12s\n\n",
      Duration(first.Counter("specialize_compile_ms") * 1e6).c_str(),
      Duration(first.Counter("library_compile_ms") * 1e6).c_str(),
      Duration(first.Counter("first_run_ms") * 1e6).c_str(),
      Duration(first.real_time * 1e6).c_str());
  std::fflush(stdout);
}

// What the table's hit and memcpy rows say, in words.
void PrintHitSummary(const BenchFlags& flags, const std::vector<BenchRun>& hits,
                     const std::vector<BenchRun>& copies,
                     const gj_function_stats& stats, double overhead_ns) {
  const std::string over = flags.repetitions > 1
                               ? " (medians of " +
                                     std::to_string(flags.repetitions) +
                                     " repetitions)"
                               : "";
  std::printf(
      "\nhit latency per call%s: p50 %s, p90 %s, p99 %s\n"
      "  (gj_function_call into preallocated outputs; one clock read of %s "
      "included)\n",
      over.c_str(), Duration(MedianOf(hits, "p50_ns")).c_str(),
      Duration(MedianOf(hits, "p90_ns")).c_str(),
      Duration(MedianOf(hits, "p99_ns")).c_str(),
      Duration(overhead_ns).c_str());
  std::printf(
      "guard check: %s mean on hits (gj_function_stats.guard_ns_mean, "
      "sampled)\n",
      Duration(stats.guard_ns_mean).c_str());
  const double hit_ns = MedianOf(hits, ""), copy_ns = MedianOf(copies, "");
  std::printf(
      "bytes moved: %s per call (inputs + outputs); a memcpy of as many, "
      "timed\n  the same way: %s per call, %s per hit: a hit costs %.1fx "
      "that memcpy\n",
      Bytes(hits[0].Counter("bytes")).c_str(), Duration(copy_ns).c_str(),
      Duration(hit_ns).c_str(), hit_ns / copy_ns);
  std::printf("throughput: %.0f calls/s on %d thread%s (%s/s)\n",
              MedianOf(hits, "items_per_second"), flags.threads,
              flags.threads > 1 ? "s" : "",
              Bytes(MedianOf(hits, "bytes_per_second")).c_str());
  std::printf(
      "cache: %lld compile%s, %lld miss%s, %lld hits, %lld eager fallback "
      "calls\n",
      static_cast<long long>(stats.compiles), stats.compiles == 1 ? "" : "s",
      static_cast<long long>(stats.misses), stats.misses == 1 ? "" : "es",
      static_cast<long long>(stats.hits),
      static_cast<long long>(stats.fallback_calls));
}

// First call (split into gj_function_precompile and the first call after
// it), then repetitions of hits interleaved with a memcpy of as many bytes.
int BenchHits(const BenchFlags& flags, const Handles& h,
              const std::vector<const InputSpec*>& specs) {
  const std::string stem = GraphStem(flags.graph);
  const std::string suffix =
      flags.threads > 1 ? "/threads:" + std::to_string(flags.threads) : "";
  Workload work(specs, flags.threads, flags.seed);
  const double overhead_ns = TimerOverheadNs(flags);

  BenchRun first;
  if (!TimeFirstCall(stem, h.function, &work, &first)) return kExitError;
  const int64_t misses_before = Stats(h.function).misses;

  const int64_t bytes = work.bytes_moved();
  BenchContext context = HostContext(flags.executable);
  AddContext(&context, flags);
  context.extra.push_back({"inputs", JoinSpecs(specs)});
  context.extra.push_back({"outputs", work.OutputsText()});
  char overhead[32];
  std::snprintf(overhead, sizeof(overhead), "%.1f", overhead_ns);
  context.extra.push_back({"timer_overhead_ns", overhead});
  const bool console = flags.format == BenchFlags::Format::kConsole;
  if (console) {
    WriteConsoleHeader(stdout, context);
    PrintFirstCall(first);
  }

  // Each thread copies its own buffers, as each calls on its own.
  std::vector<std::vector<char>> sources(flags.threads), targets(flags.threads);
  for (int t = 0; t < flags.threads; ++t) {
    // One byte more keeps data() valid for outputs of no elements.
    sources[t].assign(static_cast<size_t>(bytes) + 1, static_cast<char>(t + 1));
    targets[t].assign(static_cast<size_t>(bytes) + 1, 0);
  }
  const CallOp hit = [&](int t) { return work.Call(h.function, t); };
  const CallOp copy = [&](int t) {
    std::memcpy(targets[t].data(), sources[t].data(),
                static_cast<size_t>(bytes));
    // The copy's result must be taken as used.
    asm volatile("" : : "r"(targets[t].data()) : "memory");
    return true;
  };
  std::vector<BenchRun> hits, copies;
  Trial trial;
  for (int rep = 0; rep < flags.repetitions; ++rep) {
    const bool ok =
        rep == 0 ? Calibrate(flags.threads, flags.min_time_s,
                             flags.fixed_iterations, hit, &trial)
                 : RunTrial(flags.threads, hits[0].iterations / flags.threads,
                            hit, &trial);
    if (!ok) {
      work.PrintError();
      return kExitError;
    }
    BenchRun run =
        RunOf(stem + "/hit" + suffix, 1, trial, flags.repetitions, rep);
    if (rep == 0) {
      Calibrate(flags.threads, flags.min_time_s, flags.fixed_iterations, copy,
                &trial);
    } else {
      RunTrial(flags.threads, copies[0].iterations / flags.threads, copy,
               &trial);
    }
    BenchRun memcpy_run =
        RunOf(stem + "/memcpy" + suffix, 2, trial, flags.repetitions, rep);
    const double rate = run.Counter("items_per_second");
    run.counters.push_back({"guard_ns", Stats(h.function).guard_ns_mean});
    run.counters.push_back({"bytes", static_cast<double>(bytes)});
    run.counters.push_back(
        {"bytes_per_second", rate * static_cast<double>(bytes)});
    run.counters.push_back({"vs_memcpy", run.real_time / memcpy_run.real_time});
    memcpy_run.counters.push_back({"bytes", static_cast<double>(bytes)});
    memcpy_run.counters.push_back(
        {"bytes_per_second",
         memcpy_run.Counter("items_per_second") * static_cast<double>(bytes)});
    hits.push_back(run);
    copies.push_back(memcpy_run);
  }

  std::vector<BenchRun> runs = {first};
  for (const std::vector<BenchRun>* family : {&hits, &copies}) {
    runs.insert(runs.end(), family->begin(), family->end());
    const std::vector<BenchRun> aggregates = Aggregates(*family);
    runs.insert(runs.end(), aggregates.begin(), aggregates.end());
  }
  Emit(flags, context, runs);

  const gj_function_stats stats = Stats(h.function);
  if (stats.misses != misses_before) {
    std::fprintf(stderr,
                 "guardjit: warning: %lld calls missed the cache while hits "
                 "were timed\n",
                 static_cast<long long>(stats.misses - misses_before));
  }
  if (console) PrintHitSummary(flags, hits, copies, stats, overhead_ns);
  return 0;
}

// One input set after another on the one function: the first call of each
// (a miss compiles), then its hits, and the compile count after it.
int Sweep(const BenchFlags& flags, const Handles& h,
          const std::vector<std::vector<const InputSpec*>>& sets) {
  const std::string stem = GraphStem(flags.graph);
  BenchContext context = HostContext(flags.executable);
  AddContext(&context, flags);
  const bool console = flags.format == BenchFlags::Format::kConsole;
  if (console) {
    WriteConsoleHeader(stdout, context);
    std::printf(
        "\nshape sweep: first call = gj_function_call_alloc on the set's "
        "inputs (a miss\nspecializes and compiles); hit = gj_function_call "
        "into preallocated outputs;\ncompiles = gj_function_stats.compiles "
        "after the set\n\n%3s  %-28s %12s %10s %10s %9s %8s\n",
        "set", "inputs", "first call", "hit p50", "hit p90", "compiles",
        "entries");
    std::fflush(stdout);
  }
  std::vector<BenchRun> runs;
  for (size_t i = 0; i < sets.size(); ++i) {
    Workload work(sets[i], flags.threads, flags.seed);
    double first_ms = 0;
    if (!work.FirstCall(h.function, &first_ms)) return kExitError;
    Trial trial;
    if (!Calibrate(
            flags.threads, flags.min_time_s, flags.fixed_iterations,
            [&](int t) { return work.Call(h.function, t); }, &trial)) {
      work.PrintError();
      return kExitError;
    }
    const gj_function_stats stats = Stats(h.function);
    const std::string inputs = JoinSpecs(sets[i]);
    BenchRun run = RunOf(
        stem + "/shape:" + inputs +
            (flags.threads > 1 ? "/threads:" + std::to_string(flags.threads)
                               : ""),
        static_cast<int64_t>(i), trial, 1, 0);
    run.counters.push_back({"first_call_ms", first_ms});
    run.counters.push_back({"compiles", static_cast<double>(stats.compiles)});
    run.counters.push_back(
        {"recompiles", static_cast<double>(stats.recompiles)});
    run.counters.push_back(
        {"cache_entries", static_cast<double>(stats.cache_entries)});
    run.counters.push_back(
        {"fallback_calls", static_cast<double>(stats.fallback_calls)});
    if (console) {
      std::printf("%3zu  %-28s %12s %10s %10s %9lld %8lld\n", i + 1,
                  inputs.c_str(), Duration(first_ms * 1e6).c_str(),
                  Duration(run.Counter("p50_ns")).c_str(),
                  Duration(run.Counter("p90_ns")).c_str(),
                  static_cast<long long>(stats.compiles),
                  static_cast<long long>(stats.cache_entries));
      std::fflush(stdout);
    }
    runs.push_back(run);
  }
  if (!console) {
    WriteJson(stdout, context, runs);
    return 0;
  }
  const gj_function_stats stats = Stats(h.function);
  std::printf(
      "\n%lld compile%s for %zu input sets (dynamic %s); %lld eager fallback "
      "calls\n",
      static_cast<long long>(stats.compiles), stats.compiles == 1 ? "" : "s",
      sets.size(), flags.dynamic_name,
      static_cast<long long>(stats.fallback_calls));
  return 0;
}

}  // namespace

int Bench(const std::vector<std::string>& args, const std::string& executable) {
  BenchFlags flags;
  if (int status = ParseBenchFlags(args, &flags); status != 0) return status;
  flags.executable = executable;
  Handles h;
  if (!Load(flags, &h)) return kExitError;

  // Every input set is checked before anything is timed.
  std::vector<std::map<std::string, InputSpec>> merged;
  if (flags.sweep) {
    for (const ShapeSet& set : flags.shapes) {
      merged.push_back(flags.inputs);
      for (const auto& [name, spec] : set.inputs) merged.back()[name] = spec;
    }
  } else {
    merged.push_back(flags.inputs);
  }
  std::vector<std::vector<const InputSpec*>> sets(merged.size());
  for (size_t i = 0; i < merged.size(); ++i) {
    std::string error;
    if (!InputsInOrder(h.graph, merged[i], &sets[i], &error)) {
      if (!flags.sweep) return UsageError(error);
      return UsageError("--shapes set " + std::to_string(i + 1) + " ('" +
                        flags.shapes[i].text + "'): " + error);
    }
  }
  return flags.sweep ? Sweep(flags, h, sets) : BenchHits(flags, h, sets[0]);
}

}  // namespace guardjit_cli
