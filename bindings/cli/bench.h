#ifndef GUARDJIT_BINDINGS_CLI_BENCH_H_
#define GUARDJIT_BINDINGS_CLI_BENCH_H_

// `guardjit bench`: first-call cost, hit latency and throughput of a graph,
// reported as Google Benchmark does (console or JSON), or a shape sweep.

#include <string>
#include <vector>

namespace guardjit_cli {

// `args` follow "bench"; `executable` is argv[0] for the report's context.
// Returns the process exit status.
int Bench(const std::vector<std::string>& args, const std::string& executable);

}  // namespace guardjit_cli

#endif  // GUARDJIT_BINDINGS_CLI_BENCH_H_
