#include "bindings/cli/ops_list.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bindings/cli/cli_common.h"
#include "guardjit/guardjit.h"

namespace guardjit_cli {
namespace {

struct OpRow {
  std::string target;
  bool kernel = false, cpu = false, extern_step = false, cuda = false;
};

// The value after `"key": ` in one line of gj_list_ops's JSON (one op per
// line, string values without escaped quotes in targets).
std::string Field(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\": ";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  size_t begin = at + tag.size();
  if (line[begin] == '"') {
    const size_t end = line.find('"', begin + 1);
    return line.substr(begin + 1, end - begin - 1);
  }
  const size_t end = line.find_first_of(",}", begin);
  return line.substr(begin, end - begin);
}

std::vector<OpRow> ParseRows(const std::string& json) {
  std::vector<OpRow> rows;
  size_t start = 0;
  while (start < json.size()) {
    size_t end = json.find('\n', start);
    if (end == std::string::npos) end = json.size();
    const std::string line = json.substr(start, end - start);
    start = end + 1;
    const std::string target = Field(line, "target");
    if (target.empty()) continue;
    rows.push_back({target, Field(line, "reference_kernel") == "true",
                    Field(line, "cpu_lowering") == "true",
                    Field(line, "extern_step") == "true",
                    Field(line, "cuda_lowering") == "true"});
  }
  return rows;
}

}  // namespace

int OpsList(const std::vector<std::string>& args) {
  bool json = false;
  for (const std::string& arg : args) {
    if (arg != "--json") return UsageError("unknown flag '" + arg + "'");
    json = true;
  }
  char* text = nullptr;
  if (Failed(gj_list_ops(&text))) return kExitError;
  const std::string ops(text);
  gj_string_destroy(text);
  if (json) {
    std::printf("%s", ops.c_str());
    return 0;
  }
  const std::vector<OpRow> rows = ParseRows(ops);
  size_t width = 6;
  for (const OpRow& r : rows) width = std::max(width, r.target.size());
  auto mark = [](bool b) { return b ? "yes" : "-"; };
  std::printf("%-*s  %-6s  %-7s  %-6s  %s\n", static_cast<int>(width), "target",
              "kernel", "cpu_jit", "extern", "cuda");
  int kernels = 0, cpu = 0, externs = 0, cuda = 0;
  for (const OpRow& r : rows) {
    std::printf("%-*s  %-6s  %-7s  %-6s  %s\n", static_cast<int>(width),
                r.target.c_str(), mark(r.kernel), mark(r.cpu),
                mark(r.extern_step), mark(r.cuda));
    kernels += r.kernel;
    cpu += r.cpu;
    externs += r.extern_step;
    cuda += r.cuda;
  }
  std::printf(
      "%zu ops: %d with a reference kernel, %d lowered for the CPU JIT, %d "
      "extern steps, %d lowered for CUDA\n",
      rows.size(), kernels, cpu, externs, cuda);
  return 0;
}

}  // namespace guardjit_cli
