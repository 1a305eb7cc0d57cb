// gj_graph_compile_report (`guardjit compile`) on an arbitrary text graph and
// arbitrary input metadata, for the CPU target, with and without the
// emulated run against eager: an error with a bounded message, or a report;
// never a crash, and a report's check says whether the JIT's values matched.
//
// Input: a header, a NUL byte, then the graph as text. Header bytes, each
// optional (missing ones take defaults):
//   [0]  flags: bit 0 run the kernels against eager (emulate), bits 1-7 the
//        random inputs' seed;
//   then per graph input: ndim (mod 5), ndim sizes (a byte below 240 is the
//        size; 240-255 pick an edge: -1, 2^31, 2^40, INT64_MAX, ...), and a
//        dtype (mod 6: float32, float64, int64, int32, uint8, float16).
// The seed corpus (corpus/compile_report_fuzzer) holds the example graphs
// with the shapes their `# run:` lines give.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_common.h"

namespace {

int64_t SizeOf(uint8_t b) {
  static const int64_t kEdges[] = {-1,
                                   -2,
                                   0,
                                   1,
                                   int64_t{1} << 31,
                                   int64_t{1} << 32,
                                   int64_t{1} << 40,
                                   int64_t{1} << 62,
                                   std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::min(),
                                   int64_t{3037000500},
                                   65536,
                                   4096,
                                   1000,
                                   255,
                                   7};
  return b < 240 ? b : kEdges[b - 240];
}

DLDataType DTypeOf(uint8_t b) {
  switch (b % 6) {
    case 1:
      return {kDLFloat, 64, 1};
    case 2:
      return {kDLInt, 64, 1};
    case 3:
      return {kDLInt, 32, 1};
    case 4:
      return {kDLUInt, 8, 1};
    case 5:
      return {kDLFloat, 16, 1};
    default:
      return {kDLFloat, 32, 1};
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const void* nul = std::memchr(data, 0, size);
  if (nul == nullptr) return 0;
  const size_t header_size = static_cast<const uint8_t*>(nul) - data;
  const uint8_t* header = data;
  size_t at = 0;
  auto next = [&](uint8_t fallback) {
    return at < header_size ? header[at++] : fallback;
  };
  const char* text = reinterpret_cast<const char*>(data + header_size + 1);
  const size_t text_size = size - header_size - 1;

  gj_graph* graph = nullptr;
  if (gjfuzz::Consume(gj_graph_from_text(gjfuzz::Context(), text, text_size,
                                         nullptr, &graph))) {
    return 0;
  }
  const uint8_t flags = next(0);
  const size_t num_inputs = gj_graph_num_inputs(graph);
  if (num_inputs > 64) {
    gj_graph_destroy(graph);
    return 0;
  }
  // Only metadata is read: every tensor points at the same dummy byte.
  static char dummy[16];
  std::vector<std::vector<int64_t>> shapes(num_inputs);
  std::vector<DLTensor> tensors(num_inputs);
  std::vector<const DLTensor*> inputs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) {
    const int ndim = next(1) % 5;
    for (int d = 0; d < ndim; ++d) shapes[i].push_back(SizeOf(next(2)));
    DLTensor& t = tensors[i];
    t.data = dummy;
    t.device = {kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = DTypeOf(next(0));
    t.shape = shapes[i].empty() ? nullptr : shapes[i].data();
    t.strides = nullptr;
    t.byte_offset = 0;
    inputs[i] = &t;
  }

  gj_compile_report_options options;
  gj_compile_report_options_init(&options);
  options.target = "cpu";
  options.emulate = flags & 1;
  options.seed = flags >> 1;
  gj_compile_check check;
  gj_compile_check_init(&check);
  char* report = reinterpret_cast<char*>(1);
  gj_error_code code = GJ_OK;
  if (gjfuzz::Consume(gj_graph_compile_report(graph, inputs.data(), num_inputs,
                                              &options, &report, &check),
                      &code)) {
    if (report != reinterpret_cast<char*>(1) && report != nullptr) {
      gjfuzz::Fail("gj_graph_compile_report wrote its text on error");
    }
  } else {
    if (report == nullptr || report == reinterpret_cast<char*>(1)) {
      gjfuzz::Fail("gj_graph_compile_report succeeded without text");
    }
    if (check.checked != (options.emulate ? 1 : 0)) {
      gjfuzz::Fail("gj_compile_check.checked disagrees with emulate");
    }
    // The CPU JIT's values against eager on the same random inputs: a run
    // that completed must agree (a run may fail on its inputs, e.g. a
    // gather index out of range, which run_code reports).
    if (check.checked && check.run_code == GJ_OK && !check.within_tolerance) {
      gjfuzz::Fail("the JIT's values differ from eager's:", report);
    }
    gj_string_destroy(report);
  }
  gj_graph_destroy(graph);
  return 0;
}
