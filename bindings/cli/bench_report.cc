#include "bindings/cli/bench_report.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace guardjit_cli {
namespace {

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

// As Google Benchmark: every digit a double has, NaN and Infinity spelled
// as Python's json module reads them.
std::string JsonNumber(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.16e", value);
  return buffer;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Sample standard deviation, as Google Benchmark's StatisticsStdDev.
double StdDev(const std::vector<double>& v) {
  const double mean = Mean(v);
  double squares = 0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / (static_cast<double>(v.size()) - 1));
}

double Cv(const std::vector<double>& v) {
  const double mean = Mean(v);
  return mean == 0 ? 0 : StdDev(v) / mean;
}

// Google Benchmark's console time column: fewer decimals for larger values.
std::string FormatTime(double t) {
  char buffer[32];
  const int decimals = t < 10 ? 2 : t < 100 ? 1 : 0;
  std::snprintf(buffer, sizeof(buffer), "%10.*f", decimals, t);
  return buffer;
}

// 1234567 -> "1.23457M", as the console shows user counters.
std::string HumanReadable(double v) {
  static const char* const kSuffixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) {
    v /= 1000;
    ++i;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g%s", v, kSuffixes[i]);
  return buffer;
}

bool IsRate(const std::string& counter) {
  const std::string suffix = "_per_second";
  return counter.size() > suffix.size() &&
         counter.compare(counter.size() - suffix.size(), suffix.size(),
                         suffix) == 0;
}

}  // namespace

double BenchRun::Counter(const std::string& counter) const {
  for (const BenchCounter& c : counters) {
    if (c.name == counter) return c.value;
  }
  return 0;
}

std::vector<BenchRun> Aggregates(const std::vector<BenchRun>& runs) {
  std::vector<BenchRun> out;
  if (runs.size() < 2) return out;
  struct Statistic {
    const char* name;
    double (*compute)(const std::vector<double>&);
  };
  static const Statistic kStatistics[] = {
      {"mean", Mean},
      {"median", [](const std::vector<double>& v) { return Median(v); }},
      {"stddev", StdDev},
      {"cv", Cv}};
  std::vector<double> real, cpu;
  std::map<std::string, std::vector<double>> counters;
  for (const BenchRun& run : runs) {
    real.push_back(run.real_time);
    cpu.push_back(run.cpu_time);
    for (const BenchCounter& c : run.counters) {
      counters[c.name].push_back(c.value);
    }
  }
  const BenchRun& first = runs.front();
  for (const Statistic& statistic : kStatistics) {
    BenchRun a;
    a.name = first.run_name + "_" + statistic.name;
    a.run_name = first.run_name;
    a.family_index = first.family_index;
    a.per_family_instance_index = first.per_family_instance_index;
    a.aggregate = true;
    a.aggregate_name = statistic.name;
    a.repetitions = first.repetitions;
    a.threads = first.threads;
    a.iterations = static_cast<int64_t>(runs.size());
    a.real_time = statistic.compute(real);
    a.cpu_time = statistic.compute(cpu);
    a.time_unit = first.time_unit;
    for (const BenchCounter& c : first.counters) {
      a.counters.push_back({c.name, statistic.compute(counters[c.name])});
    }
    out.push_back(a);
  }
  return out;
}

void WriteJson(std::FILE* out, const BenchContext& context,
               const std::vector<BenchRun>& runs) {
  std::fprintf(out, "{\n  \"context\": {\n");
  auto kv = [&](const char* key, const std::string& value) {
    std::fprintf(out, "    %s: %s,\n", JsonString(key).c_str(), value.c_str());
  };
  kv("date", JsonString(context.date));
  kv("host_name", JsonString(context.host_name));
  kv("executable", JsonString(context.executable));
  kv("num_cpus", std::to_string(context.num_cpus));
  kv("mhz_per_cpu", std::to_string(context.mhz_per_cpu));
  kv("cpu_scaling_enabled", context.cpu_scaling_enabled ? "true" : "false");
  std::fprintf(out, "    \"caches\": [");
  for (size_t i = 0; i < context.caches.size(); ++i) {
    const CpuCache& c = context.caches[i];
    std::fprintf(out,
                 "%s\n      {\n        \"type\": %s,\n        \"level\": "
                 "%lld,\n        \"size\": %lld,\n        \"num_sharing\": "
                 "%lld\n      }",
                 i > 0 ? "," : "", JsonString(c.type).c_str(),
                 static_cast<long long>(c.level),
                 static_cast<long long>(c.size),
                 static_cast<long long>(c.num_sharing));
  }
  std::fprintf(out, "%s],\n", context.caches.empty() ? "" : "\n    ");
  std::string load = "[";
  for (size_t i = 0; i < context.load_avg.size(); ++i) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%s%g", i > 0 ? "," : "",
                  context.load_avg[i]);
    load += buffer;
  }
  kv("load_avg", load + "]");
  std::fprintf(out, "    \"library_build_type\": %s",
               JsonString(context.library_build_type).c_str());
  for (const auto& [key, value] : context.extra) {
    std::fprintf(out, ",\n    %s: %s", JsonString(key).c_str(),
                 JsonString(value).c_str());
  }
  std::fprintf(out, "\n  },\n  \"benchmarks\": [");
  for (size_t i = 0; i < runs.size(); ++i) {
    const BenchRun& r = runs[i];
    std::fprintf(out, "%s\n    {\n", i > 0 ? "," : "");
    auto field = [&](const char* key, const std::string& value, bool last) {
      std::fprintf(out, "      %s: %s%s\n", JsonString(key).c_str(),
                   value.c_str(), last ? "" : ",");
    };
    field("name", JsonString(r.name), false);
    field("family_index", std::to_string(r.family_index), false);
    field("per_family_instance_index",
          std::to_string(r.per_family_instance_index), false);
    field("run_name", JsonString(r.run_name), false);
    field("run_type", JsonString(r.aggregate ? "aggregate" : "iteration"),
          false);
    field("repetitions", std::to_string(r.repetitions), false);
    if (!r.aggregate) {
      field("repetition_index", std::to_string(r.repetition_index), false);
    }
    field("threads", std::to_string(r.threads), false);
    if (r.aggregate) {
      field("aggregate_name", JsonString(r.aggregate_name), false);
      field("aggregate_unit",
            JsonString(r.aggregate_name == "cv" ? "percentage" : "time"),
            false);
    }
    field("iterations", std::to_string(r.iterations), false);
    field("real_time", JsonNumber(r.real_time), false);
    field("cpu_time", JsonNumber(r.cpu_time), false);
    field("time_unit", JsonString(r.time_unit), r.counters.empty());
    for (size_t c = 0; c < r.counters.size(); ++c) {
      field(r.counters[c].name.c_str(), JsonNumber(r.counters[c].value),
            c + 1 == r.counters.size());
    }
    std::fprintf(out, "    }");
  }
  std::fprintf(out, "\n  ]\n}\n");
}

void WriteConsoleHeader(std::FILE* out, const BenchContext& context) {
  std::fprintf(out, "%s\nRunning %s\n", context.date.c_str(),
               context.executable.c_str());
  std::fprintf(out, "Run on (%lld X %lld MHz CPU%s)\n",
               static_cast<long long>(context.num_cpus),
               static_cast<long long>(context.mhz_per_cpu),
               context.num_cpus > 1 ? " s" : "");
  if (!context.caches.empty()) std::fprintf(out, "CPU Caches:\n");
  for (const CpuCache& c : context.caches) {
    std::fprintf(out, "  L%lld %s %lld KiB (x%lld)\n",
                 static_cast<long long>(c.level), c.type.c_str(),
                 static_cast<long long>(c.size / 1024),
                 static_cast<long long>(
                     c.num_sharing > 0 ? context.num_cpus / c.num_sharing : 1));
  }
  if (!context.load_avg.empty()) {
    std::fprintf(out, "Load Average:");
    for (size_t i = 0; i < context.load_avg.size(); ++i) {
      std::fprintf(out, "%s %.2f", i > 0 ? "," : "", context.load_avg[i]);
    }
    std::fprintf(out, "\n");
  }
  if (context.cpu_scaling_enabled) {
    std::fprintf(out,
                 "***WARNING*** CPU scaling is enabled, the benchmark real "
                 "time measurements may be noisy and will incur extra "
                 "overhead.\n");
  }
  for (const auto& [key, value] : context.extra) {
    std::fprintf(out, "%s: %s\n", key.c_str(), value.c_str());
  }
}

void WriteConsoleTable(std::FILE* out, const std::vector<BenchRun>& runs) {
  int width = static_cast<int>(std::string("Benchmark").size());
  bool counters = false;
  for (const BenchRun& r : runs) {
    width = std::max(width, static_cast<int>(r.name.size()));
    counters = counters || !r.counters.empty();
  }
  const std::string header = [&] {
    char buffer[256];
    std::snprintf(buffer, sizeof(buffer), "%-*s %13s %15s %12s%s", width,
                  "Benchmark", "Time", "CPU", "Iterations",
                  counters ? " UserCounters..." : "");
    return std::string(buffer);
  }();
  const std::string rule(header.size(), '-');
  std::fprintf(out, "%s\n%s\n%s\n", rule.c_str(), header.c_str(), rule.c_str());
  for (const BenchRun& r : runs) {
    std::fprintf(out, "%-*s ", width, r.name.c_str());
    if (r.aggregate && r.aggregate_name == "cv") {
      std::fprintf(out, "%10.2f %-4s %10.2f %-4s ", r.real_time * 100, "%",
                   r.cpu_time * 100, "%");
    } else {
      std::fprintf(out, "%s %-4s %s %-4s ", FormatTime(r.real_time).c_str(),
                   r.time_unit, FormatTime(r.cpu_time).c_str(), r.time_unit);
    }
    std::fprintf(out, "%12lld", static_cast<long long>(r.iterations));
    for (const BenchCounter& c : r.counters) {
      if (r.aggregate && r.aggregate_name == "cv") {
        std::fprintf(out, " %s=%.2f%%", c.name.c_str(), c.value * 100);
      } else {
        std::fprintf(out, " %s=%s%s", c.name.c_str(),
                     HumanReadable(c.value).c_str(),
                     IsRate(c.name) ? "/s" : "");
      }
    }
    std::fprintf(out, "\n");
  }
}

}  // namespace guardjit_cli
