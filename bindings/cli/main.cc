// guardjit: validates, prints and runs graphs from the command line. A host
// program like any other: it uses guardjit only through the C header.
//
//   guardjit run GRAPH [--input
//   NAME=DTYPE[d0,...][:random|zeros|ones|v0,v1,...]]...
//                      [--repeat N] [--seed N] [--print] [--explain]
//   guardjit check GRAPH
//   guardjit compile GRAPH [--target cpu|cuda:sm_XX]
//                          [--input NAME=DTYPE[d0,...]]... [--emulate]
//                          [--seed N]
//   guardjit bench GRAPH [--input NAME=DTYPE[d0,...]]... [--dynamic MODE]
//                        [--threads N] [--repetitions R] [--min-time S|Nx]
//                        [--benchmark_format=console|json]
//                        [--shapes SETS | --shapes-file FILE] [--seed N]
//   guardjit ops [--json]
//   guardjit cache stats|verify|clear [DIR] [--remove-bad]
//
// Exit status: 0 success, 1 a guardjit error (printed with its code) or, for
// compile --emulate, a result past the tolerance or a failed run, 2 a usage
// error.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "bindings/cli/bench.h"
#include "bindings/cli/cache_command.h"
#include "bindings/cli/cli_common.h"
#include "bindings/cli/input_spec.h"
#include "bindings/cli/io_info.h"
#include "bindings/cli/ops_list.h"
#include "bindings/cli/output_print.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {
namespace {

constexpr char kUsage[] =
    "usage: guardjit run GRAPH [--input "
    "NAME=DTYPE[d0,d1,...][:random|zeros|ones|v0,v1,...]]...\n"
    "                          [--repeat N] [--seed N] [--print] "
    "[--explain]\n"
    "       guardjit check GRAPH\n"
    "       guardjit compile GRAPH [--target cpu|cuda:sm_XX] "
    "[--input NAME=DTYPE[d0,...]]...\n"
    "                              [--emulate] [--seed N]\n"
    "       guardjit bench GRAPH [--input NAME=DTYPE[d0,...][:FILL]]... "
    "[--dynamic auto|static|dynamic]\n"
    "                            [--threads N] [--repetitions R] "
    "[--min-time S|Ss|Nx]\n"
    "                            [--benchmark_format=console|json] [--seed N]\n"
    "                            [--shapes 'SET; SET; ...' | --shapes-file "
    "FILE]\n"
    "       guardjit ops [--json]\n"
    "       guardjit cache stats|verify|clear [DIR] [--remove-bad]\n"
    "\n"
    "GRAPH is a guardjit.proto.Graph: text format for .pbtxt/.txt, binary "
    "otherwise.\n"
    "run    calls the graph on the given inputs (every input needs an --input) "
    "and\n"
    "       prints each output: shape, dtype and values (a summary unless "
    "--print),\n"
    "       then the time per call over --repeat calls (default 1), and "
    "with\n"
    "       --explain the function's explain() (graphs, breaks, guards, "
    "compiles).\n"
    "check  validates the graph and prints it as torch.fx's print_tabular "
    "does,\n"
    "       then what it declares of each input and output (dtype, dims;\n"
    "       a symbol names a dynamic dim, ? an unknown one).\n"
    "compile specializes the graph for the inputs' dtypes and shapes and "
    "prints\n"
    "       the fusion plan and the code for --target (default cpu): for "
    "cuda:sm_XX\n"
    "       the CUDA C, registers and spills per kernel and NVRTC's CUBIN; "
    "for cpu\n"
    "       the LLVM IR. --emulate also runs the kernels (CUDA: on the SIMT "
    "emulator)\n"
    "       on random inputs (--seed) against eager and prints the max abs "
    "error;\n"
    "       the exit status is 1 past the dtype's tolerance.\n"
    "bench  times the first call (gj_function_precompile, then the first "
    "run) and\n"
    "       calls that hit the cache (gj_function_call into preallocated "
    "outputs,\n"
    "       p50/p90/p99) beside a memcpy of the bytes a call moves, on "
    "--threads\n"
    "       threads at once, for --repetitions runs of at least --min-time "
    "seconds\n"
    "       (default 0.5; Nx: N calls per thread). Output as Google "
    "Benchmark's\n"
    "       (--benchmark_format=json reads with its tools/compare.py). "
    "--shapes sweeps\n"
    "       input sets instead ('x=float32[1,64]; x=float32[8,64]', inputs "
    "of a set\n"
    "       separated by spaces; --shapes-file: one set per line) and "
    "prints each\n"
    "       set's first call, hit latency and the compile count after it.\n"
    "ops    lists every op the library knows and what runs it: reference "
    "kernel,\n"
    "       CPU JIT lowering, extern step (BLAS), CUDA lowering (--json: "
    "as JSON).\n"
    "cache  a compile cache directory (DIR, default $GJ_CACHE_DIR; "
    "README\n"
    "       \"Compile cache\"): stats counts its records and bytes; verify "
    "reads\n"
    "       and checks every record (digest, key, signature under "
    "$GJ_CACHE_KEY\n"
    "       when set; exit status 1 when one fails; --remove-bad removes "
    "those);\n"
    "       clear removes them all.\n"
    "DTYPE: float32, float64, float16, bfloat16, int8, int16, int32, int64, "
    "uint8,\n"
    "       bool. Values default to random (fixed --seed, default 0).\n";

// Loads the graph and makes a function of it (which checks every op has a
// kernel).
bool Load(const std::string& path, Handles* h) {
  return !Failed(gj_context_create(nullptr, &h->context)) &&
         !Failed(gj_graph_from_file(h->context, path.c_str(), nullptr,
                                    &h->graph)) &&
         !Failed(
             gj_function_create(h->context, h->graph, nullptr, &h->function));
}

int Check(const std::vector<std::string>& args) {
  if (args.size() != 1) return UsageError("check takes exactly one GRAPH");
  Handles h;
  if (!Load(args[0], &h)) return kExitError;
  char* table = nullptr;
  if (Failed(gj_graph_to_tabular(h.graph, &table))) return kExitError;
  std::printf("%s", table);
  gj_string_destroy(table);
  std::printf("%s", FormatIoInfo(h.graph).c_str());
  const size_t num_inputs = gj_graph_num_inputs(h.graph);
  std::string names;
  for (size_t i = 0; i < num_inputs; ++i) {
    names += (i > 0 ? ", " : "") + std::string(gj_graph_input_name(h.graph, i));
  }
  std::printf("ok: %zu inputs (%s), %zu outputs\n", num_inputs, names.c_str(),
              gj_graph_num_outputs(h.graph));
  return 0;
}

struct RunFlags {
  std::string graph;
  std::map<std::string, InputSpec> inputs;
  long repeat = 1;
  unsigned long long seed = 0;
  bool print_all = false;
  bool explain = false;
  // compile only.
  std::string target = "cpu";
  bool emulate = false;
};

// Returns 0, or the exit status of a usage error. `command` is "run" or
// "compile", which take different flags.
int ParseRunFlags(const std::string& command,
                  const std::vector<std::string>& args, RunFlags* flags) {
  const bool compile = command == "compile";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    std::string value;
    const bool takes_value = arg == "--input" || arg == "--seed" ||
                             (!compile && arg == "--repeat") ||
                             (compile && arg == "--target");
    if (takes_value) {
      if (i + 1 == args.size()) return UsageError(arg + " needs a value");
      value = args[++i];
    } else if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
    }
    if (arg == "--input") {
      InputSpec spec;
      std::string error;
      if (!ParseInputSpec(value, &spec, &error)) return UsageError(error);
      if (!flags->inputs.emplace(spec.name, spec).second) {
        return UsageError("input '" + spec.name + "' given twice");
      }
    } else if (compile && arg == "--target") {
      if (value.empty()) return UsageError("--target needs a value");
      flags->target = value;
    } else if (compile && arg == "--emulate") {
      flags->emulate = true;
    } else if (!compile && arg == "--repeat") {
      if (!ParseCount(value, 1, &flags->repeat)) {
        return UsageError("--repeat needs a count of 1 or more, got '" + value +
                          "'");
      }
    } else if (arg == "--seed") {
      long seed = 0;
      if (!ParseCount(value, 0, &seed)) {
        return UsageError("--seed needs a non-negative integer, got '" + value +
                          "'");
      }
      flags->seed = static_cast<unsigned long long>(seed);
    } else if (!compile && arg == "--print") {
      flags->print_all = true;
    } else if (!compile && arg == "--explain") {
      flags->explain = true;
    } else if (arg.rfind("--", 0) == 0) {
      return UsageError("unknown flag '" + arg + "'");
    } else if (flags->graph.empty()) {
      flags->graph = arg;
    } else {
      return UsageError("unexpected argument '" + arg + "'");
    }
  }
  if (flags->graph.empty()) return UsageError(command + " needs a GRAPH");
  return 0;
}

// The --input specs in the graph's input order: 0, or the exit status of a
// usage error (an input without a spec, a spec naming no input).
int SpecsInOrder(const gj_graph* graph, const RunFlags& flags,
                 std::vector<const InputSpec*>* specs) {
  std::string error;
  if (!InputsInOrder(graph, flags.inputs, specs, &error)) {
    return UsageError(error);
  }
  return 0;
}

double Milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int Run(const std::vector<std::string>& args) {
  RunFlags flags;
  if (int status = ParseRunFlags("run", args, &flags); status != 0) {
    return status;
  }
  Handles h;
  if (!Load(flags.graph, &h)) return kExitError;

  // Inputs in graph order; every placeholder needs a spec and every spec a
  // placeholder.
  std::vector<const InputSpec*> specs;
  if (int status = SpecsInOrder(h.graph, flags, &specs); status != 0) {
    return status;
  }
  std::mt19937_64 rng(flags.seed);
  std::vector<std::unique_ptr<HostTensor>> tensors;
  for (const InputSpec* spec : specs) {
    tensors.push_back(std::make_unique<HostTensor>(*spec, rng));
  }
  std::vector<const DLTensor*> inputs;
  for (const auto& t : tensors) inputs.push_back(t->dl());

  const size_t num_outputs = gj_function_num_outputs(h.function);
  std::vector<DLManagedTensor*> outputs(num_outputs, nullptr);
  auto release = [&] {
    for (DLManagedTensor*& t : outputs) {
      gj_tensor_release(t);
      t = nullptr;
    }
  };
  std::vector<double> times;
  for (long call = 0; call < flags.repeat; ++call) {
    if (call > 0) release();
    const auto start = std::chrono::steady_clock::now();
    gj_error* error =
        gj_function_call_alloc(h.function, inputs.data(), inputs.size(),
                               nullptr, outputs.data(), num_outputs);
    times.push_back(Milliseconds(std::chrono::steady_clock::now() - start));
    if (Failed(error)) return kExitError;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    const char* name = gj_graph_output_name(h.graph, i);
    PrintTensor(stdout,
                "output " + std::to_string(i) + " (" +
                    (name != nullptr ? name : "?") + ")",
                outputs[i]->dl_tensor, flags.print_all);
  }
  release();
  if (times.size() == 1) {
    std::printf("time: %.3f ms (1 call)\n", times[0]);
  } else {
    // The first call (which compiles) apart; the median as well as the mean,
    // which a few slow calls on a busy machine move.
    std::vector<double> next(times.begin() + 1, times.end());
    double sum = 0;
    for (double t : next) sum += t;
    std::sort(next.begin(), next.end());
    std::printf(
        "time: first call %.3f ms; next %zu calls mean %.3f ms, median %.3f "
        "ms, min %.3f ms\n",
        times[0], next.size(), sum / static_cast<double>(next.size()),
        next[next.size() / 2], next[0]);
  }
  if (flags.explain) {
    char* text = nullptr;
    if (Failed(gj_function_explain(h.function, &text))) return kExitError;
    std::printf("explain:\n%s", text);
    gj_string_destroy(text);
  }
  return 0;
}

// Prints what the graph compiles into for --target and, with --emulate, how
// the target's results compare with eager.
int Compile(const std::vector<std::string>& args) {
  RunFlags flags;
  if (int status = ParseRunFlags("compile", args, &flags); status != 0) {
    return status;
  }
  Handles h;
  if (Failed(gj_context_create(nullptr, &h.context)) ||
      Failed(gj_graph_from_file(h.context, flags.graph.c_str(), nullptr,
                                &h.graph))) {
    return kExitError;
  }
  std::vector<const InputSpec*> specs;
  if (int status = SpecsInOrder(h.graph, flags, &specs); status != 0) {
    return status;
  }
  // Metadata only: the library reads dtype and shape.
  std::vector<DLTensor> described(specs.size());
  std::vector<const DLTensor*> inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    DLTensor& t = described[i];
    t = DLTensor{};
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(specs[i]->shape.size());
    t.dtype = specs[i]->dtype->dl;
    t.shape = const_cast<int64_t*>(specs[i]->shape.data());
    inputs.push_back(&t);
  }
  gj_compile_report_options options;
  gj_compile_report_options_init(&options);
  options.target = flags.target.c_str();
  options.emulate = flags.emulate ? 1 : 0;
  options.seed = flags.seed;
  gj_compile_check check;
  gj_compile_check_init(&check);
  char* text = nullptr;
  if (Failed(gj_graph_compile_report(h.graph, inputs.data(), inputs.size(),
                                     &options, &text, &check))) {
    return kExitError;
  }
  std::printf("%s", text);
  gj_string_destroy(text);
  if (!check.checked) return 0;
  const char* what =
      flags.target == "cpu" ? "compiled vs eager" : "emulated vs eager";
  if (check.run_code != GJ_OK) {
    std::printf("%s: run failed (%s)\n", what, CodeName(check.run_code));
    return kExitError;
  }
  std::printf("%s: max abs error %g%s\n", what, check.max_abs_error,
              check.within_tolerance ? "" : " (past the tolerance)");
  return check.within_tolerance ? 0 : kExitError;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "-h" || command == "--help" || command == "help") {
    std::printf("%s", kUsage);
    return 0;
  }
  if (command == "check") return Check(args);
  if (command == "run") return Run(args);
  if (command == "compile") return Compile(args);
  if (command == "bench") return Bench(args, argv[0]);
  if (command == "ops") return OpsList(args);
  if (command == "cache") return CacheCommand(args);
  return UsageError("unknown command '" + command + "'");
}

}  // namespace
}  // namespace guardjit_cli

int main(int argc, char** argv) {
  try {
    return guardjit_cli::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "guardjit: error: out of memory\n");
    return guardjit_cli::kExitError;
  }
}
