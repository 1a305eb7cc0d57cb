#include "runtime/program/call_sizes.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace guardjit {

void EvaluateRef(const TensorRef& ref, absl::Span<const int64_t> symbols,
                 ConcreteRef& out) {
  out.slot = ref.slot;
  out.sizes = EvaluateShape(ref.sizes, symbols);
  out.strides = EvaluateShape(ref.strides, symbols);
  out.offset = ref.offset.Evaluate(symbols);
}

namespace {

// What computes slot `s`, for an overflow's message.
std::string SlotLabel(const Program& program, int s) {
  const Slot& slot = program.slots[s];
  const Graph& graph = *program.graph;
  switch (slot.source) {
    case Slot::Source::kInput:
      return absl::StrCat("input ", slot.input, " ('",
                          graph.node(graph.inputs()[slot.input]).name, "')");
    case Slot::Source::kConstant:
    case Slot::Source::kExtern: {
      const Node& node = graph.node(slot.node);
      return absl::StrCat("node '", node.name, "' (", node.target, ")");
    }
    case Slot::Source::kKernel:
      break;
  }
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const ProgramStep& step = program.steps[i];
    if (std::find(step.allocate.begin(), step.allocate.end(), s) ==
        step.allocate.end()) {
      continue;
    }
    std::vector<std::string> names;
    for (const std::string& c : step.computes) {
      names.push_back(absl::StrCat("'", c, "'"));
    }
    return absl::StrCat("step ", i + 1, " (kernel computing ",
                        absl::StrJoin(names, ", "), ")");
  }
  return absl::StrCat("slot ", s);
}

absl::Status Overflow(const Program& program, int slot,
                      absl::Span<const int64_t> symbols) {
  return absl::OutOfRangeError(absl::StrCat(
      SlotLabel(program, slot), ": its sizes at the call's symbol values [",
      absl::StrJoin(symbols, ", "),
      "] overflow int64 (more than 2^63 elements or bytes)"));
}

}  // namespace

absl::Status EvaluateSizes(const Program& program,
                           absl::Span<const int64_t> symbols, CallSizes& out) {
  out.slots.resize(program.slots.size());
  for (size_t s = 0; s < program.slots.size(); ++s) {
    const Slot& slot = program.slots[s];
    Shape& shape = out.slots[s];
    shape.resize(slot.sizes.size());
    bool overflow = false;
    for (size_t d = 0; d < slot.sizes.size(); ++d) {
      shape[d] = slot.sizes[d].EvaluateChecked(symbols, overflow);
    }
    int64_t bytes = 0;
    const absl::StatusOr<int64_t> numel = CheckedNumel(shape);
    if (overflow || !numel.ok() ||
        __builtin_mul_overflow(*numel, ItemSize(slot.dtype), &bytes)) {
      return Overflow(program, static_cast<int>(s), symbols);
    }
  }
  // The plan's buffers end to end, each cache-line aligned.
  const size_t num_buffers = program.buffer_bytes.size();
  out.buffer_bytes.resize(num_buffers);
  out.buffer_offset.resize(num_buffers);
  out.arena_bytes = 0;
  for (size_t b = 0; b < num_buffers; ++b) {
    bool overflow = false;
    out.buffer_bytes[b] =
        program.buffer_bytes[b].EvaluateChecked(symbols, overflow);
    out.buffer_offset[b] = out.arena_bytes;
    const int64_t aligned =
        (out.buffer_bytes[b] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    if (overflow || out.buffer_bytes[b] < 0 ||
        __builtin_add_overflow(out.arena_bytes, aligned, &out.arena_bytes)) {
      int slot = 0;
      for (size_t s = 0; s < program.slot_buffer.size(); ++s) {
        if (program.slot_buffer[s] == static_cast<int>(b)) {
          slot = static_cast<int>(s);
        }
      }
      return Overflow(program, slot, symbols);
    }
  }
  out.outputs.resize(program.outputs.size());
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    EvaluateRef(program.outputs[k], symbols, out.outputs[k]);
  }
  return absl::OkStatus();
}

}  // namespace guardjit
