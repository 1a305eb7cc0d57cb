#include "bindings/cli/bench_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "bindings/cli/cli_common.h"

namespace guardjit_cli {
namespace {

constexpr long kMaxThreads = 1024;

bool IsValueFlag(const std::string& flag) {
  static const char* const kFlags[] = {"--input",
                                       "--dynamic",
                                       "--threads",
                                       "--repetitions",
                                       "--min-time",
                                       "--benchmark_format",
                                       "--shapes",
                                       "--shapes-file",
                                       "--seed",
                                       "--benchmark_repetitions",
                                       "--benchmark_min_time"};
  for (const char* f : kFlags) {
    if (flag == f) return true;
  }
  return false;
}

// "0.5", "0.5s" (seconds) or "100x" (iterations), as Google Benchmark's
// --benchmark_min_time takes them.
bool ParseMinTime(const std::string& text, BenchFlags* flags) {
  if (text.empty()) return false;
  if (text.back() == 'x') {
    long iterations = 0;
    if (!ParseCount(text.substr(0, text.size() - 1), 1, &iterations)) {
      return false;
    }
    flags->fixed_iterations = iterations;
    return true;
  }
  const std::string number =
      text.back() == 's' ? text.substr(0, text.size() - 1) : text;
  if (number.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double seconds = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size() ||
      !std::isfinite(seconds) || seconds < 0) {
    return false;
  }
  flags->min_time_s = seconds;
  flags->fixed_iterations = 0;
  return true;
}

bool ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return !in.bad();
}

// Applies one flag and its value; 0 or a usage error's exit status.
int ApplyFlag(const std::string& flag, const std::string& value,
              BenchFlags* flags, bool* shapes_given) {
  long count = 0;
  if (flag == "--input") {
    InputSpec spec;
    std::string error;
    if (!ParseInputSpec(value, &spec, &error)) return UsageError(error);
    if (!flags->inputs.emplace(spec.name, spec).second) {
      return UsageError("input '" + spec.name + "' given twice");
    }
  } else if (flag == "--dynamic") {
    if (value == "auto") {
      flags->dynamic = GJ_DYNAMIC_AUTO;
      flags->dynamic_name = "auto";
    } else if (value == "static") {
      flags->dynamic = GJ_DYNAMIC_STATIC;
      flags->dynamic_name = "static";
    } else if (value == "dynamic") {
      flags->dynamic = GJ_DYNAMIC_DYNAMIC;
      flags->dynamic_name = "dynamic";
    } else {
      return UsageError("--dynamic must be auto, static or dynamic, got '" +
                        value + "'");
    }
  } else if (flag == "--threads") {
    if (!ParseCount(value, 1, &count) || count > kMaxThreads) {
      return UsageError("--threads needs a count from 1 to " +
                        std::to_string(kMaxThreads) + ", got '" + value + "'");
    }
    flags->threads = static_cast<int>(count);
  } else if (flag == "--repetitions" || flag == "--benchmark_repetitions") {
    if (!ParseCount(value, 1, &count) || count > 1000000) {
      return UsageError(flag + " needs a count of 1 or more, got '" + value +
                        "'");
    }
    flags->repetitions = static_cast<int>(count);
  } else if (flag == "--min-time" || flag == "--benchmark_min_time") {
    if (!ParseMinTime(value, flags)) {
      return UsageError(flag +
                        " needs seconds (0.5 or 0.5s) or iterations (100x), "
                        "got '" +
                        value + "'");
    }
  } else if (flag == "--benchmark_format") {
    if (value == "console") {
      flags->format = BenchFlags::Format::kConsole;
    } else if (value == "json") {
      flags->format = BenchFlags::Format::kJson;
    } else {
      return UsageError("--benchmark_format must be console or json, got '" +
                        value + "'");
    }
  } else if (flag == "--seed") {
    if (!ParseCount(value, 0, &count)) {
      return UsageError("--seed needs a non-negative integer, got '" + value +
                        "'");
    }
    flags->seed = static_cast<unsigned long long>(count);
  } else if (flag == "--shapes" || flag == "--shapes-file") {
    if (*shapes_given) {
      return UsageError(flag + ": give --shapes or --shapes-file once");
    }
    *shapes_given = true;
    std::string text = value;
    if (flag == "--shapes-file" && !ReadFile(value, &text)) {
      return UsageError("--shapes-file '" + value + "' cannot be read");
    }
    std::string error;
    if (!ParseShapeSets(text, &flags->shapes, &error)) {
      return UsageError(flag + ": " + error);
    }
    if (flags->shapes.empty()) return UsageError(flag + " has no input sets");
    flags->sweep = true;
  }
  return 0;
}

}  // namespace

bool ParseShapeSets(const std::string& text, std::vector<ShapeSet>* sets,
                    std::string* error) {
  std::string set_text;
  auto finish_set = [&]() {
    std::istringstream words(set_text);
    ShapeSet set;
    std::string word;
    while (words >> word) {
      InputSpec spec;
      if (!ParseInputSpec(word, &spec, error)) return false;
      if (!set.inputs.emplace(spec.name, spec).second) {
        *error = "input '" + spec.name + "' given twice in '" + set_text + "'";
        return false;
      }
      set.text += (set.text.empty() ? "" : " ") + word;
    }
    if (!set.inputs.empty()) sets->push_back(std::move(set));
    set_text.clear();
    return true;
  };
  bool comment = false;
  for (char c : text) {
    if (c == '\n' || c == ';') {
      comment = false;
      if (!finish_set()) return false;
    } else if (c == '#') {
      comment = true;
    } else if (!comment) {
      set_text += c == '\t' || c == '\r' ? ' ' : c;
    }
  }
  return finish_set();
}

int ParseBenchFlags(const std::vector<std::string>& args, BenchFlags* flags) {
  bool shapes_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    if (flag.rfind("--", 0) == 0 && flag.find('=') != std::string::npos) {
      value = flag.substr(flag.find('=') + 1);
      flag = flag.substr(0, flag.find('='));
      if (!IsValueFlag(flag)) return UsageError("unknown flag '" + flag + "'");
    } else if (IsValueFlag(flag)) {
      if (i + 1 == args.size()) return UsageError(flag + " needs a value");
      value = args[++i];
    } else if (flag.rfind("--", 0) == 0) {
      return UsageError("unknown flag '" + flag + "'");
    } else if (flags->graph.empty()) {
      flags->graph = flag;
      continue;
    } else {
      return UsageError("unexpected argument '" + flag + "'");
    }
    if (int status = ApplyFlag(flag, value, flags, &shapes_given);
        status != 0) {
      return status;
    }
  }
  if (flags->graph.empty()) return UsageError("bench needs a GRAPH");
  // A sweep times one run per input set.
  if (flags->sweep && flags->repetitions > 1) {
    return UsageError(
        "--repetitions applies to the hit benchmark, not to --shapes");
  }
  return 0;
}

}  // namespace guardjit_cli
