#include "jit/cuda/ptxas_log.h"

#include <cstddef>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace guardjit {

namespace {

// The integer right before `unit` in `line` ("22 registers" -> 22), if any.
bool NumberBefore(absl::string_view line, absl::string_view unit, int* value) {
  const size_t at = line.find(unit);
  if (at == absl::string_view::npos) return false;
  absl::string_view head =
      absl::StripTrailingAsciiWhitespace(line.substr(0, at));
  size_t start = head.size();
  while (start > 0 && absl::ascii_isdigit(head[start - 1])) --start;
  return absl::SimpleAtoi(head.substr(start), value);
}

}  // namespace

std::vector<CudaKernelResources> ParsePtxasLog(absl::string_view log) {
  std::vector<CudaKernelResources> kernels;
  constexpr absl::string_view kEntry = "Compiling entry function '";
  constexpr absl::string_view kProperties = "Function properties for ";
  // Whether the last "Function properties for" block is the current entry's
  // (a noinline device function gets a block of its own).
  bool in_entry_properties = false;
  for (absl::string_view line : absl::StrSplit(log, '\n')) {
    if (!absl::StartsWith(line, "ptxas")) continue;
    const size_t entry = line.find(kEntry);
    if (entry != absl::string_view::npos) {
      absl::string_view name = line.substr(entry + kEntry.size());
      name = name.substr(0, name.find('\''));
      kernels.push_back(CudaKernelResources{std::string(name)});
      in_entry_properties = false;
      continue;
    }
    if (kernels.empty()) continue;
    CudaKernelResources& kernel = kernels.back();
    const size_t properties = line.find(kProperties);
    if (properties != absl::string_view::npos) {
      in_entry_properties =
          absl::StripAsciiWhitespace(
              line.substr(properties + kProperties.size())) == kernel.name;
      continue;
    }
    if (absl::StrContains(line, "Used ")) {
      NumberBefore(line, " registers", &kernel.registers);
      NumberBefore(line, " bytes smem", &kernel.shared_memory_bytes);
    } else if (in_entry_properties &&
               absl::StrContains(line, "bytes stack frame")) {
      NumberBefore(line, " bytes stack frame", &kernel.stack_frame_bytes);
      NumberBefore(line, " bytes spill stores", &kernel.spill_store_bytes);
      NumberBefore(line, " bytes spill loads", &kernel.spill_load_bytes);
    }
  }
  return kernels;
}

}  // namespace guardjit
