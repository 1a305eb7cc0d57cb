#ifndef GUARDJIT_BINDINGS_CLI_BENCH_FLAGS_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_FLAGS_H_

// The command line of `guardjit bench`.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bindings/cli/input_spec.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {

// One input set of a shape sweep: the inputs it names, and how it was
// written ("x=float32[8,64]").
struct ShapeSet {
  std::map<std::string, InputSpec> inputs;
  std::string text;
};

struct BenchFlags {
  enum class Format { kConsole, kJson };
  std::string graph;
  std::map<std::string, InputSpec> inputs;
  gj_dynamic_mode dynamic = GJ_DYNAMIC_AUTO;
  const char* dynamic_name = "auto";
  int threads = 1;
  int repetitions = 1;
  double min_time_s = 0.5;       // Google Benchmark's default
  int64_t fixed_iterations = 0;  // > 0: "--min-time 100x"
  Format format = Format::kConsole;
  unsigned long long seed = 0;
  // --shapes or --shapes-file: sweep these instead of the hit benchmark.
  std::vector<ShapeSet> shapes;
  bool sweep = false;
  std::string executable;  // argv[0], for the report's context
};

// Parses `args` (what follows "bench"). Returns 0, or the exit status of a
// usage error after printing it.
int ParseBenchFlags(const std::vector<std::string>& args, BenchFlags* flags);

// "x=float32[1,64] y=int64[1]; x=float32[8,64] y=int64[8]": sets separated
// by ';' or newlines, inputs in a set by spaces; '#' starts a comment. False
// with `*error` on a bad spec or an input given twice in one set.
bool ParseShapeSets(const std::string& text, std::vector<ShapeSet>* sets,
                    std::string* error);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_FLAGS_H_
